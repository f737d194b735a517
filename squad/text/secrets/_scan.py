"""Reading one text for the finders: where each pattern can match, and where lines end.

Every finder runs regular expressions over the whole text, ~90 of them, and sre pays for each
at every position (~2.5 s a MB). :class:`Scan` runs a pattern only where it can match: not at all
in a text without one of the literals it needs (:func:`._triggers.trigger`: "password", "://",
"q~"...), and, for a pattern whose matches span a bounded number of lines, only over the lines
around those that hold one. A message with nothing key-like is settled by looking for ~300
short literals with ``in``, those holding a character the message lacks (``_``, a digit, a
``q``...) skipped at once (~10-35 µs), and skips every finder module but the blobs'.

:class:`NextNewline` remembers line ends: on a long line (minified JSON, a log with no newlines,
base64 on one line) asking ``text.find("\\n", pos)`` afresh at each cue reads the rest of the line
each time: quadratic.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Iterator
from typing import NamedTuple

from squad.text.secrets._triggers import fold, trigger

__all__ = ["NextNewline", "Rules", "Scan"]


class NextNewline:
    """``text.find("\\n", pos)``, remembered: for positions asked in increasing order, each
    character of ``text`` is read at most once over all the calls."""

    def __init__(self, text: str) -> None:
        self._text = text
        self._from = 0
        self._at = text.find("\n")
        """No newline in ``text[_from:_at]``; ``_at`` is one, or -1: none after ``_from``."""

    def __call__(self, pos: int) -> int:
        if pos < self._from or (self._at >= 0 and pos > self._at):
            self._from, self._at = pos, self._text.find("\n", pos)
        return self._at


class Rules:
    """The patterns one finder module runs through :class:`Scan`, declared together: a text
    with nothing any of them needs skips the module whole (most chat messages).
    :meth:`Scan.finditer` refuses a pattern no module declared, so none is left out."""

    def __init__(self, *patterns: re.Pattern[str]) -> None:
        self.patterns = patterns
        self.ids = frozenset(id(p) for p in patterns)
        _DECLARED.update((id(p), p) for p in patterns)


_DECLARED: dict[int, re.Pattern[str]] = {}
"""Every pattern a :class:`Rules` declared, by id."""


def declared() -> list[re.Pattern[str]]:
    """Every pattern the finder modules declared."""
    import squad.text.secrets  # noqa: F401 - its modules declare theirs on import

    return list(_DECLARED.values())


_GAP = 128
"""Lines this close are scanned as one region: a call costs about what scanning 100 characters
does."""
_SHORT = 2048
"""A text longer than this is scanned line by line where that pays, and looked for the cores of
a pattern's other needs rather than each literal (fewer passes over it); a shorter one whole."""
_WORD = re.compile(r"\w+")


@functools.cache
def _core(literal: str) -> str:
    """The longest run of two or more word characters in ``literal`` (``-----begin`` ->
    ``begin``), or the literal: found wherever the literal is, and shared by its variants."""
    runs = _WORD.findall(literal)
    longest = max(runs, key=len) if runs else ""
    return longest if len(longest) >= 2 else literal


def _cores(need: tuple[str, ...]) -> tuple[str, ...]:
    """The cores of ``need``'s literals, none holding another: fewer to look for."""
    kept: list[str] = []
    for core in sorted({_core(literal) for literal in need}, key=len):
        if not any(shorter in core for shorter in kept):
            kept.append(core)
    return tuple(sorted(kept))


class _Plan(NamedTuple):
    """How :class:`Scan` checks one pattern: its needs as literals, for a short text, and as
    the literals' cores, for a long one (fewer, each a pass over the text)."""

    needs: tuple[tuple[str, ...], ...]
    """Its needs, the strongest (its gate) first; none when it needs no literal."""
    cores: tuple[tuple[str, ...], ...]
    reach: int | None
    """:attr:`._triggers.Trigger.reach`."""


_LETTERS = "etaoinsrhldcumfpgwybvkxjqz"
"""Letters from the most to the least common in English."""


def _gate(core: str) -> str:
    """The character of ``core`` a text is least likely to hold (a digit, ``_``, a ``q``...)."""
    return max(core, key=lambda c: _LETTERS.find(c) if c in _LETTERS else len(_LETTERS))


def _gated(cores: tuple[str, ...]) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """``cores`` grouped by :func:`_gate`: a text without a group's gate holds none of them,
    so most messages (no ``_``, no digit, no ``q``) look for few of the ~300 cores. A gate
    shared by no other core is not worth its own look: such cores go under ``""``."""
    groups: dict[str, list[str]] = {}
    for core in cores:
        groups.setdefault(_gate(core), []).append(core)
    alone = tuple(core for group in groups.values() if len(group) == 1 for core in group)
    shared = [(gate, tuple(group)) for gate, group in groups.items() if len(group) > 1]
    return (("", alone), *shared)


