"""tree, preview and health over real folders on disk."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from squad.errors import NotFound, PathEscapeError, UsageError, WorkspaceError
from squad.workspace.inspect import FolderStats, health, preview, tree
from squad.workspace.search import search

T0 = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)


def write(path: Path, data: str | bytes, *, at: datetime | None = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        path.write_text(data, encoding="utf-8")
    else:
        path.write_bytes(data)
    if at is not None:
        os.utime(path, (at.timestamp(), at.timestamp()))
    return path


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    """A small workspace with known byte sizes: 10 + 100 + 20 + 30 + 5 + 7 = 172 bytes."""
    root = tmp_path / "ws"
    write(root / ".squad-config.json", "x" * 10, at=T0)
    write(root / "agents/alice/memory.md", "a" * 100, at=T0 + timedelta(hours=1))
    write(root / "agents/alice/daily/2025-03-01.md", "d" * 20, at=T0)
    write(root / "agents/bob/memory.md", "b" * 30, at=T0)
    write(root / "tasks/t1/output.md", "o" * 5, at=T0 + timedelta(hours=3))
    write(root / "logs/run.jsonl", "l" * 7, at=T0)
    (root / "plans").mkdir()
    return root


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder next to the workspace holding a secret that must never be read."""
    folder = tmp_path / "outside"
    write(folder / "secret.txt", "TOP SECRET " * 50)
    return folder


# -- tree --------------------------------------------------------------------------------


def test_tree_lists_folders_before_files_depth_first_with_names_sorted(ws: Path) -> None:
    paths = [e.path for e in tree(ws)]
    assert paths == [
        "agents",
        "agents/alice",
        "agents/alice/daily",
        "agents/alice/daily/2025-03-01.md",
        "agents/alice/memory.md",
        "agents/bob",
        "agents/bob/memory.md",
        "logs",
        "logs/run.jsonl",
        "plans",
        "tasks",
        "tasks/t1",
        "tasks/t1/output.md",
        ".squad-config.json",
    ]


def test_tree_depth_cut_keeps_folder_sizes_of_everything_below(ws: Path) -> None:
    entries = {e.path: e for e in tree(ws, depth=1)}
    assert set(entries) == {"agents", "logs", "plans", "tasks", ".squad-config.json"}
    assert entries["agents"].size == 150
    assert entries["agents"].is_dir and entries["agents"].depth == 1
    assert entries["tasks"].size == 5
    assert entries["plans"].size == 0
    assert entries[".squad-config.json"].size == 10


def test_tree_depth_two_shows_second_level_only(ws: Path) -> None:
    entries = tree(ws, depth=2)
    assert max(e.depth for e in entries) == 2
    assert {e.path: e.size for e in entries if e.depth == 2}["agents/alice"] == 120


def test_tree_folder_mtime_is_newest_mtime_below(ws: Path) -> None:
    # A folder's own mtime counts too (a deletion is activity), so age every folder first.
    for folder in [p for p in ws.rglob("*") if p.is_dir()]:
        os.utime(folder, (T0.timestamp(), T0.timestamp()))
    entries = {e.path: e for e in tree(ws)}
    assert entries["tasks"].mtime == T0 + timedelta(hours=3)
    assert entries["agents"].mtime == T0 + timedelta(hours=1)
    assert entries["tasks/t1/output.md"].mtime == T0 + timedelta(hours=3)
    assert entries["plans"].mtime == T0  # empty: its own mtime


def test_tree_folder_mtime_includes_its_own_change(ws: Path) -> None:
    for folder in [p for p in ws.rglob("*") if p.is_dir()]:
        os.utime(folder, (T0.timestamp(), T0.timestamp()))
    later = T0 + timedelta(days=1)
    os.utime(ws / "logs", (later.timestamp(), later.timestamp()))
    assert {e.path: e for e in tree(ws)}["logs"].mtime == later


