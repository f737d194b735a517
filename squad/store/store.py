"""The state store: squads and their runs, behind methods that speak frozen records.

Runs are read through the base class :class:`~squad.store.run_reads.RunReads`; squads and the
writes of runs are here.

The rest hangs off a Store by concept: :attr:`Store.memory` (experiential memory),
:attr:`Store.conversation` (agents' messages, turns, extraction watermarks) and
:attr:`Store.runs` (task states per run, the spend ledger), :attr:`Store.decisions`
(squads' decisions with their reasons) and :attr:`Store.review` (proposed facts awaiting a
person).

Nothing outside this package sees a session or a table row. Time and ids come from injected
callables, so tests freeze the clock and get exact timestamps back.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from types import TracebackType
from typing import TYPE_CHECKING, Any

from sqlalchemy import func, literal
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError
from sqlmodel import col, delete, select, update

from squad.clock import Clock, utc_now
from squad.diskfull import as_disk_full
from squad.errors import RunFenced, StoreError
from squad.store.archive import ArchiveStore
from squad.store.cluster_nodes import ClusterNodeStore
from squad.store.conversation import ConversationStore
from squad.store.daemon_state import DaemonStateStore
from squad.store.decisions import DecisionStore
from squad.store.engine import (
    batch,
    make_engine,
    mask_url,
    reader_on_full_disk,
    sqlite_file,
)
from squad.store.extraction import ExtractionStore
from squad.store.maintenance import MaintenanceStore
from squad.store.memory import MemoryStore
from squad.store.migrate import upgrade
from squad.store.records import RunRecord, RunStatus, SquadRecord
from squad.store.retention import RetentionStore
from squad.store.review import ReviewStore
from squad.store.run_state import RunStateStore
from squad.store.spend import SpendStore
from squad.store.sqlite_fast import fast_reads
from squad.store.tables import RunRow, SquadRow, UTCDateTime

if TYPE_CHECKING:
    from squad.settings import Settings
    from squad.store.redaction import RedactionStore

from squad.store.row_records import run_record, squad_record
from squad.store.run_reads import RunReads

__all__ = ["Store", "open_store"]

IdFactory = Callable[[], str]


def _uuid_hex() -> str:
    return uuid.uuid4().hex


class Store(RunReads):
    """Squads, runs and (as :attr:`memory`) experiential memory in a SQL database.

    Build one with :meth:`open`, end it with :meth:`close`.

    Safe to share between threads: each call uses its own session from the engine's pool.
    """

    def __init__(
        self, engine: Engine, *, clock: Clock | None = None, new_id: IdFactory | None = None
    ) -> None:
        """Wrap an engine whose database is already migrated; :meth:`open` is the usual way in."""
        self._engine = engine
        self._clock = clock or utc_now
        self._new_id = new_id or _uuid_hex
        self._where = mask_url(engine.url)
        self._fast = fast_reads(engine)
        """Recall's reads in plain sqlite3 on a SQLite file (:mod:`.sqlite_fast`)."""
        self.memory = MemoryStore(engine, now=self._now, fast=self._fast)
        """Experiential memory (Layer A): namespaces, facts and their retrieval."""
        plain = self._fast is not None  # a SQLite file: a step's writes in plain sqlite3
        self.conversation = ConversationStore(
            engine, now=self._now, new_id=self._new_id, fast=self._fast, plain=plain
        )
        """Agents' messages with their seq and turn, and the extractor's watermarks."""
        self.run_state = RunStateStore(engine, now=self._now, plain=plain)
        """Each run's claim (its fencing epoch) and its tasks' states."""
        self.spend = SpendStore(engine, now=self._now, plain=plain)
        """What model calls cost: the spend ledger."""
        self.extraction = ExtractionStore(engine, now=self._now)
        """The background extractor's passes: what it read, wrote and dropped."""
        self.maintenance = MaintenanceStore(engine, now=self._now)
        """Memory gc's decay and TTL sweeps, and the evidence for promoting project facts."""
        self.daemon = DaemonStateStore(engine, now=self._now)
        """The daemon's heartbeat per squad home."""
        self.cluster = ClusterNodeStore(engine, now=self._now)
        """Cluster nodes (daemons and workers on one Postgres) and their heartbeats."""
        self.decisions = DecisionStore(engine, now=self._now)
        """Squads' decisions with their reasons, and which supersedes which."""
        self.archive = ArchiveStore(engine, now=self._now, fast=self._fast)
        """Agents' conversation archives, each distinct text once (recall searches them)."""
        self.review = ReviewStore(engine, now=self._now)
        """Facts the extractor proposed that wait for a person (the review queue)."""
        self.retention = RetentionStore(engine, now=self._now)
        """What retention forgets: old runs and what only they needed, and the space."""

    @property
    def redaction(self) -> RedactionStore:
        """Credentials in stored rows, found and redacted (``squad memory scan``); made on
        use, since its module loads the credential detector."""
        from squad.store.redaction import RedactionStore

        return RedactionStore(self._engine, now=self._now)

    @classmethod
    def open(
        cls, url: str, *, clock: Clock | None = None, new_id: IdFactory | None = None
    ) -> Store:
        """Open the database at ``url``, migrating it to this squad's schema first."""
        engine = make_engine(url)
        try:
            upgrade(engine)
        except StoreError as exc:
            engine.dispose()
            full = as_disk_full(exc, sqlite_file(engine.url))
            if full is None:
                raise
            reader = reader_on_full_disk(engine.url)  # reading commands still work
            if reader is None:
                raise full from exc
            try:
                upgrade(reader)  # current already: only checked
            except StoreError:
                reader.dispose()
                raise full from exc
            return cls(reader, clock=clock, new_id=new_id)
        except BaseException:
            engine.dispose()
            raise
        return cls(engine, clock=clock, new_id=new_id)

    def close(self) -> None:
        """Close every pooled connection; calling it twice is harmless."""
        if self._fast is not None:
            self._fast.close()
        self._engine.dispose()

    def __enter__(self) -> Store:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # squads

    def upsert_squad(
        self,
        name: str,
        *,
        workspace: str,
        source: str | None,
        definition_sha256: str,
        definition: dict[str, Any] | None = None,
    ) -> SquadRecord:
        """Create or update a squad; ``updated_at`` moves only when a field really changed.

        ``definition`` is the validated definition as JSON (kept when None is given)."""
        args = (name, workspace, source, definition_sha256, definition)
        try:
            return self._upsert_squad(*args, first_try=True)
        except IntegrityError:
            # Another writer inserted the same name between our read and our insert: update it.
            return self._upsert_squad(*args, first_try=False)

    def _upsert_squad(
        self,
        name: str,
        workspace: str,
        source: str | None,
        sha256: str,
        definition: dict[str, Any] | None,
        *,
        first_try: bool,
    ) -> SquadRecord:
        now = self._now()
        reraise = IntegrityError if first_try else None
        with self._session(f"save squad {name!r}", reraise=reraise) as session:
            row = session.get(SquadRow, name)
            if row is None:
                row = SquadRow(
                    name=name,
                    workspace=workspace,
                    source=source,
                    definition_sha256=sha256,
                    created_at=now,
                    updated_at=now,
                    definition=definition,
                )
                session.add(row)
            elif (row.workspace, row.source, row.definition_sha256) != (workspace, source, sha256):
                row.workspace, row.source, row.definition_sha256 = workspace, source, sha256
                row.updated_at = now
                if definition is not None:
                    row.definition = definition
            elif definition is not None and row.definition is None:
                row.definition = definition
            session.commit()
            return squad_record(row)

    def get_squad(self, name: str) -> SquadRecord | None:
        with self._reading(f"read squad {name!r}") as session:
            row = session.get(SquadRow, name)
            return None if row is None else squad_record(row)

    def list_squads(self) -> list[SquadRecord]:
        """Every squad, sorted by name."""
        with self._session("list squads") as session:
            rows = session.exec(select(SquadRow).order_by(col(SquadRow.name))).all()
            return [squad_record(row) for row in rows]

    def delete_squad(self, name: str) -> bool:
        """Delete a squad and, by the foreign key's ON DELETE CASCADE, all its runs.

        Runs are the history of their squad and mean nothing without it, so deleting cascades
        rather than being refused. True if the squad existed.
        """
        with self._session(f"delete squad {name!r}") as session:
            result = session.exec(delete(SquadRow).where(col(SquadRow.name) == name))
            session.commit()
            return bool(result.rowcount)

    # runs

    def create_run(
        self,
        squad: str,
        *,
        trigger: str = "manual",
        goal: str | None = None,
        model: str | None = None,
        job: str | None = None,
    ) -> RunRecord:
        """A new ``pending`` run of an existing squad (the foreign key refuses unknown ones).

        ``goal`` is the goal it was given and ``model`` the model chosen for it, if any;
        ``job`` the cluster job that runs it.
        """
        row = RunRow(
            id=self._new_id(),
            squad=squad,
            status=RunStatus.PENDING.value,
            trigger=trigger,
            created_at=self._now(),
            goal=goal,
            model=model,
            job=job,
        )
        try:
            with self._session(
                f"create a run of squad {squad!r}", reraise=IntegrityError
            ) as session:
                session.add(row)
                session.commit()
                return run_record(row)
        except IntegrityError as exc:
            if self.get_squad(squad) is None:
                raise StoreError(
                    f"no squad named {squad!r} in the state database; save it (upsert_squad) "
                    "before creating runs of it"
                ) from exc
            raise StoreError(
                f"cannot create run {row.id!r} of squad {squad!r}: {exc.orig}"
            ) from exc

    def update_run(
        self,
        run_id: str,
        *,
        status: RunStatus | None = None,
        error: str | None = None,
        tokens_in: int | None = None,
        tokens_out: int | None = None,
        cost_usd: float | None = None,
        summary: dict[str, Any] | None = None,
        only_if: RunStatus | None = None,
        epoch: int | None = None,
        ended_at: datetime | None = None,
    ) -> RunRecord:
        """Change the given fields (None leaves a field alone; numbers replace, not add).

        With ``epoch`` (a cluster node's claim of the run, ``store.run_state.claim``) nothing
        changes once the run has been claimed again: the database refuses the write (one
        statement, ``WHERE epoch = :epoch``) and :class:`~squad.errors.RunFenced` says so.

        With ``only_if`` nothing changes unless the run is in that status at the moment of
        the write (one statement, so a run that just moved on is left alone); the record
        returned shows which happened.

        ``summary`` is what the run did, as a JSON-serialisable mapping; it replaces any
        earlier one.

        Entering ``running`` stamps ``started_at`` and a terminal status stamps ``ended_at``
        (with ``ended_at`` when given: the time the run's commit names), each only the first
        time, in the same statement (no read-modify-write race). Which
        transitions are allowed is the caller's business; the store records what it is told.
        """
        now = self._now()
        values: dict[str, Any] = {}
        if status is not None:
            status = RunStatus(status)
            values["status"] = status.value
            stamp = literal(now, UTCDateTime())
            if status is RunStatus.RUNNING:
                values["started_at"] = func.coalesce(RunRow.started_at, stamp)
            elif status.is_terminal:
                end = stamp if ended_at is None else literal(ended_at, UTCDateTime())
                values["ended_at"] = func.coalesce(RunRow.ended_at, end)
        for key, value in (
            ("error", error),
            ("tokens_in", tokens_in),
            ("tokens_out", tokens_out),
            ("cost_usd", cost_usd),
            ("summary", summary),
        ):
            if value is not None:
                values[key] = value
        with self._session(f"update run {run_id!r}") as session:
            if values:
                statement = update(RunRow).where(col(RunRow.id) == run_id)
                if only_if is not None:
                    statement = statement.where(col(RunRow.status) == RunStatus(only_if).value)
                if epoch is not None:
                    statement = statement.where(col(RunRow.epoch) == epoch)
                session.exec(statement.values(values))
            row = session.get(RunRow, run_id)
            if row is None:
                raise StoreError(f"no run with id {run_id!r} in the state database")
            if epoch is not None and row.epoch != epoch:
                raise RunFenced(
                    f"run {run_id!r} was claimed again (epoch {row.epoch}) after this node's "
                    f"claim (epoch {epoch}): another node has taken it over; this write is refused",
                    run_id=run_id,
                    epoch=epoch,
                )
            session.commit()
            return run_record(row)

    @contextmanager
    def batch(self, action: str) -> Iterator[None]:
        """One transaction for every write of ``store.conversation``, ``store.run_state`` and
        ``store.spend`` inside.

        ``action`` names it in errors ("record step t1 of run 42"). Writes made through
        :class:`Session` (squads, runs) are not part of it.
        """
        with batch(self._engine, action):
            yield

    # plumbing

    def _now(self) -> datetime:
        now = self._clock()
        if now.utcoffset() is None:
            raise ValueError(f"the store's clock returned naive {now!r}; it must be timezone-aware")
        return now.astimezone(UTC)


def open_store(
    settings: Settings, *, clock: Clock | None = None, new_id: IdFactory | None = None
) -> Store:
    """Open the store named by ``settings.database_url``."""
    return Store.open(settings.database_url, clock=clock, new_id=new_id)
