"""The two diamonds of ``bench.parallel_bench`` on squad and on CrewAI, both against the same
OpenAI-compatible stub server: the classic one (start -> b1..b4 -> finish) at a fixed 200 ms
per call, and the uneven one (start -> a1 -> a2, start -> b1, then end) whose calls take what
their task descriptions tell the stub (``bench.parallel_bench.UNEVEN``: b1 slow, the rest fast).

``python -m bench.crewai_diamond`` times, in interleaved rounds (one run of each per round,
so that a change in machine load lands on all of them), after one warm-up run of each:

- squad: the diamond run by ``bench.parallel_bench``'s own ``_run`` (the same definition:
  one agent, memory off, ``limits.max_parallel: 4``) through ``LiteLLMModel``, in a temporary
  SQUAD_HOME, with its SQLite store, durable checkpoints and workspace files;
- CrewAI, sequential: ``bench/crewai_diamond_script.py`` run by CrewAI's interpreter
  (``CREWAI_PYTHON``, default /tmp/crewai-venv/bin/python, kept out of squad's venv) in a
  temporary HOME: the same six tasks with the same descriptions and context edges in a
  ``Crew(process=sequential)`` on CrewAI's ``LLM`` pointed at the same stub URL (its native
  OpenAI provider, the ``openai`` SDK over real HTTP), memory, tools, delegation, telemetry
  and tracing off, sockets refused except to 127.0.0.1;
- CrewAI, async: the same crew with ``async_execution=True`` on the four middle tasks,
  CrewAI's own parallelism, when it works (else reported as unavailable, with why);
- the uneven diamond on squad (``bench.parallel_bench``'s ``_run_uneven``) and on CrewAI,
  sequential and with async tasks. CrewAI 1.15 cannot run a1 -> a2 beside b1: an async task
  may not take an async task as context unless a synchronous task comes between them, and a
  synchronous task first waits for every pending async task. So its best order is
  :data:`CREWAI_UNEVEN_ORDER`, a1 and b1 async: a2 waits for b1 as a superstep barrier would.

It prints the medians of ``REPEAT`` runs and the ratios squad / CrewAI (below 1: squad is
faster), the model calls each side made per run and the most calls in flight at once, both
counted at the stub. Crew construction is timed apart from the kickoff and left out, as
squad's spec parsing is. ``--json`` prints one JSON object instead. Prints ``skipped: ...``
(with ``--json``, ``{"skipped": ...}``) and exits 0 when CrewAI's interpreter is missing or
crewai does not import there.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.crewai_compare import DEFAULT_CREWAI_PYTHON, Skipped, _read_json
from bench.parallel_bench import (
    LATENCY_S,
    REPEAT,
    UNEVEN,
    UNEVEN_CHAINS,
    _run,
    _run_uneven,
    a2_wait_s,
    uneven_description,
)
from bench.support import PacedAnswers, StubCall, most_in_flight, temp_settings

SCRIPT = Path(__file__).with_name("crewai_diamond_script.py")
ANSWER = "Done: the task is complete."  # crewai_diamond_script.py checks the crew ends on it
CALLS = 6  # model calls in one diamond run, on either side
SERIAL_CALLS = 3  # the critical path: start, one middle task, finish
CREWAI_UNEVEN_ORDER = ("start", "a1", "b1", "a2", "end")
"""The uneven diamond in CrewAI's task order: a1 and b1 async, a2 after them (see above)."""
CREWAI_UNEVEN_ASYNC = ("a1", "b1")


def crewai_uneven() -> dict[str, Any]:
    """The uneven diamond as ``crewai_diamond_script.py`` takes it (its UNEVEN argument)."""
    tasks = [
        {"id": step, "description": uneven_description(step), "context": list(UNEVEN[step][1])}
        for step in CREWAI_UNEVEN_ORDER
    ]
    return {"tasks": tasks, "async": list(CREWAI_UNEVEN_ASYNC)}


@dataclass
class Side:
    """One contender's samples and what the stub saw of each of its runs."""

    seconds: list[float] = field(default_factory=list)
    calls: list[int] = field(default_factory=list)
    in_flight: list[int] = field(default_factory=list)

    def add(self, elapsed: float, calls: list[StubCall]) -> None:
        self.seconds.append(elapsed)
        self.calls.append(len(calls))
        self.in_flight.append(most_in_flight(calls))

    def figures(self) -> dict[str, Any]:
        return {
            "median_s": statistics.median(self.seconds),
            "runs_s": self.seconds,
            "calls_per_run": self.calls,
            "max_in_flight": max(self.in_flight),
        }


@dataclass
class CrewAIProcess:
    version: str
    async_error: str | None
    uneven_async_error: str | None
    kickoff: Callable[[str], float]
    build_s: list[float] = field(default_factory=list)
    network_attempts: list[str] = field(default_factory=list)


