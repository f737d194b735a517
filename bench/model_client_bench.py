"""A one-call ``squad run`` on a real provider model against a bare ``import litellm``.

The run's model is the OpenAI stub server on 127.0.0.1 (it answers at once), so what is left
is the process: interpreter, squad's own set-up (store, workspace, graph) and litellm's
import, which squad starts in the background as soon as it has read the squad. The
baseline is ``python -c "import litellm"`` with the environment squad sets before its own
import (local cost map, offline mode), measured in the same rounds, interleaved with the
runs. Target: at most :data:`TARGET` times the bare import.

Beside it, ``squad validate`` of a squad on a self-hosted model with no prices (the case
that reads litellm's shipped cost map, without importing litellm) against ``squad --help``:
target at most :data:`VALIDATE_TARGET` times.

``--tree DIR`` (repeatable) also times the squad of another checkout (say ``main`` before a
change) in the same rounds, each compiled to bytecode first as an installed tool is
(:func:`bench.support.compile_trees`); ``--json`` prints the figures as one JSON object.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bench.support import REPO, compile_trees, report, tree_args

if TYPE_CHECKING:
    from bench.__main__ import Result

TARGET = 1.25
VALIDATE_TARGET = 2.0
ROUNDS = 5
SELF_HOSTED = """\
name: local-llm
model: {name: openai/llama3, api_base: 'http://127.0.0.1:9/v1'}
agents: [{id: worker, role: Does one step}]
tasks: [{id: start, description: Do step start., agent: worker}]
"""
LITELLM_ENV = {"LITELLM_LOCAL_MODEL_COST_MAP": "True", "LITELLM_OFFLINE_MODE": "true"}
SQUAD = "import sys; from squad.cli import main; sys.argv[0] = 'squad'; sys.exit(main())"


def _definition(url: str) -> str:
    return "\n".join(
        [
            "name: one-call",
            f"model: {{name: openai/stub, api_base: '{url}', api_key_env: STUB_KEY,"
            " cost_per_1k_input: 0, cost_per_1k_output: 0}",
            "memory: {enabled: false}",
            "agents:",
            "  - {id: worker, role: Does one step}",
            "tasks:",
            "  - {id: start, description: Do step start., agent: worker}",
            "",
        ]
    )


def _timed(cmd: list[str], env: dict[str, str], code: int = 0) -> float:
    """Wall seconds of ``cmd``, run in its tree (``python -c`` puts the working folder first
    on the import path, ahead of ``PYTHONPATH``: from elsewhere, another tree's squad runs)."""
    started = time.perf_counter()
    done = subprocess.run(
        cmd, check=False, capture_output=True, env=env, cwd=env.get("PYTHONPATH") or None
    )
    elapsed = time.perf_counter() - started
    if done.returncode != code:
        raise RuntimeError(f"{cmd[3:]} exited {done.returncode}: {done.stderr.decode()[-500:]}")
    return elapsed


def measure(trees: list[Path]) -> dict[str, Any]:
    """Median seconds of the bare import and of the one-call run from each tree (this
    checkout first), over :data:`ROUNDS` interleaved rounds after one warm-up each."""
    from squad.model.testing import OpenAIStubServer

    with OpenAIStubServer() as stub, tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        squad_file = root / "one-call.yaml"
        squad_file.write_text(_definition(stub.url))
        bare_env = {**os.environ, **LITELLM_ENV}
        bare = [sys.executable, "-c", "import litellm"]
        compile_trees([REPO, *trees])
        runs: dict[str, list[str]] = {}
        envs: dict[str, dict[str, str]] = {}
        for index, tree in enumerate([REPO, *trees]):
            home = root / f"tree{index}"
            envs[str(tree)] = {
                **os.environ,
                "PYTHONPATH": str(tree),
                "STUB_KEY": "stub-key",
                "SQUAD_HOME": str(home / "home"),
                "SQUAD_WORKSPACES": str(home / "ws"),
                "SQUAD_CONFIGS": str(home / "configs"),
            }
            runs[str(tree)] = [sys.executable, "-c", SQUAD, "run", str(squad_file)]
        samples: dict[str, list[float]] = {"bare": [], **{tree: [] for tree in runs}}
        _timed(bare, bare_env)  # warm the page cache
        for tree, cmd in runs.items():
            _timed(cmd, envs[tree])  # creates the workspace: not what is measured
        for _ in range(ROUNDS):
            samples["bare"].append(_timed(bare, bare_env))
            for tree, cmd in runs.items():
                samples[tree].append(_timed(cmd, envs[tree]))
        calls = len(stub.requests)
        local = root / "local-llm.yaml"
        local.write_text(SELF_HOSTED)
        env = envs[str(REPO)]
        helps, validates = [], []
        for _ in range(ROUNDS * 2):
            helps.append(_timed([sys.executable, "-c", SQUAD, "--help"], env))
            validates.append(_timed([sys.executable, "-c", SQUAD, "validate", str(local)], env, 2))
    return {
        "help_s": statistics.median(helps),
        "validate_s": statistics.median(validates),
        "bare_import_s": statistics.median(samples["bare"]),
        "runs_s": {tree: statistics.median(samples[tree]) for tree in runs},
        "this_tree": str(REPO),
        "model_calls": calls,
    }


def results(figures: dict[str, Any]) -> list[Result]:
    from bench.__main__ import Result

    run_s, bare_s = figures["runs_s"][figures["this_tree"]], figures["bare_import_s"]
    return [
        Result("one-call run, stub model", run_s, "import litellm", bare_s, TARGET),
        Result(
            "validate, unpriced model",
            figures["validate_s"],
            "squad --help",
            figures["help_s"],
            VALIDATE_TARGET,
        ),
    ]


def notes(figures: dict[str, Any]) -> list[str]:
    bare = figures["bare_import_s"]
    lines = []
    for tree, seconds in figures["runs_s"].items():
        if tree != figures["this_tree"]:
            lines.append(
                f"one-call run from {tree}: {seconds * 1000:.0f} ms, {seconds / bare:.2f}x "
                "the bare import (same rounds)"
            )
    return lines


def main() -> int:
    return report(measure(tree_args(sys.argv[1:])), results, notes)


if __name__ == "__main__":
    sys.exit(main())
