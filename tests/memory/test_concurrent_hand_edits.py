"""A person editing memory files while squad writes them: squad never clobbers their lines.

The person's writer is a real separate process appending with ``>>`` semantics (open in
append mode, write a line, close): it takes no lock, as an editor or a shell does not.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from datetime import date
from pathlib import Path

import pytest

from squad import fsutil
from squad.errors import StaleWriteError
from squad.memory.daily import DailyLog
from squad.memory.file_io import WRITE_ATTEMPTS
from squad.memory.files import MemoryFile
from squad.workspace.layout import memory_seed

_WRITER = r"""
import os, sys, time
path, stop, started = sys.argv[1], sys.argv[2], sys.argv[3]
lines_first, pause_s = int(sys.argv[4]), float(sys.argv[5])
count = 0
while not os.path.exists(stop):
    with open(path, "a", encoding="utf-8") as f:
        f.write(f"- hand line {count}\n")
    count += 1
    if count == lines_first:
        open(started, "w").close()
    time.sleep(pause_s)
print(count)
"""


def person_appending(
    path: Path, tmp: Path, *, lines_first: int = 20, pause_s: float = 0.002
) -> tuple[subprocess.Popen[str], Path, Path]:
    """A separate process appending ``- hand line N`` to ``path`` every ``pause_s`` until
    ``stop`` exists (``started`` once it wrote ``lines_first``): the writer, stop, started."""
    stop, started = tmp / "stop", tmp / "started"
    args = [str(path), str(stop), str(started), str(lines_first), str(pause_s)]
    writer = subprocess.Popen(
        [sys.executable, "-c", _WRITER, *args],
        stdout=subprocess.PIPE,
        text=True,
    )
    return writer, stop, started


def _wait_for(flag: Path, writer: subprocess.Popen[str]) -> None:
    while not flag.exists():
        assert writer.poll() is None, "the person's writer died"


def _hand_lines(text: str) -> set[int]:
    return {int(line.rsplit(" ", 1)[1]) for line in text.splitlines() if "hand line" in line}


@pytest.mark.slow
def test_lines_a_person_appends_while_squad_writes_memory_md_are_all_kept(
    tmp_path: Path,
) -> None:
    workspace = tmp_path / "ws"
    (workspace / "agents" / "planner").mkdir(parents=True)
    path = workspace / "agents" / "planner" / "memory.md"
    path.write_text(memory_seed())
    file = MemoryFile(workspace, "planner", cap_bytes=10 * 1024 * 1024)

    def squad_writes() -> None:
        for n in range(40):
            if n % 5 == 4:
                file.replace("Coding Rules", f"- rule set {n}", actor="agent:planner")
            else:
                file.append("Decisions", f"- squad decision {n}", actor="agent:planner")

    text, written = _while_a_person_appends(path, tmp_path, squad_writes)
    for n in range(40):
        if n % 5 != 4:
            assert f"- squad decision {n}\n" in text
    assert "- rule set 39" in file.read("Coding Rules")
    assert written > 40  # the person really wrote during squad's writes


@pytest.mark.slow
def test_lines_a_person_appends_to_a_daily_log_while_squad_appends_are_all_kept(
    tmp_path: Path,
) -> None:
    workspace = tmp_path / "ws"
    (workspace / "agents" / "planner" / "daily").mkdir(parents=True)
    log = DailyLog(workspace, "planner", cap_bytes=10 * 1024 * 1024)
    day = date(2026, 1, 2)
    path = log.path_for(day)
    path.write_text("# 2026-01-02\n")

    def squad_writes() -> None:
        for n in range(40):
            log.append(f"squad entry {n}", actor="agent:planner", day=day)

    text, _ = _while_a_person_appends(path, tmp_path, squad_writes)
    for n in range(40):
        assert f"squad entry {n}\n" in text


def _while_a_person_appends(
    path: Path, tmp_path: Path, squad_writes: Callable[[], None]
) -> tuple[str, int]:
    """Run ``squad_writes`` while a process appends numbered lines to ``path``; the file's
    text after, and how many lines the person wrote (every one of them must be in it)."""
    writer, stop, started = person_appending(path, tmp_path)
    try:
        _wait_for(started, writer)
        squad_writes()
    finally:
        stop.touch()
        out, _ = writer.communicate(timeout=60)
    written = int(out)
    text = path.read_text()
    missing = set(range(written)) - _hand_lines(text)
    assert not missing, (
        f"{len(missing)} of {written} hand-appended lines lost: {sorted(missing)[:10]}"
    )
    return text, written


def _seeded(tmp_path: Path) -> Path:
    workspace = tmp_path / "ws"
    (workspace / "agents" / "planner").mkdir(parents=True)
    path = workspace / "agents" / "planner" / "memory.md"
    path.write_text(memory_seed())
    return path


def _right_after_the_check(
    monkeypatch: pytest.MonkeyPatch, person: Callable[[], None]
) -> list[bool]:
    """Make ``person`` act once, in the instant after squad's check and before its rename:
    what squad's check saw is returned, one entry per check."""
    checked = fsutil._changed
    seen: list[bool] = []

    def check_then_person(*args: object) -> bool:
        changed = checked(*args)  # type: ignore[arg-type]
        if not seen:
            person()
        seen.append(changed)
        return changed

    monkeypatch.setattr(fsutil, "_changed", check_then_person)
    return seen


