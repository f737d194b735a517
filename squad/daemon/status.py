"""``squad status``: the daemon (up or down) and every squad, from the lock, store and folder.

The status is built by pure functions from plain inputs (:func:`daemon_status`,
:func:`build_status`); :func:`collect_status` only gathers those inputs. It works with the
daemon down too: squads then come from the squads folder and their last runs from the store.
A home whose database does not exist yet is not given one. A squad's ``warnings`` are what
its file validates with but is unlikely to mean, as ``squad validate`` reports them.

With the daemon up, ``squad status`` does not open the store at all: at every beat the daemon
publishes what it knows (its heartbeat state and the store's part of the status,
:func:`store_view`) in ``$SQUAD_HOME/daemon-status.json``, and :func:`published_status`
answers from that file when the lock's pid wrote it and its beat (the file's modification
time) is fresh. Anything else (no daemon, a stale beat, a cluster node) takes
:func:`collect_status`, which reads the store, and the squads folder through
``$SQUAD_HOME/status-validated.json``: a file is validated again only when it changed.

The JSON shape (``squad status --json``)::

    {"daemon": {"state": "up" | "down", "pid", "host", "started_at", "uptime_s",
                "heartbeat_at", "heartbeat_age_s", "reason", "configs", "configs_missing"},
     "squads": [{"name", "file", "schedule", "next_fire", "running", "queued",
                 "last_run": {"id", "status", "trigger", "started_at", "ended_at",
                              "duration_s", "tokens_in", "tokens_out", "cost_usd", "error"},
                 "warnings": [{"source", "line", "column", "path", "message", "hint"}],
                 "file_error", "invalid_since"}],   (its file broke: it runs its last good
                                                      definition; None otherwise)
     "running": [...], "queue": [...], "queue_length": n,
     "failed_files": [{"file", "squad", "error", "problems", "running_last_good"}],
     "extraction_backlog": [{"squad", "agent", "messages"}],
     "waiting_approvals": [{"run_id", "squad", "task", "agent", "since"}],
     "summary": {"squads", "running", "queued", "waiting_approvals", "failed_files",
                 "failed_runs", "history_paused", "backlog_agents", "backlog_messages"},
     "checkpoints": {"backend": "sqlite" | "postgres", "where",
                     "left_behind": {"file", "runs", "note"} | null},
     "history_paused": [{"squad", "workspace", "state": "foreign" | "broken", "reason"}],
     "http": {"url", "host", "port"} | null,   (the daemon's dashboard, when it serves one)
     "cluster": {"nodes": [...], "queue": {...}, "running": [...], "stalled": [...],
                 "stall_timeout_s"}}   (only in cluster mode; see squad.jobqueue.view)
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from squad.daemon.lock import LockState, pid_alive, probe_lock
from squad.daemon.published import PUBLISHED_FILE, STALE_AFTER, read_published
from squad.views import (
    ClusterUnreachable,
    ClusterView,
    DaemonState,
    RunSummary,
    SquadStatus,
    Status,
    StatusSummary,
)

if TYPE_CHECKING:
    from squad.app import App
    from squad.store import RunRecord, SpendTotals

__all__ = [
    "PUBLISHED_FILE",
    "STALE_AFTER",
    "Beat",
    "build_status",
    "collect_status",
    "daemon_status",
    "publish",
    "published_status",
    "run_summary",
    "store_view",
]


class Beat(Protocol):
    """A heartbeat as :func:`daemon_status` reads it (the store's ``HeartbeatRecord``, or
    the published file's)."""

    @property
    def pid(self) -> int: ...
    @property
    def host(self) -> str: ...
    @property
    def started_at(self) -> datetime: ...
    @property
    def beat_at(self) -> datetime: ...
    @property
    def stopped_at(self) -> datetime | None: ...


def daemon_status(
    *,
    now: datetime,
    lock: LockState,
    heartbeat: Beat | None,
    alive: Callable[[int], bool] = pid_alive,
    stale_after: timedelta = STALE_AFTER,
) -> DaemonState:
    """Whether a daemon is up for the home, and why not when it is down.

    A beat stamped after ``now`` (the reader's clock read before the beat was written, or
    behind the writer's) is 0 seconds old: an age is never negative."""
    age = None if heartbeat is None else max(0.0, (now - heartbeat.beat_at).total_seconds())
    reason = None
    if not lock.held:
        if lock.pid is not None and not alive(lock.pid):
            reason = f"not running (pid {lock.pid} in the pid file is gone)"
        else:
            reason = "not running"
    elif lock.pid is not None and not alive(lock.pid):
        reason = f"pid {lock.pid} is gone"
    elif heartbeat is None or heartbeat.pid != lock.pid:
        reason = "starting (no heartbeat yet)"
    elif heartbeat.stopped_at is not None:
        reason = "stopping"
    elif age is not None and age > stale_after.total_seconds():
        reason = f"heartbeat {age:.0f}s old: the daemon is stuck or its database unreachable"
    up = reason is None
    started_at = uptime = stopped_at = None
    if up and heartbeat is not None:
        started_at = heartbeat.started_at.isoformat()
        uptime = round((now - heartbeat.started_at).total_seconds(), 1)
    elif heartbeat is not None and heartbeat.stopped_at is not None:
        stopped_at = heartbeat.stopped_at.isoformat()
    return DaemonState(
        state="up" if up else "down",
        pid=lock.pid if lock.held else None,
        host=heartbeat.host if heartbeat is not None else None,
        started_at=started_at,
        uptime_s=uptime,
        heartbeat_at=None if heartbeat is None else heartbeat.beat_at.isoformat(),
        heartbeat_age_s=None if age is None else round(age, 1),
        reason=reason,
        stopped_at=stopped_at,
    )


def run_summary(run: RunRecord, spend: SpendTotals, *, now: datetime) -> RunSummary:
    """A run for ``status``: tokens and cost from the spend ledger, so a running run's count."""
    return RunSummary(
        id=run.id,
        status=run.status.value,
        trigger=run.trigger,
        started_at=None if run.started_at is None else run.started_at.isoformat(),
        ended_at=None if run.ended_at is None else run.ended_at.isoformat(),
        duration_s=run.duration_s(now=now),
        tokens_in=max(spend.prompt_tokens, run.tokens_in),
        tokens_out=max(spend.completion_tokens, run.tokens_out),
        cost_usd=max(spend.cost_usd, run.cost_usd),
        error=run.error,
    )


def build_status(
    *,
    daemon: DaemonState,
    state: Mapping[str, Any] | None,
    configured: Sequence[Mapping[str, Any]],
    failed_files: Sequence[Mapping[str, Any]],
    last_runs: Mapping[str, RunSummary],
    backlog: Sequence[tuple[str, str, int]],
    checkpoints: Mapping[str, Any] | None = None,
    approvals: Sequence[Mapping[str, Any]] = (),
    history_paused: Sequence[Mapping[str, Any]] = (),
) -> Status:
    """The whole status; ``state`` is the daemon's last heartbeat state, used when it is up.

    With the daemon down, squads are the ``configured`` ones (from the folder) and nothing
    is queued or due. The heartbeat's parts are checked as the view is built: a malformed
    one is a ``ValueError``.
    """
    up = daemon.state == "up" and state is not None
    live: Mapping[str, Any] = state if up and state is not None else {}
    source: Sequence[Mapping[str, Any]] = live.get("squads", []) if up else configured
    squads = []
    for entry in source:
        name = str(entry["name"])
        last = last_runs.get(name)
        squads.append(
            SquadStatus.model_validate(
                {
                    "name": name,
                    "file": entry.get("file"),
                    "schedule": entry.get("schedule"),
                    "next_fire": entry.get("next_fire") if up else None,
                    "running": bool(entry.get("running"))
                    or (last is not None and last.status == "running"),
                    "queued": bool(entry.get("queued")) if up else False,
                    "last_run": last,
                    "warnings": list(entry.get("warnings") or []),
                    "file_error": entry.get("file_error") if up else None,
                    "invalid_since": entry.get("invalid_since") if up else None,
                }
            )
        )
    queue = list(live.get("queue", []))
    failed = list(live.get("failed_files", [])) if up else list(failed_files)
    running = sum(1 for s in squads if s.running)
    failed_runs = sum(1 for s in squads if s.last_run is not None and s.last_run.status == "failed")
    summary = StatusSummary(
        squads=len(squads),
        running=running,
        queued=len(queue),
        waiting_approvals=len(approvals),
        failed_files=len(failed),
        failed_runs=failed_runs,
        history_paused=len(history_paused),
        backlog_agents=len(backlog),
        backlog_messages=sum(count for _, _, count in backlog),
    )
    return Status.model_validate(
        {
            "daemon": daemon,
            "squads": squads,
            "running": list(live.get("running", [])),
            "queue": queue,
            "queue_length": len(queue),
            "failed_files": failed,
            "settings_restart_needed": list(live.get("settings_restart_needed", [])),
            "jobs": dict(live.get("jobs", {})),
            "http": dict(live["http"]) if live.get("http") else None,
            "extraction_backlog": [
                {"squad": squad, "agent": agent, "messages": count}
                for squad, agent, count in backlog
            ],
            "waiting_approvals": list(approvals),
            "history_paused": list(history_paused),
            "checkpoints": checkpoints,
            "summary": summary,
        }
    )


def store_view(
    app: App, names: Iterable[str], *, now: datetime, settle: bool = True
) -> dict[str, Any]:
    """The store's part of the status, in a handful of queries whatever the number of
    squads: each of ``names``' last run, the runs waiting for approval, the extraction
    backlog, paused histories and the checkpoints' place. JSON-ready (the daemon publishes
    it). With ``settle``, a ``running`` run whose process died is settled first (it says
    so); the daemon, which settles at start and runs its own, does not ask it at every beat."""
    from squad.checkpoints import left_behind

    settings = app.settings
    last_runs: dict[str, dict[str, Any]] = {}
    backlog: list[tuple[str, str, int]] = []
    approvals: list[dict[str, Any]] = []
    if app.database_exists():
        from squad.runtime.runlock import settle_dead_runs
        from squad.store import SpendTotals
        from squad.store.records import RunStatus, TaskStatus

        store = app.reads
        if settle:
            settle_dead_runs(store, settings.locks_dir)
        latest = store.latest_runs()
        wanted = {name: latest[name] for name in names if name in latest}
        spend = store.spend.of_runs([run.id for run in wanted.values()])
        last_runs = {
            name: run_summary(run, spend.get(run.id, SpendTotals()), now=now).model_dump()
            for name, run in wanted.items()
        }
        backlog = store.conversation.extraction_backlog()
        for run in store.interrupted_runs():
            if run.status is not RunStatus.AWAITING_APPROVAL:
                continue
            tasks = [
                t for t in store.run_state.tasks(run.id) if t.status is TaskStatus.AWAITING_APPROVAL
            ]
            approvals.append(
                {
                    "run_id": run.id,
                    "squad": run.squad,
                    "task": tasks[0].task_id if tasks else None,
                    "agent": tasks[0].agent if tasks else None,
                    "since": run.created_at.isoformat(),
                }
            )
    checkpoints = app.checkpoints
    kept = left_behind(settings.home, checkpoints)
    return {
        "last_runs": last_runs,
        "extraction_backlog": [[squad, agent, count] for squad, agent, count in backlog],
        "waiting_approvals": approvals,
        "history_paused": _paused_histories(app),
        "checkpoints": {
            "backend": checkpoints.backend,
            "where": checkpoints.where,
            "left_behind": None if kept is None else {**kept.to_dict(), "note": kept.describe()},
        },
    }


def _report(
    daemon: DaemonState,
    state: Mapping[str, Any] | None,
    view: Mapping[str, Any],
    *,
    configured: Sequence[Mapping[str, Any]] = (),
    failed: Sequence[Mapping[str, Any]] = (),
) -> Status:
    return build_status(
        daemon=daemon,
        state=state,
        configured=configured,
        failed_files=failed,
        last_runs={name: RunSummary.model_validate(run) for name, run in view["last_runs"].items()},
        backlog=[(str(s), str(a), int(n)) for s, a, n in view["extraction_backlog"]],
        checkpoints=view["checkpoints"],
        approvals=view["waiting_approvals"],
        history_paused=view["history_paused"],
    )


def collect_status(
    app: App, *, now: datetime | None = None, squads_dir: Path | None = None
) -> Status:
    """Gather the lock, heartbeat, squads folder, store and checkpoints, and build the status.

    Without ``now``, the app's clock is read once the heartbeat is: a beat written while
    the store was opening is not younger than the reading time. A home whose database does
    not exist yet is not given one."""
    settings = app.settings
    lock = probe_lock(settings.home)
    store = app.reads if app.database_exists() else None
    heartbeat = None if store is None else store.daemon.get(str(settings.home))
    now = app.clock() if now is None else now
    daemon = daemon_status(now=now, lock=lock, heartbeat=heartbeat)
    state = heartbeat.state if heartbeat is not None else None
    up = daemon.state == "up" and state is not None
    folder = squads_dir or settings.squads_dir
    if up and state is not None and squads_dir is None and state.get("configs"):
        folder = Path(str(state["configs"]))
    missing = (
        bool(state.get("configs_missing")) if up and state is not None else not folder.is_dir()
    )
    daemon = daemon.model_copy(update={"configs": str(folder), "configs_missing": missing})
    configured: list[dict[str, Any]] = []
    failed: list[dict[str, Any]] = []
    if not up:
        from squad.daemon.configured import VALIDATED_FILE, configured_squads

        # Each squad's file as the store recorded it (catalog.recorded_owners, without
        # importing the daemon's catalog and triggers for it).
        owners = {
            r.name: Path(r.source) for r in (store.list_squads() if store else ()) if r.source
        }
        configured, failed = configured_squads(
            folder.resolve(), owners, cache=settings.home / VALIDATED_FILE
        )
    names = [str(s["name"]) for s in (state or {}).get("squads", [])] if up else []
    names += [str(s["name"]) for s in configured]
    view = store_view(app, names, now=now)
    report = _report(daemon, state, view, configured=configured, failed=failed)
    if settings.clustered:
        return report.model_copy(update={"cluster": _cluster(app, now)})
    return report


def publish(home: Path, payload: Mapping[str, Any], *, previous: str | None = None) -> str:
    """Write what the daemon knows for :func:`published_status` (atomically); when it is
    ``previous`` (the text written last), only move the file's time: the beat. Returns the
    text."""
    path = home / PUBLISHED_FILE
    text = json.dumps(payload, sort_keys=True, default=str)
    if text == previous:
        try:
            os.utime(path)
            return text
        except FileNotFoundError:
            pass  # removed under us: write it again
    from squad.fsutil import atomic_write

    atomic_write(path, text.encode(), durable=False)  # the next beat rewrites it anyway
    path.chmod(0o600)  # run errors and goals: the owner's only
    return text


def published_status(
    home: Path, *, squads_dir: Path | None = None, now: datetime | None = None
) -> Status | None:
    """The status from what the running daemon published, without opening the store; None
    when that cannot be trusted (no daemon holds the home, the file is another process's or
    unreadable, the beat is stale, the daemon is not running yet, or ``squads_dir`` is not
    its folder): :func:`collect_status` then says why."""
    found = read_published(home, squads_dir)
    if found is None:
        return None
    state, view, configs = found.state, found.store, found.configs
    # The file's time and this clock are the same machine's wall clock, read after the stat.
    daemon = daemon_status(now=now or datetime.now(UTC), lock=found.lock, heartbeat=found)
    if daemon.state != "up":
        return None
    daemon = daemon.model_copy(
        update={"configs": str(configs), "configs_missing": bool(state.get("configs_missing"))}
    )
    try:
        return _report(daemon, state, view)
    except (KeyError, TypeError, ValueError):
        return None


def _paused_histories(app: App) -> list[dict[str, Any]]:
    """Workspaces whose history cannot be written (corrupt or foreign ``.git``): their runs
    go on uncommitted until a person fixes it. A workspace found writable before and not
    changed since is not opened again (:mod:`squad.daemon.history_states`)."""
    from squad.daemon.history_states import HISTORIES_FILE, paused_histories
    from squad.workspace.refs import workspace_refs

    settings = app.settings
    if not settings.history.enabled:
        return []  # history is off: nothing is paused
    return paused_histories(
        [(ref.squad, ref.path) for ref in workspace_refs(settings.workspaces)],
        lambda path, squad: app.history(path, squad).state(),
        cache=settings.home / HISTORIES_FILE,
    )


def _cluster(app: App, now: datetime) -> ClusterView | ClusterUnreachable:
    """The cluster's nodes, queue and jobs; what went wrong instead when the queue is out of
    reach (the rest of the status still shows)."""
    from squad.errors import SquadError
    from squad.jobqueue.view import cluster_view

    try:
        return cluster_view(app.cluster, app.store, now=now)
    except SquadError as exc:
        return ClusterUnreachable(error=str(exc))
