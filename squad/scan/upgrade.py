"""Which detector last scanned the home, so the daemon scans again after an upgrade.

``$SQUAD_HOME/secrets-scan.json`` holds the :func:`~squad.text.secrets.detector_version` of
the last scan that settled (ran to its end with nothing left for a later one) and its
figures; a home file, as the definitions cache keeps its code fingerprint. A daemon that
starts with another detector scans with ``fix`` in the background and records the new version
when the scan settles. A file that cannot be read counts as no scan yet.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from squad.fsutil import atomic_write

if TYPE_CHECKING:
    from squad.scan.report import ScanSummary

__all__ = ["STATE_FILE", "last_scanned", "needs_scan", "record_scan"]

STATE_FILE = "secrets-scan.json"


def last_scanned(home: Path) -> str | None:
    """The detector version of the home's last settled scan; None when there was none."""
    try:
        data: Any = json.loads((home / STATE_FILE).read_bytes())
    except (OSError, ValueError):
        return None
    version = data.get("detector") if isinstance(data, dict) else None
    return version if isinstance(version, str) else None


def needs_scan(home: Path) -> bool:
    """Whether this process's detector is not the one the home was last scanned with."""
    from squad.text.secrets import detector_version

    return last_scanned(home) != detector_version()


def record_scan(home: Path, detector: str, at: str, summary: ScanSummary) -> None:
    """Record that the home was scanned with ``detector`` at ``at`` (0600, like the home)."""
    body = {"detector": detector, "scanned_at": at, "summary": summary}
    path = home / STATE_FILE
    atomic_write(path, (json.dumps(body, indent=2) + "\n").encode())
    path.chmod(0o600)
