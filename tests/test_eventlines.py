"""JSON Lines logs (run logs, the daemon's log, the memory audit log): what a killed writer
leaves half-written never costs a record written after it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from squad.daemon.eventlog import read_daemon_log
from squad.eventlines import (
    EventsRead,
    SkippedLine,
    encode_event,
    open_for_append,
    read_events,
    scan_events,
)
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


def test_a_line_that_is_not_utf8_is_skipped_and_named_and_costs_no_other(
    tmp_path: Path,
) -> None:
    path = tmp_path / "run.jsonl"
    path.write_bytes(b'{"event": "a"}\n{"event": "caf\xe9"}\n{"event": "b"}\n')
    read = scan_events(path)
    assert read.events == [{"event": "a"}, {"event": "b"}]
    assert read.skipped == [SkippedLine(2, "not valid UTF-8 (byte 0xe9 at column 15)")]
    assert read_events(path) == read.events


def test_every_kind_of_line_without_an_event_is_named_with_its_number(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    lines = [b'{"event": "a"}', b"", b"{not json", b"[1]", b"[" * 100_000, b"9" * 5000]
    path.write_bytes(b"\n".join(lines) + b'\n{"event": "to')
    read = scan_events(path)
    assert read.events == [{"event": "a"}]
    assert [(s.number, s.reason.split(" (")[0]) for s in read.skipped] == [
        (3, "not JSON"),
        (4, "not a JSON object"),
        (5, "not JSON"),
        (6, "not JSON"),
        (7, "torn last line"),
    ]
    assert read.skipped[1].render("logs/run-r1.jsonl") == (
        "logs/run-r1.jsonl: line 4: not a JSON object (a list)"
    )


def test_a_line_separator_inside_a_string_does_not_end_the_line(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    _append(path, {"event": "tool_result", "text": "a\u2028b\x85c\u2029d"})
    _append(path, {"event": "run_end"})
    assert scan_events(path) == EventsRead(
        [{"event": "tool_result", "text": "a\u2028b\x85c\u2029d"}, {"event": "run_end"}], []
    )


def test_a_missing_log_is_empty_only_when_allowed(tmp_path: Path) -> None:
    assert scan_events(tmp_path / "none.jsonl", missing_ok=True) == EventsRead([], [])
    with pytest.raises(FileNotFoundError):
        scan_events(tmp_path / "none.jsonl")


def test_the_audit_and_daemon_logs_keep_their_records_around_a_bad_byte(tmp_path: Path) -> None:
    log = AuditLog(tmp_path)
    first = AuditRecord(time="t1", actor="cli", operation="append", file="agents/a/memory.md")
    log.append(first)
    with log.path.open("ab") as raw:
        raw.write(b'{"time": "t2", "actor": "\xff"}\n')
    second = AuditRecord(time="t3", actor="gc", operation="dormant", file="fact:7")
    log.append(second)
    assert log.records() == [first, second]
    daemon = tmp_path / "daemon.jsonl"
    daemon.write_bytes(b'{"event": "start"}\n\xc3\n{"event": "stop"}\n')
    assert [e["event"] for e in read_daemon_log(daemon)] == ["start", "stop"]
