"""Line-oriented text search shared by workspace and memory search: grep semantics, bounded.

Lines split on ``\\n`` (a trailing ``\\r`` dropped); a line matches when the pattern has at
least one non-empty match on it; context lines follow grep ``-C``: each line shown once.

Queries compile with the ``regex`` module (``re``'s syntax and behaviour, plus extensions such
as ``\\p{L}``) rather than ``re``, because it can stop a match: each line gets ``timeout_s``
seconds, so a pattern that backtracks exponentially (``(a|aa)+$`` over a long run of a's) ends
in an error naming the line instead of hours of CPU; and it finds a case-insensitive literal in
linear time, where ``re`` takes the line's length times the query's. Before compiling, a
pattern's length is bounded, and so is what its counted repeats (``x{1000}``) expand to when it
compiles (:func:`expansion`).
"""

from __future__ import annotations

import math
import re
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeAlias, TypedDict

from squad.errors import UsageError

if TYPE_CHECKING:
    # Named rx: ``regex`` is compile_query's flag. Stubs: types-regex (when absent, rx is Any).
    import regex as rx  # type: ignore[import-untyped, unused-ignore]

__all__ = [
    "DEFAULT_TIMEOUT_S",
    "MAX_EXPANSION",
    "MAX_QUERY_CHARS",
    "MAX_REGEX_CHARS",
    "LineMatch",
    "LineMatchDict",
    "SearchPattern",
    "Skipped",
    "SkippedDict",
    "check_timeout",
    "compile_query",
    "contains",
    "expansion",
    "find_spans",
    "matching_lines",
    "split_lines",
    "with_context",
]

SearchPattern: TypeAlias = "re.Pattern[str] | rx.Pattern[str]"
"""What the search functions take: :func:`compile_query`'s patterns, which are stopped when a
line takes too long, or an ``re`` pattern a caller built (a literal it escaped itself)."""

DEFAULT_TIMEOUT_S = 2.0
"""Seconds one line (or one fact) may take to match: a linear pattern needs milliseconds for
a whole 5 MB line, so a line that takes this long is a pattern that backtracks."""
MAX_QUERY_CHARS = 10_000
"""Longest literal query; ``regex`` compiles a literal into a buffer some 300 bytes a char."""
MAX_REGEX_CHARS = 1_000
"""Longest ``--regex`` pattern."""
MAX_EXPANSION = 100_000
"""Most pieces a pattern may compile to. ``regex`` copies what a repeat repeats as many times as
its least count (``x{m}``, ``x{m,n}``; never the n), so ``(?:a{1000}){1000}`` compiles to a
million pieces, some 300 MB, long before any match could be stopped; 100,000 is about 30 MB."""

_BRACES = re.compile(r"\\.|\{([^{}]*)\}", re.DOTALL)
_POSIX_CLASS = re.compile(r"\[:\^?[A-Za-z]*:\]")
_VERBOSE = re.compile(r"\(\?[-a-zA-Z0-9]*x")
_CALL = re.compile(r"\(\?(?:R|[-+]?\d+)\)|\(\?&|\(\?P>|\\g<")


class ContextLineDict(TypedDict):
    line_number: int
    line: str


class LineMatchDict(TypedDict):
    """:meth:`LineMatch.to_dict`: a match as ``--json`` and the API show it."""

    line_number: int
    line: str
    spans: list[list[int]]
    before: list[ContextLineDict]
    after: list[ContextLineDict]


class SkippedDict(TypedDict):
    path: str
    reason: str


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

    def to_dict(self) -> LineMatchDict:
        return {
            "line_number": self.line_number,
            "line": self.line,
            "spans": [[start, end] for start, end in self.spans],
            "before": [{"line_number": n, "line": text} for n, text in self.before],
            "after": [{"line_number": n, "line": text} for n, text in self.after],
        }


@dataclass(frozen=True)
class Skipped:
    """A file a search did not read: where it is (as the search shows paths) and why.

    ``reason`` is one of ``too_large``, ``binary`` (or not UTF-8), ``link`` (not followed),
    ``special`` (FIFO, socket, device), ``unreadable`` and ``vanished`` (gone while searched).
    """

    path: str
    reason: str

    def to_dict(self) -> SkippedDict:
        return {"path": self.path, "reason": self.reason}


