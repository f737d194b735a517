"""squad on a real language model: SmolLM2-135M-Instruct behind llama.cpp's OpenAI server.

The model is small and does not follow instructions reliably, so nothing here asserts what it
says. What must hold whatever it says: no traceback, every run ends in a defined status, its
outputs and logs are where they belong, memory files still parse, the spend ledger holds the
server's real token counts, and streamed text arrives in pieces as it is generated.

Each test drives the installed ``squad`` console script (or the library, where a callback is
the thing observed) with a keyless ``model:`` mapping: no ``OPENAI_API_KEY`` anywhere.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from squad.app import App
from squad.chat.session import ChatSession
from squad.memory.agent import AgentContext
from squad.memory.document import MemoryDocument
from squad.model import LiteLLMModel, Message
from squad.settings import Settings
from squad.spec.models import ModelSpec
from tests.realmodel.conftest import RealModel

pytestmark = [pytest.mark.realmodel, pytest.mark.slow]  # slow: it starts the llama.cpp server

SQUAD = Path(sys.executable).parent / "squad"
COMMAND_TIMEOUT_S = 900
RUN_STATUSES = {"succeeded", "failed", "stopped", "awaiting_approval"}
MAX_TOKENS = 160
"""Per call: a 135M model rambles; this keeps a call to seconds on two cores."""


class Squad:
    """A squad home, workspaces and configs folder in a temporary folder, and the CLI on it."""

    def __init__(self, root: Path, model: RealModel) -> None:
        self.root = root
        self.model = model
        self.configs = root / "configs"
        (self.configs / "squads").mkdir(parents=True)
        self.env = {
            **{
                k: v
                for k, v in os.environ.items()
                if not k.startswith("SQUAD_") and k != "OPENAI_API_KEY"
            },
            "SQUAD_HOME": str(root / "home"),
            "SQUAD_WORKSPACES": str(root / "workspaces"),
            "SQUAD_CONFIGS": str(self.configs),
            "COLUMNS": "200",
        }

    def write(self, name: str, body: str) -> Path:
        path = self.configs / "squads" / f"{name}.yaml"
        model = self.model.model_yaml(max_tokens=MAX_TOKENS, temperature=0.2)
        path.write_text(f"name: {name}\nmodel: {model}\n{body}")
        return path

    def __call__(
        self, *args: str | Path, stdin: str | None = None
    ) -> subprocess.CompletedProcess[str]:
        result = subprocess.run(
            [str(SQUAD), *map(str, args)],
            env=self.env,
            cwd=self.root,
            input=stdin,
            capture_output=True,
            text=True,
            timeout=COMMAND_TIMEOUT_S,
        )
        assert "Traceback" not in result.stderr, result.stderr
        assert "Traceback" not in result.stdout, result.stdout
        return result

    def settings(self) -> Settings:
        return Settings.load(self.env, cwd=self.root)

    def workspace(self, name: str) -> Path:
        return self.root / "workspaces" / name


@pytest.fixture
def squad(tmp_path: Path, real_model: RealModel) -> Squad:
    return Squad(tmp_path, real_model)


@pytest.fixture
def app(squad: Squad) -> Iterator[App]:
    with App.open(squad.settings()) as opened:
        yield opened


def run_json(squad: Squad, target: str | Path) -> dict[str, Any]:
    result = squad("run", target, "--json")
    assert result.returncode in (0, 1), result.stderr
    data: dict[str, Any] = json.loads(result.stdout)
    assert data["status"] in RUN_STATUSES, data
    return data


def note(text: str) -> None:
    """What the model did, for the person running the suite (shown with ``pytest -s``)."""
    sys.stderr.write(f"\n[realmodel] {text}\n")


def log_events(workspace: Path, run_id: str) -> list[dict[str, Any]]:
    path = workspace / "logs" / f"run-{run_id}.jsonl"
    assert path.is_file(), f"no run log at {path}"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def assert_memory_parses(workspace: Path) -> None:
    for path in sorted((workspace / "agents").glob("*/memory.md")):
        document = MemoryDocument.parse(path.read_text())  # raises on a broken structure
        assert document.render() == path.read_text(), f"{path} does not round-trip"


def assert_real_usage(app: App, squad_name: str) -> None:
    spent = app.store.spend.of_squad(squad_name)
    assert spent.calls > 0
    assert spent.prompt_tokens > 0 and spent.completion_tokens > 0, spent
    assert spent.cost_usd == 0.0


SEQUENTIAL = """\
goal: A two-sentence note on green tea.
agents:
  - {id: researcher, role: Lists facts about tea}
  - {id: writer, role: Writes short notes}
