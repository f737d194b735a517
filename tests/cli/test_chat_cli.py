"""``squad chat`` as a conversation: a turn whose model call fails is reported, and the
session waits for the next message (a real OpenAI-compatible stub on 127.0.0.1, in process)."""

from __future__ import annotations

from pathlib import Path

from squad.model.stub_answers import status, stream
from squad.model.testing import OpenAIStubServer
from tests.cli.test_cli import Cli
from tests.conftest import EXAMPLES
from tests.support.cli import run_in_process

DOCS = next(p for p in EXAMPLES if p.stem == "docs-site")


def test_chat_reports_a_failed_turn_and_answers_the_next_message(tmp_path: Path) -> None:
    cli = Cli(tmp_path, in_process=True)
    assert cli("create", DOCS).returncode == 0
    with OpenAIStubServer() as server:
        server.script(status(400, "the stub refuses this once"), stream("Fridays ", "it is."))
        cli.env["OPENAI_BASE_URL"] = server.url
        cli.env["OPENAI_API_KEY"] = "sk-stub"
        chat = run_in_process(
            ["chat", "docs-site", "writer", "--model", "openai/gpt-4o-mini"],
            env=cli.env,
            cwd=cli.tmp,
            stdin="When do we deploy?\nAnd now?\n\n",
        )
        asked = [r.body["messages"][-1]["content"] for r in server.requests]
    assert chat.returncode == 0, chat.stderr
    assert "Traceback" not in chat.stderr
    assert "error: model 'openai/gpt-4o-mini' refused the request" in chat.stderr
    assert "the stub refuses this once" in chat.stderr
    assert "the conversation goes on" in chat.stderr
    assert "writer> Fridays it is." in chat.stdout
    assert asked == ["When do we deploy?", "And now?"]