def compile_query(query: str, *, regex: bool, case_sensitive: bool) -> rx.Pattern[str]:
    """``query`` as a pattern: literal text, or with ``regex`` a regular expression (``re``
    syntax), refused with a UsageError when it is empty, invalid or too big to compile safely."""
    if not query:
        raise UsageError("the search query is empty; give a word or a pattern to look for")
    if not regex and len(query) > MAX_QUERY_CHARS:
        raise UsageError(
            f"the query is {len(query):,} characters long; search for at most "
            f"{MAX_QUERY_CHARS:,} (a distinctive part of the text is enough)"
        )
    if regex:
        _check_regex_size(query)
    # Imported here: the module takes longer to import than a search takes (commands and runs
    # that never search do not pay for it).
    import regex as rx  # type: ignore[import-untyped, unused-ignore]

    flags = 0 if case_sensitive else rx.IGNORECASE
    try:
        return rx.compile(query if regex else rx.escape(query), flags)
    except RecursionError:
        raise UsageError(
            f"the pattern {query!r} is nested too deeply to compile; use fewer nested groups"
        ) from None
    except (rx.error, OverflowError, ValueError) as exc:
        raise UsageError(
            f"invalid regular expression {query!r}: {exc}; "
            "search without --regex to look for the text literally"
        ) from None


def _check_regex_size(query: str) -> None:
    if len(query) > MAX_REGEX_CHARS:
        raise UsageError(
            f"the pattern is {len(query):,} characters long; a --regex pattern may have at most "
            f"{MAX_REGEX_CHARS:,}"
        )
    if _CALL.search(query):  # (?R) left-recursive fills memory, half a GB, before it fails
        raise UsageError(
            f"the pattern {query!r} calls a group ((?R), (?1), (?&name) or \\g<name>); "
            "recursive patterns are not supported (Python re has none either)"
        )
    if expansion(query) > MAX_EXPANSION:
        raise UsageError(
            f"the pattern {query!r} repeats too much to compile: its repeat counts ({{n}}) "
            f"expand it past {MAX_EXPANSION:,} pieces; use smaller counts, or + and *"
        )


def expansion(query: str) -> int:
    """An upper bound on the pieces ``regex`` compiles ``query`` to (capped past the limit).

    Each character, class or escape is a piece; a group is what it holds; a repeat with least
    count m adds m copies of what it repeats. Any ``{...}`` holding a digit is read as a count
    (``regex`` reads ``{1, 5}`` too; ``{e<=3}`` is over-counted), from its first number. Where
    the structure is not certain (``(?x)``, whose ``#`` comments may hold brackets; a ``[`` in a
    class that is not ``[:alpha:]``), the bound is the length times every count multiplied.
    """
    if _VERBOSE.search(query):
        return _blunt_expansion(query)
    cap = MAX_EXPANSION + 1
    open_groups = [0]  # pieces so far in each open group, outermost first
    last = 0  # pieces of the last item: what a count would repeat
    i = 0
    while i < len(query):
        char = query[i]
        if char == "\\":
            i, last = i + 2, 1
        elif char == "[":
            end = _class_end(query, i)
            if end is None:
                return _blunt_expansion(query)
            i, last = end, 1
        elif query.startswith("(?#", i):
            close = query.find(")", i)
            i = len(query) if close < 0 else close + 1
            continue
        elif char == "(":
            open_groups.append(0)
            i, last = i + 1, 0
            continue
        elif char == ")" and len(open_groups) > 1:
            i, last = i + 1, open_groups.pop()
        elif char == "{" and (braces := _BRACES.match(query, i)) and _has_digit(braces[1]):
            copies = _least_count(braces[1])
            open_groups[-1] = min(cap, open_groups[-1] + last * copies)
            i, last = braces.end(), min(cap, last * (copies + 1))
            continue
        elif char in "|*+?":
            i, last = i + 1, 0
            continue
        else:
            i, last = i + 1, 1
        open_groups[-1] = min(cap, open_groups[-1] + last)
    return min(cap, sum(open_groups))


