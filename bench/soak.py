"""A daemon left running with many squads on short intervals and retention windows of
minutes: does everything it keeps plateau, and does every scheduled run happen once?

``python -m bench.soak [--squads 100] [--minutes 60] [--json]`` writes N squads like the
examples into a fresh home (offline model): every fourth has an approval gate (``approval:
true`` on its last task, and nobody approves), every fourth has memory off, the others
memory on (a quarter of them hierarchical), on intervals spread between ``--interval-min``
and ``--interval-max``. It starts ``squad daemon`` as a subprocess with the retention job
every minute and every ``daemon.retention.*_days`` the settings accept as a fraction set to
``--retention-minutes`` (the run logs to 1 MB a workspace, the daemon log to 2 files of
1 MB), then samples every ``--sample-s`` seconds: the daemon's RSS, open descriptors and
threads (``/proc``), the bytes of the home, ``squad.db``, ``checkpoints.sqlite``, the
workspaces (their ``.git`` apart), the rows of every table of both files (opened
read-only), the files in the workspaces, the runs waiting for approval (all, and the most of one
squad), and every
``--status-every`` seconds how long ``squad status`` takes. It stops the daemon with
SIGTERM and reports each metric's start, end and slope per hour, over the whole run and
each half, and whether it plateaued (:mod:`bench.soak_report` says how, and what slope
is *tiny* for each metric), and the runs the schedule asked for against those the store
recorded: lost, duplicated and left running must all be 0.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.soak_probe import LogTail, process_metrics, run_rows, table_rows, tree_size
from bench.soak_report import Point, account, table, trend

BIN = Path(sys.executable).parent

_AGENTS = """\
agents:
  - {{id: planner, role: Breaks the goal into small tasks, lead: true}}
  - {{id: writer, role: Writes clear pages}}
  - {{id: reviewer, role: Reviews pages for accuracy}}
"""

_TASKS = """\
tasks:
  - {{id: outline, description: Outline the {name} guide., agent: planner}}
  - {{id: draft, description: Write the {name} guide., agent: writer, depends_on: [outline]}}
  - {{id: review, description: Review the {name} draft., agent: reviewer, depends_on: [draft]}}
  - {{id: publish, description: Publish the {name} guide., agent: writer,
      depends_on: [review]{gate}}}
"""

KINDS = ("gated", "memory-off", "memory-on", "hierarchical")
"""The squads' kinds, in turn: squad ``n`` is of kind ``KINDS[n % 4]``."""


def squad_yaml(name: str, kind: str, interval_s: int) -> str:
    """An example-like squad definition of one of :data:`KINDS`."""
    head = f"name: {name}\ndescription: A soak squad ({kind})\ngoal: Keep {name} current.\n"
    memory = "memory: {enabled: false}\n" if kind == "memory-off" else ""
    if kind == "hierarchical":
        body = "process: hierarchical\n" + _AGENTS.format()
    else:
        gate = ", approval: true" if kind == "gated" else ""
        body = _AGENTS.format() + _TASKS.format(name=name, gate=gate)
    return head + body + memory + f"schedule: {{interval: {interval_s}s}}\n"


def intervals(squads: int, low: int, high: int) -> dict[str, int]:
    """Each squad's interval in seconds, spread evenly over [low, high]."""
    span = max(0, high - low)
    return {
        f"soak-{n:03d}": low + (span * n // max(1, squads - 1) if squads > 1 else 0)
        for n in range(squads)
    }


def retention_settings(window_minutes: float) -> tuple[dict[str, Any], list[str]]:
    """The ``daemon.retention`` section, and the ``*_days`` fields it sets to the window
    (those the installed squad accepts as fractions: others keep their defaults)."""
    from pydantic import ValidationError

    from squad.settings import RetentionSettings

    section: dict[str, Any] = {"logs_max_mb": 1, "daemon_log_mb": 1, "daemon_log_files": 2}
    applied = []
    days = window_minutes / (24 * 60)
    for name in RetentionSettings.model_fields:
        if not name.endswith("_days"):
            continue
        try:
            RetentionSettings.model_validate({name: days})
        except ValidationError:
            continue
        section[name] = days
        applied.append(name)
    return section, applied


@dataclass
class Samples:
    """Every metric's points, the runs seen in the store and the daemon's events."""

    series: dict[str, list[Point]] = field(default_factory=dict)
    runs: dict[str, dict[str, Any]] = field(default_factory=dict)
    events: list[dict[str, Any]] = field(default_factory=list)
    status_s: list[float] = field(default_factory=list)
    status_failures: int = 0

    def add(self, t: float, values: dict[str, float]) -> None:
        for metric, value in values.items():
            self.series.setdefault(metric, []).append((t, float(value)))


def _timed(command: list[str], env: dict[str, str]) -> tuple[float, int]:
    started = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, check=False)
    return time.perf_counter() - started, done.returncode


