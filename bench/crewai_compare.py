"""One three-agent, three-task sequential crew on a zero-latency model: squad against CrewAI.

``python -m bench.crewai_compare`` times whole crew runs on both frameworks in the same
sitting, each warmed up once, and prints the medians and the ratio squad / CrewAI. The runs
are taken in interleaved rounds (a few CrewAI kickoffs, then a few squad runs of each kind)
so that a change in machine load lands on both sides rather than on whichever ran last.

- squad: ``App.runner().run`` on a parsed spec (three agents, tasks chained by
  ``depends_on``) with ``bench.support.InstantModel``, in a temporary SQUAD_HOME.
  Each run writes the SQLite store, durable LangGraph checkpoints, the run log and task
  files in the workspace, and assembles every prompt with memory. It is timed twice: as
  configured by default (memory on) and with ``memory: {enabled: false}``.
- CrewAI: ``bench/crewai_script.py`` run by CrewAI's interpreter (``CREWAI_PYTHON``, default
  /tmp/crewai-venv/bin/python, kept out of squad's venv) in a temporary HOME: three
  ``Agent`` and three ``Task`` (each taking the previous one as context) in a
  ``Crew(process=sequential)`` on a ``BaseLLM`` subclass that answers at once, with memory,
  tools, delegation, telemetry and tracing off and sockets refused. Each kickoff validates
  pydantic models and writes its task outputs to a SQLite file, but keeps no checkpoints.
  Crew construction is timed apart from the kickoff, as squad's spec parsing is left out.

Both sides call the model three times per run. They do not do the same work around those
calls, so the ratio is what squad's durability and memory cost against CrewAI's defaults,
not a like-for-like speed comparison. Prints ``skipped: ...`` and exits 0 when CrewAI's
interpreter is missing or crewai does not import there.

``python -m bench.crewai_compare --all`` then runs ``bench.crewai_diamond`` in a process of its
own: the classic and the uneven diamond on the stub server, so one command re-measures all
three side by side (the README's figures).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from bench.support import REPO, InstantModel, temp_settings

ROUNDS = 5
PER_ROUND = 3
AGENTS = 3
DEFAULT_CREWAI_PYTHON = "/tmp/crewai-venv/bin/python"
SCRIPT = Path(__file__).with_name("crewai_script.py")


class Skipped(Exception):
    """CrewAI is not there to compare with; the message says why."""


def squad_yaml(*, memory: bool) -> str:
    lines = ["name: bench", "process: sequential"]
    if not memory:
        lines.append("memory: {enabled: false}")
    lines.append("agents:")
    lines += [f"  - {{id: worker-{i}, role: Worker {i} does the work}}" for i in range(AGENTS)]
    lines.append("tasks:")
    for i in range(AGENTS):
        deps = f", depends_on: [t{i - 1}]" if i else ""
        lines.append(
            f"  - {{id: t{i}, description: Step {i} of the work., "
            f"expected_output: A short note., agent: worker-{i}{deps}}}"
        )
    return "\n".join(lines) + "\n"


@contextmanager
def squad_crew(*, memory: bool) -> Iterator[Callable[[], float]]:
    """Yield a function that times one whole squad run, after one warm-up run."""
    from squad.app import App
    from squad.spec.loader import squad_from_text

    with temp_settings() as settings:
        spec = squad_from_text(squad_yaml(memory=memory))
        with App.open(settings, model_factory=lambda spec, on_event: InstantModel()) as app:
            workspace = app.squads.create(spec).path
            runner = app.runner()

            def timed_run() -> float:
                start = time.perf_counter()
                result = runner.run(spec, workspace)
                elapsed = time.perf_counter() - start
                assert result.succeeded, result
                return elapsed

            timed_run()  # warm: tokenizer, imports, schema
            yield timed_run


@dataclass
class CrewAIRuns:
    """Timings and checks gathered from the CrewAI process, batch by batch."""

    version: str
    build_s: list[float] = field(default_factory=list)
    kickoff_s: list[float] = field(default_factory=list)
    llm_calls: int = 0
    network_attempts: list[str] = field(default_factory=list)


def _read_json(stream: IO[str], errors: Path) -> dict[str, Any]:
    """The next JSON object the CrewAI process prints, skipping any chatter of its own."""
    for line in stream:
        if line.startswith("{"):
            parsed: dict[str, Any] = json.loads(line)
            return parsed
    tail = "\n".join(errors.read_text(errors="replace").splitlines()[-20:])
    raise RuntimeError(f"the CrewAI process ended before reporting; its stderr ends:\n{tail}")


@contextmanager
def crewai_crew() -> Iterator[tuple[CrewAIRuns, Callable[[int], None]]]:
    """Start ``crewai_script.py`` in CrewAI's interpreter, warmed up; yield its results so
    far and a function that times N more kickoffs."""
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
                [python, str(SCRIPT)],
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
            runs = CrewAIRuns(version=_read_json(stdout, errors)["version"])

            def timed_kickoffs(count: int) -> None:
                stdin.write(f"{count}\n")
                stdin.flush()
                batch = _read_json(stdout, errors)
                runs.build_s += batch["build_s"]
                runs.kickoff_s += batch["kickoff_s"]
                runs.llm_calls = batch["llm_calls"]
                runs.network_attempts = batch["network_attempts"]

            try:
                yield runs, timed_kickoffs
            finally:
                stdin.close()
        if process.returncode:
            raise RuntimeError(f"the CrewAI process failed with exit code {process.returncode}")


def row(name: str, samples: list[float]) -> str:
    runs = " ".join(f"{s * 1000:.0f}" for s in samples)
    return f"  {name:26} {statistics.median(samples) * 1000:6.1f} ms   runs (ms): {runs}"


def main() -> int:
    with_memory: list[float] = []
    without_memory: list[float] = []
    try:
        with (
            crewai_crew() as (crew, kickoffs),
            squad_crew(memory=True) as run_with_memory,
            squad_crew(memory=False) as run_without_memory,
        ):
            for _ in range(ROUNDS):
                kickoffs(PER_ROUND)
                with_memory += [run_with_memory() for _ in range(PER_ROUND)]
                without_memory += [run_without_memory() for _ in range(PER_ROUND)]
    except Skipped as why:
        print(f"skipped: {why}")
        return 0
    theirs = statistics.median(crew.kickoff_s)

    runs = ROUNDS * PER_ROUND
    print(f"{AGENTS} agents, {AGENTS} chained sequential tasks, instant model; median of {runs}")
    print(row(f"CrewAI {crew.version} kickoff", crew.kickoff_s))
    print(row("CrewAI crew construction", crew.build_s))
    print(row("squad run, memory on", with_memory))
    print(row("squad run, memory off", without_memory))
    print(
        f"  ratio squad/CrewAI: memory on {statistics.median(with_memory) / theirs:.2f}x, "
        f"memory off {statistics.median(without_memory) / theirs:.2f}x"
    )
    print(
        f"  CrewAI made {crew.llm_calls} LLM calls (warm-up included) and "
        f"{len(crew.network_attempts)} network attempts"
    )
    if "--all" in sys.argv:
        sys.stdout.flush()
        diamonds = [sys.executable, "-m", "bench.crewai_diamond"]
        return subprocess.run(diamonds, check=False, cwd=REPO).returncode
    return 0


if __name__ == "__main__":
    sys.exit(main())
