"""Credentials found in rows stored before the detector knew them; reached as ``store.redaction``.

Every text the store keeps passed the credential detector of its day on the way in. When the
detector learns more, :meth:`RedactionStore.sweep` runs the current one over what is stored,
reports each find by row and kind (never the value), and with ``fix`` replaces each value by
``[REDACTED:<kind>]`` in place:

- ``conversation_messages``: every role, each message judged after the ones before it in its
  thread (:func:`squad.text.scrub.scrub_conversation`), so a bare value after its cue goes;
- ``memory_facts`` of Layer A and of conversation archives (an archive's entries judged as a
  conversation too, their speaker aside); a redacted fact is indexed again (its old terms
  leave ``memory_postings`` and ``memory_terms``), its vector is dropped (the next embedding
  pass makes it again) and an archive entry's text key follows its text;
- the review queue, decisions, extraction passes, promotion sightings, runs' goals, errors and
  summaries, and task errors, column by column (JSON columns string by string).

Finding reads in short transactions; fixing re-reads and writes each group (an agent's
conversation, a namespace, a table) in one transaction that takes the write lock first, so a
row written meanwhile is judged as it is then. On SQLite, ``secure_delete`` is on while a fix
writes, so the space the old text took is zeroed rather than left in the file.
"""

from __future__ import annotations

import contextlib
import json
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Table, delete, exists, false, func, select, update
from sqlalchemy.engine import Connection, Engine

from squad.clock import Clock
from squad.store.archive import text_key
from squad.store.engine import transaction
from squad.store.memory_index import chunks, deindex, grow_namespace, index_facts
from squad.store.tables import metadata
from squad.text.lexical import term_counts
from squad.text.scrub import Found, Scrubbed, scrub_conversation, scrub_json_text, scrub_text
from squad.text.scrub import scrub_value as _scrub_value

__all__ = ["ARCHIVE_PREFIX", "RedactionStore", "RowFinding", "Sweep"]

ARCHIVE_PREFIX = "archive:"
"""Identities of conversation-archive namespaces (``archive:<squad>/<agent>``)."""

_MESSAGES: Table = metadata.tables["conversation_messages"]
_FACTS: Table = metadata.tables["memory_facts"]
_NAMESPACES: Table = metadata.tables["memory_namespaces"]
_POSTINGS: Table = metadata.tables["memory_postings"]
_VECTORS: Table = metadata.tables["memory_vectors"]
_TEXTS: Table = metadata.tables["archive_texts"]


@dataclass(frozen=True)
class RowFinding:
    """Credentials found in one row: where (place, row, column and line), never the value."""

    place: str
    """``conversation``, ``layer_a``, ``archive``, ``review``, ``decision``, ``extraction``,
    ``sighting``, ``run`` or ``task``."""
    ref: str
    """The row: ``message:12``, ``fact:3``, ``review:4``, ``run:<id>``, ``task:<run>/<task>``..."""
    squad: str | None
    agent: str | None
    found: tuple[Found, ...]
    fixed: bool = False


@dataclass(frozen=True)
class Sweep:
    """What one sweep saw: the rows with credentials, and the rows read per place."""

    findings: tuple[RowFinding, ...]
    scanned: dict[str, int]


@dataclass(frozen=True)
class _Columns:
    """A table swept column by column."""

    place: str
    table: Table
    key: tuple[str, ...]
    text: tuple[str, ...] = ()
    """Plain text columns."""
    json: tuple[str, ...] = ()
    """JSON columns (values)."""
    json_text: tuple[str, ...] = ()
    """Text columns that hold a JSON document (decisions' reasons and alternatives)."""
    agent: bool = True


_COLUMNS: tuple[_Columns, ...] = (
    _Columns(
        "review",
        metadata.tables["memory_review"],
        ("id",),
        text=("text", "edited_text", "outcome"),
        json=("details",),
    ),
    _Columns(
        "decision",
        metadata.tables["decisions"],
        ("id",),
        text=("title", "decision"),
        json_text=("reasons", "alternatives"),
        agent=False,
    ),
    _Columns(
        "extraction",
        metadata.tables["extraction_runs"],
        ("id",),
        text=("reason",),
        json=("written", "dropped"),
    ),
    _Columns("sighting", metadata.tables["memory_sightings"], ("squad", "agent", "key"), ("text",)),
    _Columns(
        "run",
        metadata.tables["runs"],
        ("id",),
        text=("goal", "error"),
        json=("summary",),
        agent=False,
    ),
    _Columns("task", metadata.tables["run_tasks"], ("run_id", "task_id"), ("error",)),
)

Stop = Callable[[], bool]


def _never() -> bool:
    return False


