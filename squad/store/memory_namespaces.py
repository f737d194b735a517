"""Experiential memory's namespaces in the state database: one per agent experience.

A namespace (``Agent Experience: <agent name>``) is identified by ``profile:<profile-id>`` or
``squad:<squad>/<agent-id>``, and created disabled: the flag only governs injection into other
agents' chats. :class:`NamespaceStore` is the part of
:class:`~squad.store.memory.MemoryStore` that keeps them; the facts are the rest.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy import (
    ColumnElement,
    func,
    insert,
    select,
    true,
    update,
)
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import IntegrityError, SQLAlchemyError

from squad.clock import Clock
from squad.errors import UsageError
from squad.store.engine import transaction
from squad.store.memory_index import (
    FACTS,
    NAMESPACES,
    chunks,
    live,
)
from squad.store.memory_rows import (
    checked_identity,
    checked_name,
    namespace_key,
    namespace_record,
    resolve_namespace,
)
from squad.store.records import NamespaceRecord
from squad.store.sqlite_fast import FastReads

__all__ = ["ARCHIVE_PREFIX", "NamespaceStore"]

ARCHIVE_PREFIX = "archive:"
"""Identity prefix of an agent's conversation archive (see squad.memory.recall)."""
_ENABLED = (
    select(NAMESPACES)
    .where(NAMESPACES.c.enabled.is_(True))
    .order_by(NAMESPACES.c.name, NAMESPACES.c.id)
)
"""Prepared once: it runs on every prompt, so it builds no SQL per call."""


class NamespaceStore:
    """Experiential-memory namespaces; the base of :class:`~squad.store.memory.MemoryStore`.

    Safe to share between threads, like the :class:`~squad.store.Store` that owns it.
    """

    def __init__(self, engine: Engine, *, now: Clock, fast: FastReads | None = None) -> None:
        """Use ``engine`` (already migrated) and take time from ``now`` (timezone-aware UTC);
        ``fast``: the store's plain reads of a SQLite file (:mod:`.sqlite_fast`), which a
        prompt's searches use when they can."""
        self._engine = engine
        self._now = now
        self._fast = fast

    def ensure_namespace(self, identity: str, name: str) -> NamespaceRecord:
        """The namespace of ``identity``, created disabled if missing, renamed if ``name`` moved.

        ``identity`` is ``profile:<profile-id>`` or ``squad:<squad>/<agent-id>``; the enabled
        flag of an existing namespace is left as it is.
        """
        identity, name = checked_identity(identity), checked_name(name)
        try:
            return self._ensure_namespace(identity, name, first_try=True)
        except IntegrityError:
            # Another writer created it between our read and our insert: read it back.
            return self._ensure_namespace(identity, name, first_try=False)

    def _ensure_namespace(self, identity: str, name: str, *, first_try: bool) -> NamespaceRecord:
        now = self._now()
        reraise = IntegrityError if first_try else None
        with self._begin(f"save memory namespace {identity!r}", reraise=reraise) as conn:
            row = conn.execute(select(NAMESPACES).where(NAMESPACES.c.identity == identity)).first()
            if row is None:
                conn.execute(
                    insert(NAMESPACES).values(
                        identity=identity, name=name, enabled=False, created_at=now, updated_at=now
                    )
                )
            elif row.name != name:
                conn.execute(
                    update(NAMESPACES)
                    .where(NAMESPACES.c.id == row.id)
                    .values(name=name, updated_at=now)
                )
            return self._namespaces(conn, NAMESPACES.c.identity == identity)[0]

    def get_namespace(self, id_or_identity: int | str) -> NamespaceRecord | None:
        """The namespace with this numeric id (an int or a string of digits) or identity."""
        with self._begin("read a memory namespace") as conn:
            found = self._namespaces(conn, namespace_key(id_or_identity))
            return found[0] if found else None

    def list_namespaces(self) -> list[NamespaceRecord]:
        """Every namespace with its active fact count, sorted by name then id."""
        with self._begin("list memory namespaces") as conn:
            return self._namespaces(conn, true())

    def enabled_namespaces(self) -> list[NamespaceRecord]:
        """Enabled namespaces, cheaply: for every prompt's supplementary block.

        ``fact_count`` here is the index's count of active facts (expiry not re-checked), so
        no query ever counts a namespace's facts on the prompt path.
        """
        if self._fast is not None and self._fast.usable():
            try:
                with self._fast.snapshot() as plain:
                    found = self._fast.decoded(
                        plain,
                        "SELECT * FROM memory_namespaces WHERE enabled = 1 ORDER BY name, id",
                        (),
                    )
                return [namespace_record(row, int(row.indexed_facts)) for row in found]
            except sqlite3.Error:
                pass  # read again below, where the error is told in the store's words
        with self._begin("list enabled memory namespaces") as conn:
            rows = conn.execute(_ENABLED).all()
            return [namespace_record(row, int(row.indexed_facts)) for row in rows]

    def set_namespace_enabled(self, ref: int | str, enabled: bool) -> NamespaceRecord:
        """Enable or disable injection of a namespace into other agents' chats.

        ``ref`` is the identity, the exact name or the numeric id; UsageError when it names
        no namespace (with close matches) or a name several namespaces share.
        """
        now = self._now()
        with self._begin(f"enable memory namespace {ref!r}") as conn:
            row = resolve_namespace(conn, str(ref).strip())
            if enabled and row.identity.startswith(ARCHIVE_PREFIX):
                raise UsageError(
                    f"{row.name!r} is a conversation archive: it holds the agent's own messages "
                    "and is never shared with other agents; enable its experience namespace"
                )
            if row.enabled != enabled:
                conn.execute(
                    update(NAMESPACES)
                    .where(NAMESPACES.c.id == row.id)
                    .values(enabled=enabled, updated_at=now)
                )
            return self._namespaces(conn, NAMESPACES.c.id == row.id)[0]

    def _namespaces(self, conn: Connection, where: ColumnElement[bool]) -> list[NamespaceRecord]:
        rows = conn.execute(
            select(NAMESPACES).where(where).order_by(NAMESPACES.c.name, NAMESPACES.c.id)
        ).all()
        if not rows:
            return []
        counts: dict[int, int] = {}
        now = self._now()
        for ids in chunks([row.id for row in rows]):
            query = (
                select(FACTS.c.namespace_id, func.count())
                .where(FACTS.c.namespace_id.in_(ids), live(now))
                .group_by(FACTS.c.namespace_id)
            )
            counts.update({ns: count for ns, count in conn.execute(query)})
        return [namespace_record(row, counts.get(row.id, 0)) for row in rows]

    @contextmanager
    def _begin(
        self, action: str, *, reraise: type[SQLAlchemyError] | None = None
    ) -> Iterator[Connection]:
        """A transaction whose SQLAlchemy errors become StoreError (except ``reraise``)."""
        with transaction(self._engine, action, reraise=reraise) as conn:
            yield conn