class Soak:
    """One soak: a home, a daemon subprocess, and the samples taken from outside."""

    def __init__(
        self,
        root: Path,
        *,
        squads: int,
        interval_range: tuple[int, int],
        retention_minutes: float,
    ) -> None:
        from squad.settings import Settings

        self.root = root
        self.intervals = intervals(squads, *interval_range)
        configs = root / "configs"
        (configs / "squads").mkdir(parents=True)
        retention, self.applied = retention_settings(retention_minutes)
        daemon = {
            "http": {"enabled": False},
            "retention_cron": "* * * * *",
            "retention": retention,
        }
        (configs / "settings.yaml").write_text(json.dumps({"daemon": daemon}) + "\n")
        self.kinds = {}
        for n, (name, seconds) in enumerate(self.intervals.items()):
            self.kinds[name] = KINDS[n % len(KINDS)]
            text = squad_yaml(name, self.kinds[name], seconds)
            (configs / "squads" / f"{name}.yaml").write_text(text)
        self.env = {
            **{k: v for k, v in os.environ.items() if not k.startswith("SQUAD_")},
            "SQUAD_HOME": str(root / "home"),
            "SQUAD_WORKSPACES": str(root / "workspaces"),
            "SQUAD_CONFIGS": str(configs),
            "HOME": str(root),
        }
        settings = Settings.load(self.env)
        self.home = settings.home
        self.workspaces = settings.workspaces
        self.database = self.home / "squad.db"
        self.checkpoints = self.home / "checkpoints.sqlite"
        self.samples = Samples()
        self._log = LogTail(self.home / "daemon.jsonl")

    def help_s(self, repeat: int = 3) -> float:
        return statistics.median(
            _timed([str(BIN / "squad"), "--help"], self.env)[0] for _ in range(repeat)
        )

    def start(self, timeout_s: float = 300) -> subprocess.Popen[bytes]:
        """``squad daemon``, once it logged ``ready``."""
        with (self.root / "daemon.out").open("wb") as out:
            daemon = subprocess.Popen(
                [str(BIN / "squad"), "daemon"], env=self.env, stdout=out, stderr=subprocess.STDOUT
            )
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            self.samples.events.extend(self._log.read())
            if any(e.get("event") == "ready" for e in self.samples.events):
                return daemon
            if daemon.poll() is not None:
                break
            time.sleep(0.2)
        daemon.kill()
        daemon.wait()
        raise RuntimeError(
            f"squad daemon was not ready in {timeout_s:.0f}s: "
            + (self.root / "daemon.out").read_text(errors="replace")[-2000:]
        )

    def sample(self, t: float, pid: int, *, status: bool) -> None:
        values: dict[str, float] = dict(process_metrics(pid))
        values["home_bytes"] = tree_size(self.home)[0]
        # The daemon's log is bounded by rotation (20 MB a file, 3 kept), not by retention.
        logs = sum(_size(p) for p in self.home.glob("daemon.jsonl*"))
        values["daemon_log_bytes"] = logs
        values["home_without_log_bytes"] = values["home_bytes"] - logs
        values["db_bytes"] = _sqlite_bytes(self.database)
        values["checkpoints_bytes"] = _sqlite_bytes(self.checkpoints)
        workspace_bytes, workspace_files = tree_size(self.workspaces, skip=".git")
        values["workspaces_bytes"] = workspace_bytes
        values["workspace_files"] = workspace_files
        values["git_bytes"] = sum(
            tree_size(folder / ".git")[0] for folder in _folders(self.workspaces)
        )
        for name, rows in table_rows(self.database).items():
            values[f"rows.{name}"] = rows
        for name, rows in table_rows(self.checkpoints).items():
            values[f"rows.checkpoints.{name}"] = rows
        runs = run_rows(self.database)
        self.samples.runs.update(runs)
        waiting = Counter(
            run["squad"] for run in runs.values() if run["status"] == "awaiting_approval"
        )
        values["approvals_waiting"] = sum(waiting.values())
        values["approvals_waiting_max_per_squad"] = max(waiting.values(), default=0)
        if status:
            took, code = _timed([str(BIN / "squad"), "status"], self.env)
            if code == 0:
                values["status_latency_s"] = took
                self.samples.status_s.append(took)
            else:
                self.samples.status_failures += 1
        self.samples.add(t, values)
        self.samples.events.extend(self._log.read())

    def finish(self) -> None:
        """After the daemon exited: the last events and the runs as it left them."""
        self.samples.events.extend(self._log.read())
        self.samples.runs.update(run_rows(self.database))


def _sqlite_bytes(path: Path) -> int:
    return sum(
        p.stat().st_size
        for p in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm"))
        if p.exists()
    )


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:  # rotated away meanwhile
        return 0


