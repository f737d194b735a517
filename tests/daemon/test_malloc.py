"""The daemon caps glibc's malloc arenas before it starts a thread."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.slow  # every test here starts a process

PROBE = "from squad.daemon.malloc import limit_arenas; print(limit_arenas())"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt")
def test_the_arena_cap_takes_unless_the_environment_already_set_one() -> None:
    env = {k: v for k, v in os.environ.items() if k != "MALLOC_ARENA_MAX"}
    took = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True)
    assert took.stdout.strip() == "True", took.stderr
    told = subprocess.run(
        [sys.executable, "-c", PROBE],
        env={**env, "MALLOC_ARENA_MAX": "4"},
        capture_output=True,
        text=True,
    )
    assert told.stdout.strip() == "False", told.stderr


FRAGMENTS = """
from squad.daemon.malloc import give_back

def rss():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024

# 200 MB of small blocks on the heap, every 50th kept: the heap's top stays in use, so what
# is freed below it is not returned by free() alone.
blocks = [bytearray(2000) for _ in range(100_000)]
kept = blocks[::50]
del blocks
held = rss()
released = give_back()
print(released, held - rss())
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc_trim")
def test_giving_back_returns_the_pages_freed_below_the_top_of_the_heap() -> None:
    done = subprocess.run(
        [sys.executable, "-c", FRAGMENTS], capture_output=True, text=True, timeout=60
    )
    released, returned = done.stdout.split()
    assert released == "True", done.stderr
    assert int(returned) > 100 * 1024 * 1024  # most of the 200 MB freed, back to the system
