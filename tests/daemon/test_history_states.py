"""``squad status``'s paused histories: a workspace found writable is not opened again until a
file its check read changes, and a paused one is checked every time."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pygit2

from squad.daemon.history_states import paused_histories
from squad.history.history import History
from squad.history.repository import HistoryState


class Checks:
    """The real check (libgit2), counted."""

    def __init__(self) -> None:
        self.count = 0

    def __call__(self, path: Path, squad: str) -> HistoryState:
        self.count += 1
        return History(path, squad).state()


def _workspace(root: Path, name: str = "docs") -> Path:
    path = root / name
    (path / "tasks").mkdir(parents=True)
    (path / "tasks" / "a.md").write_text("first\n")
    History(path, name).start()
    return path


def _paused(path: Path, checks: Checks, cache: Path, **kw: Any) -> list[dict[str, Any]]:
    return paused_histories([(path.name, path)], checks, cache=cache, settled_ns=0, **kw)


def test_a_writable_history_is_checked_once_until_a_commit_moves_it(tmp_path: Path) -> None:
    path = _workspace(tmp_path)
    cache, checks = tmp_path / "status-histories.json", Checks()
    assert _paused(path, checks, cache) == [] and checks.count == 1
    assert _paused(path, checks, cache) == [] and checks.count == 1  # from the cache
    assert json.loads(cache.read_text())["workspaces"][str(path)]["squad"] == "docs"
    (path / "tasks" / "a.md").write_text("second\n")
    assert History(path, "docs").record_all("squad", "edit") is not None
    assert _paused(path, checks, cache) == [] and checks.count == 2  # its ref moved


def test_a_history_made_foreign_or_damaged_after_it_was_cached_is_reported(
    tmp_path: Path,
) -> None:
    foreign, damaged = _workspace(tmp_path, "foreign"), _workspace(tmp_path, "damaged")
    cache, checks = tmp_path / "status-histories.json", Checks()
    pairs = [("foreign", foreign), ("damaged", damaged)]
    assert paused_histories(pairs, checks, cache=cache, settled_ns=0) == []
    assert checks.count == 2
    pygit2.Repository(str(foreign)).config["squad.workspace"] = "someone-else"
    head = pygit2.Repository(str(damaged)).head.target
    loose = damaged / ".git" / "objects" / str(head)[:2] / str(head)[2:]
    loose.chmod(0o644)
    loose.write_bytes(b"not an object")
    paused = paused_histories(pairs, checks, cache=cache, settled_ns=0)
    assert [(p["squad"], p["state"]) for p in paused] == [
        ("foreign", "foreign"),
        ("damaged", "broken"),
    ]
    assert paused_histories(pairs, checks, cache=cache, settled_ns=0) == paused
    assert checks.count == 6  # paused histories are never taken from the cache


def test_a_verdict_on_files_changed_just_before_the_check_is_not_kept(tmp_path: Path) -> None:
    path = _workspace(tmp_path)
    cache, checks = tmp_path / "status-histories.json", Checks()
    for _ in range(2):  # the history was just made: its files may still change in this tick
        assert paused_histories([("docs", path)], checks, cache=cache) == []
    assert checks.count == 2
    assert not cache.exists()


def test_an_unreadable_cache_or_another_squads_entry_means_a_check(tmp_path: Path) -> None:
    path = _workspace(tmp_path)
    cache, checks = tmp_path / "status-histories.json", Checks()
    cache.write_text("{not json")
    assert _paused(path, checks, cache) == [] and checks.count == 1
    data = json.loads(cache.read_text())
    data["workspaces"][str(path)]["squad"] = "other"
    cache.write_text(json.dumps(data))
    assert _paused(path, checks, cache) == [] and checks.count == 2
    assert not list(tmp_path.glob("*.tmp*"))  # replaced whole, no temporary left
