"""Runs at the speed of the model: a diamond squad (start -> 4 tasks in parallel -> finish) on
the OpenAI stub server with a fixed 200 ms per call, as ratios measured in the same run.

* against the critical path: three calls in a row (start, one middle task, finish) at the
  stub's latency, measured as three real calls through the same model seam; target at most
  1.15x;
* against the same squad with ``limits.max_parallel: 1`` (six calls in a row); target at
  least 1.8x faster, reported as that run's time over the parallel one's.

Each figure is the median of three runs. Run alone with ``python -m bench.parallel_bench``;
``python -m bench`` includes it, in a process of its own.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from bench.support import temp_settings

if TYPE_CHECKING:
    from bench.__main__ import Result
    from squad.app import App
    from squad.model.types import ChatModel, ModelEvent
    from squad.spec.models import ModelSpec

LATENCY_S = 0.2
REPEAT = 3
MIDDLE = ("b1", "b2", "b3", "b4")


def _definition(url: str, parallel: int, name: str) -> str:
    model = (
        f"{{name: openai/stub, api_base: '{url}', api_key_env: STUB_KEY,"
        " cost_per_1k_input: 0, cost_per_1k_output: 0}"
    )
    lines = [
        f"name: {name}",
        f"model: {model}",
        f"limits: {{max_parallel: {parallel}}}",
        "memory: {enabled: false}",
        "agents:",
        "  - {id: worker, role: Does one step}",
        "tasks:",
        "  - {id: start, description: Do step start., agent: worker}",
    ]
    lines += [
        f"  - {{id: {t}, description: Do step {t}., agent: worker, depends_on: [start]}}"
        for t in MIDDLE
    ]
    after = ", ".join(MIDDLE)
    lines.append(
        f"  - {{id: finish, description: Do step finish., agent: worker, depends_on: [{after}]}}"
    )
    return "\n".join(lines) + "\n"


def _models() -> Callable[[ModelSpec, Callable[[ModelEvent], None]], ChatModel]:
    from squad.model import LiteLLMModel, RetryPolicy

    retry = RetryPolicy(max_attempts=1, base_delay_s=0, jitter=0)

    def make(spec: ModelSpec, on_event: Callable[[ModelEvent], None]) -> ChatModel:
        return LiteLLMModel(spec, on_event=on_event, retry=retry, sleep=lambda _: None)

    return make


def _run(app: App, url: str, parallel: int, index: int) -> float:
    from squad.spec.loader import squad_from_text

    spec = squad_from_text(_definition(url, parallel, f"diamond-{parallel}-{index}"), source="x")
    workspace = app.squads.create(spec).path
    runner = app.runner(model_factory=_models())
    started = time.perf_counter()
    result = runner.run(spec, workspace)
    elapsed = time.perf_counter() - started
    if not result.succeeded:
        raise RuntimeError(f"the diamond run failed: {result.error}")
    return elapsed


def _critical_path(url: str) -> float:
    """Three calls in a row through the same seam: the least a diamond can take."""
    from squad.model.types import Message
    from squad.spec.models import ModelSpec

    spec = ModelSpec(
        name="openai/stub",
        api_base=url,
        api_key_env="STUB_KEY",
        cost_per_1k_input=0,
        cost_per_1k_output=0,
    )
    model = _models()(spec, lambda event: None)
    started = time.perf_counter()
    for step in ("start", "b1", "finish"):
        model.complete([Message.user(f"Task: Do step {step}.")])
    return time.perf_counter() - started


def measure() -> dict[str, Any]:
    from squad.app import App
    from squad.model.stub_answers import answer, slow
    from squad.model.testing import OpenAIStubServer

    os.environ.setdefault("STUB_KEY", "stub-key")
    with (
        OpenAIStubServer(lambda body: slow(LATENCY_S, answer("Done."))) as stub,
        temp_settings() as settings,
        App.open(settings) as app,
    ):
        _critical_path(stub.url)  # warm: litellm's import and first call
        path = statistics.median(_critical_path(stub.url) for _ in range(REPEAT))
        parallel = statistics.median(_run(app, stub.url, 4, i) for i in range(REPEAT))
        serial = statistics.median(_run(app, stub.url, 1, i) for i in range(REPEAT))
    return {
        "latency_s": LATENCY_S,
        "critical_path_s": path,
        "parallel_s": parallel,
        "serial_s": serial,
    }


def results(figures: dict[str, Any]) -> list[Result]:
    from bench.__main__ import Result

    return [
        Result(
            "diamond, 4 parallel",
            figures["parallel_s"],
            "critical path (3 calls)",
            figures["critical_path_s"],
            1.15,
        ),
        # inverted so that "at most" reads right: parallel over serial, at most 1/1.8
        Result(
            "diamond vs max_parallel 1",
            figures["parallel_s"],
            "serial",
            figures["serial_s"],
            1 / 1.8,
        ),
    ]


def notes(figures: dict[str, Any]) -> list[str]:
    speedup = figures["serial_s"] / figures["parallel_s"]
    return [
        f"  diamond at {figures['latency_s'] * 1000:.0f} ms a call: parallel "
        f"{figures['parallel_s']:.2f} s, serial {figures['serial_s']:.2f} s ({speedup:.2f}x "
        f"faster), critical path {figures['critical_path_s']:.2f} s"
    ]


def bench_parallel(notes_out: list[str] | None = None) -> list[Result]:
    """This benchmark in a fresh process; notes go to ``notes_out`` (else are printed)."""
    from bench.support import in_fresh_process

    return in_fresh_process("bench.parallel_bench", results, notes, notes_out)


def main() -> int:
    from bench.support import report

    return report(measure(), results, notes)


if __name__ == "__main__":
    sys.exit(main())
