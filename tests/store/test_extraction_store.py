"""Extraction runs, batched messages and a step's batch transaction, on SQLite and Postgres."""

from __future__ import annotations

import pytest

from squad.clock import FrozenClock
from squad.errors import StoreError
from squad.store import Store

from .conftest import START


def test_an_extraction_run_is_recorded_and_listed_newest_first(
    store: Store, clock: FrozenClock
) -> None:
    first = store.extraction.record(
        "docs",
        "writer",
        started_at=START,
        status="done",
        extractor="offline",
        from_seq=1,
        to_seq=4,
        message_ids=["a", "b"],
        written=[{"text": "The API is on 8080", "where": "agents/writer/memory.md#Insights"}],
        dropped=[{"text": "Maybe Redis?", "reason": "question"}],
    )
    clock.advance(5)
    second = store.extraction.record(
        "docs",
        "writer",
        started_at=clock(),
        status="skipped",
        extractor="model",
        from_seq=5,
        to_seq=9,
        reason="the model is unreachable",
    )
    runs = store.extraction.runs("docs", "writer")
    assert [r.id for r in runs] == [second.id, first.id]
    assert runs[1].written == first.written and runs[1].dropped == first.dropped
    assert runs[1].message_ids == ["a", "b"]
    assert store.extraction.runs("other") == []


def test_an_unknown_status_is_refused(store: Store) -> None:
    with pytest.raises(ValueError, match="status must be"):
        store.extraction.record(
            "d", "w", started_at=START, status="maybe", extractor="x", from_seq=0, to_seq=0
        )


def test_messages_recorded_together_get_consecutive_seqs_and_turns(store: Store) -> None:
    store.conversation.record_message("docs", "writer", "user", "hello")
    records = store.conversation.record_messages(
        "docs",
        "writer",
        [("assistant", "hi", None), ("user", "next", None), ("assistant", "ok", "files")],
        run_id="r1",
    )
    assert [(r.seq, r.turn) for r in records] == [(2, 1), (3, 1), (4, 2)]
    stored = store.conversation.messages("docs", "writer")
    assert [m.id for m in stored[1:]] == [r.id for r in records]
    assert store.conversation.turn_count("docs", "writer") == 2
    assert store.conversation.replies_after("docs", "writer", 2) == 1


def test_a_batch_lands_whole_or_not_at_all(store: Store) -> None:
    with pytest.raises(StoreError), store.batch("record a step"):
        store.conversation.record_message("docs", "writer", "user", "kept?")
        store.run_state.set_task("no-such-run", "t1", squad="docs", agent="writer", status="done")
    assert store.conversation.messages("docs", "writer") == []
    with store.batch("record a step"):
        store.conversation.record_message("docs", "writer", "user", "kept")
        store.spend.record("docs", model="m", prompt_tokens=1)
    assert len(store.conversation.messages("docs", "writer")) == 1
    assert store.spend.of_squad("docs").calls == 1


def test_batches_do_not_nest(store: Store) -> None:
    with pytest.raises(RuntimeError, match="do not nest"), store.batch("a"), store.batch("b"):
        pass


def test_the_newest_messages_come_back_oldest_first_without_reading_the_rest(
    store: Store,
) -> None:
    for i in range(6):
        store.conversation.record_message("docs", "writer", "user", f"m{i}", session_id="chat")
    store.conversation.record_message("docs", "writer", "user", "other", session_id="s2")
    window = store.conversation.messages("docs", "writer", session_id="chat", newest=3)
    assert [m.content for m in window] == ["m3", "m4", "m5"]
    with pytest.raises(ValueError, match="not both"):
        store.conversation.messages("docs", "writer", limit=1, newest=1)


def test_messages_are_stored_without_the_known_values_and_those_found_earlier_in_the_write(
    store: Store,
) -> None:
    conversation = store.conversation
    conversation.record_message(
        "docs", "writer", "assistant", "OK, Blu3Whale$2024 is saved.", known=["Blu3Whale$2024"]
    )
    conversation.record_messages(
        "docs",
        "writer",
        [
            ("user", "my password is Tr4mpoline#77", None),
            ("assistant", "Saved Tr4mpoline#77.", None),
            ("tool", "notes.md: Tr4mpoline#77", "read_file"),
        ],
    )
    conversation.record_message("docs", "writer", "assistant", "What's the db password?")
    conversation.record_messages(  # a bare value after a stored cue, and its echo
        "docs", "writer", [("user", "hunter2x", None), ("assistant", "hunter2x noted", None)]
    )
    assert [m.content for m in conversation.messages("docs", "writer")] == [
        "OK, [REDACTED:echo] is saved.",
        "my password is [REDACTED:password_prose]",
        "Saved [REDACTED:echo].",
        "notes.md: [REDACTED:echo]",
        "What's the db password?",
        "[REDACTED:followup_secret]",
        "[REDACTED:echo] noted",
    ]
