"""The reading commands' way into a SQLite store: plain ``sqlite3``, no SQLAlchemy or SQLModel.

Opening the full :class:`~squad.store.Store` imports SQLAlchemy's core and ORM and builds
every table (about half of ``squad memory context``'s start, issue 35). A reading command
on a SQLite database already at this squad's schema needs none of that for what it asks
most, so :func:`open_reader` gives it a :class:`StoreReader` that answers those questions
(a prompt's memory, and ``squad status``'s squads, runs, heartbeat, spend and backlog)
with the same records, in the same order, from the same rows. Whatever it does not answer
itself (a write, a ranked search, a namespace still to be created or renamed) goes to the
full store, opened then and only then: the answers never differ, only their cost.

No reader is given (the full store is the way) for Postgres, an in-memory or ``file:`` URI
database, a database that does not exist yet, or one whose schema stamp is not exactly the
shipped heads (it needs a migration, or is newer than this squad).
"""

from __future__ import annotations

import json
import re
import sqlite3
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

from squad.clock import Clock
from squad.errors import UsageError
from squad.store.memory_records import (
    checked_identity,
    checked_limit,
    checked_name,
    fact_record,
    looked_up_terms,
    namespace_record,
)
from squad.store.records import FactStatus, SpendTotals
from squad.store.revisions import shipped_heads
from squad.store.row_records import (
    RESUMABLE,
    heartbeat_record,
    run_record,
    squad_record,
    task_record,
)

if TYPE_CHECKING:
    from squad.store import Store
    from squad.store.records import (
        FactRecord,
        NamespaceRecord,
        RunRecord,
        SquadRecord,
        TaskRecord,
    )
    from squad.store.row_records import HeartbeatRecord

__all__ = ["MemoryReader", "StoreReader", "open_reader", "sqlite_path"]

BUSY_TIMEOUT_S = 5.0
"""As the full store's ``busy_timeout``: how long a read waits behind a writer's lock."""

_PLAIN_SQLITE = re.compile(r"^sqlite(?:\+pysqlite)?:///(?P<path>[^?#%]+)$")
"""A SQLite URL naming a file and nothing else (no query, no escapes): what SQLAlchemy reads
as that same file. Anything else takes the full store, which parses it."""

_DATETIMES = frozenset(
    {
        "created_at",
        "updated_at",
        "started_at",
        "ended_at",
        "beat_at",
        "stopped_at",
        "expires_at",
        "last_accessed_at",
        "superseded_at",
        "forgotten_at",
    }
)
"""Columns stored by :class:`~squad.store.tables.UTCDateTime` in the tables read here: UTC
wall time as text on SQLite, handed out timezone-aware."""
_JSON = frozenset({"turns", "state", "definition", "summary"})
"""Columns stored by SQLAlchemy's ``JSON`` type in the tables read here."""
_ACTIVE = FactStatus.ACTIVE.value
_NAMESPACE = "SELECT id FROM memory_namespaces WHERE id = ?"
_LIVE = "status = ? AND (expires_at IS NULL OR expires_at > ?)"
""":func:`squad.store.memory_index.live`, as SQLite runs it."""


def sqlite_path(url: str) -> Path | None:
    """The database file of a plain SQLite file URL; None for anything else."""
    found = _PLAIN_SQLITE.match(url)
    if found is None or found["path"] == ":memory:":
        return None
    return Path(found["path"])


def open_reader(url: str, *, clock: Clock, full: Callable[[], Store]) -> StoreReader | None:
    """A reader of the database at ``url`` when it is a SQLite file at the shipped schema;
    None when only the full store can answer (see the module's docstring). ``full`` opens
    the full store, for what the reader hands on; ``clock`` is the store's."""
    path = sqlite_path(url)
    heads = shipped_heads()
    if path is None or heads is None or not path.is_file():
        return None
    try:
        connection = sqlite3.connect(
            path, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False
        )
    except sqlite3.Error:
        return None
    try:
        stamped = frozenset(str(row[0]) for row in connection.execute(_STAMP))
    except sqlite3.Error:  # no stamp table: a database the full store has to migrate
        stamped = frozenset()
    if stamped != heads:
        connection.close()
        return None
    connection.row_factory = _row
    return StoreReader(connection, clock=clock, full=full)


_STAMP = "SELECT version_num FROM alembic_version"


def _row(cursor: sqlite3.Cursor, values: tuple[Any, ...]) -> SimpleNamespace:
    """A row with attribute access, its columns decoded as the full store's types do."""
    row = {}
    for (name, *_), value in zip(cursor.description, values, strict=True):
        if value is not None and name in _DATETIMES:
            value = datetime.fromisoformat(value).replace(tzinfo=UTC)
        elif value is not None and name in _JSON:
            value = json.loads(value)
        row[name] = value
    return SimpleNamespace(**row)


