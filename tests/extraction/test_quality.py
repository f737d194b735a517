"""The quality checks: what is dropped, merged, superseded or written, and why. Pure."""

from __future__ import annotations

import pytest

from squad.extraction.candidates import Candidate, Existing
from squad.extraction.quality import decide, drop_reason, normalise, similarity


def fact(text: str, scope: str = "project", **kw: object) -> Candidate:
    return Candidate(text=text, scope=scope, **kw)  # type: ignore[arg-type]


def known(number: int, text: str, scope: str = "project", subject: str | None = None) -> Existing:
    return Existing(number, scope, text, subject, f"ref{number}")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("The deploy key is ghp_abcdefghijklmnopqrstuvwxyz0123456789", "secret"),
        ("Should we move the API to port 9090?", "question"),
        ("배포는 언제 해요?", "question"),
        ("I'm running the test suite now", "transient status"),
        ("The build is currently failing on main", "transient status"),
        ("지금 테스트 돌리는 중이에요", "transient status"),
        ("Maybe we could try Redis for caching", "suggestion nobody accepted"),
        ("How about switching the docs to Docusaurus", "suggestion nobody accepted"),
        ("Redis로 바꾸면 어떨까", "suggestion nobody accepted"),
        ("!!", "empty"),
    ],
)
def test_non_facts_are_dropped_with_their_reason(text: str, reason: str) -> None:
    assert drop_reason(fact(text)) == reason


@pytest.mark.parametrize(
    "text",
    [
        "The API listens on port 8080",
        "We decided to deploy every Friday",
        "The user prefers short answers with code first",
        "우리 서비스는 8080 포트를 써요",
        "Tests run with pytest -q from the repo root",
    ],
)
def test_durable_facts_pass(text: str) -> None:
    assert drop_reason(fact(text)) is None


def test_low_confidence_is_dropped_only_below_the_bar() -> None:
    assert drop_reason(fact("The API is in Go", confidence=0.3), min_confidence=0.5) == (
        "low confidence (0.30 < 0.50)"
    )
    assert drop_reason(fact("The API is in Go", confidence=0.6), min_confidence=0.5) is None


def test_normalisation_ignores_case_punctuation_spacing_and_date_stamps() -> None:
    assert normalise("- The API  listens on 8080. (2026-11-02)") == normalise(
        "the api listens on 8080"
    )
    assert normalise("~~Old fact~~") == "old fact"


def test_similarity_is_high_for_rewordings_and_low_for_other_facts() -> None:
    assert similarity("The backend runs on port 8080", "Backend runs on port 8080.") > 0.8
    assert similarity("The logo is blue", "The API is written in Go") < 0.5


def test_an_exact_or_normalised_duplicate_is_dropped() -> None:
    [d] = decide([fact("the API listens on 8080!")], [known(1, "The API listens on 8080")])
    assert (d.kind, d.reason, d.target and d.target.number) == ("drop", "duplicate", 1)


def test_a_near_duplicate_is_merged_not_added() -> None:
    existing = [known(1, "The backend service runs on port 8080 in this repo")]
    [d] = decide([fact("Backend service runs on port 8080 in the repo")], existing)
    assert (d.kind, d.reason) == ("merge", "near-duplicate")


def test_a_changed_number_is_never_a_near_duplicate_but_supersedes_by_subject() -> None:
    existing = [known(1, "The API listens on port 8080", subject="api port")]
    [d] = decide([fact("The API listens on port 9090", subject="api port")], existing)
    assert (d.kind, d.reason, d.target and d.target.number) == ("write", "supersedes", 1)


def test_negation_keeps_similar_facts_apart() -> None:
    existing = [known(1, "We use the staging cluster for load tests")]
    [d] = decide([fact("We no longer use the staging cluster for load tests")], existing)
    assert d.kind == "write"


def test_the_fact_the_extractor_names_is_superseded_within_its_scope_only() -> None:
    existing = [known(1, "Deploys happen on Fridays"), known(2, "User likes tea", "experiential")]
    decisions = decide(
        [fact("Deploys happen on Thursdays", replaces=1), fact("Deploys moved", replaces=2)],
        existing,
    )
    assert decisions[0].target is not None and decisions[0].target.number == 1
    assert decisions[1].reason == "new"


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("We deploy on Fridays.", "We now deploy on Tuesdays, not Fridays."),
        ("Our CI runs on GitHub Actions.", "We switched CI from GitHub Actions to Buildkite."),
        ("Ji-ho owns the billing service.", "Dana owns the billing service now."),
        ("배포는 금요일에 해요.", "이제 배포는 화요일에 해요."),
    ],
)
def test_a_fact_that_says_it_changes_an_earlier_one_supersedes_it_without_a_subject(
    old: str, new: str
) -> None:
    existing = [known(1, "The docs site is built with MkDocs"), known(2, old)]
    [d] = decide([fact(new)], existing)
    assert (d.kind, d.reason, d.target and d.target.number) == ("write", "supersedes", 2)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("We use black for formatting", "We now use ruff for linting"),
        ("The docs site is built with MkDocs", "The API now listens on port 9090"),
        ("We deploy on Fridays.", "Deploys on Fridays need a second reviewer."),  # no change said
    ],
)
def test_a_change_of_something_else_supersedes_nothing(old: str, new: str) -> None:
    [d] = decide([fact(new)], [known(1, old)])
    assert (d.kind, d.reason) == ("write", "new")


def test_in_one_batch_the_later_fact_about_a_subject_wins() -> None:
    decisions = decide(
        [
            fact("The API listens on port 8080", subject="api port"),
            fact("The API listens on port 9090", subject="api port"),
            fact("The API listens on port 9090", subject="api port"),
        ],
        [],
    )
    assert [(d.kind, d.reason) for d in decisions] == [
        ("drop", "superseded in the same batch"),
        ("write", "new"),
        ("drop", "duplicate in the batch"),
    ]


def test_duplicates_are_judged_within_a_scope() -> None:
    [d] = decide([fact("Prefers pnpm", "experiential")], [known(1, "Prefers pnpm")])
    assert d.kind == "write"


def test_an_extractor_rejection_is_kept_as_the_reason() -> None:
    [d] = decide([fact("You said: we deploy Fridays", dropped="restates the user")], [])
    assert (d.kind, d.reason) == ("drop", "restates the user")
