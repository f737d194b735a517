"""Checkpoints in a SQLite file beside the store: ``$SQUAD_HOME/checkpoints.sqlite``, 0600
(with its WAL and shared-memory files) in a 0700 home, as the state database."""

from __future__ import annotations

import sqlite3
import threading
import time
import weakref
from collections.abc import Collection, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from squad.checkpoints.base import Checkpoints
from squad.diskfull import as_disk_full
from squad.fsutil import SQLITE_COMPANIONS, private_dir, private_file

if TYPE_CHECKING:
    from langgraph.checkpoint.sqlite import SqliteSaver

    from squad.checkpoints.redaction import CheckpointSweep

__all__ = ["FILE_NAME", "SqliteCheckpoints"]

FILE_NAME = "checkpoints.sqlite"
"""The checkpoint file's name in the squad home."""
_BUSY_TIMEOUT_S = 5.0


class SqliteCheckpoints(Checkpoints):
    """LangGraph's ``SqliteSaver`` over one file; a saver of its own per use at once.

    A use hands its saver (and connection) back when it ends well, for the next use to take:
    a process running one run after another opens the file once, not once a run (opening,
    checking the file's mode and LangGraph's set-up cost about 20 ms a run). Uses at once
    each have their own, as before. A saver whose file was replaced or deleted since is
    closed, not reused. Reading (``threads``, ``last_written``, ``delete``) never creates the
    file.
    """

    backend = "sqlite"

    def __init__(self, path: Path) -> None:
        super().__init__()
        self.path = path
        self._idle: list[tuple[SqliteSaver, int]] = []
        """Savers handed back, with the inode of the file they opened."""
        self._idle_lock = threading.Lock()
        weakref.finalize(self, _close_all, self._idle)  # one never closed closes them anyway

    @property
    def where(self) -> str:
        return str(self.path)

    def _exists(self) -> bool:
        return self.path.is_file()

    @contextmanager
    def _connect(self) -> Iterator[SqliteSaver]:
        saver, inode = self._reused() or self._opened()
        kept = False
        try:
            yield saver
            kept = not saver.conn.in_transaction
        except sqlite3.Error as exc:  # a full disk says so, not "disk I/O error"
            full = as_disk_full(exc, self.path)
            if full is None:
                raise
            raise full from exc
        finally:
            if kept:
                with self._idle_lock:
                    self._idle.append((saver, inode))
            else:
                saver.conn.close()

    def _reused(self) -> tuple[SqliteSaver, int] | None:
        """An idle saver on the file as it is now; the others are closed."""
        try:
            inode = self.path.stat().st_ino
        except OSError:
            inode = None
        while True:
            with self._idle_lock:
                if not self._idle:
                    return None
                saver, opened = self._idle.pop()
            if opened == inode:
                return saver, opened
            saver.conn.close()

    def _opened(self) -> tuple[SqliteSaver, int]:
        from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
        from langgraph.checkpoint.sqlite import SqliteSaver

        from squad.checkpoints.serde import RedactingSerde

        try:
            private_dir(self.path.parent)
            # SQLite gives its WAL and shared-memory files the database file's mode.
            private_file(self.path, companions=SQLITE_COMPANIONS)
        except OSError as exc:
            raise as_disk_full(exc, self.path) or exc from exc
        connection = sqlite3.connect(self.path, check_same_thread=False, timeout=_BUSY_TIMEOUT_S)
        inode = self.path.stat().st_ino  # private_file made it; a rename since is seen next use
        return SqliteSaver(connection, serde=RedactingSerde(JsonPlusSerializer())), inode

    def close(self) -> None:
        """Close the idle savers (a use under way closes its own when it ends)."""
        with self._idle_lock:
            _close_all(self._idle)

    def _create_tables(self) -> None:
        """Retried while another process switches the new file to WAL mode: that switch
        fails at once with "database is locked" instead of waiting its turn."""
        deadline = time.monotonic() + _BUSY_TIMEOUT_S
        while True:
            try:
                return super()._create_tables()
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or time.monotonic() >= deadline:
                    raise
                time.sleep(0.01)

    def _list_threads(self) -> list[str]:
        with self._connect() as saver:
            try:
                rows = saver.conn.execute("SELECT DISTINCT thread_id FROM checkpoints").fetchall()
            except sqlite3.OperationalError:  # the file exists, but no run wrote a checkpoint
                return []
        return [str(row[0]) for row in rows]

    def scrub(self, *, fix: bool, threads: Collection[str] | None = None) -> CheckpointSweep:
        from squad.checkpoints.redaction import CheckpointSweep, sweep_sqlite

        if not self._exists():
            return CheckpointSweep()
        with self._connect() as saver:
            swept = sweep_sqlite(saver.conn, saver.serde, fix=fix, threads=threads)
        if any(f.fixed for f in swept.findings):
            self.compact()  # the old pages leave the file, the write-ahead log is emptied
        return swept

    def compact(self) -> int:
        if not self._exists():
            return 0
        from squad.store.retention import give_back_sqlite_space

        connection = sqlite3.connect(self.path, timeout=_BUSY_TIMEOUT_S, isolation_level=None)
        try:
            return give_back_sqlite_space(connection)
        finally:
            connection.close()


def _close_all(idle: list[tuple[SqliteSaver, int]]) -> None:
    while idle:
        idle.pop()[0].conn.close()
