"""Full-text search over a workspace for ``squad ws search``: grep, minus the surprises.

Every text file is searched line by line (:mod:`squad.text.grep`: each line gets a time
limit, so a pattern that backtracks cannot run for ages); binaries, links, special files and
files over a size limit are skipped and listed with their reason, so an empty result never
hides that nothing was read. Lines are split on ``\\n`` (a trailing ``\\r`` dropped), as grep does.

Given a cache folder, a search keeps a trigram index of the workspace there and answers from
it (:mod:`squad.workspace.trigram_index`), with exactly the result of reading every file.
"""

from __future__ import annotations

import os
import stat
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

from squad.errors import StoreError, UsageError
from squad.text.grep import (
    DEFAULT_TIMEOUT_S,
    LineMatch,
    LineMatchDict,
    SearchPattern,
    Skipped,
    SkippedDict,
    check_timeout,
    compile_query,
    contains,
    find_spans,
    matching_lines,
    split_lines,
    with_context,
)
from squad.workspace.inspect import _check_root, _read_text, _walk

if TYPE_CHECKING:
    from squad.workspace.trigram_index import StoredTexts

__all__ = [
    "FileMatches",
    "FileMatchesDict",
    "LineMatch",
    "SearchResult",
    "SearchResultDict",
    "Skipped",
    "search",
]


class FileMatchesDict(TypedDict):
    path: str
    matches: list[LineMatchDict]


class SearchResultDict(TypedDict):
    """:meth:`SearchResult.to_dict`: what ``squad ws search --json`` prints (with the squad)."""

    query: str
    files: list[FileMatchesDict]
    match_count: int
    files_scanned: int
    files_skipped: dict[str, int]
    skipped: list[SkippedDict]
    max_file_bytes: int
    truncated: bool


@dataclass(frozen=True)
class FileMatches:
    """The matching lines of one file (posix path relative to the workspace)."""

    path: str
    matches: list[LineMatch]

    def to_dict(self) -> FileMatchesDict:
        return {"path": self.path, "matches": [m.to_dict() for m in self.matches]}


@dataclass(frozen=True)
class SearchResult:
    """What was found, what was read and what was skipped (each file with its reason)."""

    query: str
    files: list[FileMatches]
    files_scanned: int
    skipped: list[Skipped]
    truncated: bool
    max_file_bytes: int
    """The size limit files were read up to (what ``too_large`` means)."""

    @property
    def files_skipped(self) -> dict[str, int]:
        """Skipped files counted by reason, reasons sorted."""
        return dict(sorted(Counter(s.reason for s in self.skipped).items()))

    @property
    def match_count(self) -> int:
        """Matching lines in all files (not spans)."""
        return sum(len(f.matches) for f in self.files)

    def to_dict(self) -> SearchResultDict:
        return {
            "query": self.query,
            "files": [f.to_dict() for f in self.files],
            "match_count": self.match_count,
            "files_scanned": self.files_scanned,
            "files_skipped": self.files_skipped,
            "skipped": [s.to_dict() for s in self.skipped],
            "max_file_bytes": self.max_file_bytes,
            "truncated": self.truncated,
        }


def search(
    root: Path,
    query: str,
    *,
    regex: bool = False,
    case_sensitive: bool = False,
    context: int = 0,
    max_matches: int = 1000,
    max_file_bytes: int = 5_000_000,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    index_dir: Path | None = None,
) -> SearchResult:
    """Every line of every text file below ``root`` that matches ``query``, files by path.

    Stops after ``max_matches`` matching lines; ``truncated`` is set only when a further
    match exists, so a result of exactly ``max_matches`` lines is complete. A line that takes
    more than ``timeout_s`` to match ends the search with a UsageError naming file and line;
    nothing found before it is returned.

    With ``index_dir`` (a cache folder outside the workspace, such as ``$SQUAD_HOME/index``)
    the search keeps a trigram index of the workspace there and answers from it
    (:mod:`squad.workspace.trigram_index`): the same result, without reading every file each
    time. When the index cannot be used (the folder is read-only, it lies inside the
    workspace, the file is corrupt), this search reads every file as it would without one.
    """
    root = _check_root(root)
    pattern = compile_query(query, regex=regex, case_sensitive=case_sensitive)
    check_timeout(timeout_s)
    for name, value, least in (
        ("context", context, 0),
        ("max_matches", max_matches, 1),
        ("max_file_bytes", max_file_bytes, 0),
    ):
        if value < least:
            raise UsageError(f"{name} must be {least} or more, got {value!r}")
    limits = _Limits(context, max_matches, max_file_bytes, timeout_s)
    if index_dir is not None:
        found = _search_indexed(root, index_dir, query, pattern, regex, case_sensitive, limits)
        if found is not None:
            return found
    # Scan in path order so that a cut at max_matches keeps the first files of the listing.
    nodes = sorted((n for n in _walk(root) if n.kind != "dir"), key=lambda n: n.rel)
    entries = [(node.rel, node.st) for node in nodes]
    return _collect(root, query, entries, pattern, regex, limits, None)


