"""Time to ready with many squads, and the daemon's idle threads (issue 30).

Measured in subprocesses of the installed ``squad daemon --no-http``, each in a fresh
temporary home (:mod:`bench.daemon_bench`'s squads: none due during the benchmark): from
spawning the daemon to its ``ready`` event, at the first start (which creates the
workspaces) and at a restart over them, with 0 and with 200 squads; and the number of
threads of the idle daemon a second after ``ready``. The target is a restart with 200
squads <= 1.5x a restart with none, and a thread count that does not grow with squads.

Run alone with ``python -m bench.daemon_ready_bench`` (``--json`` for the figures).
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.daemon_bench import _home, _start, _stop, help_time
from bench.support import report

SQUADS = 200
TARGET = 1.5


def _threads(pid: int) -> int:
    return sum(1 for _ in Path(f"/proc/{pid}/task").iterdir())


def measure_home(squads: int) -> dict[str, float]:
    """First start, idle threads, restart (the ``ready`` times in seconds)."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        env = _home(root, squads)
        log = Path(env["SQUAD_HOME"]) / "daemon.jsonl"
        first, pid = _start(env, root, log, 1, "--no-http")
        time.sleep(1.0)
        threads = _threads(pid)
        _stop(pid)
        restart, pid = _start(env, root, log, 2, "--no-http")
        time.sleep(1.0)
        restart_threads = _threads(pid)
        _stop(pid)
    return {
        "first_s": first,
        "restart_s": restart,
        "threads": threads,
        "restart_threads": restart_threads,
    }


def measure() -> dict[str, Any]:
    return {
        "squads": SQUADS,
        "help_s": help_time(),
        "empty": measure_home(0),
        "full": measure_home(SQUADS),
    }


def results(figures: dict[str, Any]) -> list[Any]:
    from bench.__main__ import Result

    empty, full = figures["empty"], figures["full"]
    n = figures["squads"]
    return [
        Result(
            f"daemon restart, {n} squads",
            full["restart_s"],
            "no squads",
            empty["restart_s"],
            TARGET,
        ),
        Result(
            f"daemon first start, {n} squads",
            full["first_s"],
            "no squads",
            empty["first_s"],
            TARGET,
        ),
    ]


def notes(figures: dict[str, Any]) -> list[str]:
    empty, full = figures["empty"], figures["full"]
    n = figures["squads"]
    return [
        f"squad --help {figures['help_s']:.2f}s; ready: {empty['first_s']:.2f}s first / "
        f"{empty['restart_s']:.2f}s restart with no squads, {full['first_s']:.2f}s / "
        f"{full['restart_s']:.2f}s with {n}",
        f"idle threads: {empty['threads']} with no squads, {full['threads']} with {n} "
        f"(after a restart: {empty['restart_threads']} and {full['restart_threads']})",
    ]


def main() -> int:
    return report(measure(), results, notes)


if __name__ == "__main__":
    sys.exit(main())
