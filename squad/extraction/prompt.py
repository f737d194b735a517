"""The extraction request: the batch's messages, the agent's recent facts, today's date."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import date

from squad.extraction.candidates import ConversationMessage, Existing
from squad.extraction.model_answer import MAX_FACTS, answer_schema
from squad.model.types import Message

__all__ = ["MESSAGE_CHARS", "extraction_messages"]

MESSAGE_CHARS = 2000
"""Each message is cut to this many characters in the request."""

_SYSTEM = """\
You extract durable facts from a conversation for an AI agent's long-term memory.

Keep only facts worth remembering weeks from now:
- project facts (scope "project"): true only inside this project, e.g. its stack, layout, \
ports, owners, decisions, conventions, deadlines. Give a memory.md section: "Decisions", \
"Coding Rules", "Project Context" or "Insights" (default).
- experiential facts (scope "experiential"): follow the agent to other projects, e.g. the \
user's preferences, working style, name, role, timezone, reusable lessons.
Never extract: credentials or secrets; questions; greetings or thanks; transient status ("I'm \
running the tests now"); one-off requests; suggestions nobody accepted; the assistant merely \
restating what it was told; the assistant's own filler, tool receipts, refusals or remarks \
about itself. Messages from "task" are an orchestrator's instructions to the \
agent: context only, never a source of facts.

Rules:
- One self-contained line per fact, in the conversation's language. Absolute dates only \
(today is {today}): never "yesterday", "tomorrow", "next week".
- "subject": a short lowercase key for what the fact is about ("backend port", "deploy day"), \
so a later fact about the same subject can replace it.
- When a fact updates one of the existing facts, set "replaces" to that fact's number.
- "source_turns": the numbers of the messages the fact comes from.
- "confidence": 0 to 1. "expires_on": the date after which a time-bound fact stops holding.
- At most {max_facts} facts; none is a fine answer: {{"facts": []}}.

Answer with JSON only, following this schema:
{schema}"""


def extraction_messages(
    batch: Sequence[ConversationMessage], existing: Sequence[Existing], today: date
) -> list[Message]:
    """The two messages of an extraction call; messages are numbered from 0 in the batch."""
    system = _SYSTEM.format(
        today=today.isoformat(),
        max_facts=MAX_FACTS,
        schema=json.dumps(answer_schema(), separators=(",", ":")),
    )
    known = "\n".join(f"[{e.number}] ({e.scope}) {e.text}" for e in existing) or "(none yet)"
    conversation = "\n".join(
        f"[{i}] {m.role}: {' '.join(m.content.split())[:MESSAGE_CHARS]}"
        for i, m in enumerate(batch)
    )
    user = (
        f"Today is {today.isoformat()}.\n\n"
        f"Existing facts:\n{known}\n\n"
        f"Conversation:\n{conversation}\n\n"
        "Extract the new durable facts from the conversation as JSON."
    )
    return [Message.system(system), Message.user(user)]
