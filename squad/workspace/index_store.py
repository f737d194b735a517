"""The SQLite file behind ``squad ws search``'s index: one per workspace, in a cache folder.

It holds what the last search read of each file (its text, or that it is binary) and the
``lstat`` stamp the file had when it was read, so the next search re-reads only files whose
stamp changed. Being a cache, it is never trusted beyond what it can vouch for: a file of
another format (:data:`FORMAT`, the SQLite version whose trigram folding built it, the
workspace it belongs to) or one SQLite reports corrupt is deleted and rebuilt, and each
stored text is checked against the checksum recorded beside its stamp before it is used.

Schema::

    meta(key PRIMARY KEY, value)            what this file is: format, SQLite, workspace
    files(path PRIMARY KEY, stamp, status, id, crc) WITHOUT ROWID; indexes: id, non-TEXT
    texts(id INTEGER PRIMARY KEY, body)     the text as read, UTF-8 (status TEXT only)
    grams(body) fts5 trigram, detail=none, contentless: which texts hold which trigrams

Several processes may search one workspace at once: the file is in WAL mode (readers never
wait for the writer), writes take the write lock up front (``BEGIN IMMEDIATE``) and wait for
it up to :data:`BUSY_TIMEOUT_S`, and a search reads and answers inside one transaction, so
it sees one consistent state of the index whatever the others write meanwhile.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sqlite3
import time
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Final, TypeAlias, TypeVar

from squad.errors import StoreError
from squad.flock import LockBusy, acquire

__all__ = [
    "BINARY",
    "BUSY_TIMEOUT_S",
    "FORMAT",
    "TEXT",
    "UNREADABLE",
    "IndexCorrupt",
    "IndexStore",
    "Row",
    "index_path",
]

FORMAT: Final = 1
"""Bump when what a row means changes (how files are read or classified, the schema)."""
BUSY_TIMEOUT_S: Final = 60.0
"""How long a search waits for another process's write (a first build of a big workspace)."""
TEXT, BINARY, UNREADABLE = 0, 1, 2  # TEXT is 0 in the SQL below too
"""``files.status``: the text is in ``texts``; the file is not UTF-8 text; it could not be
opened (its permissions are checked again on every search)."""

Row: TypeAlias = tuple[int, int | None, int | None]
"""What the index holds of one file besides its stamp: ``(status, id, crc)``."""
_T = TypeVar("_T")

_CORRUPT_CODES = {sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB}
_SCHEMA = """
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE files(
    path TEXT PRIMARY KEY,
    stamp BLOB NOT NULL,
    status INTEGER NOT NULL,
    id INTEGER,
    crc INTEGER
) WITHOUT ROWID;
CREATE INDEX files_by_id ON files(id);
CREATE INDEX files_not_text ON files(status) WHERE status != 0;
CREATE TABLE texts(id INTEGER PRIMARY KEY, body BLOB NOT NULL);
CREATE VIRTUAL TABLE grams USING fts5(body, tokenize='trigram', detail='none', content='');
"""


class IndexCorrupt(StoreError):
    """The index file is damaged or not an index of this workspace; it is rebuilt."""


def index_path(index_dir: Path, root: Path) -> Path:
    """Where ``root``'s index lives: named after a hash of its resolved path, so two
    spellings of one folder share an index and two folders never do."""
    digest = hashlib.sha256(os.fsencode(root.resolve())).hexdigest()[:32]
    return index_dir / f"{digest}.sqlite3"


def _format_key(root: Path) -> dict[str, str]:
    # The trigram tokenizer folds case with the tables of the SQLite that wrote the index;
    # another SQLite may fold differently, so its queries could miss what this one stored.
    return {
        "format": str(FORMAT),
        "sqlite": sqlite3.sqlite_version,
        "workspace": str(root.resolve()),
    }


def _is_corrupt(exc: sqlite3.Error) -> bool:
    code = getattr(exc, "sqlite_errorcode", None)
    return code is not None and code & 0xFF in _CORRUPT_CODES


def indexed_form(text: str) -> str:
    """What the trigram index is given for ``text``: FTS5 stops tokenizing at a NUL, so NULs
    (allowed in text past the binary sniff) become spaces; a query never has a NUL trigram."""
    return text.replace("\x00", " ") if "\x00" in text else text


def checksum(data: bytes) -> int:
    return zlib.crc32(data)


