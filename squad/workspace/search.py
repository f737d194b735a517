"""Full-text search over a workspace for ``squad ws search``: grep, minus the surprises.

Every text file is searched line by line with Python ``re``; binaries, links, special files and
files over a size limit are skipped and counted by reason, so an empty result never hides
that nothing was read. Lines are split on ``\\n`` (a trailing ``\\r`` dropped), as grep does.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from squad.errors import UsageError
from squad.text.search import LineMatch, compile_query, matching_lines, split_lines, with_context
from squad.workspace.inspect import _check_root, _read_text, _walk

__all__ = ["FileMatches", "LineMatch", "SearchResult", "search"]


@dataclass(frozen=True)
class FileMatches:
    """The matching lines of one file (posix path relative to the workspace)."""

    path: str
    matches: list[LineMatch]

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "matches": [m.to_dict() for m in self.matches]}


@dataclass(frozen=True)
class SearchResult:
    """What was found, what was read and what was skipped (reason -> file count)."""

    query: str
    files: list[FileMatches]
    files_scanned: int
    files_skipped: dict[str, int]
    truncated: bool

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
            "files_skipped": dict(self.files_skipped),
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
) -> SearchResult:
    """Every line of every text file below ``root`` that matches ``query``, files by path.

    Stops after ``max_matches`` matching lines; ``truncated`` is set only when a further
    match exists, so a result of exactly ``max_matches`` lines is complete.
    """
    root = _check_root(root)
    pattern = compile_query(query, regex=regex, case_sensitive=case_sensitive)
    for name, value, least in (
        ("context", context, 0),
        ("max_matches", max_matches, 1),
        ("max_file_bytes", max_file_bytes, 0),
    ):
        if value < least:
            raise UsageError(f"{name} must be {least} or more, got {value!r}")
    # Scan in path order so that a cut at max_matches keeps the first files of the listing.
    nodes = sorted((n for n in _walk(root) if n.kind != "dir"), key=lambda n: n.rel)
    skipped: Counter[str] = Counter()
    found: list[FileMatches] = []
    scanned, remaining, truncated = 0, max_matches, False
    for node in nodes:
        if node.kind != "file":
            skipped["link" if node.kind == "link" else "special"] += 1
            continue
        if node.st.st_size > max_file_bytes:
            skipped["too_large"] += 1
            continue
        read = _read_text(node.path, max_file_bytes)
        if read.status != "text" or read.truncated:
            skipped[_skip_reason(read.status, read.truncated)] += 1
            continue
        scanned += 1
        if not regex and pattern.search(read.text) is None:
            continue  # a literal found nowhere in the file is on none of its lines
        lines = split_lines(read.text)
        hits = matching_lines(pattern, lines, limit=remaining + 1)
        if len(hits) > remaining:
            truncated, hits = True, hits[:remaining]
        if hits:
            found.append(FileMatches(node.rel, with_context(lines, hits, context)))
            remaining -= len(hits)
        if truncated:
            break
    return SearchResult(query, found, scanned, dict(sorted(skipped.items())), truncated)


def _skip_reason(status: str, truncated: bool) -> str:
    if truncated:
        return "too_large"  # the file grew past the limit after it was listed
    return {"missing": "vanished", "folder": "special"}.get(status, status)
