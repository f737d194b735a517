"""The daemon's background jobs: retention (old runs, run logs, plans and checkpoints) and
memory consolidation.

Retention deletes in a workspace only run logs, ``<workspace>/logs/run-<id>.jsonl``, and old
plans, ``plans/plan-<n>.md`` (the newest is kept; every plan stays in the workspace's history,
and the deletion is committed as ``retention``'s). In the store it forgets runs that ended
more than ``runs_days`` ago (:mod:`squad.store.retention`), and through
:mod:`squad.checkpoints` it deletes the LangGraph checkpoints of runs that ended long ago or
that the store no longer has (their squad was deleted) and were last written long ago. Memory
files (``memory.md``, daily logs, boot files, ``logs/memory-audit.jsonl``) never match and
are never touched. What to delete is decided by pure functions over plain data; the edges only
list and remove.

The extraction sweep queues a look at every loaded agent with unread messages.

Consolidation runs memory gc, and folds each agent's ``memory.md`` grown past 80% of its cap:
its oldest Insights move whole to the agent's daily log, summarised in place
(:mod:`squad.memory.fold`), committed as the ``consolidation`` actor's change.
"""

from __future__ import annotations

import re
import stat
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from squad.jobqueue.reports import (
    ConsolidationReport,
    ExtractionSweep,
    HistoriesPacked,
    MemoryFold,
    PlansPruned,
    RetentionCounts,
    RetentionPass,
)
from squad.store.retention import Forgotten, ForgottenCounts
from squad.workspace.plans import PLANS_FOLDER, plan_number

if TYPE_CHECKING:
    from squad.app import App
    from squad.checkpoints import Checkpoints
    from squad.daemon.catalog import LoadedSquad
    from squad.memory.agent import AgentContext
    from squad.memory.fold_summary import ModelFoldSummariser
    from squad.model.types import Message, ModelReply
    from squad.settings import RetentionSettings
    from squad.spec.models import SquadSpec
    from squad.store import Store

__all__ = [
    "LogFile",
    "RetentionReport",
    "find_run_logs",
    "fold_memory_files",
    "logs_to_prune",
    "orphans_to_prune",
    "plans_to_prune",
    "prune_plans",
    "retain_loaded",
    "run_consolidation",
    "run_retention",
    "sweep_extraction",
    "unread_agents",
]

_RUN_LOG = re.compile(r"^run-([A-Za-z0-9][A-Za-z0-9_.-]*)\.jsonl$")
"""The run logs retention deletes in a workspace (see runtime/runlog.py)."""


@dataclass(frozen=True)
class LogFile:
    """A run log as retention sees it."""

    path: Path
    run_id: str
    modified: datetime
    size: int


def logs_to_prune(
    logs: Iterable[LogFile],
    *,
    now: datetime,
    max_age: timedelta,
    max_bytes: int,
    keep: Collection[str] = (),
) -> list[LogFile]:
    """Which of one workspace's run logs to delete, oldest first.

    Logs older than ``max_age`` go; then, while the logs left add up to more than
    ``max_bytes``, the oldest of them. Logs of runs in ``keep`` (running, paused,
    interrupted) always stay, though their size counts.
    """
    ordered = sorted(logs, key=lambda log: (log.modified, log.run_id))
    doomed = [log for log in ordered if log.run_id not in keep and now - log.modified > max_age]
    gone = {log.path for log in doomed}
    left = [log for log in ordered if log.path not in gone]
    total = sum(log.size for log in left)
    for log in left:
        if total <= max_bytes:
            break
        if log.run_id in keep:
            continue
        doomed.append(log)
        total -= log.size
    return doomed


def find_run_logs(workspace: Path) -> list[LogFile]:
    """The run logs of a workspace: regular files named ``run-<id>.jsonl`` in ``logs/``."""
    folder = workspace / "logs"
    found = []
    try:
        entries = list(folder.iterdir())
    except (FileNotFoundError, NotADirectoryError):
        return []
    for path in entries:
        match = _RUN_LOG.match(path.name)
        if match is None:
            continue
        try:
            info = path.lstat()
        except FileNotFoundError:
            continue
        if not stat.S_ISREG(info.st_mode):  # lstat: a symbolic link is not followed
            continue
        modified = datetime.fromtimestamp(info.st_mtime, UTC)
        found.append(LogFile(path, match.group(1), modified, info.st_size))
    return found


def orphans_to_prune(
    last_written: Mapping[str, datetime], known: Collection[str], *, before: datetime
) -> list[str]:
    """Threads whose run the store no longer has (its squad was deleted) and whose last
    checkpoint is older than ``before``; the age guard spares a home whose database URL was
    switched for a while. Sorted."""
    return sorted(t for t, at in last_written.items() if t not in known and at < before)


