"""Whether a raw value reached the disk anywhere: the check behind "credentials never enter
memory or history", for every write path alike.

A value counts as leaked when its bytes occur in any file under the given folders (the home,
the workspaces, the store's and the checkpoints' SQLite files with their ``-wal`` companions,
logs, caches), in any column of any table of any SQLite database there (read through SQLite,
so rows still only in the write-ahead log count), or in any object of a git repository there
(a workspace's history: its objects are compressed, so their bytes are read through libgit2,
reachable or not). Its JSON-escaped spellings count too.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path

__all__ = ["assert_nowhere_on_disk", "places_holding"]

_SQLITE_HEADER = b"SQLite format 3\x00"


def _spellings(value: str) -> set[bytes]:
    return {
        value.encode(),
        json.dumps(value)[1:-1].encode(),
        json.dumps(value, ensure_ascii=True)[1:-1].encode(),
    }


def _files(root: Path) -> Iterator[Path]:
    if root.is_file():
        yield root
        return
    for path in sorted(root.rglob("*")):
        if path.is_file() and not path.is_symlink():
            yield path


def _in_database(path: Path, needles: set[bytes]) -> list[str]:
    found: list[str] = []
    connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        tables = [
            name
            for (name,) in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        ]
        for table in tables:
            try:
                columns = [row[1] for row in connection.execute(f'PRAGMA table_info("{table}")')]
            except sqlite3.DatabaseError:
                continue  # a virtual table whose module this build lacks
            for column in columns:
                for needle in needles:
                    query = (
                        f'SELECT count(*) FROM "{table}" '
                        f'WHERE instr(CAST("{column}" AS BLOB), ?) > 0'
                    )
                    try:
                        (count,) = connection.execute(query, (needle,)).fetchone()
                    except sqlite3.DatabaseError:
                        break
                    if count:
                        found.append(f"{path} table {table}.{column} ({count} rows)")
                        break
    finally:
        connection.close()
    return found


def _in_git(path: Path, needles: set[bytes]) -> list[str]:
    from squad.history.engine import git

    repository = git().Repository(str(path))
    found: list[str] = []
    for oid in repository.odb:
        _, data = repository.odb.read(oid)
        if any(needle in data for needle in needles):
            found.append(f"{path} object {oid}")
    return found


def places_holding(value: str, *roots: Path) -> list[str]:
    """Every place under ``roots`` that holds ``value``: files, SQLite rows, git objects."""
    assert value, "an empty value is everywhere"
    needles = _spellings(value)
    found: list[str] = []
    for root in roots:
        if not root.exists():
            continue
        for path in _files(root):
            data = path.read_bytes()
            if any(needle in data for needle in needles):
                found.append(str(path))
            if data.startswith(_SQLITE_HEADER):
                found += _in_database(path, needles)
            if path.name == "HEAD" and (path.parent / "objects").is_dir():
                found += _in_git(path.parent, needles)
    return found


def assert_nowhere_on_disk(value: str, *roots: Path) -> None:
    """Fail, naming where, when ``value`` is anywhere under ``roots`` (see the module)."""
    assert roots, "name the folders to search"
    searched = [root for root in roots if root.exists()]
    assert searched, f"none of {[str(r) for r in roots]} exists: nothing was searched"
    found = places_holding(value, *roots)
    assert found == [], f"the raw value is on disk in: {found}"