tasks:
  - {id: facts, description: List two facts about green tea., agent: researcher}
  - {id: note, description: Write a two-sentence note from the facts., agent: writer,
     depends_on: [facts]}
limits: {max_turns: 8, timeout_s: 600}
"""


def test_a_sequential_squad_of_two_agents_runs_to_a_defined_end(squad: Squad) -> None:
    path = squad.write("tea", SEQUENTIAL)
    data = run_json(squad, path)

    workspace = Path(data["workspace"])
    events = log_events(workspace, data["run_id"])
    note(f"sequential: {data['status']} {data['tasks']}, tokens {data['prompt_tokens']} in")
    assert events[-1]["event"] == "run_end" and events[-1]["status"] == data["status"]
    assert data["prompt_tokens"] > 0 and data["completion_tokens"] > 0
    for task, status in data["tasks"].items():
        state = json.loads((workspace / "tasks" / task / "status.json").read_text())
        assert state["status"] == status
        if status == "done":
            assert (workspace / "tasks" / task / "output.md").read_text().strip()
    assert_memory_parses(workspace)
    with App.open(squad.settings()) as app:
        assert_real_usage(app, "tea")


HIERARCHICAL = """\
process: hierarchical
goal: A short README for a command-line tool that counts words.
agents:
  - {id: lead, role: Plans the work as a list of tasks, lead: true}
  - {id: writer, role: Writes documentation}
limits: {max_turns: 10, timeout_s: 600}
"""


def test_a_hierarchical_squad_plans_or_fails_clearly_after_one_retry(squad: Squad) -> None:
    path = squad.write("readme", HIERARCHICAL)
    data = run_json(squad, path)

    events = log_events(Path(data["workspace"]), data["run_id"])
    invalid = [e for e in events if e["event"] == "plan_invalid"]
    written = [e for e in events if e["event"] == "plan_written"]
    assert len(invalid) <= 2
    note(
        f"hierarchical: {data['status']} ({data['error']}), plan_invalid {len(invalid)}x"
        + "".join(f"\n  attempt {e['attempt']}: {e['error'][:300]}" for e in invalid)
        + (f"\n  plan: {written[0]['tasks']}" if written else "")
    )
    if written:
        assert data["tasks"], "a written plan gives the run tasks"
    else:  # the plan did not validate twice: the run fails and says why
        assert [e["attempt"] for e in invalid] == [1, 2], f"no plan retry: {data['error']}"
        assert data["status"] == "failed"
        assert "plan" in (data["error"] or "").lower()
    with App.open(squad.settings()) as app:
        assert_real_usage(app, "readme")


CHAT = """\
goal: Help with the project.
agents:
  - {id: helper, role: Answers questions about the project}
tasks:
  - {id: answer, description: Answer the question., agent: helper}
"""

TURNS = [
    "Our backend API listens on port 8080.",
    "We deploy to production every Friday.",
    "I prefer short answers.",
    "The docs live in the docs/ folder.",
    "We decided to use PostgreSQL for the store.",
    "What port does the API use?",
]


def test_one_shot_chats_remember_and_the_sixth_turn_extracts(squad: Squad) -> None:
    path = squad.write("proj", CHAT)
    assert squad("create", path).returncode == 0
    for turn in TURNS:  # the default trigger_interval is 6: the last process runs a pass
        result = squad("chat", "proj", "helper", "-m", turn)
        assert result.returncode == 0, result.stderr
        assert result.stdout.strip(), "a reply is printed"

    with App.open(squad.settings()) as app:
        conversation = app.store.conversation
        messages = conversation.messages("proj", "helper", after_seq=0, limit=100)
        assert [m.content for m in messages if m.role == "user"] == TURNS
        watermark = conversation.watermark("proj", "helper")
        assert not watermark.in_flight, "a pass must not keep its claim past its process"
        runs = app.store.extraction.runs("proj", "helper")
        assert runs, "the sixth turn's pass ran and was recorded"
        note(
            f"chat extraction: {runs[0].status} by {runs[0].extractor}, "
            f"{len(runs[0].written)} written, {len(runs[0].dropped)} dropped: {runs[0].reason}"
        )
        assert runs[0].status in ("done", "skipped")
        for entry in runs[0].written + runs[0].dropped:
            assert entry["extractor"] in ("model", "offline")
        assert_real_usage(app, "proj")
    assert_memory_parses(squad.workspace("proj"))


def test_the_background_extractor_files_facts_whatever_json_the_model_writes(
    squad: Squad, app: App
) -> None:
    squad.write("facts", CHAT)
    manager = app.squads
    manager.create_from_file(squad.configs / "squads" / "facts.yaml")
    ctx = app.agent("facts", "helper")
    for turn in TURNS:
        app.store.conversation.record_message("facts", "helper", "user", turn, session_id="t")
        app.store.conversation.record_message("facts", "helper", "assistant", "OK.", session_id="t")
    app.extraction.check(ctx)
    assert app.drain_extraction(600)

    [run] = app.store.extraction.runs("facts", "helper")
    note(
        f"background extraction: {run.status} by {run.extractor}, {len(run.written)} written "
        f"({[e['text'] for e in run.written]}), reason: {run.reason}"
    )
    assert run.status in ("done", "skipped"), run
    if run.status == "done":
        # Either the model's facts or, when its JSON was unusable twice, the offline ones.
        assert run.extractor in ("model", "offline")
        assert {e["extractor"] for e in run.written} <= {run.extractor}
        if run.extractor == "offline":
            assert run.written, "the batch states facts: the offline fallback files some"
        # A valid answer is the model's to give, even {"facts": []}: SmolLM2-135M answers that
        # for this batch once the server's prompt cache holds the suite's earlier prompts
        # (alone, it writes broken JSON twice and the offline facts are filed).
    wm = app.store.conversation.watermark("facts", "helper")
    assert not wm.in_flight
    assert_memory_parses(squad.workspace("facts"))
    assert app.store.spend.of_squad("facts").completion_tokens > 0


DAEMON = """\
goal: One line about the weather.
agents:
  - {id: writer, role: Writes one line}
