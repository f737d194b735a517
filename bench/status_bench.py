"""Commands that open the store, as ratios to ``squad --help``: ``squad status`` at 100
squads and 10,000 runs, ``squad memory context``, and the offline 4-task example's run.

One temporary home: 100 squad files (a few with an approval gate, one file broken), their
workspaces, and 10,000 run records written straight through the store (a tenth failed, a
few waiting for approval). Measured in subprocesses of the installed ``squad`` command, in
the same run: ``squad --help`` (the interpreter and CLI start), then ``squad status`` with
the daemon down (squads from the folder) and with a real daemon up (squads from its
heartbeat). The target (issues 30 and 35) is ``squad status`` <= 2.5x ``squad --help``
either way.

A second, small home holds the docs-site example (``configs/squads/docs-site.yaml``, its
four tasks on the offline model, without its approval gate so that the run ends): ``squad
run`` of it (target <= 8x, issue 35) and ``squad memory context docs-site planner`` after
it (target <= 2.5x); then ``squad run`` of it again with a daemon up on that home, which
the command hands the run to (:mod:`squad.cli.handoff`; the daemon has had its on-start run
of the example first, so the graph is loaded as in a daemon that has run anything). Its CPU
figure is the command's own: the daemon's work is not in it.

``--tree DIR`` (repeatable) also times the commands of another checkout (say ``main``
before a change) in the same rounds, interleaved: its ``squad --help``, ``squad status`` with
the daemon down and up (``--json`` too) on the same big home, and its memory context and run
on its own small home, each reported against its own ``squad --help``; ``--repeats
N`` takes N rounds (default 7: more where other work shares the machine); ``--json`` prints
the figures. Each checkout's ``squad`` package is compiled to bytecode first
(:func:`bench.support.compile_trees`), as an installed tool is: the environment may set
``PYTHONDONTWRITEBYTECODE``, and the figures are of the commands, not of the compiler. Run alone
with ``python -m bench.status_bench``.
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.daemon_bench import _start, _stop
from bench.support import REPO, compile_trees, report, tree_args

BIN = Path(sys.executable).parent
SQUADS = 100
RUNS = 10_000
REPEAT = 7
TARGET = 2.5
RUN_TARGET = 8.0
"""The offline 4-task run against ``squad --help`` (issue 35)."""

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


def timed(
    args: list[str], env: dict[str, str], cwd: Path, *, codes: tuple[int, ...] = (0,)
) -> tuple[float, str]:
    """Wall time of one run of ``args``, and its stdout; it must exit with one of ``codes``."""
    seconds, _, out = timed_cpu(args, env, cwd, codes=codes)
    return seconds, out


def timed_cpu(
    args: list[str], env: dict[str, str], cwd: Path, *, codes: tuple[int, ...] = (0,)
) -> tuple[float, float, str]:
    """Wall and CPU time (user and system, its children included) of one run of ``args``,
    and its stdout: on a machine other work shares, CPU time moves less than wall time."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    begin = time.perf_counter()
    done = subprocess.run(args, env=env, cwd=cwd, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - begin
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in codes:
        raise RuntimeError(f"{' '.join(args)} exited {done.returncode}: {done.stderr}")
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return seconds, cpu, done.stdout


def example_home(root: Path, tree: Path) -> dict[str, str]:
    """A small home for ``tree``'s squad (its PYTHONPATH) holding the docs-site example
    without its approval gate, run once (its workspace and memory made: not measured)."""
    text = (REPO / "configs" / "squads" / "docs-site.yaml").read_text()
    gated = "    approval: true\n"
    if gated not in text:
        raise RuntimeError("docs-site.yaml no longer has its approval gate: update the bench")
    folder = root / "configs" / "squads"
    folder.mkdir(parents=True)
    (folder / "docs-site.yaml").write_text(text.replace(gated, ""))
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("SQUAD_")},
        "PYTHONPATH": str(tree),
        "SQUAD_HOME": str(root / "home"),
        "SQUAD_WORKSPACES": str(root / "workspaces"),
        "SQUAD_CONFIGS": str(root / "configs"),
    }
    timed(example_run(root), env, root)
    return env


def _serving(env: dict[str, str]) -> int:
    """A daemon (its API on any free port) on the example home ``env`` names, once it
    publishes where it serves and its on-start run of the example has ended (so that it has
    the graph loaded, as a daemon has after its first run); its pid."""
    from squad.daemon.eventlog import read_daemon_log

    home = Path(env["SQUAD_HOME"])
    log = home / "daemon.jsonl"
    ended = sum(1 for e in read_daemon_log(log) if e["event"] == "run_end") if log.exists() else 0
    _, pid = _start(env, home.parent, log, 1, "--port", "0")
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        published = home / "daemon-status.json"
        runs = sum(1 for e in read_daemon_log(log) if e["event"] == "run_end")
        if runs > ended and published.exists() and '"http": {' in published.read_text():
            return pid
        time.sleep(0.1)
    _stop(pid)
    raise RuntimeError(f"the daemon on {home} did not publish its API and end its first run")


def example_run(root: Path) -> list[str]:
    return [str(BIN / "squad"), "run", str(root / "configs" / "squads" / "docs-site.yaml")]


