"""What makes ``squad ws search`` fast: a trigram index that follows the files, never stale.

Each search walks the workspace (``lstat`` only) and compares every file's stamp (size,
mtime, ctime, inode, device) with the one recorded when the index last read it; files whose
stamp changed, new files and files read too soon after they were written are read again,
vanished ones are forgotten, and only then is the query answered. "Too soon" is git's racy
rule: a file whose mtime or ctime was within :data:`RACY_NS` of the time it was read may have
changed again within the same timestamp tick, so it is read again on each search until a read
happens later than that. Nothing is kept in memory between searches, so changes made while no
squad process ran are caught the same way.

A literal query of three characters or more asks the index which files hold its trigrams
(FTS5 ``detail=none``: an AND of trigrams, each an OR of its case variants) and runs the
ordinary line matcher on those files' stored texts only; a file the index does not vouch for
is read from disk; regexes and shorter queries run the matcher over every stored text. The
answer is exactly the full scan's (:func:`squad.workspace.search.search` without an index).

Case folding is where an index can silently miss: FTS5 folds case with SQLite's own tables,
the matcher with the ``regex`` module's (a newer Unicode, plus ``i`` ~ ``İ``), and the two
disagree on some characters. So for each query character, the characters ``regex`` takes for
it are asked of SQLite's tokenizer itself (:class:`FoldProbe`), and a trigram lists one variant
per fold SQLite gives them; a trigram with too many variants is left out (fewer trigrams only
mean more candidates, never fewer matches).
"""

from __future__ import annotations

import contextlib
import itertools
import operator
import os
import sqlite3
import stat
import struct
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal, TypeAlias

from squad.errors import StoreError, WorkspaceError
from squad.text.grep import SearchPattern
from squad.workspace.index_store import BINARY, TEXT, UNREADABLE, IndexStore, Row
from squad.workspace.inspect import _read_text
from squad.workspace.layout import HIDDEN_AT_ROOT

__all__ = [
    "INDEX_MAX_BYTES",
    "RACY_NS",
    "Entry",
    "FoldProbe",
    "Refresh",
    "StoredTexts",
    "match_expression",
    "now_ns",
    "racy",
    "refreshed",
    "stamp",
    "stat_walk",
]

INDEX_MAX_BYTES: Final = 5_000_000
"""Largest file the index stores (``search``'s default ``max_file_bytes``); a larger one is
read from disk when a search allows it."""
RACY_NS: Final = 2_000_000_000
"""A file whose mtime or ctime is this close to the time it was read is read again by the
next search: coarse timestamps (FAT's 2 s) cannot tell a later change in the same tick."""
MAX_TRIGRAMS: Final = 24
"""Trigrams asked of the index per query; more narrow little once a few are rare."""
MAX_VARIANTS: Final = 8
"""Case variants one trigram may list (``iii`` has eight when ``i`` has two folds)."""

Entry: TypeAlias = tuple[str, os.stat_result]
"""A walked entry that is not a folder: its posix path below the root and its ``lstat``."""

_S_IFMT, _S_IFDIR, _S_IFREG = 0o170000, stat.S_IFDIR, stat.S_IFREG
_BY_DESCRIPTOR = os.scandir in os.supports_fd and os.stat in os.supports_dir_fd
_by_path = operator.itemgetter(0)
_FOLDER_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)
_STAMP = struct.Struct("<qqqQQ")
_RACY = b"racy"
_STATUS = {"text": TEXT, "binary": BINARY, "unreadable": UNREADABLE}
"""What the index records of a read; any other outcome (vanished, now a folder) it does not."""


