"""The diamond of ``bench.parallel_bench`` (start -> b1..b4 -> finish) on squad and on CrewAI,
both against the same OpenAI-compatible stub server with a fixed 200 ms per call.

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
  CrewAI's own parallelism, when it works (else reported as unavailable, with why).

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
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.crewai_compare import DEFAULT_CREWAI_PYTHON, Skipped, _read_json
from bench.parallel_bench import LATENCY_S, REPEAT, _run
from bench.support import temp_settings

SCRIPT = Path(__file__).with_name("crewai_diamond_script.py")
ANSWER = "Done: the task is complete."  # crewai_diamond_script.py checks the crew ends on it
CALLS = 6  # model calls in one diamond run, on either side
SERIAL_CALLS = 3  # the critical path: start, one middle task, finish


class Arrivals:
    """The stub's handler: answers after ``LATENCY_S`` and notes when each request came."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._times: list[float] = []

    def __call__(self, body: Any) -> Any:
        from squad.model.stub_answers import answer, slow

        with self._lock:
            self._times.append(time.perf_counter())
        return slow(LATENCY_S, answer(ANSWER))

    def take(self) -> list[float]:
        """The arrival times since the last take."""
        with self._lock:
            times, self._times = self._times, []
        return times


def in_flight(arrivals: list[float]) -> int:
    """The most requests in flight at once, each taking ``LATENCY_S`` from its arrival."""
    ordered = sorted(arrivals)
    return max(
        (sum(1 for t in ordered if s <= t < s + LATENCY_S) for s in ordered),
        default=0,
    )


@dataclass
class Side:
    """One contender's samples and what the stub saw of each of its runs."""

    seconds: list[float] = field(default_factory=list)
    calls: list[int] = field(default_factory=list)
    in_flight: list[int] = field(default_factory=list)

    def add(self, elapsed: float, arrivals: list[float]) -> None:
        self.seconds.append(elapsed)
        self.calls.append(len(arrivals))
        self.in_flight.append(in_flight(arrivals))

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
    kickoff: Callable[[str], float]
    build_s: list[float] = field(default_factory=list)
    network_attempts: list[str] = field(default_factory=list)


@contextmanager
def crewai_process(url: str) -> Iterator[CrewAIProcess]:
    """Start ``crewai_diamond_script.py`` in CrewAI's interpreter against ``url``, warmed up;
    yield it with a function that times one kickoff of a mode (``sequential``, ``async``)."""
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
                [python, str(SCRIPT), url],
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
            crew = CrewAIProcess(hello["version"], hello["async_error"], kickoff)
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
    arrivals = Arrivals()
    squad, sequential, concurrent = Side(), Side(), Side()
    with (
        OpenAIStubServer(arrivals) as stub,
        crewai_process(stub.url) as crew,  # warmed up: one kickoff of each mode
        temp_settings() as settings,
        App.open(settings) as app,
    ):
        _run(app, stub.url, 4, 0)  # warm: litellm's import and first call, the store
        arrivals.take()
        for index in range(1, REPEAT + 1):
            squad.add(_run(app, stub.url, 4, index), arrivals.take())
            sequential.add(crew.kickoff("sequential"), arrivals.take())
            if crew.async_error is None:
                concurrent.add(crew.kickoff("async"), arrivals.take())
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
    }
    ours = figures["squad"]["median_s"]
    figures["squad_over_crewai_sequential"] = ours / figures["crewai_sequential"]["median_s"]
    figures["squad_over_crewai_async"] = (
        ours / figures["crewai_async"]["median_s"] if figures["crewai_async"] else None
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
    print(
        f"  CrewAI crew construction (not timed above) {figures['crewai_build_s'] * 1000:.0f} "
        f"ms; {figures['crewai_network_attempts']} network attempts refused"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