class RedactionStore:
    """Finds (and with ``fix`` redacts) credentials in stored rows; thread-safe."""

    def __init__(self, engine: Engine, *, now: Clock) -> None:
        self._engine = engine
        self._now = now

    def sweep(self, *, fix: bool, squad: str | None = None, stop: Stop = _never) -> Sweep:
        """Every row (of ``squad`` only, when given) with a credential the detector finds
        now; with ``fix`` each is redacted in place (:attr:`RowFinding.fixed`). ``stop``
        is asked between groups: True ends the sweep early with what it has."""
        findings: list[RowFinding] = []
        scanned: dict[str, int] = defaultdict(int)
        for agent_squad, agent in self._agents(squad):
            if stop():
                return Sweep(tuple(findings), dict(scanned))
            findings += self._conversation(agent_squad, agent, fix, scanned)
        for namespace_id, identity in self._namespaces(squad):
            if stop():
                return Sweep(tuple(findings), dict(scanned))
            findings += self._facts(namespace_id, identity, squad, fix, scanned)
        for columns in _COLUMNS:
            if stop():
                return Sweep(tuple(findings), dict(scanned))
            findings += self._columns(columns, squad, fix, scanned)
        return Sweep(tuple(findings), dict(scanned))

    def run_squads(self, run_ids: Sequence[str]) -> dict[str, str]:
        """The squad of each of ``run_ids`` the store still has (checkpoints name runs)."""
        runs = metadata.tables["runs"]
        found: dict[str, str] = {}
        with transaction(self._engine, "read the squads of runs") as conn:
            for chunk in chunks(sorted(set(run_ids))):
                query = select(runs.c.id, runs.c.squad).where(runs.c.id.in_(chunk))
                found.update({str(i): str(s) for i, s in conn.execute(query)})
        return found

    # -- conversation ---------------------------------------------------------------------

    def _agents(self, squad: str | None) -> list[tuple[str, str]]:
        query = select(_MESSAGES.c.squad, _MESSAGES.c.agent).distinct()
        if squad is not None:
            query = query.where(_MESSAGES.c.squad == squad)
        with transaction(self._engine, "list the agents with messages") as conn:
            return sorted((str(s), str(a)) for s, a in conn.execute(query))

    def _conversation(
        self, squad: str, agent: str, fix: bool, scanned: dict[str, int]
    ) -> list[RowFinding]:
        with transaction(self._engine, f"read the messages of {squad}/{agent}") as conn:
            changed = _scrubbed_messages(conn, squad, agent)
            scanned["conversation"] += _count(conn, _MESSAGES, squad, agent)
        if not changed:
            return []
        if fix:
            with self._writing(f"redact the messages of {squad}/{agent}") as conn:
                _lock(conn, _MESSAGES)
                changed = _scrubbed_messages(conn, squad, agent)
                for row_id, scrubbed in changed:
                    conn.execute(
                        update(_MESSAGES)
                        .where(_MESSAGES.c.id == row_id)
                        .values(content=scrubbed.value)
                    )
        return [
            RowFinding(
                "conversation",
                f"message:{row_id}",
                squad,
                agent,
                _in_column("content", scrubbed.found),
                fix,
            )
            for row_id, scrubbed in changed
        ]

    # -- facts ----------------------------------------------------------------------------

    def _namespaces(self, squad: str | None) -> list[tuple[int, str]]:
        query = select(_NAMESPACES.c.id, _NAMESPACES.c.identity).order_by(_NAMESPACES.c.id)
        if squad is not None:
            has_facts = exists().where(
                _FACTS.c.namespace_id == _NAMESPACES.c.id, _FACTS.c.squad == squad
            )
            query = query.where(has_facts)
        with transaction(self._engine, "list the memory namespaces") as conn:
            return [(int(i), str(identity)) for i, identity in conn.execute(query)]

    def _facts(
        self,
        namespace_id: int,
        identity: str,
        squad: str | None,
        fix: bool,
        scanned: dict[str, int],
    ) -> list[RowFinding]:
        place = "archive" if identity.startswith(ARCHIVE_PREFIX) else "layer_a"
        with transaction(self._engine, f"read the facts of namespace {namespace_id}") as conn:
            rows = _fact_rows(conn, namespace_id)
            changed = _scrubbed_facts(rows, archive=place == "archive", squad=squad)
        scanned[place] += sum(1 for row in rows if squad is None or row.squad == squad)
        if not changed:
            return []
        if fix:
            with self._writing(f"redact the facts of namespace {namespace_id}") as conn:
                grow_namespace(conn, namespace_id, 0, 0)  # the namespace's writers queue here
                rows = _fact_rows(conn, namespace_id)
                changed = _scrubbed_facts(rows, archive=place == "archive", squad=squad)
                for row, text, subject, _ in changed:
                    _rewrite_fact(conn, namespace_id, row, text, subject)
        return [
            RowFinding(place, f"fact:{row.id}", row.squad, row.agent, found, fix)
            for row, _, _, found in changed
        ]

    # -- other tables ---------------------------------------------------------------------

    def _columns(
        self, columns: _Columns, squad: str | None, fix: bool, scanned: dict[str, int]
    ) -> list[RowFinding]:
        table = columns.table
        where = [] if squad is None else [table.c.squad == squad]
        looked: list[RowFinding] = []
        changed: list[tuple[Any, ...]] = []
        with transaction(self._engine, f"read {table.name}") as conn:
            for row in conn.execute(select(table).where(*where)):
                scanned[columns.place] += 1
                values = _scrubbed_columns(columns, row)
                if values:
                    changed.append(tuple(row._mapping[k] for k in columns.key))
                    looked.append(_row_finding(columns, row, values, False))
        if not fix or not changed:
            return looked
        found: list[RowFinding] = []
        with self._writing(f"redact {table.name}") as conn:
            _lock(conn, table)
            for key in changed:
                found += self._fix_row(conn, columns, key)
        return found

    def _fix_row(
        self, conn: Connection, columns: _Columns, key: tuple[Any, ...]
    ) -> list[RowFinding]:
        row = conn.execute(select(columns.table).where(*_key(columns, key))).first()
        if row is None:
            return []
        values = _scrubbed_columns(columns, row)
        if not values:
            return []
        conn.execute(
            update(columns.table)
            .where(*_key(columns, key))
            .values({name: scrubbed.value for name, scrubbed in values.items()})
        )
        return [_row_finding(columns, row, values, True)]

    # -- writing --------------------------------------------------------------------------

    @contextlib.contextmanager
    def _writing(self, action: str) -> Iterator[Connection]:
        """A write transaction that zeroes what it overwrites (SQLite's ``secure_delete``)."""
        with transaction(self._engine, action) as conn:
            sqlite = conn.dialect.name == "sqlite"
            if sqlite:
                conn.exec_driver_sql("PRAGMA secure_delete = ON")
            try:
                yield conn
            finally:
                if sqlite:
                    with contextlib.suppress(Exception):
                        conn.exec_driver_sql("PRAGMA secure_delete = OFF")


