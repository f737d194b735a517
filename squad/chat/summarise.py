"""Summaries of the older part of a chat, for :mod:`squad.chat.compress`.

Two :data:`~squad.chat.compress.Summariser` implementations:

- :func:`offline_summary`, the default: extractive and deterministic. One bullet per dropped
  message: the first sentence of what the user asked, the conclusion (last sentence that is
  not a pleasantry) of what the assistant answered; bare acknowledgements, thanks and
  greetings are left out. When they do not all fit, the user's
  bullets win over the assistant's, and newer assistant bullets over older ones; the chosen
  bullets are listed oldest first.
- :class:`ModelSummariser`: one call to a chat model, which reads the messages with their
  credentials redacted; falls back to the offline summary on
  any :class:`~squad.errors.ModelError` or an empty answer. A chat does not call it every
  turn: :mod:`squad.chat.rolling` keeps its last answer and asks again only when
  enough new messages have been folded.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass

from squad.classifier.cues import CUES
from squad.errors import ModelError
from squad.model.types import ChatModel, Message, ModelReply
from squad.text.secrets import redact, redact_conversation
from squad.text.tokens import TokenCounter

__all__ = ["BULLET_WORDS", "ModelSummariser", "offline_summary"]

BULLET_WORDS = 30
"""Longest bullet of the offline summary, in words."""
TRANSCRIPT_CHARS = 2000
"""Characters of each dropped message shown to the model summariser."""

_SENTENCE_END = re.compile(r"(?<=[.!?。])\s+|\n+")
_SMALL_TALK = re.compile(
    "|".join(f"(?:{CUES[name]})" for name in ("ack", "thanks", "greeting")), re.IGNORECASE
)
"""Acknowledgements, thanks, greetings: dropped from the summary when that is all they are."""
_SMALL_TALK_WORDS = 4
_PLEASANTRY = re.compile(
    r"\b(?:let me know|hope (?:this|that) helps|anything else|feel free|happy to help"
    r"|glad to help|good luck|you're welcome|no problem|my pleasure)\b"
    r"|도움이 되|궁금한|말씀해 주세요",
    re.IGNORECASE,
)


def offline_summary(dropped: Sequence[Message], max_tokens: int, counter: TokenCounter) -> str:
    """Extractive bullets of ``dropped`` in about ``max_tokens`` tokens (see the module doc)."""
    bullets: list[tuple[int, str]] = []
    for i, message in enumerate(dropped):
        if _small_talk(message.content):
            continue
        if message.role == "user":
            line = _clip(_first_sentence(message.content))
            if line:
                bullets.append((i, f"- User: {line}"))
        elif message.role == "assistant":
            line = _clip(_conclusion(message.content))
            if line:
                bullets.append((i, f"- Assistant: {line}"))
    users = [b for b in bullets if b[1].startswith("- User:")]
    replies = [b for b in reversed(bullets) if not b[1].startswith("- User:")]
    chosen: list[tuple[int, str]] = []
    used = 0
    for bullet in [*users, *replies]:
        cost = counter.count(bullet[1]) + 1  # and its newline
        if used + cost <= max_tokens:
            chosen.append(bullet)
            used += cost
    return "\n".join(text for _, text in sorted(chosen))


def _small_talk(text: str) -> bool:
    return len(text.split()) <= _SMALL_TALK_WORDS and bool(_SMALL_TALK.search(text.strip()))


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_END.split(text) if s.strip()]


def _first_sentence(text: str) -> str:
    sentences = _sentences(text)
    return sentences[0] if sentences else ""


def _conclusion(text: str) -> str:
    sentences = _sentences(text)
    for sentence in reversed(sentences):
        if not _PLEASANTRY.search(sentence):
            return sentence
    return ""


def _clip(sentence: str) -> str:
    words = sentence.split()
    if len(words) <= BULLET_WORDS:
        return " ".join(words)
    return " ".join(words[:BULLET_WORDS]) + " …"


@dataclass(frozen=True)
class ModelSummariser:
    """Summarises with one call to ``model``; ``on_reply`` sees each answer (to charge its
    spend). As a :data:`~squad.chat.compress.Summariser` it falls back to the offline
    summary when the call fails."""

    model: ChatModel
    timeout_s: float | None = 60.0
    on_reply: Callable[[ModelReply], None] | None = None
    known: Collection[str] = ()
    """Credential values found earlier in the conversation: redacted wherever they occur."""

    def summarise(self, previous: str, messages: Sequence[Message], max_tokens: int) -> str | None:
        """The model's summary of ``messages``, merged into ``previous`` (a summary of what
        came before them, or ""); None when the call fails or answers nothing."""
        from squad.prompts import load

        instructions = load("session_summary.md").format(max_words=max(10, max_tokens * 2 // 3))
        contents = redact_conversation([m.content for m in messages], known=self.known)
        transcript = "\n\n".join(
            f"{m.role}: {text[:TRANSCRIPT_CHARS]}"
            for m, text in zip(messages, contents, strict=True)
            if text.strip()
        )
        if previous.strip():
            summary = redact(previous.strip(), known=self.known)[0]
            transcript = f"Summary so far:\n{summary}\n\nNew messages:\n{transcript}"
        try:
            reply = self.model.complete(
                [Message.system(instructions), Message.user(transcript)], timeout_s=self.timeout_s
            )
        except ModelError:
            return None
        if self.on_reply is not None:
            self.on_reply(reply)
        return redact(reply.content.strip(), known=self.known)[0] or None

    def __call__(self, dropped: Sequence[Message], max_tokens: int, counter: TokenCounter) -> str:
        text = self.summarise("", dropped, max_tokens)
        return text if text is not None else offline_summary(dropped, max_tokens, counter)
