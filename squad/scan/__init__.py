"""Stored text scanned again with the current credential detector: ``squad memory scan``.

Every write path refuses or redacts credentials with the detector of its day; when the
detector learns more, what was stored before is protected by a scan: the current detector
runs over every place squad keeps text (:data:`~squad.scan.report.PLACES`: memory files,
daily logs, working memory, chat summaries, task outputs, plans, decisions, boot files, run
logs, MCP journals, audit logs, the conversation store, Layer A, archives, the review queue,
runs, task states and run checkpoints), reports each find by place and kind, never the value,
and with ``fix`` replaces each value by ``[REDACTED:<kind>]`` where it lies, with an audit
line per value and a commit per workspace. Git history and copies kept elsewhere are beyond
it (:data:`~squad.scan.report.HISTORY_NOTE`).

Modules: :mod:`.files` (which files, how each is rewritten), :mod:`.sweep` (one scan),
:mod:`.report` (what it found), :mod:`.upgrade` (the daemon's scan after an upgrade).
"""

from __future__ import annotations

from squad.scan.report import HISTORY_NOTE, PLACES, Finding, ScanReport
from squad.scan.sweep import SCAN_ACTOR, scan_home
from squad.scan.upgrade import STATE_FILE, last_scanned, needs_scan, record_scan

__all__ = [
    "HISTORY_NOTE",
    "PLACES",
    "SCAN_ACTOR",
    "STATE_FILE",
    "Finding",
    "ScanReport",
    "last_scanned",
    "needs_scan",
    "record_scan",
    "scan_home",
]