def _lock(conn: Connection, table: Table) -> None:
    """Take the write lock before reading (a write that changes nothing): what is read next
    cannot change before it is written back. Postgres locks the rows as they are updated."""
    if conn.dialect.name == "sqlite":
        key = next(iter(table.primary_key.columns))
        conn.execute(update(table).where(false()).values({key.name: key}))


def _count(conn: Connection, table: Table, squad: str, agent: str) -> int:
    query = select(func.count()).select_from(table)
    return int(
        conn.execute(query.where(table.c.squad == squad, table.c.agent == agent)).scalar() or 0
    )


def _in_column(column: str, found: Sequence[Found]) -> tuple[Found, ...]:
    return tuple(Found(f.kind, f"{column} {f.where}".strip()) for f in found)


def _scrubbed_messages(conn: Connection, squad: str, agent: str) -> list[tuple[int, Scrubbed[str]]]:
    """The messages of one agent that change, each judged within its thread (run or session)."""
    query = (
        select(_MESSAGES.c.id, _MESSAGES.c.run_id, _MESSAGES.c.session_id, _MESSAGES.c.content)
        .where(_MESSAGES.c.squad == squad, _MESSAGES.c.agent == agent)
        .order_by(_MESSAGES.c.seq)
    )
    threads: dict[tuple[str | None, str | None], list[tuple[int, str]]] = {}
    for row in conn.execute(query):
        threads.setdefault((row.run_id, row.session_id), []).append((int(row.id), row.content))
    changed = []
    for messages in threads.values():
        scrubbed = scrub_conversation([content for _, content in messages])
        changed += [(i, s) for (i, _), s in zip(messages, scrubbed, strict=True) if s.changed]
    return changed


def _fact_rows(conn: Connection, namespace_id: int) -> list[Any]:
    query = (
        select(
            _FACTS.c.id,
            _FACTS.c.text,
            _FACTS.c.subject,
            _FACTS.c.squad,
            _FACTS.c.agent,
            _FACTS.c.turns,
        )
        .where(_FACTS.c.namespace_id == namespace_id)
        .order_by(_FACTS.c.id)
    )
    return list(conn.execute(query))


