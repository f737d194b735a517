"""The daemon's background jobs (consolidation, retention, the extraction sweep) as the
cluster runs them: at their cron time one node takes the job, over every registered squad."""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING

from squad.errors import NotFound

if TYPE_CHECKING:
    from squad.app import App
    from squad.jobqueue.reports import ClusterRetentionPass, ExtractionSweep, JobReport

__all__ = ["maintain"]

NODES_KEPT = timedelta(days=7)
"""A node that has not beaten for this long leaves ``squad cluster nodes`` at retention."""


def maintain(app: App, name: str) -> JobReport:
    """Run one background job over the cluster's squads; its report."""
    if name == "consolidation":
        from squad.daemon.jobs import run_consolidation

        return run_consolidation(app, now=app.clock())
    if name == "retention":
        return _retain(app)
    if name == "extraction":
        return _sweep_extraction(app)
    raise ValueError(f"no background job named {name!r}")


def _retain(app: App) -> ClusterRetentionPass:
    from datetime import timedelta
    from pathlib import Path

    from squad.daemon.jobs import pack_histories, prune_plans, run_retention, unread_agents
    from squad.store.records import RunStatus

    store = app.store
    workspaces = sorted({Path(record.workspace) for record in store.list_squads()})
    keep = {run.id for run in store.interrupted_runs() if run.status is RunStatus.RUNNING}
    now, policy = app.clock(), app.settings.daemon.retention
    specs = []
    for record in store.list_squads():
        try:
            specs.append(app.squads.registered(record.name))
        except NotFound:
            continue
    report = run_retention(
        store,
        app.checkpoints,
        workspaces,
        now=now,
        keep_runs=keep,
        policy=policy,
        unread_agents=unread_agents(specs),
    )
    forgotten = store.cluster.forget(stopped_before=now - NODES_KEPT)
    squads = [(record.name, Path(record.workspace)) for record in store.list_squads()]
    plans = prune_plans(app, squads, before=now - timedelta(days=policy.runs_days))
    histories = pack_histories(app, squads)
    return {**report.to_dict(), **plans, **histories, "nodes_forgotten": forgotten}


def _sweep_extraction(app: App) -> ExtractionSweep:
    from squad.memory.agent import AgentContext

    checked = []
    for squad, agent, _ in app.store.conversation.extraction_backlog():
        try:
            spec, workspace = app.squads.registered(squad)
        except NotFound:
            continue
        if agent not in {a.id for a in spec.agents}:
            continue
        app.extraction.check(AgentContext.of(spec, agent, workspace))
        checked.append(f"{squad}/{agent}")
    return {"checked": checked}
