"""Giving memory back costs no process: the C library's functions are found in-process, once."""

from __future__ import annotations

import subprocess
import sys

import pytest

from squad.daemon import malloc


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc_trim")
def test_giving_memory_back_every_minute_starts_no_process(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    started: list[object] = []

    def refuse(*args: object, **kwargs: object) -> None:
        started.append(args)
        raise AssertionError("a process was started")

    monkeypatch.setattr(subprocess.Popen, "__init__", refuse)
    malloc._libc_function.cache_clear()
    results = [malloc.give_back() for _ in range(3)]
    assert started == []
    assert all(isinstance(result, bool) for result in results)
    assert malloc._libc_function(("malloc_trim"), (malloc.ctypes.c_size_t,)) is not None
    assert malloc._libc_function.cache_info().misses == 1  # looked up once
