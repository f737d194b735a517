"""Atomic file writes: readers see the old file or the new one, and nothing is left behind."""

from __future__ import annotations

import json
import multiprocessing
import os
import stat
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from squad.fsutil import (
    IN_PLACE_MAX,
    atomic_write,
    create_new,
    durable_later,
    new_file_over,
    rewrite_in_place,
)


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


@pytest.mark.parametrize("durable", [True, False])
def test_atomic_write_replaces_the_file_and_leaves_no_temporary(
    tmp_path: Path, durable: bool
) -> None:
    target = tmp_path / "status.json"
    atomic_write(target, b"old", durable=durable)
    atomic_write(target, b"new" * 10_000, durable=durable)
    assert target.read_bytes() == b"new" * 10_000
    assert leftovers(tmp_path) == []


def test_a_failed_write_keeps_the_old_file_and_removes_its_temporary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "output.md"
    atomic_write(target, b"finished work")

    def full_disk(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", full_disk)  # the os module fsutil uses
    with pytest.raises(OSError, match="No space"):
        atomic_write(target, b"half")
    assert target.read_bytes() == b"finished work"
    assert leftovers(tmp_path) == []


def test_threads_writing_one_file_leave_one_whole_version(tmp_path: Path) -> None:
    target = tmp_path / "status.json"
    versions = [bytes([65 + i]) * 50_000 for i in range(8)]

    def write(data: bytes) -> None:
        for _ in range(20):
            atomic_write(target, data, durable=False)

    threads = [threading.Thread(target=write, args=(v,)) for v in versions]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert target.read_bytes() in versions
    assert leftovers(tmp_path) == []


def _write_repeatedly(target: Path, data: bytes, rounds: int) -> None:
    for _ in range(rounds):
        atomic_write(target, data, durable=False)


def _write_from_threads(target: str, versions: list[bytes], rounds: int) -> None:
    """One thread per version, all writing ``target`` at once; raises what any of them raised."""
    with ThreadPoolExecutor(len(versions)) as pool:
        futures = [pool.submit(_write_repeatedly, Path(target), v, rounds) for v in versions]
        for future in futures:
            future.result()


def _fork_and_write(target: str, versions: list[bytes], rounds: int) -> None:
    """Write once, fork a child per further version, and have the parent and every child
    write ``target`` at once straight after the fork; raises if any child failed."""
    path = Path(target)
    atomic_write(path, versions[0], durable=False)  # this process has written before forking
    children = []
    for data in versions[1:]:
        pid = os.fork()
        if pid == 0:  # the child: same thread id as its parent, so only its pid tells them apart
            ok = False
            try:
                _write_repeatedly(path, data, rounds)
                ok = True
            finally:
                os._exit(0 if ok else 1)
        children.append(pid)
    _write_repeatedly(path, versions[0], rounds)
    failed = [pid for pid in children if os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) != 0]
    if failed:
        raise RuntimeError(f"forked writers {failed} failed")


def versions_of(count: int) -> list[bytes]:
    return [bytes([65 + i]) * 50_000 for i in range(count)]


@pytest.mark.slow
def test_processes_and_their_threads_writing_one_file_leave_one_whole_version(
    tmp_path: Path,
) -> None:
    target = tmp_path / "status.json"
    versions = versions_of(12)
    atomic_write(target, versions[0])
    context = multiprocessing.get_context("spawn")
    writers = [
        context.Process(target=_write_from_threads, args=(str(target), versions[i : i + 3], 30))
        for i in range(0, 12, 3)
    ]
    for process in writers:
        process.start()
    while any(process.is_alive() for process in writers):
        assert target.read_bytes() in versions  # a reader meanwhile sees whole versions only
    for process in writers:
        process.join()
    assert [process.exitcode for process in writers] == [0, 0, 0, 0]
    assert target.read_bytes() in versions
    assert leftovers(tmp_path) == []


@pytest.mark.slow
def test_forked_children_writing_right_after_the_fork_do_not_collide_with_their_parent(
    tmp_path: Path,
) -> None:
    target = tmp_path / "memory.md"
    versions = versions_of(4)
    # Forked inside a fresh spawned process: this one may run threads, and forking those is
    # unsafe.
    process = multiprocessing.get_context("spawn").Process(
        target=_fork_and_write, args=(str(target), versions, 100)
    )
    process.start()
    process.join(120)
    assert process.exitcode == 0
    assert target.read_bytes() in versions
    assert leftovers(tmp_path) == []


