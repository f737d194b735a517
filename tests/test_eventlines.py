"""JSON Lines logs (run logs, the daemon's log, the memory audit log): what a killed writer
leaves half-written never costs a record written after it."""

from __future__ import annotations

import os
from pathlib import Path

from squad.eventlines import encode_event, open_for_append, read_events
from squad.memory.audit import AuditLog, AuditRecord


def _append(path: Path, record: dict[str, object]) -> None:
    fd = open_for_append(path)
    try:
        os.write(fd, encode_event(record))
    finally:
        os.close(fd)


def test_a_record_appended_after_a_torn_line_stays_readable(tmp_path: Path) -> None:
    path = tmp_path / "logs" / "run-r1.jsonl"
    _append(path, {"event": "run_start"})
    with path.open("ab") as raw:  # a writer killed half-way through its line
        raw.write(b'{"event": "node_e')
    assert read_events(path) == [{"event": "run_start"}]
    _append(path, {"event": "run_resume"})
    assert read_events(path) == [{"event": "run_start"}, {"event": "run_resume"}]


def test_the_audit_log_skips_a_torn_last_record_and_keeps_the_next(tmp_path: Path) -> None:
    log = AuditLog(tmp_path)
    assert log.records() == []  # before the first write: no file, no error
    first = AuditRecord(time="t1", actor="cli", operation="append", file="agents/a/memory.md")
    log.append(first)
    with log.path.open("ab") as raw:
        raw.write(b'{"time": "t2", "actor": "extr')
    assert log.records() == [first]
    second = AuditRecord(time="t3", actor="gc", operation="dormant", file="fact:7")
    log.append(second)
    assert log.records() == [first, second]
