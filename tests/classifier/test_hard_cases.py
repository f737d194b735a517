"""The offline fact extractor on hard messages: buried facts, corrections, indirect preferences,
credentials in casual forms; and the hygiene of our training and held-out data.

Every message here was written for these tests; none is taken from our training examples, our
held-out sets or the dev set.
"""

from __future__ import annotations

import re
from datetime import date
from pathlib import Path

import pytest

from bench.train_extractor import load_examples, macro_f1
from squad.classifier.classify import LABELS, classify, parse_examples

TODAY = date(2026, 11, 29)
REPO = Path(__file__).parents[2]
HELDOUT = REPO / "bench" / "data" / "extract_heldout.jsonl"
HELDOUT_HARD = REPO / "bench" / "data" / "extract_heldout_hard.jsonl"
HELDOUT_FRESH = REPO / "bench" / "data" / "extract_heldout_fresh.jsonl"
HELDOUT_JUNK = REPO / "bench" / "data" / "extract_heldout_junk.jsonl"
HELDOUT_MIXED = REPO / "bench" / "data" / "extract_heldout_mixed.jsonl"
HELDOUT_SIXTH = REPO / "bench" / "data" / "extract_heldout_sixth.jsonl"
HELDOUT_DOMAINS = REPO / "bench" / "data" / "extract_heldout_domains.jsonl"


def scope(text: str, role: str = "user") -> str:
    fact = classify(text, role=role, today=TODAY)
    return "none" if fact is None else fact.scope


# -- a fact buried in a longer message is still found


@pytest.mark.parametrize(
    "text",
    [
        "Morning! Still half asleep, sorry. Before I forget: the ledger service in this repo "
        "writes its audit log to the audit_events table, and nothing else may write there. "
        "Anyway, what's first on the list today?",
        "So I spent the whole afternoon on this and honestly it was a mess, the logs were useless "
        "and the retries hid the real error. The one useful thing I learned: our importer here "
        "processes files in alphabetical order, so the file names carry the sequence number. "
        "Going home now.",
        "좋은 아침이에요! 어제 늦게까지 일해서 정신이 없네요. 참고로 이 서비스의 이미지 "
        "썸네일은 전부 imgproxy로 만들어서 원본은 절대 직접 내려주지 않아요. "
        "그럼 오늘은 어떤 것부터 볼까요?",
    ],
)
def test_a_project_fact_buried_among_chatter_is_found(text: str) -> None:
    assert scope(text) == "project"


def test_a_preference_buried_in_a_long_message_is_experiential() -> None:
    text = (
        "Thanks, that worked. Some background so you know who you're talking to: I've been a "
        "network engineer for twelve years and only started writing Python last spring, so "
        "please spell out anything about packaging or virtualenvs. Okay, next error."
    )
    assert scope(text) == "experiential"


def test_the_fact_of_a_long_assistant_reply_is_its_one_durable_sentence() -> None:
    text = (
        "I looked at the failing job and reran it twice with more logging enabled. The first run "
        "failed on the same step, the second one passed, so it is timing-dependent. I have "
        "pushed a small fix that waits for the socket before connecting. For future changes, "
        "note that the integration tests in this repo always run against the docker-compose "
        "stack in ci/compose.yml, never against a local database."
    )
    fact = classify(text, role="assistant", today=TODAY)
    assert fact is not None
    assert fact.scope == "project"
    assert "ci/compose.yml" in fact.text
    assert "reran it twice" not in fact.text


# -- a correction states a fact


@pytest.mark.parametrize(
    "text",
    [
        "Actually no, the docs site builds with Docusaurus now, not Gatsby.",
        "wait, I had it wrong: Mateo owns the billing cron, Ana only reviews it.",
        "정정할게요, 검색 API는 8200이 아니라 8300 포트예요.",
        "아 제가 잘못 말했어요, 이 레포 기본 브랜치는 master가 아니라 main이에요.",
    ],
)
def test_a_correction_is_a_project_fact(text: str) -> None:
    assert scope(text) == "project"


@pytest.mark.parametrize(
    "text",
    [
        "Scratch what I said about my hours, I'm working 9 to 5 Eastern now.",
        "정정할게요, 저 이제 프리랜서라서 회사 이메일은 안 봐요.",
    ],
)
def test_a_correction_about_the_user_is_experiential(text: str) -> None:
    assert scope(text) == "experiential"


# -- a preference stated indirectly, by a complaint or a wish