class _Index(NamedTuple):
    """The declared patterns' strongest needs, by core: the first look at a text."""

    cores: tuple[tuple[str, tuple[str, ...]], ...]
    """The cores, grouped by a character each holds (:func:`_gated`)."""
    ascii_cores: tuple[tuple[str, tuple[str, ...]], ...]
    """The same, of the cores a text of ASCII alone may hold."""
    needing: dict[str, tuple[tuple[str, frozenset[int]], ...]]
    """For each core, the literals holding it and the patterns whose strongest need each is
    one of."""
    always: frozenset[int]
    """The patterns that need no literal."""
    plans: dict[int, _Plan]
    within: dict[str, str]
    """For each literal of a strongest need, and its core, the core in :attr:`cores` it holds:
    absent from a text, so is the literal (not looked for again in a long text)."""


@functools.cache
def _index(declared: int) -> _Index:
    """The index of the first ``declared`` patterns (all of them, once the modules are in)."""
    plans: dict[int, _Plan] = {}
    literals: dict[str, set[int]] = {}
    for key, pattern in list(_DECLARED.items())[:declared]:
        rule = trigger(pattern)
        needs = tuple(tuple(sorted(n)) for n in rule.needs)
        plans[key] = _Plan(needs, tuple(_cores(n) for n in needs), rule.reach)
        for literal in needs[0] if needs else ():
            literals.setdefault(literal, set()).add(key)
    cores = _cores(tuple(literals))
    needing: dict[str, list[tuple[str, frozenset[int]]]] = {}
    within: dict[str, str] = {}
    kept = set(cores)
    for literal, keys in literals.items():
        core = _core(literal)
        within[core] = within[literal] = (
            core if core in kept else next(c for c in cores if c in core)
        )
        needing.setdefault(within[literal], []).append((literal, frozenset(keys)))
    return _Index(
        _gated(cores),
        _gated(tuple(core for core in cores if core.isascii())),
        {core: tuple(found) for core, found in needing.items()},
        frozenset(k for k, plan in plans.items() if not plan.needs),
        plans,
        within,
    )


