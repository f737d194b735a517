"""What squad's MCP tools do, on an :class:`~squad.app.App`, without the SDK.

Each method is one tool: it takes plain values (already checked against the tool's schema by
the server), answers a view (:mod:`squad.views`, the same the CLI and the HTTP API show for
the same thing), and raises a :class:`~squad.errors.SquadError` that
the server turns into a tool error the model can read. Writes take the same guarded paths as
the CLI (credential refusal, memory.md locks, caps, the audit log) with ``actor`` naming the
client, and reads go through :class:`Scope`: a squad outside it does not exist here.

Text that leaves (memory, search lines, run logs) has its credentials redacted: an MCP client
is another program, often another vendor's agent.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from squad.errors import NotFound, UsageError
from squad.views import (
    ApprovalQueued,
    ContextPreview,
    Decision,
    DecisionList,
    Forgotten,
    MemoryHistory,
    MemoryRead,
    MemoryRevert,
    MemorySearch,
    Remembered,
    ReviewList,
    ReviewResult,
    RunAccepted,
    RunList,
    RunStatus,
    SquadList,
)
from squad.web.redaction import redacted_text

if TYPE_CHECKING:
    from squad.app import App
    from squad.memory.agent import AgentContext
    from squad.memory.search import HitLayer
    from squad.store import RunRecord
    from squad.store.decisions import DecisionRecord
    from squad.web.control import RunControl

__all__ = ["ReadOnly", "Scope", "SquadTools"]

Layer = Literal["project", "experiential"]
RECENT_RUNS = 10


class ReadOnly(UsageError):
    """A write asked of a read-only server."""


@dataclass(frozen=True)
class Scope:
    """Which squads a server shows (None: all) and whether it may write."""

    squads: frozenset[str] | None = None
    read_only: bool = False

    def allows(self, squad: str | None) -> bool:
        return self.squads is None or squad in self.squads

    def check(self, squad: str) -> str:
        """``squad`` if this server shows it; else the same NotFound an unknown squad gets,
        so a limited client cannot learn which other squads exist."""
        if not self.allows(squad):
            raise NotFound(f"no squad {squad!r}; the `squads` tool lists them")
        return squad

    def check_write(self, what: str) -> None:
        if self.read_only:
            raise ReadOnly(f"this MCP server is read-only: {what} is not allowed")


def _shown(text: str) -> str:
    return redacted_text(text)[0]


class SquadTools:
    """The tools of one MCP server: ``app``'s squads within ``scope``; runs go to
    ``control`` (the daemon's queue, or one of this process)."""

    def __init__(self, app: App, control: RunControl | None, scope: Scope) -> None:
        self.app = app
        self.control = control
        self.scope = scope

    # -- reads ------------------------------------------------------------------------------

    def squads(self) -> SquadList:
        """Every squad in scope with its agents."""
        rows = []
        for found in self.app.squads.all_workspaces():
            if not self.scope.allows(found.squad):
                continue
            spec, _ = self.app.squads.definition(found.squad)
            rows.append(
                {
                    "name": spec.name,
                    "description": spec.description,
                    "goal": spec.goal,
                    "process": spec.process.type,
                    "workspace": str(found.path),
                    "schedule": None if spec.schedule is None else spec.schedule.model_dump(),
                    "agents": [
                        {
                            "id": agent.id,
                            "name": agent.display_name,
                            "role": agent.role,
                            "model": (agent.model or spec.model).name,
                            "profile": agent.profile,
                            "lead": agent is spec.lead and spec.process.type == "hierarchical",
                        }
                        for agent in spec.agents
                    ],
                }
            )
        return SquadList.model_validate({"squads": rows, "read_only": self.scope.read_only})

    def _agent(self, squad: str, agent: str) -> AgentContext:
        return self.app.agent(self.scope.check(squad), agent)

    def memory_search(
        self,
        query: str,
        *,
        squad: str | None = None,
        agent: str | None = None,
        layer: HitLayer | None = None,
        section: str | None = None,
        case_sensitive: bool = False,
        context: int = 0,
        limit: int = 50,
    ) -> MemorySearch:
        from squad.memory.search import search_all_memory
        from squad.text.grep import compile_query
        from squad.web.redaction import redacted_hits

        if not query.strip():
            raise UsageError("the query is empty: give a word or phrase to find")
        pattern = compile_query(query, regex=False, case_sensitive=case_sensitive)
        if squad is not None:
            targets = [self.app.squads.locate(self.scope.check(squad))]
        else:
            targets = [w for w in self.app.squads.all_workspaces() if self.scope.allows(w.squad)]
        found = search_all_memory(
            [(t.squad, t.path) for t in targets],
            self.app.store.memory if self.app.database_exists() else None,
            pattern,
            squad=squad,
            agent=agent,
            section=section,
            layer=layer,
            context=context,
            literal=query,
            case_sensitive=case_sensitive,
        )
        hits = [h.to_dict() for h in found.hits if self.scope.allows(h.squad)]
        shown, _ = redacted_hits(hits, pattern, where="memory")
        return MemorySearch.model_validate(
            {
                "query": query,
                "hits": shown[:limit],
                "total": len(shown),
                "truncated": len(shown) > limit,
            }
        )

    def memory_read(self, squad: str, agent: str, section: str | None = None) -> MemoryRead:
        ctx = self._agent(squad, agent)
        memory = self.app.memory.memory_file(ctx)
        snapshot = memory.snapshot()
        document = snapshot.document
        if section is not None and document.find(section) is None:
            raise NotFound(
                f"memory.md of {squad}/{agent} has no section {section!r}; sections: "
                + (", ".join(repr(n) for n in document.names) or "(none)")
            )
        text = document.read(section)
        return MemoryRead(
            squad=squad,
            agent=agent,
            section=section,
            text=_shown(text),
            version=snapshot.version,
            sections=list(document.names),
        )

    def memory_context(
        self, squad: str, agent: str, message: str = "", max_tokens: int | None = None
    ) -> ContextPreview:
        from squad.web.memory import context_preview

        self.scope.check(squad)
        data = context_preview(self.app, squad, agent, message=message, max_tokens=max_tokens)
        supplementary = data.supplementary.model_copy(
            update={"text": _shown(data.supplementary.text)}
        )
        return data.model_copy(update={"text": _shown(data.text), "supplementary": supplementary})

    def decision_search(
        self,
        query: str,
        *,
        squad: str | None = None,
        include_superseded: bool = False,
        limit: int = 20,
    ) -> DecisionList:
        if not query.strip():
            raise UsageError("the query is empty: give a word or phrase to find")
        squads: list[str] | None
        if squad is not None:
            squads = [self.scope.check(squad)]
        else:
            squads = None if self.scope.squads is None else sorted(self.scope.squads)
        found = self.app.decisions.search(
            query, squads=squads, limit=limit, include_superseded=include_superseded
        )
        return DecisionList(query=query, decisions=[_decision(d) for d in found])

    def decision_list(self, squad: str, include_superseded: bool = True) -> DecisionList:
        found = self.app.decisions.list(
            self.scope.check(squad), include_superseded=include_superseded, limit=200
        )
        return DecisionList(squad=squad, decisions=[_decision(d) for d in found])

    def run_status(
        self, run_id: str | None = None, squad: str | None = None
    ) -> RunStatus | RunList:
        from squad.web.overview import run_row
        from squad.web.runs import run_status

        if (run_id is None) == (squad is None):
            raise UsageError("give either run_id (one run) or squad (its recent runs)")
        if run_id is not None:
            return run_status(self.app, self._run(run_id).id)
        assert squad is not None
        self.app.squads.locate(self.scope.check(squad))
        runs = self.app.store.list_runs(squad, RECENT_RUNS) if self.app.database_exists() else []
        return RunList(squad=squad, runs=[run_row(r) for r in runs])

    def memory_history(self, squad: str, agent: str, limit: int) -> MemoryHistory:
        from squad.web.history import memory_history

        entries = memory_history(self.app, self.scope.check(squad), agent, limit=limit)
        return MemoryHistory(squad=squad, agent=agent, changes=entries)

    def memory_revert(self, squad: str, agent: str, change: str, *, actor: str) -> MemoryRevert:
        from squad.web.history import memory_revert

        self.scope.check_write("memory_revert")
        return memory_revert(self.app, self.scope.check(squad), agent, change, actor=actor)

    def _run(self, run_id: str) -> RunRecord:
        from squad.paths import check_name

        check_name(run_id, what="run id")
        run = self.app.store.get_run(run_id) if self.app.database_exists() else None
        if run is None or not self.scope.allows(run.squad):
            raise NotFound(f"no run {run_id!r}; run_status with a squad lists its runs")
        return run

    # -- writes -----------------------------------------------------------------------------

    def remember(
        self, squad: str, agent: str, text: str, layer: Layer, section: str | None, *, actor: str
    ) -> Remembered:
        self.scope.check_write("remember")
        result = self.app.memory.remember(
            self._agent(squad, agent), text, layer=layer, section=section, actor=actor
        )
        return Remembered(
            layer=result.layer,
            where=result.where,
            fact_id=result.fact.id if result.fact else None,
            stored=result.already is None,
            already=result.already,
        )

    def forget(self, fact_id: int, reason: str, *, actor: str) -> Forgotten:
        self.scope.check_write("forget")
        if not reason.strip():
            raise UsageError("say why the fact goes: the reason is kept in the audit log")
        fact = self.app.store.memory.get_fact(fact_id) if self.app.database_exists() else None
        if fact is None or not self.scope.allows(fact.squad):
            raise NotFound(f"no experiential fact with id {fact_id}; memory_search finds ids")
        workspace = self.app.squads.locate(fact.squad).path if fact.squad else None
        self.app.memory.forget(fact_id, actor=actor, workspace=workspace, reason=reason.strip())
        return Forgotten(fact_id=fact_id, forgotten=True, reason=reason.strip())

    def memory_review(
        self,
        squad: str,
        agent: str,
        action: Literal["list", "approve", "reject", "edit"],
        ids: list[int],
        text: str | None,
        *,
        actor: str,
    ) -> ReviewList | ReviewResult:
        """The review queue of an agent: list what waits, or approve, reject or edit (approve
        with new text) items, each decision audited and committed as ``actor``'s."""
        from squad.web.review import review_decide, review_list

        self.scope.check_write("memory_review")
        self.scope.check(squad)
        if action == "list":
            return review_list(self.app, squad, agent)
        if text is not None and action != "edit":
            raise UsageError("text goes with action edit only")
        return review_decide(self.app, squad, agent, action, ids, actor=actor, text=text)

    def decision_record(
        self,
        squad: str,
        title: str,
        decision: str,
        reasons: list[str],
        alternatives: list[str],
        supersedes: int | None,
        *,
        actor: str,
    ) -> Decision:
        self.scope.check_write("decision_record")
        found = self.app.squads.locate(self.scope.check(squad))
        recorded = self.app.decisions.record(
            squad,
            found.path,
            title=title,
            decision=decision,
            reasons=reasons,
            alternatives=alternatives,
            decided_by=actor,
            supersedes=supersedes,
        )
        return _decision(recorded)

    def run_start(self, squad: str, goal: str | None, *, actor: str) -> RunAccepted:
        from squad.daemon.runqueue import RunRequest

        self.scope.check_write("run_start")
        self.app.squads.locate(self.scope.check(squad))
        goal = goal.strip() if goal else None
        request = RunRequest(squad, actor, goal=goal or None)
        control = self._control()
        from squad.mcp.detached import ProcessControl

        if isinstance(control, ProcessControl):  # squad mcp over stdio: a process of its own
            launched = control.launch(request)
            return RunAccepted(
                squad=squad, accepted=True, run_id=launched.run_id, message=launched.message
            )
        accepted = control.submit(request)
        return RunAccepted(
            squad=squad,
            accepted=accepted,
            message=(
                "run queued; run_status with the squad shows it once it starts"
                if accepted
                else "merged into a run of this squad already waiting to start"
            ),
        )

    def run_approve(
        self, run_id: str, task: str, approved: bool, reason: str, *, actor: str
    ) -> ApprovalQueued:
        from squad.web.control import approval_answer

        self.scope.check_write("run_approve")
        answer = approval_answer(self.app, self._run(run_id), task, approved, reason, trigger=actor)
        if not approved and not reason.strip():
            raise UsageError("a rejection needs a reason: the agent reads it")
        control = self._control()
        from squad.mcp.detached import ProcessControl

        if isinstance(control, ProcessControl):
            launched = control.launch(answer)
            return ApprovalQueued(
                run_id=run_id, task=task, approved=approved, message=launched.message
            )
        control.submit(answer)
        return ApprovalQueued(
            run_id=run_id,
            task=task,
            approved=approved,
            message="answer queued; the run goes on when the queue allows",
        )

    def _control(self) -> RunControl:
        if self.control is None:
            raise UsageError("this MCP server cannot start runs (no run queue attached)")
        return self.control


def _decision(record: DecisionRecord) -> Decision:
    return record.view()
