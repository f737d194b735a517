"""Long plans cost the same per task: a 200-task chain against a 50-task one, in one run.

``python -m bench.long_plan_bench [--json]`` runs a sequential squad of N chained tasks
(each depends on the one before) on a zero-latency model through ``App.runner()``, as
:mod:`bench.runtime_overhead` does, at N = 50 and N = 200, alternating, each in a fresh home
after a warm-up run of a short chain there. Reported: seconds per task at each length and
their ratio (target :data:`TARGET`: a task of a long plan costs what one of a short plan
does), and the checkpoint bytes the run wrote per step (its checkpoints, their metadata and
pending writes, over its checkpoints), which grow with N when each checkpoint carries every
task's record.
"""

from __future__ import annotations

import sqlite3
import statistics
import sys
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from bench.runtime_overhead import squad_yaml
from bench.support import InstantModel, temp_settings

if TYPE_CHECKING:
    from pathlib import Path

    from bench.__main__ import Result

SHORT = 50
LONG = 200
REPEAT = 3
TARGET = 1.1
"""Seconds per task of the 200-task chain over those of the 50-task chain."""


@dataclass(frozen=True)
class Sample:
    per_task_s: float
    bytes_per_step: float
    last_checkpoint_bytes: int


def chain_yaml(name: str, tasks: int) -> str:
    """A chain of ``tasks`` tasks, with turns enough for all of them."""
    body = squad_yaml(tasks).replace("name: bench", f"name: {name}")
    return body.replace("agents:", f"limits: {{max_turns: {tasks * 2}}}\nagents:", 1)


def checkpoint_bytes(path: Path, thread: str) -> tuple[float, int]:
    """Bytes a run's thread holds in a SQLite checkpoint file, per checkpoint, and its last
    checkpoint's size (the blob and its metadata)."""
    connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        count, saved = connection.execute(
            "SELECT count(*), sum(length(checkpoint) + length(metadata)) FROM checkpoints "
            "WHERE thread_id = ?",
            (thread,),
        ).fetchone()
        (pending,) = connection.execute(
            "SELECT coalesce(sum(length(value)), 0) FROM writes WHERE thread_id = ?", (thread,)
        ).fetchone()
        (last,) = connection.execute(
            "SELECT length(checkpoint) + length(metadata) FROM checkpoints WHERE thread_id = ? "
            "ORDER BY checkpoint_id DESC LIMIT 1",
            (thread,),
        ).fetchone()
    finally:
        connection.close()
    return (saved + pending) / count, int(last)


def chain_run(tasks: int) -> Sample:
    """One timed run of a ``tasks``-long chain in a fresh home, after a short warm-up run."""
    from squad.app import App
    from squad.checkpoints import sqlite_path
    from squad.spec.loader import squad_from_text

    with temp_settings() as settings:
        spec = squad_from_text(chain_yaml(f"chain{tasks}", tasks))
        warm = squad_from_text(chain_yaml("warm", 3))
        with App.open(settings, model_factory=lambda spec, on_event: InstantModel()) as app:
            runner = app.runner()
            runner.run(warm, app.squads.create(warm).path)  # imports, tokenizer, schema
            workspace = app.squads.create(spec).path
            start = time.perf_counter()
            result = runner.run(spec, workspace)
            elapsed = time.perf_counter() - start
            if not result.succeeded:
                raise RuntimeError(f"the {tasks}-task chain failed: {result.error}")
        per_step, last = checkpoint_bytes(sqlite_path(settings.home), result.run_id)
    return Sample(elapsed / tasks, per_step, last)


def measure(repeat: int = REPEAT) -> dict[str, Any]:
    """Medians over ``repeat`` alternating runs of each length (a noisy moment hits both)."""
    samples: dict[int, list[Sample]] = {SHORT: [], LONG: []}
    for i in range(repeat):
        for tasks in (SHORT, LONG) if i % 2 == 0 else (LONG, SHORT):
            samples[tasks].append(chain_run(tasks))
    figures: dict[str, Any] = {}
    for tasks, runs in samples.items():
        figures[f"per_task_s@{tasks}"] = statistics.median(s.per_task_s for s in runs)
        figures[f"bytes_per_step@{tasks}"] = statistics.median(s.bytes_per_step for s in runs)
        figures[f"last_checkpoint_bytes@{tasks}"] = runs[-1].last_checkpoint_bytes
    return figures


def results(figures: dict[str, Any]) -> list[Result]:
    from bench.__main__ import Result

    return [
        Result(
            f"chain of {LONG}, per task",
            figures[f"per_task_s@{LONG}"],
            f"chain of {SHORT}, per task",
            figures[f"per_task_s@{SHORT}"],
            TARGET,
        )
    ]


def notes(figures: dict[str, Any]) -> list[str]:
    return [
        "  checkpoint bytes per step (checkpoint, metadata, pending writes): "
        + ", ".join(
            f"{figures[f'bytes_per_step@{n}'] / 1024:.1f} KB at {n} tasks "
            f"(last checkpoint {figures[f'last_checkpoint_bytes@{n}'] / 1024:.1f} KB)"
            for n in (SHORT, LONG)
        )
    ]


def bench_long_plan(notes_out: list[str] | None = None) -> list[Result]:
    """This benchmark in a fresh process; notes go to ``notes_out`` (else are printed)."""
    from bench.support import in_fresh_process

    return in_fresh_process("bench.long_plan_bench", results, notes, notes_out)


def main() -> int:
    from bench.support import report

    return report(measure(), results, notes)


if __name__ == "__main__":
    sys.exit(main())