def _sql_time(moment: datetime) -> str:
    """``moment`` as the full store binds it on SQLite: naive UTC, always with microseconds."""
    if moment.utcoffset() is None:
        raise ValueError(f"naive datetime {moment!r} given; pass a timezone-aware one")
    return moment.astimezone(UTC).replace(tzinfo=None).isoformat(" ", "microseconds")


class StoreReader:
    """The reading side of a SQLite store over one ``sqlite3`` connection; every other
    attribute is the full store's (opened on first use). Thread-safe: one lock per reader."""

    def __init__(
        self, connection: sqlite3.Connection, *, clock: Clock, full: Callable[[], Store]
    ) -> None:
        self._connection = connection
        self._lock = threading.Lock()
        self._full = full
        self.memory = MemoryReader(self, clock=clock)
        """Experiential memory's reads (``Store.memory``'s)."""
        self.daemon = DaemonReader(self, "daemon")
        self.spend = SpendReader(self, "spend")
        self.conversation = ConversationReader(self, "conversation")
        self.run_state = RunStateReader(self, "run_state")

    def list_squads(self) -> list[SquadRecord]:
        """Every squad, sorted by name."""
        with self.snapshot() as conn:
            rows = conn.execute("SELECT * FROM squads ORDER BY name").fetchall()
        return [squad_record(row) for row in rows]

    def latest_runs(self) -> dict[str, RunRecord]:
        """Each squad's newest run (newest ``created_at``, then highest id)."""
        with self.snapshot() as conn:
            rows = conn.execute(_LATEST_RUNS).fetchall()
        newest: dict[str, Any] = {}
        for row in rows:  # the runs at each squad's newest time: the highest id of a tie
            held = newest.get(row.squad)
            if held is None or row.id > held.id:
                newest[row.squad] = row
        return {squad: run_record(row) for squad, row in sorted(newest.items())}

    def interrupted_runs(self, squad: str | None = None) -> list[RunRecord]:
        """Runs that stopped without finishing and may be resumed, newest first; of one
        squad or of all."""
        statuses = tuple(status.value for status in RESUMABLE)
        where = f"status IN ({', '.join('?' * len(statuses))})"
        params: tuple[Any, ...] = statuses
        if squad is not None:
            where, params = f"{where} AND squad = ?", (*statuses, squad)
        with self.snapshot() as conn:
            rows = conn.execute(
                f"SELECT * FROM runs WHERE {where} ORDER BY created_at DESC, id DESC", params
            ).fetchall()
        return [run_record(row) for row in rows]

    @contextmanager
    def snapshot(self) -> Iterator[sqlite3.Connection]:
        """The connection, inside one read transaction (one consistent view of the file)."""
        with self._lock:
            self._connection.execute("BEGIN")
            try:
                yield self._connection
            finally:
                self._connection.execute("COMMIT")

    def full(self) -> Store:
        """The full store, for what this reader does not answer."""
        return self._full()

    def close(self) -> None:
        """Close the connection (the full store, if opened, is its opener's to close)."""
        with self._lock:
            self._connection.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._full(), name)


_LATEST_RUNS = """\
SELECT runs.* FROM runs JOIN (
    SELECT squad, MAX(created_at) AS newest FROM runs GROUP BY squad
) AS latest ON runs.squad = latest.squad AND runs.created_at = latest.newest"""
"""The runs at each squad's newest ``created_at`` (ties, rare, are settled by id in Python):
the squad and time index answers the maximum without reading every run, where numbering every
run by a window function read all of them (10x the time at 10,000 runs)."""
_CHUNK = 500
"""Ids per ``IN (...)`` list, as the full store's."""


class _Part:
    """A part of the store (``Store.<name>``) whose reads are answered here; its other
    attributes are the full store's part's."""

    def __init__(self, reader: StoreReader, name: str) -> None:
        self._reader = reader
        self._name = name

    def __getattr__(self, name: str) -> Any:
        return getattr(getattr(self._reader.full(), self._name), name)


class DaemonReader(_Part):
    """``Store.daemon``'s read of a home's last heartbeat."""

    def get(self, home: str) -> HeartbeatRecord | None:
        """The last heartbeat of the daemon of ``home``; None if none ever beat."""
        with self._reader.snapshot() as conn:
            row = conn.execute("SELECT * FROM daemon_heartbeats WHERE home = ?", (home,)).fetchone()
        return None if row is None else heartbeat_record(row)


