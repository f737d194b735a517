"""The built-in offline model: deterministic, plausible, and reached through litellm."""

from __future__ import annotations

import itertools
import json
import re
import subprocess
import sys
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from squad.model import ChatModel, Message, ModelEvent, OfflineModel, ToolSpec, model_for
from squad.model.offline import answer
from squad.paths import SLUG_PATTERN
from squad.spec.models import ModelSpec
from squad.text.tokens import counter_for_model

AND_OR = {"and", "or"}  # list glue, never agent ids
REVIEWER = "Review the work. Answer 'APPROVED: reason' or 'CHANGES REQUESTED: what is missing'."
MEMORY_APPEND = ToolSpec(
    "memory_append",
    "Add lines at the end of a memory.md section.",
    {
        "type": "object",
        "properties": {"section": {"type": "string"}, "text": {"type": "string"}},
        "required": ["section", "text"],
    },
)


sys_ = Message.system
user = Message.user


def plan_of(*messages: Message) -> list[dict[str, Any]]:
    reply = answer(list(messages))
    assert reply.kind == "plan"
    tasks = json.loads(reply.content)["tasks"]
    assert isinstance(tasks, list)
    return tasks


# -- plans --------------------------------------------------------------------------------------


def test_plan_is_json_with_one_task_per_clause_of_the_goal_assigned_by_role() -> None:
    tasks = plan_of(
        sys_("You are the lead of the squad."),
        user(
            "Write a JSON plan of tasks for the goal.\n"
            "Goal: Research static site generators and write a comparison guide. "
            "Then publish it to the docs folder; review the guide for accuracy.\n"
            "Agents: researcher, writer, reviewer"
        ),
    )
    assert [t["description"] for t in tasks] == [
        "Research static site generators.",
        "Write a comparison guide.",
        "Publish it to the docs folder.",
        "Review the guide for accuracy.",
    ]
    assert [t["agent"] for t in tasks] == ["researcher", "writer", "researcher", "reviewer"]
    assert tasks[0]["depends_on"] == []
    for before, after in itertools.pairwise(tasks):
        assert after["depends_on"] == [before["id"]]
    ids = [t["id"] for t in tasks]
    assert len(set(ids)) == len(ids)
    assert all(re.match(SLUG_PATTERN, i) for i in ids)
    assert set(tasks[0]) == {"id", "description", "agent", "depends_on"}


def test_plan_reads_goal_and_team_bullets_from_the_system_prompt() -> None:
    system = (
        "You are Planner.\nSquad goal:\nOutline the guide, then draft it.\n\n"
        "Your team:\n- planner: Plans the work\n- writer: Writes the pages\n\n"
        "Notes:\n- not-an-agent: a later list\n"
    )
    tasks = plan_of(sys_(system), user("Make the plan: JSON with tasks."))
    assert [t["description"] for t in tasks] == ["Outline the guide.", "Draft it."]
    assert {t["agent"] for t in tasks} <= {"planner", "writer"}


def test_plan_with_inline_agent_list_uses_only_those_agents() -> None:
    tasks = plan_of(
        user(
            "Goal: Collect the feedback, summarise it and publish a report.\n"
            "Return a JSON plan of tasks using only these agents: ana, bo. Nothing else."
        )
    )
    assert len(tasks) == 3
    assert {t["agent"] for t in tasks} <= {"ana", "bo"}


@settings(max_examples=60, deadline=None)
@given(
    goal=st.text(max_size=300),
    agents=st.lists(
        st.from_regex(r"[a-z][a-z0-9]{0,8}", fullmatch=True).filter(lambda a: a not in AND_OR),
        min_size=1,
        max_size=4,
        unique=True,
    ),
)
def test_any_goal_gives_a_valid_plan_over_the_listed_agents(goal: str, agents: list[str]) -> None:
    assume(not re.search(r"fact|agent|:", goal, re.IGNORECASE))
    prompt = f"Plan the tasks as JSON.\nGoal: {goal}\nAgents: {', '.join(agents)}"
    tasks = plan_of(user(prompt))
    assert tasks
    assert {t["agent"] for t in tasks} <= set(agents)
    assert all(re.match(SLUG_PATTERN, t["id"]) for t in tasks)
    known: set[str] = set()
    for task in tasks:
        assert set(task["depends_on"]) <= known
        known.add(task["id"])