@contextmanager
def crewai_process(url: str) -> Iterator[CrewAIProcess]:
    """Start ``crewai_diamond_script.py`` in CrewAI's interpreter against ``url``, warmed up;
    yield it with a function that times one kickoff of a mode (``sequential``, ``async``,
    ``uneven-sequential``, ``uneven-async``)."""
    python = os.environ.get("CREWAI_PYTHON", DEFAULT_CREWAI_PYTHON)
    if not Path(python).is_file():
        raise Skipped(
            f"no CrewAI interpreter at {python!r}; create it with `python3 -m venv "
            f"/tmp/crewai-venv && /tmp/crewai-venv/bin/pip install crewai` or set CREWAI_PYTHON"
        )
    with tempfile.TemporaryDirectory() as tmp:
        # CrewAI writes its task-output database and a key file under HOME / XDG_DATA_HOME
        # and lock files under TMPDIR: keep all of them inside this temporary folder.
        env = {
            **os.environ,
            "HOME": tmp,
            "XDG_DATA_HOME": str(Path(tmp) / "data"),
            "TMPDIR": tmp,
            "CREWAI_STORAGE_DIR": "bench",
            "NO_PROXY": "127.0.0.1,localhost",
        }
        probe = subprocess.run(
            [python, "-c", "import crewai"], env=env, cwd=tmp, capture_output=True, text=True
        )
        if probe.returncode:
            last = (probe.stderr.strip().splitlines() or ["(no error output)"])[-1]
            raise Skipped(f"crewai does not import in {python!r}: {last}")
        errors = Path(tmp) / "crewai-stderr.log"
        with (
            errors.open("w") as stderr,
            subprocess.Popen(
                [python, str(SCRIPT), url, json.dumps(crewai_uneven())],
                env=env,
                cwd=tmp,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=stderr,
                text=True,
            ) as process,
        ):
            assert process.stdin is not None and process.stdout is not None
            stdin, stdout = process.stdin, process.stdout

            def kickoff(mode: str) -> float:
                stdin.write(f"{mode}\n")
                stdin.flush()
                batch = _read_json(stdout, errors)
                crew.build_s.append(batch["build_s"])
                crew.network_attempts = batch["network_attempts"]
                elapsed: float = batch["kickoff_s"]
                return elapsed

            hello = _read_json(stdout, errors)
            crew = CrewAIProcess(
                hello["version"], hello["async_error"], hello["uneven_async_error"], kickoff
            )
            try:
                yield crew
            finally:
                stdin.close()
        if process.returncode:
            raise RuntimeError(f"the CrewAI process failed with exit code {process.returncode}")


def measure() -> dict[str, Any]:
    """The figures; raises ``Skipped`` when CrewAI is not there."""
    from squad.app import App
    from squad.model.testing import OpenAIStubServer

    os.environ.setdefault("STUB_KEY", "stub-key")
    calls = PacedAnswers(LATENCY_S, ANSWER)
    squad, sequential, concurrent = Side(), Side(), Side()
    uneven_squad, uneven_sequential, uneven_concurrent = Side(), Side(), Side()
    uneven_after_first: list[float] = []
    a2_waits: dict[str, list[float]] = {"squad": [], "crewai_async": []}
    with (
        OpenAIStubServer(calls) as stub,
        crewai_process(stub.url) as crew,  # warmed up: one kickoff of each mode
        temp_settings() as settings,
        App.open(settings) as app,
    ):
        _run(app, stub.url, 4, 0)  # warm: litellm's import and first call, the store
        _run_uneven(app, stub.url, 0)
        calls.take()
        for index in range(1, REPEAT + 1):
            squad.add(_run(app, stub.url, 4, index), calls.take())
            sequential.add(crew.kickoff("sequential"), calls.take())
            if crew.async_error is None:
                concurrent.add(crew.kickoff("async"), calls.take())
            whole, after_first = _run_uneven(app, stub.url, index)
            noted = calls.take()
            uneven_squad.add(whole, noted)
            uneven_after_first.append(after_first)
            a2_waits["squad"].append(a2_wait_s(noted))
            uneven_sequential.add(crew.kickoff("uneven-sequential"), calls.take())
            if crew.uneven_async_error is None:
                elapsed = crew.kickoff("uneven-async")
                noted = calls.take()
                uneven_concurrent.add(elapsed, noted)
                a2_waits["crewai_async"].append(a2_wait_s(noted))
    pace = {step: latency for step, (latency, _) in UNEVEN.items()}
    after_start = max(sum(pace[step] for step in chain) for chain in UNEVEN_CHAINS)
    figures: dict[str, Any] = {
        "latency_s": LATENCY_S,
        "repeat": REPEAT,
        "floor_parallel_s": round(SERIAL_CALLS * LATENCY_S, 6),
        "floor_sequential_s": round(CALLS * LATENCY_S, 6),
        "crewai_version": crew.version,
        "squad": squad.figures(),
        "crewai_sequential": sequential.figures(),
        "crewai_async": concurrent.figures() if concurrent.seconds else None,
        "crewai_async_error": crew.async_error,
        "crewai_build_s": statistics.median(crew.build_s),
        "crewai_network_attempts": len(crew.network_attempts),
        "uneven_latencies_s": pace,
        "uneven_floor_s": round(pace["start"] + after_start, 6),
        "uneven_barrier_floor_s": round(
            pace["start"] + max(pace["a1"], pace["b1"]) + pace["a2"] + pace["end"], 6
        ),
        "uneven_floor_sequential_s": round(sum(pace.values()), 6),
        "uneven_squad": uneven_squad.figures(),
        "uneven_squad_after_first_s": statistics.median(uneven_after_first),
        "uneven_crewai_sequential": uneven_sequential.figures(),
        "uneven_crewai_async": (uneven_concurrent.figures() if uneven_concurrent.seconds else None),
        "uneven_crewai_async_error": crew.uneven_async_error,
        "uneven_a2_wait_s": {
            side: statistics.median(waits) if waits else None for side, waits in a2_waits.items()
        },
    }
    for prefix in ("", "uneven_"):
        ours = figures[f"{prefix}squad"]["median_s"]
        for mode in ("sequential", "async"):
            theirs = figures[f"{prefix}crewai_{mode}"]
            figures[f"{prefix}squad_over_crewai_{mode}"] = (
                ours / theirs["median_s"] if theirs else None
            )
    return figures


