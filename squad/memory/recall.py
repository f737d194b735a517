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

Its cost is bounded, whatever the archive's size: the index gives a bounded candidate set
(:data:`~squad.memory.recall_reader.RECALL_CANDIDATES` texts, each recalled once, where last
said before the prompt's history), and the messages are read in rank order, a small batch at
a time, only until :class:`RecallPacker` says the recall budget is full. The packer shows each
thing once: not a line already recalled, nor one the block already shows from memory.md or
Layer A (:mod:`squad.memory.repeats`).
"""

from __future__ import annotations

from collections.abc import Callable, Container, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date

from squad.memory.repeats import line_key
from squad.memory.untrusted import defuse
from squad.text.tokens import TokenCounter

__all__ = [
    "MISSES_BEFORE_FULL",
    "RECALL_CONSIDERED",
    "RECALL_HEADER",
    "SHARES",
    "ChatterFilter",
    "RecallPacker",
    "RecalledLine",
    "day_heading",
    "newest_before",
    "recall_order",
    "speaker_line",
]

SHARES: tuple[tuple[int, float], ...] = ((1, 0.5), (-1, 0.2), (2, 0.1), (-2, 0.05))
"""``(offset, share)``: a message gets ``share`` of the score of the message ``offset``
before it (negative: after it). Half of the one before (it may be the question this one
answers), a fifth of the one after (it may be the question answered), a little of the two
around those: context of a strong hit. On LoCoMo, the second pair adds 2 points at 1,500
tokens of recall, 0.6 at 2,000."""
LINE_CHARS = 600
"""A recalled message longer than this is cut, with an ellipsis (memory_search has it all)."""
RECALL_HEADER = (
    "### Earlier conversation (recalled)",
    "Earlier messages related to this one, by the day they were said; oldest first.",
)
RECALL_CONSIDERED = 128
"""Most recalled candidates offered to the packer per prompt, the most relevant first: the
bound on the messages one prompt reads, however much was skipped as already shown."""
MISSES_BEFORE_FULL = 16
"""Candidates in a row that do not fit what is left of the budget before the packer counts
it full (a batch's worth): the rest of the ranking is not read for a line small enough."""

ChatterFilter = Callable[[str, str], bool]
"""``(text, role) -> True`` when a message is the model's chatter (boilerplate, tool receipts,
acknowledgements, restatements): the one place recall asks, for each message it reads,
whether to leave it out (``MemoryService(chatter=...)``)."""


@dataclass(frozen=True)
class RecalledLine:
    """One earlier message as recalled: its seq, the day it was said, who said it, the text."""

    seq: int
    day: date
    speaker: str
    text: str


def newest_before(turns: Iterable[int], before_seq: int | None) -> int | None:
    """The newest of the seqs a text was said at that is older than ``before_seq`` (None:
    any), or None: a text said many times is recalled once, where last said."""
    return max((seq for seq in turns if before_seq is None or seq < before_seq), default=None)


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
    combined = dict(scores)
    for seq, score in scores.items():  # each hit lends its shares to the messages around it
        for offset, share in shares:
            if seq + offset >= 1:
                combined[seq + offset] = combined.get(seq + offset, 0.0) + share * score
    ranked = [seq for seq in combined if seq not in exclude]
    return sorted(ranked, key=lambda seq: (-combined[seq], -seq))


def speaker_line(speaker: str, text: str) -> str:
    """``speaker: text`` on one line, cut at :data:`LINE_CHARS`."""
    flat = " ".join(text.split())
    if len(flat) > LINE_CHARS:
        flat = flat[: LINE_CHARS - 1].rstrip() + "…"
    return f"{speaker}: {flat}"


def day_heading(day: date) -> str:
    """``#### 8 May 2023 (Monday)``: a recalled day, in words a question uses."""
    return f"#### {day.day} {day:%B %Y (%A)}"


def _bullet(line: RecalledLine) -> str:
    return f"- {defuse(speaker_line(line.speaker, line.text))}"


class RecallPacker:
    """Recalled lines, offered most relevant first, packed into ``share`` tokens as they come.

    Pure, and incremental so that its caller reads the archive only as far as it must: offer
    lines until :attr:`full`, then :meth:`render`. A line is skipped when it says what a line
    already kept says, or what the block already shows (``shown``: memory.md lines and Layer A
    facts), and when it does not fit what is left; after :data:`MISSES_BEFORE_FULL` lines in a
    row that do not fit, or :data:`RECALL_CONSIDERED` offered, the packer is full. What is
    recalled is a ranking, not a file, so nothing is "dropped" and no notice is shown.
    """

    def __init__(self, share: int, counter: TokenCounter, *, shown: Iterable[str] = ()) -> None:
        self.share = share
        self.counter = counter
        self.offered = 0
        self._shown = {line_key(text) for text in shown}
        self._said: set[str] = set()
        self._kept: list[RecalledLine] = []
        self._days: set[date] = set()
        self._spent = counter.count("\n".join(RECALL_HEADER))
        self._misses = 0

    @property
    def full(self) -> bool:
        """Nothing more is worth offering."""
        return (
            self._spent >= self.share
            or self._misses >= MISSES_BEFORE_FULL
            or self.offered >= RECALL_CONSIDERED
        )

    def offer(self, line: RecalledLine) -> bool:
        """Keep ``line`` if it is new to the block and fits; whether it was kept."""
        self.offered += 1
        key = line_key(line.text)
        if not key or key in self._said or key in self._shown:
            return False
        cost = self.counter.count(_bullet(line)) + 1
        if line.day not in self._days:
            cost += self.counter.count(day_heading(line.day)) + 1
        if self._spent + cost > self.share:
            self._misses += 1
            return False
        self._misses = 0
        self._said.add(key)
        self._kept.append(line)
        self._days.add(line.day)
        self._spent += cost
        return True

    def render(self) -> tuple[str, int, tuple[int, ...]]:
        """The recalled section (by day, oldest first), its tokens and the seqs it shows;
        ``("", 0, ())`` when nothing fits. Per-line costs approximate; the exact count of the
        rendered section decides, dropping the least relevant lines until it fits."""
        kept = list(self._kept)
        while kept:
            text = _render(kept)
            tokens = self.counter.count(text)
            if tokens <= self.share:
                return text, tokens, tuple(sorted(line.seq for line in kept))
            kept.pop()
        return "", 0, ()


def _render(lines: Sequence[RecalledLine]) -> str:
    out = list(RECALL_HEADER)
    day = None
    for line in sorted(lines, key=lambda line: line.seq):
        if line.day != day:
            out.append(day_heading(line.day))
            day = line.day
        out.append(_bullet(line))
    return "\n".join(out)