def test_tree_never_descends_into_a_link_to_outside(ws: Path, outside: Path) -> None:
    (ws / "plans/escape").symlink_to(outside, target_is_directory=True)
    entries = {e.path: e for e in tree(ws)}
    link = entries["plans/escape"]
    assert link.is_link and not link.is_dir
    assert link.size == 0
    assert link.link_target == str(outside)
    assert not any(p.startswith("plans/escape/") for p in entries)
    assert entries["plans"].size == 0


def test_tree_lists_a_file_link_with_its_target_and_no_size(ws: Path, outside: Path) -> None:
    (ws / "leak.txt").symlink_to(outside / "secret.txt")
    entry = {e.path: e for e in tree(ws)}["leak.txt"]
    assert (entry.is_link, entry.size, entry.link_target) == (
        True,
        0,
        str(outside / "secret.txt"),
    )


def test_tree_of_empty_workspace_is_empty(tmp_path: Path) -> None:
    assert tree(tmp_path) == []


@pytest.mark.parametrize("depth", [0, -1])
def test_tree_rejects_depth_below_one(ws: Path, depth: int) -> None:
    with pytest.raises(UsageError, match="depth"):
        tree(ws, depth=depth)


def test_tree_entry_to_dict_is_json_ready_with_iso_utc_time(ws: Path) -> None:
    data = json.loads(json.dumps([e.to_dict() for e in tree(ws)]))
    config = next(d for d in data if d["path"] == ".squad-config.json")
    assert datetime.fromisoformat(config["mtime"]) == T0
    assert config["mtime"].endswith("+00:00")


# -- preview -----------------------------------------------------------------------------


def test_preview_pretty_prints_json(ws: Path) -> None:
    write(ws / "plans/plan.json", '{"steps":[1,2],"name":"é"}')
    shown = preview(ws, "plans/plan.json")
    assert shown.kind == "json" and shown.language == "json"
    assert shown.text == '{\n  "steps": [\n    1,\n    2\n  ],\n  "name": "é"\n}\n'
    assert shown.size == len('{"steps":[1,2],"name":"é"}'.encode())


def test_preview_shows_invalid_json_raw(ws: Path) -> None:
    write(ws / "plans/broken.json", '{"steps": [1,')
    assert preview(ws, "plans/broken.json").text == '{"steps": [1,'


def test_preview_truncates_at_max_bytes(ws: Path) -> None:
    write(ws / "tasks/t1/long.md", "abcdefghij" * 10)
    shown = preview(ws, "tasks/t1/long.md", max_bytes=25)
    assert (shown.text, shown.size, shown.truncated) == ("abcdefghij" * 2 + "abcde", 100, True)


def test_preview_at_exactly_max_bytes_is_not_truncated(ws: Path) -> None:
    write(ws / "tasks/t1/ten.md", "0123456789")
    shown = preview(ws, "tasks/t1/ten.md", max_bytes=10)
    assert (shown.text, shown.truncated) == ("0123456789", False)


def test_preview_truncation_never_splits_a_character(ws: Path) -> None:
    write(ws / "notes.txt", "aé" * 10)  # é is two bytes in UTF-8
    shown = preview(ws, "notes.txt", max_bytes=5)  # cuts the second é in half
    assert (shown.text, shown.truncated) == ("aéa", True)


def test_preview_does_not_pretty_print_truncated_json(ws: Path) -> None:
    write(ws / "big.json", json.dumps({"k": "v" * 50}))
    shown = preview(ws, "big.json", max_bytes=20)
    assert shown.text == '{"k": "' + "v" * 13 and shown.truncated


