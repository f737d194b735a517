"""A credential pasted into ``squad chat`` reaches the model on its own turn only.

The squad's model is the OpenAI stub server on 127.0.0.1, reached through the real seam; the
store (SQLite), workspace and runner are real. The tests read what the server received, what
the store holds and what the summary cache file says.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from squad.app import App
from squad.chat.rolling import RollingSummariser
from squad.chat.session import ChatSession, without_credentials
from squad.model.stub_answers import Behaviour, answer
from squad.model.testing import OpenAIStubServer
from squad.model.types import Message
from squad.runtime.runner import SquadRunner
from squad.settings import Settings
from squad.spec.loader import squad_from_text
from tests.chat.test_session import CHAT_YAML, FILLER, is_summary_request
from tests.text.secrets_corpus import B62, URLSAFE, fake

KEY = "sk-" + "proj-" + fake(URLSAFE, 40)
MARKER = "[REDACTED:openai_api_key]"


def reply(body: Any) -> Behaviour:
    if body.get("response_format"):  # the background fact extractor: nothing to extract
        return answer('{"facts": []}')
    if is_summary_request(body):
        return answer("- The user is setting up the docs site.")
    return answer(f"Noted. {FILLER}")


def sent(body: Any) -> str:
    return json.dumps(body["messages"], ensure_ascii=False)


@pytest.fixture
def stub(monkeypatch: pytest.MonkeyPatch) -> Iterator[OpenAIStubServer]:
    monkeypatch.setenv("STUB_KEY", "stub-key")
    with OpenAIStubServer(handler=reply) as server:
        yield server


@pytest.fixture
def runner(app: App, stub: OpenAIStubServer) -> Iterator[SquadRunner]:
    manager = app.squads
    manager.create(squad_from_text(CHAT_YAML.format(url=stub.url), source="demo.yaml"))
    try:
        yield app.runner()
    finally:
        app.drain_extraction()


def stored(runner: SquadRunner) -> list[str]:
    return [m.content for m in runner.store.conversation.messages("demo", "writer")]


def turns(stub: OpenAIStubServer) -> list[Any]:
    return [b for b in stub.bodies if not b.get("response_format") and not is_summary_request(b)]


def test_a_pasted_key_is_sent_on_its_own_turn_but_stored_and_sent_later_redacted(
    settings: Settings, stub: OpenAIStubServer, runner: SquadRunner
) -> None:
    chat = ChatSession.open(runner, "demo", "writer")
    chat.say(f"Use this key for the eval: {KEY}")
    chat.say("What should the first page cover?")

    first, second = turns(stub)
    assert first["messages"][-1]["content"] == f"Use this key for the eval: {KEY}"
    rows = stored(runner)
    assert rows[0] == f"Use this key for the eval: {MARKER}"
    assert not any(KEY in row for row in rows)
    assert MARKER in sent(second) and KEY not in sent(second)
    assert not any(KEY in sent(body) for body in stub.bodies[1:])


def test_a_password_split_across_two_messages_is_stored_without_the_value(
    settings: Settings, stub: OpenAIStubServer, runner: SquadRunner
) -> None:
    chat = ChatSession.open(runner, "demo", "writer")
    chat.say("I'll give you the staging db password, my password is")
    chat.say("hunter2x")
    chat.say("Now write the setup page.")

    assert turns(stub)[1]["messages"][-1]["content"] == "hunter2x"  # its own turn: as said
    rows = stored(runner)
    assert "[REDACTED:followup_secret]" in rows and not any("hunter2x" in row for row in rows)
    assert not any("hunter2x" in sent(body) for body in turns(stub)[2:])


def test_compressed_history_and_its_summaries_do_not_carry_a_pasted_key(
    settings: Settings, stub: OpenAIStubServer, runner: SquadRunner
) -> None:
    chat = ChatSession.open(runner, "demo", "writer")
    chat.history_budget = 1100  # the key's turn is folded into the summary within a few turns
    chat.say(f"Please set up the docs site; the deploy key is {KEY}")
    for i in range(11):
        chat.say(f"Question {i} about the theme? {FILLER}")

    summaries = [b for b in stub.bodies if is_summary_request(b)]
    assert summaries, "the history was long enough to be summarised by the model"
    assert not any(KEY in sent(body) for body in stub.bodies[1:])
    cache = chat.ctx.workspace / "agents" / "writer" / "chat-summary.json"
    assert KEY not in cache.read_text(encoding="utf-8")


def test_history_stored_before_redaction_on_write_is_redacted_when_sent() -> None:
    legacy = [
        Message("user", f"the key is {KEY}"),
        Message("assistant", "What's the db password?"),
        Message("user", "hunter2x"),
        Message("assistant", "Thanks."),
    ]
    assert [m.content for m in without_credentials(legacy)] == [
        f"the key is {MARKER}",
        "What's the db password?",
        "[REDACTED:followup_secret]",
        "Thanks.",
    ]


def test_a_summary_cache_never_saves_or_brings_back_a_credential(tmp_path: Path) -> None:
    path = tmp_path / "chat-summary.json"
    leaky = f"- The user pasted {KEY} for the eval."
    rolling = RollingSummariser(path, lambda previous, new, max_tokens: leaky, refresh=1)

    class Words:
        name = "words"

        def count(self, text: str) -> int:
            return len(text.split())

    assert KEY not in rolling([Message("user", "hello there, one question")], 200, Words())
    assert KEY not in path.read_text(encoding="utf-8")
    path.write_text(json.dumps({"summary": leaky, "covered": []}), encoding="utf-8")
    saved = rolling.load()
    assert saved is not None and saved.summary == f"- The user pasted {MARKER} for the eval."


def test_a_token_read_by_a_tool_is_stored_redacted(
    settings: Settings, stub: OpenAIStubServer, runner: SquadRunner
) -> None:
    token = "gh" + "p_" + fake(B62, 36)
    conversation = runner.store.conversation
    conversation.record_message(
        "demo", "writer", "tool", f"GITHUB_TOKEN={token}", session_id="chat"
    )
    [row] = conversation.messages("demo", "writer")
    assert row.content == "GITHUB_TOKEN=[REDACTED:github_token]"


def test_a_bare_value_is_judged_after_the_messages_of_its_own_session_only(
    settings: Settings, stub: OpenAIStubServer, runner: SquadRunner
) -> None:
    conversation = runner.store.conversation
    conversation.record_message(
        "demo", "writer", "assistant", "What's the db password?", session_id="chat"
    )
    conversation.record_message("demo", "writer", "user", "tr0ub4dorx", run_id="run-1")
    conversation.record_message("demo", "writer", "user", "hunter2x", session_id="chat")
    assert stored(runner)[1:] == ["tr0ub4dorx", "[REDACTED:followup_secret]"]
