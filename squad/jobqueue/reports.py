"""What the daemon's background jobs report (logged with ``job_end``; a cluster
maintenance job's result): one typed dict per job, their keys are the log's fields."""

from __future__ import annotations

from typing import NotRequired, TypedDict

from squad.memory.gc import GcReportDict
from squad.store.retention import ForgottenCounts

__all__ = [
    "ClusterRetentionPass",
    "ConsolidationReport",
    "ExtractionSweep",
    "HistoriesPacked",
    "JobQueued",
    "JobReport",
    "MemoryFold",
    "PlansPruned",
    "RetentionCounts",
    "RetentionPass",
]


class MemoryFold(TypedDict):
    """One agent's memory.md folded by consolidation, or why it could not be."""

    squad: str
    agent: str
    error: NotRequired[str]
    moved: NotRequired[int]
    summaries: NotRequired[int]
    daily: NotRequired[str]


class ConsolidationReport(GcReportDict):
    """Memory gc's report with the folds of the memory files grown past 80% of their cap."""

    memory_folds: list[MemoryFold]


class RetentionCounts(ForgottenCounts):
    """:meth:`squad.daemon.jobs.RetentionReport.to_dict`."""

    logs_deleted: int
    log_bytes_freed: int
    checkpoint_runs_deleted: int
    orphan_checkpoint_runs_deleted: int
    unread_messages_skipped: int
    store_bytes_freed: int
    logs: list[str]
    checkpoints: list[str]
    orphans: list[str]


class PlansPruned(TypedDict):
    plans_deleted: int


class HistoriesPacked(TypedDict):
    histories_packed: list[str]
    """The squads whose history was packed."""
    history_bytes_freed: int


class RetentionPass(RetentionCounts, PlansPruned, HistoriesPacked):
    """A whole retention pass: the store and logs, old plans, packed histories."""


class ClusterRetentionPass(RetentionPass):
    """A cluster's retention pass, which forgets long-gone nodes too."""

    nodes_forgotten: int


class ExtractionSweep(TypedDict):
    checked: list[str]
    """``squad/agent`` of each agent a pass was queued for."""
    unread_messages_skipped: NotRequired[int]


class JobQueued(TypedDict):
    """A cluster daemon's background job: queued for whichever node takes it."""

    queued: str


JobReport = ConsolidationReport | RetentionPass | ClusterRetentionPass | ExtractionSweep
"""What one background job did."""
