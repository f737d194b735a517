"""The daemon at scale: 200 scheduled squads, none due for months.

Measured in subprocesses of the installed ``squad`` command, each in a fresh temporary home:

* start-up: from spawning ``squad daemon`` to its ``ready`` event, with 200 squads (first
  start, which creates 200 workspaces, and a restart over them) against ``squad --help``
  (the interpreter and CLI start) and against a daemon with no squads;
* idle memory: resident set size a few seconds after ``ready``, with 200 squads and with 0;
  the difference over 200 is the memory one squad costs;
* idle CPU: CPU seconds the daemon uses over ~5 s of wall time while nothing is due
  (heartbeats only), as a fraction of one core.

Run alone with ``python -m bench.daemon_bench``; ``python -m bench`` includes it.
"""

from __future__ import annotations

import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

BIN = Path(sys.executable).parent
SQUADS = 200
IDLE_S = 5.0
_TICKS = os.sysconf("SC_CLK_TCK")

SQUAD_YAML = """\
name: squad-{i:03d}
agents: [{{id: writer, role: Writes}}, {{id: reviewer, role: Reviews}}]
tasks:
  - {{id: draft, description: Draft the page., agent: writer}}
  - {{id: review, description: Review the page., agent: reviewer, depends_on: [draft]}}
schedule: {schedule}
"""


@dataclass(frozen=True)
class DaemonFigures:
    squads: int
    startup_s: float
    restart_s: float
    rss_bytes: int
    cpu_fraction: float


def _schedule(i: int) -> str:
    """Cron or interval schedules, none due during the benchmark."""
    if i % 2:
        return f"{{cron: '{i % 60} {i % 24} 1 1 *', timezone: UTC}}"
    return f"{{interval: {300 + i % 60}d}}"


def _home(root: Path, squads: int) -> dict[str, str]:
    folder = root / "configs" / "squads"
    folder.mkdir(parents=True)
    for i in range(squads):
        (folder / f"squad-{i:03d}.yaml").write_text(SQUAD_YAML.format(i=i, schedule=_schedule(i)))
    return {
        **{k: v for k, v in os.environ.items() if not k.startswith("SQUAD_")},
        "SQUAD_HOME": str(root / "home"),
        "SQUAD_WORKSPACES": str(root / "workspaces"),
        "SQUAD_CONFIGS": str(root / "configs"),
    }


def _ready(log: Path, process: subprocess.Popen[bytes], after: int) -> None:
    """Wait for the ``after``-th ``ready`` event in the daemon's log."""
    deadline = time.monotonic() + 300
    while True:
        if process.poll() is not None:
            raise RuntimeError(f"the daemon exited with {process.returncode} before it was ready")
        if time.monotonic() > deadline:
            raise RuntimeError("the daemon was not ready after 300 s")
        try:
            lines = log.read_text().splitlines()
        except FileNotFoundError:
            lines = []
        if sum(json.loads(line).get("event") == "ready" for line in lines) >= after:
            return
        time.sleep(0.01)


def _rss(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError(f"no VmRSS for pid {pid}")


def _cpu_s(pid: int) -> float:
    """CPU seconds of all the process's threads, to the nanosecond (schedstat), falling
    back to clock ticks (``/proc/PID/stat``) where schedstat is missing."""
    try:
        return sum(
            int((task / "schedstat").read_text().split()[0]) / 1e9
            for task in Path(f"/proc/{pid}/task").iterdir()
        )
    except (FileNotFoundError, ValueError, IndexError):
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / _TICKS  # utime + stime


def _start(env: dict[str, str], cwd: Path, log: Path, nth: int, *args: str) -> tuple[float, int]:
    """Start ``squad daemon ARGS``; seconds to its ``nth`` ``ready`` event, and its pid."""
    begin = time.perf_counter()
    process = subprocess.Popen(
        [str(BIN / "squad"), "daemon", *args],
        env=env,
        cwd=cwd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        _ready(log, process, nth)
    except BaseException:
        process.kill()
        process.wait()
        raise
    return time.perf_counter() - begin, process.pid


def _stop(pid: int) -> None:
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + 60
    while Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:
        try:
            os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            break
        time.sleep(0.05)


def measure_daemon(squads: int) -> DaemonFigures:
    """Start a daemon over ``squads`` generated squads, idle it, restart it."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        env = _home(root, squads)
        log = root / "home" / "daemon.jsonl"
        startup, pid = _start(env, root, log, 1)
        time.sleep(1.0)  # let start-up's garbage settle
        cpu_before, wall_before = _cpu_s(pid), time.monotonic()
        time.sleep(IDLE_S)
        cpu = (_cpu_s(pid) - cpu_before) / (time.monotonic() - wall_before)
        rss = _rss(pid)
        _stop(pid)
        restart, pid = _start(env, root, log, 2)
        _stop(pid)
    return DaemonFigures(squads, startup, restart, rss, cpu)


def help_time(repeat: int = 5) -> float:
    samples = []
    for _ in range(repeat):
        begin = time.perf_counter()
        subprocess.run([str(BIN / "squad"), "--help"], check=True, capture_output=True)
        samples.append(time.perf_counter() - begin)
    return statistics.median(samples)


def measure() -> tuple[float, DaemonFigures, DaemonFigures]:
    """(``squad --help`` time, figures with no squads, figures with 200)."""
    return help_time(), measure_daemon(0), measure_daemon(SQUADS)


def report(baseline: float, empty: DaemonFigures, full: DaemonFigures) -> list[str]:
    per_squad = (full.rss_bytes - empty.rss_bytes) / full.squads
    return [
        f"daemon start, {full.squads} squads (first): {full.startup_s:.2f}s = "
        f"{full.startup_s / baseline:.1f}x squad --help ({baseline:.2f}s), "
        f"{full.startup_s / empty.startup_s:.1f}x no squads ({empty.startup_s:.2f}s)",
        f"daemon restart, {full.squads} squads: {full.restart_s:.2f}s = "
        f"{full.restart_s / baseline:.1f}x squad --help, "
        f"{full.restart_s / empty.restart_s:.1f}x no squads ({empty.restart_s:.2f}s)",
        f"daemon idle RSS: {full.rss_bytes / 2**20:.1f} MiB with {full.squads} squads, "
        f"{empty.rss_bytes / 2**20:.1f} MiB with none: {per_squad / 1024:.1f} KiB per squad",
        f"daemon idle CPU over {IDLE_S:.0f}s: {full.cpu_fraction * 100:.2f}% of a core with "
        f"{full.squads} squads, {empty.cpu_fraction * 100:.2f}% with none",
    ]


def main() -> int:
    for line in report(*measure()):
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