class IndexStore:
    """An open index file; use it from one thread, inside :meth:`reading` or :meth:`writing`."""

    def __init__(
        self, conn: sqlite3.Connection, path: Path, identity: tuple[int, int] | None
    ) -> None:
        self._conn = conn
        self.path = path
        self._identity = identity

    # -- opening -----------------------------------------------------------------------

    @classmethod
    def open(cls, index_dir: Path, root: Path) -> IndexStore:
        """The index of ``root`` in ``index_dir``, created when missing and rebuilt when it is
        corrupt or of another format. StoreError when it cannot be opened or created."""
        path = index_path(index_dir, root)
        expected = _format_key(root)
        try:
            index_dir.mkdir(parents=True, exist_ok=True)
            for _ in range(3):
                identity = _identity(path)
                store = cls._try_open(path, expected, identity)
                if store is not None:
                    return store
                _discard(path, identity)
        except (sqlite3.Error, OSError, LockBusy) as exc:
            raise StoreError(f"the search index {str(path)!r} cannot be used: {exc}") from exc
        raise StoreError(f"the search index {str(path)!r} keeps turning out unusable")

    @classmethod
    def _try_open(
        cls, path: Path, expected: dict[str, str], identity: tuple[int, int] | None
    ) -> IndexStore | None:
        """The open index, or None when the file is corrupt or not of ``expected`` format."""
        conn: sqlite3.Connection | None = None
        try:
            conn = _connect(path)
            if _ensure_schema(conn, expected):
                return cls(conn, path, identity)
        except sqlite3.Error as exc:
            if conn is not None:
                conn.close()
            if _is_corrupt(exc):
                return None
            raise
        conn.close()
        return None

    def close(self) -> None:
        self._conn.close()

    def discard(self) -> None:
        """Close and delete this file (it proved corrupt); the next open rebuilds it."""
        self.close()
        with contextlib.suppress(OSError, LockBusy):
            _discard(self.path, self._identity)

    # -- transactions --------------------------------------------------------------------

    @contextlib.contextmanager
    def reading(self) -> Iterator[None]:
        """One snapshot of the index for everything done inside (WAL: nobody waits)."""
        with self._transaction("BEGIN"):
            yield

    @contextlib.contextmanager
    def writing(self) -> Iterator[None]:
        """The write lock, taken at once (waiting for another writer up to the busy timeout),
        so what is read inside cannot change before it is written back."""
        with self._transaction("BEGIN IMMEDIATE"):
            yield

    @contextlib.contextmanager
    def _transaction(self, begin: str) -> Iterator[None]:
        self._execute(begin)
        try:
            yield
        except BaseException:
            with contextlib.suppress(sqlite3.Error):
                self._conn.execute("ROLLBACK")
            raise
        self._execute("COMMIT")

    def _execute(self, sql: str, args: tuple[object, ...] = ()) -> sqlite3.Cursor:
        try:
            return self._conn.execute(sql, args)
        except sqlite3.Error as exc:
            raise _store_error(self.path, exc) from exc

    # -- reading -------------------------------------------------------------------------

    def stamps(self) -> dict[str, bytes]:
        """Every file the index knows, with the stamp it was read at; the stamp of a file read
        too soon after a change is marked so that no stamp taken later equals it."""
        return self._fetch(dict, "SELECT path, stamp FROM files")

    def statuses(self) -> dict[str, int]:
        """The files recorded as anything but TEXT (few, in a workspace of text), by status."""
        return self._fetch(dict, "SELECT path, status FROM files WHERE status != 0")

    def row(self, path: str) -> Row:
        """``(status, id, crc)`` of a file the index knows."""
        found = self._execute("SELECT status, id, crc FROM files WHERE path = ?", (path,))
        row = found.fetchone()
        if row is None:
            raise IndexCorrupt(f"the search index {str(self.path)!r} lost the row of {path!r}")
        return (row[0], row[1], row[2])

    def text(self, path: str) -> str:
        """The stored text of a TEXT file, checked against the checksum recorded with it.

        Kept as UTF-8 bytes: the checksum is taken of them, and one decode is all it costs.
        """
        found = self._execute(
            "SELECT t.body, f.crc FROM files f JOIN texts t ON t.id = f.id WHERE f.path = ?",
            (path,),
        ).fetchone()
        if found is None or not isinstance(found[0], bytes) or checksum(found[0]) != found[1]:
            raise IndexCorrupt(f"the search index {str(self.path)!r} has no good text of {path!r}")
        try:
            return found[0].decode()
        except UnicodeDecodeError:
            raise IndexCorrupt(f"the search index {str(self.path)!r} mangled {path!r}") from None

    def matching(self, expression: str) -> set[str]:
        """The files whose text holds every trigram ``expression`` (FTS5 syntax) asks for."""
        return self._fetch(
            _first_set,
            "SELECT f.path FROM grams JOIN files f ON f.id = grams.rowid WHERE grams MATCH ?",
            (expression,),
        )

    def _fetch(
        self, collect: Callable[[sqlite3.Cursor], _T], sql: str, args: tuple[object, ...] = ()
    ) -> _T:
        cursor = self._execute(sql, args)
        try:
            return collect(cursor)
        except sqlite3.Error as exc:  # rows are read as they are iterated
            raise _store_error(self.path, exc) from exc

    # -- writing (inside :meth:`writing`) ------------------------------------------------

    def put(self, path: str, stamp: bytes, status: int, text: str = "") -> None:
        """Record what ``path`` (without a row) was read to be."""
        text_id: int | None = None
        crc: int | None = None
        if status == TEXT:
            data = text.encode()
            cursor = self._execute("INSERT INTO texts(body) VALUES (?)", (data,))
            text_id = cursor.lastrowid
            self._execute(
                "INSERT INTO grams(rowid, body) VALUES (?, ?)", (text_id, indexed_form(text))
            )
            crc = checksum(data)
        self._execute(
            "INSERT INTO files(path, stamp, status, id, crc) VALUES (?, ?, ?, ?, ?)",
            (path, stamp, status, text_id, crc),
        )

    def restamp(self, path: str, stamp: bytes) -> None:
        """``path`` was read again and found unchanged: only its stamp is new."""
        self._execute("UPDATE files SET stamp = ? WHERE path = ?", (stamp, path))

    def drop(self, path: str, row: Row) -> None:
        """Forget ``path``; its text leaves the trigram index too (a contentless FTS5 table
        forgets a text only when given it again, exactly as it was indexed)."""
        if row[0] == TEXT:
            old = self.text(path)
            self._execute(
                "INSERT INTO grams(grams, rowid, body) VALUES ('delete', ?, ?)",
                (row[1], indexed_form(old)),
            )
            self._execute("DELETE FROM texts WHERE id = ?", (row[1],))
        self._execute("DELETE FROM files WHERE path = ?", (path,))