def _scrubbed_facts(
    rows: Sequence[Any], *, archive: bool, squad: str | None
) -> list[tuple[Any, str, str | None, tuple[Found, ...]]]:
    """(row, new text, new subject, finds) of each fact that changes. An archive's entries
    (``speaker: message``) are judged as the conversation they were, in the order said."""
    if archive:
        ordered = sorted(rows, key=lambda row: (min(row.turns or [0]), row.id))
        spoken = [_speaker_and_message(row.text) for row in ordered]
        scrubbed = scrub_conversation([message for _, message in spoken])
        texts = [
            Scrubbed(f"{speaker}{s.value}", s.found)
            for (speaker, _), s in zip(spoken, scrubbed, strict=True)
        ]
        pairs = list(zip(ordered, texts, strict=True))
    else:
        pairs = [(row, scrub_text(row.text)) for row in rows]
    changed = []
    for row, text in pairs:
        if squad is not None and row.squad != squad:
            continue
        subject = scrub_text(row.subject) if row.subject is not None else Scrubbed(None)
        if text.changed or subject.changed:
            found = _in_column("text", text.found) + _in_column("subject", subject.found)
            changed.append((row, text.value, subject.value, found))
    return changed


def _speaker_and_message(text: str) -> tuple[str, str]:
    """``("user: ", "the message")`` of an archive entry ``user: the message``."""
    speaker, colon, message = text.partition(": ")
    if not colon or "\n" in speaker:
        return "", text
    return speaker + colon, message


def _rewrite_fact(
    conn: Connection, namespace_id: int, row: Any, text: str, subject: str | None
) -> None:
    """Store a fact's redacted text; index it again when it is indexed (active); drop its
    vector; move an archive entry's key to the new text's."""
    conn.execute(update(_FACTS).where(_FACTS.c.id == row.id).values(text=text, subject=subject))
    indexed = conn.execute(
        select(_POSTINGS.c.fact_id).where(_POSTINGS.c.fact_id == row.id).limit(1)
    ).first()
    if indexed is not None:
        deindex(conn, [row.id])
        counts = term_counts(text if subject is None else f"{subject}\n{text}")
        grow_namespace(conn, namespace_id, 1, sum(counts.values()))
        index_facts(conn, namespace_id, [row.id], [counts])
    conn.execute(delete(_VECTORS).where(_VECTORS.c.fact_id == row.id))
    here = _TEXTS.c.namespace_id == namespace_id
    entry = conn.execute(select(_TEXTS.c.key).where(here, _TEXTS.c.fact_id == row.id)).first()
    if entry is not None:
        new_key = text_key(text)
        taken = conn.execute(select(_TEXTS.c.key).where(here, _TEXTS.c.key == new_key)).first()
        if taken is None:  # else another entry holds that text: the old key stays (a digest)
            conn.execute(update(_TEXTS).where(here, _TEXTS.c.key == entry.key).values(key=new_key))


def _scrubbed_columns(columns: _Columns, row: Any) -> dict[str, Scrubbed[Any]]:
    """The columns of ``row`` that change, with their new values and finds."""
    out: dict[str, Scrubbed[Any]] = {}
    for name in columns.text:
        value = row._mapping[name]
        if isinstance(value, str):
            scrubbed: Scrubbed[Any] = scrub_text(value)
            if scrubbed.changed:
                out[name] = scrubbed
    for name in columns.json:
        value = row._mapping[name]
        if value is not None:
            scrubbed = _scrub_value(value)
            if scrubbed.changed:
                out[name] = scrubbed
    for name in columns.json_text:
        value = row._mapping[name]
        if isinstance(value, str):
            scrubbed = scrub_json_text(value, dump=_json_text)
            if scrubbed.changed:
                out[name] = scrubbed
    return out


def _json_text(value: Any) -> str:
    """A JSON document as the store writes one into a text column."""
    return json.dumps(value, ensure_ascii=False)


def _key(columns: _Columns, key: tuple[Any, ...]) -> list[Any]:
    return [columns.table.c[name] == value for name, value in zip(columns.key, key, strict=True)]


def _row_finding(
    columns: _Columns, row: Any, values: dict[str, Scrubbed[Any]], fixed: bool
) -> RowFinding:
    key = "/".join(str(row._mapping[k]) for k in columns.key)
    if columns.place == "sighting":
        key = f"{row.squad}/{row.agent}/{str(row._mapping['key'])[:12]}"
    found: tuple[Found, ...] = ()
    for name, scrubbed in values.items():
        found += _in_column(name, scrubbed.found)
    return RowFinding(
        columns.place,
        f"{columns.place}:{key}",
        str(row.squad),
        str(row.agent) if columns.agent else None,
        found,
        fixed,
    )