class Scan:
    """One text, read for what the finders' patterns need, so that each runs only where it
    can match: a pattern whose literals are all missing not at all, and one whose matches
    span a bounded number of lines only over the lines around its literals (unless they are
    too many to be worth listing). :meth:`finditer` and :meth:`search` answer as the
    pattern's own would over the whole text."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._folded = fold(text)
        self._long = len(text) > _SHORT
        self._has: dict[str, bool] = {}
        self._counts: dict[str, int] = {}
        self._found: dict[int, tuple[list[tuple[int, int]], bool]] = {}
        self._newlines = -1
        self._index = _index(len(_DECLARED))
        self._admitted = self._admit()

    def admits(self, rules: Rules) -> bool:
        """Whether a pattern of ``rules`` may match in the text."""
        return not rules.ids.isdisjoint(self._admitted)

    def may(self, pattern: re.Pattern[str]) -> bool:
        """Whether ``pattern`` may match in the text (the literals it needs first are here)."""
        return id(pattern) in self._admitted

    def finditer(self, pattern: re.Pattern[str]) -> Iterable[re.Match[str]]:
        """``pattern.finditer(text)``: the same matches, in the same order."""
        if id(pattern) not in self._admitted:
            _declared(pattern)
            return ()  # every match holds a literal the text lacks: most patterns, most texts
        return self._finditer(pattern)

    def search(self, pattern: re.Pattern[str], pos: int = 0) -> re.Match[str] | None:
        """``pattern.search(text, pos)``: the same match."""
        for m in self._finditer(pattern, pos):
            return m
        return None

    def line_spans(self, *patterns: re.Pattern[str]) -> list[tuple[int, int]] | None:
        """The spans of the lines that can hold a match of one of ``patterns`` matched against
        that line alone, in order; None when that may be any line."""
        spans: set[tuple[int, int]] = set()
        for pattern in patterns:
            needs = trigger(pattern).needs
            lines = self._lines(min(needs, key=self._rarity), 0) if needs else None
            if lines is None:
                return None
            spans.update(lines)
        return sorted(spans)

    def _finditer(self, pattern: re.Pattern[str], pos: int = 0) -> Iterator[re.Match[str]]:
        text = self.text
        regions, verify = self._regions(pattern)
        for start, end in regions:
            if end < pos:
                continue
            if not verify:
                yield from pattern.finditer(text, max(start, pos), end)
                continue
            # A match may cross lines: one found in the region is the text's own only if the
            # pattern matches the same there with the whole text after it.
            at = max(start, pos)
            while at <= end and (m := pattern.search(text, at, end)) is not None:
                whole = pattern.match(text, m.start())
                if whole is None:
                    at = m.start() + 1
                    continue
                yield whole
                at = pos = max(whole.end(), whole.start() + 1)

    def _admit(self) -> frozenset[int]:
        """The declared patterns that may match: those with a literal of their strongest need
        in the text, looked for only when its core is there (the cores are fewer)."""
        index, folded = self._index, self._folded
        admitted = set(index.always)
        groups = index.ascii_cores if folded.isascii() else index.cores
        held = [
            core for gate, cores in groups if gate in folded for core in cores if core in folded
        ]
        self._held = frozenset(held)
        for core in held:
            for literal, keys in index.needing[core]:
                if not keys <= admitted and self._holds((literal,)):
                    admitted |= keys
        return frozenset(admitted)

    def _regions(self, pattern: re.Pattern[str]) -> tuple[list[tuple[int, int]], bool]:
        """Where ``pattern`` can match, and whether a match found there must be checked
        against the whole text (one that can cross lines)."""
        found = self._found.get(id(pattern))
        if found is None:
            found = self._found[id(pattern)] = self._where(pattern)
        return found

    def _where(self, pattern: re.Pattern[str]) -> tuple[list[tuple[int, int]], bool]:
        key = id(pattern)
        if key not in self._admitted:
            _declared(pattern)
            return [], False  # every match holds a literal the text lacks
        plan = self._index.plans[key]
        needs = plan.cores if self._long else plan.needs
        whole = [(0, len(self.text))], False
        if not all(self._holds(need) for need in needs[1:]):
            return [], False  # (the first was found, or the pattern would not be admitted)
        if plan.reach is None or not needs or not self._long:
            return whole
        lines = self._lines(min(needs, key=self._rarity), plan.reach)
        if lines is None:
            return whole
        regions: list[tuple[int, int]] = []
        for start, end in lines:
            if regions and start - regions[-1][1] <= _GAP:
                regions[-1] = (regions[-1][0], max(end, regions[-1][1]))
            else:
                regions.append((start, end))
        return regions, plan.reach > 0

    def _holds(self, need: tuple[str, ...]) -> bool:
        """Whether one of ``need``'s literals is in the text."""
        for literal in need:
            has = self._has.get(literal)
            if has is None:
                has = self._has[literal] = not self._absent(literal) and literal in self._folded
            if has:
                return True
        return False

    def _rarity(self, need: tuple[str, ...] | frozenset[str]) -> int:
        """How often ``need``'s literals occur in the text."""
        total = 0
        for literal in need:
            count = self._counts.get(literal)
            if count is None:
                absent = self._absent(literal)
                count = self._counts[literal] = 0 if absent else self._folded.count(literal)
            total += count
        return total

    def _absent(self, literal: str) -> bool:
        """Whether ``literal`` is surely missing, known without reading the text again: the
        core it holds was not found. Spares a long text a pass for each of the ~100 provider
        prefixes of a pattern it was admitted for by one of them."""
        core = self._index.within.get(literal)
        return core is not None and core not in self._held

    def _lines(
        self, need: tuple[str, ...] | frozenset[str], reach: int
    ) -> list[tuple[int, int]] | None:
        """The spans of the lines holding one of ``need`` and, when ``reach``, of the lines
        around them a match may reach: ``reach`` + 1 lines that are not blank each way (each
        run of white space takes a match at most to the next such line). None when they may
        be too many to be worth listing."""
        if self._newlines < 0:
            self._newlines = self.text.count("\n")
        # Listing pays when the lines (and the lines around them a match may reach, and the
        # gaps merged into one region) cover under half the text.
        per_line = len(self.text) / (self._newlines + 1) * (2 * reach + 3 if reach else 1)
        if self._rarity(need) * (per_line + _GAP) > len(self.text) / 2:
            return None
        if any("\n" in s for s in need):
            return None
        text, folded, size = self.text, self._folded, len(self.text)
        spans: set[tuple[int, int]] = set()
        for literal in need:
            at = folded.find(literal) if self._counts[literal] else -1
            while at >= 0:
                start = text.rfind("\n", 0, at) + 1
                end = line_end = text.find("\n", at)
                end = line_end = size if end < 0 else end
                for _ in range(reach + 1 if reach else 0):
                    start, end = _line_before(text, start), _line_after(text, end)
                spans.add((start, end))
                at = folded.find(literal, line_end + 1) if line_end < size else -1
        return sorted(spans)


def _declared(pattern: re.Pattern[str]) -> None:
    """Refuse a pattern no module declared: its module's gate would not know it, and a text
    holding only its literals would skip the module (a credential missed, silently)."""
    if id(pattern) not in _DECLARED:
        raise AssertionError(f"declare {pattern.pattern[:40]!r} in its module's Rules")


def _line_before(text: str, start: int) -> int:
    """The start of the last line before the one at ``start`` that is not blank (or of the
    text)."""
    while start > 0:
        start = text.rfind("\n", 0, start - 1) + 1
        if text[start : text.find("\n", start)].strip():
            break
    return start


def _line_after(text: str, end: int) -> int:
    """The end of the first line after the one ending at ``end`` that is not blank (or of the
    text)."""
    while end < len(text):
        start, end = end + 1, text.find("\n", end + 1)
        end = len(text) if end < 0 else end
        if text[start:end].strip():
            break
    return end
