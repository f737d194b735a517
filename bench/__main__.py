"""``make bench``: start-up, validation and workspace search, as ratios to same-run baselines.

Absolute times on shared machines are noise; a ratio to a baseline measured moments before
on the same machine is not. Each benchmark takes the median of several repetitions.
"""

from __future__ import annotations

import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from bench.cluster_bench import bench_cluster
from bench.long_plan_bench import bench_long_plan
from bench.mcp_bench import bench_mcp
from bench.parallel_bench import bench_parallel
from bench.support import in_fresh_process, run_json
from bench.web_bench import bench_web
from bench.workspace_search import measure as bench_search_index

REPO = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent


@dataclass(frozen=True)
class Result:
    name: str
    measured_s: float
    baseline_name: str
    baseline_s: float
    target_ratio: float

    @property
    def ratio(self) -> float:
        return self.measured_s / self.baseline_s

    @property
    def ok(self) -> bool:
        return self.ratio <= self.target_ratio


def median_time(action: Callable[[], object], repeat: int) -> float:
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        action()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def run(*cmd: str) -> Callable[[], object]:
    return lambda: subprocess.run(cmd, check=True, capture_output=True)


def bench_help() -> Result:
    """`squad --help` against a bare interpreter start: lazy imports keep this small."""
    baseline = median_time(run(sys.executable, "-c", "pass"), 9)
    measured = median_time(run(str(BIN / "squad"), "--help"), 9)
    return Result("squad --help", measured, "python -c pass", baseline, 12.0)


def bench_validate() -> Result:
    """Validating the examples against merely parsing them with PyYAML's C-less safe_load."""
    import yaml

    from squad.spec.loader import squad_from_text

    texts = [p.read_text() for p in sorted((REPO / "configs" / "squads").glob("*.yaml"))] * 50
    baseline = median_time(lambda: [yaml.safe_load(t) for t in texts], 5)
    measured = median_time(lambda: [squad_from_text(t) for t in texts], 5)
    return Result("validate 100 definitions", measured, "yaml.safe_load", baseline, 3.0)


def bench_search(tmp: Path) -> Result | None:
    """Workspace full-text search against grep over the same 2,000 files."""
    grep = shutil.which("grep")
    if grep is None:
        return None
    from squad.workspace.search import search

    root = tmp / "ws"
    for i in range(2000):
        folder = root / "tasks" / f"t{i % 50}"
        folder.mkdir(parents=True, exist_ok=True)
        lines = [f"line {j} of file {i}: lorem ipsum dolor sit amet" for j in range(40)]
        if i % 7 == 0:
            lines[20] = "the Needle is here"
        (folder / f"out-{i}.md").write_text("\n".join(lines) + "\n")
    baseline = median_time(
        lambda: subprocess.run([grep, "-rni", "needle", str(root)], capture_output=True), 5
    )
    measured = median_time(lambda: search(root, "needle"), 5)
    return Result("ws search 2,000 files", measured, "grep -rni", baseline, 8.0)


def bench_memory() -> list[Result]:
    """One turn's memory block (50 KB memory.md + N facts, T=2,000) and its growth in N."""
    from bench.memory_assembly import measure

    small, mid, large = measure(1_000), measure(10_000), measure(100_000)
    return [
        Result("memory block, 10k facts", mid.block_s, "tokenise memory.md", mid.baseline_s, 8.0),
        Result("memory block, 100k vs 1k", large.block_s, "same at 1k facts", small.block_s, 3.0),
    ]