def stat_walk(root: Path) -> list[Entry]:
    """Every entry below ``root`` that is not a folder, sorted by path, with its ``lstat``.

    What :func:`squad.workspace.inspect._walk` yields (links listed, never entered; an entry
    that vanishes mid-walk left out; a folder that cannot be read a WorkspaceError), without
    the objects it builds per entry, since a search walks the whole workspace every time;
    and where the OS allows, each folder is listed through a descriptor, so an entry's
    ``lstat`` looks up one name instead of its whole path again.
    """
    found: list[Entry] = []
    add = found.append
    folders = [(os.fspath(root), "")]
    while folders:
        folder, prefix = folders.pop()
        handle = _open_folder(folder)
        if handle is None:
            continue  # it vanished since it was listed
        try:
            for entry in _entries(folder, handle):
                name = entry.name
                if not prefix and name in HIDDEN_AT_ROOT:
                    continue
                try:
                    st = entry.stat(follow_symlinks=False)
                except FileNotFoundError:
                    continue
                if st.st_mode & _S_IFMT == _S_IFDIR:
                    below = os.path.join(folder, name)  # noqa: PTH118  # a Path costs more
                    folders.append((below, f"{prefix}{name}/"))
                else:
                    add((prefix + name, st))
        finally:
            if isinstance(handle, int):
                os.close(handle)
    found.sort(key=_by_path)
    return found


def _open_folder(folder: str) -> int | str | None:
    """A descriptor of ``folder`` (its path where scandir takes no descriptor); None when it
    is gone."""
    if not _BY_DESCRIPTOR:
        return folder
    try:
        return os.open(folder, _FOLDER_FLAGS)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise WorkspaceError(f"cannot read folder {folder!r}: {exc.strerror}") from exc


def _entries(folder: str, handle: int | str) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(handle) as scan:
            return list(scan)
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise WorkspaceError(f"cannot read folder {folder!r}: {exc.strerror}") from exc


def stamp(st: os.stat_result) -> bytes | None:
    """What tells a file's versions apart without reading it: size, mtime, ctime (which no
    one can set back), inode (a file replaced by a rename) and device; None when a field is
    out of range (a timestamp past 2262): such a file is read on every search."""
    try:
        return _STAMP.pack(st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev)
    except struct.error:
        return None


def racy(st: os.stat_result, read_at_ns: int) -> bool:
    """Whether ``st``'s timestamps are too close to ``read_at_ns`` (or after it) to vouch for
    what was read then: a change in the same tick would leave them as they are."""
    return max(st.st_mtime_ns, st.st_ctime_ns) >= read_at_ns - RACY_NS


def _recorded_stamp(st: os.stat_result, read_at_ns: int) -> bytes:
    """The stamp to record for a file read at ``read_at_ns``: a racy file's is marked so that
    it equals no stamp taken later, and the next search reads the file again."""
    taken = stamp(st)
    if taken is None:
        return _RACY
    return taken + _RACY if racy(st, read_at_ns) else taken


# -- freshness -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Refresh:
    """What one search found of the index: the files it vouches for, and what it redid."""

    vouched: set[str]
    """Files whose recorded stamp matched, or that were just read again and recorded; what
    the index holds of any other file is not used."""
    reread: tuple[str, ...] = ()
    """Files read from disk because the index did not vouch for them (new, changed, racy)."""
    dropped: tuple[str, ...] = ()
    """Files the index forgot: vanished, now too large, or no longer a regular file."""


@contextlib.contextmanager
def refreshed(
    store: IndexStore, root: Path, entries: list[Entry], *, now_ns: int
) -> Iterator[Refresh]:
    """The index brought up to date with ``entries`` (a walk of ``root`` begun at ``now_ns``),
    held in one transaction while the caller answers, so the answer reads the very state the
    stamps were checked against, whatever other searches write meanwhile.

    A read transaction when nothing changed; otherwise the write lock, under which the stamps
    are loaded again (another search may have just brought them up to date) before the files
    still out of date are read.
    """
    with store.reading():
        good, stale, gone = _plan(store.stamps(), entries)
        if not stale and not gone:
            yield Refresh(good)
            return
    with store.writing():
        stamps = store.stamps()
        good, stale, gone = _plan(stamps, entries)
        for path in gone:
            store.drop(path, store.row(path))
        for rel, st in stale:
            old = store.row(rel) if rel in stamps else None
            if _reread(store, root, rel, st, old, now_ns):
                good.add(rel)
        yield Refresh(good, tuple(rel for rel, _ in stale), tuple(gone))


