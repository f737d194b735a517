"""What squad's jobs carry: a run job's arguments (stored in the queue's table), what each
job ends with (procrastinate keeps it as the job's result), and what a node's heartbeat
publishes of the jobs it runs."""

from __future__ import annotations

from typing import NotRequired, TypedDict

__all__ = ["ExtractOutcome", "NodeRunState", "NodeState", "RunJobArgs", "RunOutcome"]


class RunJobArgs(TypedDict):
    """A ``squad.run`` job's arguments: a new run, or one to resume or answer."""

    squad: str
    trigger: str
    run_id: NotRequired[str]
    """The run to resume (a recovery) or answer (a decision); none for a new run."""
    goal: NotRequired[str]
    decision: NotRequired[list[str | bool]]
    """An approval's answer: ``[task, approved, reason]``."""
    recovery: NotRequired[int]
    """How many times a run whose job ended before it did has been resumed."""
    timestamp: NotRequired[int]
    """A scheduled fire's time (procrastinate's periodic dedup)."""


class RunOutcome(TypedDict, total=False):
    """How a run job ended: the run and its status, or why no run went on."""

    run_id: str
    status: str
    dropped: str
    """The squad is no longer registered."""
    skipped: str
    """A scheduled fire while the squad has a run waiting for approval (its id)."""
    fenced: str
    """Another node claimed the run (its id), at ``epoch``."""
    epoch: int
    waiting: str
    """The squad's run lock is held elsewhere: the job went back to the queue."""
    error: str


class ExtractOutcome(TypedDict, total=False):
    """How an extraction job ended: its passes, or why it did not run."""

    passes: int
    skipped: str


class NodeRunState(TypedDict):
    """A run a node works on, as its heartbeat publishes it (``squad cluster nodes``)."""

    job: int
    squad: str
    run_id: str | None
    attempt: int
    since: str


class NodeState(TypedDict):
    """What a node's heartbeat publishes (its row's ``state``, the daemon's ``cluster``)."""

    node: str
    role: str
    concurrency: int
    worker_id: int | None
    running: list[NodeRunState]
    ended: int
    failures: int
    worker_restarts: int
    recovered: int
    fenced: bool
