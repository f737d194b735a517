"""Hostile input to the real CLI, in-process: bytes that are not UTF-8, ids past any integer
column, files a search cannot read, patterns that backtrack for ages. Each gets a message and
an exit code, never a traceback, and nothing that was left out goes unsaid."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.cli.test_failures import DOCS, Outcome, Squad


@pytest.fixture
def squad(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any) -> Squad:
    return Squad(tmp_path, monkeypatch, capsys)


@pytest.fixture
def docs(squad: Squad) -> Path:
    """The docs-site workspace, created; its folder."""
    assert squad("create", DOCS).code == 0
    return squad.tmp / "workspaces" / "docs-site"


def _clean(outcome: Outcome) -> None:
    assert "Traceback" not in outcome.stdout + outcome.stderr, outcome.stderr


def _run_log(workspace: Path, *lines: bytes) -> Path:
    path = workspace / "logs" / "run-r1.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(line + b"\n" for line in lines))
    return path


START = b'{"time":"2026-01-01T10:00:00","run_id":"r1","event":"run_start"}'
END = b'{"time":"2026-01-01T10:00:09","run_id":"r1","event":"run_end","status":"succeeded"}'


# -- run logs ----------------------------------------------------------------------------


@pytest.mark.parametrize("follow", [[], ["--follow"]], ids=["read", "follow"])
def test_logs_with_a_byte_that_is_not_utf8_shows_every_other_line_and_names_the_bad_one(
    squad: Squad, docs: Path, follow: list[str]
) -> None:
    _run_log(docs, START, b'{"event":"node_start","node":"caf\xe9"}', END)
    outcome = squad("logs", "docs-site", *follow)
    _clean(outcome)
    assert outcome.code == 0
    assert "run_start" in outcome.stdout and "run_end" in outcome.stdout
    assert "node_start" not in outcome.stdout
    assert "line 2" in outcome.stderr and "not valid UTF-8" in outcome.stderr


def test_logs_json_stays_valid_json_when_a_line_is_skipped(squad: Squad, docs: Path) -> None:
    _run_log(docs, START, b"\xff\xfe garbage", END)
    outcome = squad("logs", "docs-site", "--json")
    _clean(outcome)
    assert outcome.code == 0
    assert [e["event"] for e in json.loads(outcome.stdout)] == ["run_start", "run_end"]
    assert "skipped" in outcome.stderr and "line 2" in outcome.stderr


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        (b"[1, 2, 3]", "not a JSON object"),
        (b"42", "not a JSON object"),
        (b"[" * 100_000, "not JSON"),
        (b'{"n": ' + b"9" * 5000 + b"}", "not JSON"),
    ],
    ids=["list", "number", "deep", "huge-int"],
)
def test_logs_skip_a_line_that_parses_to_no_event_and_say_why(
    squad: Squad, docs: Path, line: bytes, reason: str
) -> None:
    _run_log(docs, START, line, END)
    outcome = squad("logs", "docs-site")
    _clean(outcome)
    assert outcome.code == 0
    assert "run_start" in outcome.stdout and "run_end" in outcome.stdout
    assert reason in outcome.stderr


def test_logs_keep_the_events_after_a_line_separator_inside_a_field(
    squad: Squad, docs: Path
) -> None:
    """U+2028 and U+0085 end a line for str.splitlines, not for JSON Lines."""
    _run_log(docs, START, '{"event":"tool_result","text":"a\u2028b\x85c"}'.encode(), END)
    outcome = squad("logs", "docs-site", "--json")
    _clean(outcome)
    events = json.loads(outcome.stdout)
    assert [e["event"] for e in events] == ["run_start", "tool_result", "run_end"]
    assert events[1]["text"] == "a\u2028b\x85c"
    assert outcome.stderr == ""


@pytest.mark.parametrize("follow", [[], ["--follow"]], ids=["read", "follow"])
def test_logs_of_a_folder_where_the_log_should_be_is_an_error_not_a_crash(
    squad: Squad, docs: Path, follow: list[str]
) -> None:
    (docs / "logs" / "run-r9.jsonl").mkdir(parents=True)
    outcome = squad("logs", "docs-site", *follow)
    _clean(outcome)
    assert outcome.code == 1
    assert outcome.stderr.startswith("error: cannot read ") and "run-r9.jsonl" in outcome.stderr


# -- ids and numbers into the store -------------------------------------------------------

HUGE = "99999999999999999999"


@pytest.mark.parametrize(
    "args",
    [
        ["memory", "forget", HUGE],
        ["memory", "forget", HUGE, "--purge"],
        ["memory", "revive", HUGE],
        ["memory", "forget", "2147483648"],
        ["memory", "enable", HUGE],
        ["memory", "disable", HUGE],
    ],
    ids=["forget", "purge", "revive", "forget-int32", "enable", "disable"],
)
def test_an_id_past_the_integer_columns_is_out_of_range(squad: Squad, args: list[str]) -> None:
    outcome = squad(*args)
    _clean(outcome)
    assert outcome.code == 2
    assert outcome.stderr.startswith("error: ")
    assert "out of range" in outcome.stderr and args[2] in outcome.stderr


def test_a_namespace_named_by_a_superscript_digit_is_unknown_not_a_crash(squad: Squad) -> None:
    outcome = squad("memory", "enable", "²")
    _clean(outcome)
    assert outcome.code == 2
    assert "no memory namespace" in outcome.stderr


@pytest.mark.parametrize("days", ["inf", "1e300", "1e309"])
def test_gc_refuses_a_half_life_no_date_can_hold(squad: Squad, days: str) -> None:
    outcome = squad("memory", "gc", "--dry-run", "--half-life-days", days)
    _clean(outcome)
    assert outcome.code == 2
    assert "half-life-days" in outcome.stderr


# -- what a search leaves out --------------------------------------------------------------


def test_ws_search_names_the_files_it_skipped_in_its_text_output(squad: Squad, docs: Path) -> None:
    (docs / "notes.md").write_text("needle here\n")
    (docs / "huge.log").write_bytes(b"needle\n" * 800_000)  # 5.6 MB, over the 5 MB limit
    (docs / "photo.png").write_bytes(b"\x89PNG\x00needle")
    outcome = squad("ws", "search", "docs-site", "needle")
    _clean(outcome)
    assert outcome.code == 0
    assert "notes.md" in outcome.stdout
    assert "skipped 1 file over 4.8 MiB: huge.log" in outcome.stdout
    assert "skipped 1 binary or non-UTF-8 file: photo.png" in outcome.stdout


def test_ws_search_names_skipped_files_even_when_nothing_matches(squad: Squad, docs: Path) -> None:
    (docs / "huge.log").write_bytes(b"needle\n" * 800_000)
    outcome = squad("ws", "search", "docs-site", "needle")
    _clean(outcome)
    assert outcome.code == 1
    assert "skipped 1 file over 4.8 MiB: huge.log" in outcome.stdout


def test_memory_search_names_a_memory_file_it_could_not_read(squad: Squad, docs: Path) -> None:
    memory = docs / "agents" / "writer" / "memory.md"
    memory.write_bytes(b"# Insights\n" + b"- needle\n" * 600_000)  # 5.4 MB
    outcome = squad("memory", "search", "needle")
    _clean(outcome)
    assert outcome.code == 1
    assert "skipped 1 memory file over 4.8 MiB: docs-site/agents/writer/memory.md" in (
        outcome.stdout
    )
    listed = json.loads(squad("memory", "search", "needle", "--json").stdout)
    assert listed["skipped"] == [
        {"path": "docs-site/agents/writer/memory.md", "reason": "too_large"}
    ]


def test_memory_search_names_a_linked_memory_file_it_did_not_follow(
    squad: Squad, docs: Path
) -> None:
    memory = docs / "agents" / "writer" / "memory.md"
    outside = squad.tmp / "elsewhere.md"
    outside.write_text("- needle\n")
    memory.unlink()
    memory.symlink_to(outside)
    outcome = squad("memory", "search", "needle", "--layer", "project")
    _clean(outcome)
    assert outcome.code == 1
    assert "skipped 1 symbolic link (not followed): docs-site/agents/writer/memory.md" in (
        outcome.stdout
    )


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_memory_search_names_a_pipe_where_a_memory_file_goes_and_never_waits_on_it(
    squad: Squad, docs: Path
) -> None:
    memory = docs / "agents" / "writer" / "memory.md"
    memory.unlink()
    os.mkfifo(memory)
    outcome = squad("memory", "search", "needle", "--layer", "project")
    _clean(outcome)
    assert outcome.code == 1
    assert (
        "skipped 1 special memory file (FIFO, socket or device): docs-site/agents/writer/memory.md"
        in outcome.stdout
    )


# -- patterns that backtrack ----------------------------------------------------------------

SLOW = "(a|aa)+$"  # exponential in the run of a's before the b
SLOW_LINE = "a" * 40 + "b"


def test_ws_search_stops_a_backtracking_regex_and_says_where(squad: Squad, docs: Path) -> None:
    (docs / "notes.md").write_text(f"fine\n{SLOW_LINE}\n")
    outcome = squad("ws", "search", "docs-site", SLOW, "--regex", "--timeout", "0.05")
    _clean(outcome)
    assert outcome.code == 2
    assert outcome.stdout == ""  # nothing half-found is listed
    assert f"error: the pattern {SLOW!r} took longer than 0.05s on notes.md:2" in outcome.stderr
    assert "simplify it" in outcome.stderr


def test_memory_search_stops_a_backtracking_regex_on_a_memory_file(
    squad: Squad, docs: Path
) -> None:
    memory = docs / "agents" / "writer" / "memory.md"
    memory.write_text(f"# Insights\n- {SLOW_LINE}\n")
    outcome = squad("memory", "search", SLOW, "--regex", "--timeout", "0.05")
    _clean(outcome)
    assert outcome.code == 2
    assert outcome.stdout == ""
    assert "took longer than 0.05s on docs-site/agents/writer/memory.md:2" in outcome.stderr


def test_memory_search_stops_a_backtracking_regex_on_a_fact(squad: Squad, docs: Path) -> None:
    remembered = squad(
        "memory", "remember", "docs-site", "writer", SLOW_LINE, "--layer", "experiential"
    )
    assert remembered.code == 0, remembered.stderr
    outcome = squad(
        "memory", "search", SLOW, "--regex", "--layer", "experiential", "--timeout", "0.05"
    )
    _clean(outcome)
    assert outcome.code == 2
    assert "took longer than 0.05s on fact:1" in outcome.stderr


@pytest.mark.parametrize(
    ("pattern", "says"),
    [
        ("a" * 1001, "1,001 characters"),
        ("(?:a{1000}){1000}", "repeat counts"),
        ("x{100001}", "repeat counts"),
        ("(" * 400 + ")" * 400, "nested"),
        ("(?:" + "[ab]" * 200 + "){1000}", "repeat counts"),
        ("x|(?R)a", "calls a group"),
    ],
    ids=["long", "nested-counts", "big-count", "deep", "big-body", "recursive"],
)
@pytest.mark.parametrize("command", ["ws", "memory"])
def test_a_regex_too_big_to_compile_safely_is_refused(
    squad: Squad, docs: Path, command: str, pattern: str, says: str
) -> None:
    where = ["ws", "search", "docs-site"] if command == "ws" else ["memory", "search"]
    outcome = squad(*where, pattern, "--regex")
    _clean(outcome)
    assert outcome.code == 2
    assert outcome.stderr.startswith("error: ") and says in outcome.stderr


# -- terminal escapes ---------------------------------------------------------------------------


def test_escape_sequences_in_a_run_log_never_reach_the_terminal(tmp_path: Path) -> None:
    from squad.cli.output import Output

    stream = io.StringIO()
    Output(stream=stream).line("tool said \x1b]0;pwned\x07\x1b[2J and \r\nmore\rover")
    shown = stream.getvalue()
    assert "\x1b" not in shown and "\x07" not in shown and "\r" not in shown
    assert "\\x1b]0;pwned\\x07\\x1b[2J" in shown and "\\x0dover" in shown


def test_a_namespace_ref_of_unicode_digits_or_a_huge_number_names_nothing(
    squad: Squad, store_url: str
) -> None:
    for ref in ("²", "99999999999999999999999"):
        outcome = squad("memory", "disable", ref)
        assert outcome.code == 2 and "Traceback" not in outcome.stderr, outcome.stderr
    from squad.store import Store

    with Store.open(store_url) as store:  # the store's own lookup, as the MCP tools will use
        for ref in ("²", "99999999999999999999999", "2147483648"):
            assert store.memory.get_namespace(ref) is None


@pytest.mark.parametrize("value", ["nan", "inf", "-1"])
def test_squad_stop_refuses_a_timeout_that_is_not_a_number_of_seconds(
    squad: Squad, value: str
) -> None:
    outcome = squad("stop", "--timeout", value)
    assert outcome.code == 2 and "Traceback" not in outcome.stderr
