"""Agents' conversations and the extractor's place in them; reached as ``store.conversation``.

Every message an agent sends or receives, in a run or a chat session, is one row of
``conversation_messages``, numbered per (squad, agent) by ``seq``: 1, 2, 3... with no gap and
no repeat, however many threads or processes write. The number comes from the agent's row in
``message_counters``, bumped by an ``INSERT ... ON CONFLICT DO UPDATE`` in the transaction
that inserts the message. That statement is the transaction's first, so it takes the write
lock before anything is read: the row lock on Postgres, the database's write lock on SQLite
(whose other writers wait ``busy_timeout`` for it). A second writer of the same agent
therefore waits until the first commits and then reads its number; a rolled-back insert rolls
its number back too. The unique (squad, agent, seq) constraint backs this up.

The same row counts the agent's assistant replies: a message's ``turn`` is that count after
it, the number the background extractor cites as a fact's provenance.

Content is stored with every recognised credential redacted (:mod:`squad.text.secrets`), so a
key pasted into a chat or read by a tool is never sent to a model again on a later turn, nor
read by the extractor. A bare value is judged with the messages before it in the same session
or run ("what's the db password?" / "hunter2x"). The turn that carried the credential keeps it
in memory for its own model calls only. A value found in one message is redacted wherever it
occurs in the later ones of the same write, and so are the ``known`` values the caller found
earlier in its session or run (a reply that repeats a password the user's message gave: the
user's message was stored redacted, so only the caller still knows the value).

``extraction_watermarks`` holds, per agent, the last ``seq`` the extractor has read and a
claim protocol that keeps one extraction per agent at a time, coalescing triggers:

* :meth:`ConversationStore.claim_extraction` claims the agent, or, when an extraction is
  already in flight, records one pending trigger and returns False;
* :meth:`ConversationStore.finish_extraction` advances the watermark, releases the claim and
  says whether a trigger came meanwhile (then the caller claims again and runs once more).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Collection, Sequence
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Integer,
    Row,
    Table,
    and_,
    bindparam,
    case,
    false,
    func,
    insert,
    or_,
    select,
    update,
)
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Connection, Engine

from squad.clock import Clock
from squad.store.engine import transaction
from squad.store.records import MessageRecord, MessageRole, WatermarkRecord, enum_value
from squad.store.sqlite_fast import FastReads, sql_time
from squad.store.sqlite_writes import PlainStatement
from squad.store.tables import metadata
from squad.store.upsert import upsert

__all__ = ["ConversationStore"]

MESSAGES: Table = metadata.tables["conversation_messages"]
COUNTERS: Table = metadata.tables["message_counters"]
WATERMARKS: Table = metadata.tables["extraction_watermarks"]


class ConversationStore:
    """Agents' messages, turn counts and extraction watermarks; get one as ``Store.conversation``.

    Safe to share between threads, like the :class:`~squad.store.Store` that owns it.
    """

    def __init__(
        self,
        engine: Engine,
        *,
        now: Clock,
        new_id: Callable[[], str],
        fast: FastReads | None = None,
        plain: bool = False,
    ) -> None:
        """Use ``engine`` (already migrated), time from ``now`` and message ids from ``new_id``;
        ``fast``: the store's plain reads of a SQLite file (:mod:`.sqlite_fast`), which
        recall's reads of messages use when they can; ``plain``: write messages in plain
        ``sqlite3`` on the transaction's own connection (:mod:`.sqlite_writes`), for a SQLite
        file."""
        self._engine = engine
        self._now = now
        self._new_id = new_id
        self._fast = fast
        self._plain = plain

    # messages

    def record_message(
        self,
        squad: str,
        agent: str,
        role: MessageRole | str,
        content: str,
        *,
        run_id: str | None = None,
        session_id: str | None = None,
        tool_name: str | None = None,
        author: str | None = None,
        known: Collection[str] = (),
    ) -> MessageRecord:
        """Append a message to the agent's conversation and return it with its seq and turn."""
        return self.record_messages(
            squad,
            agent,
            [(role, content, tool_name)],
            run_id=run_id,
            session_id=session_id,
            author=author,
            known=known,
        )[0]

    def record_messages(
        self,
        squad: str,
        agent: str,
        items: Sequence[tuple[MessageRole | str, str, str | None]],
        *,
        run_id: str | None = None,
        session_id: str | None = None,
        author: str | None = None,
        known: Collection[str] = (),
    ) -> list[MessageRecord]:
        """Append ``(role, content, tool_name)`` messages in order, in one transaction.

        They get consecutive seqs; each one's turn counts the assistant replies up to it. Their
        content is stored with credentials redacted, and every occurrence of a ``known`` value
        (found earlier in the session or run; see the module docstring). ``author`` names who
        spoke them, when it is known.
        """
        roles = [enum_value(MessageRole, role, "message role") for role, _, _ in items]
        _check_agent(squad, agent)
        if not items:
            return []
        now = self._now()
        replies = sum(role is MessageRole.ASSISTANT for role in roles)
        action = f"record a message of agent {agent!r} of squad {squad!r}"
        rows: list[dict[str, Any]] = []
        contents = [content for _, content, _ in items]
        # Imported here: its patterns cost 0.1 s, which commands that only read (status) skip.
        from squad.text.secrets import CUE_MESSAGES, needs_previous, redact_conversation

        # Before the write lock: long tool output is slow.
        stored = redact_conversation(contents, known=known)
        cued = [i for i, text in enumerate(contents[:CUE_MESSAGES]) if needs_previous(text)]
        with transaction(self._engine, action) as conn:
            last_seq, turns = _take_seqs(conn, squad, agent, len(items), replies, self._plain)
            seq, turn = last_seq - len(items), turns - replies
            if cued:  # a bare value whose cue may be in the messages already stored
                before = _last_contents(conn, squad, agent, seq, run_id, session_id)
                head = cued[-1] + 1
                redone = redact_conversation(contents[:head], previous=before, known=known)
                if redone != stored[:head] and head < len(contents):
                    # Rare: a value found only after its stored cue; its echoes later go too.
                    stored = redact_conversation(contents, previous=before, known=known)
                else:
                    stored[:head] = redone
            for role, (_, _, tool_name), content in zip(roles, items, stored, strict=True):
                seq += 1
                turn += role is MessageRole.ASSISTANT
                rows.append(
                    {
                        "message_id": self._new_id(),
                        "squad": squad,
                        "agent": agent,
                        "run_id": run_id,
                        "session_id": session_id,
                        "role": role.value,
                        "content": content,
                        "tool_name": tool_name,
                        "author": author,
                        "created_at": now,
                        "seq": seq,
                        "turn": turn,
                    }
                )
            ids = _insert_messages(conn, rows, self._plain)
            return [
                MessageRecord(id=int(key), **{**row, "role": role})
                for key, row, role in zip(ids, rows, roles, strict=True)
            ]

    def messages(
        self,
        squad: str,
        agent: str,
        *,
        after_seq: int = 0,
        limit: int | None = None,
        session_id: str | None = None,
        run_id: str | None = None,
        newest: int | None = None,
    ) -> list[MessageRecord]:
        """The agent's messages with ``seq`` above ``after_seq``, oldest first.

        ``limit`` keeps the first ones (page forward by passing the last seq seen as
        ``after_seq``); ``newest`` keeps the last ones instead (a chat's recent window, read
        without reading its whole history); ``session_id`` and ``run_id`` keep one chat
        session's or run's.
        """
        if limit is not None and newest is not None:
            raise ValueError("give limit or newest, not both")
        if after_seq < 0:
            raise ValueError(f"after_seq must be 0 or more, got {after_seq!r}")
        where = [_agent_key(MESSAGES, squad, agent), MESSAGES.c.seq > after_seq]
        if session_id is not None:
            where.append(MESSAGES.c.session_id == session_id)
        if run_id is not None:
            where.append(MESSAGES.c.run_id == run_id)
        query = select(MESSAGES).where(*where).order_by(MESSAGES.c.seq)
        for name, number in (("limit", limit), ("newest", newest)):
            if number is not None and number < 1:
                raise ValueError(f"{name} must be at least 1, got {number!r}")
        if limit is not None:
            query = query.limit(limit)
        if newest is not None:
            query = select(MESSAGES).where(*where).order_by(MESSAGES.c.seq.desc()).limit(newest)
        with transaction(self._engine, f"read the messages of agent {agent!r}") as conn:
            rows = [_message_record(row) for row in conn.execute(query)]
        return rows[::-1] if newest is not None else rows

    def messages_at(self, squad: str, agent: str, seqs: Sequence[int]) -> list[MessageRecord]:
        """The agent's messages with these ``seq``s (those that exist), oldest first."""
        wanted = sorted(set(seqs))
        if self._fast is not None and self._fast.usable():
            try:
                return self._messages_at_fast(self._fast, squad, agent, wanted)
            except sqlite3.Error:
                pass  # read again below, where the error is told in the store's words
        out: list[MessageRecord] = []
        with transaction(self._engine, f"read messages of agent {agent!r}") as conn:
            for start in range(0, len(wanted), 500):
                params = {"squad": squad, "agent": agent, "seqs": wanted[start : start + 500]}
                out += [_message_record(row) for row in conn.execute(_MESSAGES_AT, params)]
        return out

    def _messages_at_fast(
        self, fast: FastReads, squad: str, agent: str, wanted: list[int]
    ) -> list[MessageRecord]:
        """:meth:`messages_at` in plain sqlite3."""
        out: list[MessageRecord] = []
        with fast.snapshot() as conn:
            for start in range(0, len(wanted), 500):
                chunk = wanted[start : start + 500]
                rows = conn.execute(
                    f"SELECT {_MESSAGE_COLUMNS} FROM conversation_messages "
                    f"WHERE squad = ? AND agent = ? AND seq IN ({', '.join('?' * len(chunk))}) "
                    "ORDER BY seq",
                    (squad, agent, *chunk),
                ).fetchall()
                out += [_message_from_values(row) for row in rows]
        return out

    def turn_count(self, squad: str, agent: str) -> int:
        """How many assistant replies the agent has given, in runs and chats together."""
        query = select(COUNTERS.c.turns).where(_agent_key(COUNTERS, squad, agent))
        with transaction(self._engine, f"count the turns of agent {agent!r}") as conn:
            return int(conn.execute(query).scalar() or 0)

    def replies_after(self, squad: str, agent: str, seq: int) -> int:
        """How many assistant replies the agent gave after message ``seq``."""
        query = select(func.count()).where(
            _agent_key(MESSAGES, squad, agent),
            MESSAGES.c.seq > seq,
            MESSAGES.c.role == MessageRole.ASSISTANT.value,
        )
        with transaction(self._engine, f"count the replies of agent {agent!r}") as conn:
            return int(conn.execute(query).scalar() or 0)

    # extraction watermark

    def watermark(self, squad: str, agent: str) -> WatermarkRecord:
        """The extractor's place in the agent's messages (all zero before its first run)."""
        query = select(WATERMARKS).where(_agent_key(WATERMARKS, squad, agent))
        with transaction(self._engine, f"read the extraction watermark of {agent!r}") as conn:
            row = conn.execute(query).first()
        if row is None:
            return WatermarkRecord(squad, agent, 0, None, False, False, None, None)
        return _watermark_record(row)

    def claim_extraction(
        self, squad: str, agent: str, *, stale_after: timedelta | None = None
    ) -> bool:
        """Claim the agent for one extraction; True if this caller won and should extract.

        When an extraction is already in flight, the trigger is recorded as ``pending`` (any
        number of them count as one) and False is returned. With ``stale_after``, a claim
        older than that is taken to belong to a process that died, and is taken over; it must
        be longer than any extraction takes, or two may run at once.
        """
        _check_agent(squad, agent)
        now = self._now()
        where = _agent_key(WATERMARKS, squad, agent)
        free: ColumnElement[bool] = WATERMARKS.c.in_flight == false()
        if stale_after is not None:
            free = or_(free, WATERMARKS.c.claimed_at < now - stale_after)
        with transaction(self._engine, f"claim extraction for agent {agent!r}") as conn:
            _ensure_watermark(conn, squad, agent, now)
            # Lock the row first: on Postgres an update whose WHERE fails takes no lock, so a
            # finisher could commit between it and the "pending" update below, read pending
            # as False and stop, and this trigger would be lost with its message unread.
            conn.execute(select(WATERMARKS.c.in_flight).where(where).with_for_update())
            won = conn.execute(
                update(WATERMARKS)
                .where(where, free)
                .values(in_flight=True, pending=False, claimed_at=now, updated_at=now)
            ).rowcount
            if not won:
                conn.execute(update(WATERMARKS).where(where).values(pending=True, updated_at=now))
            return bool(won)

    def finish_extraction(self, squad: str, agent: str, processed_seq: int) -> bool:
        """End the extraction in flight, having read messages up to ``processed_seq``.

        The watermark only moves forward. Returns True if a trigger came during the
        extraction (it is cleared): the caller should then claim again and run once more.
        Without a claim in flight it just moves the watermark (a manual extraction).
        """
        _check_agent(squad, agent)
        if processed_seq < 0:
            raise ValueError(f"processed_seq must be 0 or more, got {processed_seq!r}")
        now = self._now()
        where = _agent_key(WATERMARKS, squad, agent)
        last = WATERMARKS.c.last_processed_seq
        with transaction(self._engine, f"finish extraction for agent {agent!r}") as conn:
            _ensure_watermark(conn, squad, agent, now)
            conn.execute(
                update(WATERMARKS)
                .where(where)
                .values(
                    last_processed_seq=case((last < processed_seq, processed_seq), else_=last),
                    last_run_at=now,
                    in_flight=False,
                    claimed_at=None,
                    updated_at=now,
                )
            )
            # The row is write-locked by us until commit: no trigger can slip in between.
            pending = bool(conn.execute(select(WATERMARKS.c.pending).where(where)).scalar())
            if pending:
                conn.execute(update(WATERMARKS).where(where).values(pending=False))
            return pending

    # extraction backlog

    def extraction_backlog(self) -> list[tuple[str, str, int]]:
        """Agents with messages the extractor has not read: ``(squad, agent, count)`` each,
        by squad and agent.

        Seqs have no gaps, so the count is the agent's last seq minus its watermark.
        """
        last = WATERMARKS.c.last_processed_seq
        processed = case((last.is_(None), 0), else_=last)  # no watermark row yet: none read
        waiting = COUNTERS.c.last_seq - processed
        query = (
            select(COUNTERS.c.squad, COUNTERS.c.agent, waiting)
            .select_from(
                COUNTERS.outerjoin(
                    WATERMARKS,
                    and_(
                        WATERMARKS.c.squad == COUNTERS.c.squad,
                        WATERMARKS.c.agent == COUNTERS.c.agent,
                    ),
                )
            )
            .where(waiting > 0)
            .order_by(COUNTERS.c.squad, COUNTERS.c.agent)
        )
        with transaction(self._engine, "read the extraction backlog") as conn:
            return [(str(s), str(a), int(n)) for s, a, n in conn.execute(query)]


