"""The review queue: with ``memory.review`` on, what the extractor would write waits for a
person, is never injected while it waits, and is written by the extractor's own path when
approved (audited, committed); a rejection is remembered."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from squad.app import App
from squad.clock import FrozenClock
from squad.errors import NotFound, SecretInMemoryError, UsageError
from squad.extraction.job import AgentExtractor
from squad.extraction.review import REVIEW_CONFIDENCE
from squad.memory.agent import AgentContext
from squad.memory.audit import AuditLog
from squad.settings import Settings
from squad.spec.loader import squad_from_text

YAML = """\
name: demo
goal: Ship it.
memory: {{trigger_interval: 2, review: {squad}}}
agents:
  - {{id: planner, role: Plans the work{planner}}}
  - {{id: writer, role: Writes the pages}}
tasks:
  - {{id: outline, description: Outline the guide., agent: planner}}
"""

PORT = "We use Postgres 16 for the main database."
PREFERENCE = "I prefer short answers."
UNSURE = "The staging box is called bluefin."
"""The offline classifier files it with confidence 0.504: under :data:`REVIEW_CONFIDENCE`."""


@pytest.fixture
def app(settings: Settings, clock: FrozenClock) -> Iterator[App]:
    opened = App.open(settings, clock=clock)
    yield opened
    opened.close()


def _agent(app: App, squad: str = "all", planner: str = "") -> AgentContext:
    spec = squad_from_text(YAML.format(squad=squad, planner=planner), source="demo.yaml")
    workspace = app.squads.create(spec).path
    return AgentContext.of(spec, "planner", workspace)


def _extract(app: App, ctx: AgentContext, *lines: str) -> None:
    for line in lines:
        app.store.conversation.record_message("demo", "planner", "user", line, session_id="c")
        app.store.conversation.record_message("demo", "planner", "assistant", "OK.", session_id="c")
    extractor = AgentExtractor(
        app.memory, lambda ctx: None, clock=app.clock, decisions=app.decisions
    )
    extractor.run(ctx, force=True)


def _injected(app: App, ctx: AgentContext) -> str:
    """The agent's memory as its next prompt gets it: the whole system prompt, and the memory
    block ranked for a message (recall left out: it brings back the conversation itself,
    labelled as conversation, never a filed fact)."""
    block = app.memory.memory_block(ctx, message="database answers staging", recall_tokens=0)
    return app.memory.system_prompt(ctx) + block.text


def _git_log(workspace: Path) -> str:
    return subprocess.run(
        ["git", "-C", str(workspace), "log", "--format=%an|%s%n%b"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout


@pytest.mark.slow
def test_pending_fact_is_never_injected_and_approval_makes_it_injected(app: App) -> None:
    ctx = _agent(app, "all")
    _extract(app, ctx, PORT, PREFERENCE)
    pending = app.review.items(ctx)
    assert [(r.layer, r.text) for r in pending] == [
        ("project", PORT),
        ("experiential", PREFERENCE),
    ]
    assert pending[0].section == "Project Context" and pending[0].turns
    prompt = _injected(app, ctx)
    assert "Postgres 16" not in prompt and "short answers" not in prompt
    assert "Postgres" not in app.memory.memory_file(ctx).path.read_text()
    assert app.store.memory.facts(app.memory.namespace_id(ctx)) == []
    passes = app.store.extraction.runs("demo", "planner", limit=5)
    assert any("awaiting review as #" in d["reason"] for p in passes for d in p.dropped)

    done = app.review.approve(ctx, [r.id for r in pending], actor="cli")
    assert [d.written for d in done] == [True, True]
    assert done[0].where == "agents/planner/memory.md#Project Context"
    assert done[1].where is not None and done[1].where.startswith("fact:")
    prompt = _injected(app, ctx)
    assert "Postgres 16" in prompt and "short answers" in prompt
    assert app.review.items(ctx) == []
    decided = app.review.items(ctx, status="approved")
    assert {r.decided_by for r in decided} == {"cli"} and all(r.decided_at for r in decided)

    audit = [r for r in AuditLog(ctx.workspace).records() if r.operation == "review-approve"]
    assert [(r.actor, r.file) for r in audit] == [("cli", f"review:{r.id}") for r in pending]
    log = _git_log(ctx.workspace)
    assert f"cli|memory: cli approved review items #{pending[0].id}, #{pending[1].id}" in log
    assert f"Squad-Review: {pending[0].id}" in log and "+ - We use Postgres 16" in log


@pytest.mark.slow
def test_rejected_fact_is_remembered_and_not_queued_again(app: App, clock: FrozenClock) -> None:
    ctx = _agent(app, "all")
    _extract(app, ctx, PORT)
    (item,) = app.review.items(ctx)
    (done,) = app.review.reject(ctx, [item.id], actor="web")
    assert done.record.status == "rejected" and done.record.decided_by == "web"
    clock.advance(timedelta(days=1).total_seconds())
    _extract(app, ctx, "we use postgres 16 for the main database")  # same, normalised
    assert app.review.items(ctx) == []
    assert "Postgres" not in _injected(app, ctx)
    passes = app.store.extraction.runs("demo", "planner", limit=1)
    assert any("rejected in review before" in d["reason"] for d in passes[0].dropped)
    assert any(r.operation == "review-reject" for r in AuditLog(ctx.workspace).records())
    assert f"web|memory: web rejected review item #{item.id} for planner" in _git_log(ctx.workspace)
    with pytest.raises(UsageError, match="was rejected already, by web"):
        app.review.approve(ctx, [item.id], actor="cli")


def test_low_confidence_queues_only_the_low_ones(app: App) -> None:
    ctx = _agent(app, "low_confidence")
    _extract(app, ctx, PORT, UNSURE)
    (item,) = app.review.items(ctx)
    assert item.text == UNSURE and item.confidence < REVIEW_CONFIDENCE
    memory_md = app.memory.memory_file(ctx).path.read_text()
    assert "Postgres 16" in memory_md and "bluefin" not in memory_md


def test_the_agent_setting_overrides_the_squad(app: App) -> None:
    ctx = _agent(app, "all", planner=", memory: {review: 'off'}")
    assert ctx.review == "off"
    _extract(app, ctx, PORT)
    assert app.review.items(ctx) == []
    assert "Postgres 16" in app.memory.memory_file(ctx).path.read_text()
    inherits = AgentContext.of(ctx.squad, "writer", ctx.workspace)
    assert inherits.review == "all"


def test_edit_rechecks_credentials_and_approves_the_new_text(app: App) -> None:
    ctx = _agent(app, "all")
    _extract(app, ctx, PORT)
    (item,) = app.review.items(ctx)
    with pytest.raises(SecretInMemoryError):
        app.review.edit(ctx, item.id, "db password is hunter2-Xk9#pLq2!vB", actor="cli")
    with pytest.raises(UsageError, match="would not be kept as a fact"):
        app.review.edit(ctx, item.id, "Maybe we could use Postgres 17?", actor="cli")
    assert app.review.items(ctx)[0].status == "pending"  # refusals change nothing
    done = app.review.edit(ctx, item.id, "We use Postgres 17 for the main database.", actor="cli")
    assert done.written and done.record.edited_text == "We use Postgres 17 for the main database."
    assert done.record.text == PORT
    memory_md = app.memory.memory_file(ctx).path.read_text()
    assert "Postgres 17" in memory_md and "Postgres 16" not in memory_md


def test_approving_what_memory_already_says_writes_nothing_twice(app: App) -> None:
    ctx = _agent(app, "all")
    _extract(app, ctx, PORT)
    (item,) = app.review.items(ctx)
    app.memory.remember(ctx, PORT, layer="project", section="Project Context", actor="cli")
    (done,) = app.review.approve(ctx, [item.id], actor="cli")
    assert not done.written and "duplicate" in done.note
    assert app.memory.memory_file(ctx).path.read_text().count("Postgres 16") == 1


def test_bad_ids_change_nothing(app: App) -> None:
    ctx = _agent(app, "all")
    _extract(app, ctx, PORT)
    (item,) = app.review.items(ctx)
    for bad in (999, 0, 2**40):
        with pytest.raises(NotFound, match=f"no review item {bad} for demo/planner"):
            app.review.approve(ctx, [item.id, bad], actor="cli")
    other = AgentContext.of(ctx.squad, "writer", ctx.workspace)
    with pytest.raises(NotFound):
        app.review.reject(other, [item.id], actor="cli")
    assert app.review.items(ctx)[0].status == "pending"


def test_retention_drops_decided_rows_but_keeps_pending_ones(app: App, clock: FrozenClock) -> None:
    ctx = _agent(app, "all")
    _extract(app, ctx, PORT, PREFERENCE)
    first, second = app.review.items(ctx)
    app.review.reject(ctx, [first.id], actor="cli")
    clock.advance(timedelta(days=40).total_seconds())
    report = app.store.retention.forget_runs(app.clock() - timedelta(days=30))
    assert report.reviews == 1
    assert [r.id for r in app.review.items(ctx, status=None)] == [second.id]


def test_a_transcript_lists_the_facts_it_holds_for_review_as_review_not_write(app: App) -> None:
    from squad.extraction.transcript import extract_transcript

    ctx = _agent(app, "low_confidence")
    talk = [("user", PORT), ("assistant", "OK."), ("user", UNSURE), ("assistant", "OK.")]
    for dry_run in (True, False):
        result = extract_transcript(
            talk, now=app.clock(), model=None, memory=app.memory, ctx=ctx, dry_run=dry_run
        )
        actions = {f["text"]: f["action"] for f in result.to_dict(dry_run=dry_run)["facts"]}
        assert actions == {PORT: "write", UNSURE: "review"}
    (item,) = app.review.items(ctx)
    assert item.text == UNSURE
