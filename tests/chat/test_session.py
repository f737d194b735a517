"""A long ``squad chat`` sends a compressed history: what the model receives, over real HTTP.

The squad's model is the OpenAI stub server on 127.0.0.1, reached through the real seam
(litellm); the store, the workspace and the runner are real. The test reads the requests the
server received, not anything of squad's own.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from squad.app import App
from squad.chat.compress import SUMMARY_PREFIX, history_tokens
from squad.chat.session import ChatSession
from squad.errors import ConfigError
from squad.model.stub_answers import Behaviour, answer
from squad.model.testing import OpenAIStubServer
from squad.model.types import Message
from squad.runtime.limits import RunBudget
from squad.runtime.runner import SquadRunner
from squad.settings import Settings
from squad.spec.loader import squad_from_text
from squad.text.tokens import counter_for_model

FILLER = " ".join(f"word{i}" for i in range(60))
BUDGET = 1100

CHAT_YAML = """\
name: demo
goal: Ship the docs.
model: {{name: openai/stub, api_base: '{url}', api_key_env: STUB_KEY,
  cost_per_1k_input: 0, cost_per_1k_output: 0}}
agents:
  - {{id: writer, role: Writes the pages}}
tasks:
  - {{id: draft, description: Write the guide., agent: writer}}