def _first_set(cursor: sqlite3.Cursor) -> set[str]:
    return {str(first) for (first,) in cursor}


def _store_error(path: Path, exc: sqlite3.Error) -> StoreError:
    if _is_corrupt(exc):
        return IndexCorrupt(f"the search index {str(path)!r} is corrupt: {exc}")
    return StoreError(f"the search index {str(path)!r} failed: {exc}")


def _connect(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
    try:
        _switch_to_wal(conn)
        conn.execute("PRAGMA synchronous = NORMAL")  # WAL: a crash loses a write, never the file
        conn.execute("PRAGMA journal_size_limit = 67108864")  # a first build's WAL shrinks back
    except BaseException:
        conn.close()
        raise
    return conn


def _switch_to_wal(conn: sqlite3.Connection) -> None:
    """``PRAGMA journal_mode = WAL``, retried: on a new file several openers at once get
    "database is locked" at once instead of waiting for the busy timeout."""
    deadline = time.monotonic() + BUSY_TIMEOUT_S
    while True:
        try:
            conn.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() >= deadline:
                raise
            time.sleep(0.01)


def _ensure_schema(conn: sqlite3.Connection, expected: dict[str, str]) -> bool:
    """Whether ``conn`` is an index of the expected format, creating the schema in an empty
    file; False when the file is something else (it is then discarded)."""
    found = _meta(conn)
    if found is None:
        conn.execute("BEGIN IMMEDIATE")
        try:
            found = _meta(conn)
            if found is None and _is_empty(conn):
                for statement in _SCHEMA.split(";"):
                    if statement.strip():
                        conn.execute(statement)
                conn.executemany("INSERT INTO meta(key, value) VALUES (?, ?)", expected.items())
                found = expected
            conn.execute("COMMIT")
        except BaseException:
            with contextlib.suppress(sqlite3.Error):
                conn.execute("ROLLBACK")
            raise
    return found == expected


def _meta(conn: sqlite3.Connection) -> dict[str, str] | None:
    try:
        rows = conn.execute("SELECT key, value FROM meta").fetchall()
    except sqlite3.OperationalError as exc:
        if "no such table" in str(exc):
            return None
        raise
    return {str(key): str(value) for key, value in rows}


def _is_empty(conn: sqlite3.Connection) -> bool:
    (count,) = conn.execute("SELECT count(*) FROM sqlite_schema").fetchone()
    return bool(count == 0)


def _discard(path: Path, broken: tuple[int, int] | None) -> None:
    """Delete the index file and its WAL, holding a lock beside it, unless another process
    already replaced the file found unusable (``broken``: its device and inode, taken before
    it was opened). A process still reading the old file keeps its own (now nameless) copy
    and finishes its search on it."""
    with acquire(path.with_name(path.name + ".lock"), f"rebuild {os.getpid()}", wait_s=30):
        if broken is not None and _identity(path) != broken:
            return  # someone else rebuilt it meanwhile
        for suffix in ("", "-wal", "-shm"):
            with contextlib.suppress(FileNotFoundError):
                path.with_name(path.name + suffix).unlink()


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        st = path.stat()
    except FileNotFoundError:
        return None
    return (st.st_dev, st.st_ino)