@dataclass(frozen=True)
class RetentionReport:
    """What one retention pass deleted."""

    logs: list[str] = field(default_factory=list)
    log_bytes: int = 0
    checkpoints: list[str] = field(default_factory=list)
    """Run ids whose checkpoints were deleted."""
    orphans: list[str] = field(default_factory=list)
    """Of those, the runs the store no longer had."""
    forgotten: ForgottenCounts = field(default_factory=lambda: Forgotten().to_dict())
    """What the store forgot."""
    skipped_messages: int = 0
    """Messages of agents whose extractor is off that stopped waiting for it."""
    store_bytes_freed: int = 0

    def to_dict(self) -> RetentionCounts:
        return {
            "logs_deleted": len(self.logs),
            "log_bytes_freed": self.log_bytes,
            "checkpoint_runs_deleted": len(self.checkpoints),
            "orphan_checkpoint_runs_deleted": len(self.orphans),
            **self.forgotten,
            "unread_messages_skipped": self.skipped_messages,
            "store_bytes_freed": self.store_bytes_freed,
            "logs": self.logs,
            "checkpoints": self.checkpoints[:100],
            "orphans": self.orphans[:100],
        }


def run_retention(
    store: Store,
    checkpoints: Checkpoints,
    workspaces: Iterable[Path],
    *,
    now: datetime,
    policy: RetentionSettings,
    keep_runs: Collection[str] = (),
    unread_agents: Collection[tuple[str, str]] = (),
) -> RetentionReport:
    """Prune old run logs in ``workspaces``, forget old runs in the store, delete old runs'
    checkpoints and give the store's freed space back.

    ``keep_runs`` are runs going on now; runs that may still resume are kept as well.
    ``unread_agents`` are ``(squad, agent)`` pairs whose extractor is off: their messages stop
    waiting for it, and those of forgotten runs go.
    """
    unfinished = {run.id for run in store.interrupted_runs()}
    keep = set(keep_runs) | unfinished
    logs: list[str] = []
    freed = 0
    for workspace in workspaces:
        for log in logs_to_prune(
            find_run_logs(workspace),
            now=now,
            max_age=timedelta(days=policy.logs_days),
            max_bytes=policy.logs_max_mb * 1024 * 1024,
            keep=keep,
        ):
            try:
                log.path.unlink()
            except FileNotFoundError:
                continue
            logs.append(str(log.path))
            freed += log.size
    skipped = store.retention.skip_unread(unread_agents)
    forgotten = store.retention.forget_runs(
        now - timedelta(days=policy.runs_days), keep=keep, unread_agents=unread_agents
    )
    cutoff = now - timedelta(days=policy.checkpoints_days)
    threads = checkpoints.threads()
    spared = store.known_runs(threads) | keep
    written = checkpoints.last_written(t for t in threads if t not in spared)
    orphans = orphans_to_prune(written, spared, before=cutoff)
    ended = {run.id for run in store.ended_runs(before=cutoff)} - keep
    deleted = checkpoints.delete(ended | set(orphans) | (set(forgotten.runs) & set(threads)))
    space = store.retention.give_back_space() + (checkpoints.compact() if deleted else 0)
    return RetentionReport(logs, freed, deleted, orphans, forgotten.to_dict(), skipped, space)


def retain_loaded(
    app: App,
    loaded: Mapping[str, LoadedSquad],
    busy: Collection[str],
    *,
    now: datetime,
    policy: RetentionSettings,
) -> RetentionPass:
    """The daemon's retention pass over its loaded squads (``busy``: those running now, whose
    runs and plans stay): :func:`run_retention`, :func:`prune_plans`, :func:`pack_histories`."""
    store = app.store
    workspaces = sorted({squad.workspace for squad in loaded.values()})
    running = {run.id for squad in busy for run in store.list_runs(squad, limit=1)}
    report = run_retention(
        store,
        app.checkpoints,
        workspaces,
        now=now,
        keep_runs=running,
        policy=policy,
        unread_agents=unread_agents((s.spec, s.workspace) for s in loaded.values()),
    )
    idle = [(name, squad.workspace) for name, squad in loaded.items() if name not in busy]
    plans = prune_plans(app, idle, before=now - timedelta(days=policy.runs_days))
    return {**report.to_dict(), **plans, **pack_histories(app, idle)}


def sweep_extraction(app: App, loaded: Mapping[str, LoadedSquad]) -> ExtractionSweep:
    """Queue a look at every loaded agent with unread messages (see
    :meth:`~squad.extraction.background.BackgroundExtractor.check`); the messages of agents
    whose extractor is off stop waiting for it."""
    from squad.memory.agent import AgentContext

    checked, off = [], []
    for squad, agent, _ in app.store.conversation.extraction_backlog():
        found = loaded.get(squad)
        if found is None or agent not in {a.id for a in found.spec.agents}:
            continue  # a squad no file defines any more: nothing to extract for
        ctx = AgentContext.of(found.spec, agent, found.workspace)
        if not ctx.extraction_enabled:
            off.append((squad, agent))  # nothing waits for a pass that never comes
            continue
        app.extraction.check(ctx)
        checked.append(f"{squad}/{agent}")
    skipped = app.store.retention.skip_unread(off) if off else 0
    return {"checked": checked, "unread_messages_skipped": skipped}


def unread_agents(squads: Iterable[tuple[SquadSpec, Path]]) -> set[tuple[str, str]]:
    """``(squad, agent)`` of each agent whose extractor is off: nothing reads its messages."""
    from squad.memory.agent import AgentContext

    return {
        (spec.name, agent.id)
        for spec, workspace in squads
        for agent in spec.agents
        if not AgentContext.of(spec, agent.id, workspace).extraction_enabled
    }