"""

# The user's side of the chat, oldest first; the stub answers each (see `reply`).
SAID = [
    "Please set up the docs site with MkDocs.",  # a request
    f"Tell me about the theme options. {FILLER}",
    f"And the plugins? {FILLER}",
    "mkdocs build fails with ValueError: nav entry 'faq.md' not found",  # an error
    f"How does search work? {FILLER}",
    "No, the theme must be Material, not readthedocs.",  # a correction
    f"What about the footer? {FILLER}",
    f"And the header? {FILLER}",
    f"And the sidebar? {FILLER}",
    f"And the colours? {FILLER}",
    "Last question: the logo?",
]


MODEL_SUMMARY = "- The user is setting up MkDocs with the Material theme."


def is_summary_request(body: Any) -> bool:
    return str(body["messages"][0]["content"]).startswith("You compress the earlier part")


def reply(body: Any) -> Behaviour:
    if body.get("response_format"):  # the background fact extractor: nothing to extract
        return answer('{"facts": []}')
    if is_summary_request(body):
        return answer(MODEL_SUMMARY)
    last = str(body["messages"][-1]["content"])
    if "ValueError" in last:
        return answer("The nav pointed at a missing page; I fixed the path in mkdocs.yml.")
    if last.startswith("No, the theme"):
        return answer("Understood. We'll go with Material.")  # a decision
    return answer(f"Here is what I know. {FILLER}")


def long_chat(runner: SquadRunner, said: list[str]) -> ChatSession:
    """A chat with the writer whose history is cut to BUDGET, after saying ``said``."""
    chat = ChatSession.open(runner, "demo", "writer")
    chat.history_budget = BUDGET
    for text in said:
        chat.say(text)
    return chat


@pytest.fixture
def stub(monkeypatch: pytest.MonkeyPatch) -> Iterator[OpenAIStubServer]:
    monkeypatch.setenv("STUB_KEY", "stub-key")
    with OpenAIStubServer(handler=reply) as server:
        yield server


def test_a_long_chat_sends_summary_landmarks_and_recent_turns_within_budget(
    settings: Settings,
    stub: OpenAIStubServer,
    app: App,
) -> None:
    manager = app.squads
    spec = squad_from_text(CHAT_YAML.format(url=stub.url), source="demo.yaml")
    manager.create(spec)
    runner = app.runner()
    try:
        long_chat(runner, SAID)
    finally:
        app.drain_extraction()

    turns = [
        body
        for body in stub.bodies
        if not body.get("response_format") and not is_summary_request(body)
    ]
    assert len(turns) == len(SAID)
    first, last = turns[0], turns[-1]
    assert [m["role"] for m in first["messages"]] == ["system", "user"]
    sent = last["messages"]
    assert sent[0]["role"] == "system" and sent[-1]["content"] == SAID[-1]
    history = [Message(m["role"], m["content"]) for m in sent[1:-1]]
    summary, *rest = history
    assert summary.role == "user" and summary.content.startswith(SUMMARY_PREFIX)
    assert history_tokens(history, counter_for_model("openai/stub")) <= BUDGET
    contents = [m.content for m in rest]
    landmarks = [
        SAID[0],
        SAID[3],
        "The nav pointed at a missing page; I fixed the path in mkdocs.yml.",
        SAID[5],
        "Understood. We'll go with Material.",
    ]
    assert contents[: len(landmarks)] == landmarks  # verbatim, in order
    assert contents[len(landmarks) :] == [  # the last three turns
        SAID[7],
        f"Here is what I know. {FILLER}",
        SAID[8],
        f"Here is what I know. {FILLER}",
        SAID[9],
        f"Here is what I know. {FILLER}",
    ]
    assert MODEL_SUMMARY in summary.content


def test_the_model_summarises_rarely_a_new_session_reuses_it_and_every_call_is_charged(
    settings: Settings,
    stub: OpenAIStubServer,
    app: App,
) -> None:
    manager = app.squads
    spec = squad_from_text(CHAT_YAML.format(url=stub.url), source="demo.yaml")
    workspace = manager.create(spec).path
    runner = app.runner()
    try:
        chat = long_chat(runner, SAID)
        asked = [b for b in stub.bodies if is_summary_request(b)]
        # Another `squad chat -m` is a new session: it reads the saved summary.
        long_chat(runner, ["One more thing: the favicon?"])
    finally:
        app.drain_extraction()
    spent = manager.store.spend.of_squad("demo")

    assert 1 <= len(asked) <= 2 and chat.summariser is not None
    cache = json.loads((workspace / "agents" / "writer" / "chat-summary.json").read_text())
    assert cache["summary"] == MODEL_SUMMARY and cache["model"] == "openai/stub"
    assert len([b for b in stub.bodies if is_summary_request(b)]) == len(asked)
    last = [
        b for b in stub.bodies if b["messages"][-1]["content"] == "One more thing: the favicon?"
    ]
    assert MODEL_SUMMARY in last[0]["messages"][1]["content"]
    assert spent.calls == len(stub.bodies)  # turns, summaries and extraction passes alike


def test_on_the_offline_model_the_history_is_summarised_without_a_call(
    settings: Settings,
    app: App,
) -> None:
    manager = app.squads
    offline = "\n".join(
        line
        for line in CHAT_YAML.format(url="").splitlines()
        if "openai/stub" not in line and "cost_per_1k" not in line
    )
    spec = squad_from_text(offline + "\n", source="demo.yaml")
    workspace = manager.create(spec).path
    runner = app.runner()
    try:
        chat = long_chat(runner, SAID)
        said = manager.store.conversation.messages("demo", "writer", session_id="chat")
    finally:
        app.drain_extraction()
    history = [Message(m.role, m.content) for m in said if m.role in ("user", "assistant")]
    assert history_tokens(history, counter_for_model("offline")) > BUDGET  # it was compressed
    assert chat.summariser is None
    assert not (workspace / "agents" / "writer" / "chat-summary.json").exists()


def test_a_chat_on_a_model_with_no_price_is_refused_before_any_call(
    settings: Settings, app: App, stub: OpenAIStubServer
) -> None:
    text = CHAT_YAML.format(url=stub.url).replace(
        "STUB_KEY,\n  cost_per_1k_input: 0, cost_per_1k_output: 0}", "STUB_KEY}"
    )
    manager = app.squads
    manager.create(squad_from_text(text, source="demo.yaml"))
    with pytest.raises(ConfigError, match="'openai/stub' has no price"):
        ChatSession.open(app.runner(), "demo", "writer")
    assert stub.requests == []


def test_a_model_summary_that_could_pass_the_spend_cap_is_not_asked_for(
    settings: Settings, app: App, stub: OpenAIStubServer
) -> None:
    text = CHAT_YAML.format(url=stub.url).replace(
        "cost_per_1k_input: 0, cost_per_1k_output: 0", "cost_per_1k_input: 1, cost_per_1k_output: 1"
    )
    manager = app.squads
    manager.create(squad_from_text(text, source="demo.yaml"))
    manager.store.spend.record("demo", model="openai/stub", cost_usd=4.9999)  # of $5
    chat = ChatSession.open(app.runner(), "demo", "writer")
    chat._budget = RunBudget(10**9, 5.0, manager.store.spend.of_squad("demo").cost_usd)
    folded = [Message.user(f"Tell me more. {FILLER}"), Message.assistant("Sure.")]

    assert chat._model_summary("", folded, 200) is None  # the offline summary stands in

    assert chat._budget.reserved_usd == 0.0
    assert stub.requests == []


@pytest.mark.parametrize(("window", "compressed"), [(2048, True), (200_000, False)])
def test_the_history_a_chat_sends_is_sized_from_the_models_window(
    settings: Settings, stub: OpenAIStubServer, app: App, window: int, compressed: bool
) -> None:
    yaml = CHAT_YAML.format(url=stub.url).replace(
        "api_key_env: STUB_KEY,", f"api_key_env: STUB_KEY, context_window: {window},"
    )
    manager = app.squads
    manager.create(squad_from_text(yaml, source="demo.yaml"))
    runner = app.runner()
    try:
        chat = ChatSession.open(runner, "demo", "writer")
        assert chat.history_budget is None  # the window decides
        for text in SAID:
            chat.say(text)
        regions, planned = runner.memory.plan(chat.ctx)
    finally:
        app.drain_extraction()
    assert (planned.tokens, planned.source) == (window, "spec")
    (last,) = [b for b in stub.bodies if b["messages"][-1]["content"] == SAID[-1]]
    history = [Message(m["role"], m["content"]) for m in last["messages"][1:-1]]
    sent = history_tokens(history, counter_for_model("openai/stub"))
    assert str(history[0].content).startswith(SUMMARY_PREFIX) is compressed
    system = counter_for_model("openai/stub").count(last["messages"][0]["content"])
    # the system prompt and the history share what the turn and the reserve leave
    assert system + sent <= window - regions.budget("turn") - regions.budget("reserve")