# helpers


def _take_seqs(
    conn: Connection, squad: str, agent: str, count: int, replies: int, plain: bool
) -> tuple[int, int]:
    """Take the agent's next ``count`` seqs, ``replies`` of them assistant replies; return the
    last seq and the turn count after them (``plain``: in plain ``sqlite3`` if it can).

    Must be the transaction's first statement: it takes the lock that orders the writers.
    """
    params = {"squad": squad, "agent": agent, "count": count, "replies": replies}
    found = _TAKE_SEQS_PLAIN.rows(conn, params) if plain else None
    if found is not None:
        return int(found[0].last_seq), int(found[0].turns)
    prepared = _TAKE_SEQS.get(conn.dialect.name)
    if prepared is not None:
        row = conn.execute(prepared, params).one()
        return int(row.last_seq), int(row.turns)
    upsert(
        conn,
        COUNTERS,
        {"squad": squad, "agent": agent, "last_seq": count, "turns": replies},
        key=("squad", "agent"),
        set_={"last_seq": COUNTERS.c.last_seq + count, "turns": COUNTERS.c.turns + replies},
    )
    row = conn.execute(
        select(COUNTERS.c.last_seq, COUNTERS.c.turns).where(_agent_key(COUNTERS, squad, agent))
    ).one()
    return int(row.last_seq), int(row.turns)


