"""Credentials in run checkpoints, found and redacted where LangGraph keeps them.

A checkpoint holds a run's state (task descriptions, reviewers' feedback, errors) and its
pending writes, serialised by the checkpointer's own serde. A sweep deserialises each with
that serde, redacts every string inside (:func:`squad.text.scrub.scrub_value`, LangGraph's
``Send`` included), and with ``fix`` serialises it back with the same serde and writes it in
place, in one transaction. A value that would not read back as what was written (a type the
serde cannot round-trip) is left as it is and reported, never half rewritten.

SQLite (``SqliteSaver``): each checkpoint is one serialised blob beside JSON metadata, and
each pending write a blob; ``secure_delete`` zeroes what a fix overwrites, and the file is
compacted after. PostgreSQL (``PostgresSaver``): a checkpoint is JSONB with its plain values
inline, its other channel values are blobs in ``checkpoint_blobs``, pending writes blobs in
``checkpoint_writes``; the old row versions stay in the table's files until autovacuum reuses
their space (``VACUUM FULL`` rewrites them at once).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from squad.text.scrub import Found, Scrubbed, scrub_value

if TYPE_CHECKING:
    from langgraph.checkpoint.serde.base import SerializerProtocol

__all__ = ["CheckpointFinding", "CheckpointSweep", "sweep_postgres", "sweep_sqlite"]


@dataclass(frozen=True)
class CheckpointFinding:
    """Credentials found in one checkpoint or pending write of a run (a thread)."""

    thread_id: str
    ref: str
    """``checkpoint:<run>/<checkpoint id>`` or ``write:<run>/<checkpoint id>/<task>/<n>``."""
    found: tuple[Found, ...]
    fixed: bool = False
    problem: str | None = None
    """Why it was not rewritten, when ``fix`` was asked and it was not."""


@dataclass(frozen=True)
class CheckpointSweep:
    findings: tuple[CheckpointFinding, ...] = ()
    scanned: int = 0
    """Checkpoints and pending writes read."""
    supported: bool = True
    """False: this backend's checkpoints are not swept (nothing was read)."""


def _langgraph_objects(obj: Any, path: str, walk: Callable[[Any, str], Any]) -> Any:
    """LangGraph's ``Send`` (a task sent to a node with its input) is no dataclass."""
    from langgraph.types import Send

    if isinstance(obj, Send):
        arg = walk(obj.arg, f"{path}.arg")
        return obj if arg is obj.arg else Send(obj.node, arg, timeout=obj.timeout)
    return obj


def _scrubbed(
    serde: SerializerProtocol, kind: str | None, blob: bytes | None, where: str = ""
) -> Scrubbed[Any]:
    if kind is None or blob is None:
        return Scrubbed(None)
    value = serde.loads_typed((kind, blob))
    return scrub_value(value, where=where, objects=_langgraph_objects)


def _dumped(serde: SerializerProtocol, value: Any) -> tuple[str, bytes] | None:
    """``value`` serialised, or None when it would not read back equal."""
    kind, blob = serde.dumps_typed(value)
    try:
        same = serde.loads_typed((kind, blob)) == value
    except Exception:  # noqa: BLE001 - any failure to read it back means: do not write it
        same = False
    return (kind, blob) if same else None


_UNSAFE = "its state does not read back as written with the checkpointer's serde; left as is"


