"""An agent's conversation archive, one fact per distinct text; reached as ``store.archive``.

The archive is a namespace of the fact index (see :mod:`squad.memory.recall`). A scheduled
squad says the same things run after run, so a text said again does not add a fact: its seq
joins the ``turns`` of the fact that holds it (the newest :data:`TURNS_KEPT`; ``occurrences``
in ``archive_texts`` counts them all). Rows, postings and ranking cost then grow with what was
said, not with how often.

Recall reads it through :meth:`ArchiveStore.search`: a bounded candidate set from the index
(BM25, as every fact query), each hit's id, score and seqs, and nothing else of the fact;
with the archive's :data:`Version`, so a caller may keep a ranking while the archive stays
as it was and ask for none then.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import date, datetime

from sqlalchemy import Table, bindparam, func, insert, select, update
from sqlalchemy.engine import Connection, Engine

from squad.clock import Clock
from squad.errors import UsageError
from squad.store.engine import transaction
from squad.store.memory_index import (
    FACTS,
    chunks,
    grow_namespace,
    index_facts,
    plain_term_dfs,
    scored_statement,
    scores,
    scoring_params,
)
from squad.store.memory_records import looked_up_terms
from squad.store.memory_rows import (
    NAMESPACE_STATS,
    checked_fact,
    checked_limit,
    fact_values,
    index_stats,
    indexed_text,
    insert_facts,
)
from squad.store.records import FactStatus, NewFact
from squad.store.sqlite_fast import FastReads, json_column
from squad.store.tables import metadata
from squad.text.lexical import term_counts

__all__ = ["TURNS_KEPT", "ArchiveHit", "ArchiveStore", "ArchivedText", "Version", "text_key"]

Version = tuple[int, int, int]
"""An archive's state as ``(indexed facts, indexed terms, newest seq archived)``: every
archive write raises the newest seq (messages are archived in order), and forgetting or
purging an entry changes the counts, so the same version means the same archive."""

TEXTS: Table = metadata.tables["archive_texts"]
TURNS_KEPT = 200
"""Seqs a distinct text keeps in its fact's ``turns``, newest last; recall uses the newest."""
_CHUNK = 500


@dataclass(frozen=True)
class ArchiveHit:
    """One archived text matching a query: its fact, BM25 score and the seqs it was said at."""

    fact_id: int
    score: float
    turns: tuple[int, ...]


@dataclass(frozen=True)
class ArchivedText:
    """An archived text as recall shows it when the message itself is gone (retention)."""

    text: str
    day: date


def text_key(text: str) -> str:
    """The key of an archived text: sha256 of it, whitespace runs made one space."""
    return hashlib.sha256(" ".join(text.split()).encode()).hexdigest()


