"""The cluster as ``/api/v1/cluster``, the overview and ``squad status`` show it: nodes with
their last heartbeat, the queue's depth, and the jobs running, on which node, or stalled."""

from __future__ import annotations

from typing import Literal

from squad.views._base import View

__all__ = ["ClusterJob", "ClusterNode", "ClusterQueue", "ClusterUnreachable", "ClusterView"]


class NodeRun(View):
    """A run a node says it works on (its heartbeat's ``running``)."""

    job: int
    squad: str
    run_id: str | None
    attempt: int
    since: str


class ClusterNode(View):
    name: str
    host: str
    pid: int
    role: str
    """``daemon`` (schedules and works) or ``worker`` (only works)."""
    state: Literal["up", "stopped", "lost"]
    """``lost``: no heartbeat for ``stall_timeout_s``; ``stopped``: it said it stopped."""
    beat_age_s: float
    started_at: str
    worker_id: int | None
    concurrency: int | None
    running: list[NodeRun]
    """Empty unless the node is up."""


class ClusterQueue(View):
    waiting: int
    by_queue: dict[str, int]


class ClusterJob(View):
    job: int
    task: str
    what: str | None
    """The squad (a run), ``squad/agent`` (an extraction pass) or the job's name."""
    run_id: str | None
    attempts: int
    node: str | None
    """The node whose worker runs it (None when no node has that worker id)."""
    worker_id: int | None
    stalled: bool


class ClusterView(View):
    stall_timeout_s: float
    nodes: list[ClusterNode]
    queue: ClusterQueue
    running: list[ClusterJob]
    stalled: list[ClusterJob]
    """Running jobs whose node stopped beating; the next sweep puts them back in the queue."""


class ClusterUnreachable(View):
    error: str
    """Why the cluster's queue could not be read (the rest of the status still shows)."""
