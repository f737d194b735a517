"""A credential said in ``squad chat`` never reaches the disk, nor a later model call, in any
role: the user's message, the assistant's reply that repeats it, a tool's answer.

One class per conversation: a provider token, a password in prose, and a password only the
user's words identify, which the assistant then repeats where the detector alone sees nothing
("OK, Blu3Whale$2024 is saved"). The model is :mod:`tests.support.echo_model` (it writes back
whatever it read raw: replies, memory writes, summaries, facts) on the OpenAI stub server, or
the built-in offline model, which quotes the message: a password given alone after "my
password is" comes back as 'You said: "Blu3Whale$2024"', where only its echo is known. The
store (SQLite), workspace, runner and background extractor are real;
:func:`tests.support.leaks.assert_nowhere_on_disk` searches every file, SQLite row and git
object under the test's folder.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from squad.app import App
from squad.chat.session import ChatSession
from squad.model.testing import OpenAIStubServer
from squad.runtime.runner import SquadRunner
from squad.settings import Settings
from squad.spec.loader import squad_from_text
from tests.chat.test_session import FILLER, is_summary_request
from tests.support.echo_model import echoing
from tests.support.leaks import assert_nowhere_on_disk
from tests.text.secrets_corpus import URLSAFE, fake

KEY = "sk-" + "proj-" + fake(URLSAFE, 40)
PASSWORD = "Blu3Whale$2024"
STAGING = "Tr4mpoline#77"

ECHO_YAML = """\
name: demo
goal: Ship the docs.
model: {{name: openai/stub, api_base: '{url}', api_key_env: STUB_KEY,
  cost_per_1k_input: 0, cost_per_1k_output: 0}}
memory: {{trigger_interval: 2}}
agents:
  - {{id: writer, role: Writes the pages}}
tasks:
  - {{id: draft, description: Write the guide., agent: writer}}
"""

OFFLINE_YAML = """\
name: demo
goal: Ship the docs.
memory: {trigger_interval: 2}
agents:
  - {id: writer, role: Writes the pages}
tasks:
  - {id: draft, description: Write the guide., agent: writer}
