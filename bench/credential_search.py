"""Where a value lies under a folder: in every file's bytes, every git object, every SQLite cell.

``bench.credential_paths`` asks, after squad stored one message, whether any of the message's
credential values can be read back from what squad left on disk. A value is looked for as

- its UTF-8 bytes;
- its bytes inside a JSON string, both with non-ASCII kept and escaped as ``\\uXXXX`` (log lines,
  audit records, JSON columns, the summary cache);
- with its whitespace runs made single spaces, as ``squad memory remember`` writes a fact;
- for a value of several lines, each line of 12 characters or more (as the corpus tests count
  a private key: one line of it is a leak), but for armour (``-----BEGIN ...``) and armour
  headers (``Comment: ...``), which are the same in every key of a kind.

Matches are byte-exact and case-sensitive. Where the message has no letter or digit right next
to the value, a match must not have one either: a PIN such as ``8023`` is then not "found" in a
hex digest or a microsecond timestamp that happens to contain those digits.

Searched: every regular file's bytes (SQLite files with their free pages and journals, git's
compressed objects as they are); every object of every git repository (a folder holding
``HEAD`` and ``objects/``), read through libgit2, so loose and packed objects alike are searched
decompressed and resolved; every cell of every table of every SQLite database (found by its
header, whatever its name), text as UTF-8 and blobs as they are. Not searched: tokenised or
lowercased copies (the fact index's terms), hashes, and anything compressed other than git's
objects.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
from collections import Counter
from collections.abc import Iterator, Mapping
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

__all__ = ["MIN_LINE", "Needle", "blobs", "count_hits", "where"]

MIN_LINE = 12
"""A line of a multi-line value this long or longer is a leak on its own."""
_SQLITE_HEADER = b"SQLite format 3\x00"
_HEADER = re.compile(r"[A-Za-z][A-Za-z-]*: ")
K = TypeVar("K")


@dataclass(frozen=True)
class Form:
    """One byte form of a value and whether a match needs a non-alphanumeric neighbour there."""

    data: bytes
    bounded_left: bool = False
    bounded_right: bool = False

    def count(self, blob: bytes) -> int:
        found, start = 0, blob.find(self.data)
        while start >= 0:
            end = start + len(self.data)
            if not (self.bounded_left and _alnum_at(blob, start - 1)) and not (
                self.bounded_right and _alnum_at(blob, end)
            ):
                found += 1
            start = blob.find(self.data, start + 1)
        return found


@dataclass(frozen=True)
class Needle:
    """Everything that counts as one value (or marker) found: any of its byte forms."""

    forms: tuple[Form, ...]

    @classmethod
    def literal(cls, text: str) -> Needle:
        """Exactly ``text`` (a marker such as ``[REDACTED:``), no boundaries."""
        return cls((Form(text.encode()),))

    @classmethod
    def for_value(cls, value: str, message: str) -> Needle:
        """The forms of ``value`` as squad could store it; boundaries as ``message`` has them."""
        at = message.find(value)
        left = value[:1].isascii() and value[:1].isalnum()
        right = value[-1:].isascii() and value[-1:].isalnum()
        if at >= 0:
            left = left and not _alnum_char(message[at - 1 : at])
            right = right and not _alnum_char(message[at + len(value) : at + len(value) + 1])
        texts = [
            value,
            json.dumps(value, ensure_ascii=False)[1:-1],
            json.dumps(value)[1:-1],
            " ".join(value.split()),
        ]
        forms = [Form(t.encode(), left, right) for t in dict.fromkeys(texts) if t]
        if "\n" in value.strip():
            lines = (line.strip() for line in value.splitlines())
            forms += [Form(line.encode()) for line in dict.fromkeys(lines) if _keyed(line)]
        return cls(tuple(forms))

    def count(self, blob: bytes) -> int:
        return sum(form.count(blob) for form in self.forms)


def _keyed(line: str) -> bool:
    """Whether one line of a multi-line value is a leak alone: long enough, and not armour
    (``-----BEGIN ... KEY-----``) or an armour header (``Comment: GnuPG v2``), which every key
    of its kind shares."""
    return len(line) >= MIN_LINE and not line.startswith("-----") and not _HEADER.match(line)


def _alnum_char(char: str) -> bool:
    return char.isascii() and char.isalnum()


def _alnum_at(blob: bytes, index: int) -> bool:
    return 0 <= index < len(blob) and blob[index] < 128 and chr(blob[index]).isalnum()


def blobs(root: Path) -> Iterator[tuple[str, bytes]]:
    """``(location, bytes)`` for everything stored under ``root``; locations are relative to it
    (``file:ws/x/memory.md``, ``git:ws/x/.git:<oid>``, ``sqlite:home/squad.db:table.column``), so
    two copies of one layout name the same things alike."""
    repositories: list[Path] = []
    databases: list[Path] = []
    for folder, names, files in os.walk(root):
        here = Path(folder)
        if "HEAD" in files and "objects" in names:
            repositories.append(here)
        for name in sorted(files):
            path = here / name
            if path.is_symlink() or not path.is_file():
                continue
            data = path.read_bytes()
            if data.startswith(_SQLITE_HEADER):
                databases.append(path)
            yield f"file:{path.relative_to(root).as_posix()}", data
    for repository in repositories:
        yield from _git_objects(repository, repository.relative_to(root).as_posix())
    for database in databases:
        yield from _sqlite_cells(database, database.relative_to(root).as_posix())


def _git_objects(repository: Path, name: str) -> Iterator[tuple[str, bytes]]:
    from squad.history.engine import git

    repo = git().Repository(str(repository))
    try:
        for oid in repo.odb:
            _, data = repo.odb.read(oid)
            yield f"git:{name}:{oid}", bytes(data)
    finally:
        repo.free()


def _sqlite_cells(database: Path, name: str) -> Iterator[tuple[str, bytes]]:
    with closing(sqlite3.connect(database)) as db:  # a throw-away copy: no need for read-only
        tables = [row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        for table in tables:
            try:
                cursor = db.execute(f'SELECT * FROM "{table.replace(chr(34), chr(34) * 2)}"')
            except sqlite3.OperationalError:  # a virtual table whose module is not loaded
                continue
            columns = [d[0] for d in cursor.description]
            for row in cursor:
                for column, cell in zip(columns, row, strict=True):
                    if isinstance(cell, str):
                        yield f"sqlite:{name}:{table}.{column}", cell.encode("utf-8", "replace")
                    elif isinstance(cell, bytes):
                        yield f"sqlite:{name}:{table}.{column}", cell


def count_hits(
    found: Iterator[tuple[str, bytes]] | list[tuple[str, bytes]], needles: Mapping[K, Needle]
) -> dict[K, Counter[str]]:
    """For each needle, how many times it occurs at each location."""
    hits: dict[K, Counter[str]] = {key: Counter() for key in needles}
    for location, data in found:
        for key, needle in needles.items():
            n = needle.count(data)
            if n:
                hits[key][location] += n
    return hits


def where(hits: Counter[str], baseline: Counter[str]) -> list[str]:
    """The places (coarse: a file, a repository's objects, a table's column) where ``hits``
    holds more occurrences than ``baseline`` (the same search of the untouched template)."""
    places = {_place(loc) for loc, n in hits.items() if n > baseline.get(loc, 0)}
    return sorted(places)


def _place(location: str) -> str:
    kind, _, rest = location.partition(":")
    if kind == "git":
        return f"{rest.rsplit(':', 1)[0]} (git objects)"
    if kind == "sqlite":
        database, _, column = rest.partition(":")
        return f"{database} {column}"
    return rest