def _take_seqs_statement(insert_of: Callable[[Table], Any]) -> Any:
    """:func:`_take_seqs` as one prepared ``INSERT .. ON CONFLICT .. RETURNING``."""
    count = bindparam("count", type_=Integer())
    replies = bindparam("replies", type_=Integer())
    statement = insert_of(COUNTERS).values(
        squad=bindparam("squad"), agent=bindparam("agent"), last_seq=count, turns=replies
    )
    return statement.on_conflict_do_update(
        index_elements=[COUNTERS.c.squad, COUNTERS.c.agent],
        set_={"last_seq": COUNTERS.c.last_seq + count, "turns": COUNTERS.c.turns + replies},
    ).returning(COUNTERS.c.last_seq, COUNTERS.c.turns)


_TAKE_SEQS = {
    "sqlite": _take_seqs_statement(sqlite.insert),
    "postgresql": _take_seqs_statement(postgresql.insert),
}
"""Prepared per dialect: a message write builds no SQL (others take the portable path)."""
_INSERT_MESSAGES = insert(MESSAGES).returning(MESSAGES.c.id, sort_by_parameter_order=True)
_TAKE_SEQS_PLAIN = PlainStatement(_TAKE_SEQS["sqlite"], COUNTERS)
_INSERTED_COLUMNS = (
    "message_id",
    "squad",
    "agent",
    "run_id",
    "session_id",
    "role",
    "content",
    "tool_name",
    "author",
    "created_at",
    "seq",
    "turn",
)
"""What :meth:`ConversationStore.record_messages` gives each row."""
_INSERT_MESSAGE_PLAIN = PlainStatement(
    insert(MESSAGES).returning(MESSAGES.c.id), MESSAGES, keys=_INSERTED_COLUMNS
)