# -- reviews and work ---------------------------------------------------------------------------


def test_review_approves_work_that_mentions_every_key_term() -> None:
    reply = answer(
        [
            sys_(REVIEWER),
            user(
                "Task: Write the installation guide for Linux.\n"
                "Work:\n# Installing on Linux\nThis guide writes out every step of installation."
            ),
        ]
    )
    assert reply.kind == "review"
    assert reply.content.startswith("APPROVED: ")


def test_review_requests_changes_naming_what_is_missing() -> None:
    reply = answer(
        [
            sys_(REVIEWER),
            user(
                "Task: Write the installation guide for Linux and macOS.\nWork:\nA guide for Linux."
            ),
        ]
    )
    assert reply.content.startswith("CHANGES REQUESTED: ")
    assert "'installation'" in reply.content
    assert "'macos'" in reply.content


def test_review_without_work_requests_it() -> None:
    reply = answer([sys_(REVIEWER), user("Task: Write the guide.")])
    assert reply.content.startswith("CHANGES REQUESTED: ")


def test_task_work_is_markdown_that_restates_the_task_and_passes_its_review() -> None:
    task = "Write the installation guide for Linux and macOS, covering pip and pipx"
    work = answer(
        [sys_("You are Writer."), user(f"Task: {task}.\nExpected output: a markdown page")]
    )
    assert work.kind == "work"
    assert work.content.startswith("# Write the installation guide for Linux and macOS\n")
    assert task in work.content
    assert "a markdown page" in work.content
    review = answer([sys_(REVIEWER), user(f"Task: {task}.\nWork:\n{work.content}")])
    assert review.content.startswith("APPROVED: ")


# -- facts, chat, tools -------------------------------------------------------------------------


def test_a_request_to_extract_facts_is_not_answered_with_facts() -> None:
    """The offline model extracts no facts: the offline extractor does, without a call."""
    reply = answer(
        [
            sys_("Extract durable facts from the conversation. Reply with JSON only."),
            user("Conversation:\nuser: We decided to use Postgres for the store."),
        ],
        response_format={"type": "json_object"},
    )
    assert reply.kind == "chat"
    assert "facts" not in json.loads(reply.content)


def test_chat_reply_quotes_and_references_the_message() -> None:
    reply = answer([sys_("You are Writer."), user("I am planning a trip to Lisbon next month.")])
    assert reply.kind == "chat"
    assert '"I am planning a trip to Lisbon next month."' in reply.content
    assert "lisbon" in reply.content.lower()


def test_chat_question_is_recognised() -> None:
    reply = answer([user("What is the capital of Portugal?")])
    assert reply.content.startswith('You asked: "What is the capital of Portugal?"')


def test_json_response_format_wraps_a_text_answer() -> None:
    reply = answer([user("hello there")], response_format={"type": "json_object"})
    assert json.loads(reply.content)["answer"].startswith('You said: "hello there"')


@pytest.mark.parametrize(
    ("fact", "section"),
    [
        ("we deploy on Fridays.", "Insights"),
        ("we decided to ship the docs with MkDocs.", "Decisions"),
        ("never commit to main directly.", "Coding Rules"),
        ("the API listens on port 8080.", "Project Context"),
    ],
)
def test_asking_to_remember_with_a_memory_tool_calls_it_then_answers_its_result(
    fact: str, section: str
) -> None:
    tools = [MEMORY_APPEND]
    first = answer([user(f"Please remember that {fact}")], tools)
    assert first.kind == "tool_call"
    (call,) = first.tool_calls
    assert call.name == "memory_append"
    assert call.arguments == {"section": section, "text": fact[:1].upper() + fact[1:]}

    followup = [
        user(f"Please remember that {fact}"),
        Message.assistant("", [call]),
        Message.tool(call.id, f"appended 1 line to {section}"),
    ]
    second = answer(followup, tools)
    assert second.kind == "tool_result"
    assert second.content.startswith('memory_append answered: "appended 1 line')


