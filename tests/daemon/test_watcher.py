"""Folder watching: real inotify events, debounced into one batch per burst of changes."""

from __future__ import annotations

import os
import queue
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from squad.daemon.watcher import Debouncer, FolderWatcher, Watch

WAIT = 30.0


def test_a_burst_of_items_is_handed_over_as_one_batch_after_it_goes_quiet() -> None:
    batches: queue.Queue[set[Path]] = queue.Queue()
    debouncer = Debouncer(0.2, batches.put)
    debouncer.start()
    try:
        for name in ("a", "b", "a"):
            debouncer.add(Path(name))
        assert batches.get(timeout=WAIT) == {Path("a"), Path("b")}
        debouncer.add(Path("c"))
        assert batches.get(timeout=WAIT) == {Path("c")}
        assert batches.empty()
    finally:
        debouncer.stop()


def test_a_failing_batch_is_reported_and_the_next_one_still_arrives() -> None:
    seen: list[set[Path]] = []
    errors: list[BaseException] = []
    done = threading.Event()

    def flush(items: set[Path]) -> None:
        seen.append(items)
        if len(seen) == 1:
            raise RuntimeError("boom")
        done.set()

    failed = threading.Event()

    def report(exc: BaseException) -> None:
        errors.append(exc)
        failed.set()

    debouncer = Debouncer(0.05, flush, on_error=report)
    debouncer.start()
    try:
        debouncer.add(Path("a"))
        assert failed.wait(WAIT)
        debouncer.add(Path("b"))
        assert done.wait(WAIT)
    finally:
        debouncer.stop()
    assert [str(e) for e in errors] == ["boom"] and seen[1] == {Path("b")}


@pytest.fixture
def watcher(tmp_path: Path) -> Iterator[tuple[FolderWatcher, queue.Queue[set[Path]]]]:
    batches: queue.Queue[set[Path]] = queue.Queue()
    folders = FolderWatcher(batches.put, delay=0.2)
    folders.start([Watch(tmp_path / "squads", lambda p: p.suffix == ".yaml")])
    yield folders, batches
    folders.stop()


@pytest.fixture
def changes(
    watcher: tuple[FolderWatcher, queue.Queue[set[Path]]],
) -> queue.Queue[set[Path]]:
    return watcher[1]


def test_adding_changing_and_removing_files_is_seen_and_others_ignored(
    tmp_path: Path, changes: queue.Queue[set[Path]]
) -> None:
    squads = tmp_path / "squads"
    (squads / "notes.txt").write_text("ignored")
    (squads / "a.yaml").write_text("name: a\n")
    assert changes.get(timeout=WAIT) == {squads / "a.yaml"}
    with (squads / "a.yaml").open("a") as handle:
        handle.write("# more\n")
    assert changes.get(timeout=WAIT) == {squads / "a.yaml"}
    (squads / "a.yaml").unlink()
    assert changes.get(timeout=WAIT) == {squads / "a.yaml"}


def test_an_atomic_replace_is_seen_under_its_final_name(
    tmp_path: Path, changes: queue.Queue[set[Path]]
) -> None:
    squads = tmp_path / "squads"
    (squads / ".a.yaml.tmp").write_text("name: a\n")
    os.replace(squads / ".a.yaml.tmp", squads / "b.yaml")
    assert changes.get(timeout=WAIT) == {squads / "b.yaml"}


def test_folders_added_later_are_watched_one_level_deep_until_removed(
    tmp_path: Path, watcher: tuple[FolderWatcher, queue.Queue[set[Path]]]
) -> None:
    folders, changes = watcher
    workspace = tmp_path / "ws"
    folders.watch(Watch(workspace, lambda p: p.name == "AGENTS.md"))
    (workspace / "tasks" / "t").mkdir(parents=True)
    (workspace / "tasks" / "t" / "AGENTS.md").write_text("deeper: not watched")
    (workspace / "AGENTS.md").write_text("rules")
    assert changes.get(timeout=WAIT) == {workspace / "AGENTS.md"}
    assert folders.folders() == {tmp_path / "squads", workspace}
    folders.unwatch(workspace)
    (workspace / "AGENTS.md").write_text("changed while unwatched")
    (tmp_path / "squads" / "c.yaml").write_text("name: c\n")
    assert changes.get(timeout=WAIT) == {tmp_path / "squads" / "c.yaml"}