def _class_end(query: str, start: int) -> int | None:
    """Where the character class at ``start`` ends (after its ``]``); None when not certain."""
    i = start + 1
    if query.startswith("^", i):
        i += 1
    if query.startswith("]", i):  # a ] first is a character, as in re
        i += 1
    while i < len(query):
        char = query[i]
        if char == "\\":
            i += 2
        elif char == "]":
            return i + 1
        elif char == "[":
            posix = _POSIX_CLASS.match(query, i)
            if posix is None:  # a nested set (VERSION1) or something re would warn about
                return None
            i = posix.end()
        else:
            i += 1
    return None


def _has_digit(text: str) -> bool:
    return any(c.isdecimal() for c in text)


def _least_count(text: str) -> int:
    """The first number of a count's text, past the limit when it is that long."""
    digits = "".join(c for c in text.split(",")[0] if c.isdecimal()).lstrip("0")
    return int(digits[:7] or 0)  # 7 digits are past any limit already


def _blunt_expansion(query: str) -> int:
    """Length times every least count: true whatever the pattern's structure."""
    total = len(query)
    for braces in _BRACES.finditer(query):
        if braces[1] is not None and _has_digit(braces[1]):
            total *= max(1, _least_count(braces[1]) + 1)
            if total > MAX_EXPANSION:
                return MAX_EXPANSION + 1
    return total


def check_timeout(timeout_s: float) -> float:
    """``timeout_s`` if it is a usable number of seconds, else a UsageError."""
    if not (math.isfinite(timeout_s) and timeout_s > 0):
        raise UsageError(f"the search timeout must be above 0 seconds, got {timeout_s!r}")
    return timeout_s


def find_spans(
    pattern: SearchPattern, text: str, *, timeout_s: float, where: str
) -> list[tuple[int, int]]:
    """The non-empty matches of ``pattern`` in ``text``; a UsageError naming ``where`` when
    they take more than ``timeout_s`` (``re`` patterns cannot be stopped and are not timed).

    Empty matches (``^``, ``x*``) are dropped: they highlight nothing and would list every line.
    """
    if isinstance(pattern, re.Pattern):
        return [m.span() for m in pattern.finditer(text) if m.end() > m.start()]
    spans = []
    started = time.monotonic()
    try:
        for match in pattern.finditer(text, timeout=timeout_s):
            if match.end() > match.start():
                spans.append(match.span())
            if time.monotonic() - started > timeout_s:  # many matches, each just in time
                raise TimeoutError
    except TimeoutError:
        raise UsageError(_too_slow(pattern, timeout_s, where)) from None
    except MemoryError:
        raise UsageError(_too_big(pattern, where)) from None
    return spans


def contains(pattern: SearchPattern, text: str, *, timeout_s: float, where: str) -> bool:
    """Whether ``pattern`` matches anywhere in ``text`` (empty matches included), timed like
    :func:`find_spans`."""
    if isinstance(pattern, re.Pattern):
        return pattern.search(text) is not None
    try:
        return pattern.search(text, timeout=timeout_s) is not None
    except TimeoutError:
        raise UsageError(_too_slow(pattern, timeout_s, where)) from None
    except MemoryError:
        raise UsageError(_too_big(pattern, where)) from None


def _too_slow(pattern: SearchPattern, timeout_s: float, where: str) -> str:
    return (
        f"the pattern {pattern.pattern!r} took longer than {timeout_s:g}s on {where}; simplify "
        "it (nested repetition such as (a|aa)+ takes exponential time) or allow more time with "
        "--timeout; nothing is listed"
    )


def _too_big(pattern: SearchPattern, where: str) -> str:
    return (
        f"the pattern {pattern.pattern!r} ran out of memory on {where} (its matching keeps "
        "too much to backtrack to); simplify it; nothing is listed"
    )


def split_lines(text: str) -> list[str]:
    """Lines as grep sees them: ``\\n`` ends a line; form feeds and ``\\u2028`` do not."""
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [line.removesuffix("\r") for line in lines]


def matching_lines(
    pattern: SearchPattern,
    lines: list[str],
    *,
    limit: int,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    source: str = "<text>",
) -> list[tuple[int, list[tuple[int, int]]]]:
    """``(index, spans)`` of up to ``limit`` lines with at least one non-empty match.

    A line that takes more than ``timeout_s`` to match ends the search with a UsageError naming
    ``source:line``: what was found before is not returned, so nothing half-found is shown.
    """
    hits = []
    for index, line in enumerate(lines):
        spans = find_spans(pattern, line, timeout_s=timeout_s, where=f"{source}:{index + 1}")
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
