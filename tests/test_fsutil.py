"""Atomic file writes: readers see the old file or the new one, and nothing is left behind."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from squad import fsutil
from squad.fsutil import atomic_write, create_new


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

    monkeypatch.setattr(fsutil.os, "fsync", full_disk)
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


def test_temporary_names_differ_between_threads_and_after_a_fork(tmp_path: Path) -> None:
    target = tmp_path / "memory.md"
    names = {fsutil._temp_name(target)}
    thread = threading.Thread(target=lambda: names.add(fsutil._temp_name(target)))
    thread.start()
    thread.join()
    assert len(names) == 2
    # A forked child has the parent's thread id; its pid gives it a token of its own.
    assert fsutil._token(os.getpid()) == fsutil._token(os.getpid())
    assert fsutil._token(os.getpid()) != fsutil._token(os.getpid() + 1)


def test_create_new_never_clobbers(tmp_path: Path) -> None:
    target = tmp_path / "plan-001.md"
    assert create_new(target, b"first") is True
    assert create_new(target, b"second") is False
    assert target.read_bytes() == b"first"
    assert leftovers(tmp_path) == []
