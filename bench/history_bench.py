"""The workspace history's costs, as ratios to baselines measured in the same run.

``python -m bench.history_bench [--runs N] [--json]`` measures:

- **a run with its commit** against the same run with history off (the example squad
  ``code-review`` on the offline model, runs alternated so drift hits both; target 1.05x);
- **a memory write with its commit** (``remember`` into memory.md) against the same write with
  history off (target 1.5x);
- **``squad runs list SQUAD``** on a history of ``--runs`` runs (10,000) against ``squad --help``
  (both whole commands, target 2x);
- **``squad runs diff``** of two runs 9,000 apart in that history: in-process (find both runs
  by their ``refs/runs/`` refs, diff them) against ``git diff A B`` of the same commits (target
  2x), and the whole command as well, for what a person waits;
- **the repository's size** after those runs, packed, against the workspace's latest files
  plus the zlib-compressed size of every change the runs made (target 2x), with the loose
  size before packing and the time packing took.

The long history is made by the history's own code (``History.commit_run``), a run's worth of
changes at a time: four task outputs a few lines different each week, their status files, a
plan every tenth run and a memory line every fifth, so it is what 10,000 runs write, without
10,000 model runs.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zlib
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
EXAMPLE = REPO / "configs" / "squads" / "code-review.yaml"
TARGETS = {"run": 1.05, "memory": 1.5, "list": 2.0, "diff": 2.0, "size": 2.0}
WORDS = [
    "dependency",
    "audit",
    "release",
    "upgrade",
    "pin",
    "lockfile",
    "advisory",
    "patch",
    "minor",
    "major",
    "breaking",
    "changelog",
    "vendor",
    "license",
    "transitive",
    "semver",
]


def _median(action: Callable[[], object], repeat: int) -> float:
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        action()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def _settings(root: Path, *, history: bool) -> Any:
    from squad.settings import Settings

    settings = Settings.load(
        {
            "SQUAD_HOME": str(root / "home"),
            "SQUAD_WORKSPACES": str(root / "ws"),
            "SQUAD_CONFIGS": str(root / "configs"),
        }
    )
    return replace(settings, history=settings.history.model_copy(update={"enabled": history}))


SEQUENTIAL = """\
name: weekly
goal: Audit the dependencies.
agents:
  - {id: scanner, role: Scans the lockfiles}
  - {id: writer, role: Writes the report}
tasks:
  - {id: scan, description: List outdated dependencies., agent: scanner}
  - {id: triage, description: Sort them by risk., agent: scanner, depends_on: [scan]}
  - {id: report, description: Write the report., agent: writer, depends_on: [triage]}
  - {id: summary, description: Summarise it in three lines., agent: writer, depends_on: [report]}
