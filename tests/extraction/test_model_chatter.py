"""The model's own words never become memory: its disclaimer, filler, receipts, thanks,
refusals and restatements stay out of memory.md and Layer A; what it says that is new goes in.

Chats and runs are real (the offline model in process, or the OpenAI stub server on
127.0.0.1 through litellm), and so are the store, the workspace and the extractor.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from squad.app import App
from squad.chat.session import ChatSession
from squad.memory.agent import AgentContext
from squad.model.stub_answers import answer
from squad.model.testing import FREE_PRICES, OpenAIStubServer
from squad.spec.loader import squad_from_text
from squad.spec.models import SquadSpec
from tests.extraction.conftest import World

MakeWorld = Callable[..., World]

FILLER = "Done. The work is written up below.\n- point one\n- point two"

CHAT_YAML = """\
name: demo
goal: Ship the docs.
memory: {trigger_interval: 2}
agents:
  - {id: writer, role: Writes the pages}
tasks:
  - {id: draft, description: Write the guide., agent: writer}
"""

RUN_YAML = """\
name: demo
goal: Ship the docs.
model: {{name: openai/stub, api_base: '{url}', api_key_env: STUB_KEY, {prices}}}
memory: {{trigger_interval: 1}}
agents:
  - {{id: planner, role: Plans the work}}
  - {{id: writer, role: Writes the pages}}
tasks:
  - {{id: outline, description: Outline the guide., agent: planner}}
  - {{id: draft, description: Write the guide., agent: writer, depends_on: [outline]}}
"""


@pytest.fixture
def stub(monkeypatch: pytest.MonkeyPatch) -> Iterator[OpenAIStubServer]:
    monkeypatch.setenv("STUB_KEY", "stub-key")
    with OpenAIStubServer() as server:
        yield server


def everything_filed(app: App, spec: SquadSpec, workspace: Path, agent: str) -> str:
    """``agent``'s memory.md and its Layer A facts, as one text to search."""
    ctx = AgentContext.of(spec, agent, workspace)
    facts = [f.text for f in app.squads.store.memory.facts(app.memory.namespace_id(ctx))]
    return (workspace / "agents" / agent / "memory.md").read_text() + "\n" + "\n".join(facts)


def test_the_offline_models_disclaimer_after_a_chat_is_not_filed(app: App) -> None:
    spec = squad_from_text(CHAT_YAML, source="demo.yaml")
    workspace = app.squads.create(spec).path
    chat = ChatSession.open(app.runner(), "demo", "writer")
    replies = [
        chat.say("The docs site is built with MkDocs and deployed from the gh-pages branch."),
        chat.say("I prefer short answers with code first."),
        chat.say("Thanks!"),
        chat.say("How do I add a page?"),
    ]
    assert app.drain_extraction()
    assert all("offline model" in reply for reply in replies)

    filed = everything_filed(app, spec, workspace, "writer")
    assert "offline model" not in filed and "You said" not in filed
    assert "- The docs site is built with MkDocs" in filed  # the person's facts are filed
    assert "I prefer short answers with code first." in filed


