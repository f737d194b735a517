"""The daemon's own log: ``$SQUAD_HOME/daemon.jsonl``, one JSON object per event.

Events: ``start``, ``ready``, ``stop``, ``load``/``schedule``, ``update`` (an edit that left
the timing alone), ``reschedule``, ``unschedule``, ``load_error``, ``load_warning``,
``keep_last_good``/``file_fixed`` (a squad whose file broke), ``boot_changed``, ``configs_missing``,
``configs_restored``, ``watch_restored``, ``reload`` (SIGHUP), ``run_start``, ``run_end``,
``run_error``, ``run_skipped`` (a live ``squad run`` has the squad), ``run_settled`` (a run
whose process died), ``resume_skipped``, ``job_start``, ``job_end``, ``job_error``... Each
line is written with one
``write`` on an ``O_APPEND`` descriptor, so readers never see half a line, and string fields
pass through secret redaction like run logs.

A daemon runs for weeks, so its log is rotated by size: past ``max_bytes`` the file becomes
``daemon.jsonl.1`` (the older ones shift to ``.2``, ``.3``...; the one past ``keep`` goes) and
the next event starts a new file.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from squad.clock import Clock, utc_now
from squad.eventlines import encode_event, open_for_append, read_events
from squad.text.secrets import redact_fields

__all__ = ["DAEMON_LOG", "DaemonLog", "read_daemon_log"]

DAEMON_LOG = "daemon.jsonl"


class DaemonLog:
    """Appends the daemon's events; ``echo`` also receives each one (the terminal)."""

    def __init__(
        self,
        path: Path,
        *,
        clock: Clock = utc_now,
        echo: Callable[[dict[str, Any]], None] | None = None,
        max_bytes: int = 20 * 1024 * 1024,
        keep: int = 3,
    ) -> None:
        if max_bytes < 1 or keep < 1:
            raise ValueError(f"max_bytes and keep must be positive, got {max_bytes}, {keep}")
        self.path = path
        self._clock = clock
        self._echo = echo
        self._max_bytes = max_bytes
        self._keep = keep
        self._lock = threading.Lock()

    def emit(self, event: str, **fields: Any) -> dict[str, Any]:
        record: dict[str, Any] = {"time": self._clock().isoformat(), "event": event}
        record.update(redact_fields({k: v for k, v in fields.items() if v is not None}))
        line = encode_event(record)
        with self._lock:
            fd = open_for_append(self.path)
            try:
                os.write(fd, line)
                full = os.fstat(fd).st_size >= self._max_bytes
            finally:
                os.close(fd)
            if full:
                self._rotate()
            if self._echo is not None:
                self._echo(record)
        return record

    def set_limits(self, *, max_bytes: int, keep: int) -> None:
        """Rotate at ``max_bytes`` and keep ``keep`` old files from the next event on."""
        if max_bytes < 1 or keep < 1:
            raise ValueError(f"max_bytes and keep must be positive, got {max_bytes}, {keep}")
        with self._lock:
            self._max_bytes, self._keep = max_bytes, keep

    def rotated(self, generation: int) -> Path:
        """The path of the ``generation``-th older log (1 is the newest rotated one)."""
        return self.path.with_name(f"{self.path.name}.{generation}")

    def _rotate(self) -> None:
        self.rotated(self._keep).unlink(missing_ok=True)
        for generation in range(self._keep - 1, 0, -1):
            with contextlib.suppress(FileNotFoundError):
                self.rotated(generation).replace(self.rotated(generation + 1))
        self.path.replace(self.rotated(1))


def read_daemon_log(path: Path) -> list[dict[str, Any]]:
    """Every complete event of a daemon log (none when it does not exist)."""
    return read_events(path, missing_ok=True)
