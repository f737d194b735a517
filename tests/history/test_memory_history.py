"""An agent's memory history: every change with who, when, which run or pass and its text;
any change undone as a new change (a revert of a revert redoes it)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from squad.app import App
from squad.errors import NotFound, UsageError
from squad.history.message import FactOp
from squad.memory.agent import AgentContext
from squad.spec.models import SquadSpec
from squad.store.records import FactStatus
from tests.conftest import BASIC_YAML

MakeSpec = Callable[..., SquadSpec]


@pytest.fixture
def ctx(app: App, make_spec: MakeSpec) -> AgentContext:
    spec = make_spec(BASIC_YAML)
    workspace = app.squads.create(spec).path
    return AgentContext.of(spec, "writer", workspace)


def memory_text(ctx: AgentContext) -> str:
    return (ctx.workspace / "agents" / "writer" / "memory.md").read_text(encoding="utf-8")


def test_remember_forget_and_revert_are_changes_with_their_author_and_text(
    app: App, ctx: AgentContext
) -> None:
    day = app.clock().date().isoformat()
    app.memory.remember(ctx, "The site uses MkDocs Material", layer="project", actor="cli")
    fact = app.memory.remember(ctx, "Prefers short answers", layer="experiential", actor="web")
    assert fact.fact is not None
    app.memory.forget(fact.fact.id, actor="mcp:claude-code", workspace=ctx.workspace)

    history = app.memory.history_of(ctx)
    forgot, added_fact, added_line = history[:3]
    assert (added_line.who, added_line.kind) == ("cli", "memory")
    assert added_line.added == (f"- The site uses MkDocs Material ({day})",)
    assert added_fact.who == "web"
    assert [(f.op, f.text) for f in added_fact.facts] == [(FactOp.ADDED, "Prefers short answers")]
    assert forgot.who == "mcp:claude-code"
    assert [f.op for f in forgot.facts] == [FactOp.FORGOTTEN]
    assert history[-1].subject == "history starts: demo"

    undone = app.memory.revert(ctx, forgot.id, actor="cli")
    assert [f.op for f in undone.facts] == [FactOp.REVIVED]
    record = app.store.memory.get_fact(fact.fact.id)
    assert record is not None and record.status is FactStatus.ACTIVE

    app.memory.revert(ctx, added_line.id, actor="cli")
    assert "MkDocs" not in memory_text(ctx)
    newest = app.memory.history_of(ctx)[0]
    assert newest.removed == (f"- The site uses MkDocs Material ({day})",)
    assert newest.reverts == added_line.commit

    app.memory.revert(ctx, newest.id, actor="cli")  # a revert of the revert
    assert memory_text(ctx).count(f"- The site uses MkDocs Material ({day})") == 1
    with pytest.raises(UsageError, match="nothing to undo"):
        app.memory.revert(ctx, newest.id, actor="cli")
    assert memory_text(ctx).count("MkDocs") == 1, "undoing twice changes nothing"


def test_a_purged_fact_comes_back_as_a_new_fact(app: App, ctx: AgentContext) -> None:
    made = app.memory.remember(ctx, "Deploys on Fridays", layer="experiential", actor="cli")
    assert made.fact is not None
    app.memory.forget(made.fact.id, purge=True, workspace=ctx.workspace)
    purged = app.memory.history_of(ctx)[0]
    assert [f.op for f in purged.facts] == [FactOp.PURGED]
    back = app.memory.revert(ctx, purged.id)
    assert [(f.op, f.text) for f in back.facts] == [(FactOp.ADDED, "Deploys on Fridays")]
    active = app.store.memory.facts(app.memory.namespace_id(ctx))
    assert [f.text for f in active] == ["Deploys on Fridays"]


def test_an_unknown_change_or_the_start_is_refused_and_nothing_is_written(
    app: App, ctx: AgentContext
) -> None:
    before = memory_text(ctx)
    commits = len(app.memory.history_of(ctx))
    with pytest.raises(NotFound):
        app.memory.revert(ctx, "deadbeef00")
    with pytest.raises(UsageError, match="not a memory change id"):
        app.memory.revert(ctx, "../../etc")
    start = app.memory.history_of(ctx)[-1]
    with pytest.raises(UsageError, match="where the history starts"):
        app.memory.revert(ctx, start.id)
    assert memory_text(ctx) == before
    assert len(app.memory.history_of(ctx)) == commits


def test_a_hand_edit_is_an_unattributed_change_found_before_the_next_run_and_revertable(
    app: App, ctx: AgentContext
) -> None:
    path = ctx.workspace / "agents" / "writer" / "memory.md"
    path.write_text(memory_text(ctx).replace("# Insights\n", "# Insights\n- wrong by hand\n"))
    app.runner().run(ctx.squad, ctx.workspace)
    hand = next(e for e in app.memory.history_of(ctx) if e.who == "unattributed")
    assert hand.added == ("- wrong by hand",)
    app.memory.revert(ctx, hand.id)
    assert "wrong by hand" not in memory_text(ctx)


def test_an_agents_memory_writes_in_a_run_are_the_runs_and_a_pass_meanwhile_its_own(
    app: App, ctx: AgentContext
) -> None:
    from squad.history.history import History

    history: History = app.history(ctx.workspace, ctx.squad.name)
    in_run = AgentContext.of(ctx.squad, "writer", ctx.workspace, run_id="r-test")
    day = app.clock().date().isoformat()
    history.begin_run("r-test")
    app.memory.memory_file(in_run).append(
        "Insights", "- the agent's own line", actor="agent:writer"
    )
    app.memory.remember(ctx, "A fact from a pass", layer="project", actor="extractor")
    from squad.history.message import RunNote

    history.commit_run(RunNote("r-test", "demo", "succeeded", "manual"))
    entries = app.memory.history_of(ctx)
    run_entry, pass_entry = entries[0], entries[1]
    assert run_entry.who == "agent:writer" and run_entry.run_id == "r-test"
    assert run_entry.added == ("- the agent's own line",)
    assert pass_entry.who == "extractor"
    assert pass_entry.added == (f"- A fact from a pass ({day})",)


def test_an_extraction_pass_is_one_commit_naming_its_pass_with_its_lines_and_facts(
    app: App, ctx: AgentContext
) -> None:
    from squad.extraction.transcript import extract_transcript

    messages = [
        ("user", "In this repo we build the docs with MkDocs Material."),
        ("assistant", "Noted."),
        ("user", "I prefer short answers with the code first."),
        ("assistant", "Understood."),
    ]
    before = len(app.memory.history_of(ctx))
    result = extract_transcript(
        messages,
        now=app.clock(),
        model=None,
        memory=app.memory,
        ctx=ctx,
        dry_run=False,
        source="transcript:chat.jsonl",
    )
    assert result.applied is not None and result.applied.written
    history = app.memory.history_of(ctx)
    assert len(history) == before + 1, "one pass, one commit"
    entry = history[0]
    assert entry.who == "extractor" and entry.pass_id is not None
    assert entry.subject.startswith(f"memory: extractor pass {entry.pass_id} over transcript")
    written = {w["text"] for w in result.applied.written}
    shown = {line for line in entry.added} | {f.text for f in entry.facts}
    assert all(any(text in s for s in shown) for text in written)


def test_a_decision_and_a_workspace_rules_edit_are_commits_of_their_authors(
    app: App, ctx: AgentContext
) -> None:
    import pygit2

    from squad.history.log import commits
    from squad.memory.boot import write_boot_file

    recorded = app.decisions.record(
        "demo",
        ctx.workspace,
        title="Ship on Fridays",
        decision="We ship on Fridays.",
        reasons=["the team is in"],
        decided_by="person:alice",
    )
    write_boot_file(
        app.settings.home,
        "agents",
        "Answer in English.\n",
        cap_bytes=50_000,
        actor="web",
        workspace=ctx.workspace,
        history=app.history(ctx.workspace, "demo"),
    )
    repo = pygit2.Repository(str(ctx.workspace))
    rules, decision = list(commits(repo))[:2]
    assert decision.author.name == "person:alice"
    assert decision.message.startswith(f"decision {recorded.id} recorded: Ship on Fridays")
    assert rules.author.name == "web"
    changed = {p.delta.new_file.path for p in repo.diff(rules.parents[0], rules)}
    assert changed == {"AGENTS.md"}
    assert repo.status() == {}