def row(name: str, side: dict[str, Any]) -> str:
    runs = " ".join(f"{s * 1000:.0f}" for s in side["runs_s"])
    calls = "/".join(str(c) for c in side["calls_per_run"])
    return (
        f"  {name:34} {side['median_s'] * 1000:7.1f} ms   runs (ms): {runs}   "
        f"calls: {calls}, at most {side['max_in_flight']} at once"
    )


def main() -> int:
    try:
        figures = measure()
    except Skipped as why:
        print(json.dumps({"skipped": str(why)}) if "--json" in sys.argv else f"skipped: {why}")
        return 0
    if "--json" in sys.argv:
        print(json.dumps(figures))
        return 0
    latency_ms = figures["latency_s"] * 1000
    print(
        f"diamond of 6 tasks (start -> 4 in parallel -> finish), stub server at "
        f"{latency_ms:.0f} ms a call; median of {figures['repeat']}, interleaved"
    )
    print(row("squad, max_parallel 4", figures["squad"]))
    version = figures["crewai_version"]
    print(row(f"CrewAI {version} sequential", figures["crewai_sequential"]))
    if figures["crewai_async"]:
        print(row(f"CrewAI {version} async_execution", figures["crewai_async"]))
    else:
        print(f"  CrewAI async_execution: unavailable ({figures['crewai_async_error']})")
    print(
        f"  floors: {figures['floor_parallel_s']:.2f} s for 3 calls in a row (the critical "
        f"path), {figures['floor_sequential_s']:.2f} s for 6"
    )
    ratios = f"  ratio squad/CrewAI: sequential {figures['squad_over_crewai_sequential']:.2f}x"
    if figures["squad_over_crewai_async"] is not None:
        ratios += f", async_execution {figures['squad_over_crewai_async']:.2f}x"
    print(ratios)
    print(uneven_lines(figures))
    print(
        f"  CrewAI crew construction (not timed above) {figures['crewai_build_s'] * 1000:.0f} "
        f"ms; {figures['crewai_network_attempts']} network attempts refused"
    )
    return 0


def uneven_lines(figures: dict[str, Any]) -> str:
    pace = figures["uneven_latencies_s"]
    latencies = ", ".join(f"{step} {seconds * 1000:.0f}" for step, seconds in pace.items())
    version = figures["crewai_version"]
    lines = [
        f"uneven diamond (start -> a1 -> a2, start -> b1, end), stub at {latencies} ms a call",
        row("squad, max_parallel 5", figures["uneven_squad"]),
        row(f"CrewAI {version} sequential", figures["uneven_crewai_sequential"]),
    ]
    if figures["uneven_crewai_async"]:
        lines.append(row(f"CrewAI {version} async a1, b1", figures["uneven_crewai_async"]))
    else:
        lines.append(f"  CrewAI async tasks: unavailable ({figures['uneven_crewai_async_error']})")
    lines.append(
        f"  floors: {figures['uneven_floor_s']:.2f} s on the critical path, "
        f"{figures['uneven_barrier_floor_s']:.2f} s behind a superstep barrier, "
        f"{figures['uneven_floor_sequential_s']:.2f} s one call after another; squad "
        f"{figures['uneven_squad_after_first_s']:.2f} s after start's call returned"
    )
    waits = figures["uneven_a2_wait_s"]
    waited = f"  a2's call came {waits['squad'] * 1000:.0f} ms after a1's answer on squad"
    if waits["crewai_async"] is not None:
        waited += f", {waits['crewai_async'] * 1000:.0f} ms on CrewAI's async tasks"
    gap = (pace["b1"] - pace["a1"]) * 1000
    lines.append(f"{waited} (b1's answer came {gap:.0f} ms after a1's)")
    ratios = (
        f"  ratio squad/CrewAI: sequential {figures['uneven_squad_over_crewai_sequential']:.2f}x"
    )
    if figures["uneven_squad_over_crewai_async"] is not None:
        ratios += f", async tasks {figures['uneven_squad_over_crewai_async']:.2f}x"
    lines.append(ratios)
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