class SpendReader(_Part):
    """``Store.spend``'s totals per run."""

    def of_runs(self, run_ids: Sequence[str]) -> dict[str, SpendTotals]:
        """The spend of each of ``run_ids`` with a model call."""
        ids = list(run_ids)
        totals: dict[str, SpendTotals] = {}
        with self._reader.snapshot() as conn:
            for start in range(0, len(ids), _CHUNK):
                chunk = ids[start : start + _CHUNK]
                rows = conn.execute(
                    "SELECT run_id, coalesce(sum(cost_usd), 0.0) AS cost, "
                    "coalesce(sum(prompt_tokens), 0) AS prompt, "
                    "coalesce(sum(completion_tokens), 0) AS completion, count(*) AS calls "
                    f"FROM spend_ledger WHERE run_id IN ({', '.join('?' * len(chunk))}) "
                    "GROUP BY run_id",
                    chunk,
                ).fetchall()
                for row in rows:
                    totals[str(row.run_id)] = SpendTotals(
                        float(row.cost), int(row.prompt), int(row.completion), int(row.calls)
                    )
        return totals


class ConversationReader(_Part):
    """``Store.conversation``'s extraction backlog."""

    def extraction_backlog(self) -> list[tuple[str, str, int]]:
        """Agents with messages the extractor has not read: ``(squad, agent, count)`` each,
        by squad and agent."""
        with self._reader.snapshot() as conn:
            rows = conn.execute(_BACKLOG).fetchall()
        return [(str(row.squad), str(row.agent), int(row.waiting)) for row in rows]


_BACKLOG = """\
SELECT c.squad AS squad, c.agent AS agent,
       c.last_seq - coalesce(w.last_processed_seq, 0) AS waiting
FROM message_counters AS c LEFT OUTER JOIN extraction_watermarks AS w
    ON w.squad = c.squad AND w.agent = c.agent
WHERE c.last_seq - coalesce(w.last_processed_seq, 0) > 0
ORDER BY c.squad, c.agent"""


class RunStateReader(_Part):
    """``Store.run_state``'s tasks of a run."""

    def tasks(self, run_id: str) -> list[TaskRecord]:
        """The run's tasks, in the order they were first set."""
        with self._reader.snapshot() as conn:
            rows = conn.execute(
                "SELECT * FROM run_tasks WHERE run_id = ? ORDER BY position, task_id", (run_id,)
            ).fetchall()
        return [task_record(row) for row in rows]


class MemoryReader:
    """``Store.memory``'s reads that every prompt preview makes, in plain SQL; the rest of
    :class:`~squad.store.memory.MemoryStore` is the full store's."""

    def __init__(self, reader: StoreReader, *, clock: Clock) -> None:
        self._reader = reader
        self._now = clock

    def ensure_namespace(self, identity: str, name: str) -> NamespaceRecord:
        """The namespace of ``identity`` as it is; the full store creates or renames it."""
        identity, name = checked_identity(identity), checked_name(name)
        with self._reader.snapshot() as conn:
            found = self._namespaces(conn, "identity = ?", (identity,))
        if found and found[0].name == name:
            return found[0]
        return self._reader.full().memory.ensure_namespace(identity, name)

    def enabled_namespaces(self) -> list[NamespaceRecord]:
        """Enabled namespaces, with the index's count of active facts (as the full store's)."""
        with self._reader.snapshot() as conn:
            rows = conn.execute(
                "SELECT * FROM memory_namespaces WHERE enabled = 1 ORDER BY name, id"
            ).fetchall()
        return [namespace_record(row, int(row.indexed_facts)) for row in rows]

    def relevant_facts(
        self, namespace_id: int, query: str, *, limit: int = 200
    ) -> list[FactRecord]:
        """The newest live facts when ``query`` has no search terms; a ranked search is the
        full store's."""
        limit = checked_limit(limit)
        if looked_up_terms(query):
            return self._reader.full().memory.relevant_facts(namespace_id, query, limit=limit)
        now = _sql_time(self._now())
        with self._reader.snapshot() as conn:
            if conn.execute(_NAMESPACE, (namespace_id,)).fetchone() is None:
                raise UsageError(f"no memory namespace with id {namespace_id!r}")
            rows = conn.execute(
                f"SELECT * FROM memory_facts WHERE namespace_id = ? AND {_LIVE} "
                "ORDER BY updated_at DESC, id DESC LIMIT ?",
                (namespace_id, _ACTIVE, now, limit),
            ).fetchall()
        return [fact_record(row) for row in rows]

    def __getattr__(self, name: str) -> Any:
        return getattr(self._reader.full().memory, name)

    def _namespaces(
        self, conn: sqlite3.Connection, where: str, params: tuple[Any, ...]
    ) -> list[NamespaceRecord]:
        """Namespaces matching ``where``, each with its count of live facts."""
        rows = conn.execute(
            f"SELECT * FROM memory_namespaces WHERE {where} ORDER BY name, id", params
        ).fetchall()
        now = _sql_time(self._now())
        counts = {}
        for row in rows:
            counted = conn.execute(
                f"SELECT count(*) AS n FROM memory_facts WHERE namespace_id = ? AND {_LIVE}",
                (row.id, _ACTIVE, now),
            ).fetchone()
            counts[row.id] = int(counted.n)
        return [namespace_record(row, counts[row.id]) for row in rows]