class ArchiveStore:
    """Adds messages to conversation archives; safe to share between threads."""

    def __init__(self, engine: Engine, *, now: Clock, fast: FastReads | None = None) -> None:
        """``fast``: the store's plain reads of a SQLite file (:mod:`.sqlite_fast`), which
        a search uses when it can."""
        self._engine = engine
        self._now = now
        self._fast = fast

    def add(self, namespace_id: int, entries: Sequence[NewFact]) -> tuple[int, int]:
        """Archive ``entries`` (one seq each in ``turns``, oldest first) in one transaction;
        returns ``(new facts, repeats)``. An entry at or before the seq its text was last
        archived at is skipped, so a pass redone after a crash adds nothing twice."""
        checked = [checked_fact(entry) for entry in entries]
        if not checked:
            return 0, 0
        now = self._now()
        with transaction(self._engine, f"archive messages in namespace {namespace_id!r}") as conn:
            known = _known(conn, namespace_id, {text_key(e.text) for e in checked})
            fresh: dict[str, NewFact] = {}
            again: dict[str, list[int]] = {}
            for entry in checked:
                key, seq = text_key(entry.text), max(entry.turns)
                if key in known:
                    if seq > known[key][2] and seq not in again.get(key, []):
                        again.setdefault(key, []).append(seq)
                elif key in fresh:
                    if seq not in fresh[key].turns:
                        fresh[key] = replace(fresh[key], turns=(*fresh[key].turns, seq))
                else:
                    fresh[key] = entry
            if fresh:
                _insert_new(conn, namespace_id, fresh, now)
            for key, seqs in again.items():
                fact_id, occurrences, _ = known[key]
                turns = conn.execute(select(FACTS.c.turns).where(FACTS.c.id == fact_id)).scalar()
                kept = [*(turns or []), *seqs][-TURNS_KEPT:]
                conn.execute(
                    update(FACTS).where(FACTS.c.id == fact_id).values(turns=kept, updated_at=now)
                )
                conn.execute(
                    update(TEXTS)
                    .where(TEXTS.c.namespace_id == namespace_id, TEXTS.c.key == key)
                    .values(occurrences=occurrences + len(seqs), last_seq=max(seqs))
                )
        return len(fresh), sum(len(seqs) for seqs in again.values())

    def search(
        self, namespace_id: int, query: str, *, limit: int, unless: Version | None = None
    ) -> tuple[Version, list[ArchiveHit] | None]:
        """The archive's version and the ``limit`` texts best matching ``query``, best first
        (bounded like every fact query: :mod:`squad.store.memory_index`); no hits (None) when
        the version is ``unless``, the one a caller's ranking was made at."""
        limit = checked_limit(limit)
        wanted = looked_up_terms(query)
        if self._fast is not None and self._fast.usable():
            try:
                return self._search_fast(self._fast, namespace_id, wanted, limit, unless)
            except sqlite3.Error:
                pass  # read again below, where the error is told in the store's words
        with transaction(self._engine, f"search archive {namespace_id!r}") as conn:
            n_docs, total_len = index_stats(conn, namespace_id)
            reach = conn.execute(_REACH, {"ns": namespace_id}).scalar()
            version = (n_docs, total_len, int(reach or 0))
            if version == unless:
                return version, None
            found = scores(conn, namespace_id, wanted, n_docs, total_len, limit)
            turns: dict[int, tuple[int, ...]] = {}
            for chunk in chunks([fact_id for fact_id, _ in found]):
                rows = conn.execute(_ACTIVE_TURNS, {"ids": list(chunk)})
                turns.update((int(i), tuple(t or ())) for i, t in rows)
        return version, [ArchiveHit(i, score, turns[i]) for i, score in found if i in turns]

    def _search_fast(
        self,
        fast: FastReads,
        namespace_id: int,
        wanted: list[str],
        limit: int,
        unless: Version | None,
    ) -> tuple[Version, list[ArchiveHit] | None]:
        """:meth:`search` in plain sqlite3, the same statements."""
        with fast.snapshot() as conn:
            stats = fast.rows(conn, NAMESPACE_STATS, {"ns": namespace_id})
            if not stats:
                raise UsageError(f"no memory namespace with id {namespace_id!r}")
            n_docs, total_len = int(stats[0][0]), int(stats[0][1])
            [(reach,)] = fast.rows(conn, _REACH, {"ns": namespace_id})
            version = (n_docs, total_len, int(reach or 0))
            if version == unless:
                return version, None
            found: list[tuple[int, float]] = []
            if wanted and n_docs > 0:
                dfs = plain_term_dfs(conn, namespace_id, wanted)
                query = scoring_params(namespace_id, dfs, n_docs, total_len)
                if query is not None:
                    n_terms, params = query
                    rows = fast.rows(
                        conn, scored_statement(n_terms), {**params, "page": limit, "offset": 0}
                    )
                    found = [(int(fact_id), float(score)) for fact_id, score in rows]
            turns: dict[int, tuple[int, ...]] = {}
            for ids in chunks([fact_id for fact_id, _ in found]):
                marks = ", ".join("?" * len(ids))
                rows = conn.execute(
                    f"SELECT id, turns FROM memory_facts WHERE id IN ({marks}) AND status = ?",
                    (*ids, FactStatus.ACTIVE.value),
                ).fetchall()
                turns.update((int(i), tuple(json_column(t) or ())) for i, t in rows)
        return version, [ArchiveHit(i, score, turns[i]) for i, score in found if i in turns]

    def texts(self, fact_ids: Sequence[int]) -> dict[int, ArchivedText]:
        """The text of each of ``fact_ids`` that exists, and the day it was last archived."""
        out: dict[int, ArchivedText] = {}
        with transaction(self._engine, "read archived texts") as conn:
            for chunk in chunks(sorted(set(fact_ids))):
                rows = conn.execute(
                    select(FACTS.c.id, FACTS.c.text, FACTS.c.updated_at).where(
                        FACTS.c.id.in_(chunk)
                    )
                )
                for fact_id, text, updated_at in rows:
                    out[int(fact_id)] = ArchivedText(str(text), updated_at.date())
        return out

    def reaches(self, namespace_id: int) -> int:
        """The newest seq the archive holds (0 when it holds none)."""
        with transaction(self._engine, f"read how far archive {namespace_id!r} reaches") as conn:
            return int(conn.execute(_REACH, {"ns": namespace_id}).scalar() or 0)


_REACH = select(func.max(TEXTS.c.last_seq)).where(TEXTS.c.namespace_id == bindparam("ns"))
"""The newest seq archive ``ns`` holds (NULL: none). Built once, as every statement a prompt
runs (building one costs more than running it on a small archive)."""
_ACTIVE_TURNS = select(FACTS.c.id, FACTS.c.turns).where(
    FACTS.c.id.in_(bindparam("ids", expanding=True)), FACTS.c.status == FactStatus.ACTIVE.value
)
"""Each active fact's seqs among ``ids``."""


def _known(conn: Connection, namespace_id: int, keys: set[str]) -> dict[str, tuple[int, int, int]]:
    """``key -> (fact_id, occurrences, last_seq)`` of the keys the archive already holds."""
    found: dict[str, tuple[int, int, int]] = {}
    wanted = sorted(keys)
    for start in range(0, len(wanted), _CHUNK):
        rows = conn.execute(
            select(TEXTS.c.key, TEXTS.c.fact_id, TEXTS.c.occurrences, TEXTS.c.last_seq).where(
                TEXTS.c.namespace_id == namespace_id,
                TEXTS.c.key.in_(wanted[start : start + _CHUNK]),
            )
        )
        for key, fact_id, occurrences, last_seq in rows:
            found[str(key)] = (int(fact_id), int(occurrences), int(last_seq))
    return found


def _insert_new(
    conn: Connection, namespace_id: int, fresh: dict[str, NewFact], now: datetime
) -> None:
    entries = list(fresh.values())
    counts = [term_counts(indexed_text(entry)) for entry in entries]
    if not grow_namespace(conn, namespace_id, len(entries), sum(sum(c.values()) for c in counts)):
        raise UsageError(f"no memory namespace with id {namespace_id!r}")
    ids = insert_facts(conn, [fact_values(namespace_id, e, now) for e in entries])
    index_facts(conn, namespace_id, ids, counts)
    conn.execute(
        insert(TEXTS),
        [
            {
                "namespace_id": namespace_id,
                "key": key,
                "fact_id": fact_id,
                "occurrences": len(entry.turns),
                "last_seq": max(entry.turns),
            }
            for (key, entry), fact_id in zip(fresh.items(), ids, strict=True)
        ],
    )