@pytest.mark.parametrize(
    "text",
    [
        pytest.param(
            "oof, that was three screens for a yes/no question. one line next time",
            marks=pytest.mark.xfail(
                strict=True,
                reason="lost in the fifth round of examples: 'none' 0.446 to 'experiential' "
                "0.442; 80 more indirect preferences won it back but cost the mixed set's "
                "English 1.2 points and the junk set's Korean 1.3, so they were left out",
            ),
        ),
        "honestly I stopped reading after the second caveat, be blunt with me",
        "또 장문이네요 ㅠ 저한테는 세 줄 요약이면 충분해요",
        "코드 블록 없이 설명만 길게 쓰시면 저는 따라가기 힘들어요, 예제 위주로 부탁해요",
    ],
)
def test_an_indirect_preference_is_experiential(text: str) -> None:
    assert scope(text) == "experiential"


# -- a credential in any form: no fact at all


@pytest.mark.parametrize(
    "text",
    [
        "the guest network is Lantern-Guest and the password is moth4lamp",
        "use Fjord!72 for the bastion, same as before",
        "log in as ops-admin with Crate9#Blue and reset it afterwards",
        "paste this into the header: 9vLq2ZxR7mTk4WbN8cPy, that's the sandbox key",
        "the backup DSN is mysql://backup:Pebble55x@db-backup.internal:3306/main",
        "the safe code is 604218, don't write it down",
        "비번은 tulip2025 이에요, 스테이징 관리자요",
        "공유기 관리자 계정 admin / Router!88 로 들어가시면 돼요",
        "테스트 서버는 Cedar#19 로 로그인하세요",
        "사무실 와이파이 이름은 Nest-5G고 비번은 acorn4321이에요",
        "현관 도어락 번호 3817이에요",
    ],
)
def test_a_message_carrying_a_credential_yields_no_fact(text: str) -> None:
    assert classify(text, today=TODAY) is None


@pytest.mark.parametrize(
    "text",
    [
        "Passwords in this service are hashed with argon2id before they are stored.",
        "The API key is read from the PAYMENTS_API_KEY env var in this repo.",
        "이 서비스 토큰은 15분 뒤에 만료돼요.",
    ],
)
def test_a_fact_about_credentials_that_holds_none_is_still_a_fact(text: str) -> None:
    assert scope(text) == "project"


# -- chatter that looks like a fact


@pytest.mark.parametrize(
    ("text", "role"),
    [
        ("CI is red again, someone will have to look after lunch.", "user"),
        ("on it, give me two minutes", "user"),
        ("배포 또 실패했네요, 점심 먹고 볼게요", "user"),
        (
            "I traced it to the retry loop: it swallowed the timeout. I've patched it and the "
            "suite is running again now; I'll report back when it finishes.",
            "assistant",
        ),
    ],
)
def test_a_status_update_states_no_fact(text: str, role: str) -> None:
    assert classify(text, role=role, today=TODAY) is None


# -- data hygiene


def _normalised(text: str) -> str:
    return re.sub(r"\W+", " ", text.casefold()).strip()


def test_the_training_set_is_larger_than_the_held_out_sets_and_disjoint_from_them() -> None:
    training = load_examples()
    heldout = parse_examples(HELDOUT.read_text(encoding="utf-8"))
    hard = parse_examples(HELDOUT_HARD.read_text(encoding="utf-8"))
    fresh = parse_examples(HELDOUT_FRESH.read_text(encoding="utf-8"))
    junk = parse_examples(HELDOUT_JUNK.read_text(encoding="utf-8"))
    mixed = parse_examples(HELDOUT_MIXED.read_text(encoding="utf-8"))
    sixth = parse_examples(HELDOUT_SIXTH.read_text(encoding="utf-8"))
    domains = parse_examples(HELDOUT_DOMAINS.read_text(encoding="utf-8"))
    assert len(training) >= 2500
    assert len(training) > sum(map(len, (heldout, hard, fresh, junk, mixed, sixth, domains)))
    texts = {row.text for row in training}
    normalised = {_normalised(row.text) for row in training}
    for rows in (heldout, hard, fresh, junk, mixed, sixth, domains):
        assert not texts & {row.text for row in rows}, "a held-out text is in the training set"
        assert not normalised & {_normalised(row.text) for row in rows}
    assert not {row.text for row in heldout} & {row.text for row in hard}
    assert not {row.text for row in fresh} & {row.text for row in heldout + hard}
    assert not {row.text for row in junk} & {row.text for row in heldout + hard + fresh}
    earlier = {_normalised(row.text) for row in heldout + hard + fresh + junk}
    assert not {_normalised(row.text) for row in mixed} & earlier
    earlier |= {_normalised(row.text) for row in mixed}
    assert not {_normalised(row.text) for row in sixth} & earlier
    earlier |= {_normalised(row.text) for row in sixth}
    assert not {_normalised(row.text) for row in domains} & earlier


