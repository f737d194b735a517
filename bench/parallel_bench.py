"""Runs at the speed of the model: two diamond squads on the OpenAI stub server, as ratios
measured in the same run.

The classic diamond (start -> 4 tasks in parallel -> finish) at a fixed 200 ms per call:

* against the critical path: three calls in a row (start, one middle task, finish) at the
  stub's latency, measured as three real calls through the same model seam; target at most
  1.1x;
* against the same squad with ``limits.max_parallel: 1`` (six calls in a row); target at
  least 1.8x faster, reported as that run's time over the parallel one's.

The uneven diamond (start -> a1 -> a2, start -> b1, then end after a2 and b1), whose calls
take what their task descriptions tell the stub (:data:`UNEVEN`: b1 slow, the rest fast).
Timed from the moment start's call returns (noted at the model seam) to the run's end,
against its critical path after that call, ``max(a1 + a2, b1) + end``, measured as each
chain's calls made in a row through the same seam; target at most 1.08x. A run that holds a
ready task until every task of its step has finished (a superstep barrier) takes
``b1 + a2 + end`` instead.

Each figure is the median of three runs, taken in turn with the others of its diamond (the
critical path, the parallel and the serial run; the uneven diamond and its critical path), after
a run of each diamond that warms what a process does once (litellm's first call, the
tokenizer's tables, the run's lazy imports), as the critical path's first calls are. Run
alone with ``python -m bench.parallel_bench``; ``python -m bench`` includes it, in a process
of its own.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from bench.support import PacedAnswers, StubCall, paced, temp_settings

if TYPE_CHECKING:
    from collections.abc import Sequence

    from bench.__main__ import Result
    from squad.app import App
    from squad.model.types import ChatModel, Message, ModelEvent, ModelReply, Price, ToolSpec
    from squad.spec.models import ModelSpec

LATENCY_S = 0.2
REPEAT = 3
MIDDLE = ("b1", "b2", "b3", "b4")
UNEVEN: dict[str, tuple[float, tuple[str, ...]]] = {
    "start": (0.2, ()),
    "a1": (0.3, ("start",)),
    "a2": (0.3, ("a1",)),
    "b1": (1.0, ("start",)),
    "end": (0.2, ("a2", "b1")),
}
"""The uneven diamond: each task's model latency and what it depends on."""
UNEVEN_CHAINS = (("a1", "a2", "end"), ("b1", "end"))
"""The uneven diamond's paths after start: the longest is its critical path."""


