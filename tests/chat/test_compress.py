"""Session compression: budget, landmarks, recent turns, summaries (pure, no disk or network,
except the model summariser, which talks to the OpenAI stub server on loopback)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from squad.chat.compress import (
    MESSAGE_OVERHEAD,
    SUMMARY_PREFIX,
    SUMMARY_ROLE,
    Landmark,
    compress_history,
    fit_text,
    history_tokens,
    landmarks,
    recent_start,
)
from squad.chat.summarise import ModelSummariser, offline_summary
from squad.model.stub_answers import answer, status
from squad.model.testing import OpenAIStubServer
from squad.model.types import Message
from squad.text.tokens import TokenCounter, counter_for_model


class Words:
    """Counts whitespace-separated words: easy to reason about in tests."""

    name = "words"

    def count(self, text: str) -> int:
        return len(text.split())


WORDS = Words()
FILLER = " ".join(["filler"] * 40)


def user(text: str) -> Message:
    return Message.user(text)


def assistant(text: str) -> Message:
    return Message.assistant(text)


def kinds(*messages: Message) -> list[set[Landmark]]:
    return [set(k) for k in landmarks(messages)]


# -- landmarks ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "Please write the install page.",
        "Can you add a changelog?",
        "Fix the broken link in the footer.",
        "New task: translate the guide.",
        "I need you to check the build.",
        "설치 페이지를 써 주세요",
        "다음으로 배포 스크립트를 정리해줘",
    ],
)
def test_a_user_message_asking_for_something_is_a_request(text: str) -> None:
    assert kinds(user(text)) == [{Landmark.REQUEST}]


@pytest.mark.parametrize(
    "text",
    [
        "No, the theme is Material.",
        "Actually, it runs on port 8080.",
        "That's wrong: we deploy on Fridays.",
        "Use not pip but uv.",
        "아니요, 포트는 8080이에요",
        "그건 틀렸어요",
    ],
)
def test_a_user_correction_is_a_landmark(text: str) -> None:
    assert Landmark.CORRECTION in kinds(user(text))[0]


@pytest.mark.parametrize(
    "text",
    [
        "We'll go with MkDocs Material.",
        "We decided to drop the blog.",
        "Let's use uv for installs.",
        "배포는 금요일에 하기로 했어요",
        "테마는 Material로 결정했습니다",
    ],
)
def test_a_decision_by_either_side_is_a_landmark(text: str) -> None:
    assert Landmark.DECISION in kinds(user(text))[0]
    assert kinds(assistant(text)) == [{Landmark.DECISION}]


def test_an_error_and_the_reply_after_it_are_landmarks() -> None:
    found = kinds(
        user("mkdocs build says Traceback (most recent call last): ValueError: bad nav"),
        user("it happens on every build"),
        assistant("The nav pointed at a missing page; I fixed the path."),
        assistant("Anything else?"),
    )
    assert found == [{Landmark.ERROR}, set(), {Landmark.FIX}, set()]
    assert kinds(user("빌드하면 에러가 나요"), assistant("경로를 고쳤어요"))[1] == {Landmark.FIX}


def test_small_talk_and_plain_answers_are_not_landmarks() -> None:
    assert kinds(user("ok thanks"), assistant("Here is the page."), user("nice")) == [
        set(),
        set(),
        set(),
    ]
    assert kinds(user("we should add error handling someday")) == [set()]


def test_recent_start_counts_turns_from_user_messages() -> None:
    history = [assistant("hi"), user("a"), assistant("b"), assistant("c"), user("d")]
    assert recent_start(history, 1) == 4
    assert recent_start(history, 2) == 1
    assert recent_start(history, 3) == 0
    assert recent_start(history, 0) == 5


# -- compression -------------------------------------------------------------------------------


def long_chat() -> list[Message]:
    return [
        user("Please set up the docs site with MkDocs."),  # 0 request
        assistant(f"Done, created mkdocs.yml. {FILLER}"),  # 1
        user(f"tell me about themes {FILLER}"),  # 2
        assistant(f"There are many themes. {FILLER}"),  # 3
        user("mkdocs build fails with ValueError: bad nav"),  # 4 error
        assistant("Fixed the nav path in mkdocs.yml."),  # 5 fix
        user(f"what about plugins {FILLER}"),  # 6
        assistant(f"Plugins extend it. {FILLER}"),  # 7
        user("No, the theme must be Material."),  # 8 correction
        assistant("We'll go with Material then."),  # 9 decision
        user(f"more about search {FILLER}"),  # 10 (recent from here with keep_turns=2)
        assistant(f"Search is built in. {FILLER}"),  # 11
        user(f"and the footer {FILLER}"),  # 12
        assistant(f"The footer is in the theme. {FILLER}"),  # 13
    ]


def test_a_history_within_budget_comes_back_unchanged() -> None:
    history = long_chat()
    total = history_tokens(history, WORDS)
    result = compress_history(history, budget=total, counter=WORDS)
    assert result.messages == tuple(history)
    assert (result.tokens, result.summarised, result.landmarks_kept) == (total, 0, 0)


def test_over_budget_keeps_summary_then_landmarks_then_recent_turns() -> None:
    history = long_chat()
    result = compress_history(history, budget=300, counter=WORDS, keep_turns=2)
    summary, *rest = result.messages
    assert summary.role == SUMMARY_ROLE
    assert summary.content.startswith(f"{SUMMARY_PREFIX} 5 earlier messages")
    assert rest == [history[i] for i in (0, 4, 5, 8, 9, 10, 11, 12, 13)]
    assert result.tokens <= 300
    assert (result.summarised, result.landmarks_kept) == (5, 5)
    assert "- User: tell me about themes" in summary.content


def test_when_landmarks_do_not_all_fit_the_oldest_join_the_summary_first() -> None:
    history = long_chat()
    recent = history_tokens(history[10:], WORDS)
    # room for the summary's first line (17 words) and the last two landmarks (8, 9) only
    room = recent + 20 + sum(len(history[i].content.split()) + MESSAGE_OVERHEAD for i in (8, 9))
    result = compress_history(history, budget=room, counter=WORDS, keep_turns=2)
    assert list(result.messages[1:]) == history[8:]
    assert result.tokens <= room
    assert result.landmarks_kept == 2


def test_the_summary_is_left_out_when_not_even_its_first_line_fits() -> None:
    history = long_chat()
    recent = history_tokens(history[10:], WORDS)
    result = compress_history(history, budget=recent + 3, counter=WORDS, keep_turns=2)
    assert result.messages == tuple(history[10:])


def test_recent_turns_stay_even_when_they_alone_exceed_the_budget() -> None:
    history = long_chat()
    result = compress_history(history, budget=10, counter=WORDS, keep_turns=2)
    assert result.messages == tuple(history[10:])


def test_a_custom_summariser_gets_the_dropped_messages_and_its_allowance() -> None:
    history = long_chat()
    seen: list[tuple[list[Message], int]] = []

    def summarise(dropped: Sequence[Message], max_tokens: int, counter: TokenCounter) -> str:
        seen.append((list(dropped), max_tokens))
        return "word " * 10_000  # far too long: cut to fit

    result = compress_history(
        history, budget=300, counter=WORDS, keep_turns=2, summariser=summarise
    )
    [(dropped, allowance)] = seen
    assert dropped == [history[i] for i in (1, 2, 3, 6, 7)]
    assert allowance > 0
    assert result.tokens <= 300
    assert result.messages[0].content.endswith("…")


def test_compression_with_a_real_tokenizer_stays_within_budget() -> None:
    counter = counter_for_model("openai/gpt-4o-mini")
    history = long_chat() * 5
    result = compress_history(history, budget=800, counter=counter)
    assert result.tokens == history_tokens(result.messages, counter) <= 800
    assert result.messages[0].content.startswith(SUMMARY_PREFIX)


def test_fit_text_cuts_at_a_word_end_and_marks_the_cut() -> None:
    assert fit_text("one two three", 3, WORDS) == "one two three"
    assert fit_text("one two three four", 2, WORDS) == "one two…"
    assert fit_text("header line\nbody words here", 3, WORDS, keep=11) == "header line\nbody…"
    assert fit_text("anything", 0, WORDS) == ""


# -- the offline summary -----------------------------------------------------------------------


def test_offline_summary_keeps_first_sentences_of_requests_and_assistant_conclusions() -> None:
    text = offline_summary(
        [
            user("Add a FAQ page. It should list the ten top questions."),
            assistant("I wrote docs/faq.md. It has ten entries. Let me know if you need more!"),
            user("thanks!"),
        ],
        100,
        WORDS,
    )
    assert text == "- User: Add a FAQ page.\n- Assistant: It has ten entries."


def test_offline_summary_prefers_user_bullets_when_short_of_room() -> None:
    dropped = [user("First ask."), assistant("First answer."), user("Second ask.")]
    assert offline_summary(dropped, 10, WORDS) == "- User: First ask.\n- User: Second ask."
    assert offline_summary(dropped, 0, WORDS) == ""


# -- the model summariser ----------------------------------------------------------------------


@pytest.fixture
def stub(monkeypatch: pytest.MonkeyPatch) -> Iterator[OpenAIStubServer]:
    monkeypatch.setenv("STUB_KEY", "stub-key")
    with OpenAIStubServer() as server:
        yield server


def test_model_summariser_sends_the_dropped_messages_and_returns_the_answer(
    stub: OpenAIStubServer,
) -> None:
    stub.script(answer("- The user wants MkDocs Material."))
    summarise = ModelSummariser(stub.model())
    dropped = [user("Set up MkDocs."), assistant("Done.")]
    assert summarise(dropped, 50, WORDS) == "- The user wants MkDocs Material."
    [body] = stub.bodies
    assert body["messages"][0]["role"] == "system"
    assert body["messages"][1]["content"] == "user: Set up MkDocs.\n\nassistant: Done."


def test_model_summariser_falls_back_to_the_offline_summary_on_a_model_error(
    stub: OpenAIStubServer,
) -> None:
    stub.script(status(500, "down"))
    dropped = [user("Set up MkDocs."), assistant("Done.")]
    summarise = ModelSummariser(stub.model())
    assert summarise(dropped, 50, WORDS) == offline_summary(dropped, 50, WORDS)


# -- properties --------------------------------------------------------------------------------

PHRASES = [
    "Please add a page.",
    "ok",
    "thanks",
    "We'll go with Material.",
    "No, that's wrong.",
    "ValueError: bad nav",
    "Here is some long explanation " + FILLER,
    "short answer",
    "배포는 금요일에 하기로 했어요",
    "에러가 나요",
    "a b c d e f g h",
    "",
]
messages = st.builds(
    Message,
    role=st.sampled_from(["user", "assistant"]),
    content=st.sampled_from(PHRASES),
)


@st.composite
def cases(draw: st.DrawFn) -> tuple[list[Message], int, int]:
    """A history, a budget (mostly below its size, so it gets compressed) and K."""
    history = draw(st.lists(messages, min_size=1, max_size=50))
    keep = draw(st.integers(0, 4))
    share = draw(st.floats(0.0, 1.2))
    if draw(st.booleans()):  # any budget up to a bit above the whole history
        return history, int(share * history_tokens(history, WORDS)), keep
    start = recent_start(history, keep)  # room for the recent turns and part of the rest
    recent, older = history_tokens(history[start:], WORDS), history_tokens(history[:start], WORDS)
    return history, recent + int(share * older), keep


@settings(max_examples=400, deadline=None)
@given(case=cases())
def test_properties_of_compression(case: tuple[list[Message], int, int]) -> None:
    history, budget, keep = case
    result = compress_history(history, budget=budget, counter=WORDS, keep_turns=keep)
    out = list(result.messages)
    assert result.tokens == history_tokens(out, WORDS)
    assert compress_history(history, budget=budget, counter=WORDS, keep_turns=keep) == result

    if history_tokens(history, WORDS) <= budget:
        assert out == history
        return
    start = recent_start(history, keep)
    recent = history[start:]
    # recent turns verbatim, at the end
    assert out[len(out) - len(recent) :] == recent
    # everything but the summary is the input's messages, verbatim and in order
    body = out[1:] if out and out[0].content.startswith(SUMMARY_PREFIX) else out
    assert _is_subsequence(body, history)
    # within budget whenever the recent turns fit
    if history_tokens(recent, WORDS) <= budget:
        assert result.tokens <= budget
        # and a second pass changes nothing
        again = compress_history(out, budget=budget, counter=WORDS, keep_turns=keep)
        assert again.messages == result.messages
    # every older landmark kept when they all fit beside the recent turns and a summary
    marks = landmarks(history[:start])
    older = [history[i] for i in range(start) if marks[i]]
    dropped = start - len(older)
    header_words = len(SUMMARY_PREFIX.split()) + 9  # "N earlier messages, summarised ..."
    floor = header_words + MESSAGE_OVERHEAD if dropped else 0
    if history_tokens([*older, *recent], WORDS) + floor <= budget:
        assert body == [*older, *recent]


def _is_subsequence(part: list[Message], whole: list[Message]) -> bool:
    items = iter(whole)
    return all(any(m == candidate for candidate in items) for m in part)
