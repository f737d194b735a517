"""The credentials issue 12 found getting into memory, through every real path that stores text.

Each probe is the issue's own example (values filled in): ``squad memory remember`` (the
memory service, both layers), the agents' memory tools, ``squad memory extract`` (a transcript
through the extractor, offline and with a model over HTTP) and ``squad chat`` (a session over a
real SQLite store).
Each test asserts the credential's value is nowhere in what was stored.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from squad.app import App
from squad.chat.session import ChatSession
from squad.clock import FrozenClock
from squad.errors import SecretInMemoryError
from squad.extraction.transcript import extract_transcript
from squad.manager import SquadManager
from squad.memory.agent import AgentContext
from squad.memory.service import MemoryService
from squad.memory.tools import MemoryTools
from squad.model.stub_answers import Behaviour, answer
from squad.model.testing import OpenAIStubServer
from squad.settings import Settings
from squad.spec.loader import squad_from_text
from squad.store import Store
from tests.chat.test_session import CHAT_YAML
from tests.conftest import BASIC_YAML
from tests.text.secrets_corpus import B62, B64, URLSAFE, b64_secret, digits, fake

NOW = datetime(2026, 11, 29, 12, tzinfo=UTC)


@dataclass(frozen=True)
class Probe:
    name: str
    said: tuple[str, ...]
    """The messages, in order; the last one carries ``secret`` (or all of it, when split)."""
    secret: str


def probe(name: str, *said: str, secret: str) -> Probe:
    return Probe(name, said, secret)


SLACK = "xo" + "xb-" + digits(12) + "-" + digits(13)
OPENAI_SHORT = "sk-" + "proj-" + fake(URLSAFE, 14)
SPACED = "sk-" + "proj-" + " ".join(fake(B62, 8) for _ in range(4))
PEM_LINE = "MIIEpAIBAAKCAQEA" + fake(B64, 48)
BLOB = b64_secret(32)

PROBES = [
    probe("korean-bibeon", "스테이징 비번은 Qwer1234! 이에요", secret="Qwer1234!"),
    probe("korean-amho", "서버 암호는 hunter2x 야", secret="hunter2x"),
    probe("root-pw", "root pw: Tr0ub4dor3", secret="Tr0ub4dor3"),
    probe("passphrase", "the passphrase is tangerine-dream-1974", secret="tangerine-dream-1974"),
    probe("mysql-p", "connect with mysql -u root -pS3cretPass shop", secret="S3cretPass"),
    probe("pem-body-line", f"the deploy key starts {PEM_LINE}", secret=PEM_LINE[16:]),
    probe("base64-token", f"the signing key is {BLOB} for now", secret=BLOB),
    probe("spaced-key", f"here is the key {SPACED} thanks", secret=SPACED.split()[-1]),
    probe("split-question", "what's the db password?", "hunter2x", secret="hunter2x"),
    probe("split-announcement", "my password is", "hunter2x", secret="hunter2x"),
    probe("slack-body", f"the slack bot token is {SLACK}", secret=SLACK),
    probe("openai-short", f"use {OPENAI_SHORT} for the eval", secret=OPENAI_SHORT),
    probe("login-pair", "the staging login is admin / hunter2x", secret="hunter2x"),
    probe("korean-pair", "운영 계정은 deploy / Xk9!pass 이에요", secret="Xk9!pass"),
    probe("pw-among-pairs", "DSN host=db user=app pw=hunter2 port=5432", secret="hunter2"),
]
IDS = [p.name for p in PROBES]


# -- squad memory remember -----------------------------------------------------------------


@pytest.fixture
def memory(settings: Settings, clock: FrozenClock) -> Iterator[tuple[MemoryService, AgentContext]]:
    with Store.open(settings.database_url, clock=clock) as store:
        spec = squad_from_text(BASIC_YAML)
        SquadManager(settings, store=store, clock=clock).create(spec)
        service = MemoryService(settings, store, clock=clock)
        yield service, AgentContext.of(spec, "writer", settings.workspaces / "demo")


def stored_by(service: MemoryService, ctx: AgentContext) -> str:
    """The agent's memory.md, daily logs and Layer A facts, as one text."""
    agent = ctx.workspace / "agents" / ctx.agent.id
    files = [p.read_text(encoding="utf-8") for p in sorted(agent.rglob("*.md"))]
    facts = [f.text for f in service.store.memory.facts(service.namespace_id(ctx))]
    return "\n".join([*files, *facts])


@pytest.mark.parametrize("case", PROBES, ids=IDS)
@pytest.mark.parametrize("layer", ["project", "experiential"])
def test_remember_refuses_the_credential_and_stores_nothing_of_it(
    memory: tuple[MemoryService, AgentContext], case: Probe, layer: str
) -> None:
    service, ctx = memory
    text = " ".join(case.said)  # what `squad memory remember` gets is one text
    with pytest.raises(SecretInMemoryError) as refused:
        service.remember(ctx, text, layer="project" if layer == "project" else "experiential")
    assert case.secret not in str(refused.value)
    assert case.secret not in stored_by(service, ctx)