def sweep_sqlite(
    conn: sqlite3.Connection,
    serde: SerializerProtocol,
    *,
    fix: bool,
    threads: Collection[str] | None = None,
) -> CheckpointSweep:
    """Sweep LangGraph's ``SqliteSaver`` tables on ``conn`` (of ``threads`` only, when given);
    with ``fix``, in one immediate transaction with ``secure_delete`` on."""
    wanted = None if threads is None else set(threads)
    findings: list[CheckpointFinding] = []
    scanned = 0
    if fix:
        conn.execute("PRAGMA secure_delete = ON")
        conn.execute("BEGIN IMMEDIATE")
    try:
        try:
            checkpoints = conn.execute(
                "SELECT thread_id, checkpoint_ns, checkpoint_id, type, checkpoint, metadata "
                "FROM checkpoints"
            ).fetchall()
            writes = conn.execute(
                "SELECT thread_id, checkpoint_ns, checkpoint_id, task_id, idx, type, value "
                "FROM writes"
            ).fetchall()
        except sqlite3.OperationalError:  # the file exists, but no run wrote a checkpoint
            checkpoints, writes = [], []
        for thread, ns, checkpoint_id, kind, blob, metadata in checkpoints:
            if wanted is not None and thread not in wanted:
                continue
            scanned += 1
            state = _scrubbed(serde, kind, blob)
            meta = scrub_value(json.loads(metadata)) if metadata else Scrubbed(None)
            if not (state.changed or meta.changed):
                continue
            found = state.found + tuple(Found(f.kind, f"metadata {f.where}") for f in meta.found)
            ref = f"checkpoint:{thread}/{checkpoint_id}"
            if not fix:
                findings.append(CheckpointFinding(thread, ref, found))
                continue
            dumped = _dumped(serde, state.value) if state.changed else (kind, blob)
            if dumped is None:
                findings.append(CheckpointFinding(thread, ref, found, problem=_UNSAFE))
                continue
            new_meta = (
                json.dumps(meta.value, ensure_ascii=False).encode("utf-8", "ignore")
                if meta.changed
                else metadata
            )
            conn.execute(
                "UPDATE checkpoints SET type = ?, checkpoint = ?, metadata = ? "
                "WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?",
                (*dumped, new_meta, thread, ns, checkpoint_id),
            )
            findings.append(CheckpointFinding(thread, ref, found, fixed=True))
        for thread, ns, checkpoint_id, task_id, idx, kind, blob in writes:
            if wanted is not None and thread not in wanted:
                continue
            scanned += 1
            value = _scrubbed(serde, kind, blob)
            if not value.changed:
                continue
            ref = f"write:{thread}/{checkpoint_id}/{task_id}/{idx}"
            if not fix:
                findings.append(CheckpointFinding(thread, ref, value.found))
                continue
            dumped = _dumped(serde, value.value)
            if dumped is None:
                findings.append(CheckpointFinding(thread, ref, value.found, problem=_UNSAFE))
                continue
            conn.execute(
                "UPDATE writes SET type = ?, value = ? WHERE thread_id = ? AND checkpoint_ns = ? "
                "AND checkpoint_id = ? AND task_id = ? AND idx = ?",
                (*dumped, thread, ns, checkpoint_id, task_id, idx),
            )
            findings.append(CheckpointFinding(thread, ref, value.found, fixed=True))
        if fix:
            conn.commit()
    except BaseException:
        if fix:
            conn.rollback()
        raise
    finally:
        if fix:
            conn.execute("PRAGMA secure_delete = OFF")
    return CheckpointSweep(tuple(findings), scanned)


