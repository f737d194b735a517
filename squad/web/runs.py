"""What the run page shows: the run, its task timeline with tokens and cost per task, the plan
of a hierarchical run, its model calls and the approval it waits on, as views
(:class:`~squad.views.RunPage`, and :class:`~squad.views.RunDetail` without the log).

Task timings and states come from the store; tokens and cost per task from the run log's
``model_call`` events, each counted for the task whose node was open when it was made (or the
task it names); the ledger gives the calls themselves.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from squad.errors import NotFound
from squad.views import (
    FallbackPlan,
    FileChanged,
    ModelCall,
    Plan,
    RunDetail,
    RunPage,
    RunStatus,
    TaskRow,
)

if TYPE_CHECKING:
    from squad.app import App
    from squad.web.svg import Words

__all__ = [
    "MAX_DIFF_CHARS",
    "MAX_LOG_EVENTS",
    "run_detail",
    "run_page",
    "run_picture",
    "run_status",
    "task_costs",
]

MAX_LOG_EVENTS = 2000
"""Events of the run log a page starts with; the live tail streams the rest."""
MAX_DIFF_CHARS = 50_000
"""The longest diff :func:`run_status` carries (a model or a person reads it; the API's
``/runs/{id}/diff`` has the whole)."""


def task_costs(events: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Tokens, cost and calls per task from a run's events (pure)."""
    open_nodes: list[str] = []
    costs: dict[str, dict[str, float]] = {}
    for event in events:
        kind = event.get("event")
        node = event.get("task") or event.get("node")
        if kind == "node_start" and isinstance(node, str):
            open_nodes.append(node)
        elif kind == "node_end" and isinstance(node, str):
            if node in open_nodes:
                open_nodes.remove(node)
        elif kind == "model_call":
            owner = node if isinstance(node, str) else (open_nodes[-1] if open_nodes else "")
            if not owner:
                owner = str(event.get("agent") or "run")
            entry = costs.setdefault(
                owner, {"prompt_tokens": 0, "completion_tokens": 0, "cost_usd": 0.0, "calls": 0}
            )
            entry["prompt_tokens"] += _number(event.get("prompt_tokens"))
            entry["completion_tokens"] += _number(event.get("completion_tokens"))
            entry["cost_usd"] += _number(event.get("cost_usd"))
            entry["calls"] += 1
    return costs


def _number(value: Any) -> float:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0.0


def run_detail(app: App, run_id: str) -> RunDetail:
    """The run as every front end shows it (the run page's data without its log)."""
    page = run_page(app, run_id)
    return RunDetail.model_validate({name: getattr(page, name) for name in RunDetail.model_fields})


def run_page(app: App, run_id: str) -> RunPage:
    """Everything the run page shows; an unknown run is a NotFound."""
    from squad.daemon.status import run_summary
    from squad.eventlines import scan_events
    from squad.paths import check_name
    from squad.runtime.runlog import run_log_path
    from squad.store.records import TaskStatus
    from squad.web.overview import run_row

    check_name(run_id, what="run id")
    run = app.store.get_run(run_id) if app.database_exists() else None
    if run is None:
        raise NotFound(f"no run {run_id!r}; the squad's page and `squad runs list` list its runs")
    workspace = _workspace_of(app, run.squad)
    events: list[dict[str, Any]] = []
    log_file = None
    if workspace is not None:
        path = run_log_path(workspace, run_id)
        log_file = path.relative_to(workspace).as_posix()
        events = scan_events(path, missing_ok=True).events
    costs = task_costs(events)
    tasks = []
    for task in app.store.run_state.tasks(run_id):
        spent = costs.get(task.task_id, {})
        duration = None
        if task.started_at is not None and task.ended_at is not None:
            duration = round((task.ended_at - task.started_at).total_seconds(), 2)
        tasks.append(
            TaskRow(
                id=task.task_id,
                agent=task.agent,
                status=task.status.value,
                attempts=task.attempts,
                rounds=task.rounds,
                error=task.error,
                output=task.output,
                started_at=None if task.started_at is None else task.started_at.isoformat(),
                ended_at=None if task.ended_at is None else task.ended_at.isoformat(),
                duration_s=duration,
                prompt_tokens=int(spent.get("prompt_tokens", 0)),
                completion_tokens=int(spent.get("completion_tokens", 0)),
                cost_usd=round(spent.get("cost_usd", 0.0), 6),
            )
        )
    waiting = [t.id for t in tasks if t.status == TaskStatus.AWAITING_APPROVAL.value]
    calls = [
        ModelCall(
            agent=c.agent,
            model=c.model,
            prompt_tokens=c.prompt_tokens,
            completion_tokens=c.completion_tokens,
            cost_usd=c.cost_usd,
            latency_s=c.latency_s,
            at=c.at.isoformat(),
        )
        for c in app.store.spend.calls_of_run(run_id)
    ]
    summary = run_summary(run, app.store.spend.of_run(run_id), now=app.clock())
    row = {
        **dict(run_row(run)),
        "tokens_in": summary.tokens_in,
        "tokens_out": summary.tokens_out,
        "cost_usd": summary.cost_usd,
        "duration_s": summary.duration_s,
    }
    return RunPage(
        **row,
        model=run.model,
        tasks=tasks,
        awaiting=waiting[0] if waiting else None,
        resumable=run.status.value in ("interrupted", "running") and not waiting,
        plan=_plan(workspace, events),
        model_calls=calls,
        log_file=log_file,
        events=events[-MAX_LOG_EVENTS:],
        events_total=len(events),
    )


def _workspace_of(app: App, squad: str) -> Path | None:
    try:
        return app.squads.locate(squad).path
    except NotFound:
        return None


