"""What the overview and squad pages show, as views (:mod:`squad.views`): the API answers
them, the pages render their JSON.

The overview is ``squad status`` (the same :func:`~squad.daemon.status.collect_status`) plus
what a person watching wants at a glance: each squad's spend against its cap and the runs
waiting for a human.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from squad.errors import NotFound, SquadError
from squad.views import Approval, Definition, Overview, RunRow, SquadDetail, SquadSummary

if TYPE_CHECKING:
    from squad.app import App
    from squad.spec.models import SquadSpec
    from squad.store import RunRecord

__all__ = ["approvals", "overview", "run_row", "squad_detail", "squad_names"]


def run_row(run: RunRecord) -> RunRow:
    """A run in a list: what the store has, without the per-run spend query."""
    return RunRow(
        id=run.id,
        squad=run.squad,
        status=run.status.value,
        trigger=run.trigger,
        goal=run.goal,
        created_at=run.created_at.isoformat(),
        started_at=None if run.started_at is None else run.started_at.isoformat(),
        ended_at=None if run.ended_at is None else run.ended_at.isoformat(),
        duration_s=run.duration_s(),
        tokens_in=run.tokens_in,
        tokens_out=run.tokens_out,
        cost_usd=run.cost_usd,
        error=run.error,
    )


def overview(app: App, *, now: datetime, server: dict[str, Any] | None = None) -> Overview:
    """``squad status`` with each squad's spend and cap, and the approvals waiting."""
    from squad.daemon.status import collect_status

    status = collect_status(app, now=now)
    spent = app.store.spend.by_squad() if app.database_exists() else {}
    specs = _specs(app)
    squads = []
    for squad in status.squads:
        totals = spent.get(squad.name)
        cost = 0.0 if totals is None else round(totals.cost_usd, 6)
        spec = specs.get(squad.name)
        squads.append(
            SquadSummary(
                **dict(squad),
                spent_usd=cost,
                cap_usd=None if spec is None else spec.limits.max_cost_usd,
                schedule_spec=None if spec is None else _schedule_fields(spec),
            )
        )
    return Overview.model_validate(
        {**dict(status), "squads": squads, "approvals": approvals(app), "server": server}
    )


def _specs(app: App) -> dict[str, SquadSpec]:
    """Each squad's definition as its workspace keeps it (a workspace that cannot be read is
    left out)."""
    specs: dict[str, SquadSpec] = {}
    for found in app.squads.all_workspaces():
        try:
            specs[found.squad] = app.squads.workspaces.read_manifest(found.path).definition
        except SquadError:
            continue
    return specs


def _schedule_fields(spec: SquadSpec) -> dict[str, Any]:
    """``spec``'s schedule as its fields; a squad without one has the empty schedule."""
    from squad.spec.models import Schedule

    return (spec.schedule or Schedule()).model_dump(mode="json")


def approvals(app: App, squad: str | None = None) -> list[Approval]:
    """Runs paused at an approval gate, newest first, each with the task it waits on."""
    if not app.database_exists():
        return []
    from squad.store.records import RunStatus, TaskStatus

    waiting = []
    for run in app.store.interrupted_runs(squad):
        if run.status is not RunStatus.AWAITING_APPROVAL:
            continue
        tasks = [
            t for t in app.store.run_state.tasks(run.id) if t.status is TaskStatus.AWAITING_APPROVAL
        ]
        waiting.append(
            Approval(
                **dict(run_row(run)),
                task=tasks[0].task_id if tasks else None,
                agent=tasks[0].agent if tasks else None,
                output=tasks[0].output if tasks else None,
            )
        )
    return waiting


def squad_names(app: App) -> list[str]:
    return [found.squad for found in app.squads.all_workspaces()]


def squad_detail(app: App, name: str, *, page: int = 1, per_page: int = 20) -> SquadDetail:
    """One squad: definition (as its file says, and validated now), agents, runs (one page),
    spend and cap, and workspace health."""
    from squad.memory.agent import AgentContext
    from squad.web.redaction import key_state
    from squad.workspace.inspect import health

    found = app.squads.locate(name)
    manifest = app.squads.workspaces.read_manifest(found.path)
    spec = manifest.definition
    source = manifest.source_path
    definition = _definition_text(app, spec, source)

    agents = []
    for agent in spec.agents:
        ctx = AgentContext.of(spec, agent.id, found.path)
        model = agent.model or spec.model
        agents.append(
            {
                "id": agent.id,
                "name": agent.display_name,
                "role": agent.role,
                "model": ctx.model,
                "lead": agent.lead,
                "profile": agent.profile,
                "memory_identity": ctx.identity,
                "namespace": ctx.namespace_name,
                "memory_enabled": ctx.memory_enabled,
                "api_key_env": model.api_key_env,
                "api_key": key_state(model.api_key_env),
            }
        )
    total = app.store.count_runs(found.squad) if app.database_exists() else 0
    pages = max(1, -(-total // per_page))
    if page > pages and total:
        raise NotFound(f"squad {found.squad!r} has {pages} page(s) of runs, not {page}")
    runs = (
        [
            run_row(r)
            for r in app.store.list_runs(found.squad, per_page, offset=(page - 1) * per_page)
        ]
        if total
        else []
    )
    spent = app.store.spend.of_squad(found.squad).cost_usd if app.database_exists() else 0.0
    report = health(found.path, memory_cap_bytes=app.settings.memory_file_cap_bytes)
    return SquadDetail.model_validate(
        {
            "name": found.squad,
            "description": spec.description,
            "goal": spec.goal,
            "process": spec.process.type,
            "workspace": str(found.path),
            "source": source,
            "definition": definition,
            "tasks": [
                {
                    "id": t.id,
                    "agent": t.agent,
                    "depends_on": list(t.depends_on),
                    "approval": t.approval,
                    "description": t.description,
                }
                for t in spec.tasks
            ],
            "agents": agents,
            "limits": spec.limits.model_dump(),
            "schedule": _schedule_fields(spec),
            "spent_usd": round(spent, 6),
            "runs": runs,
            "runs_total": total,
            "page": page,
            "pages": pages,
            "approvals": approvals(app, found.squad),
            "health": report.view(),
        }
    )


def _definition_text(app: App, spec: Any, source: str | None) -> Definition:
    """The YAML as its file has it (validated now), else the manifest's copy as YAML, with
    the credentials in it redacted (and counted)."""
    from squad.spec.loader import load_squad_file
    from squad.web.redaction import redacted_text

    def shown(text: str, **rest: Any) -> Definition:
        text, hidden = redacted_text(text)
        return Definition.model_validate({"text": text, "redacted": hidden, **rest})

    if source and Path(source).is_file():
        text = ""
        try:
            text = Path(source).read_text(encoding="utf-8", errors="replace")
            loaded = load_squad_file(Path(source))
        except (SquadError, OSError) as exc:
            problems = getattr(exc, "problems", ())
            return shown(
                text,
                file=source,
                valid=False,
                problems=[p.to_dict() for p in problems] or [{"message": str(exc)}],
                warnings=[],
            )
        return shown(
            text,
            file=source,
            valid=True,
            problems=[],
            warnings=[w.to_dict() for w in loaded.warnings],
        )
    import io

    from ruamel.yaml import YAML

    buffer = io.StringIO()
    YAML().dump(spec.model_dump(mode="json", exclude_defaults=True), buffer)
    return shown(buffer.getvalue(), file=None, valid=True, problems=[], warnings=[])
