"""What the benchmarks share: an instant model, throw-away settings, a benchmark in its own
process."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from squad.model.types import FREE, Message, ModelReply, Price, TokenCallback, ToolSpec, Usage

if TYPE_CHECKING:
    from bench.__main__ import Result
    from squad.settings import Settings

REPO = Path(__file__).resolve().parent.parent
PACE = re.compile(r"\(stub answers in (\d+) ms\)")
STEP = re.compile(r"Do step (\w+)\.")


class InstantModel:
    """A zero-latency ChatModel: the cost of the model is taken out of the measurement.

    Calls that want JSON (``response_format``, the fact extractor's) get ``json_answer``.
    """

    def __init__(
        self, answer: str = "Done: the task is complete.", json_answer: str = '{"facts": []}'
    ) -> None:
        self.answer = answer
        self.json_answer = json_answer

    def price(self) -> Price:
        """Free: it answers in this process."""
        return FREE

    def reserve_usd(self, messages: Sequence[Message], tools: Sequence[ToolSpec]) -> float:
        """Nothing to reserve: a free model's call costs nothing."""
        return 0.0

    def complete(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[ToolSpec] = (),
        response_format: Mapping[str, Any] | None = None,
        timeout_s: float | None = None,
        on_token: TokenCallback | None = None,
    ) -> ModelReply:
        text = self.json_answer if response_format else self.answer
        return ModelReply(text, usage=Usage(10, 5, 0.0), model="instant")


def paced(description: str, latency_s: float) -> str:
    """``description`` with the marker that makes :class:`PacedAnswers` hold its call
    ``latency_s``: a task definition says how slow its model is, in words both squad and
    CrewAI put in the prompt."""
    return f"{description} (stub answers in {round(latency_s * 1000)} ms)"


class StubCall(NamedTuple):
    """One request the stub answered: when it came, how long it was held, the step it was for
    (``Do step NAME.`` in its prompt; empty when none)."""

    came: float
    held: float
    step: str


class PacedAnswers:
    """The OpenAI stub server's handler for the timed benchmarks: answers ``content`` after the
    latency the request's prompt names (see :func:`paced`), else after ``default_s``, and notes
    each request (:class:`StubCall`), so a run's calls, overlap and waits can be counted.

    Marker and step are read from the last message that names a step: the task's own prompt.
    Context from earlier tasks carries their answers, never their descriptions, on squad and
    CrewAI alike.
    """

    def __init__(self, default_s: float, content: str) -> None:
        self.default_s = default_s
        self.content = content
        self._lock = threading.Lock()
        self._calls: list[StubCall] = []

    def latency_s(self, body: Any) -> float:
        """How long to hold the request whose JSON body is ``body``."""
        for message in reversed(body.get("messages", [])):
            found = PACE.search(str(message.get("content", "")))
            if found:
                return int(found.group(1)) / 1000
        return self.default_s

    @staticmethod
    def step(body: Any) -> str:
        """The step the request whose JSON body is ``body`` is for, or ``""``."""
        for message in reversed(body.get("messages", [])):
            found = STEP.search(str(message.get("content", "")))
            if found:
                return found.group(1)
        return ""

    def __call__(self, body: Any) -> Any:
        from squad.model.stub_answers import answer, slow

        held = self.latency_s(body)
        with self._lock:
            self._calls.append(StubCall(time.perf_counter(), held, self.step(body)))
        return slow(held, answer(self.content))

    def take(self) -> list[StubCall]:
        """Each request since the last take."""
        with self._lock:
            calls, self._calls = self._calls, []
        return calls


def most_in_flight(calls: Sequence[StubCall]) -> int:
    """The most requests held at once, from :meth:`PacedAnswers.take`'s notes."""
    return max(
        (sum(1 for call in calls if call.came <= at.came < call.came + call.held) for at in calls),
        default=0,
    )


@contextmanager
def temp_settings() -> Iterator[Settings]:
    """Settings whose home, workspaces and configs live in a folder deleted afterwards."""
    from squad.settings import Settings

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        yield Settings.load(
            {
                "SQUAD_HOME": str(root / "home"),
                "SQUAD_WORKSPACES": str(root / "ws"),
                "SQUAD_CONFIGS": str(root / "configs"),
            },
            cwd=root,
        )


def run_json(module: str, *args: str) -> dict[str, Any]:
    """Run ``python -m module --json [args]`` in a fresh process (its heap is not the
    caller's) and return the JSON object it prints last."""
    done = subprocess.run(
        [sys.executable, "-m", module, "--json", *args],
        check=True,
        capture_output=True,
        text=True,
        cwd=REPO,
    )
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


Figures = dict[str, Any]


def in_fresh_process(
    module: str,
    results: Callable[[Figures], list[Result]],
    notes: Callable[[Figures], list[str]],
    notes_out: list[str] | None = None,
) -> list[Result]:
    """``module``'s benchmark run in a process of its own (:func:`run_json`): its results, and
    its notes added to ``notes_out`` (printed when there is none)."""
    figures = run_json(module)
    lines = notes(figures)
    if notes_out is None:
        print("\n".join(lines))
    else:
        notes_out.extend(lines)
    return results(figures)


def tree_args(args: Sequence[str]) -> list[Path]:
    """The checkouts named by ``--tree DIR`` (each timed in the same rounds as this one)."""
    return [Path(args[i + 1]).resolve() for i, arg in enumerate(args) if arg == "--tree"]


def compile_trees(trees: Sequence[Path]) -> None:
    """Write the bytecode of each checkout's ``squad`` package with this interpreter, as an
    installed tool has it: with ``PYTHONDONTWRITEBYTECODE`` set (as here), a timed command would
    otherwise compile all of squad on every start and time the compiler, not the command."""
    for tree in trees:
        subprocess.run(
            [sys.executable, "-m", "compileall", "-q", str(tree / "squad")],
            check=True,
            env={k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},
        )


def report(
    figures: Figures,
    results: Callable[[Figures], list[Result]],
    notes: Callable[[Figures], list[str]],
) -> int:
    """A benchmark module's ``main``: one JSON object with ``--json``, else a line per result
    (milliseconds, the baseline, the ratio and its target) and the notes."""
    if "--json" in sys.argv:
        print(json.dumps(figures))
        return 0
    for result in results(figures):
        print(
            f"{result.name:32} {result.measured_s * 1000:9.2f}ms {result.baseline_name:>24} "
            f"{result.baseline_s * 1000:8.3f}ms {result.ratio:8.2f}x {result.target_ratio:5.2f}x"
        )
    for line in notes(figures):
        print(line)
    return 0