tasks:
  - {id: line, description: Write one line about the weather., agent: writer}
schedule: {interval: 24h, run_on_start: true}
limits: {max_turns: 4, timeout_s: 600}
"""


def test_a_daemon_once_runs_the_start_up_squad_and_exits(squad: Squad) -> None:
    squad.write("weather", DAEMON)
    result = squad("daemon", "--once", "--port", "0")
    assert result.returncode in (0, 1), result.stderr

    with App.open(squad.settings()) as app:
        [run] = app.store.list_runs("weather")
        assert str(run.status) in RUN_STATUSES
        assert_real_usage(app, "weather")
    workspace = squad.workspace("weather")
    events = log_events(workspace, run.id)
    assert events[-1]["event"] == "run_end"
    assert_memory_parses(workspace)


def test_chat_streams_text_as_the_model_generates_it(squad: Squad, app: App) -> None:
    squad.write("stream", CHAT)
    manager = app.squads
    manager.create_from_file(squad.configs / "squads" / "stream.yaml")
    session = ChatSession.open(app.runner(), "stream", "helper")
    arrivals: list[tuple[float, str]] = []
    started = time.perf_counter()
    reply = session.say(
        "Tell me about green tea in three sentences.",
        on_token=lambda delta: arrivals.append((time.perf_counter() - started, delta)),
    )

    returned = time.perf_counter() - started
    assert "".join(delta for _, delta in arrivals) == reply
    assert len(arrivals) >= 5, "a reply of sentences comes in many pieces"
    first, last = arrivals[0][0], arrivals[-1][0]
    # Generated at tens of tokens a second, pieces come tens of milliseconds apart; a reply
    # buffered and handed over at the end would come within a millisecond.
    assert last - first > 0.005 * (len(arrivals) - 1), arrivals
    assert returned - first > 0.05, "the first piece is shown long before the reply is done"
    note(f"streaming: {len(arrivals)} pieces over {last - first:.2f} s, first at {first:.2f} s")
    assert isinstance(session.ctx, AgentContext)


def test_token_counts_through_squad_are_the_servers_own_usage_fields(
    real_model: RealModel,
) -> None:
    """The same request straight to llama.cpp and through squad's seam (temperature 0, so the
    same answer): squad records the server's usage counts, not an estimate of its own.
    Tokens per second, the two ways, are measured by ``python -m bench.realmodel_bench``."""
    import httpx

    prompt = "Describe a cup of green tea."
    body = {
        "model": "smollm2",
        "messages": [{"role": "user", "content": prompt}],
        "max_tokens": 64,
        "temperature": 0,
    }
    model = LiteLLMModel(
        ModelSpec(
            name="openai/smollm2",
            api_base=real_model.api_base,
            max_tokens=64,
            temperature=0,
            cost_per_1k_input=0,
            cost_per_1k_output=0,
        )
    )
    usage = httpx.post(f"{real_model.api_base}/chat/completions", json=body, timeout=300).json()[
        "usage"
    ]
    reply = model.complete([Message.user(prompt)])
    assert reply.usage.prompt_tokens == usage["prompt_tokens"] > 0
    assert reply.usage.completion_tokens == usage["completion_tokens"] > 0
    assert reply.usage.cost_usd == 0.0
