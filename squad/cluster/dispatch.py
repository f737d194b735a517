"""The scheduling daemon's side of a cluster: requests for runs become jobs.

It stands where :class:`~squad.daemon.runs.RunDispatcher` stands on one machine, with the
same few operations the daemon uses, but a run asked for is deferred to the cluster's queue
(any node's worker may take it) instead of a queue in this process. A scheduled fire is
deferred with procrastinate's periodic dedup, keyed on the squad and the fire time, so two
daemons that schedule one squad queue each fire once: the second is a hot standby. The
daemon's own node works too (:class:`~squad.cluster.node.ClusterNode`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from squad.daemon.runqueue import RunRequest
from squad.daemon.runs import SCHEDULED, waiting_approval
from squad.daemon.triggers import build_trigger, missed_fire

if TYPE_CHECKING:
    from squad.cluster.node import ClusterNode
    from squad.daemon.catalog import LoadedSquad
    from squad.daemon.eventlog import DaemonLog
    from squad.jobqueue.payloads import NodeState, RunJobArgs

__all__ = ["ClusterDispatcher", "fire_time"]


def fire_time(schedule: Any, now: datetime, grace_s: int) -> datetime | None:
    """The fire of ``schedule`` that is due at ``now``: its latest fire time not after
    ``now``, within ``grace_s`` (every daemon computes the same one)."""
    trigger = build_trigger(schedule, anchored=True)
    if trigger is None:
        return None
    return missed_fire(trigger, now + timedelta(seconds=1), timedelta(seconds=grace_s + 1))


class ClusterDispatcher:
    """Defers the daemon's run requests as cluster jobs; thread-safe."""

    def __init__(
        self,
        node: ClusterNode,
        log: DaemonLog,
        *,
        lookup: Callable[[str], LoadedSquad | None],
        clock: Callable[[], datetime],
        misfire_grace_s: int,
    ) -> None:
        self.node = node
        self._client = node.app.cluster
        self._log = log
        self._lookup = lookup
        self._clock = clock
        self._grace = misfire_grace_s
        self._closed = threading.Event()
        self._left: list[int] = []
        """Jobs still running when the node stopped, handed back to the queue."""
        self.queue = _QueueView(self)

    @property
    def failures(self) -> int:
        return self.node.work.failures

    # -- asking for runs -------------------------------------------------------------------

    def submit(self, request: RunRequest, *, first: bool = False) -> bool:
        """Defer a run job; False when it was coalesced into a new run of the squad already
        waiting in the queue, or the daemon is stopping."""
        if self._closed.is_set():
            return False
        new = request.run_id is None and request.decision is None
        if new and self._client.waiting_run(request.squad):
            return False
        if (
            new
            and request.trigger in SCHEDULED
            and self._skipped_waiting(request.squad, request.trigger)
        ):
            return False
        self._client.defer_run(_args(request))
        return True

    def _skipped_waiting(self, squad: str, trigger: str) -> bool:
        """True (logged ``fire_skipped_waiting_approval``) when the squad has a run waiting
        for approval: a gated squad on a schedule keeps one run waiting, not one per tick."""
        waiting = waiting_approval(self.node.app.store, squad)
        if waiting is not None:
            self._log.emit(
                "fire_skipped_waiting_approval", squad=squad, trigger=trigger, waiting=waiting
            )
        return waiting is not None

    def ask(self, request: RunRequest) -> bool:
        from squad.daemon.runs import log_asked

        return log_asked(self._log, request, self.submit(request))

    def hand_off(self, request: RunRequest) -> bool:
        """``squad run`` runs in its own process on a cluster node: a run here is a job
        any node may take, not one that starts at once."""
        return False

    def fire(self, name: str, *, at: datetime | None = None) -> bool:
        """A scheduled fire of ``name`` (now, or the missed one ``at``): one job across every
        scheduling daemon; False when another daemon queued this fire first."""
        if self._closed.is_set():
            return False
        squad = self._lookup(name)
        if squad is None:
            return False
        when = at or fire_time(squad.spec.schedule, self._clock(), self._grace)
        if when is None:
            return False
        if self._skipped_waiting(name, "schedule"):
            return False
        stamp = int(when.timestamp())
        job = self._client.defer_run(
            {"squad": name, "trigger": "schedule"}, fire=(f"squad:{name}", stamp)
        )
        if job is None:
            self._log.emit("fire_taken", squad=name, scheduled=when.isoformat())
            return False
        self._log.emit("fire_queued", squad=name, scheduled=when.isoformat(), job=job)
        return True

    def maintain(self, name: str) -> None:
        """A background job's cron time: one maintenance job across the cluster."""
        if self._closed.is_set():
            return
        stamp = int(self._clock().replace(second=0, microsecond=0).timestamp())
        job = self._client.defer_maintenance(name, stamp)
        self._log.emit("job_queued" if job is not None else "job_taken", job=name, queue_job=job)

    # -- the daemon's view -----------------------------------------------------------------

    def state(self) -> NodeState:
        return self.node.state()

    def running_since(self) -> dict[str, datetime]:
        return {
            run["squad"]: datetime.fromisoformat(run["since"]) for run in self.node.work.running()
        }

    def wait(self, grace: float, *, force: threading.Event) -> bool:
        """Stop the node: running runs stop at their next checkpoint and go back to the queue;
        True if they all did within ``grace``."""
        self._left = self.node.stop(grace, force=force)
        return not self._left

    def abandon(self) -> list[str]:
        """Runs whose jobs were handed back to the queue unfinished, by squad."""
        return [f"job {job}" for job in self._left]


class _QueueView:
    """The part of :class:`~squad.daemon.runqueue.RunQueue` the daemon reads."""

    def __init__(self, owner: ClusterDispatcher) -> None:
        self._owner = owner

    def start(self) -> None:
        self._owner.node.start()

    def snapshot(self) -> tuple[list[RunRequest], list[RunRequest]]:
        running = [
            RunRequest(run["squad"], "cluster", run["run_id"])
            for run in self._owner.node.work.running()
        ]
        return running, []

    def idle(self) -> bool:
        return self._owner.node.work.idle()

    def close(self) -> list[RunRequest]:
        self._owner._closed.set()
        return []

    def resize(self, workers: int) -> None:
        """A new ``daemon.max_concurrent_runs`` applies when the node starts again."""


def _args(request: RunRequest) -> RunJobArgs:
    args: RunJobArgs = {"squad": request.squad, "trigger": request.trigger}
    if request.run_id is not None:
        args["run_id"] = request.run_id
    if request.goal is not None:
        args["goal"] = request.goal
    if request.decision is not None:
        args["decision"] = list(request.decision)
    return args