def test_remember_without_a_memory_tool_is_plain_chat() -> None:
    assert answer([user("Remember that we deploy on Fridays.")]).kind == "chat"


@settings(max_examples=80, deadline=None)
@given(system=st.text(max_size=200), text=st.text(max_size=400))
def test_any_input_gets_the_same_answer_twice(system: str, text: str) -> None:
    messages = [sys_(system), user(text)]
    assert answer(messages) == answer(messages)


# -- as a ChatModel ------------------------------------------------------------------------------


def offline_model(events: list[ModelEvent]) -> ChatModel:
    return model_for(ModelSpec(name="offline"), events.append)


def test_the_offline_spec_gets_the_in_process_model() -> None:
    model = model_for(ModelSpec(name="offline"))
    assert isinstance(model, OfflineModel)
    assert isinstance(model, ChatModel)


def test_offline_calls_are_answered_in_process_with_counted_usage() -> None:
    events: list[ModelEvent] = []
    messages = [Message.system("You are Writer."), Message.user("Good morning, team!")]
    reply = offline_model(events).complete(messages)
    again = offline_model([]).complete(messages)

    assert reply.content == again.content
    assert reply.content.startswith('You said: "Good morning, team!"')
    assert [(e.kind, e.model, e.attempt) for e in events] == [("call", "offline", 1)]
    assert events[0].usage == reply.usage
    counter = counter_for_model("offline")
    assert reply.usage.prompt_tokens == sum(counter.count(m.content) for m in messages)
    assert reply.usage.completion_tokens == counter.count(reply.content)
    assert reply.usage.cost_usd == 0.0
    assert (reply.model, reply.attempts) == ("offline", 1)


@pytest.mark.slow
def test_offline_calls_never_import_litellm() -> None:
    code = (
        "import sys\n"
        "from squad.model import Message, ToolSpec, model_for\n"
        "from squad.spec.models import ModelSpec\n"
        "model = model_for(ModelSpec(name='offline'))\n"
        "model.complete([Message.user('Remember that we ship on Fridays.')],\n"
        "    tools=[ToolSpec('memory_append', 'Add a line.')], on_token=lambda t: None)\n"
        "model.complete([Message.user('Goal: Ship.\\nAgents: writer\\nA JSON plan of tasks.')])\n"
        "print('litellm' in sys.modules)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert result.stdout.strip() == "False"


def test_offline_streaming_delivers_the_same_answer_in_pieces() -> None:
    messages = [Message.user("Task: Outline the release notes for version 2.")]
    whole = offline_model([]).complete(messages)
    pieces: list[str] = []
    streamed = offline_model([]).complete(messages, on_token=pieces.append)
    assert len(pieces) > 5
    assert "".join(pieces) == streamed.content == whole.content
    assert streamed.usage == whole.usage


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "streamed"])
def test_offline_tool_call_through_the_seam(stream: bool) -> None:
    pieces: list[str] = []
    reply = offline_model([]).complete(
        [Message.user("Remember that the docs live in docs/.")],
        tools=[MEMORY_APPEND],
        on_token=pieces.append if stream else None,
    )
    (call,) = reply.tool_calls
    assert call.name == "memory_append"
    assert call.arguments["text"] == "The docs live in docs/."
    follow = offline_model([]).complete(
        [
            Message.user("Remember that the docs live in docs/."),
            Message.assistant("", [call]),
            Message.tool(call.id, "appended 1 line", name="memory_append"),
        ],
        tools=[MEMORY_APPEND],
    )
    assert follow.tool_calls == ()
    assert "appended 1 line" in follow.content


def test_offline_plan_with_json_response_format_through_the_seam() -> None:
    reply = offline_model([]).complete(
        [Message.user("Goal: Draft the FAQ.\nAgents: writer\nReply with a JSON plan of tasks.")],
        response_format={"type": "json_object"},
    )
    assert json.loads(reply.content)["tasks"][0]["agent"] == "writer"