def test_a_line_appended_between_squads_check_and_its_rename_is_carried_over(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The instant no check can cover: the person's line lands in the file the rename
    replaces. squad still holds that file open, finds the line and appends it to the new one."""
    path = _seeded(tmp_path)

    def person() -> None:
        with path.open("a") as f:
            f.write("- hand line late\n")

    seen = _right_after_the_check(monkeypatch, person)
    MemoryFile(path.parents[2], "planner").append("Decisions", "- squad", actor="agent:a")
    text = path.read_text()
    assert text.endswith("- hand line late\n") and "- squad\n" in text
    assert seen == [False]  # the check saw nothing: the line was carried over after


def test_a_rewrite_in_place_between_squads_check_and_its_rename_is_merged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _seeded(tmp_path)
    edited = memory_seed().replace("# Project Context\n", "# Project Context\n- by hand\n")
    assert edited != memory_seed()

    def person() -> None:  # an editor that saves in place: truncate, write it all
        with path.open("r+") as f:
            f.truncate(0)
            f.write(edited)

    seen = _right_after_the_check(monkeypatch, person)
    file = MemoryFile(path.parents[2], "planner")
    file.append("Decisions", "- squad", actor="agent:a")
    assert file.read("Project Context").startswith("- by hand\n")
    assert file.read("Decisions").startswith("- squad\n")
    assert seen == [False, False]  # one write, then one that carried the person's change


@pytest.mark.parametrize("kind", ["memory"])
def test_a_file_someone_keeps_replacing_is_a_stale_write_error_and_loses_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    workspace = tmp_path / "ws"
    (workspace / "agents" / "planner" / "daily").mkdir(parents=True)
    day = date(2026, 1, 2)
    if kind == "memory":
        path = workspace / "agents" / "planner" / "memory.md"
        path.write_text(memory_seed())
    else:
        path = DailyLog(workspace, "planner").path_for(day)
        path.write_text("# 2026-01-02\n")
    before = path.read_text()
    written_temp = fsutil._write_temp
    count = 0

    def person_saves_at_every_try(target: Path, data: bytes, **kwargs: object) -> Path:
        nonlocal count
        count += 1
        saved = target.with_name("editor-save")  # an editor saving: a new file renamed over
        saved.write_text(before + "".join(f"- hand line {n}\n" for n in range(count)))
        saved.replace(target)
        return written_temp(target, data, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(fsutil, "_write_temp", person_saves_at_every_try)
    with pytest.raises(StaleWriteError, match="kept changing while squad wrote it"):
        if kind == "memory":
            MemoryFile(workspace, "planner").append("Decisions", "- squad", actor="agent:a")
        else:
            DailyLog(workspace, "planner").append("squad", actor="agent:a", day=day)
    assert count == WRITE_ATTEMPTS
    assert path.read_text() == before + "".join(f"- hand line {n}\n" for n in range(count))
    assert not [p for p in path.parent.iterdir() if p.name.endswith(".tmp")]


_HOLDER = r"""
import sys, time
path, opened = sys.argv[1], sys.argv[2]
with open(path, "a", encoding="utf-8") as f:  # opened before squad's write, written after
    open(opened, "w").close()
    time.sleep(0.3)
    f.write("- hand line held open\n")
"""


def _held_open_by_a_person(path: Path, tmp_path: Path) -> subprocess.Popen[str]:
    opened = tmp_path / "opened"
    holder = subprocess.Popen([sys.executable, "-c", _HOLDER, str(path), str(opened)], text=True)
    _wait_for(opened, holder)
    return holder


@pytest.mark.slow
def test_a_line_written_through_a_memory_md_descriptor_opened_before_squads_write_is_kept(
    tmp_path: Path,
) -> None:
    path = _seeded(tmp_path)
    holder = _held_open_by_a_person(path, tmp_path)
    MemoryFile(path.parents[2], "planner").append("Decisions", "- squad", actor="agent:a")
    assert holder.wait(timeout=30) == 0
    text = path.read_text()
    assert "- hand line held open\n" in text and "- squad\n" in text


def test_a_line_written_through_a_daily_log_descriptor_opened_before_squads_append_is_kept(
    tmp_path: Path,
) -> None:
    log = DailyLog(tmp_path / "ws", "planner")
    day = date(2026, 1, 2)
    path = log.path_for(day)
    path.parent.mkdir(parents=True)
    path.write_text("# 2026-01-02\n")
    with path.open("a", encoding="utf-8") as person:
        log.append("squad entry", actor="agent:planner", day=day)
        person.write("- hand line held open\n")
    text = path.read_text()
    assert "- hand line held open\n" in text and "squad entry\n" in text


def test_a_writer_that_keeps_the_replaced_file_open_delays_squad_only_so_long(
    tmp_path: Path,
) -> None:
    path = tmp_path / "f.md"
    path.write_text("old\n")
    fd = os.open(path, os.O_RDONLY)
    try:
        with path.open("a") as forever:  # held for the whole wait
            forever.write("more\n")
            forever.flush()
            assert fsutil.read_when_no_writer(fd, timeout_s=0.2) == b"old\nmore\n"
    finally:
        os.close(fd)
