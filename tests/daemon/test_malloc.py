"""The daemon caps glibc's malloc arenas before it starts a thread."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

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
