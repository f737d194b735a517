"""The nodes of a cluster and their heartbeats, one row per node; reached as ``store.cluster``.

Every ``squad daemon`` and ``squad worker`` in cluster mode writes its row every few seconds
(host, pid, role, its procrastinate worker id and the jobs it runs). procrastinate's own
worker table has ids and beats but no names; this one is what ``squad cluster nodes`` and
``squad status`` show, joined with the queue's view of the jobs.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import Row, Table, delete, select, update
from sqlalchemy.engine import Engine

from squad.clock import Clock
from squad.store.engine import transaction
from squad.store.tables import metadata
from squad.store.upsert import upsert

__all__ = ["ClusterNodeStore", "NodeRecord"]

NODES: Table = metadata.tables["cluster_nodes"]


@dataclass(frozen=True)
class NodeRecord:
    """One node's last beat; timestamps are timezone-aware UTC."""

    name: str
    host: str
    pid: int
    role: str
    worker_id: int | None
    started_at: datetime
    beat_at: datetime
    stopped_at: datetime | None
    state: dict[str, Any] | None = field(default=None, hash=False)


class ClusterNodeStore:
    """Cluster nodes' heartbeats; get one as ``Store.cluster``. Thread-safe."""

    def __init__(self, engine: Engine, *, now: Clock) -> None:
        self._engine = engine
        self._now = now

    def beat(
        self,
        name: str,
        *,
        host: str,
        pid: int,
        role: str,
        started_at: datetime,
        worker_id: int | None,
        state: Mapping[str, object] | None = None,
    ) -> NodeRecord:
        """Record that node ``name`` is alive now (one upsert); clears ``stopped_at``."""
        if started_at.utcoffset() is None:
            raise ValueError(f"naive started_at {started_at!r}; pass a timezone-aware datetime")
        values: dict[str, Any] = {
            "name": name,
            "host": host,
            "pid": pid,
            "role": role,
            "worker_id": worker_id,
            "started_at": started_at,
            "beat_at": self._now(),
            "stopped_at": None,
            "state": state,
        }
        changes = {k: v for k, v in values.items() if k != "name"}
        with transaction(self._engine, f"record the heartbeat of cluster node {name!r}") as conn:
            upsert(conn, NODES, values, key=("name",), set_=changes)
            return _record(conn.execute(select(NODES).where(NODES.c.name == name)).one())

    def mark_stopped(self, name: str, *, pid: int) -> bool:
        """A clean stop of node ``name`` (process ``pid``); False if another process beat since."""
        where = (NODES.c.name == name, NODES.c.pid == pid)
        with transaction(self._engine, f"record the stop of cluster node {name!r}") as conn:
            changed = conn.execute(
                update(NODES).where(*where).values(stopped_at=self._now(), worker_id=None)
            ).rowcount
        return bool(changed)

    def get(self, name: str) -> NodeRecord | None:
        """Node ``name``'s last beat, if it ever beat."""
        with transaction(self._engine, f"read cluster node {name!r}") as conn:
            row = conn.execute(select(NODES).where(NODES.c.name == name)).first()
        return None if row is None else _record(row)

    def list(self) -> list[NodeRecord]:
        """Every node that ever beat, by name."""
        with transaction(self._engine, "list cluster nodes") as conn:
            rows = conn.execute(select(NODES).order_by(NODES.c.name)).all()
        return [_record(row) for row in rows]

    def forget(self, *, stopped_before: datetime) -> int:
        """Drop the rows of nodes that stopped (or last beat) before ``stopped_before``."""
        old = NODES.c.beat_at < stopped_before
        with transaction(self._engine, "forget old cluster nodes") as conn:
            return int(conn.execute(delete(NODES).where(old)).rowcount)


def _record(row: Row[Any]) -> NodeRecord:
    return NodeRecord(
        name=row.name,
        host=row.host,
        pid=row.pid,
        role=row.role,
        worker_id=row.worker_id,
        started_at=row.started_at,
        beat_at=row.beat_at,
        stopped_at=row.stopped_at,
        state=row.state,
    )
