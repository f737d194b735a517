"""A model's summary lines for a fold of memory.md (:mod:`squad.memory.fold`).

The fold's own summary is extractive: a topic's distinct facts, newest first, cut at
:data:`~squad.memory.fold.SUMMARY_MAX_CHARS`. With a real model the nightly consolidation
may ask it instead, once per fold, for one line per topic that merges repeats and keeps the
newest of facts that disagree. The model reads facts memory.md already holds (redacted when
they were written) and its answer is checked like any model output: JSON of the documented
shape, one line per topic no longer than the extractive limit, no credential. A topic the
answer leaves out or gets wrong keeps its extractive line; a failed call, an answer that is
not that JSON, or a call the spend cap does not allow (``allowed``) leaves them all
extractive. The call is charged through ``on_reply`` like every other model call.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, ValidationError

from squad.errors import ModelError
from squad.memory.fold import SUMMARY_MAX_CHARS
from squad.model.types import ChatModel, Message, ModelReply
from squad.text.secrets import contains_secret

__all__ = ["ModelFoldSummariser", "parse_summaries"]

FACT_CHARS = 300
"""Characters of each fact shown to the model."""
TIMEOUT_S = 60.0


class _Summary(BaseModel):
    model_config = ConfigDict(extra="ignore")
    topic: str
    summary: str


class _Answer(BaseModel):
    model_config = ConfigDict(extra="ignore")
    summaries: list[_Summary]


def parse_summaries(answer: str, topics: Sequence[str]) -> dict[str, str]:
    """The usable lines of a model's ``answer`` by topic: only topics asked for, each one
    line of words within :data:`SUMMARY_MAX_CHARS` holding no credential; {} for an answer
    that is not the JSON asked for (a fenced block around it is allowed)."""
    text = answer.strip()
    if text.startswith("```"):
        text = text.strip("`").removeprefix("json").strip()
    try:
        parsed = _Answer.model_validate(json.loads(text))
    except (ValueError, ValidationError):
        return {}
    wanted = set(topics)
    found: dict[str, str] = {}
    for item in parsed.summaries:
        line = " ".join(item.summary.split())
        if item.topic not in wanted or item.topic in found or not line:
            continue
        if len(line) > SUMMARY_MAX_CHARS or contains_secret(line):
            continue
        found[item.topic] = line
    return found


@dataclass(frozen=True)
class ModelFoldSummariser:
    """A :data:`~squad.memory.fold.TopicSummaries` that asks ``model`` once per fold.

    ``allowed`` sees the prompt before the call and says whether the spend cap allows it;
    ``on_reply`` sees the answer (to charge it)."""

    model: ChatModel
    on_reply: Callable[[ModelReply], None] | None = None
    allowed: Callable[[Sequence[Message]], bool] | None = None
    timeout_s: float = TIMEOUT_S

    def __call__(self, topics: Mapping[str, Sequence[str]]) -> dict[str, str]:
        from squad.prompts import load

        if not topics:
            return {}
        listing = "\n\n".join(
            f"Topic: {topic}\n" + "\n".join(f"- {fact[:FACT_CHARS]}" for fact in facts)
            for topic, facts in topics.items()
        )
        messages = [
            Message.system(load("fold_summary.md").format(max_chars=SUMMARY_MAX_CHARS)),
            Message.user(listing),
        ]
        if self.allowed is not None and not self.allowed(messages):
            return {}
        try:
            reply = self.model.complete(messages, timeout_s=self.timeout_s)
        except ModelError:
            return {}
        if self.on_reply is not None:
            self.on_reply(reply)
        return parse_summaries(reply.content, list(topics))
