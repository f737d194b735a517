"""Credentials never become facts: not from one message, not split across two, not by a model.

The extractor reads a conversation with its credentials redacted, each message judged after
the ones before it ("what's the db password?" / "hunter2x"), so neither the extraction model
nor a fact sees the value; a fact built from a redacted message is dropped, and a fact that
still carries a credential is refused when written.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from squad.extraction.apply import WITHHELD, apply_decisions
from squad.extraction.candidates import Candidate, ConversationMessage
from squad.extraction.extract import redacted
from squad.extraction.quality import Decision, drop_reason
from squad.extraction.transcript import extract_transcript
from squad.model.stub_answers import answer
from squad.model.testing import OpenAIStubServer
from tests.extraction.conftest import World
from tests.support.echo_model import echoing
from tests.support.leaks import assert_nowhere_on_disk
from tests.text.secrets_corpus import B62, fake

MakeWorld = Callable[..., World]
NOW = datetime(2026, 11, 29, 12, tzinfo=UTC)
PORT = "In this repo the API listens on port 8080."
SPLIT = [
    ("assistant", "What's the staging db password?"),
    ("user", "hunter2x"),
    ("user", PORT),
]


@pytest.fixture
def stub(monkeypatch: pytest.MonkeyPatch) -> Iterator[OpenAIStubServer]:
    monkeypatch.setenv("STUB_KEY", "stub-key")
    with OpenAIStubServer() as server:
        yield server


def everything_stored(world: World) -> str:
    """memory.md, every daily log and every Layer A fact of the agent, as one text."""
    daily = world.ctx.workspace / "agents" / world.ctx.agent.id / "daily"
    logs = [p.read_text() for p in sorted(daily.glob("*.md"))] if daily.exists() else []
    return "\n".join([world.memory_md(), *logs, *world.facts()])


def test_a_batch_is_read_with_a_split_password_redacted_and_nothing_else_changed() -> None:
    batch = [
        ConversationMessage(0, "assistant", "What's the db password?", seq=7),
        ConversationMessage(1, "user", "hunter2x", seq=8),
        ConversationMessage(2, "user", PORT, seq=9),
    ]
    assert redacted(batch) == [
        batch[0],
        ConversationMessage(1, "user", "[REDACTED:followup_secret]", seq=8),
        batch[2],
    ]


def test_the_extraction_model_never_sees_a_split_password_and_its_fact_is_dropped(
    make_world: MakeWorld, stub: OpenAIStubServer
) -> None:
    world = make_world()
    facts = [
        {"text": "The staging db password is [REDACTED:followup_secret]", "scope": "project"},
        {"text": "The API listens on port 8080", "scope": "project", "source_turns": [2]},
    ]
    stub.script(answer(json.dumps({"facts": facts})))
    result = extract_transcript(
        SPLIT, now=NOW, model=stub.model(), memory=world.memory, ctx=world.ctx, dry_run=False
    )

    [body] = stub.bodies
    assert "hunter2x" not in json.dumps(body) and "[REDACTED:followup_secret]" in json.dumps(body)
    reasons = {d.candidate.text: d.reason for d in result.decisions}
    assert reasons["The staging db password is [REDACTED:followup_secret]"] == "secret"
    stored = everything_stored(world)
    assert "The API listens on port 8080" in stored
    assert "hunter2x" not in stored and "REDACTED" not in stored


def test_offline_extraction_writes_nothing_of_a_password_split_across_messages(
    make_world: MakeWorld,
) -> None:
    world = make_world()
    said = [("user", "the prod db password is"), ("assistant", "Go ahead."), ("user", "Tr0ub4dor")]
    extract_transcript(
        [*said, *SPLIT], now=NOW, model=None, memory=world.memory, ctx=world.ctx, dry_run=False
    )
    stored = everything_stored(world)
    assert "Tr0ub4dor" not in stored and "hunter2x" not in stored


def test_a_cue_ending_one_batch_still_redacts_the_value_starting_the_next() -> None:
    filler = [("user", f"Note {i}.") for i in range(39)]
    said = [*filler, ("user", "my password is"), ("user", "hunter2x")]
    result = extract_transcript(said, now=NOW, model=None)
    assert not any("hunter2x" in d.candidate.text for d in result.decisions)


def test_the_background_pass_reads_the_store_where_a_split_password_is_already_redacted(
    make_world: MakeWorld,
) -> None:
    world = make_world(interval=1)
    world.say(("assistant", "What's the staging db password?"), ("user", "hunter2x"))
    world.talk(PORT)
    rows = world.manager.store.conversation.messages("demo", "planner")
    assert [r.content for r in rows][:2] == [
        "What's the staging db password?",
        "[REDACTED:followup_secret]",
    ]
    world.extractor().run(world.ctx)
    assert "hunter2x" not in everything_stored(world)


def test_a_fact_built_from_a_redacted_message_is_dropped_as_a_secret() -> None:
    fact = Candidate("The staging password is [REDACTED:password_prose]", "project")
    assert drop_reason(fact) == "secret"
    assert drop_reason(Candidate("The staging password rotates monthly", "project")) is None


def test_an_experiential_fact_that_carries_a_credential_is_refused_when_written(
    make_world: MakeWorld,
) -> None:
    world = make_world()
    token = "gh" + "p_" + fake(B62, 36)
    decision = Decision("write", Candidate(f"Deploys use {token}", "experiential"), "new")
    applied = apply_decisions(world.memory, world.ctx, [decision], now=NOW, source="t", seqs={})
    assert applied.written == [] and "not written" in applied.dropped[0]["reason"]
    assert token not in applied.dropped[0]["reason"]
    assert world.facts() == []


def test_an_echo_of_a_password_in_a_transcript_reaches_neither_the_model_nor_the_disk(
    make_world: MakeWorld, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    password = "Blu3Whale$2024"
    world = make_world()
    said = [
        ("user", f"my password is {password}"),
        ("assistant", f"OK, {password} is saved."),  # the detector alone sees nothing here
        ("user", PORT),
    ]
    monkeypatch.setenv("STUB_KEY", "stub-key")
    with OpenAIStubServer(handler=echoing) as stub:  # a fact for every line it reads
        extract_transcript(
            said, now=NOW, model=stub.model(), memory=world.memory, ctx=world.ctx, dry_run=False
        )
    extract_transcript(said, now=NOW, model=None, memory=world.memory, ctx=world.ctx, dry_run=False)

    read = json.dumps(stub.bodies)
    assert password not in read and "[REDACTED:echo]" in read
    assert "listens on port 8080" in everything_stored(world)
    assert_nowhere_on_disk(password, tmp_path)


def test_a_fact_dropped_as_a_secret_leaves_no_part_of_it_in_the_passes_record(
    make_world: MakeWorld, stub: OpenAIStubServer
) -> None:
    # The extraction model wrote a fact with a password no message held as such (assembled
    # from pieces, or missed by the batch's redaction), and only the classifier's wider check
    # saw it. The pass's record (extraction_runs, on the dashboard) keeps none of its text.
    world = make_world(interval=1)
    world.talk("The API listens on port 8080 now, and the VPN moved to the new gateway.")
    facts = [
        {"text": "The VPN takes Wint3r!sComing", "scope": "project", "source_turns": [0]},
        {"text": "The API listens on port 8080", "scope": "project", "source_turns": [0]},
    ]
    stub.script(answer(json.dumps({"facts": facts})))
    world.extractor(stub.model()).run(world.ctx)

    [record] = world.manager.store.extraction.runs("demo", world.ctx.agent.id)
    assert [d["text"] for d in record.dropped] == [WITHHELD]
    assert [d["reason"] for d in record.dropped] == ["secret"]
    assert "Wint3r!sComing" not in json.dumps([record.written, record.dropped])
