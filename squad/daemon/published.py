"""The file a running daemon publishes about itself in its home (``daemon-status.json``,
rewritten at every heartbeat), read and checked (:func:`read_published`) for ``squad
status`` and for where the daemon serves its API (:func:`served_at`), without building a
whole status."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from squad.daemon.lock import LockState, probe_lock

__all__ = ["PUBLISHED_FILE", "STALE_AFTER", "Published", "read_published", "served_at"]

PUBLISHED_FILE = "daemon-status.json"
"""What the running daemon publishes for ``squad status`` (in the home, beside daemon.pid)."""

STALE_AFTER = timedelta(seconds=30)
"""A heartbeat older than this (six missed beats) means the daemon is down or stuck."""


@dataclass(frozen=True)
class Published:
    """What the daemon holding a home published, read from its file and checked: its
    process holds the home's lock and is running (not starting or stopping)."""

    pid: int
    host: str
    started_at: datetime
    beat_at: datetime
    """When the file was last written (its heartbeat)."""
    lock: LockState
    state: dict[str, Any]
    store: Any
    stopped_at: None = None
    """A running daemon's file: never stopped (read as :class:`~squad.daemon.status.Beat`)."""

    @property
    def configs(self) -> Path:
        """The squads folder the daemon runs."""
        return Path(str(self.state.get("configs")))


def read_published(home: Path, squads_dir: Path | None = None) -> Published | None:
    """What the daemon holding ``home`` published; None when no daemon holds it, the file
    is another process's, unreadable or torn, the daemon is not running yet, or
    ``squads_dir`` is not its folder. How old the beat is, the caller judges."""
    lock = probe_lock(home)
    if not lock.held or lock.pid is None:
        return None
    path = home / PUBLISHED_FILE
    try:
        info = path.stat()
        data = json.loads(path.read_text(encoding="utf-8"))
        found = Published(
            pid=int(data["pid"]),
            host=str(data["host"]),
            started_at=datetime.fromisoformat(str(data["started_at"])),
            beat_at=datetime.fromtimestamp(info.st_mtime, UTC),
            lock=lock,
            state=data["state"],
            store=data["store"],
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if found.pid != lock.pid or not isinstance(found.state, dict):
        return None
    if found.state.get("phase") != "running":
        return None
    if squads_dir is not None and squads_dir.resolve() != found.configs:
        return None
    return found


def served_at(
    home: Path, squads_dir: Path, *, now: datetime | None = None
) -> tuple[str, int] | None:
    """The host and port of the API of the daemon holding ``home``, running on
    ``squads_dir`` and beating; None when there is none, or what it published cannot be
    trusted (:func:`read_published`, or a stale beat)."""
    found = read_published(home, squads_dir)
    if found is None or (now or datetime.now(UTC)) - found.beat_at > STALE_AFTER:
        return None
    served = found.state.get("http")
    try:
        host, port = str(served["host"]), int(served["port"])  # type: ignore[index]
    except (KeyError, TypeError, ValueError):
        return None
    if host in ("0.0.0.0", "", "*"):  # bound to every address: loopback is one
        host = "127.0.0.1"
    elif host == "::":
        host = "::1"
    return host, port