def measure(trees: list[Path], repeats: int = REPEAT) -> dict[str, Any]:
    """The figures of this checkout (and of each of ``trees``: its status with the daemon
    down, memory context and run, in the same rounds), medians of ``repeats`` rounds."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        begin = time.perf_counter()
        env = build_home(root)
        built = time.perf_counter() - begin
        squad = str(BIN / "squad")
        every = [REPO, *trees]
        compile_trees(every)
        homes = {
            str(tree): example_home(root / f"example{i}", tree) for i, tree in enumerate(every)
        }
        context = [squad, "memory", "context", "docs-site", "planner"]
        names = (
            "help_s",
            "status_down_s",
            "context_s",
            "run_s",
            "run_up_s",
            "status_up_s",
            "status_up_json_s",
        )
        samples: dict[str, dict[str, list[float]]] = {
            str(tree): {key: [] for name in names for key in (name, _cpu(name))} for tree in every
        }

        def take(tree: Path, name: str, args: list[str], env: dict[str, str]) -> str:
            seconds, cpu, out = timed_cpu(args, env, root)
            samples[str(tree)][name].append(seconds)
            samples[str(tree)][_cpu(name)].append(cpu)
            return out

        down_out = up_out = ""
        for round_ in range(repeats):
            for tree in _turns(every, round_):
                home, own = homes[str(tree)], {**env, "PYTHONPATH": str(tree)}
                take(tree, "help_s", [squad, "--help"], own)
                out = take(tree, "status_down_s", [squad, "status"], own)
                down_out = out if tree == REPO else down_out
                take(tree, "context_s", context, home)
                take(tree, "run_s", example_run(Path(home["SQUAD_HOME"]).parent), home)
        # The same run with a daemon up on each example home: `squad run` hands it over.
        daemons = [_serving(homes[str(tree)]) for tree in every]
        try:
            for round_ in range(repeats):
                for tree in _turns(every, round_):
                    home = homes[str(tree)]
                    take(tree, "run_up_s", example_run(Path(home["SQUAD_HOME"]).parent), home)
        finally:
            for pid in daemons:
                _stop(pid)
        _, daemon = _start(env, root, Path(env["SQUAD_HOME"]) / "daemon.jsonl", 1, "--no-http")
        try:
            time.sleep(1.0)  # its first heartbeat after ready: the published status
            for round_ in range(repeats):
                for tree in _turns(every, round_):
                    own = {**env, "PYTHONPATH": str(tree)}
                    take(tree, "help_s", [squad, "--help"], own)
                    out = take(tree, "status_up_s", [squad, "status"], own)
                    up_out = out if tree == REPO else up_out
                    take(tree, "status_up_json_s", [squad, "status", "--json"], own)
        finally:
            _stop(daemon)
    medians = {
        tree: {name: statistics.median(values) for name, values in row.items()}
        for tree, row in samples.items()
    }
    return {
        "squads": SQUADS,
        "runs": RUNS,
        "build_s": built,
        **medians[str(REPO)],
        "lines_down": len(down_out.splitlines()),
        "lines_up": len(up_out.splitlines()),
        "trees": {tree: row for tree, row in medians.items() if tree != str(REPO)},
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
        Result("squad memory context", figures["context_s"], "squad --help", help_s, TARGET),
        Result("offline 4-task run", figures["run_s"], "squad --help", help_s, RUN_TARGET),
        Result(
            "offline 4-task run, daemon up", figures["run_up_s"], "squad --help", help_s, RUN_TARGET
        ),
    ]


def notes(figures: dict[str, Any]) -> list[str]:
    lines = [
        f"{figures['squads']} squads, {figures['runs']:,} runs (home built in "
        f"{figures['build_s']:.1f}s); output {figures['lines_down']} lines with the daemon "
        f"down, {figures['lines_up']} up",
    ]
    lines.append(f"CPU time, each over --help's: {_ratios(figures, figures, cpu=True)}")
    for tree, row in figures.get("trees", {}).items():
        lines.append(f"from {tree} (this tree's figures in brackets): {_ratios(row, figures)}")
        lines.append(f"  CPU time: {_ratios(row, figures, cpu=True)}")
    return lines


def _turns(trees: list[Path], round_: int) -> list[Path]:
    """The order the trees take their turns in round ``round_``: reversed every other round,
    so that no tree always follows the same command (a 4-task run's disk writes linger)."""
    return trees if round_ % 2 == 0 else trees[::-1]


def _cpu(name: str) -> str:
    """The key of the CPU time of what ``name`` (``status_down_s``) times the wall time of."""
    return name.removesuffix("_s") + "_cpu_s"


def _ratios(row: dict[str, float], this: dict[str, float], *, cpu: bool = False) -> str:
    """Each command of ``row`` over its own ``squad --help``, and of ``this`` over its own
    (their CPU times with ``cpu``)."""
    shown = (
        ("status_down_s", "status (down)"),
        ("status_up_s", "status (up)"),
        ("status_up_json_s", "status --json (up)"),
        ("context_s", "memory context"),
        ("run_s", "4-task run"),
        ("run_up_s", "4-task run (daemon up: the command's own CPU)"),
    )
    pick = _cpu if cpu else str
    helps = row[pick("help_s")], this[pick("help_s")]
    ratios = ", ".join(
        f"{label} {row[pick(key)] / helps[0]:.2f}x [{this[pick(key)] / helps[1]:.2f}x]"
        for key, label in shown
    )
    return f"{ratios} squad --help ({helps[0] * 1000:.0f} ms [{helps[1] * 1000:.0f} ms])"


def main() -> int:
    args = sys.argv[1:]
    repeats = int(args[args.index("--repeats") + 1]) if "--repeats" in args else REPEAT
    return report(measure(tree_args(args), repeats), results, notes)


if __name__ == "__main__":
    sys.exit(main())
