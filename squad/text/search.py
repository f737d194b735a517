"""Line-oriented text search shared by workspace and memory search: grep semantics, pure.

Lines split on ``\\n`` (a trailing ``\\r`` dropped); a line matches when the pattern has at
least one non-empty match on it; context lines follow grep ``-C``: each line shown once.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from squad.errors import UsageError

__all__ = ["LineMatch", "compile_query", "matching_lines", "split_lines", "with_context"]


@dataclass(frozen=True)
class LineMatch:
    """One matching line, every match on it, and its context lines as ``(number, text)``.

    Like grep, a line is shown once per file: context never repeats a line that an earlier
    match (or its context) already shows, and stops before the next matching line. A gap in
    line numbers between consecutive matches is where grep prints ``--``.
    """

    line_number: int
    line: str
    spans: list[tuple[int, int]]
    before: list[tuple[int, str]]
    after: list[tuple[int, str]]

    def to_dict(self) -> dict[str, Any]:
        return {
            "line_number": self.line_number,
            "line": self.line,
            "spans": [[start, end] for start, end in self.spans],
            "before": [{"line_number": n, "line": text} for n, text in self.before],
            "after": [{"line_number": n, "line": text} for n, text in self.after],
        }


def compile_query(query: str, *, regex: bool, case_sensitive: bool) -> re.Pattern[str]:
    if not query:
        raise UsageError("the search query is empty; give a word or a pattern to look for")
    flags = 0 if case_sensitive else re.IGNORECASE
    try:
        return re.compile(query if regex else re.escape(query), flags)
    except (re.error, OverflowError) as exc:
        raise UsageError(
            f"invalid regular expression {query!r}: {exc}; "
            "search without --regex to look for the text literally"
        ) from exc


def split_lines(text: str) -> list[str]:
    """Lines as grep sees them: ``\\n`` ends a line; form feeds and ``\\u2028`` do not."""
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [line.removesuffix("\r") for line in lines]


def matching_lines(
    pattern: re.Pattern[str], lines: list[str], *, limit: int
) -> list[tuple[int, list[tuple[int, int]]]]:
    """``(index, spans)`` of up to ``limit`` lines with at least one non-empty match.

    Empty matches (``^``, ``x*``) are dropped: they highlight nothing and would list every line.
    """
    hits = []
    for index, line in enumerate(lines):
        spans = [m.span() for m in pattern.finditer(line) if m.end() > m.start()]
        if spans:
            hits.append((index, spans))
            if len(hits) >= limit:
                break
    return hits


def with_context(
    lines: list[str], hits: list[tuple[int, list[tuple[int, int]]]], context: int
) -> list[LineMatch]:
    """Attach grep ``-C`` context to each hit, never showing one line twice."""
    matches = []
    shown = -1  # index of the last line already shown
    for k, (index, spans) in enumerate(hits):
        following = hits[k + 1][0] if k + 1 < len(hits) else len(lines)
        first = max(index - context, shown + 1)
        last = min(index + context, following - 1)
        matches.append(
            LineMatch(
                line_number=index + 1,
                line=lines[index],
                spans=spans,
                before=[(i + 1, lines[i]) for i in range(first, index)],
                after=[(i + 1, lines[i]) for i in range(index + 1, last + 1)],
            )
        )
        shown = last
    return matches