def bench_runtime(notes: list[str]) -> Result:
    """Orchestration overhead per agent turn against the floor (bare LangGraph plus the least
    durable I/O a turn needs), same checkpointer, in a fresh process (like the extractor's
    benchmark: the other benchmarks' heap is not its)."""
    from bench.runtime_overhead import TARGET

    figures = run_json("bench.runtime_overhead")
    bare = figures["bare_s"]
    notes.append(
        f"runtime turn vs a bare LangGraph step doing the same durable I/O in line "
        f"({figures['with_io_s'] * 1000:.1f} ms, {figures['with_io_s'] / bare:.1f}x bare): "
        f"{figures['squad_s'] / figures['with_io_s']:.1f}x"
    )
    notes.append(
        f"runtime floor, bare LangGraph plus the least I/O a turn needs in raw calls on a "
        f"writer thread: {figures['floor_s'] * 1000:.1f} ms, {figures['floor_s'] / bare:.2f}x bare"
    )
    notes.append(
        f"runtime turn vs bare LangGraph (the retired 1.5x target, below this machine's floor): "
        f"{figures['squad_s'] / bare:.1f}x"
    )
    return Result(
        "runtime overhead per turn",
        figures["squad_s"],
        "I/O floor",
        figures["floor_s"],
        TARGET,
    )


def bench_runtime_busy() -> Result:
    """:func:`bench_runtime` on a busy disk: another process writes and fsyncs in the same
    filesystem while squad and the floor are measured (``--busy``)."""
    from bench.runtime_overhead import TARGET

    figures = run_json("bench.runtime_overhead", "--busy")
    return Result(
        "runtime overhead per turn, busy disk",
        figures["squad_s"],
        "I/O floor, busy disk",
        figures["floor_s"],
        TARGET,
    )


def bench_extraction(notes: list[str]) -> Result:
    """p99 chat reply time with the background extractor on against off (200 turns), in a
    fresh process: a heap grown by the other benchmarks makes p99 a measure of its GC."""
    from bench.extraction_latency import TARGET, TURNS

    figures = run_json("bench.extraction_latency")
    notes.append(f"offline extraction: {figures['offline_per_s']:,.0f} messages/s")
    return Result(
        "chat p99, extractor on/off",
        figures["on_s"],
        f"off, {TURNS} turns",
        figures["off_s"],
        TARGET,
    )


def bench_daemon(notes: list[str]) -> list[Result]:
    """The daemon with 200 scheduled squads: start-up against `squad --help` and against no
    squads; idle memory and CPU go to ``notes`` (they are not times)."""
    from bench.daemon_bench import SQUADS, measure, report

    baseline, empty, full = measure()
    notes.extend(report(baseline, empty, full))
    return [
        Result(f"daemon start, {SQUADS} squads", full.startup_s, "squad --help", baseline, 25.0),
        Result(
            f"daemon restart, {SQUADS} vs 0",
            full.restart_s,
            "daemon, 0 squads",
            empty.restart_s,
            4.0,
        ),
    ]


def bench_history(notes: list[str]) -> list[Result]:
    """The workspaces' history (``bench.history_bench``, a fresh process): a run and a memory
    write with their commits against history off, and on a 10,000-run history ``squad runs
    list`` against ``squad --help`` and ``runs diff`` against ``git diff``; its size packed."""
    from bench.history_bench import TARGETS

    figures = run_json("bench.history_bench")
    run, model, memory, long = (
        figures["run"],
        figures["run_model"],
        figures["memory"],
        figures["history"],
    )
    mb = 1024 * 1024
    notes.append(
        f"history of {long['runs']:,} runs: {long['loose_disk'] / mb:.0f} MB loose, packed in "
        f"{long['pack_s']:.0f} s to {long['packed_bytes'] / mb:.1f} MB, "
        f"{long['size_ratio']:.2f}x its latest files plus its changes compressed "
        f"(target {TARGETS['size']}x); `squad runs diff` as a command "
        f"{long['diff_command_s'] * 1000:.0f} ms"
    )
    results = [
        Result("run with its commit", run["on_s"], "history off", run["off_s"], TARGETS["run"]),
        Result(
            "run, 200 ms model calls", model["on_s"], "history off", model["off_s"], TARGETS["run"]
        ),
        Result(
            "remember with its commit",
            memory["on_s"],
            "history off",
            memory["off_s"],
            TARGETS["memory"],
        ),
        Result(
            f"runs list, {long['runs']:,} runs",
            long["list_s"],
            "squad --help",
            long["help_s"],
            TARGETS["list"],
        ),
    ]
    if "git_diff_s" in long:
        results.append(
            Result(
                "runs diff, 10,000 runs",
                long["diff_s"],
                "git diff A B",
                long["git_diff_s"],
                TARGETS["diff"],
            )
        )
    return results


