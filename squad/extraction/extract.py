"""Extraction of one batch: the offline classifier, or one model call behind the offline gate.

A batch is read with its credentials redacted first (:func:`redacted`), each message judged with
the ones before it, so neither the model nor a fact ever sees a password split across two
messages ("what's the db password?" / "hunter2x"); a fact built from a redacted message is
dropped by :func:`~squad.extraction.quality.drop_reason`.

The model's own words are no facts (:mod:`squad.text.chatter`): its acknowledgements, filler,
tool receipts, refusals, the offline model's fixed phrases and its restatements of the user or
the task. The offline classifier reads an assistant message without them; the extraction model
is shown assistant messages without them, and a fact it proposes from assistant messages
alone is dropped when it is chatter, restates what the user or the task said, or comes from
messages that were all chatter (:func:`own_words_reason`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import date
from typing import Literal

from squad.classifier.classify import LONG_MESSAGE_CHARS, classify, worth_a_model_call
from squad.errors import AnswerError
from squad.extraction.candidates import Candidate, ConversationMessage, Existing
from squad.extraction.model_answer import parse_answer
from squad.extraction.prompt import extraction_messages
from squad.extraction.quality import contained, shingles
from squad.model.types import ChatModel, Message, ModelReply
from squad.text.chatter import (
    ChatterKind,
    Said,
    is_chatter_message,
    pieces,
    restates,
    substance,
)
from squad.text.secrets import redact_conversation

__all__ = [
    "BatchResult",
    "extract_batch",
    "extract_offline",
    "own_words_reason",
    "redacted",
]

Extractor = Literal["offline", "model", "gate"]
MODEL_TIMEOUT_S = 120.0


@dataclass(frozen=True)
class BatchResult:
    candidates: list[Candidate]
    extractor: Extractor
    """``offline`` (the classifier), ``model``, or ``gate`` (the classifier saw nothing
    worth a model call, so none was made)."""
    replies: tuple[ModelReply, ...] = ()
    """The model calls made, for the spend ledger."""
    attempts: int = 0
    fallback: str | None = None
    """Why the offline classifier's candidates stand in for the model's (its answer was
    invalid twice); None when the extractor named did the work."""


ECHO = 0.8
"""An assistant message holding this much of an earlier user message restates it."""


def _echoes(fact: frozenset[str], earlier: frozenset[str]) -> bool:
    """A fact restates an earlier message (both as their :func:`shingles`): it holds most of
    it, or most of it comes from it."""
    return contained(earlier, fact) >= ECHO or contained(fact, earlier) >= ECHO


def _context_of(message: ConversationMessage, batch: Sequence[ConversationMessage]) -> list[str]:
    """What the user and the task said before ``message`` in its batch."""
    return [m.content for m in batch if m.role != "assistant" and m.index < message.index]


def extract_offline(batch: Sequence[ConversationMessage], today: date) -> list[Candidate]:
    """One candidate per message that states a fact, by the offline classifier.

    Task prompts are never sources. A message whose author is known (a named person of a
    replayed transcript) gives a fact that names them: "Caroline: I ran a charity race".
    An assistant reply is read without its chatter, restatements of what the user or the task
    said before it included ("Noted: the API is on 8080", "This deliverable addresses the
    task: ..."); a fact left that still echoes an earlier message adds nothing: it is
    dropped as an echo.
    """
    out = []
    said = Said()  # what the user and the task said so far: a reply's context
    heard: list[tuple[int, frozenset[str]]] = []  # and their words, for the echo check
    for message in batch:
        if message.role != "assistant":
            said.add(message.content)
            heard.append((message.index, shingles(message.content)))
        if message.role == "task":
            continue
        context = said if message.role == "assistant" else Said()
        fact = classify(message.content, role=message.role, today=today, context=context)
        if fact is None:
            continue
        if message.role == "assistant":
            words = shingles(fact.text)
            echo = any(i < message.index and _echoes(words, h) for i, h in heard)
        else:
            echo = False
        source = (
            substance(message.content, context=context)
            if message.role == "assistant"
            else message.content
        )
        long = len(source) > LONG_MESSAGE_CHARS
        out.append(
            Candidate(
                text=f"{message.author}: {fact.text}" if message.author else fact.text,
                scope=fact.scope,
                section=fact.section,
                subject=fact.subject,
                confidence=fact.confidence,
                source_turns=(message.index,),
                detail=source.strip() if long else None,
                dropped="restates the user" if echo else None,
            )
        )
    return out


def redacted(
    batch: Sequence[ConversationMessage], *, previous: Sequence[str] = ()
) -> list[ConversationMessage]:
    """``batch`` with each message's credentials redacted, the messages before it (and
    ``previous``, those before the batch) read for a bare value's cue."""
    contents = redact_conversation([m.content for m in batch], previous=previous)
    return [
        m if text == m.content else replace(m, content=text)
        for m, text in zip(batch, contents, strict=True)
    ]