def test_a_runs_filler_answers_do_not_land_in_memory_md(
    app: App, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("STUB_KEY", "stub-key")
    with OpenAIStubServer(handler=lambda body: answer(FILLER)) as filler:  # extraction too
        text = RUN_YAML.format(url=filler.url, prices=FREE_PRICES)
        spec = squad_from_text(text, source="demo.yaml")
        workspace = app.squads.create(spec).path
        result = app.runner().run(spec, workspace)
        assert app.drain_extraction()

    assert result.succeeded
    assert (workspace / "tasks/outline/output.md").read_text().startswith("Done.")
    for agent in ("planner", "writer"):
        filed = everything_filed(app, spec, workspace, agent)
        assert "written up below" not in filed and "point one" not in filed, agent


def test_tool_receipts_thanks_and_refusals_are_not_filed(make_world: MakeWorld) -> None:
    world = make_world(interval=1)
    world.say(
        ("user", "Remember that deploys happen on Fridays in this repo."),
        (
            "assistant",
            'memory_append answered: "saved to agents/planner/memory.md (Decisions); file is '
            'now 212 bytes"\nDone. Anything else?',
        ),
        ("user", "Thanks!"),
        ("assistant", "You're welcome! Let me know if you need anything else."),
        ("user", "Can you book me a flight to Berlin?"),
        ("assistant", "I'm sorry, but I can't help with that."),
    )
    [report] = world.extractor().run(world.ctx)

    assert [w["text"] for w in report.written] == [
        "Remember that deploys happen on Fridays in this repo."
    ]
    assert world.facts() == []
    text = world.memory_md()
    assert "answered" not in text and "sorry" not in text and "welcome" not in text


def test_the_working_memory_tools_receipts_are_not_filed(
    make_world: MakeWorld, stub: OpenAIStubServer
) -> None:
    world = make_world(interval=1)
    receipt = "working memory updated: decisions 1, blockers 0, done 0, remaining 2, notes 0"
    world.say(
        ("user", "The guide stays under ten pages in this repo."),
        ("assistant", f"{receipt}\nworking memory unchanged: it already says that"),
    )
    facts = [
        {"text": "The guide stays under ten pages", "scope": "project", "source_turns": [0]},
        {"text": receipt, "scope": "project", "source_turns": [1]},
    ]
    stub.script(answer(json.dumps({"facts": facts})))
    [report] = world.extractor(stub.model(attempts=2)).run(world.ctx)

    assert [w["text"] for w in report.written] == ["The guide stays under ten pages"]
    assert {d["text"]: d["reason"] for d in report.dropped} == {receipt: "chatter (tool receipt)"}
    assert world.facts() == []
    assert "working memory" not in world.memory_md()


def test_the_model_extractors_chatter_facts_are_dropped_and_say_why(
    make_world: MakeWorld, stub: OpenAIStubServer
) -> None:
    world = make_world(interval=1)
    world.say(
        ("user", "In this repo the API listens on port 8080."),
        ("assistant", "Thanks! I'm sorry, but I can't help with deployments."),
    )
    facts = [
        {"text": "The API listens on port 8080", "scope": "project", "source_turns": [0]},
        {"text": "Thanks!", "scope": "experiential", "source_turns": [1]},
        {"text": "I'm sorry, but I can't help with deployments.", "scope": "experiential",
         "source_turns": [1]},
        {"text": "The assistant cannot help with deployments", "scope": "experiential",
         "source_turns": [1]},
    ]  # fmt: skip
    stub.script(answer(json.dumps({"facts": facts})))
    [report] = world.extractor(stub.model(attempts=2)).run(world.ctx)

    assert [w["text"] for w in report.written] == ["The API listens on port 8080"]
    assert {d["text"]: d["reason"] for d in report.dropped} == {
        "Thanks!": "chatter (acknowledgement)",
        "I'm sorry, but I can't help with deployments.": "chatter (refusal)",
        "The assistant cannot help with deployments": "from the model's chatter",
    }
    assert world.facts() == []
    [body] = stub.bodies
    shown = str(body["messages"][-1]["content"])
    assert "[1] assistant: (nothing new: acknowledgement or filler)" in shown


def test_an_assistant_restating_the_user_is_filed_once_and_its_news_is_filed(
    make_world: MakeWorld, stub: OpenAIStubServer
) -> None:
    world = make_world(interval=1)
    world.say(
        ("user", "The staging database runs Postgres 16 on port 5433."),
        (
            "assistant",
            "Noted: staging runs Postgres 16 on port 5433. I also checked the disk: the "
            "staging database has 40 GB free.",
        ),
    )
    facts = [
        {"text": "The staging database runs Postgres 16 on port 5433", "scope": "project",
         "source_turns": [0]},
        {"text": "Staging runs Postgres 16 on port 5433", "scope": "project",
         "source_turns": [1]},
        {"text": "The staging database has 40 GB of free disk", "scope": "project",
         "source_turns": [1]},
    ]  # fmt: skip
    stub.script(answer(json.dumps({"facts": facts})))
    [report] = world.extractor(stub.model(attempts=2)).run(world.ctx)

    assert [w["text"] for w in report.written] == [
        "The staging database runs Postgres 16 on port 5433",
        "The staging database has 40 GB of free disk",
    ]
    assert {d["text"]: d["reason"] for d in report.dropped} == {
        "Staging runs Postgres 16 on port 5433": "restates the user"
    }
    shown = str(stub.bodies[0]["messages"][-1]["content"])
    assert "[1] assistant: I also checked the disk: the staging database has 40 GB free." in shown


def test_offline_an_assistants_restatement_is_dropped_and_its_news_filed(
    make_world: MakeWorld,
) -> None:
    world = make_world(interval=1)
    world.say(
        ("user", "The staging database runs Postgres 16 on port 5433."),
        ("assistant", "Got it: staging runs Postgres 16 on port 5433."),
        ("user", "Which port does the API listen on?"),
        ("assistant", "In this repo the API listens on port 8080, set in config/api.yaml."),
    )
    [report] = world.extractor().run(world.ctx)

    assert [w["text"] for w in report.written] == [
        "The staging database runs Postgres 16 on port 5433.",
        "In this repo the API listens on port 8080, set in config/api.yaml.",
    ]
