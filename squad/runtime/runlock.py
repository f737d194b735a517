"""At most one run of a squad at a time in a home, whichever front end starts it; and the truth
about runs whose process died.

A run holds ``<locks>/<squad>.lock`` (``Settings.locks_dir``: ``$SQUAD_HOME/locks``, or the
shared workspaces' ``.squad-locks`` in a cluster) (:mod:`squad.flock`) from before its record
exists until it ends or pauses for an approval: ``squad run``, ``squad resume``, ``squad
approve`` and the daemon all go through :class:`~squad.runtime.runner.SquadRunner`,
so a second start is refused with the run id it collides with (:class:`~squad.errors.SquadBusy`).
The kernel drops the lock when its process dies however it dies, so the lock also tells a
live run from a dead one: a run recorded ``running`` whose lock nobody holds lost its process
(``kill -9``, a crash, a thread that died). :func:`settle_dead_runs` records such runs
``interrupted`` (resumable: their checkpoints are intact) and says why. Runs of a cluster
job are not the home's to judge: the worker running them may be on another machine, and the
cluster's stalled-job sweep (:mod:`squad.cluster`) retries them when it is lost.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from squad import flock
from squad.clock import Clock, utc_now
from squad.errors import SquadBusy
from squad.paths import run_lock

if TYPE_CHECKING:
    from squad.store import Store
    from squad.store.records import RunRecord

__all__ = ["Holder", "RunSlot", "holder", "lock_path", "run_slot", "settle_dead_runs"]


@dataclass(frozen=True)
class Holder:
    """Who holds a squad's run lock: its run (None while the run's record is being made)."""

    run_id: str | None
    pid: int | None
    since: str | None


def lock_path(locks: Path, squad: str) -> Path:
    """``squad``'s run lock in the folder of cross-process locks (``Settings.locks_dir``)."""
    return run_lock(locks, squad)


def _holder(note: str) -> Holder:
    try:
        data: Any = json.loads(note) if note else {}
    except ValueError:
        data = {}
    if not isinstance(data, dict):
        data = {}
    run_id, pid, since = data.get("run_id"), data.get("pid"), data.get("since")
    return Holder(
        run_id if isinstance(run_id, str) else None,
        pid if isinstance(pid, int) else None,
        since if isinstance(since, str) else None,
    )


def holder(locks: Path, squad: str) -> Holder | None:
    """The live holder of ``squad``'s run lock, or None when no process holds it."""
    found = flock.probe(lock_path(locks, squad))
    return _holder(found.note) if found.held else None


class RunSlot:
    """The held run lock of one squad; :meth:`claim` names the run once its record exists."""

    def __init__(self, held: flock.HeldLock, clock: Clock) -> None:
        self._held = held
        self._clock = clock

    def claim(self, run_id: str) -> None:
        self._held.rewrite(_note(run_id, self._clock))


def _note(run_id: str | None, clock: Clock) -> str:
    return json.dumps({"run_id": run_id, "pid": os.getpid(), "since": clock().isoformat()})


@contextmanager
def run_slot(
    locks: Path, squad: str, run_id: str | None = None, *, clock: Clock = utc_now
) -> Iterator[RunSlot]:
    """Hold ``squad``'s run lock for the block; :class:`SquadBusy` when another run has it."""
    try:
        held = flock.acquire(lock_path(locks, squad), _note(run_id, clock))
    except flock.LockBusy as busy:
        other = _holder(busy.note)
        which = f"run {other.run_id}" if other.run_id else "a run that is starting"
        pid = f", pid {other.pid}" if other.pid is not None else ""
        since = f", since {other.since}" if other.since else ""
        raise SquadBusy(
            f"squad {squad!r} is already running ({which}{pid}{since}); wait for it to end, "
            "or stop it (Ctrl-C where it runs, `squad stop` for the daemon)",
            squad=squad,
            run_id=other.run_id,
        ) from None
    try:
        yield RunSlot(held, clock)
    finally:
        held.release()


def settle_dead_runs(
    store: Store, locks: Path, *, squad: str | None = None, holding: bool = False
) -> list[RunRecord]:
    """Record as ``interrupted`` every ``running`` run whose process is gone; returns them.

    ``holding``: the caller holds ``squad``'s run lock, so no run of it can be alive.
    """
    from squad.store.records import RunStatus

    settled = []
    for run in store.interrupted_runs(squad):
        if run.status is not RunStatus.RUNNING:
            continue
        if run.job is not None:
            continue  # a cluster job's: its worker's heartbeat says whether it is alive
        live = None if holding else holder(locks, run.squad)
        if live is not None and live.run_id in (run.id, None):
            continue  # still at it (or a run of the squad is just starting: leave it be)
        record = store.update_run(
            run.id,
            status=RunStatus.INTERRUPTED,
            error="its process ended before the run finished (killed or crashed); "
            f"`squad resume {run.id}` continues it from its last checkpoint",
            only_if=RunStatus.RUNNING,
        )
        if record.status is RunStatus.INTERRUPTED:
            settled.append(record)
    return settled