"""


class _SlowModel:
    """A model that takes ``latency_s`` to answer, as a real one does (a tenth of a fast API's)."""

    def __init__(self, latency_s: float) -> None:
        self.latency_s = latency_s

    def complete(self, messages: Any, **_: Any) -> Any:
        from squad.model.types import ModelReply, Usage

        time.sleep(self.latency_s)
        return ModelReply(
            "Done: the audit lists three outdated packages.", usage=Usage(50, 20, 0.0)
        )

    def price(self) -> Any:
        from squad.model.types import Price

        return Price(0.0, 0.0)


def bench_run(rounds: int = 15, *, latency_s: float | None = None) -> dict[str, float]:
    """Median seconds of one run, history on and off, alternated: the example squad on the
    offline model, or (``latency_s``) a four-task squad on a model that takes that long."""
    from squad.app import App
    from squad.spec.loader import squad_from_file, squad_from_text

    spec = squad_from_file(EXAMPLE) if latency_s is None else squad_from_text(SEQUENTIAL)
    factory: dict[str, Any] = {}
    if latency_s is not None:
        slow = _SlowModel(latency_s)
        factory["model_factory"] = lambda model_spec, on_event: slow
    times: dict[bool, list[float]] = {True: [], False: []}
    with tempfile.TemporaryDirectory() as tmp:
        apps = {
            on: App.open(_settings(Path(tmp) / str(on), history=on), **factory)
            for on in (True, False)
        }
        try:
            spaces = {on: app.squads.create(spec).path for on, app in apps.items()}
            for on, app in apps.items():  # warm: imports, the first commit, the store
                app.runner().run(spec, spaces[on])
            for _ in range(rounds):
                for on in (True, False):
                    start = time.perf_counter()
                    result = apps[on].runner().run(spec, spaces[on])
                    times[on].append(time.perf_counter() - start)
                    assert result.succeeded, result.error
        finally:
            for app in apps.values():
                app.close()
    return {"on_s": statistics.median(times[True]), "off_s": statistics.median(times[False])}


def bench_memory(rounds: int = 60) -> dict[str, float]:
    """Median seconds of one ``remember`` into memory.md, history on and off, alternated."""
    from squad.app import App
    from squad.spec.loader import squad_from_file

    spec = squad_from_file(EXAMPLE)
    agent = spec.agents[0].id
    times: dict[bool, list[float]] = {True: [], False: []}
    with tempfile.TemporaryDirectory() as tmp:
        apps = {on: App.open(_settings(Path(tmp) / str(on), history=on)) for on in (True, False)}
        try:
            ctxs = {
                on: app.agent(app.squads.create(spec).path.name, agent) for on, app in apps.items()
            }
            for i in range(rounds + 2):
                for on in (True, False):
                    start = time.perf_counter()
                    apps[on].memory.remember(ctxs[on], f"fact number {i}", layer="project")
                    if i >= 2:  # the first two warm imports and files
                        times[on].append(time.perf_counter() - start)
        finally:
            for app in apps.values():
                app.close()
    return {"on_s": statistics.median(times[True]), "off_s": statistics.median(times[False])}


def _report(rnd: random.Random, week: int, base: list[str]) -> str:
    lines = list(base)
    for _ in range(4):
        lines[rnd.randrange(len(lines))] = f"- week {week}: " + " ".join(
            rnd.choice(WORDS) for _ in range(9)
        )
    return f"# Dependency audit, week {week}\n\n" + "\n".join(lines) + "\n"


def build_history(workspace: Path, runs: int, *, seed: int = 7) -> dict[str, Any]:
    """``runs`` runs' worth of commits in a new workspace; what changed, compressed."""
    from squad.history.history import History
    from squad.history.message import RunNote, TaskNote

    rnd = random.Random(seed)
    tasks = ["scan", "triage", "report", "review"]
    bases = {t: [" ".join(rnd.choice(WORDS) for _ in range(10)) for _ in range(60)] for t in tasks}
    memory = workspace / "agents" / "auditor" / "memory.md"
    memory.parent.mkdir(parents=True)
    memory.write_text("# Project Context\n\n# Coding Rules\n\n# Decisions\n\n# Insights\n")
    (workspace / ".squad-config.json").write_text('{"squad": "audit"}\n')
    history = History(workspace, "audit")
    history.start()
    changed = 0
    previous: dict[str, bytes] = {}
    start_time = datetime(2026, 1, 1, tzinfo=UTC)
    ids = []
    began = time.perf_counter()
    for n in range(runs):
        run_id = f"{n:08x}" + "0" * 24
        ids.append(run_id)
        writes: dict[str, bytes] = {}
        for task in tasks:
            writes[f"tasks/{task}/output.md"] = _report(rnd, n, bases[task]).encode()
            writes[f"tasks/{task}/status.json"] = json.dumps(
                {"run_id": run_id, "task": task, "status": "done"}, indent=2
            ).encode()
        if n % 10 == 0:
            writes[f"plans/plan-{n // 10 + 1:03d}.md"] = _report(rnd, n, bases["scan"]).encode()
        for path, data in writes.items():
            target = workspace / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
            old = previous.get(path)
            delta = data if old is None else _diff(old, data)
            changed += len(zlib.compress(delta))
            previous[path] = data
        if n % 5 == 0:
            with memory.open("a") as handle:
                handle.write(f"- learnt in week {n}: pin {rnd.choice(WORDS)} (2026-01-01)\n")
            changed += len(zlib.compress(f"- learnt in week {n}\n".encode()))
        when = start_time + timedelta(hours=n)
        history.commit_run(
            RunNote(
                run_id,
                "audit",
                "succeeded",
                "schedule",
                started_at=when,
                ended_at=when + timedelta(seconds=40),
                tasks=tuple(TaskNote(t, "auditor", "done") for t in tasks),
                tokens_in=1200,
                tokens_out=800,
                cost_usd=0.004,
            )
        )
    built = time.perf_counter() - began
    return {"changed_compressed": changed, "build_s": built, "ids": ids}


def _diff(old: bytes, new: bytes) -> bytes:
    import difflib

    return "".join(
        difflib.unified_diff(
            old.decode().splitlines(keepends=True), new.decode().splitlines(keepends=True), n=0
        )
    ).encode()


def _du(folder: Path) -> tuple[int, int]:
    """(bytes on disk, apparent bytes) of a folder."""
    disk = apparent = 0
    for path, _, files in os.walk(folder):
        for name in files:
            st = os.lstat(os.path.join(path, name))  # noqa: PTH118
            disk += st.st_blocks * 512
            apparent += st.st_size
    return disk, apparent


def bench_long_history(runs: int) -> dict[str, Any]:
    from squad.app import App
    from squad.history.history import History

    out: dict[str, Any] = {"runs": runs}
    git = shutil.which("git")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        settings = _settings(root, history=True)
        workspace = settings.workspaces / "audit"
        workspace.mkdir(parents=True)
        built = build_history(workspace, runs)
        out["build_s"] = built["build_s"]
        out["loose_disk"], _ = _du(workspace / ".git")
        began = time.perf_counter()
        report = History(workspace, "audit").pack(full=True)
        out["pack_s"] = time.perf_counter() - began
        assert report is not None
        out["packed_disk"], out["packed_bytes"] = _du(workspace / ".git")
        latest = sum(
            p.stat().st_size
            for p in workspace.rglob("*")
            if p.is_file() and ".git" not in p.parts and not p.name.startswith(".squad")
        )
        out["latest_bytes"] = latest
        out["changed_compressed"] = built["changed_compressed"]
        out["size_ratio"] = out["packed_bytes"] / (latest + built["changed_compressed"])

        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith("SQUAD_")},
            "SQUAD_HOME": str(settings.home),
            "SQUAD_WORKSPACES": str(settings.workspaces),
            "SQUAD_CONFIGS": str(settings.configs),
            "HOME": str(root),
        }
        squad = str(BIN / "squad")

        def command(*args: str) -> Callable[[], object]:
            return lambda: subprocess.run(args, env=env, check=True, capture_output=True)

        out["help_s"] = _median(command(squad, "--help"), 7)
        out["list_s"] = _median(command(squad, "runs", "list", "audit"), 7)
        old_id, new_id = built["ids"][runs // 10], built["ids"][-1]
        with App.open(settings) as app:
            runs_view = app.runs
            diff = runs_view.diff(new_id, old_id)
            assert diff.patch and diff.old_commit and diff.new_commit
            out["diff_files"] = len(diff.stat)
            out["diff_s"] = _median(lambda: runs_view.diff(new_id, old_id), 15)
            old_commit, new_commit = diff.old_commit, diff.new_commit
        out["diff_command_s"] = _median(command(squad, "runs", "diff", new_id, old_id), 5)
        if git is not None:
            out["git_diff_s"] = _median(
                command(git, "-C", str(workspace), "diff", old_commit, new_commit), 15
            )
            fsck = subprocess.run(
                [git, "-C", str(workspace), "fsck", "--no-dangling"],
                env=env,
                capture_output=True,
                text=True,
            )
            out["fsck_ok"] = fsck.returncode == 0
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=10_000)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    figures: dict[str, Any] = {
        "run": bench_run(25),
        "run_model": bench_run(5, latency_s=0.2),
        "memory": bench_memory(),
    }
    figures["history"] = bench_long_history(args.runs)
    if args.json:
        print(json.dumps(figures))  # one line: bench.support.run_json reads the last
        return 0
    run, memory, long = figures["run"], figures["memory"], figures["history"]
    model = figures["run_model"]
    rows = [
        ("run with its commit", run["on_s"], "history off", run["off_s"], TARGETS["run"]),
        ("run, 200 ms model calls", model["on_s"], "history off", model["off_s"], TARGETS["run"]),
        (
            "remember with its commit",
            memory["on_s"],
            "history off",
            memory["off_s"],
            TARGETS["memory"],
        ),
        (
            f"runs list, {long['runs']:,} runs",
            long["list_s"],
            "squad --help",
            long["help_s"],
            TARGETS["list"],
        ),
    ]
    if "git_diff_s" in long:
        rows.append(
            (
                "runs diff (in process)",
                long["diff_s"],
                "git diff A B",
                long["git_diff_s"],
                TARGETS["diff"],
            )
        )
        rows.append(
            (
                "runs diff (command)",
                long["diff_command_s"],
                "git diff A B",
                long["git_diff_s"],
                TARGETS["diff"],
            )
        )
    for name, measured, base_name, base, target in rows:
        ratio = measured / base
        flag = "ok" if ratio <= target else "OVER"
        print(
            f"{name:28} {measured * 1000:9.1f} ms  {base_name:>14} {base * 1000:9.1f} ms  "
            f"{ratio:6.2f}x  (target {target}x) {flag}"
        )
    mb = 1024 * 1024
    print(
        f"history of {long['runs']:,} runs: built in {long['build_s']:.0f} s; loose "
        f"{long['loose_disk'] / mb:.1f} MB on disk, packed in {long['pack_s']:.1f} s to "
        f"{long['packed_bytes'] / mb:.2f} MB; latest files {long['latest_bytes'] / mb:.2f} MB + "
        f"changes compressed {long['changed_compressed'] / mb:.2f} MB: "
        f"{long['size_ratio']:.2f}x (target {TARGETS['size']}x); git fsck "
        f"{'ok' if long.get('fsck_ok') else 'FAILED or no git'}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
