"""The daemon's hold on its home: the lock (first to start, last to stop), the heartbeat
(the store's row and the published status of ``squad status``), and giving freed memory back.
"""

from __future__ import annotations

import contextlib
import json
import socket
import time
from typing import TYPE_CHECKING, Any

from squad.daemon.context import iso
from squad.daemon.lock import DaemonLock
from squad.daemon.malloc import give_back
from squad.daemon.status import PUBLISHED_FILE, publish, store_view
from squad.errors import SquadError

if TYPE_CHECKING:
    from squad.daemon.context import DaemonContext

__all__ = ["GIVE_BACK_S", "STORE_VIEW_S", "FreedMemory", "Heartbeat", "HomeLock"]

GIVE_BACK_S = 60.0
"""How often the daemon returns freed memory to the system (a few milliseconds each time)."""
STORE_VIEW_S = 15.0
"""Seconds at most between two reads of the store's part of the published status."""


class HomeLock:
    """One daemon per home (:mod:`squad.daemon.lock`); its ``start`` and ``stop`` events."""

    name = "lock"

    def __init__(self) -> None:
        self._lock: DaemonLock | None = None

    def start(self, ctx: DaemonContext) -> None:
        self._lock = DaemonLock(ctx.settings.home)
        self._lock.acquire(ctx.pid)
        ctx.log.emit(
            "start",
            pid=ctx.pid,
            home=str(ctx.settings.home),
            configs=str(ctx.squads_dir),
            max_concurrent_runs=ctx.config.max_concurrent_runs,
            once=ctx.once or None,
            took_over_from=self._lock.previous_pid,
        )

    def stop(self, ctx: DaemonContext) -> None:
        try:
            ctx.log.emit(
                "stop",
                reason=ctx.stop_reason,
                interrupted=ctx.interrupted or None,
                forced=ctx.force.is_set() or None,
            )
        finally:
            if self._lock is not None:
                self._lock.release()


class Heartbeat:
    """Beats at start, at every tick and at stop; a clean stop marks the row stopped and
    removes the published status."""

    name = "heartbeat"

    def __init__(self) -> None:
        self._host = socket.gethostname()
        self._started_at: Any = None
        self._last_state: str | None = None
        self._view: dict[str, Any] | None = None
        """The store's part of the status as last read (:meth:`_publish`)."""
        self._store_view_due = 0.0
        self._published: str | None = None
        """The text of the status file as last written."""

    def start(self, ctx: DaemonContext) -> None:
        self._started_at = ctx.app.clock()
        self._beat(ctx)

    def tick(self, ctx: DaemonContext, *, woken: bool) -> None:
        # Woken by a change (a run, a reload, a fire): report the new state. Timed out:
        # nothing changed, so only the beat's time moves.
        self._safe_beat(ctx, changed=woken)

    def stop(self, ctx: DaemonContext) -> None:
        self._safe_beat(ctx)
        try:
            ctx.store.daemon.mark_stopped(str(ctx.settings.home), pid=ctx.pid)
        except SquadError as exc:
            ctx.log.emit("job_error", job="heartbeat", error=str(exc))
        with contextlib.suppress(OSError):
            (ctx.settings.home / PUBLISHED_FILE).unlink(missing_ok=True)

    def _beat(self, ctx: DaemonContext, *, changed: bool = True) -> None:
        home, pid, daemon = str(ctx.settings.home), ctx.pid, ctx.store.daemon
        if not changed and self._last_state and daemon.touch(home, pid=pid):
            self._publish(ctx, json.loads(self._last_state), changed=False)
            return
        state = ctx.state()
        text = json.dumps(state, sort_keys=True)
        if text == self._last_state and daemon.touch(home, pid=pid):
            self._publish(ctx, state, changed=changed)
            return
        daemon.beat(home, pid=pid, host=self._host, started_at=self._started_at, state=state)
        self._last_state = text
        self._publish(ctx, state, changed=True)

    def _publish(self, ctx: DaemonContext, state: dict[str, Any], *, changed: bool) -> None:
        """What ``squad status`` shows, in the home (:func:`~squad.daemon.status.publish`):
        the state and the store's part, read again when something changed and at least
        every :data:`STORE_VIEW_S` (runs of ``squad run`` and chats change the store too);
        otherwise only the file's time moves with the beat."""
        due = time.monotonic() >= self._store_view_due
        if state.get("phase") == "running" and (changed or due or self._view is None):
            names = [str(squad["name"]) for squad in state.get("squads", [])]
            self._store_view_due = time.monotonic() + STORE_VIEW_S
            try:
                self._view = store_view(ctx.app, names, now=ctx.app.clock(), settle=False)
            except Exception as exc:  # noqa: BLE001 - logged; the last view is published again
                error = f"status: {type(exc).__name__}: {exc}"
                ctx.log.emit("job_error", job="heartbeat", error=error)
        payload = {
            "pid": ctx.pid,
            "host": self._host,
            "started_at": iso(self._started_at),
            "state": state,
            "store": self._view,
        }
        try:
            self._published = publish(ctx.settings.home, payload, previous=self._published)
        except OSError as exc:
            ctx.log.emit("job_error", job="heartbeat", error=f"publishing the status: {exc}")

    def _safe_beat(self, ctx: DaemonContext, *, changed: bool = True) -> None:
        try:
            self._beat(ctx, changed=changed)
        except SquadError as exc:
            ctx.log.emit("job_error", job="heartbeat", error=str(exc))


class FreedMemory:
    """Once every :data:`GIVE_BACK_S`, hand the allocator's free pages back to the system
    (:func:`~squad.daemon.malloc.give_back`), so what runs freed leaves the RSS."""

    name = "freed_memory"

    def __init__(self) -> None:
        self._due = 0.0

    def start(self, ctx: DaemonContext) -> None:
        self._due = time.monotonic() + GIVE_BACK_S

    def tick(self, ctx: DaemonContext, *, woken: bool) -> None:
        now = time.monotonic()
        if now >= self._due:
            self._due = now + GIVE_BACK_S
            give_back()

    def stop(self, ctx: DaemonContext) -> None:
        """Nothing held."""
