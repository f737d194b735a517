"""Long-term recall: which earlier messages of an agent's conversation to bring back. Pure.

Every user and assistant message the background extractor reads is also kept in the agent's
conversation archive, a namespace of the fact index (:meth:`MemoryService.archive`), one entry
per message with its seq. Before a turn, the archive is searched with the new message (BM25
over stemmed words, bounded like every fact query) and :func:`recall_order` ranks the hits.

Its one idea beyond BM25: a message is also scored by its neighbours. An answer rarely repeats
the words of the question it answers ("What did you research?" / "Adoption agencies!"), so a
message gets half the score of the message before it, a fifth of the one after, and a little
of the two around those (:data:`SHARES`): a message that matched nothing itself can be
recalled for the question that led to it. Measured on LoCoMo (``python -m bench.locomo``),
this is what puts recall past BM25 over the raw turns.
"""

from __future__ import annotations

from collections.abc import Container, Mapping, Sequence
from dataclasses import dataclass
from datetime import date

__all__ = ["SHARES", "RecalledLine", "recall_order", "speaker_line"]

SHARES: tuple[tuple[int, float], ...] = ((1, 0.5), (-1, 0.2), (2, 0.1), (-2, 0.05))
"""``(offset, share)``: a message gets ``share`` of the score of the message ``offset``
before it (negative: after it). Half of the one before (it may be the question this one
answers), a fifth of the one after (it may be the question answered), a little of the two
around those: context of a strong hit. On LoCoMo, the second pair adds 2 points at 1,500
tokens of recall, 0.6 at 2,000."""
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
    shares: Sequence[tuple[int, float]] = SHARES,
) -> list[int]:
    """Message seqs by their own score plus their neighbours' shares, best first.

    ``scores`` maps the seqs of matching messages to their BM25 scores; the messages within
    reach of ``shares`` are candidates too. Seqs in ``exclude`` (the messages the prompt
    already holds) are left out. Equal scores go to the newer message.
    """
    candidates = set(scores)
    for offset, _ in shares:
        candidates.update(seq + offset for seq in scores if seq + offset >= 1)
    combined = {
        seq: scores.get(seq, 0.0)
        + sum(share * scores.get(seq - offset, 0.0) for offset, share in shares)
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
