"""A chat's rolling summary: the model summarises folded messages once, not every turn.

Past its budget, every turn of a chat folds its older messages into a summary
(:mod:`squad.chat.compress`). Asking a model for that summary each turn would cost a call
per turn, so :class:`RollingSummariser` keeps the model's last summary in
``agents/<agent>/chat-summary.json``, with the digests of the messages it covers, and:

- when fewer than ``refresh`` folded messages are new to it, sends that summary plus offline
  bullets (:func:`~squad.chat.summarise.offline_summary`) for the new ones: no call;
- when ``refresh`` or more are new, asks the model once to merge them into the summary, and
  saves the answer as covering every message folded now;
- when that call fails, does the same as below the threshold and tries again next turn.

The file is a cache a person can read (and delete: the next call rebuilds it). Digests are of
role and text, so the summary follows the messages however the chat's window slides, and
only messages still folded stay listed. The summary is saved, and read back, with credentials
redacted (and the values its session found, ``known``, wherever the model repeated them): a
cache written before redaction on write does not bring one back.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from pathlib import Path

from squad.chat.summarise import offline_summary
from squad.clock import Clock, utc_now
from squad.fsutil import atomic_write
from squad.model.types import Message
from squad.text.secrets import redact
from squad.text.tokens import TokenCounter

__all__ = ["REFRESH_MESSAGES", "SUMMARY_FILE", "RollingSummariser", "SavedSummary", "digest"]

SUMMARY_FILE = "chat-summary.json"
REFRESH_MESSAGES = 6
"""Newly folded messages that make the model summarise again (about three exchanges)."""

ModelSummary = Callable[[str, Sequence[Message], int], "str | None"]
"""``(summary so far, new messages, max_tokens)`` to the model's summary, None on failure."""


def digest(message: Message) -> str:
    """A short fingerprint of a message's role and text."""
    return hashlib.sha256(f"{message.role}\0{message.content}".encode()).hexdigest()[:16]


@dataclass(frozen=True)
class SavedSummary:
    summary: str
    covered: frozenset[str]


@dataclass
class RollingSummariser:
    """A :data:`~squad.chat.compress.Summariser` that calls ``model_summary`` only when
    ``refresh`` folded messages are new to the summary saved at ``path``."""

    path: Path
    model_summary: ModelSummary
    model: str = ""
    refresh: int = REFRESH_MESSAGES
    clock: Clock = utc_now
    known: Collection[str] = ()
    """Credential values the chat session found (kept in memory only): redacted wherever the
    summary repeats them."""

    def __call__(self, dropped: Sequence[Message], max_tokens: int, counter: TokenCounter) -> str:
        saved = self.load()
        previous = saved.summary if saved else ""
        covered = saved.covered if saved else frozenset()
        new = [m for m in dropped if digest(m) not in covered]
        if len(new) >= self.refresh:
            text = self.model_summary(previous, new, max_tokens)
            if text is not None:
                text = redact(text, known=self.known)[0]
                self._save(text, dropped)
                return text
        if not previous:
            return offline_summary(dropped, max_tokens, counter)
        room = max(0, max_tokens - counter.count(previous) - 1)
        tail = offline_summary(new, room, counter) if new else ""
        return f"{previous}\n{tail}".strip()

    def load(self) -> SavedSummary | None:
        """The saved summary; None when there is none or it cannot be read (a cache)."""
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            summary, covered = data["summary"], data["covered"]
        except (OSError, ValueError, KeyError, TypeError):
            return None
        if not isinstance(summary, str) or not isinstance(covered, list):
            return None
        return SavedSummary(
            redact(summary, known=self.known)[0], frozenset(str(d) for d in covered)
        )

    def _save(self, summary: str, covered: Sequence[Message]) -> None:
        record = {
            "summary": summary,
            "covered": sorted({digest(m) for m in covered}),
            "messages": len(covered),
            "model": self.model,
            "updated_at": self.clock().isoformat(),
        }
        self.path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(self.path, (json.dumps(record, indent=2) + "\n").encode(), durable=False)
