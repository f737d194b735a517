"""Recall's reads: a ranking from the archive's index, then messages in small batches.

The I/O half of recall (:mod:`squad.memory.recall` is the pure half). Per prompt, however
long the agent's history:

1. one bounded index query (:meth:`ArchiveStore.search`) gives the archive's version and its
   :data:`RECALL_CANDIDATES` best texts; :func:`recall_order` ranks them with their
   neighbours. The ranking is kept per (archive, version, message, history start), so the
   same question at the same archive (a preview, the next budget) costs no index query;
2. messages are read in rank order, :data:`RECALL_BATCH` at a time, only while the
   :class:`RecallPacker` wants more; each message read is kept with the ranking, so a second
   prompt at the same version reads none twice. A message retention has deleted is shown
   from the archive's copy of its text.

Each message read passes the chatter filter, when the service has one: the single place
recall leaves the model's chatter out.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import TYPE_CHECKING

from squad.memory.recall import (
    LINE_CHARS,
    RECALL_CONSIDERED,
    ChatterFilter,
    RecalledLine,
    RecallPacker,
    newest_before,
    recall_order,
)
from squad.memory.repeats import line_key
from squad.store.records import MessageRole

if TYPE_CHECKING:
    from squad.memory.agent import AgentContext
    from squad.store import Store
    from squad.store.archive import Version

__all__ = [
    "CHATTER_KEPT",
    "RANKINGS_KEPT",
    "RECALL_BATCH",
    "RECALL_CANDIDATES",
    "TEXT_KEPT",
    "RecallReader",
]

RECALL_CANDIDATES = 64
"""Archived texts scored per prompt (their neighbours join them): a bounded index read, and
more than a recall budget reaches (the messages are read best first, until it is full)."""
RECALL_BATCH = 16
"""Messages read at a time while the recall budget has room."""
RANKINGS_KEPT = 16
CHATTER_KEPT = 4096
"""Chatter verdicts a reader keeps (a digest and a role each), the least recently used first."""
"""Rankings a reader keeps, the least recently used going first."""
TEXT_KEPT = 4 * LINE_CHARS
"""Characters of a message a ranking keeps: more than a recalled line shows, so the cache
stays small (:data:`RANKINGS_KEPT` rankings of at most :data:`RECALL_CONSIDERED` messages)."""


@dataclass(frozen=True)
class _Said:
    """A message as recall needs it; ``role`` None for a text only the archive still has."""

    day: date
    role: str | None
    author: str | None
    text: str

    def line(self, seq: int, ctx: AgentContext) -> tuple[RecalledLine, str]:
        """The recalled line, and the role the chatter filter is asked about."""
        own = ctx.agent.display_name
        speaker = self.author or (own if self.role == "assistant" else "user")
        role = self.role or ("assistant" if speaker == own else "user")
        return RecalledLine(seq, self.day, speaker, self.text), role


@dataclass
class _Ranking:
    version: Version
    order: list[int]
    """Seqs best first, neighbours included."""
    facts: dict[int, int]
    """The archived text's fact id for each seq it was last said at (the index's hits)."""
    said: dict[int, _Said | None] = field(default_factory=dict)
    """Messages read so far; None for one recall does not show (a tool message)."""


class RecallReader:
    """Reads what recall shows; one per memory service, safe to share between threads."""

    def __init__(self, store: Store, *, chatter: ChatterFilter | None = None) -> None:
        self.store = store
        self.chatter = chatter
        self._rankings: OrderedDict[tuple[int, bytes, int | None], _Ranking] = OrderedDict()
        self._chatter: OrderedDict[tuple[bytes, str], bool] = OrderedDict()
        """The chatter filter's verdicts lately, by the text's digest and role: a run's
        prompts recall the same messages turn after turn, each with a new ranking."""
        self._lock = threading.Lock()

    def fill(
        self,
        ctx: AgentContext,
        namespace_id: int,
        message: str,
        packer: RecallPacker,
        *,
        before_seq: int | None = None,
        exclude: Sequence[int] = (),
    ) -> int:
        """Offer ``packer`` the earlier messages relevant to ``message``, best first, until it
        is full; returns how many messages were read from the store to do it."""
        read = 0
        for lines, fetched in self._batches(ctx, namespace_id, message, before_seq, exclude):
            read += fetched
            for line in lines:
                if packer.full:
                    return read
                packer.offer(line)
            if packer.full:
                break
        return read

    def ranked(
        self,
        ctx: AgentContext,
        namespace_id: int,
        message: str,
        *,
        before_seq: int | None = None,
        exclude: Sequence[int] = (),
        limit: int = RECALL_CONSIDERED,
    ) -> list[RecalledLine]:
        """The ``limit`` most relevant earlier messages, best first, each text once."""
        out: list[RecalledLine] = []
        said: set[str] = set()
        for lines, _ in self._batches(ctx, namespace_id, message, before_seq, exclude):
            for line in lines:
                key = line_key(line.text)
                if key and key not in said:
                    said.add(key)
                    out.append(line)
            if len(out) >= limit:
                break
        return out[:limit]

    def _batches(
        self,
        ctx: AgentContext,
        namespace_id: int,
        message: str,
        before_seq: int | None,
        exclude: Sequence[int],
    ) -> Iterator[tuple[list[RecalledLine], int]]:
        """The ranking's lines a batch at a time, with the messages read for each batch."""
        ranking = self._ranking(namespace_id, message, before_seq)
        skip = set(exclude)
        order = [seq for seq in ranking.order if seq not in skip]
        for start in range(0, len(order), RECALL_BATCH):
            batch = order[start : start + RECALL_BATCH]
            fetched = self._read(ctx, ranking, batch)
            lines = []
            for seq in batch:
                said = ranking.said.get(seq)
                if said is None:
                    continue
                line, role = said.line(seq, ctx)
                if self._is_chatter(line.text, role):
                    continue
                lines.append(line)
            yield lines, fetched

    def _is_chatter(self, text: str, role: str) -> bool:
        """The chatter filter's verdict (a function of the text and role alone), kept."""
        if self.chatter is None:
            return False
        key = (hashlib.blake2b(text.encode(), digest_size=16).digest(), role)
        with self._lock:
            verdict = self._chatter.get(key)
            if verdict is not None:
                self._chatter.move_to_end(key)
                return verdict
        verdict = self.chatter(text, role)
        with self._lock:
            self._chatter[key] = verdict
            while len(self._chatter) > CHATTER_KEPT:
                self._chatter.popitem(last=False)
        return verdict

    def _ranking(self, namespace_id: int, message: str, before_seq: int | None) -> _Ranking:
        digest = hashlib.blake2b(message.encode(), digest_size=16).digest()
        key = (namespace_id, digest, before_seq)
        with self._lock:
            cached = self._rankings.get(key)
            if cached is not None:
                self._rankings.move_to_end(key)
        version, hits = self.store.archive.search(
            namespace_id,
            message,
            limit=RECALL_CANDIDATES,
            unless=None if cached is None else cached.version,
        )
        if hits is None and cached is not None:
            return cached
        scores: dict[int, float] = {}
        facts: dict[int, int] = {}
        for hit in hits or ():
            seq = newest_before(hit.turns, before_seq)
            if seq is not None:
                scores[seq] = max(hit.score, scores.get(seq, 0.0))
                facts[seq] = hit.fact_id
        order = [s for s in recall_order(scores) if before_seq is None or s < before_seq]
        ranking = _Ranking(version, order[: 2 * RECALL_CANDIDATES], facts)
        with self._lock:
            self._rankings[key] = ranking
            self._rankings.move_to_end(key)
            while len(self._rankings) > RANKINGS_KEPT:
                self._rankings.popitem(last=False)
        return ranking

    def _read(self, ctx: AgentContext, ranking: _Ranking, seqs: Sequence[int]) -> int:
        """Read the messages at ``seqs`` the ranking has not read yet; how many it read."""
        missing = [seq for seq in seqs if seq not in ranking.said]
        if not missing:
            return 0
        conversation = self.store.conversation
        found = {m.seq: m for m in conversation.messages_at(ctx.squad.name, ctx.agent.id, missing)}
        gone = [ranking.facts[s] for s in missing if s not in found and s in ranking.facts]
        archived = self.store.archive.texts(gone) if gone else {}
        for seq in missing:
            record = found.get(seq)
            if record is not None:
                day, role = record.created_at.date(), record.role
                ranking.said[seq] = (
                    _Said(day, role.value, record.author, record.content[:TEXT_KEPT])
                    if role in (MessageRole.USER, MessageRole.ASSISTANT)
                    else None
                )
            elif seq in ranking.facts and ranking.facts[seq] in archived:
                copy = archived[ranking.facts[seq]]
                speaker, _, text = copy.text.partition(": ")
                ranking.said[seq] = _Said(copy.day, None, speaker, text[:TEXT_KEPT])
            else:
                ranking.said[seq] = None
        return len(missing)
