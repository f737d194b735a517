"""Long-term recall: which earlier messages of an agent's conversation to bring back. Pure.

Every user and assistant message the background extractor reads is also kept in the agent's
conversation archive, a namespace of the fact index (:meth:`MemoryService.archive`), one entry
per message with its seq. Before a turn, the archive is searched with the new message (BM25
over stemmed words, bounded like every fact query) and :func:`recall_order` ranks the hits.

Its one idea beyond BM25: a message is also scored by its neighbours. An answer rarely repeats
the words of the question it answers ("What did you research?" / "Adoption agencies!"), so a
message gets part of the score of the message before it (:data:`FROM_BEFORE`) and a little of
the one after (:data:`FROM_AFTER`); a message that matched nothing itself can be recalled for
the question that led to it. Measured on LoCoMo (``python -m bench.locomo``), this is what puts
recall past BM25 over the raw turns.
"""

from __future__ import annotations

from collections.abc import Container, Mapping
from dataclasses import dataclass
from datetime import date

__all__ = ["FROM_AFTER", "FROM_BEFORE", "RecalledLine", "recall_order", "speaker_line"]

FROM_BEFORE = 0.5
"""Share of the previous message's score a message gets (it may answer that one)."""
FROM_AFTER = 0.2
"""Share of the next message's score a message gets (it may be the question answered)."""
LINE_CHARS = 600
"""A recalled message longer than this is cut, with an ellipsis (memory_search has it all)."""


@dataclass(frozen=True)
class RecalledLine:
    """One earlier message as recalled: its seq, the day it was said, who said it, the text."""

    seq: int
    day: date
    speaker: str
    text: str


def recall_order(
    scores: Mapping[int, float],
    *,
    exclude: Container[int] = (),
    from_before: float = FROM_BEFORE,
    from_after: float = FROM_AFTER,
) -> list[int]:
    """Message seqs by their own score plus their neighbours' shares, best first.

    ``scores`` maps the seqs of matching messages to their BM25 scores; their neighbours
    (seq - 1 and seq + 1) are candidates too. Seqs in ``exclude`` (the messages the prompt
    already holds) are left out. Equal scores go to the newer message.
    """
    candidates = set(scores)
    candidates.update(seq + 1 for seq in scores)
    candidates.update(seq - 1 for seq in scores if seq > 1)
    combined = {
        seq: scores.get(seq, 0.0)
        + from_before * scores.get(seq - 1, 0.0)
        + from_after * scores.get(seq + 1, 0.0)
        for seq in candidates
        if seq not in exclude
    }
    return sorted(combined, key=lambda seq: (-combined[seq], -seq))


def speaker_line(speaker: str, text: str) -> str:
    """``speaker: text`` on one line, cut at :data:`LINE_CHARS`."""
    flat = " ".join(text.split())
    if len(flat) > LINE_CHARS:
        flat = flat[: LINE_CHARS - 1].rstrip() + "…"
    return f"{speaker}: {flat}"