def _plan(workspace: Path | None, events: list[dict[str, Any]]) -> Plan | None:
    """The last plan the run's lead wrote (hierarchical runs), with its text, and why squad
    wrote it instead when the lead's plan was invalid twice."""
    from squad.errors import SquadError
    from squad.workspace.inspect import preview

    written = [i for i, e in enumerate(events) if e.get("event") == "plan_written"]
    if not written or workspace is None:
        return None
    last = events[written[-1]]
    path = str(last.get("path") or "")
    text = None
    try:
        text = preview(workspace, path, max_bytes=200_000).text if path else None
    except SquadError:
        text = None
    tasks = last.get("tasks")
    return Plan(
        path=path or None,
        tasks=[str(t) for t in tasks] if isinstance(tasks, list) else [],
        text=text,
        fallback=_fallback(events[: written[-1]]) if last.get("fallback") else None,
    )


def _fallback(before: list[dict[str, Any]]) -> FallbackPlan | None:
    """The ``plan_fallback`` event of the plan written after ``before`` (pure)."""
    from squad.runtime.plan import fallback_reason

    event = next((e for e in reversed(before) if e.get("event") == "plan_fallback"), None)
    if event is None:
        return None
    kind = str(event.get("kind") or "")
    tasks = event.get("tasks")
    count = len(tasks) if isinstance(tasks, list) else 0
    reason = fallback_reason(kind, count, str(event.get("agent") or "the lead"))
    errors = event.get("errors")
    return FallbackPlan(
        kind=kind,
        reason=reason,
        errors=[str(e) for e in errors] if isinstance(errors, list) else [],
    )


def run_status(app: App, run_id: str) -> RunStatus:
    """One run as ``squad runs status`` and MCP's ``run_status`` show it: the run, task outputs
    redacted, with its commit and the diff against the squad's previous run (the patch cut
    at :data:`MAX_DIFF_CHARS`), or why there is none."""
    from squad.errors import HistoryUnavailable, UsageError
    from squad.web.history import run_diff
    from squad.web.redaction import redacted_text

    detail = run_detail(app, run_id)
    tasks = [
        task.model_copy(update={"output": redacted_text(task.output)[0]}) if task.output else task
        for task in detail.tasks
    ]
    run = {**dict(detail), "tasks": tasks}
    try:
        diff = run_diff(app, run_id)
    except (UsageError, HistoryUnavailable) as exc:
        return RunStatus(**run, commit=None, diff=None, history=str(exc))
    patch = diff.patch or ""
    return RunStatus(
        **run,
        commit=diff.new_commit,
        previous_run=diff.old_run,
        previous_commit=diff.old_commit,
        changes=[FileChanged.model_validate(dict(c)) for c in diff.stat],
        diff=patch[:MAX_DIFF_CHARS],
        diff_truncated=len(patch) > MAX_DIFF_CHARS or diff.truncated,
    )


def run_picture(app: App, run: RunPage, words: Words) -> dict[str, str] | None:
    """The run page's timeline of its tasks, drawn ``wide`` for a desktop and ``narrow`` for
    a phone (None before any task has a state): dependencies
    from the run's last plan, else from the squad's definition; the approval waits from the
    run log."""
    from datetime import datetime

    from squad.web.timeline import (
        NARROW,
        WIDTH,
        Span,
        approval_waits,
        critical_path,
        plan_graph,
        timeline_svg,
    )

    if not run.tasks:
        return None
    now = app.clock()
    events = [dict(e) for e in run.events]
    deps = {task: tuple(after) for task, _, after in plan_graph(events)}
    if not deps:
        deps = _definition_deps(app, run.squad)

    def at(text: str | None) -> datetime | None:
        return None if text is None else datetime.fromisoformat(text)

    # a task still open in a run that is no longer running ends with the run, and so does
    # a wait of a run that no longer waits
    live = run.status in ("running", "pending")
    stopped = at(run.ended_at) or now
    waits = approval_waits(
        events, until=now if live or run.status == "awaiting_approval" else stopped
    )
    spans = [
        Span(
            id=t.id,
            agent=t.agent,
            status=t.status,
            start=at(t.started_at),
            end=at(t.ended_at) or (None if live or t.started_at is None else stopped),
            depends_on=deps.get(t.id, ()),
            waits=tuple(waits.get(t.id, ())),
        )
        for t in run.tasks
    ]
    durations = {
        s.id: ((s.end or now) - s.start).total_seconds() if s.start else 0.0 for s in spans
    }
    origin = at(run.started_at) or at(run.created_at) or now
    critical = critical_path(durations, {s.id: s.depends_on for s in spans})
    return {
        size: timeline_svg(
            spans, origin=origin, now=now, critical=critical, words=words, width=width
        )
        for size, width in (("wide", WIDTH), ("narrow", NARROW))
    }


def _definition_deps(app: App, squad: str) -> dict[str, tuple[str, ...]]:
    from squad.errors import SquadError

    try:
        spec, _ = app.squads.definition(squad)
    except SquadError:
        return {}
    return {t.id: tuple(t.depends_on) for t in spec.tasks}


def last_plan_graph(
    app: App, squad: str, *, runs: int = 5
) -> list[tuple[str, str, tuple[str, ...]]]:
    """The tasks of the newest plan among the squad's last ``runs`` runs, as
    (id, agent, depends_on); empty when none of them wrote one."""
    from squad.eventlines import scan_events
    from squad.runtime.runlog import run_log_path
    from squad.web.timeline import plan_graph

    workspace = _workspace_of(app, squad)
    if workspace is None or not app.database_exists():
        return []
    for run in app.store.list_runs(squad, runs):
        events = scan_events(run_log_path(workspace, run.id), missing_ok=True).events
        graph = plan_graph(events)
        if graph:
            return graph
    return []
