"""Which lines of a memory write ``memory.md`` already holds: no repeats from any writer. Pure.

Told the same thing in four chats, an agent appends it four times; the file should get it
once. Whether two facts are the same is the extractor's judgement (exact, normalised,
near-duplicate: :func:`squad.extraction.quality.decide`). The memory layer sits below the
extractor, so that judgement is handed in as a :data:`SameAs` (``App.memory`` passes the
extractor's); without one, two facts are the same when their
:func:`~squad.memory.sightings.sighting_key` is (case, punctuation, dates, spacing aside).

Only fact lines are judged: headings, lines inside a code fence and lines with no words are
always kept as written, so leaving lines out never breaks the markdown around them.
Superseded (struck-through) lines are history, not facts: saying a superseded fact again
writes it again.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from squad.memory.document import unstruck
from squad.memory.sightings import sighting_key

__all__ = ["Known", "SameAs", "fact_of", "fresh_lines", "same_key"]

SameAs = Callable[[str, Sequence[str]], int | None]
"""``(fact, known facts)``: the index of a known fact that already says ``fact``, or None."""

_BULLET = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
_STAMP = re.compile(r"\s*\(\d{4}-\d\d-\d\d[^)]*\)\s*$")
_FENCE = re.compile(r"^\s{0,3}(?:`{3,}|~{3,})")


@dataclass(frozen=True)
class Known:
    """A line of a write left out, and the line that already says it."""

    line: str
    same_as: str
    """The line of memory.md (or an earlier line of the same write) saying the same."""


def fact_of(line: str) -> str:
    """A memory.md line as a fact: no bullet, no trailing date stamp, no strike-through."""
    text = _STAMP.sub("", _BULLET.sub("", line)).strip()
    return unstruck(text) or text


_key = lru_cache(maxsize=16_384)(sighting_key)
"""Keys of the lines a file holds, computed once while it is written again and again."""


def same_key(fact: str, known: Sequence[str]) -> int | None:
    """The first of ``known`` with ``fact``'s :func:`sighting_key` (None: none, or no words)."""
    key = _key(fact)
    if not key:
        return None
    return next((i for i, text in enumerate(known) if _key(text) == key), None)


def fresh_lines(
    text: str, known_lines: Sequence[str], same_as: SameAs = same_key
) -> tuple[str, tuple[Known, ...]]:
    """``text`` without the lines that ``known_lines`` or earlier lines of ``text`` already
    say, and what was left out. The text keeps its line endings; blank lines at its ends go."""
    facts = [fact_of(line) for line in known_lines]
    said = list(known_lines)
    kept: list[str] = []
    known: list[Known] = []
    fenced = False
    for line in text.splitlines(keepends=True):
        bare = line.rstrip("\r\n")
        if _FENCE.match(bare):
            fenced = not fenced
        judged = not fenced and not _FENCE.match(bare) and not bare.lstrip().startswith("#")
        fact = fact_of(bare) if judged else ""
        if not fact or not _key(fact):
            kept.append(line)
            continue
        found = same_as(fact, facts)
        if found is not None:
            known.append(Known(bare, said[found]))
            continue
        kept.append(line)
        facts.append(fact)
        said.append(bare)
    return "".join(kept).strip("\r\n"), tuple(known)
