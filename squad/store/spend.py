"""What model calls cost: the spend ledger; reached as ``store.spend``.

``spend_ledger`` holds one row per model call: tokens, cost and latency. Its ``squad`` and
``run_id`` are not foreign keys, so ``limits.max_cost_usd`` keeps counting what a squad spent
after its runs (or its record) are deleted; :meth:`SpendStore.of_squad` sums it, by squad and
since a time, over the ``(squad, at)`` index. Runs that retention forgot are kept as per-day
totals (``spend_days``), and count too.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import ColumnElement, Table, and_, func, insert, select
from sqlalchemy.engine import Engine

from squad.clock import Clock
from squad.store.engine import reading, transaction
from squad.store.records import SpendRecord, SpendTotals
from squad.store.sqlite_writes import PlainStatement
from squad.store.tables import metadata

__all__ = ["SpendStore"]

LEDGER: Table = metadata.tables["spend_ledger"]
DAYS: Table = metadata.tables["spend_days"]
"""Spend of forgotten runs, rolled up per squad, UTC day and model (squad.store.retention)."""


class SpendStore:
    """The spend ledger; get one as ``Store.spend``.

    Safe to share between threads, like the :class:`~squad.store.Store` that owns it.
    """

    def __init__(self, engine: Engine, *, now: Clock, plain: bool = False) -> None:
        """Use ``engine`` (already migrated) and take time from ``now`` (timezone-aware UTC);
        ``plain``: record calls in plain ``sqlite3`` on the transaction's own connection
        (:mod:`.sqlite_writes`), for a SQLite file."""
        self._engine = engine
        self._now = now
        self._plain = plain

    def record(
        self,
        squad: str,
        *,
        model: str,
        prompt_tokens: int = 0,
        completion_tokens: int = 0,
        cost_usd: float = 0.0,
        latency_s: float = 0.0,
        run_id: str | None = None,
        agent: str | None = None,
    ) -> SpendRecord:
        """Add one model call to the ledger, stamped with the store's clock."""
        for name, number in (
            ("prompt_tokens", prompt_tokens),
            ("completion_tokens", completion_tokens),
            ("cost_usd", cost_usd),
            ("latency_s", latency_s),
        ):
            if not number >= 0:  # also refuses NaN
                raise ValueError(f"{name} must be 0 or more, got {number!r}")
        if not squad or not model:
            raise ValueError(f"squad and model must be non-empty, got {squad!r} and {model!r}")
        values: dict[str, Any] = {
            "squad": squad,
            "run_id": run_id,
            "agent": agent,
            "model": model,
            "prompt_tokens": int(prompt_tokens),
            "completion_tokens": int(completion_tokens),
            "cost_usd": float(cost_usd),
            "latency_s": float(latency_s),
            "at": self._now(),
        }
        with transaction(self._engine, f"record spend of squad {squad!r}") as conn:
            found = _INSERT_SPEND_PLAIN.rows(conn, values) if self._plain else None
            key = found[0].id if found else conn.execute(_INSERT_SPEND, values).scalar_one()
        return SpendRecord(id=int(key), **values)

    def of_squad(self, squad: str, *, since: datetime | None = None) -> SpendTotals:
        """What the squad's model calls add up to, over all its runs and chats.

        ``since`` (inclusive) counts only calls at or after that instant; calls of forgotten
        runs, kept as per-day totals, count from the UTC day of ``since`` on.
        """
        where = [LEDGER.c.squad == squad]
        days = [DAYS.c.squad == squad]
        if since is not None:
            if since.utcoffset() is None:
                raise ValueError(f"naive since {since!r}; pass a timezone-aware datetime")
            where.append(LEDGER.c.at >= since)
            days.append(DAYS.c.day >= since.astimezone(UTC).date().isoformat())
        return self._totals(and_(*where), and_(*days), f"sum the spend of squad {squad!r}")

    def of_run(self, run_id: str) -> SpendTotals:
        """What one run's model calls add up to."""
        return self._totals(LEDGER.c.run_id == run_id, None, f"sum the spend of run {run_id!r}")

    def of_runs(self, run_ids: Sequence[str]) -> dict[str, SpendTotals]:
        """:meth:`of_run` of each of ``run_ids`` with a model call, in one query."""
        if not run_ids:
            return {}
        query = (
            select(
                LEDGER.c.run_id,
                func.coalesce(func.sum(LEDGER.c.cost_usd), 0.0),
                func.coalesce(func.sum(LEDGER.c.prompt_tokens), 0),
                func.coalesce(func.sum(LEDGER.c.completion_tokens), 0),
                func.count(),
            )
            .where(LEDGER.c.run_id.in_(list(run_ids)))
            .group_by(LEDGER.c.run_id)
        )
        with transaction(self._engine, "sum the spend of runs") as conn:
            rows = conn.execute(query).all()
        return {
            str(run): SpendTotals(float(cost), int(prompt), int(completion), int(calls))
            for run, cost, prompt, completion, calls in rows
        }

    def by_squad(self) -> dict[str, SpendTotals]:
        """:meth:`of_squad` of every squad with a model call, in one query per table."""
        totals: dict[str, SpendTotals] = {}
        with transaction(self._engine, "sum the spend of every squad") as conn:
            for table, calls in ((LEDGER, func.count()), (DAYS, func.sum(DAYS.c.calls))):
                query = select(
                    table.c.squad,
                    func.coalesce(func.sum(table.c.cost_usd), 0.0),
                    func.coalesce(func.sum(table.c.prompt_tokens), 0),
                    func.coalesce(func.sum(table.c.completion_tokens), 0),
                    func.coalesce(calls, 0),
                ).group_by(table.c.squad)
                for squad, cost, prompt, completion, count in conn.execute(query).all():
                    totals[str(squad)] = totals.get(str(squad), _NONE) + SpendTotals(
                        float(cost), int(prompt), int(completion), int(count)
                    )
        return totals

    def since(self, since: datetime) -> list[SpendRecord]:
        """Every model call at or after ``since``, oldest first (the dashboard's charts)."""
        if since.utcoffset() is None:
            raise ValueError(f"naive since {since!r}; pass a timezone-aware datetime")
        query = select(LEDGER).where(LEDGER.c.at >= since).order_by(LEDGER.c.at, LEDGER.c.id)
        with transaction(self._engine, "list recent model calls") as conn:
            return [SpendRecord(**row._mapping) for row in conn.execute(query).all()]

    def calls_of_run(self, run_id: str, *, limit: int = 1000) -> list[SpendRecord]:
        """One run's model calls in the ledger, oldest first (at most ``limit``)."""
        query = (
            select(LEDGER)
            .where(LEDGER.c.run_id == run_id)
            .order_by(LEDGER.c.at, LEDGER.c.id)
            .limit(limit)
        )
        with transaction(self._engine, f"list the model calls of run {run_id!r}") as conn:
            return [SpendRecord(**row._mapping) for row in conn.execute(query).all()]

    def _totals(
        self, where: ColumnElement[bool], days: ColumnElement[bool] | None, action: str
    ) -> SpendTotals:
        query = select(
            func.coalesce(func.sum(LEDGER.c.cost_usd), 0.0),
            func.coalesce(func.sum(LEDGER.c.prompt_tokens), 0),
            func.coalesce(func.sum(LEDGER.c.completion_tokens), 0),
            func.count(),
        ).where(where)
        with reading(self._engine, action) as conn:
            cost, prompt, completion, calls = conn.execute(query).one()
            total = SpendTotals(float(cost), int(prompt), int(completion), int(calls))
            if days is not None:
                rolled = select(
                    func.coalesce(func.sum(DAYS.c.cost_usd), 0.0),
                    func.coalesce(func.sum(DAYS.c.prompt_tokens), 0),
                    func.coalesce(func.sum(DAYS.c.completion_tokens), 0),
                    func.coalesce(func.sum(DAYS.c.calls), 0),
                ).where(days)
                cost, prompt, completion, calls = conn.execute(rolled).one()
                total += SpendTotals(float(cost), int(prompt), int(completion), int(calls))
        return total


_NONE = SpendTotals(0.0, 0, 0, 0)


_INSERT_SPEND = insert(LEDGER).returning(LEDGER.c.id)
"""Prepared once: a model call's ledger row builds no SQL."""
_INSERT_SPEND_PLAIN = PlainStatement(
    _INSERT_SPEND,
    LEDGER,
    keys=(
        "squad",
        "run_id",
        "agent",
        "model",
        "prompt_tokens",
        "completion_tokens",
        "cost_usd",
        "latency_s",
        "at",
    ),
)
