"""Run logs: JSON Lines, one event per line, secrets redacted, followable."""

from __future__ import annotations

import json
from pathlib import Path

from squad.clock import FrozenClock
from squad.eventlines import SkippedLine
from squad.runtime.runlog import RunLog, follow_events, read_events


def test_events_are_json_lines_with_time_run_and_event(tmp_path: Path, clock: FrozenClock) -> None:
    with RunLog(tmp_path, "r1", clock=clock) as log:
        log.emit("run_start", squad="docs-site")
        log.emit("model_call", agent="writer", tokens={"prompt": 10, "completion": 5}, cost_usd=0.0)
    lines = log.path.read_text().splitlines()
    assert log.path == tmp_path.resolve() / "logs" / "run-r1.jsonl"
    first = json.loads(lines[0])
    assert first == {
        "time": clock.now.isoformat(),
        "run_id": "r1",
        "event": "run_start",
        "squad": "docs-site",
    }
    assert read_events(log.path)[1]["tokens"] == {"prompt": 10, "completion": 5}


def test_secrets_in_fields_are_redacted(tmp_path: Path) -> None:
    key = "ghp_" + "a1B2c3D4" * 5
    with RunLog(tmp_path, "r1") as log:
        log.emit("tool_call", tool="write_file", arguments={"content": f"token={key}"})
    text = log.path.read_text()
    assert key not in text and "[REDACTED:" in text


def test_a_torn_last_line_is_skipped(tmp_path: Path) -> None:
    with RunLog(tmp_path, "r1") as log:
        log.emit("run_start")
    with log.path.open("a") as handle:
        handle.write('{"event": "half')
    assert [e["event"] for e in read_events(log.path)] == ["run_start"]


def test_follow_yields_events_as_they_arrive(tmp_path: Path) -> None:
    log = RunLog(tmp_path, "r1")
    log.emit("run_start")
    ticks: list[int] = []

    def sleep(_: float) -> None:
        ticks.append(1)
        if len(ticks) == 1:
            log.emit("node_start", node="outline")
        if len(ticks) == 2:
            log.emit("run_end", status="succeeded")

    seen = [e["event"] for e in follow_events(log.path, stop=lambda: len(ticks) >= 3, sleep=sleep)]
    log.close()
    assert seen == ["run_start", "node_start", "run_end"]


def test_events_written_after_close_reopen_the_file(tmp_path: Path) -> None:
    log = RunLog(tmp_path, "r1")
    log.emit("run_start")
    log.close()
    log.emit("run_resume")
    log.close()
    log.close()  # closing twice is harmless
    assert [e["event"] for e in read_events(log.path)] == ["run_start", "run_resume"]


def test_follow_names_a_line_it_cannot_read_and_goes_on(tmp_path: Path) -> None:
    log = RunLog(tmp_path, "r1")
    log.emit("run_start")
    with log.path.open("ab") as raw:
        raw.write(b'{"event": "\xff"}\n[]\n')
    log.emit("run_end")
    log.close()
    skipped: list[SkippedLine] = []
    seen = [
        e["event"]
        for e in follow_events(log.path, stop=lambda: True, sleep=_no_sleep, on_skip=skipped.append)
    ]
    assert seen == ["run_start", "run_end"]
    assert [(s.number, s.reason.split(" (")[0]) for s in skipped] == [
        (2, "not valid UTF-8"),
        (3, "not a JSON object"),
    ]


def test_follow_keeps_a_character_whole_when_a_read_ends_inside_it(tmp_path: Path) -> None:
    path = tmp_path / "logs" / "run-r1.jsonl"
    path.parent.mkdir()
    line = '{"event": "note", "text": "café ☕"}\n'.encode()
    cut = line.index("☕".encode()) + 1  # inside the three bytes of the cup
    path.write_bytes(line[:cut])
    ticks: list[int] = []

    def sleep(_: float) -> None:
        ticks.append(1)
        with path.open("ab") as raw:
            raw.write(line[cut:])

    skipped: list[SkippedLine] = []
    seen = list(
        follow_events(path, stop=lambda: len(ticks) >= 1, sleep=sleep, on_skip=skipped.append)
    )
    assert seen == [{"event": "note", "text": "café ☕"}]
    assert skipped == []


def test_follow_names_a_torn_line_left_when_it_stops(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    path.write_bytes(b'{"event": "run_start"}\n{"event": "no')
    skipped: list[SkippedLine] = []
    events = list(follow_events(path, stop=lambda: True, on_skip=skipped.append))
    assert events == [{"event": "run_start"}]
    assert skipped == [SkippedLine(2, "torn last line (no line end yet)")]


def test_follow_waits_for_a_log_that_does_not_exist_yet(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    ticks: list[int] = []

    def sleep(_: float) -> None:
        ticks.append(1)
        path.write_text('{"event": "run_start"}\n')

    events = list(follow_events(path, stop=lambda: len(ticks) >= 1, sleep=sleep))
    assert events == [{"event": "run_start"}]


def _no_sleep(_: float) -> None:
    raise AssertionError("follow should have stopped")