def _insert_messages(conn: Connection, rows: list[dict[str, Any]], plain: bool) -> list[int]:
    """Insert the message ``rows`` in order; their ids (``plain``: in plain ``sqlite3``, one
    statement a row, as far as it can: the rest through SQLAlchemy, in the same transaction)."""
    ids: list[int] = []
    while plain and len(ids) < len(rows):
        found = _INSERT_MESSAGE_PLAIN.rows(conn, rows[len(ids)])
        if found is None:
            break
        ids.append(int(found[0].id))
    if len(ids) < len(rows):
        ids += [int(key) for key in conn.execute(_INSERT_MESSAGES, rows[len(ids) :]).scalars()]
    return ids


_MESSAGES_AT = (
    select(MESSAGES)
    .where(
        MESSAGES.c.squad == bindparam("squad"),
        MESSAGES.c.agent == bindparam("agent"),
        MESSAGES.c.seq.in_(bindparam("seqs", expanding=True)),
    )
    .order_by(MESSAGES.c.seq)
)
"""Built once: recall reads a few messages at a time, before every turn."""


def _last_contents(
    conn: Connection,
    squad: str,
    agent: str,
    seq: int,
    run_id: str | None,
    session_id: str | None,
) -> list[str]:
    """The content of the agent's last :data:`CUE_MESSAGES` messages up to ``seq`` in the same
    run or chat session, oldest first: where a bare value's cue may be."""
    from squad.text.secrets import CUE_MESSAGES

    query = select(MESSAGES.c.content).where(
        _agent_key(MESSAGES, squad, agent),
        MESSAGES.c.seq <= seq,
        _same_thread(MESSAGES.c.run_id, run_id),
        _same_thread(MESSAGES.c.session_id, session_id),
    )
    rows = conn.execute(query.order_by(MESSAGES.c.seq.desc()).limit(CUE_MESSAGES)).scalars()
    return [str(content) for content in rows][::-1]


