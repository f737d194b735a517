"""A model that repeats what it is told: the worst case for a credential that must not come
back. Served by the OpenAI stub server on 127.0.0.1 (``OpenAIStubServer(handler=echoing)``).

Every answer repeats the loudest token of what the model just read (the longest one with a
letter and a digit, not a path: the credential, in these tests): a chat reply says "OK, <it>
is saved"; asked to remember, it first writes it with each write tool it is offered
(``memory_append``, ``decision_record``, ``working_memory_update``), then answers quoting the
tools' last answer; a plan repeats it in its task; a review, a summary and the extractor's
facts quote what they were given, line by line. So whatever it read raw, it writes back raw.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from squad.model.stub_answers import Behaviour, answer, tool_call

__all__ = ["ECHO_WRITES", "echoing", "loudest"]

ECHO_WRITES = ("memory_append", "decision_record", "working_memory_update")
"""The write tools the model calls, in this order, with the value, when asked to remember."""
_TOKEN = re.compile(r"[^\s,;\"'`()]+")


def loudest(text: str) -> str:
    """The longest token of ``text`` with a letter and a digit that is not a path, else its
    last word."""
    tokens: list[str] = [t.rstrip(".:!?") for t in _TOKEN.findall(text)]
    likely = [
        t for t in tokens if "/" not in t and re.search(r"\d", t) and re.search(r"[A-Za-z]", t)
    ]
    if likely:
        return max(likely, key=len)
    return tokens[-1] if tokens else ""


def _content(message: Mapping[str, Any]) -> str:
    return str(message.get("content") or "")


def _facts(read: str) -> Behaviour:
    said = re.findall(r"^\[\d+\] \w+: (.+)$", read, re.M)  # the transcript's messages
    lines = [line.strip() for line in said or read.splitlines() if len(line.strip()) > 12][:20]
    facts = [{"text": line[:200], "scope": "project", "confidence": 0.9} for line in lines]
    return answer(json.dumps({"facts": facts}))


def _plan(request: str) -> Behaviour:
    goal = re.search(r"^Goal: (.*)$", request, re.M)
    agents = re.findall(r"^- ([a-z0-9-]+): ", request, re.M)
    said = loudest(goal[1]) if goal else "it"
    workers = [a for a in agents if "review" not in a] or agents  # a reviewer reviews it
    task = {"id": "work", "description": f"Deploy with {said}.", "agent": workers[-1]}
    return answer(json.dumps({"tasks": [task]}))


def _tool_turn(messages: Sequence[Mapping[str, Any]], offered: set[str]) -> Behaviour | None:
    """The next write tool to call with the value, None when all are done or none offered."""
    user = max(i for i, m in enumerate(messages) if m.get("role") == "user")
    asked = _content(messages[user])
    if "remember" not in asked.lower():
        return None
    done = sum(m.get("role") == "tool" for m in messages[user:])
    value = loudest(asked)
    calls = {
        "memory_append": {"section": "Insights", "text": f"{value} is the staging login"},
        "decision_record": {
            "title": "Staging login",
            "decision": f"Log in with {value}",
            "reasons": f"{value} works",
        },
        "working_memory_update": {"notes": f"login {value}"},
    }
    wanted = [name for name in ECHO_WRITES if name in offered]
    if done >= len(wanted):
        return None
    name = wanted[done]
    return tool_call(name, calls[name], call_id=f"call_{name}")


def echoing(body: Any) -> Behaviour:
    """The stub's handler: see the module docstring."""
    messages: list[Mapping[str, Any]] = body["messages"]
    last = _content(messages[-1])
    system = _content(messages[0]) if messages[0].get("role") == "system" else ""
    form = body.get("response_format") or {}
    if form.get("type") == "json_object":  # the fact extractor
        return _facts(last)
    if form or "Write a plan for this goal as JSON" in last:
        return _plan(last)
    if system.startswith("You compress the earlier part"):
        return answer("- " + "\n- ".join(line for line in last.splitlines() if line.strip()))
    if "CHANGES REQUESTED" in last and "APPROVED" in last:
        work = last.split("Work:", 1)[-1].strip().splitlines()
        return answer(f"APPROVED: it says {work[0] if work else 'nothing'}")
    offered = {str(t["function"]["name"]) for t in body.get("tools") or []}
    call = _tool_turn(messages, offered)
    if call is not None:
        return call
    user = next(_content(m) for m in reversed(messages) if m.get("role") == "user")
    reply = f"OK, {loudest(user)} is saved."
    if messages[-1].get("role") == "tool":
        reply += f" The tool said: {last.splitlines()[0] if last else ''}"
    return answer(reply)