def _plan(
    stamps: dict[str, bytes], entries: list[Entry]
) -> tuple[set[str], list[Entry], list[str]]:
    """Split the walk against the index: files it vouches for (their stamp is the one
    recorded, so they are still what was read), files to read, paths to forget.

    Kept to comprehensions, since it looks at every file of the workspace: a file with a
    recorded stamp was indexable when recorded, and one that became anything else since has
    another stamp, so only the few entries not vouched for are looked at further.
    """
    recorded, pack = stamps.get, _STAMP.pack
    try:
        good = {
            rel
            for rel, st in entries
            if recorded(rel)
            == pack(st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev)
        }
    except struct.error:  # a field out of range somewhere: that file is never vouched for
        good = {rel for rel, st in entries if (taken := stamp(st)) and recorded(rel) == taken}
    stale = []
    if len(good) < len(entries):
        stale = _indexable(entry for entry in entries if entry[0] not in good)
    if len(good) == len(stamps):
        return good, stale, []  # every recorded file is still good, so none is gone
    keep = good | {rel for rel, _ in stale}
    return good, stale, sorted(path for path in stamps if path not in keep)


def _indexable(entries: Iterable[Entry]) -> list[Entry]:
    """The entries the index keeps: regular files within its size limit whose names SQLite
    can take (a name that is not UTF-8 is read from disk by every search)."""
    return [
        (rel, st)
        for rel, st in entries
        if st.st_mode & _S_IFMT == _S_IFREG
        and st.st_size <= INDEX_MAX_BYTES
        and (rel.isascii() or _utf8(rel))
    ]


def _utf8(rel: str) -> bool:
    try:
        rel.encode()
    except UnicodeEncodeError:  # undecodable bytes, kept by the walk as lone surrogates
        return False
    return True


def _reread(
    store: IndexStore, root: Path, rel: str, st: os.stat_result, old: Row | None, now_ns: int
) -> bool:
    """Read ``rel`` again and record it; False when the read found nothing the index keeps
    (the file vanished, became something else or grew past the limit: the search reads it
    itself). An unchanged file only gets its new stamp."""
    read = _read_text(root / rel, INDEX_MAX_BYTES)
    status = _STATUS.get(read.status)
    recorded = _recorded_stamp(st, now_ns)
    if old is not None:
        same = status == old[0] and (status != TEXT or store.text(rel) == read.text)
        if same and not read.truncated:
            store.restamp(rel, recorded)
            return True
        store.drop(rel, old)
    if status is None or read.truncated:
        return False
    store.put(rel, recorded, status, read.text)
    return True


# -- the query -----------------------------------------------------------------------------


class StoredTexts:
    """What a search may take from the index instead of the disk, file by file."""

    def __init__(self, store: IndexStore, vouched: set[str], candidates: set[str] | None):
        self._store = store
        self._vouched = vouched
        statuses = store.statuses()
        self._binary = {path for path, status in statuses.items() if status == BINARY}
        self._unreadable = {path for path, status in statuses.items() if status == UNREADABLE}
        self._candidates = candidates
        """The files whose text may hold a match; None: any text may."""
        self._quiet: set[str] = set()
        if candidates is not None:
            self._quiet = vouched - self._binary - self._unreadable - candidates

    def quiet_within(self, max_bytes: int, entries: list[Entry]) -> set[str]:
        """Texts of at most ``max_bytes`` the index vouches for that hold no match (most of
        a workspace, for most queries): the search counts them as scanned and moves on.

        Every vouched file is within :data:`INDEX_MAX_BYTES`, so only a smaller limit needs
        the sizes looked at.
        """
        if max_bytes >= INDEX_MAX_BYTES:
            return self._quiet
        return {rel for rel, st in entries if rel in self._quiet and st.st_size <= max_bytes}

    def lookup(self, rel: str) -> Literal["disk", "binary", "absent", "text"]:
        """``disk``: read the file; ``binary``: skip it; ``absent``: a text without the query
        (per the trigram index); ``text``: take :meth:`text` and match it."""
        if rel not in self._vouched or rel in self._unreadable:
            return "disk"  # permissions are looked at again on every search
        if rel in self._binary:
            return "binary"
        if self._candidates is not None and rel not in self._candidates:
            return "absent"
        return "text"

    def text(self, rel: str) -> str:
        return self._store.text(rel)


