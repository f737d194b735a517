"""What retention forgets in the store; reached as ``store.retention``.

A run that ended more than ``daemon.retention.runs_days`` ago is forgotten: its record and task
rows, its spend detail (rolled up first into per-day totals in ``spend_days``, which spend
charts read beside the ledger), and those of its conversation messages no memory layer still
needs: a message the background extractor has read (it is in the agent's conversation
archive, which recall falls back on) or one of an agent whose extractor is off (nothing will
ever read it). Extraction passes older than the cutoff go too, and so do review-queue rows
decided before it (pending ones wait for their person however old they are). A run's
outputs, plans and memory stay in its workspace's history; ``squad runs list`` still lists it
from there.

Each batch of runs is one transaction, so a kill between batches leaves whole runs, never
half of one. :meth:`RetentionStore.give_back_space` returns freed pages to the file system on
SQLite (incremental vacuum; a database made before it is converted once with ``VACUUM``);
Postgres reuses freed rows after its autovacuum.
"""

from __future__ import annotations

import sqlite3
from collections import defaultdict
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, TypedDict

from sqlalchemy import Table, and_, delete, or_, select, tuple_, update
from sqlalchemy.engine import Connection, Engine

from squad.clock import Clock
from squad.store.engine import transaction
from squad.store.tables import metadata
from squad.store.upsert import upsert

__all__ = ["BATCH", "Forgotten", "ForgottenCounts", "RetentionStore", "give_back_sqlite_space"]

RUNS: Table = metadata.tables["runs"]
TASKS: Table = metadata.tables["run_tasks"]
MESSAGES: Table = metadata.tables["conversation_messages"]
WATERMARKS: Table = metadata.tables["extraction_watermarks"]
COUNTERS: Table = metadata.tables["message_counters"]
LEDGER: Table = metadata.tables["spend_ledger"]
DAYS: Table = metadata.tables["spend_days"]
PASSES: Table = metadata.tables["extraction_runs"]
REVIEW: Table = metadata.tables["memory_review"]

BATCH = 200
"""Runs forgotten per transaction: short enough that runs going on meanwhile barely wait."""
_TERMINAL = ("succeeded", "failed", "stopped")


class ForgottenCounts(TypedDict):
    """:meth:`Forgotten.to_dict`: the figures of a retention pass's report."""

    runs_forgotten: int
    task_rows_deleted: int
    messages_deleted: int
    spend_rows_rolled_up: int
    extraction_passes_deleted: int
    review_rows_deleted: int


@dataclass
class Forgotten:
    """What one :meth:`RetentionStore.forget_runs` call removed from the store."""

    runs: list[str] = field(default_factory=list)
    tasks: int = 0
    messages: int = 0
    spend_rows: int = 0
    passes: int = 0
    reviews: int = 0

    def to_dict(self) -> ForgottenCounts:
        return {
            "runs_forgotten": len(self.runs),
            "task_rows_deleted": self.tasks,
            "messages_deleted": self.messages,
            "spend_rows_rolled_up": self.spend_rows,
            "extraction_passes_deleted": self.passes,
            "review_rows_deleted": self.reviews,
        }