@dataclass(frozen=True)
class _Limits:
    context: int
    max_matches: int
    max_file_bytes: int
    timeout_s: float


def _search_indexed(
    root: Path,
    index_dir: Path,
    query: str,
    pattern: SearchPattern,
    regex: bool,
    case_sensitive: bool,
    limits: _Limits,
) -> SearchResult | None:
    """The search answered with the index, or None when the index cannot be used."""
    from squad.workspace import trigram_index as index
    from squad.workspace.index_store import IndexCorrupt, IndexStore

    if _is_inside(index_dir, root):
        return None  # the index would be part of what it indexes, changing on every search
    started = index.now_ns()
    entries = index.stat_walk(root)
    try:
        store = IndexStore.open(index_dir, root)
    except StoreError:
        return None
    try:
        with index.refreshed(store, root, entries, now_ns=started) as fresh:
            candidates = None
            if not regex and len(query) >= 3:  # a trigram index knows nothing shorter
                expression = _expression(query, pattern, case_sensitive)
                candidates = None if expression is None else store.matching(expression)
            stored = index.StoredTexts(store, fresh.vouched, candidates)
            return _collect(root, query, entries, pattern, regex, limits, stored)
    except IndexCorrupt:
        store.discard()
        return None
    except StoreError:
        return None
    finally:
        store.close()


def _expression(query: str, pattern: SearchPattern, case_sensitive: bool) -> str | None:
    from squad.workspace.trigram_index import FoldProbe, match_expression

    probe = None if case_sensitive else FoldProbe()  # folding matters only without case
    try:
        return match_expression(query, pattern, case_sensitive=case_sensitive, probe=probe)
    finally:
        if probe is not None:
            probe.close()


def _is_inside(folder: Path, root: Path) -> bool:
    try:
        folder.resolve().relative_to(root.resolve())
    except ValueError:
        return False
    return True


def _collect(
    root: Path,
    query: str,
    entries: list[tuple[str, os.stat_result]],
    pattern: SearchPattern,
    regex: bool,
    limits: _Limits,
    stored: StoredTexts | None,
) -> SearchResult:
    """The matches in ``entries`` (a walk's non-folders, in path order): texts the index
    vouches for come from ``stored`` (skipped when it knows they hold no match), the rest
    from disk."""
    max_file_bytes, timeout_s = limits.max_file_bytes, limits.timeout_s
    by_line_starts = stored is not None and not regex and "\n" not in query and "\r" not in query
    skipped: list[Skipped] = []
    found: list[FileMatches] = []
    scanned, remaining, truncated = 0, limits.max_matches, False
    # Texts the index knows to hold no match (most files, for most queries) are only counted:
    # the loop sees the others, and each quiet one before where it stops counts as scanned.
    quiet = set() if stored is None else stored.quiet_within(max_file_bytes, entries)
    todo = [(position, entry) for position, entry in enumerate(entries) if entry[0] not in quiet]
    quiet_seen = len(entries) - len(todo)
    for done, (position, (rel, st)) in enumerate(todo):
        quiet_seen = position - done
        if not stat.S_ISREG(st.st_mode):
            skipped.append(Skipped(rel, "link" if stat.S_ISLNK(st.st_mode) else "special"))
            continue
        if st.st_size > max_file_bytes:
            skipped.append(Skipped(rel, "too_large"))
            continue
        known = "disk" if stored is None else stored.lookup(rel)
        if known == "binary":
            skipped.append(Skipped(rel, "binary"))
            continue
        if known == "disk":
            read = _read_text(root / rel, max_file_bytes)
            if read.status != "text" or read.truncated:
                skipped.append(Skipped(rel, _skip_reason(read.status, read.truncated)))
                continue
            scanned += 1
            text = read.text
        else:
            scanned += 1
            if known == "absent" or stored is None:
                continue  # the index holds no file with the query's trigrams by this name
            text = stored.text(rel)
        if by_line_starts:
            matches, truncated = _literal_matches(
                pattern, text, remaining, limits.context, timeout_s, rel
            )
        else:
            if not regex and not contains(pattern, text, timeout_s=timeout_s, where=rel):
                continue  # a literal found nowhere in the file is on none of its lines
            lines = split_lines(text)
            hits = matching_lines(
                pattern, lines, limit=remaining + 1, timeout_s=timeout_s, source=rel
            )
            if len(hits) > remaining:
                truncated, hits = True, hits[:remaining]
            matches = with_context(lines, hits, limits.context) if hits else []
        if matches:
            found.append(FileMatches(rel, matches))
            remaining -= len(matches)
        if truncated:
            break
    else:
        quiet_seen = len(entries) - len(todo)
    return SearchResult(query, found, scanned + quiet_seen, skipped, truncated, max_file_bytes)


