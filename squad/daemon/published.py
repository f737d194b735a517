"""The file a running daemon publishes about itself in its home (``daemon-status.json``,
rewritten at every heartbeat), and the one thing a command reads of it without building a
whole status: where the daemon serves its API (:func:`served_at`)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

from squad.daemon.lock import probe_lock

__all__ = ["PUBLISHED_FILE", "STALE_AFTER", "served_at"]

PUBLISHED_FILE = "daemon-status.json"
"""What the running daemon publishes for ``squad status`` (in the home, beside daemon.pid)."""

STALE_AFTER = timedelta(seconds=30)
"""A heartbeat older than this (six missed beats) means the daemon is down or stuck."""


def served_at(
    home: Path, squads_dir: Path, *, now: datetime | None = None
) -> tuple[str, int] | None:
    """The host and port of the API of the daemon holding ``home``, running on
    ``squads_dir`` and beating; None when there is none, or what it published cannot be
    trusted (another process's file, a stale beat, a daemon still starting)."""
    lock = probe_lock(home)
    if not lock.held or lock.pid is None:
        return None
    path = home / PUBLISHED_FILE
    try:
        beat_at = datetime.fromtimestamp(path.stat().st_mtime, UTC)
        data = json.loads(path.read_text(encoding="utf-8"))
        state = data["state"]
        served = state.get("http")
        if int(data["pid"]) != lock.pid or state.get("phase") != "running" or not served:
            return None
        if Path(str(state["configs"])) != squads_dir.resolve():
            return None
        host, port = str(served["host"]), int(served["port"])
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    if (now or datetime.now(UTC)) - beat_at > STALE_AFTER:
        return None
    if host in ("0.0.0.0", "", "*"):  # bound to every address: loopback is one
        host = "127.0.0.1"
    elif host == "::":
        host = "::1"
    return host, port