@pytest.mark.parametrize("case", PROBES, ids=IDS)
def test_the_agent_memory_tools_refuse_the_credential_and_store_nothing_of_it(
    memory: tuple[MemoryService, AgentContext], case: Probe
) -> None:
    service, ctx = memory
    tools = MemoryTools(service, ctx)
    text = "\n".join(case.said)  # an agent writes the lines as it read them
    for answer_ in (
        tools.memory_append("Insights", text),
        tools.memory_replace("Insights", text),
        tools.memory_write_daily(text),
    ):
        assert answer_.startswith("refused:") and case.secret not in answer_
    assert case.secret not in stored_by(service, ctx)


# -- squad memory extract ------------------------------------------------------------------


def transcript(case: Probe) -> list[tuple[str, str]]:
    """The probe as a conversation: the user says each message, the assistant acknowledges."""
    said: list[tuple[str, str]] = [("user", "In this repo the API listens on port 8080.")]
    for text in case.said:
        said += [("user", text)]
    return [*said, ("assistant", "Noted.")]


@pytest.mark.parametrize("case", PROBES, ids=IDS)
def test_offline_extraction_stores_nothing_of_the_credential(
    memory: tuple[MemoryService, AgentContext], case: Probe
) -> None:
    service, ctx = memory
    extract_transcript(
        transcript(case), now=NOW, model=None, memory=service, ctx=ctx, dry_run=False
    )
    stored = stored_by(service, ctx)
    assert "API listens on port 8080" in stored  # the extractor did write the real fact
    assert case.secret not in stored


_SAID = re.compile(r"^\[(\d+)\] user: (.*)$", re.MULTILINE)


def echo_every_message(body: Any) -> Behaviour:
    """A model that turns every user message it read into a fact, word for word."""
    if not body.get("response_format"):
        return answer("Noted.")
    prompt = "\n".join(str(m["content"]) for m in body["messages"])
    facts = [
        {"text": text, "scope": "project", "confidence": 0.9, "source_turns": [int(i)]}
        for i, text in _SAID.findall(prompt)
    ]
    return answer(json.dumps({"facts": facts}))


@pytest.fixture
def stub(monkeypatch: pytest.MonkeyPatch) -> Iterator[OpenAIStubServer]:
    monkeypatch.setenv("STUB_KEY", "stub-key")
    with OpenAIStubServer(handler=echo_every_message) as server:
        yield server


@pytest.mark.parametrize("case", PROBES, ids=IDS)
def test_the_extraction_model_never_receives_the_credential(
    memory: tuple[MemoryService, AgentContext], stub: OpenAIStubServer, case: Probe
) -> None:
    service, ctx = memory
    extract_transcript(
        transcript(case), now=NOW, model=stub.model(), memory=service, ctx=ctx, dry_run=False
    )
    assert stub.bodies, "the extraction model was asked"
    assert all(case.secret not in json.dumps(body, ensure_ascii=False) for body in stub.bodies)
    stored = stored_by(service, ctx)
    assert "API listens on port 8080" in stored
    assert case.secret not in stored


# -- squad chat ----------------------------------------------------------------------------


@pytest.mark.parametrize("case", PROBES, ids=IDS)
def test_chat_history_never_stores_the_credential_nor_sends_it_again(
    settings: Settings, app: App, stub: OpenAIStubServer, case: Probe
) -> None:
    manager = app.squads
    spec = squad_from_text(CHAT_YAML.format(url=stub.url), source="demo.yaml")
    workspace: Path = manager.create(spec).path
    try:
        chat = ChatSession.open(app.runner(), "demo", "writer")
        for text in case.said:
            stub.script(answer("Go ahead."))
            chat.say(text)
        said_at = len(stub.bodies)
        stub.script(answer("Done."))
        chat.say("Thanks. Now write the setup page.")
    finally:
        app.drain_extraction()
    rows = manager.store.conversation.messages("demo", "writer")

    assert case.secret in json.dumps(stub.bodies[said_at - 1], ensure_ascii=False)  # its turn
    assert all(case.secret not in row.content for row in rows)
    later = stub.bodies[said_at:]
    assert later and all(case.secret not in json.dumps(b, ensure_ascii=False) for b in later)
    agent = workspace / "agents" / "writer"
    assert all(case.secret not in p.read_text(encoding="utf-8") for p in agent.rglob("*.*"))


def test_the_store_itself_refuses_a_fact_that_carries_a_credential(store_url: str) -> None:
    from squad.errors import SecretInMemoryError
    from squad.store import Store

    with Store.open(store_url) as store:
        namespace = store.memory.ensure_namespace("profile:writer", "writer")
        with pytest.raises(SecretInMemoryError):
            store.memory.add_fact(
                namespace.id, "deploy with sk-proj-abc123DEF456ghi789", squad="s", agent="a"
            )
        assert store.memory.list_namespaces()[0].fact_count == 0