def own_words_reason(candidate: Candidate, batch: Sequence[ConversationMessage]) -> str | None:
    """Why a fact the model proposed is the model's own words rather than a fact, or None.

    Chatter whoever said it (an acknowledgement, a tool receipt, the offline model's phrases)
    is never a fact. A fact drawn from assistant messages alone must state something new:
    not chatter of any kind, not what the user or the task said before (that is their fact,
    filed from their message), and not from messages that were nothing but chatter.
    """
    sources = [m for m in batch if m.index in candidate.source_turns]
    mine = bool(sources) and all(m.role == "assistant" for m in sources)
    kind = _whole_chatter(candidate.text, "assistant" if mine else "user")
    if kind is not None:
        return f"chatter ({kind.replace('_', ' ')})"
    if not mine:
        return None
    last = max(sources, key=lambda m: m.index)
    said = Said.of(_context_of(last, batch))
    if said and restates(candidate.text, said):
        return "restates the user"
    if all(is_chatter_message(m.content, m.role, _context_of(m, batch)) for m in sources):
        return "from the model's chatter"
    return None


def _whole_chatter(text: str, role: str) -> ChatterKind | None:
    """The kind of chatter ``text`` is when every piece of it is chatter, else None."""
    found = pieces(text, role=role)
    if not found or any(p.kind is None for p in found):
        return None
    return found[0].kind


def _shown(batch: Sequence[ConversationMessage]) -> list[ConversationMessage]:
    """The batch as the extraction model reads it: assistant messages without their chatter
    (one that is all chatter reads as such), so it is never offered as a fact."""
    out = []
    said = Said()
    for m in batch:
        if m.role == "assistant":
            own = substance(m.content, context=said)
            m = replace(m, content=own or "(nothing new: acknowledgement or filler)")
        else:
            said.add(m.content)
        out.append(m)
    return out


def _detail(sources: Iterable[str]) -> str | None:
    """The long source messages of a fact, kept in the daily log; None when all are short."""
    long = [text.strip() for text in sources if len(text) > LONG_MESSAGE_CHARS]
    return "\n\n".join(long) or None


def extract_batch(
    batch: Sequence[ConversationMessage],
    existing: Sequence[Existing],
    today: date,
    model: ChatModel | None,
) -> BatchResult:
    """The batch's candidate facts.

    Without a model, the offline classifier. With one, the classifier first decides whether
    the batch is worth a call; then one call, retried once with the validation error when the
    answer is malformed. An answer invalid twice is not the batch's loss: the offline
    classifier's candidates are returned instead (``fallback`` says why), with the model's
    replies for the spend ledger. A :class:`ModelError` (the model is unreachable, or kept
    failing) propagates: the caller skips the batch, and its messages wait.
    """
    batch = redacted(batch)
    if model is None:
        return BatchResult(extract_offline(batch, today), "offline")
    if not worth_a_model_call([(m.role, m.content) for m in batch]):
        return BatchResult([], "gate")
    shown = _shown(batch)
    messages = extraction_messages(shown, existing, today)
    replies: list[ModelReply] = []
    error: AnswerError | None = None
    for attempt in (1, 2):
        reply = model.complete(
            messages, response_format={"type": "json_object"}, timeout_s=MODEL_TIMEOUT_S
        )
        replies.append(reply)
        try:
            found = parse_answer(reply.content, batch_size=len(batch))
        except AnswerError as exc:
            error = exc
            messages = [
                *messages,
                Message.assistant(reply.content),
                Message.user(
                    f"Your answer was invalid: {exc}. Answer again with only the corrected JSON."
                ),
            ]
            continue
        mapped = [
            replace(
                c,
                source_turns=tuple(batch[t].index for t in c.source_turns),
                detail=_detail(shown[t].content for t in c.source_turns),
            )
            for c in found
        ]
        mapped = [
            c if c.dropped else replace(c, dropped=own_words_reason(c, batch)) for c in mapped
        ]
        return BatchResult(mapped, "model", tuple(replies), attempt)
    return BatchResult(
        extract_offline(batch, today),
        "offline",
        tuple(replies),
        len(replies),
        fallback=f"the model's answer was invalid twice ({error}): the offline extractor's "
        "facts were filed instead",
    )