def test_create_new_never_clobbers(tmp_path: Path) -> None:
    target = tmp_path / "plan-001.md"
    assert create_new(target, b"first") is True
    assert create_new(target, b"second") is False
    assert target.read_bytes() == b"first"
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize("mode", [0o600, 0o640, 0o444, 0o755])
def test_atomic_write_keeps_the_permission_bits_of_the_file_it_replaces(
    tmp_path: Path, mode: int
) -> None:
    target = tmp_path / "memory.md"
    target.write_bytes(b"old")
    target.chmod(mode)
    atomic_write(target, b"new")
    assert target.read_bytes() == b"new"
    assert stat.S_IMODE(target.stat().st_mode) == mode
    assert leftovers(tmp_path) == []


def test_a_new_file_gets_the_usual_mode(tmp_path: Path) -> None:
    umask = os.umask(0o022)
    try:
        atomic_write(tmp_path / "new.md", b"x")
        assert create_new(tmp_path / "created.md", b"x") is True
    finally:
        os.umask(umask)
    assert stat.S_IMODE((tmp_path / "new.md").stat().st_mode) == 0o644
    assert stat.S_IMODE((tmp_path / "created.md").stat().st_mode) == 0o644


def test_create_new_leaves_the_folder_untouched_when_the_file_exists(tmp_path: Path) -> None:
    """No temporary file made and removed (and no fsync) for a file that is there: a daemon
    start asks this of every agent's memory.md."""
    target = tmp_path / "memory.md"
    target.write_text("kept\n")
    os.utime(tmp_path, ns=(1_000_000_000, 1_000_000_000))
    assert create_new(target, b"seed\n") is False
    assert target.read_text() == "kept\n"
    assert tmp_path.stat().st_mtime_ns == 1_000_000_000


def test_a_new_file_over_an_old_one_holds_the_new_bytes_with_the_old_permissions(
    tmp_path: Path,
) -> None:
    target = tmp_path / "status.json"
    new_file_over(target, b"first")  # none there yet: made
    assert target.read_bytes() == b"first"
    target.chmod(0o600)
    new_file_over(target, b"second, longer than the first")
    assert target.read_bytes() == b"second, longer than the first"
    assert (target.stat().st_mode & 0o777) == 0o600
    assert leftovers(tmp_path) == []


def test_a_rewrite_in_place_keeps_the_file_and_holds_exactly_the_new_text(
    tmp_path: Path,
) -> None:
    target = tmp_path / "tasks" / "t1" / "status.json"
    first, shorter = b'{"status": "running", "output": null}\n', b'{"status": "done"}\n'
    rewrite_in_place(target, first)  # its folder made too
    made = target.stat()
    rewrite_in_place(target, shorter)
    assert target.read_bytes() == shorter  # the padding a kill might have left is cut
    rewrite_in_place(target, b'{"status": "done", "output": "tasks/t1/output.md"}\n')
    assert json.loads(target.read_bytes())["output"] == "tasks/t1/output.md"
    assert target.stat().st_ino == made.st_ino  # the same file, written over
    assert sorted(p.name for p in target.parent.iterdir()) == ["status.json"]


def test_a_text_past_a_page_is_written_as_a_new_file_of_its_own_length(tmp_path: Path) -> None:
    target = tmp_path / "status.json"
    long = b'{"error": "' + b"x" * IN_PLACE_MAX + b'"}\n'
    rewrite_in_place(target, b'{"status": "running"}\n')
    rewrite_in_place(target, long)
    assert target.read_bytes() == long
    rewrite_in_place(target, b'{"status": "failed"}\n')  # from a long text: a new file too
    assert target.read_bytes() == b'{"status": "failed"}\n'


def test_a_reader_of_a_file_rewritten_in_place_always_finds_it_whole_in_size(
    tmp_path: Path,
) -> None:
    target = tmp_path / "status.json"
    texts = [b'{"status": "running"}\n', b'{"status": "done", "rounds": 1}\n']
    rewrite_in_place(target, texts[0])
    stop = threading.Event()
    sizes: list[int] = []

    def read() -> None:
        while not stop.is_set():
            sizes.append(len(target.read_bytes()))  # raises if the file is ever missing

    reader = threading.Thread(target=read)
    reader.start()
    for i in range(2000):
        rewrite_in_place(target, texts[i % 2])
    stop.set()
    reader.join()
    assert sizes and min(sizes) >= len(texts[0])


def test_a_file_made_durable_later_waits_for_its_fsync_and_says_when_it_failed(
    tmp_path: Path,
) -> None:
    target = tmp_path / "output.md"
    target.write_bytes(b"done\n")
    durable_later(target)()  # returns once the file and its folder are fsynced
    missing = durable_later(tmp_path / "gone.md")
    with pytest.raises(FileNotFoundError):
        missing()
