"""One message through one way into squad's storage, in a fresh copy of one home.

The home (SQLite store, workspaces with their git history, configs) is built once with the
probe squad and copied for every message; the stub model serves on 127.0.0.1 meanwhile. The
paths and what the stub answers are described in :mod:`bench.credential_paths`.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.credential_samples import Sample
from bench.credential_search import Needle, blobs, count_hits, where
from squad.errors import SquadError
from squad.memory.boot import ensure_default_soul
from squad.model.stub_answers import Behaviour, answer
from squad.model.testing import OpenAIStubServer

__all__ = ["DEFAULT_PATHS", "PATHS", "Lab", "Outcome", "lab", "measure"]

PATHS = ("remember", "extract", "chat", "chat-quiet")
DEFAULT_PATHS = ("remember", "extract", "chat")
MARKER = "[REDACTED:"
SQUAD, KEEPER, TALKER, QUIET = "probe", "keeper", "talker", "quiet"
FOLLOWUP = "Next point, unrelated: " + " ".join(f"item{i}" for i in range(40))
"""A follow-up chat message: about ten of them fold the measured turn into the summary of a
2,048-token window's history."""
FLAGGED = frozenset({"refused", "dropped-secret"})
"""Statuses that mean squad judged the message to hold a credential."""


# -- the command line, in this process or as a subprocess -----------------------------------


@dataclass(frozen=True)
class Ran:
    """What one command did. ``stdout`` and ``message`` may hold the credential: never shown."""

    code: int
    stdout: str
    message: str


Cli = Callable[..., Ran]


def in_process(env: Mapping[str, str]) -> Cli:
    """``squad`` run through its Typer app in this process (exit codes as ``squad.cli.main``
    gives them), with only ``env``'s SQUAD_ variables set: fast enough for a set of hundreds."""
    from typer.testing import CliRunner

    from squad.cli.app import app

    settings: dict[str, str | None] = {k: None for k in os.environ if k.startswith("SQUAD_")}
    settings.update(env)
    runner = CliRunner()

    def run(*args: str) -> Ran:
        result = runner.invoke(app, list(args), env=settings)
        error = result.exception
        if isinstance(error, SquadError):
            return Ran(error.exit_code, result.stdout, str(error))
        if error is not None and not isinstance(error, SystemExit):
            return Ran(1, result.stdout, f"{type(error).__name__}: {error}")
        return Ran(result.exit_code, result.stdout, result.stderr)

    return run


