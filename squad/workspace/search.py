"""Full-text search over a workspace for ``squad ws search``: grep, minus the surprises.

Every text file is searched line by line (:mod:`squad.text.search`: each line gets a time
limit, so a pattern that backtracks cannot run for ages); binaries, links, special files and
files over a size limit are skipped and listed with their reason, so an empty result never
hides that nothing was read. Lines are split on ``\\n`` (a trailing ``\\r`` dropped), as grep does.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from squad.errors import UsageError
from squad.text.search import (
    DEFAULT_TIMEOUT_S,
    LineMatch,
    Skipped,
    check_timeout,
    compile_query,
    contains,
    matching_lines,
    split_lines,
    with_context,
)
from squad.workspace.inspect import _check_root, _read_text, _walk

__all__ = ["FileMatches", "LineMatch", "SearchResult", "Skipped", "search"]


@dataclass(frozen=True)
class FileMatches:
    """The matching lines of one file (posix path relative to the workspace)."""

    path: str
    matches: list[LineMatch]

    def to_dict(self) -> dict[str, Any]:
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

    def to_dict(self) -> dict[str, Any]:
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
) -> SearchResult:
    """Every line of every text file below ``root`` that matches ``query``, files by path.

    Stops after ``max_matches`` matching lines; ``truncated`` is set only when a further
    match exists, so a result of exactly ``max_matches`` lines is complete. A line that takes
    more than ``timeout_s`` to match ends the search with a UsageError naming file and line;
    nothing found before it is returned.
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
    # Scan in path order so that a cut at max_matches keeps the first files of the listing.
    nodes = sorted((n for n in _walk(root) if n.kind != "dir"), key=lambda n: n.rel)
    skipped: list[Skipped] = []
    found: list[FileMatches] = []
    scanned, remaining, truncated = 0, max_matches, False
    for node in nodes:
        if node.kind != "file":
            skipped.append(Skipped(node.rel, "link" if node.kind == "link" else "special"))
            continue
        if node.st.st_size > max_file_bytes:
            skipped.append(Skipped(node.rel, "too_large"))
            continue
        read = _read_text(node.path, max_file_bytes)
        if read.status != "text" or read.truncated:
            skipped.append(Skipped(node.rel, _skip_reason(read.status, read.truncated)))
            continue
        scanned += 1
        if not regex and not contains(pattern, read.text, timeout_s=timeout_s, where=node.rel):
            continue  # a literal found nowhere in the file is on none of its lines
        lines = split_lines(read.text)
        hits = matching_lines(
            pattern, lines, limit=remaining + 1, timeout_s=timeout_s, source=node.rel
        )
        if len(hits) > remaining:
            truncated, hits = True, hits[:remaining]
        if hits:
            found.append(FileMatches(node.rel, with_context(lines, hits, context)))
            remaining -= len(hits)
        if truncated:
            break
    return SearchResult(query, found, scanned, skipped, truncated, max_file_bytes)


def _skip_reason(status: str, truncated: bool) -> str:
    if truncated:
        return "too_large"  # the file grew past the limit after it was listed
    return {"missing": "vanished", "folder": "special"}.get(status, status)