"""

SAID = [
    f"Use this key for the eval: {KEY}",
    f"my password is {PASSWORD}",
    f"the staging password is {STAGING}, please remember it",
    *(f"Question {i} about the theme? {FILLER}" for i in range(8)),
]


@pytest.fixture
def stub(monkeypatch: pytest.MonkeyPatch) -> Iterator[OpenAIStubServer]:
    monkeypatch.setenv("STUB_KEY", "stub-key")
    with OpenAIStubServer(handler=echoing) as server:
        yield server


def open_runner(app: App, text: str) -> SquadRunner:
    manager = app.squads
    manager.create(squad_from_text(text, source="demo.yaml"))
    return app.runner()


def sent(body: Any) -> str:
    return json.dumps(body, ensure_ascii=False)


def test_a_reply_repeating_a_credential_is_stored_sent_summarised_and_extracted_redacted(
    settings: Settings, app: App, stub: OpenAIStubServer, tmp_path: Path
) -> None:
    runner = open_runner(app, ECHO_YAML.format(url=stub.url))
    with ChatSession.open(runner, "demo", "writer") as chat:
        chat.history_budget = 1100  # the first turns are folded into summaries soon
        replies = []
        for text in SAID:
            count = len(stub.bodies)
            replies.append(chat.say(text))
            own = stub.bodies[count:]  # this turn's calls (and any extraction meanwhile)
            for value in (KEY, PASSWORD, STAGING):
                if value not in text:
                    assert not any(value in sent(b) for b in own), "sent after its own turn"
    app.drain_extraction()

    # The echo model did repeat each value raw, on the value's own turn (what is checked).
    assert replies[1] == f"OK, {PASSWORD} is saved."
    assert "refused" in replies[2] and "echo" in replies[2]  # every memory write of it
    rows = runner.store.conversation.messages("demo", "writer")
    assert "OK, [REDACTED:echo] is saved." in [m.content for m in rows]
    refusals = [m.tool_name for m in rows if m.role == "tool" and "echo" in m.content]
    assert refusals == ["memory_append", "decision_record"]
    summaries = [b for b in stub.bodies if is_summary_request(b)]
    extractions = [b for b in stub.bodies if b.get("response_format")]
    assert summaries, "the history was summarised by the model"
    # Extraction calls the model only for a batch with a likely fact; whatever it was sent
    # holds no value (checked above, turn by turn) and the echo as redacted.
    assert all(PASSWORD not in sent(b) for b in extractions)
    if extractions:
        archive = runner.memory.archive_id(chat.ctx)
        assert runner.store.memory.newest_fact(archive) or runner.store.archive.reaches(archive)
    for value in (KEY, PASSWORD, STAGING):
        assert_nowhere_on_disk(value, tmp_path)


def test_the_offline_model_quoting_a_credential_leaves_no_trace_on_disk(
    settings: Settings, app: App, tmp_path: Path
) -> None:
    runner = open_runner(app, OFFLINE_YAML)
    with ChatSession.open(runner, "demo", "writer") as chat:
        chat.history_budget = 300
        said = [
            SAID[0],
            "I'll give you the staging db password, my password is",
            PASSWORD,  # known by the message before only; the reply quotes it alone
            f"remember that my password is {STAGING}",
            *SAID[3:6],
        ]
        replies = [chat.say(text) for text in said]
    app.drain_extraction()

    assert f'"{PASSWORD}"' in replies[2]  # it quoted the message on the message's own turn
    assert "refused" in replies[3]  # its memory_append of the quoted password
    for value in (KEY, PASSWORD, STAGING):
        assert_nowhere_on_disk(value, tmp_path)


def test_an_echo_is_known_only_to_the_session_that_heard_the_value(
    settings: Settings, app: App, stub: OpenAIStubServer
) -> None:
    runner = open_runner(app, ECHO_YAML.format(url=stub.url))
    with ChatSession.open(runner, "demo", "writer") as chat:
        chat.say(f"my password is {PASSWORD}")
    conversation = runner.store.conversation
    with ChatSession.open(runner, "demo", "writer") as later:  # as after a restart
        assert PASSWORD not in later.seen and len(chat.seen) == 1
        later.runner.store.conversation.record_message(
            "demo", "writer", "assistant", f"OK, {PASSWORD} is saved.", session_id="chat"
        )
    # Not found by the detector alone: documented (the values live in memory only).
    # Not an echo there: only the detector's own view (its learned half may still take it).
    assert "[REDACTED:echo]" not in conversation.messages("demo", "writer")[-1].content


@pytest.mark.slow
def test_an_mcp_tool_repeating_a_password_leaves_it_in_no_journal_log_or_message(
    settings: Settings, app: App, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from squad.model.stub_answers import answer, tool_call
    from tests.runtime.test_mcp_tools import PY, SERVERS

    monkeypatch.setenv("STUB_KEY", "stub-key")
    with OpenAIStubServer() as stub:
        text = (
            "name: tooled\n"
            f"model: {{name: openai/stub, api_base: '{stub.url}', api_key_env: STUB_KEY,"
            " cost_per_1k_input: 0, cost_per_1k_output: 0}\n"
            f"mcp_servers:\n  echoer: {{command: {PY}, args: ['{SERVERS / 'crashing.py'}']}}\n"
            "agents:\n  - {id: helper, role: Answers questions, tools: [echoer]}\n"
            "tasks:\n  - {id: t, description: Something., agent: helper}\n"
        )
        runner = open_runner(app, text)
        stub.script(tool_call("echoer__echo", {"text": PASSWORD}), answer("Done."))
        with ChatSession.open(runner, "tooled", "helper") as chat:
            chat.say(f"my password is {PASSWORD}")

    stored = runner.store.conversation.messages("tooled", "helper")
    assert [m.content for m in stored if m.role == "tool"] == ["echo: [REDACTED:echo]"]
    assert list((tmp_path / "workspaces" / "tooled" / "logs").glob("*.mcp.jsonl"))
    assert_nowhere_on_disk(PASSWORD, tmp_path)
