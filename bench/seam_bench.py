"""CPU per model call through squad's seam, against a bare ``litellm.completion`` call.

A parallel run's model calls share one interpreter lock: what a call costs in CPU, the
fan-out of a diamond pays once per task while its critical path pays it once. Here each
call goes to the OpenAI stub server on 127.0.0.1, which runs in this process, so that the
measured process spends its CPU on nothing but the client side: the seam
(:class:`~squad.model.seam.LiteLLMModel`: request, retries, litellm, cost, events) and,
as the baseline, ``litellm.completion`` with the same request and squad's import settings.
The calls are made in a row on a thread other than the main one, as a run's tasks make
them. Each figure is process CPU (every thread, litellm's own logging threads included) over
:data:`CALLS` calls after :data:`WARM` warm-up calls, the median of :data:`ROUNDS` processes
taken in turn. Target: the seam at most :data:`TARGET` times the bare call.

``--tree DIR`` (repeatable) also measures the seam of another checkout (say ``main`` before
a change) in the same rounds; ``--json`` prints the figures as one JSON object.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bench.support import REPO, report, tree_args

if TYPE_CHECKING:
    from bench.__main__ import Result

TARGET = 1.0
ROUNDS = 5
CALLS = 200
WARM = 10
SYSTEM = "You are worker. Do one step of the plan and answer briefly. " * 8
"""A system prompt of a few hundred characters, about what a task's turn sends."""

_MEASURE = """\
import json, os, sys, threading, time
mode, url, calls, warm = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
system = os.environ["SEAM_BENCH_SYSTEM"]
if mode == "seam":
    from squad.model import LiteLLMModel, RetryPolicy
    from squad.model.types import Message
    from squad.spec.models import ModelSpec
    spec = ModelSpec(name="openai/stub", api_base=url, api_key_env="STUB_KEY",
                     cost_per_1k_input=0, cost_per_1k_output=0)
    model = LiteLLMModel(spec, retry=RetryPolicy(max_attempts=1, base_delay_s=0, jitter=0),
                         on_event=lambda event: None)
    messages = [Message.system(system), Message.user("Task: Do step b1.")]
    def call():
        model.complete(messages)
else:
    os.environ.update({"LITELLM_LOCAL_MODEL_COST_MAP": "True", "LITELLM_OFFLINE_MODE": "true"})
    import litellm
    litellm.suppress_debug_info = True
    request = {"model": "openai/stub", "api_base": url, "api_key": os.environ["STUB_KEY"],
               "messages": [{"role": "system", "content": system},
                            {"role": "user", "content": "Task: Do step b1."}],
               "num_retries": 0, "max_retries": 0}
    def call():
        litellm.completion(**request)
def calls_in_a_row(count):
    worker = threading.Thread(target=lambda: [call() for _ in range(count)])
    worker.start()  # on a thread of its own, as a run's task makes its calls
    worker.join()
calls_in_a_row(warm)
time.sleep(0.2)  # the warm-up's logging threads finish outside the measurement
started = time.process_time()
calls_in_a_row(calls)
time.sleep(0.2)  # and the measured calls' inside it
print(json.dumps((time.process_time() - started) / calls))
"""


def _cpu_per_call(mode: str, url: str, tree: Path) -> float:
    env = {
        **os.environ,
        "PYTHONPATH": str(tree),
        "STUB_KEY": "stub-key",
        "SEAM_BENCH_SYSTEM": SYSTEM,
    }
    done = subprocess.run(
        [sys.executable, "-c", _MEASURE, mode, url, str(CALLS), str(WARM)],
        check=True,
        capture_output=True,
        text=True,
        env=env,
        cwd=tree,  # `python -c` puts the working folder first on sys.path: the tree's squad
    )
    return float(json.loads(done.stdout.strip().splitlines()[-1]))


def measure(trees: list[Path]) -> dict[str, Any]:
    """Median CPU seconds per call of the bare litellm call and of each tree's seam (this
    checkout first), over :data:`ROUNDS` interleaved rounds."""
    from squad.model.testing import OpenAIStubServer

    samples: dict[str, list[float]] = {"bare": [], **{str(tree): [] for tree in [REPO, *trees]}}
    with OpenAIStubServer() as stub:
        for _ in range(ROUNDS):
            samples["bare"].append(_cpu_per_call("bare", stub.url, REPO))
            for tree in [REPO, *trees]:
                samples[str(tree)].append(_cpu_per_call("seam", stub.url, tree))
    return {
        "bare_s": statistics.median(samples["bare"]),
        "seams_s": {
            tree: statistics.median(values) for tree, values in samples.items() if tree != "bare"
        },
        "samples_s": samples,
        "this_tree": str(REPO),
    }


def results(figures: dict[str, Any]) -> list[Result]:
    from bench.__main__ import Result

    seam_s = figures["seams_s"][figures["this_tree"]]
    return [Result("seam CPU per call", seam_s, "litellm.completion", figures["bare_s"], TARGET)]


def notes(figures: dict[str, Any]) -> list[str]:
    bare = figures["bare_s"]
    lines = [f"  bare litellm.completion: {bare * 1000:.2f} ms of CPU a call"]
    for tree, seconds in figures["seams_s"].items():
        lines.append(
            f"  seam of {tree}: {seconds * 1000:.2f} ms of CPU a call, {seconds / bare:.2f}x the "
            "bare call (same rounds)"
        )
    return lines


def main() -> int:
    return report(measure(tree_args(sys.argv[1:])), results, notes)


if __name__ == "__main__":
    sys.exit(main())
