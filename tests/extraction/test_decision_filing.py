"""The extractor files a conversation's reasoned decisions in the decisions log too."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from squad.extraction.candidates import Candidate, ConversationMessage
from squad.extraction.decision_filing import StatedDecision, file_decisions, stated_decision
from squad.extraction.quality import Decision as Verdict
from squad.memory.audit import AuditLog
from squad.memory.decisions.log import DecisionLog
from tests.extraction.conftest import World

MakeWorld = Callable[..., World]


def _log(world: World) -> DecisionLog:
    return DecisionLog(world.manager.store, clock=world.clock)


def test_a_decision_with_its_reason_goes_to_memory_md_and_the_decisions_log(
    make_world: MakeWorld,
) -> None:
    world = make_world(interval=1)
    world.talk("We decided to use PostgreSQL because it handles concurrent writers.")
    world.extractor().run(world.ctx)

    assert "We decided to use PostgreSQL because it handles" in world.memory_md()
    (made,) = _log(world).list("demo")
    assert (made.title, made.decision, made.reasons) == (
        "Use PostgreSQL",
        "We decided to use PostgreSQL",
        ("it handles concurrent writers",),
    )
    assert made.decided_by == "agent:planner"
    assert "## 1. Use PostgreSQL" in (world.ctx.workspace / "decisions.md").read_text()
    decisions = [r for r in AuditLog(world.ctx.workspace).records() if r.operation == "decision"]
    assert [(r.actor, r.file) for r in decisions] == [("agent:planner", f"decision:{made.id}")]


def test_a_decision_without_a_stated_reason_stays_out_of_the_log(make_world: MakeWorld) -> None:
    world = make_world(interval=1)
    world.talk("We decided to deploy every Friday.")
    world.extractor().run(world.ctx)

    assert "deploy every Friday" in world.memory_md()
    assert _log(world).list() == []
    assert not (world.ctx.workspace / "decisions.md").exists()


def test_reading_the_same_decision_again_does_not_record_it_twice(make_world: MakeWorld) -> None:
    world = make_world(interval=1)
    said = "We decided to use PostgreSQL because it handles concurrent writers."
    world.talk(said)
    world.extractor().run(world.ctx)
    world.talk(said, said.upper().replace("BECAUSE", "because"))
    world.extractor().run(world.ctx)
    # The same verdicts filed once more, as a pass re-reading the messages would.
    candidate = Candidate(said, "project", section="Decisions", source_turns=(0,))
    verdict = Verdict("write", candidate, "new")
    again = file_decisions(
        _log(world),
        world.ctx,
        [verdict],
        [ConversationMessage(0, "user", said)],
        written=[{"text": said, "where": "agents/planner/memory.md#Decisions"}],
    )

    assert again == [] and len(_log(world).list()) == 1


@pytest.mark.parametrize(
    ("fact", "sources", "expected"),
    [
        (
            "We'll use Redis for the queue since it is already deployed.",
            [],
            StatedDecision(
                "We'll use Redis for the queue",
                "We'll use Redis for the queue",
                ("it is already deployed",),
            ),
        ),
        (
            "Because the team knows it, we decided to use MkDocs.",
            [],
            StatedDecision("Use MkDocs", "We decided to use MkDocs", ("the team knows it",)),
        ),
        (
            "We decided to use MkDocs.",
            ["We decided to use MkDocs. The reason is that search works offline."],
            StatedDecision("Use MkDocs", "We decided to use MkDocs", ("search works offline",)),
        ),
        (
            "팀이 익숙하기 때문에 MkDocs를 쓰기로 했어요",
            [],
            StatedDecision(
                "MkDocs를 쓰기로 했어요", "MkDocs를 쓰기로 했어요", ("팀이 익숙하기 때문에",)
            ),
        ),
        ("We switched to pnpm since March.", [], None),
        ("We decided to use MkDocs.", ["We decided to use MkDocs. Search is fast."], None),
    ],
    ids=["since", "because-first", "next-sentence", "korean", "since-a-date", "no-reason"],
)
def test_stated_reason_is_taken_from_the_sentence_or_the_one_after_it(
    fact: str, sources: list[str], expected: StatedDecision | None
) -> None:
    assert stated_decision(fact, sources) == expected