class RetentionStore:
    """Forgets old runs and gives their space back; safe to share between threads."""

    def __init__(self, engine: Engine, *, now: Clock) -> None:
        self._engine = engine
        self._now = now

    def forget_runs(
        self,
        before: datetime,
        *,
        keep: Collection[str] = (),
        unread_agents: Iterable[tuple[str, str]] = (),
    ) -> Forgotten:
        """Forget the runs that ended before ``before`` (except ``keep``) and what only they
        needed; see the module docstring. ``unread_agents`` are ``(squad, agent)`` pairs whose
        extractor is off: their messages of those runs go even though nothing read them.
        Chat messages (no run) are left alone, and so is every run not ended."""
        if before.utcoffset() is None:
            raise ValueError(f"naive before {before!r}; pass a timezone-aware datetime")
        unread = sorted(set(unread_agents))
        report = Forgotten()
        while True:
            with transaction(self._engine, "forget old runs") as conn:
                ids = _ended_before(conn, before, keep, BATCH)
                if not ids:
                    break
                report.spend_rows += _roll_up_spend(conn, LEDGER.c.run_id.in_(ids))
                report.messages += _delete_messages(conn, ids, unread)
                report.tasks += conn.execute(delete(TASKS).where(TASKS.c.run_id.in_(ids))).rowcount
                conn.execute(delete(RUNS).where(RUNS.c.id.in_(ids)))
            report.runs += ids
        with transaction(self._engine, "forget messages of forgotten runs") as conn:
            # Those still unread when their run was forgotten, read since.
            report.messages += _delete_messages(conn, None, unread)
        with transaction(self._engine, "forget old spend and extraction passes") as conn:
            no_run = and_(LEDGER.c.run_id.is_(None), LEDGER.c.at < before)
            report.spend_rows += _roll_up_spend(conn, no_run)
            report.passes += conn.execute(
                delete(PASSES).where(
                    PASSES.c.started_at < before, PASSES.c.finished_at.is_not(None)
                )
            ).rowcount
            report.reviews += conn.execute(
                delete(REVIEW).where(REVIEW.c.status != "pending", REVIEW.c.decided_at < before)
            ).rowcount
        return report

    def skip_unread(self, agents: Iterable[tuple[str, str]]) -> int:
        """Move the extraction watermark of each ``(squad, agent)`` (agents whose extractor is
        off) to its last message: nothing waits for a pass that will never come. Returns how
        many messages stopped waiting."""
        skipped = 0
        now = self._now()
        read = WATERMARKS.c.last_processed_seq
        with transaction(self._engine, "skip messages no extractor will read") as conn:
            for squad, agent in sorted(set(agents)):
                last = conn.execute(
                    select(COUNTERS.c.last_seq).where(
                        COUNTERS.c.squad == squad, COUNTERS.c.agent == agent
                    )
                ).scalar()
                if last is None:
                    continue
                fresh = {"squad": squad, "agent": agent, "last_processed_seq": 0}
                upsert(
                    conn,
                    WATERMARKS,
                    fresh | {"in_flight": False, "pending": False, "updated_at": now},
                    key=("squad", "agent"),
                    set_=None,
                )
                mine = and_(
                    WATERMARKS.c.squad == squad,
                    WATERMARKS.c.agent == agent,
                    read < last,
                    WATERMARKS.c.in_flight.is_(False),
                )
                seq = conn.execute(select(read).where(mine)).scalar()
                if seq is None:
                    continue
                conn.execute(
                    update(WATERMARKS)
                    .where(mine)
                    .values(last_processed_seq=last, pending=False, updated_at=now)
                )
                skipped += int(last) - int(seq)
        return skipped

    def spend_by_day(self, since: datetime) -> list[tuple[str, str, float, int]]:
        """``(squad, day, cost_usd, calls)`` per squad and UTC day from ``since``, ledger and
        rolled-up totals together, by squad and day."""
        totals: dict[tuple[str, str], list[float]] = defaultdict(lambda: [0.0, 0])
        day_from = since.astimezone(UTC).date().isoformat()
        with transaction(self._engine, "read spend by day") as conn:
            for squad, at, cost in conn.execute(
                select(LEDGER.c.squad, LEDGER.c.at, LEDGER.c.cost_usd).where(LEDGER.c.at >= since)
            ):
                entry = totals[(str(squad), _utc(at).date().isoformat())]
                entry[0] += float(cost)
                entry[1] += 1
            for squad, day, cost, calls in conn.execute(
                select(DAYS.c.squad, DAYS.c.day, DAYS.c.cost_usd, DAYS.c.calls).where(
                    DAYS.c.day >= day_from
                )
            ):
                entry = totals[(str(squad), str(day))]
                entry[0] += float(cost)
                entry[1] += int(calls)
        return [(s, d, cost, int(calls)) for (s, d), (cost, calls) in sorted(totals.items())]

    def give_back_space(self) -> int:
        """Return free pages to the file system (SQLite); returns the bytes given back (0 on
        Postgres, whose autovacuum makes freed rows reusable)."""
        if self._engine.dialect.name != "sqlite":
            return 0
        with self._engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            raw = conn.connection.driver_connection
            assert isinstance(raw, sqlite3.Connection)
            return give_back_sqlite_space(raw)