def as_subprocess(env: Mapping[str, str], cwd: Path) -> Cli:
    """The installed ``squad`` console script, one process per command (about a second each)."""
    script = Path(sys.executable).parent / "squad"
    command = [str(script)] if script.exists() else [sys.executable, "-c", _MAIN]
    base = {k: v for k, v in os.environ.items() if not k.startswith("SQUAD_")}

    def run(*args: str) -> Ran:
        done = subprocess.run(
            [*command, *args],
            env={**base, **env},
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        return Ran(done.returncode, done.stdout, done.stderr)

    return run


_MAIN = "from squad.cli import main; main()"


# -- one message through one path ------------------------------------------------------------


@dataclass(frozen=True)
class Outcome:
    """What one path did with one message; names places, never values."""

    path: str
    sample: Sample
    status: str
    """refused, stored, dropped-secret, written, nothing, replied, or error."""
    places: tuple[str, ...]
    """Where a value of the message lies raw (files, git objects, store columns)."""
    values_found: int
    redacted: bool
    """A ``[REDACTED:`` marker was stored."""

    @property
    def credential(self) -> bool:
        return bool(self.sample.values)

    @property
    def kept_out(self) -> bool:
        return not self.places

    @property
    def flagged(self) -> bool:
        """Squad judged the message to hold a credential (refused, dropped or redacted it)."""
        return self.status in FLAGGED or self.redacted

    def row(self) -> dict[str, Any]:
        return {
            "index": self.sample.index,
            "lang": self.sample.lang,
            "form": self.sample.form,
            "status": self.status,
            "redacted": self.redacted,
            "places": list(self.places),
            "values_found": self.values_found,
            "values": len(self.sample.values),
        }


def _refusal(ran: Ran) -> str:
    if ran.code == 0:
        return ""
    return "refused" if "credential" in ran.message.lower() else "error"


def remember(cli: Cli, sample: Sample, inputs: Path) -> str:
    ran = cli(
        "memory", "remember", "--layer", "project", "--json", "--", SQUAD, KEEPER, sample.text
    )
    return _refusal(ran) or "stored"


def extract(cli: Cli, sample: Sample, inputs: Path) -> str:
    transcript = inputs / "transcript.jsonl"
    lines = [{"role": "user", "content": sample.text}, {"role": "assistant", "content": "Got it."}]
    transcript.write_text("".join(json.dumps(m, ensure_ascii=False) + "\n" for m in lines))
    ran = cli(
        "memory",
        "extract",
        str(transcript),
        "--squad",
        SQUAD,
        "--agent",
        KEEPER,
        "--format",
        "json",
    )
    if ran.code != 0:
        return _refusal(ran)
    try:
        data = json.loads(ran.stdout)
    except ValueError:
        return "error"
    if any(d.get("reason") == "secret" for d in data.get("dropped", ())):
        return "dropped-secret"
    return "written" if data.get("written") else "nothing"


def chat_with(agent: str, followups: int) -> Callable[[Cli, Sample, Path], str]:
    def chat(cli: Cli, sample: Sample, inputs: Path) -> str:
        for text in (sample.text, *[FOLLOWUP] * followups):
            ran = cli("chat", SQUAD, agent, f"--message={text}")
            if ran.code != 0:
                return _refusal(ran)
        return "replied"

    return chat


def reply(body: Any) -> Behaviour:
    """The stub model: extraction finds nothing; ``quiet`` says "Noted."; ``echo`` repeats
    the last user message it was sent (a chat turn's message, or what a summary request asks
    it to summarise)."""
    if body.get("response_format"):
        return answer('{"facts": []}')
    if body.get("model") == "quiet":
        return answer("Noted.")
    said = [m for m in body.get("messages", []) if m.get("role") == "user"]
    return answer(f"You said: {said[-1]['content'] if said else ''}")


def squad_yaml(url: str, followups: int) -> str:
    window = ", context_window: 2048" if followups else ""

    def model(name: str) -> str:
        return (
            f"{{name: openai/{name}, api_base: '{url}', "
            f"cost_per_1k_input: 0, cost_per_1k_output: 0{window}}}"
        )

    return f"""\
name: {SQUAD}
goal: Keep the team's notes.
model: offline
agents:
  - {{id: {KEEPER}, role: Keeps the team's notes}}
  - id: {TALKER}
    role: Answers the team in chat
    model: {model("echo")}
    memory: {{trigger_interval: 1}}
  - id: {QUIET}
    role: Answers the team in chat, briefly
    model: {model("quiet")}
    memory: {{trigger_interval: 1}}
tasks:
  - {{id: notes, description: Keep the notes., agent: {KEEPER}}}
"""


@dataclass
class Lab:
    """A home built once (``template``) and copied to ``live`` for every message: the store
    holds the workspace's absolute path, so every copy lives at the same place."""

    work: Path
    followups: int = 0
    use_subprocess: bool = False
    template_blobs: list[tuple[str, bytes]] = field(default_factory=list)

    @property
    def live(self) -> Path:
        return self.work / "live"

    @property
    def template(self) -> Path:
        return self.work / "template"

    @property
    def inputs(self) -> Path:
        return self.work / "inputs"

    def env(self) -> dict[str, str]:
        return {
            "SQUAD_HOME": str(self.live / "home"),
            "SQUAD_WORKSPACES": str(self.live / "ws"),
            "SQUAD_CONFIGS": str(self.live / "configs"),
        }

    def cli(self) -> Cli:
        if self.use_subprocess:
            return as_subprocess(self.env(), self.inputs)
        return in_process(self.env())

    def build(self, url: str) -> None:
        self.inputs.mkdir(parents=True, exist_ok=True)
        definition = self.inputs / f"{SQUAD}.yaml"
        definition.write_text(squad_yaml(url, self.followups))
        created = self.cli()("create", str(definition))
        if created.code != 0:
            raise RuntimeError(f"cannot create the probe squad: {created.message}")
        # The persona squad writes into a home on its first prompt is the home's, not the
        # message's: its words ("verify") are not a seed phrase that got in.
        ensure_default_soul(self.live / "home")
        self.live.rename(self.template)
        self.template_blobs = list(blobs(self.template))

    def run(self, cli: Cli, path: str, sample: Sample) -> Outcome:
        shutil.rmtree(self.live, ignore_errors=True)
        shutil.copytree(self.template, self.live, symlinks=True)
        action = ACTIONS[path](self.followups)
        status = action(cli, sample, self.inputs)
        needles: dict[str | int, Needle] = {
            i: Needle.for_value(v, sample.text) for i, v in enumerate(sample.values)
        }
        needles["marker"] = Needle.literal(MARKER)
        found = count_hits(blobs(self.live), needles)
        baseline = count_hits(self.template_blobs, needles)
        places: set[str] = set()
        values_found = 0
        for key in range(len(sample.values)):
            here = where(found[key], baseline[key])
            values_found += bool(here)
            places.update(here)
        redacted = bool(where(found["marker"], baseline["marker"]))
        return Outcome(path, sample, status, tuple(sorted(places)), values_found, redacted)


ACTIONS: dict[str, Callable[[int], Callable[[Cli, Sample, Path], str]]] = {
    "remember": lambda _: remember,
    "extract": lambda _: extract,
    "chat": lambda n: chat_with(TALKER, n),
    "chat-quiet": lambda n: chat_with(QUIET, n),
}


@contextmanager
def lab(followups: int = 0, *, use_subprocess: bool = False) -> Iterator[tuple[Lab, Cli]]:
    """A built lab and its command line, the stub model serving, all gone afterwards."""
    with ExitStack() as stack:
        work = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="squad-credpaths-")))
        server = stack.enter_context(OpenAIStubServer(handler=reply))
        built = Lab(work, followups, use_subprocess)
        built.build(server.url)
        yield built, built.cli()


def measure(
    credentials: Sequence[Sample],
    lookalikes: Sequence[Sample],
    paths: Sequence[str] = DEFAULT_PATHS,
    *,
    followups: int = 0,
    use_subprocess: bool = False,
    progress: Callable[[str], None] | None = None,
) -> list[Outcome]:
    """Every sample through every path, each in a fresh copy of the home."""
    outcomes: list[Outcome] = []
    with lab(followups, use_subprocess=use_subprocess) as (built, cli):
        for path in paths:
            started = time.perf_counter()
            for sample in (*credentials, *lookalikes):
                outcomes.append(built.run(cli, path, sample))
            if progress is not None:
                progress(f"{path}: {time.perf_counter() - started:.0f} s")
    return outcomes