def plans_to_prune(plans: Mapping[Path, datetime], *, before: datetime) -> list[Path]:
    """Plans last written before ``before``, lowest number first; never the newest plan."""
    numbered = sorted(plans, key=lambda path: plan_number(path.name) or 0)
    return [p for p in numbered[:-1] if plans[p] < before]


def prune_plans(
    app: App, workspaces: Iterable[tuple[str, Path]], *, before: datetime
) -> PlansPruned:
    """Delete the old plans of idle ``(squad, workspace)``s and commit each squad's deletions
    to its history as ``retention``'s."""
    deleted = 0
    for squad, workspace in workspaces:
        folder = workspace / PLANS_FOLDER
        try:
            found = {
                entry: datetime.fromtimestamp(entry.stat().st_mtime, tz=UTC)
                for entry in folder.iterdir()
                if plan_number(entry.name) is not None and entry.is_file()
            }
        except (FileNotFoundError, NotADirectoryError):
            continue
        gone = []
        for plan in plans_to_prune(found, before=before):
            try:
                plan.unlink()
            except FileNotFoundError:
                continue
            gone.append(plan.relative_to(workspace).as_posix())
        if gone:
            deleted += len(gone)
            app.history(workspace, squad).record_paths(
                "retention", f"retention: {len(gone)} plans of forgotten runs", gone
            )
    return {"plans_deleted": deleted}


def pack_histories(app: App, workspaces: Iterable[tuple[str, Path]]) -> HistoriesPacked:
    """Pack each workspace's history (delta-compressed, nothing pruned), with retention:
    a workspace with 10,000 runs keeps a history a few MB large."""
    packed: list[str] = []
    before = after = 0
    for squad, path in workspaces:
        report = app.history(path, squad).pack()
        if report is not None and report.objects:
            packed.append(squad)
            before += report.bytes_before
            after += report.bytes_after
    return {"histories_packed": packed, "history_bytes_freed": max(0, before - after)}


def run_consolidation(app: App, *, now: datetime) -> ConsolidationReport:
    """The memory consolidation pass: memory gc (:func:`squad.memory.gc.run_gc`) and the fold
    of every agent's memory.md grown past 80% of its cap (:func:`fold_memory_files`), as
    the gc report's dict with ``memory_folds`` added."""
    from squad.memory.gc import run_gc

    workspaces = app.squads.workspace_paths()
    report = run_gc(app.store, workspaces, now=now, dry_run=False)
    return {**report.to_dict(), "memory_folds": fold_memory_files(app, workspaces)}


def fold_memory_files(app: App, workspaces: Mapping[str, Path]) -> list[MemoryFold]:
    """Fold the oldest Insights of each agent's memory.md that holds more than 80% of its
    cap (:meth:`squad.memory.service.MemoryService.consolidate`): one entry per fold, or per
    file that could not be folded (with the reason; the pass goes on). An agent on a real
    model gets its summary lines from that model (:func:`fold_summariser`)."""
    from squad.errors import MemoryError_, SquadError
    from squad.memory.agent import AgentContext

    folds: list[MemoryFold] = []
    for squad, workspace in sorted(workspaces.items()):
        try:
            spec = app.squads.workspaces.read_manifest(workspace).definition
        except SquadError:
            continue  # an unreadable manifest: `squad ws health` reports it
        for agent in spec.agents:
            ctx = AgentContext.of(spec, agent.id, workspace)
            try:
                folded = app.memory.consolidate(ctx, summarise=fold_summariser(app, ctx))
            except MemoryError_ as exc:
                folds.append({"squad": squad, "agent": agent.id, "error": str(exc)})
                continue
            if folded is not None:
                folds.append(
                    {
                        "squad": squad,
                        "agent": agent.id,
                        "moved": folded.moved,
                        "summaries": folded.summaries,
                        "daily": folded.daily,
                    }
                )
    return folds


def fold_summariser(app: App, ctx: AgentContext) -> ModelFoldSummariser | None:
    """The agent's own model as the writer of its fold's summary lines; None on the built-in
    offline model (the fold stays extractive). The call is charged to the squad's spend and
    made only when what it may cost fits ``limits.max_cost_usd``, as an extraction pass."""
    from squad.memory.fold_summary import ModelFoldSummariser
    from squad.model.offline import is_offline

    spec = ctx.agent.model or ctx.squad.model
    if is_offline(spec.name):
        return None
    model = app.model_factory(spec, lambda event: None)
    spend = app.store.spend

    def allowed(messages: Sequence[Message]) -> bool:
        estimate = model.reserve_usd(messages, ())
        spent = spend.of_squad(ctx.squad.name).cost_usd
        return estimate <= 0 or spent + estimate <= ctx.squad.limits.max_cost_usd

    def charge(reply: ModelReply) -> None:
        spend.record(ctx.squad.name, agent=ctx.agent.id, **reply.spend())

    return ModelFoldSummariser(model, on_reply=charge, allowed=allowed)