class FoldProbe:
    """SQLite's trigram case folding, asked of SQLite: a throw-away in-memory FTS5 table.

    The trigram tokenizer folds one character at a time, so the fold of ``c`` is the token
    that ``ccc`` becomes. A StoreError when SQLite will not say (no FTS5, say).
    """

    def __init__(self) -> None:
        self._conn = sqlite3.connect(":memory:", isolation_level=None)
        try:
            self._conn.execute("CREATE VIRTUAL TABLE probe USING fts5(body, tokenize='trigram')")
            self._conn.execute("CREATE VIRTUAL TABLE terms USING fts5vocab(probe, 'instance')")
        except sqlite3.Error as exc:
            self._conn.close()
            raise StoreError(f"SQLite cannot tell its trigram folding: {exc}") from exc

    def folds(self, chars: Iterable[str]) -> dict[str, str]:
        """Each of ``chars`` (no NUL, no lone surrogate) mapped to what SQLite folds it to."""
        conn = self._conn
        try:
            conn.execute("DELETE FROM probe")
            conn.executemany(
                "INSERT INTO probe(rowid, body) VALUES (?, ?)",
                [(ord(c), c * 3) for c in set(chars)],
            )
            return {chr(doc): term[0] for term, doc, _, _ in conn.execute("SELECT * FROM terms")}
        except sqlite3.Error as exc:
            raise StoreError(f"SQLite cannot tell its trigram folding: {exc}") from exc

    def close(self) -> None:
        self._conn.close()


def _all_cases() -> Callable[[int, int], list[int]] | None:
    """``regex``'s own list of the characters a case-insensitive character matches (what its
    compiler uses); None when a release stops providing it (then no index for such queries)."""
    try:
        from regex import _regex  # type: ignore[import-untyped, unused-ignore]
    except ImportError:
        return None
    found = getattr(_regex, "get_all_cases", None)
    return found if callable(found) else None


def match_expression(
    query: str, pattern: SearchPattern, *, case_sensitive: bool, probe: FoldProbe | None
) -> str | None:
    """An FTS5 query every file holding a match of literal ``query`` satisfies, or None when
    no trigram of it can be asked safely (too short, or every trigram too ambiguous).

    Case-sensitive queries ask the folded trigram (an exact match is a folded match too) and
    need no ``probe``; a case-insensitive one without a probe asks nothing.
    """
    windows = [query[i : i + 3] for i in range(len(query) - 2)]
    windows = [w for w in dict.fromkeys(windows) if _askable(w)]
    if not windows:
        return None
    variants = {c: [c] for c in set("".join(windows))}
    if not case_sensitive:
        cases = _all_cases()
        if cases is None or probe is None:
            return None
        variants = _case_variants(variants, pattern.flags, cases, probe)
    terms = []
    for window in windows:
        combos = list(itertools.islice(itertools.product(*(variants[c] for c in window)), 9))
        if len(combos) > MAX_VARIANTS:
            continue
        quoted = [_quote("".join(combo)) for combo in combos]
        terms.append(quoted[0] if len(quoted) == 1 else f"({' OR '.join(quoted)})")
        if len(terms) == MAX_TRIGRAMS:
            break
    return " AND ".join(terms) if terms else None


def _askable(window: str) -> bool:
    """FTS5 stops a text at a NUL, and a lone surrogate cannot go to SQLite (nor be in text)."""
    return "\x00" not in window and not any("\ud800" <= c <= "\udfff" for c in window)


def _case_variants(
    variants: dict[str, list[str]],
    flags: int,
    cases: Callable[[int, int], list[int]],
    probe: FoldProbe,
) -> dict[str, list[str]]:
    """For each character, one representative per SQLite fold among what ``regex`` matches."""
    matched = {c: [c, *(chr(x) for x in cases(flags, ord(c)))] for c in variants}
    folds = probe.folds(
        d for group in matched.values() for d in group if d != "\x00" and not _surrogate(d)
    )
    out: dict[str, list[str]] = {}
    for c, group in matched.items():
        by_fold: dict[str, str] = {}
        for d in group:
            by_fold.setdefault(folds.get(d, d), d)
        out[c] = list(by_fold.values())
    return out


def _surrogate(c: str) -> bool:
    return "\ud800" <= c <= "\udfff"


def _quote(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'


def now_ns() -> int:
    """The wall clock, in the unit file timestamps use."""
    return time.time_ns()