def sweep_postgres(
    connection: Any,
    serde: SerializerProtocol,
    *,
    fix: bool,
    threads: Collection[str] | None = None,
) -> CheckpointSweep:
    """Sweep LangGraph's ``PostgresSaver`` tables on ``connection`` (a psycopg connection
    with dict rows, autocommit) in one transaction, rows locked for update with ``fix``."""
    from psycopg import errors
    from psycopg.types.json import Jsonb

    wanted = None if threads is None else set(threads)
    findings: list[CheckpointFinding] = []
    scanned = 0
    lock = " FOR UPDATE" if fix else ""

    def mine(row: dict[str, Any]) -> bool:
        return wanted is None or row["thread_id"] in wanted

    try:
        with connection.transaction():
            checkpoints = connection.execute(
                "SELECT thread_id, checkpoint_ns, checkpoint_id, checkpoint, metadata "
                f"FROM checkpoints{lock}"
            ).fetchall()
            for row in filter(mine, checkpoints):
                scanned += 1
                state = scrub_value(row["checkpoint"])
                meta = scrub_value(row["metadata"])
                if not (state.changed or meta.changed):
                    continue
                found = state.found + tuple(
                    Found(f.kind, f"metadata {f.where}") for f in meta.found
                )
                ref = f"checkpoint:{row['thread_id']}/{row['checkpoint_id']}"
                if fix:
                    connection.execute(
                        "UPDATE checkpoints SET checkpoint = %s, metadata = %s WHERE thread_id "
                        "= %s AND checkpoint_ns = %s AND checkpoint_id = %s",
                        (
                            Jsonb(state.value),
                            Jsonb(meta.value),
                            row["thread_id"],
                            row["checkpoint_ns"],
                            row["checkpoint_id"],
                        ),
                    )
                findings.append(CheckpointFinding(row["thread_id"], ref, found, fixed=fix))
            blobs = connection.execute(
                "SELECT thread_id, checkpoint_ns, channel, version, type, blob "
                f"FROM checkpoint_blobs{lock}"
            ).fetchall()
            for row in filter(mine, blobs):
                scanned += 1
                if row["type"] == "empty" or row["blob"] is None:
                    continue
                key: tuple[Any, ...] = (
                    row["thread_id"],
                    row["checkpoint_ns"],
                    row["channel"],
                    row["version"],
                )
                ref = f"blob:{row['thread_id']}/{row['channel']}/{row['version']}"
                findings += _rewritten_blob(
                    connection,
                    serde,
                    fix,
                    row,
                    ref,
                    f".channel_values.{row['channel']}",
                    "UPDATE checkpoint_blobs SET type = %s, blob = %s WHERE thread_id = %s "
                    "AND checkpoint_ns = %s AND channel = %s AND version = %s",
                    key,
                )
            writes = connection.execute(
                "SELECT thread_id, checkpoint_ns, checkpoint_id, task_id, idx, type, blob "
                f"FROM checkpoint_writes{lock}"
            ).fetchall()
            for row in filter(mine, writes):
                scanned += 1
                key = (
                    row["thread_id"],
                    row["checkpoint_ns"],
                    row["checkpoint_id"],
                    row["task_id"],
                    row["idx"],
                )
                ref = (
                    f"write:{row['thread_id']}/{row['checkpoint_id']}/{row['task_id']}/{row['idx']}"
                )
                findings += _rewritten_blob(
                    connection,
                    serde,
                    fix,
                    row,
                    ref,
                    "",
                    "UPDATE checkpoint_writes SET type = %s, blob = %s WHERE thread_id = %s "
                    "AND checkpoint_ns = %s AND checkpoint_id = %s AND task_id = %s AND idx = %s",
                    key,
                )
    except errors.UndefinedTable:  # no checkpoint was ever written here
        return CheckpointSweep()
    return CheckpointSweep(tuple(findings), scanned)


def _rewritten_blob(
    connection: Any,
    serde: SerializerProtocol,
    fix: bool,
    row: dict[str, Any],
    ref: str,
    where: str,
    statement: str,
    key: tuple[Any, ...],
) -> list[CheckpointFinding]:
    """A serialised value swept: nothing, a find, or a find rewritten with ``fix``."""
    value = _scrubbed(serde, row["type"], bytes(row["blob"]), where)
    if not value.changed:
        return []
    thread = str(row["thread_id"])
    if not fix:
        return [CheckpointFinding(thread, ref, value.found)]
    dumped = _dumped(serde, value.value)
    if dumped is None:
        return [CheckpointFinding(thread, ref, value.found, problem=_UNSAFE)]
    connection.execute(statement, (*dumped, *key))
    return [CheckpointFinding(thread, ref, value.found, fixed=True)]