def _definition(url: str, parallel: int, name: str) -> str:
    lines = [
        f"name: {name}",
        _model_line(url),
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


def _model_line(url: str) -> str:
    return (
        f"model: {{name: openai/stub, api_base: '{url}', api_key_env: STUB_KEY,"
        " cost_per_1k_input: 0, cost_per_1k_output: 0}"
    )


def uneven_description(step: str) -> str:
    """The uneven diamond's task ``step``, telling the stub its latency (shared with CrewAI's
    side of the comparison, so both make the same calls)."""
    return paced(f"Do step {step}.", UNEVEN[step][0])


def _uneven_definition(url: str, name: str) -> str:
    lines = [
        f"name: {name}",
        _model_line(url),
        f"limits: {{max_parallel: {len(UNEVEN)}}}",
        "memory: {enabled: false}",
        "agents:",
        "  - {id: worker, role: Does one step}",
        "tasks:",
    ]
    for step, (_, after) in UNEVEN.items():
        deps = f", depends_on: [{', '.join(after)}]" if after else ""
        lines.append(
            f"  - {{id: {step}, description: '{uneven_description(step)}', agent: worker{deps}}}"
        )
    return "\n".join(lines) + "\n"


class _NotedReplies:
    """The model seam, noting when each reply came back: the earliest note of a run is when
    its first task's call ended, the moment the uneven diamond is timed from."""

    def __init__(self, model: ChatModel, notes: list[float]) -> None:
        self._model = model
        self._notes = notes

    def price(self) -> Price | None:
        return self._model.price()

    def reserve_usd(self, messages: Sequence[Message], tools: Sequence[ToolSpec]) -> float:
        return self._model.reserve_usd(messages, tools)

    def complete(self, messages: Sequence[Message], **options: Any) -> ModelReply:
        reply = self._model.complete(messages, **options)
        self._notes.append(time.perf_counter())
        return reply


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


def _run_uneven(app: App, url: str, index: int) -> tuple[float, float]:
    """One uneven diamond run: its whole time, and its time after start's call returned."""
    from squad.spec.loader import squad_from_text

    spec = squad_from_text(_uneven_definition(url, f"uneven-{index}"), source="x")
    workspace = app.squads.create(spec).path
    make = _models()
    replies: list[float] = []
    runner = app.runner(
        model_factory=lambda spec, on_event: _NotedReplies(make(spec, on_event), replies)
    )
    started = time.perf_counter()
    result = runner.run(spec, workspace)
    ended = time.perf_counter()
    if not result.succeeded:
        raise RuntimeError(f"the uneven diamond run failed: {result.error}")
    if len(replies) != len(UNEVEN):
        raise RuntimeError(f"the uneven diamond made {len(replies)} calls, not {len(UNEVEN)}")
    return ended - started, ended - min(replies)


def a2_wait_s(calls: Sequence[StubCall]) -> float:
    """How long after the stub answered a1 a2's call came, in one uneven diamond run: the
    scheduler's own delay, about none when a task starts as its dependencies finish, and
    b1 - a1 (700 ms) more behind a superstep barrier, whatever the machine's load."""
    by_step = {call.step: call for call in calls}
    a1, a2 = by_step["a1"], by_step["a2"]
    return a2.came - (a1.came + a1.held)


def _stub_model(url: str) -> ChatModel:
    from squad.spec.models import ModelSpec

    spec = ModelSpec(
        name="openai/stub",
        api_base=url,
        api_key_env="STUB_KEY",
        cost_per_1k_input=0,
        cost_per_1k_output=0,
    )
    return _models()(spec, lambda event: None)


def _in_a_row(model: ChatModel, prompts: Sequence[str]) -> float:
    from squad.model.types import Message

    started = time.perf_counter()
    for prompt in prompts:
        model.complete([Message.user(f"Task: {prompt}")])
    return time.perf_counter() - started


def _critical_path(url: str) -> float:
    """Three calls in a row through the same seam: the least a diamond can take."""
    return _in_a_row(_stub_model(url), [f"Do step {step}." for step in ("start", "b1", "finish")])


def _uneven_critical_path(url: str) -> float:
    """The uneven diamond's longest chain after start, its calls in a row through the same
    seam: the least a run can take once start's call has returned."""
    model = _stub_model(url)
    return max(
        _in_a_row(model, [uneven_description(step) for step in chain]) for chain in UNEVEN_CHAINS
    )


def measure() -> dict[str, Any]:
    from squad.app import App
    from squad.model.testing import OpenAIStubServer

    os.environ.setdefault("STUB_KEY", "stub-key")
    pace = PacedAnswers(LATENCY_S, "Done.")
    with (
        OpenAIStubServer(pace) as stub,
        temp_settings() as settings,
        App.open(settings) as app,
    ):
        _critical_path(stub.url)  # warm: litellm's import and first call
        for parallelism in (4, 1):  # and a run's first time in the process (tokenizer, imports)
            _run(app, stub.url, parallelism, REPEAT)
        paths, parallels, serials = [], [], []
        for index in range(REPEAT):  # interleaved: a change in load lands on each
            paths.append(_critical_path(stub.url))
            parallels.append(_run(app, stub.url, 4, index))
            serials.append(_run(app, stub.url, 1, index))
        path = statistics.median(paths)
        parallel = statistics.median(parallels)
        serial = statistics.median(serials)
        paths, uneven, waits = [], [], []
        for index in range(REPEAT):  # interleaved: a change in load lands on both
            paths.append(_uneven_critical_path(stub.url))
            pace.take()
            uneven.append(_run_uneven(app, stub.url, index))
            waits.append(a2_wait_s(pace.take()))
    return {
        "latency_s": LATENCY_S,
        "critical_path_s": path,
        "parallel_s": parallel,
        "serial_s": serial,
        "uneven_latencies_s": {step: latency for step, (latency, _) in UNEVEN.items()},
        "uneven_critical_path_s": statistics.median(paths),
        "uneven_s": statistics.median(whole for whole, _ in uneven),
        "uneven_after_first_s": statistics.median(after for _, after in uneven),
        "uneven_a2_wait_s": statistics.median(waits),
    }


def results(figures: dict[str, Any]) -> list[Result]:
    from bench.__main__ import Result

    return [
        Result(
            "diamond, 4 parallel",
            figures["parallel_s"],
            "critical path (3 calls)",
            figures["critical_path_s"],
            1.1,
        ),
        # inverted so that "at most" reads right: parallel over serial, at most 1/1.8
        Result(
            "diamond vs max_parallel 1",
            figures["parallel_s"],
            "serial",
            figures["serial_s"],
            1 / 1.8,
        ),
        Result(
            "uneven diamond, after 1st call",
            figures["uneven_after_first_s"],
            "its critical path",
            figures["uneven_critical_path_s"],
            1.08,
        ),
    ]


def notes(figures: dict[str, Any]) -> list[str]:
    speedup = figures["serial_s"] / figures["parallel_s"]
    pace = figures["uneven_latencies_s"]
    latencies = ", ".join(f"{step} {seconds * 1000:.0f}" for step, seconds in pace.items())
    latencies += " ms"
    barrier = max(pace["a1"], pace["b1"]) + pace["a2"] + pace["end"]
    return [
        f"  diamond at {figures['latency_s'] * 1000:.0f} ms a call: parallel "
        f"{figures['parallel_s']:.2f} s, serial {figures['serial_s']:.2f} s ({speedup:.2f}x "
        f"faster), critical path {figures['critical_path_s']:.2f} s",
        f"  uneven diamond ({latencies}): {figures['uneven_s']:.2f} s in all, "
        f"{figures['uneven_after_first_s']:.2f} s after start's call against a critical path "
        f"of {figures['uneven_critical_path_s']:.2f} s (a superstep barrier's floor: "
        f"{barrier:.2f} s); a2's call came {figures['uneven_a2_wait_s'] * 1000:.0f} ms after "
        f"a1's answer (b1's came {(pace['b1'] - pace['a1']) * 1000:.0f} ms after it)",
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