def give_back_sqlite_space(raw: sqlite3.Connection) -> int:
    """Give a SQLite file's free pages back to the file system, outside any transaction;
    returns the bytes given back. The first call on a file made without incremental vacuum
    converts it with a ``VACUUM`` (a copy of the file, once)."""

    def size() -> int:
        pages = raw.execute("PRAGMA page_count").fetchone()[0]
        return int(pages) * int(raw.execute("PRAGMA page_size").fetchone()[0])

    before = size()
    if int(raw.execute("PRAGMA auto_vacuum").fetchone()[0]) != 2:
        raw.execute("PRAGMA auto_vacuum = INCREMENTAL")  # takes effect with the VACUUM
        raw.executescript("VACUUM;")
    else:
        # Python's sqlite3 steps a statement without result columns once, freeing one page;
        # a script steps it to the end.
        raw.executescript("PRAGMA incremental_vacuum;")
    raw.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
    return max(0, before - size())


def _ended_before(
    conn: Connection, before: datetime, keep: Collection[str], limit: int
) -> list[str]:
    query = select(RUNS.c.id).where(RUNS.c.status.in_(_TERMINAL), RUNS.c.ended_at < before)
    if keep:
        query = query.where(RUNS.c.id.not_in(sorted(keep)))
    return [
        str(r) for (r,) in conn.execute(query.order_by(RUNS.c.ended_at, RUNS.c.id).limit(limit))
    ]


def _delete_messages(
    conn: Connection, ids: Sequence[str] | None, unread: Sequence[tuple[str, str]]
) -> int:
    """Delete the messages of runs ``ids`` (None: of runs the store no longer has) that no
    memory layer needs: read by the extractor, or of an agent whose extractor is off."""
    read_to = (
        select(WATERMARKS.c.last_processed_seq)
        .where(WATERMARKS.c.squad == MESSAGES.c.squad, WATERMARKS.c.agent == MESSAGES.c.agent)
        .scalar_subquery()
    )
    needed_by_nobody = [MESSAGES.c.seq <= read_to]
    if unread:
        needed_by_nobody.append(tuple_(MESSAGES.c.squad, MESSAGES.c.agent).in_(unread))
    runs = (
        MESSAGES.c.run_id.in_(ids)
        if ids is not None
        else and_(MESSAGES.c.run_id.is_not(None), MESSAGES.c.run_id.not_in(select(RUNS.c.id)))
    )
    statement = delete(MESSAGES).where(runs, or_(*needed_by_nobody))
    return int(conn.execute(statement).rowcount or 0)


def _roll_up_spend(conn: Connection, which: Any) -> int:
    """Add the ledger rows ``which`` selects to ``spend_days`` and delete them; their count."""
    sums: dict[tuple[str, str, str], list[float]] = defaultdict(lambda: [0, 0, 0, 0.0, 0.0])
    rows = conn.execute(
        select(
            LEDGER.c.squad,
            LEDGER.c.at,
            LEDGER.c.model,
            LEDGER.c.prompt_tokens,
            LEDGER.c.completion_tokens,
            LEDGER.c.cost_usd,
            LEDGER.c.latency_s,
        ).where(which)
    ).all()
    for squad, at, model, prompt, completion, cost, latency in rows:
        entry = sums[(str(squad), _utc(at).date().isoformat(), str(model))]
        entry[0] += 1
        entry[1] += int(prompt)
        entry[2] += int(completion)
        entry[3] += float(cost)
        entry[4] += float(latency)
    for (squad, day, model), (calls, prompt, completion, cost, latency) in sums.items():
        added = {
            "calls": int(calls),
            "prompt_tokens": int(prompt),
            "completion_tokens": int(completion),
            "cost_usd": cost,
            "latency_s": latency,
        }
        upsert(
            conn,
            DAYS,
            {"squad": squad, "day": day, "model": model, **added},
            key=("squad", "day", "model"),
            set_={name: DAYS.c[name] + value for name, value in added.items()},
        )
    if rows:
        conn.execute(delete(LEDGER).where(which))
    return len(rows)


def _utc(at: datetime) -> datetime:
    return at.replace(tzinfo=UTC) if at.utcoffset() is None else at.astimezone(UTC)