def _same_thread(column: ColumnElement[str], value: str | None) -> ColumnElement[bool]:
    return column.is_(None) if value is None else column == value


def _ensure_watermark(conn: Connection, squad: str, agent: str, now: datetime) -> None:
    values = {
        "squad": squad,
        "agent": agent,
        "last_processed_seq": 0,
        "in_flight": False,
        "pending": False,
        "updated_at": now,
    }
    upsert(conn, WATERMARKS, values, key=("squad", "agent"), set_=None)


def _agent_key(table: Table, squad: str, agent: str) -> ColumnElement[bool]:
    return and_(table.c.squad == squad, table.c.agent == agent)


def _check_agent(squad: str, agent: str) -> None:
    if not squad or not agent:
        raise ValueError(f"squad and agent must be non-empty, got {squad!r} and {agent!r}")


def _message_record(row: Row[Any]) -> MessageRecord:
    return MessageRecord(
        id=row.id,
        message_id=row.message_id,
        squad=row.squad,
        agent=row.agent,
        run_id=row.run_id,
        session_id=row.session_id,
        role=MessageRole(row.role),
        content=row.content,
        tool_name=row.tool_name,
        created_at=row.created_at,
        seq=row.seq,
        turn=row.turn,
        author=row.author,
    )


_MESSAGE_FIELDS = ("id", *_INSERTED_COLUMNS)
"""A stored message's columns, as a plain read selects them."""
_MESSAGE_COLUMNS = ", ".join(_MESSAGE_FIELDS)


def _message_from_values(values: tuple[Any, ...]) -> MessageRecord:
    """A message from a plain sqlite3 row of :data:`_MESSAGE_COLUMNS`, as :func:`_message_record`
    makes it from the full store's."""
    row = dict(zip(_MESSAGE_FIELDS, values, strict=True))
    row["role"] = MessageRole(row["role"])
    row["created_at"] = sql_time(row["created_at"])
    return MessageRecord(**row)


def _watermark_record(row: Row[Any]) -> WatermarkRecord:
    return WatermarkRecord(
        squad=row.squad,
        agent=row.agent,
        last_processed_seq=row.last_processed_seq,
        last_run_at=row.last_run_at,
        in_flight=bool(row.in_flight),
        pending=bool(row.pending),
        claimed_at=row.claimed_at,
        updated_at=row.updated_at,
    )