def test_preview_refuses_binary_file(ws: Path) -> None:
    write(ws / "tasks/t1/image.png", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    with pytest.raises(WorkspaceError, match=r"binary file \(16 bytes\).*another tool"):
        preview(ws, "tasks/t1/image.png")


def test_preview_refuses_file_that_is_not_utf8(ws: Path) -> None:
    write(ws / "latin1.txt", "café".encode("latin-1"))
    with pytest.raises(WorkspaceError, match="binary"):
        preview(ws, "latin1.txt")


def test_preview_refuses_folder_pointing_to_tree(ws: Path) -> None:
    with pytest.raises(WorkspaceError, match="is a folder; use `squad ws tree`"):
        preview(ws, "agents/alice")


def test_preview_of_a_missing_file_is_not_found(ws: Path) -> None:
    with pytest.raises(NotFound, match=r"no file 'plans/nope\.md'"):
        preview(ws, "plans/nope.md")


@pytest.mark.parametrize("bad", ["../outside/secret.txt", "tasks/../../outside/secret.txt"])
def test_preview_refuses_dotdot_path(ws: Path, outside: Path, bad: str) -> None:
    with pytest.raises(PathEscapeError):
        preview(ws, bad)


def test_preview_refuses_absolute_path(ws: Path, outside: Path) -> None:
    with pytest.raises(PathEscapeError):
        preview(ws, str(outside / "secret.txt"))


def test_preview_refuses_link_leading_outside(ws: Path, outside: Path) -> None:
    (ws / "leak.txt").symlink_to(outside / "secret.txt")
    with pytest.raises(PathEscapeError, match="outside the workspace"):
        preview(ws, "leak.txt")


def test_preview_refuses_file_below_folder_link_leading_outside(ws: Path, outside: Path) -> None:
    (ws / "plans/escape").symlink_to(outside, target_is_directory=True)
    with pytest.raises(PathEscapeError):
        preview(ws, "plans/escape/secret.txt")


def test_preview_follows_link_that_stays_inside(ws: Path) -> None:
    (ws / "latest.md").symlink_to(ws / "tasks/t1/output.md")
    shown = preview(ws, "latest.md")
    assert (shown.path, shown.text, shown.kind) == ("latest.md", "ooooo", "markdown")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_preview_refuses_named_pipe_without_blocking(ws: Path) -> None:
    os.mkfifo(ws / "pipe")
    with pytest.raises(WorkspaceError, match="not a regular file"):
        preview(ws, "pipe")


@pytest.mark.parametrize(
    ("name", "kind", "language"),
    [
        ("memory.md", "markdown", "markdown"),
        ("NOTES.MD", "markdown", "markdown"),
        ("run.jsonl", "jsonl", "json"),
        ("squad.yaml", "yaml", "yaml"),
        ("squad.yml", "yaml", "yaml"),
        ("tool.py", "text", "python"),
        ("notes.txt", "text", "text"),
        ("README", "text", "text"),
    ],
)
def test_preview_guesses_kind_and_language_from_suffix(
    tmp_path: Path, name: str, kind: str, language: str
) -> None:
    write(tmp_path / name, "hello\n")
    shown = preview(tmp_path, name)
    assert (shown.kind, shown.language) == (kind, language)


def test_preview_rejects_max_bytes_below_one(ws: Path) -> None:
    with pytest.raises(UsageError, match="max_bytes"):
        preview(ws, ".squad-config.json", max_bytes=0)


def test_preview_to_dict_is_json_ready(ws: Path) -> None:
    data = json.loads(json.dumps(preview(ws, "agents/bob/memory.md").to_dict()))
    assert data == {
        "path": "agents/bob/memory.md",
        "kind": "markdown",
        "text": "b" * 30,
        "size": 30,
        "truncated": False,
        "language": "markdown",
    }


# -- health ------------------------------------------------------------------------------


def test_health_figures_exact_on_constructed_tree(ws: Path) -> None:
    report = health(ws, memory_cap_bytes=1000, largest=3, now=T0 + timedelta(hours=5))
    assert report.total_bytes == 172
    assert report.file_count == 6
    # agents, alice, daily, bob, tasks, t1, logs, plans
    assert report.folder_count == 8
    assert report.links == 0
    assert report.folders == {
        ".": FolderStats(files=1, bytes=10),
        "agents": FolderStats(files=3, bytes=150),
        "logs": FolderStats(files=1, bytes=7),
        "plans": FolderStats(files=0, bytes=0),
        "tasks": FolderStats(files=1, bytes=5),
    }
    assert report.largest_files == [
        ("agents/alice/memory.md", 100),
        ("agents/bob/memory.md", 30),
        ("agents/alice/daily/2025-03-01.md", 20),
    ]
    assert report.last_activity == T0 + timedelta(hours=3)
    assert report.last_activity_age_s == 2 * 3600


def test_health_flags_memory_file_over_cap(ws: Path) -> None:
    report = health(ws, memory_cap_bytes=40, now=T0)
    assert [(m.agent, m.path, m.size, m.cap, m.over_cap) for m in report.memory_files] == [
        ("alice", "agents/alice/memory.md", 100, 40, True),
        ("bob", "agents/bob/memory.md", 30, 40, False),
    ]
    assert [m.percent for m in report.memory_files] == [250.0, 75.0]


def test_health_memory_file_exactly_at_cap_is_not_over(ws: Path) -> None:
    bob = health(ws, memory_cap_bytes=30, now=T0).memory_files[1]
    assert (bob.percent, bob.over_cap) == (100.0, False)


def test_health_counts_links_apart_and_never_follows_them(ws: Path, outside: Path) -> None:
    (ws / "leak.txt").symlink_to(outside / "secret.txt")
    (ws / "plans/escape").symlink_to(outside, target_is_directory=True)
    (ws / "agents/carol").mkdir()
    (ws / "agents/carol/memory.md").symlink_to(outside / "secret.txt")
    report = health(ws, memory_cap_bytes=1000, now=T0)
    assert (report.links, report.file_count, report.total_bytes) == (3, 6, 172)
    assert report.folder_count == 9
    assert report.folders["."] == FolderStats(files=1, bytes=10)
    assert [m.agent for m in report.memory_files] == ["alice", "bob"]


def test_health_of_empty_workspace_has_no_activity(tmp_path: Path) -> None:
    report = health(tmp_path, memory_cap_bytes=100, now=T0)
    assert (report.file_count, report.last_activity, report.last_activity_age_s) == (0, None, None)
    assert report.folders == {".": FolderStats(files=0, bytes=0)}
    assert report.largest_files == [] and report.memory_files == []


def test_health_defaults_now_to_current_utc_time(ws: Path) -> None:
    age = health(ws, memory_cap_bytes=100).last_activity_age_s
    expected = (datetime.now(UTC) - (T0 + timedelta(hours=3))).total_seconds()
    assert age is not None and abs(age - expected) < 60


def test_health_rejects_naive_now(ws: Path) -> None:
    with pytest.raises(UsageError, match="timezone-aware"):
        health(ws, memory_cap_bytes=100, now=datetime(2025, 3, 1))


@pytest.mark.parametrize(("cap", "largest"), [(0, 5), (100, -1)])
def test_health_rejects_impossible_limits(ws: Path, cap: int, largest: int) -> None:
    with pytest.raises(UsageError):
        health(ws, memory_cap_bytes=cap, largest=largest)


def test_health_view_is_json_ready(ws: Path) -> None:
    data = json.loads(health(ws, memory_cap_bytes=40, now=T0).view().model_dump_json())
    assert data["folders"]["agents"] == {"files": 3, "bytes": 150}
    assert data["largest_files"][0] == {"path": "agents/alice/memory.md", "size": 100}
    assert data["memory_files"][0]["over_cap"] is True
    assert datetime.fromisoformat(data["last_activity"]) == T0 + timedelta(hours=3)


# -- every entry point -------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["missing", "file"])
def test_every_function_refuses_a_root_that_is_not_a_folder(tmp_path: Path, kind: str) -> None:
    root = tmp_path / "nope"
    if kind == "file":
        write(root, "not a folder")
    calls: list[Callable[[], object]] = [
        lambda: tree(root),
        lambda: preview(root, "x.md"),
        lambda: search(root, "x"),
        lambda: health(root, memory_cap_bytes=1),
    ]
    for call in calls:
        with pytest.raises(WorkspaceError, match="not an existing folder"):
            call()