def bench_redaction(notes: list[str]) -> list[Result]:
    """Credential redaction at 2 MB against eight times its cost at 0.25 MB, per kind of text
    (``bench.redaction_scale``, a fresh process): 1.0x is linear."""
    from bench.redaction_scale import TARGET

    figures = run_json("bench.redaction_scale")
    results = []
    for name, row in figures.items():
        small = row["s_per_mb@0.25"] * 0.25
        results.append(
            Result(f"redact 2 MB, {name}", row["s_per_mb@2"] * 2, "8 x 0.25 MB", 8 * small, TARGET)
        )
    notes.append(
        "redaction CPU s/MB at 2 MB: "
        + ", ".join(f"{name} {row['s_per_mb@2']:.2f}" for name, row in figures.items())
    )
    from bench.text_kept import TARGET_MB

    kept = next(iter(run_json("bench.text_kept", "--messages", "1000").values()))
    notes.append(
        f"text caches (credentials, chatter, echoes): {kept:.1f} MB kept after 1,000 distinct "
        f"2 KB messages (bench.text_kept; target {TARGET_MB:g} MB)"
    )
    return results


def bench_daemon_growth(notes: list[str]) -> list[Result]:
    """Issue 30's daemon at 100-200 squads (fresh processes): ``squad status`` against
    ``squad --help`` at 100 squads and 10,000 runs, and a restart with 200 squads against one
    with none."""
    import bench.daemon_ready_bench as ready
    import bench.status_bench as status

    results: list[Result] = []
    for module, name in ((status, "bench.status_bench"), (ready, "bench.daemon_ready_bench")):
        figures = run_json(name)
        results += module.results(figures)
        notes.extend(module.notes(figures))
    return results


def bench_recall_history(notes: list[str]) -> list[Result]:
    """A 2-task run after 1,000 earlier runs against one after 10, recall on (issue 31: recall
    reads a bounded candidate set and a few batches of messages, whatever the history)."""
    import bench.recall_history as recall_history

    return in_fresh_process(
        "bench.recall_history", recall_history.results, recall_history.notes, notes
    )


def bench_model_client(notes: list[str]) -> list[Result]:
    """A one-call run on the stub against a bare ``import litellm`` (its import overlaps the
    run's set-up), and ``squad validate`` of an unpriced model against ``squad --help``."""
    import bench.model_client_bench as model_client

    return in_fresh_process(
        "bench.model_client_bench", model_client.results, model_client.notes, notes
    )


def bench_seam(notes: list[str]) -> list[Result]:
    """CPU per model call through the seam against a bare ``litellm.completion``."""
    import bench.seam_bench as seam

    return in_fresh_process("bench.seam_bench", seam.results, seam.notes, notes)


def main() -> int:
    notes: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        results = [
            bench_help(),
            bench_validate(),
            bench_search(Path(tmp)),
            *bench_search_index(Path(tmp), notes),
            *bench_memory(),
            bench_runtime(notes),
            bench_runtime_busy(),
            bench_extraction(notes),
            *bench_daemon(notes),
            *bench_web(notes),
            *bench_mcp(notes),
            *bench_parallel(notes),
            *bench_long_plan(notes),
            *bench_cluster(notes),
            *bench_history(notes),
            *bench_redaction(notes),
            *bench_daemon_growth(notes),
            *bench_recall_history(notes),
            *bench_model_client(notes),
            *bench_seam(notes),
        ]
    print(f"{'benchmark':28} {'measured':>10} {'baseline':>29} {'ratio':>7} {'target':>7}")
    failed = 0
    for result in filter(None, results):
        flag = "ok" if result.ok else "OVER"
        failed += not result.ok
        print(
            f"{result.name:28} {result.measured_s * 1000:8.1f}ms "
            f"{result.baseline_name:>20} {result.baseline_s * 1000:6.1f}ms "
            f"{result.ratio:6.2f}x {result.target_ratio:6.2f}x  {flag}"
        )
    for note in notes:
        print(note)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