def _folders(root: Path) -> list[Path]:
    try:
        return [entry for entry in root.iterdir() if entry.is_dir()]
    except OSError:
        return []


def soak(
    squads: int,
    minutes: float,
    *,
    interval_range: tuple[int, int] = (60, 180),
    retention_minutes: float = 5.0,
    sample_s: float = 5.0,
    status_every_s: float = 30.0,
    keep: bool = False,
    progress: Callable[[str], None] = lambda line: None,
) -> dict[str, Any]:
    """Run one soak and return its report (see the module docstring)."""
    root = Path(tempfile.mkdtemp(prefix="squad-soak-"))
    try:
        run = Soak(
            root,
            squads=squads,
            interval_range=interval_range,
            retention_minutes=retention_minutes,
        )
        help_before = run.help_s()
        launched = time.monotonic()
        daemon = run.start()
        ready_s = time.monotonic() - launched
        progress(f"daemon ready in {ready_s:.1f}s; sampling for {minutes:g} min in {root}")
        started = time.monotonic()
        next_status = 0.0
        try:
            while (elapsed := time.monotonic() - started) < minutes * 60:
                if daemon.poll() is not None:
                    break
                run.sample(elapsed, daemon.pid, status=elapsed >= next_status)
                if elapsed >= next_status:
                    next_status = elapsed + status_every_s
                time.sleep(max(0.0, sample_s - (time.monotonic() - started - elapsed)))
        finally:
            window_s = time.monotonic() - started
            daemon.send_signal(signal.SIGTERM)
            try:
                exit_code = daemon.wait(timeout=180)
            except subprocess.TimeoutExpired:
                daemon.kill()
                exit_code = daemon.wait()
        run.finish()
        help_after = run.help_s()
        return _report(
            run,
            squads=squads,
            minutes=minutes,
            window_s=window_s,
            ready_s=ready_s,
            exit_code=exit_code,
            help_s=statistics.median([help_before, help_after]),
            retention_minutes=retention_minutes,
            root=root if keep else None,
        )
    finally:
        if not keep:
            shutil.rmtree(root, ignore_errors=True)


def _report(
    run: Soak,
    *,
    squads: int,
    minutes: float,
    window_s: float,
    ready_s: float,
    exit_code: int,
    help_s: float,
    retention_minutes: float,
    root: Path | None,
) -> dict[str, Any]:
    samples = run.samples
    runs = account(
        runs=samples.runs,
        events=samples.events,
        intervals_s={name: float(seconds) for name, seconds in run.intervals.items()},
        window_s=window_s,
    )
    status_s = statistics.median(samples.status_s) if samples.status_s else None
    problems = [
        f"{runs[key]} runs {key.replace('_', ' ')}"
        for key in ("lost", "duplicated", "left_running")
        if runs[key]
    ]
    if exit_code != 0:
        problems.append(f"the daemon exited with {exit_code}")
    if samples.status_failures:
        problems.append(f"squad status failed {samples.status_failures} times")
    return {
        "squads": squads,
        "kinds": {kind: list(run.kinds.values()).count(kind) for kind in KINDS},
        "intervals_s": [min(run.intervals.values()), max(run.intervals.values())],
        "minutes": minutes,
        "window_s": round(window_s, 1),
        "retention": {"window_minutes": retention_minutes, "applied": run.applied},
        "daemon": {"ready_s": round(ready_s, 2), "exit_code": exit_code},
        "metrics": {
            metric: trend(metric, points) for metric, points in sorted(samples.series.items())
        },
        "runs": runs,
        "status_vs_help": None
        if status_s is None
        else {"status_s": status_s, "help_s": help_s, "ratio": status_s / help_s},
        "problems": problems,
        "root": None if root is None else str(root),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--squads", type=int, default=100)
    parser.add_argument("--minutes", type=float, default=60.0)
    parser.add_argument("--interval-min", type=int, default=60, help="seconds")
    parser.add_argument("--interval-max", type=int, default=180, help="seconds")
    parser.add_argument("--retention-minutes", type=float, default=5.0)
    parser.add_argument("--sample-s", type=float, default=5.0)
    parser.add_argument("--status-every", type=float, default=30.0, help="seconds")
    parser.add_argument("--keep", action="store_true", help="keep the temporary home")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if args.squads < 1 or args.minutes <= 0 or not 1 <= args.interval_min <= args.interval_max:
        parser.error("need --squads >= 1, --minutes > 0 and 1 <= --interval-min <= --interval-max")
    report = soak(
        args.squads,
        args.minutes,
        interval_range=(args.interval_min, args.interval_max),
        retention_minutes=args.retention_minutes,
        sample_s=args.sample_s,
        status_every_s=args.status_every,
        keep=args.keep,
        progress=lambda line: print(line, file=sys.stderr),
    )
    print(json.dumps(report) if args.json else table(report))
    return 1 if report["problems"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
