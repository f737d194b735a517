"""``squad status`` at 100 squads and 10,000 runs, as a ratio to ``squad --help``.

One temporary home: 100 squad files (a few with an approval gate, one file broken), their
workspaces, and 10,000 run records written straight through the store (a tenth failed, a
few waiting for approval). Measured in subprocesses of the installed ``squad`` command, in
the same run: ``squad --help`` (the interpreter and CLI start), then ``squad status`` with
the daemon down (squads from the folder) and with a real daemon up (squads from its
heartbeat). The target (issue 30) is ``squad status`` <= 2.5x ``squad --help`` either way.

Run alone with ``python -m bench.status_bench`` (``--json`` for the figures).
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.daemon_bench import _start, _stop
from bench.support import report

BIN = Path(sys.executable).parent
SQUADS = 100
RUNS = 10_000
REPEAT = 7
TARGET = 2.5

SQUAD_YAML = """\
name: squad-{i:03d}
agents: [{{id: writer, role: Writes}}, {{id: reviewer, role: Reviews}}]
tasks:
  - {{id: draft, description: Draft the page., agent: writer}}
  - {{id: review, description: Review the page., agent: reviewer, depends_on: [draft]{gate}}}
schedule: {{interval: {days}d}}
"""


def build_home(root: Path) -> dict[str, str]:
    """The home, its squads and runs; the environment that points ``squad`` at it."""
    from squad.app import App
    from squad.settings import Settings
    from squad.spec.loader import squad_from_file
    from squad.store.records import RunStatus

    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("SQUAD_")},
        "SQUAD_HOME": str(root / "home"),
        "SQUAD_WORKSPACES": str(root / "workspaces"),
        "SQUAD_CONFIGS": str(root / "configs"),
    }
    folder = root / "configs" / "squads"
    folder.mkdir(parents=True)
    settings = Settings.load({k: v for k, v in env.items() if k.startswith("SQUAD_")}, cwd=root)
    with App.open(settings) as app:
        for i in range(SQUADS):
            path = folder / f"squad-{i:03d}.yaml"
            gate = ", approval: true" if i % 25 == 0 else ""
            path.write_text(SQUAD_YAML.format(i=i, gate=gate, days=200 + i))
            app.squads.create(squad_from_file(path), source=path)
        (folder / "broken.yaml").write_text("name: broken\nagents: [\n")
        store = app.store
        for i in range(RUNS):
            squad = f"squad-{i % SQUADS:03d}"
            run = store.create_run(squad, trigger="schedule")
            if i >= RUNS - SQUADS and i % 25 == 0:
                status, error = RunStatus.AWAITING_APPROVAL, None
            elif i % 10 == 3:
                status, error = RunStatus.FAILED, "the model timed out"
            else:
                status, error = RunStatus.SUCCEEDED, None
            store.update_run(run.id, status=status, error=error, tokens_in=900, tokens_out=300)
    return env


def median_run(args: list[str], env: dict[str, str], cwd: Path) -> tuple[float, str]:
    """Median wall time of ``args`` over :data:`REPEAT` runs, and the last one's stdout."""
    samples, out = [], ""
    for _ in range(REPEAT):
        begin = time.perf_counter()
        done = subprocess.run(args, env=env, cwd=cwd, capture_output=True, text=True, check=False)
        samples.append(time.perf_counter() - begin)
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(args)} exited {done.returncode}: {done.stderr}")
        out = done.stdout
    return statistics.median(samples), out


def measure() -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        begin = time.perf_counter()
        env = build_home(root)
        built = time.perf_counter() - begin
        squad = str(BIN / "squad")
        help_s, _ = median_run([squad, "--help"], env, root)
        down_s, down_out = median_run([squad, "status"], env, root)
        _, daemon = _start(env, root, Path(env["SQUAD_HOME"]) / "daemon.jsonl", 1, "--no-http")
        try:
            time.sleep(1.0)  # its first heartbeat after ready: the published status
            up_s, up_out = median_run([squad, "status"], env, root)
            up_json_s, _ = median_run([squad, "status", "--json"], env, root)
        finally:
            _stop(daemon)
    return {
        "squads": SQUADS,
        "runs": RUNS,
        "build_s": built,
        "help_s": help_s,
        "status_down_s": down_s,
        "status_up_s": up_s,
        "status_up_json_s": up_json_s,
        "lines_down": len(down_out.splitlines()),
        "lines_up": len(up_out.splitlines()),
    }


def results(figures: dict[str, Any]) -> list[Any]:
    from bench.__main__ import Result

    help_s = figures["help_s"]
    return [
        Result(
            "squad status (daemon down)", figures["status_down_s"], "squad --help", help_s, TARGET
        ),
        Result("squad status (daemon up)", figures["status_up_s"], "squad --help", help_s, TARGET),
        Result(
            "squad status --json (up)", figures["status_up_json_s"], "squad --help", help_s, TARGET
        ),
    ]


def notes(figures: dict[str, Any]) -> list[str]:
    return [
        f"{figures['squads']} squads, {figures['runs']:,} runs (home built in "
        f"{figures['build_s']:.1f}s); output {figures['lines_down']} lines with the daemon "
        f"down, {figures['lines_up']} up",
    ]


def main() -> int:
    return report(measure(), results, notes)


if __name__ == "__main__":
    sys.exit(main())