def test_the_training_set_is_balanced_across_languages_and_labels() -> None:
    training = load_examples()
    for lang in ("en", "ko"):
        for label in LABELS:
            count = sum(row.lang == lang and row.label == label for row in training)
            assert count >= 200, f"{lang}/{label}: only {count} examples"


def _figures(path: Path) -> tuple[float, dict[str, float], float]:
    """Macro-F1, macro-F1 per language and the share of "none" messages yielding a fact."""
    rows = parse_examples(path.read_text(encoding="utf-8"))
    assert len(rows) >= 180
    predicted = [scope(row.text, row.role) for row in rows]
    gold = [row.label for row in rows]
    by_lang = {
        lang: macro_f1(
            [g for g, row in zip(gold, rows, strict=True) if row.lang == lang],
            [p for p, row in zip(predicted, rows, strict=True) if row.lang == lang],
        )
        for lang in ("en", "ko")
    }
    none_with_fact = [p for g, p in zip(gold, predicted, strict=True) if g == "none"]
    junk = sum(p != "none" for p in none_with_fact) / len(none_with_fact)
    return macro_f1(gold, predicted), by_lang, junk


@pytest.mark.parametrize("path", [HELDOUT_HARD, HELDOUT_FRESH], ids=["hard", "fresh"])
def test_a_held_out_set_meets_the_targets(path: Path) -> None:
    """Macro-F1 >= 0.90, Korean within 2 points of English, <= 5% of "none" yielding a fact."""
    f1, by_lang, junk = _figures(path)
    assert f1 >= 0.9
    assert round(abs(by_lang["en"] - by_lang["ko"]), 3) <= 0.02, by_lang  # as reported
    assert junk <= 0.05


def test_the_junk_heavy_held_out_set_keeps_its_measured_figures() -> None:
    """Not the targets: of its 196 "none" messages, most written to look like facts, 15 (7.7%)
    yield one; this pins the figures docs/engineering.md reports so that they cannot slip."""
    f1, by_lang, junk = _figures(HELDOUT_JUNK)
    assert f1 >= 0.91 and min(by_lang.values()) >= 0.90, by_lang
    assert junk <= 0.077


def test_the_mixed_held_out_set_keeps_its_measured_figures() -> None:
    """Written from the labelling guide alone before the fifth training round, which took it
    from macro-F1 0.921 (English 0.909, Korean 0.934) to 0.934 (0.928, 0.940), with 6 of its
    180 "none" messages (3.3%) yielding a fact before and after; this pins the figures
    docs/engineering.md reports so that they cannot slip."""
    f1, by_lang, junk = _figures(HELDOUT_MIXED)
    assert f1 >= 0.93 and min(by_lang.values()) >= 0.925, by_lang
    assert round(abs(by_lang["en"] - by_lang["ko"]), 3) <= 0.02, by_lang
    assert junk <= 0.034


def test_the_sixth_held_out_set_keeps_its_measured_figures() -> None:
    """Not the targets: projects that are not web apps (lab pipelines, firmware, modding,
    accounting...), written after the fifth round; macro-F1 0.887 (English 0.887, Korean 0.887),
    2 of its 97 "none" messages (2.1%) yielding a fact, but 21 of its 80 project facts none.
    Two rounds of domain-varied examples did not lift it (docs/engineering.md); this pins the
    figures.
    Since the learned credential detector (issue 32): 0.883 (English 0.887, Korean 0.879), its
    one false alarm here ("... GRCm39 아니고 mm10이에요") refusing a correction as a credential."""
    f1, by_lang, junk = _figures(HELDOUT_SIXTH)
    assert f1 >= 0.88 and min(by_lang.values()) >= 0.875, by_lang
    assert junk <= 0.021


def test_the_domains_held_out_set_keeps_its_measured_figures() -> None:
    """679 messages from 28 domains that are not web apps, written as training examples for a
    round that was left out, so the shipped model never saw them: macro-F1 0.917 (English
    0.914, Korean 0.919), 8 of its 359 "none" messages (2.2%) yielding a fact, 205 of its 240
    project facts found (85%, against the sixth set's 74%)."""
    f1, by_lang, junk = _figures(HELDOUT_DOMAINS)
    assert f1 >= 0.915 and min(by_lang.values()) >= 0.91, by_lang
    assert round(abs(by_lang["en"] - by_lang["ko"]), 3) <= 0.02, by_lang
    assert junk <= 0.023
