"""What grows in the daemon's memory run after run: the daemon's run path in this process.

``python -m bench.run_memory [--runs 1000] [--squads 4] [--tracemalloc 10] [--json]`` loads
squads like ``bench.soak``'s (gated, memory off, memory on, hierarchical) through the
daemon's catalog and runs them on its :class:`~squad.daemon.runs.RunDispatcher` (offline
model, two workers, the app's background extractor), a round of one run per squad at a
time. It measures the RSS after ``--warm`` runs (``--runs`` / 10), every ``--step`` runs
after and at the end, and reports the growth per 1,000 runs from the first measure to the
last; with ``--tracemalloc N`` it also takes a snapshot at the first and the last measure (N
frames a traceback) and lists what grew most between them, by traceback.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import shutil
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

from bench.soak import KINDS, squad_yaml
from bench.soak_probe import process_metrics


def _rss() -> int:
    return int(process_metrics(os.getpid())["rss_bytes"])


def _growers(
    before: tracemalloc.Snapshot, after: tracemalloc.Snapshot, top: int
) -> list[dict[str, Any]]:
    ignore = [
        tracemalloc.Filter(False, tracemalloc.__file__),
        tracemalloc.Filter(False, "<frozen importlib._bootstrap>"),
        tracemalloc.Filter(False, "<frozen importlib._bootstrap_external>"),
    ]
    stats = after.filter_traces(ignore).compare_to(before.filter_traces(ignore), "traceback")
    return [
        {
            "size_diff": stat.size_diff,
            "count_diff": stat.count_diff,
            "size": stat.size,
            "frames": [f"{frame.filename}:{frame.lineno}" for frame in stat.traceback],
        }
        for stat in stats[:top]
    ]


def measure(
    runs: int,
    squads: int,
    frames: int = 0,
    top: int = 25,
    warm: int | None = None,
    step: int = 100,
    trim: bool = False,
) -> dict[str, Any]:
    from squad.app import App
    from squad.daemon.catalog import SquadCatalog
    from squad.daemon.eventlog import DaemonLog
    from squad.daemon.malloc import give_back
    from squad.daemon.runqueue import RunRequest
    from squad.daemon.runs import RunDispatcher
    from squad.settings import Settings

    root = Path(tempfile.mkdtemp(prefix="squad-run-memory-"))
    (root / "configs" / "squads").mkdir(parents=True)
    names = []
    for n in range(squads):
        name = f"mem-{n:02d}"
        kind = KINDS[n % len(KINDS)]
        (root / "configs" / "squads" / f"{name}.yaml").write_text(squad_yaml(name, kind, 3600))
        names.append(name)
    settings = Settings.load(
        {
            "SQUAD_HOME": str(root / "home"),
            "SQUAD_WORKSPACES": str(root / "workspaces"),
            "SQUAD_CONFIGS": str(root / "configs"),
        },
        cwd=root,
    )
    app = App.open(settings)
    log = DaemonLog(settings.home / "daemon.jsonl")
    app.checkpoints.setup()
    catalog = SquadCatalog(
        settings.squads_dir, app.squads, log, scheduler=None, fire=lambda _: None
    )
    catalog.reconcile(starting=True)
    dispatcher = RunDispatcher(app, log, lookup=catalog.get, workers=2)
    dispatcher.queue.start()
    warm = max(len(names), runs // 10 if warm is None else warm)
    marks = sorted({*range(warm, runs, max(1, step)), runs})
    done = 0
    points: list[dict[str, Any]] = []
    growers: list[dict[str, Any]] = []
    if frames:
        tracemalloc.start(frames)
    started = time.monotonic()
    snapshot = None
    while done < runs:
        for name in names[: runs - done]:
            dispatcher.submit(RunRequest(name, "schedule"))
            done += 1
        while not dispatcher.queue.idle():
            time.sleep(0.05)
        if marks and done >= marks[0]:
            marks.pop(0)
            app.drain_extraction(30)
            gc.collect()
            if trim:
                give_back()
            point = {"runs": done, "rss_bytes": _rss(), "s": round(time.monotonic() - started, 1)}
            points.append(point)
            if frames:
                point["traced_bytes"] = tracemalloc.get_traced_memory()[0]
            if frames and (len(points) == 1 or not marks):
                current = tracemalloc.take_snapshot()
                if snapshot is not None:
                    growers = _growers(snapshot, current, top)
                snapshot = current
            print(f"after {point}", file=sys.stderr)
    dispatcher.queue.close()
    dispatcher.queue.join()
    app.close()
    shutil.rmtree(root, ignore_errors=True)
    first, last = points[0], points[-1]
    return {
        "runs": runs,
        "squads": squads,
        "tracemalloc_frames": frames,
        "points": points,
        "rss_per_1000_runs": (last["rss_bytes"] - first["rss_bytes"])
        * 1000
        / max(1, last["runs"] - first["runs"]),
        "growers": growers,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--squads", type=int, default=4)
    parser.add_argument("--tracemalloc", type=int, default=0, help="frames (0: off)")
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--warm", type=int, help="runs before the first measure (--runs / 10)")
    parser.add_argument("--step", type=int, default=100, help="runs between RSS measures")
    parser.add_argument(
        "--arenas", action="store_true", help="cap malloc arenas as `squad daemon` does"
    )
    parser.add_argument(
        "--trim",
        action="store_true",
        help="give free pages back before each measure, as the daemon does once a minute",
    )
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if args.arenas:
        from squad.daemon.malloc import limit_arenas

        limit_arenas()
    result = measure(
        args.runs, args.squads, args.tracemalloc, args.top, args.warm, args.step, args.trim
    )
    if args.json:
        print(json.dumps(result))
        return 0
    print(
        f"{result['runs']} runs of {result['squads']} squads: RSS "
        f"{result['rss_per_1000_runs'] / 2**20:+.1f} MiB per 1,000 runs"
    )
    for grower in result["growers"]:
        print(f"{grower['size_diff'] / 1024:+9.1f} KiB {grower['count_diff']:+7d} blocks")
        for frame in grower["frames"][-6:]:
            print(f"      {frame}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
