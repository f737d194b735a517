"""Run logs: ``logs/run-<run-id>.jsonl`` in the workspace, one JSON object per event.

Events are appended with one ``write`` on an ``O_APPEND`` descriptor, opened at the first
event and kept until :meth:`RunLog.close`, so a reader following the file never sees half a
line and a killed process loses nothing it wrote (the page cache outlives it). Run boundaries
are also fsynced, for OS crashes. String fields pass through secret redaction: a tool argument
carrying a key never lands in a log, nor one repeating a value found earlier in the run
(``known``).
"""

from __future__ import annotations

import errno
import os
import threading
import time
from collections.abc import Callable, Collection, Iterator
from pathlib import Path
from typing import Any

from squad.clock import Clock, utc_now
from squad.eventlines import (
    SkippedLine,
    decode_event,
    encode_event,
    open_for_append,
    read_events,
    scan_events,
)
from squad.fsutil import read_up_to
from squad.paths import check_name, contained
from squad.text.secrets import redact_fields

__all__ = [
    "RunLog",
    "follow_events",
    "read_events",
    "read_from",
    "run_log_path",
    "scan_events",
]

_DURABLE_EVENTS = frozenset({"run_start", "run_resume", "run_end"})


def run_log_path(workspace: Path, run_id: str) -> Path:
    return contained(workspace, "logs", f"run-{check_name(run_id, what='run id')}.jsonl")


class RunLog:
    """Appends events of one run; close it (or use it as a context manager) when the run ends."""

    def __init__(
        self,
        workspace: Path,
        run_id: str,
        *,
        clock: Clock = utc_now,
        known: Collection[str] = (),
    ) -> None:
        """``known``: credential values found in the run (or chat session) so far, kept in
        memory by its owner; redacted from every event wherever they occur."""
        self.path = run_log_path(workspace, run_id)
        self.run_id = run_id
        self._clock = clock
        self._known = known
        self._fd: int | None = None
        self._open_lock = threading.Lock()

    def __enter__(self) -> RunLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._fd is not None:
            fd, self._fd = self._fd, None
            os.close(fd)

    def _descriptor(self) -> int:
        with self._open_lock:  # tasks of one run emit from several threads
            if self._fd is None:
                self._fd = open_for_append(self.path)
            return self._fd

    def emit(self, event: str, **fields: Any) -> dict[str, Any]:
        record = {"time": self._clock().isoformat(), "run_id": self.run_id, "event": event}
        record.update(redact_fields(fields, known=self._known))
        fd = self._descriptor()
        os.write(fd, encode_event(record))
        if event in _DURABLE_EVENTS:
            os.fsync(fd)
        return record


def follow_events(
    path: Path,
    *,
    stop: Callable[[], bool],
    poll_s: float = 0.2,
    sleep: Callable[[float], None] = time.sleep,
    on_skip: Callable[[SkippedLine], None] | None = None,
) -> Iterator[dict[str, Any]]:
    """Events as they are appended, until ``stop()`` is true (``squad logs --follow``).

    Read as bytes and cut at ``\\n``, so a character split across two reads stays whole; a line
    that holds no event goes to ``on_skip`` (as :func:`~squad.eventlines.scan_events` would
    skip it), and so does a torn line still pending when following stops.
    """
    offset = 0
    pending = b""
    number = 0
    while True:
        chunk = read_from(path, offset)
        offset += len(chunk)
        *complete, pending = (pending + chunk).split(b"\n")
        for raw in complete:
            number += 1
            decoded = decode_event(raw, number)
            if isinstance(decoded, SkippedLine):
                if on_skip is not None:
                    on_skip(decoded)
            elif decoded is not None:
                yield decoded
        if stop():
            if pending.strip() and on_skip is not None:
                on_skip(SkippedLine(number + 1, "torn last line (no line end yet)"))
            return
        sleep(poll_s)


def read_from(path: Path, offset: int, *, limit: int | None = None) -> bytes:
    """What the log holds past ``offset`` (up to ``limit`` bytes): nothing while it does not
    exist, nor through a link swapped in for it; ``O_NONBLOCK`` keeps a FIFO from hanging."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        return b""
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # a link: never followed
            return b""
        raise
    try:
        size = os.fstat(fd).st_size
        if size <= offset:
            return b""
        os.lseek(fd, offset, os.SEEK_SET)
        return read_up_to(fd, size - offset if limit is None else min(size - offset, limit))
    finally:
        os.close(fd)