def _literal_matches(
    pattern: SearchPattern, text: str, remaining: int, context: int, timeout_s: float, rel: str
) -> tuple[list[LineMatch], bool]:
    """What :func:`matching_lines` and :func:`with_context` make of ``text`` for a literal with
    no ``\\n`` or ``\\r`` (and whether a match past ``remaining`` exists), without splitting the
    whole text: only the lines where a match in the whole text starts are matched again.

    Such a match lies within one line, and a line holding a match holds the first one found
    from the line's start, so no line is missed; each line found is matched on its own, as
    :func:`matching_lines` does, and only the lines shown are cut out of the text.
    """
    hits: list[tuple[int, list[tuple[int, int]]]] = []
    bounds: dict[int, tuple[int, int]] = {}
    line, offset, last = 0, 0, -1
    for start, _ in find_spans(pattern, text, timeout_s=timeout_s, where=rel):
        line += text.count("\n", offset, start)
        offset = start
        if line == last:
            continue
        last = line
        begin, end = text.rfind("\n", 0, start) + 1, text.find("\n", start)
        end = len(text) if end < 0 else end
        body = text[begin:end].removesuffix("\r")
        spans = find_spans(pattern, body, timeout_s=timeout_s, where=f"{rel}:{line + 1}")
        if spans:
            hits.append((line, spans))
            bounds[line] = (begin, end)
            if len(hits) > remaining:
                break
    truncated = len(hits) > remaining
    del hits[remaining:]
    if not hits:
        return [], truncated
    return with_context(_lines_around(text, hits, bounds, context), hits, context), truncated


def _lines_around(
    text: str,
    hits: list[tuple[int, list[tuple[int, int]]]],
    bounds: dict[int, tuple[int, int]],
    context: int,
) -> list[str]:
    """:func:`split_lines` of ``text`` as far as :func:`with_context` reads it: the hit lines
    (at ``bounds``, their offsets) and ``context`` lines either side; the rest left empty."""
    count = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
    lines = [""] * count
    for index, _ in hits:
        begin, end = bounds[index]
        lines[index] = text[begin:end].removesuffix("\r")
        before_begin = begin
        for above in range(index - 1, max(index - context, 0) - 1, -1):
            stop = before_begin - 1
            before_begin = text.rfind("\n", 0, stop) + 1
            lines[above] = text[before_begin:stop].removesuffix("\r")
        after_end = end
        for below in range(index + 1, min(index + context, count - 1) + 1):
            begin_below = after_end + 1
            after_end = text.find("\n", begin_below)
            after_end = len(text) if after_end < 0 else after_end
            lines[below] = text[begin_below:after_end].removesuffix("\r")
    return lines


def _skip_reason(status: str, truncated: bool) -> str:
    if truncated:
        return "too_large"  # the file grew past the limit after it was listed
    return {"missing": "vanished", "folder": "special"}.get(status, status)
