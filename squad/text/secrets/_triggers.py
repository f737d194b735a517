"""What every match of a finder's pattern must contain, read from the pattern itself. Pure.

sre tries a pattern at every position of the text unless the pattern starts with a literal, and
most of the finders' patterns start with a look-behind: each costs 10-40 ns a character, ~90 of
them ~2.5 s a MB. Yet most texts, and most lines of a long one, hold nothing a pattern needs: no
``password``, no ``://``, no ``Q~``. :func:`trigger` reads a compiled pattern's syntax tree and
says which literals any match must contain (sets of alternatives, all of them needed) and how
many lines a match may span around them, so :class:`._scan.Scan` runs the pattern only over the
texts, and the lines, that hold them. The triggers are derived from the rules, never declared
beside them, so they cannot drift; a construct the reader does not follow adds no literal and
lets a match span any number of lines, so the pattern runs over the whole text.

Sound by construction: a literal is required only when every path through the pattern consumes
it (look-arounds consume nothing and are skipped); literals are lower-cased and looked for in the
text folded as ``re`` folds it (:func:`fold`), which only weakens a case-sensitive one. A match
crosses a line break only inside a run of white space (``\\s*``, ``\\s?``): each such run in
the pattern takes it at most to the next line that is not blank, so :attr:`Trigger.reach` of them
bound the lines around a literal a match can span; a pattern that can read a line break any other
way (``[^"]``, ``.`` under DOTALL), that repeats a run without bound, or that tells a line's end
from the text's end (``$`` without MULTILINE, ``\\Z``, a look-ahead that reads a line break) has
no bound.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from re import _constants as sre  # type: ignore[attr-defined]
from re import _parser  # type: ignore[attr-defined]
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["Trigger", "fold", "trigger"]

_FOLD = str.maketrans({"\u0130": "i", "\u0131": "i", "\u017f": "s"})
_IGNORECASE, _DOTALL, _MULTILINE = int(re.IGNORECASE), int(re.DOTALL), int(re.MULTILINE)
_UNFOLDED = frozenset("\u0130\u0131\u017f")
"""Characters ``re`` matches to an ASCII letter under IGNORECASE that ``str.lower`` does not
lower to it: ``ſ`` is an ``s``, ``ı`` and ``İ`` are an ``i`` (``İ`` lowers to two characters)."""


def fold(text: str) -> str:
    """``text`` lower-cased as ``re`` folds ASCII letters, each character in its place."""
    return text.lower() if text.isascii() else text.translate(_FOLD).lower()


class Trigger(NamedTuple):
    """What a pattern's matches need: one literal of each set of :attr:`needs`, and how far
    from its line a match may reach."""

    needs: tuple[frozenset[str], ...]
    """Sets of lower-case literals each match holds one of, in the text as :func:`fold`
    folds it; strongest first."""
    reach: int | None
    """How many runs of white space holding a line break a match may cross (0: it stays on
    one line); None when it may span any number of lines."""


_CAP = 64
"""The most strings a set grows to (``[sr]k_(?:live|test)_`` is four) before it is cut."""
_NEEDS_CAP = 512
"""The most alternatives a need of a branch collects (one per branch, each up to :data:`_CAP`)."""
_SMALL_CLASS = 8
"""The most characters a class may hold to count as alternatives (``[ \\t]``, ``[MNO]``)."""
_NEWLINE = 10
_READS_NEWLINE = {
    sre.CATEGORY_SPACE,
    sre.CATEGORY_NOT_WORD,
    sre.CATEGORY_NOT_DIGIT,
    sre.CATEGORY_LINEBREAK,
    sre.CATEGORY_UNI_SPACE,
    sre.CATEGORY_UNI_NOT_WORD,
    sre.CATEGORY_UNI_NOT_DIGIT,
    sre.CATEGORY_UNI_LINEBREAK,
}
_BLANK = {sre.CATEGORY_SPACE, sre.CATEGORY_UNI_SPACE, sre.CATEGORY_LINEBREAK}
_REPEATS = {sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT}
_Strings = frozenset[str]
_EMPTY: _Strings = frozenset({""})


class _Facts(NamedTuple):
    """What one node of a pattern says about the text it matches."""

    exact: _Strings | None = None
    """Every string the node matches, when few; None when many or unknown."""
    prefix: _Strings | None = None
    """Strings of which every match starts with one."""
    suffix: _Strings | None = None
    """Strings of which every match ends with one."""
    needs: tuple[_Strings, ...] = ()
    """Sets of which every match holds one string."""
    steps: int | None = 0
    """The most runs of white space holding a line break a match crosses; None: unbounded,
    or the node may read a line break otherwise or tell a line's end from the text's end."""


_UNKNOWN = _Facts(steps=None)


def _known(strings: _Strings | None) -> _Strings | None:
    """``strings`` if they say something (none empty), else None."""
    return strings if strings is not None and all(strings) else None


def _char(code: int, flags: int) -> str | None:
    """One character as it is looked for in the folded text; None when ``re`` may match it
    to characters :func:`fold` does not fold to it."""
    char = chr(code)
    if char in _UNFOLDED:
        return None
    if (flags & _IGNORECASE) and char.lower() != char.upper() and not char.isascii():
        return None
    return char.lower()


def _class_steps(items: list[tuple[Any, Any]]) -> int | None:
    """0 when the class cannot match a line break, 1 when it can and holds only white space
    (``\\s``, ``[ \\t\\n]``), None when it holds a line break and more (``[^"]``, ``\\W``)."""
    negate, newline, blank = False, False, True
    for op, av in items:
        if op is sre.NEGATE:
            negate = True
        elif op is sre.LITERAL:
            newline |= av == _NEWLINE
            blank &= chr(av).isspace()
        elif op in (sre.RANGE, sre.RANGE_UNI_IGNORE):
            newline |= av[0] <= _NEWLINE <= av[1]
            blank &= all(chr(c).isspace() for c in range(av[0], min(av[1], av[0] + 64) + 1))
        elif op is sre.CATEGORY:
            newline |= av in _READS_NEWLINE
            blank &= av in _BLANK
        else:
            return None  # not understood: assume the worst
    if negate:
        return None if not newline else 0  # [^\n...] cannot match one; other negations can
    return 0 if not newline else (1 if blank else None)


def _class_exact(items: list[tuple[Any, Any]], flags: int) -> _Strings | None:
    codes: list[int] = []
    for op, av in items:
        if op is sre.LITERAL:
            codes.append(av)
        elif op is sre.RANGE and av[1] - av[0] < _SMALL_CLASS:
            codes.extend(range(av[0], av[1] + 1))
        else:
            return None
    chars = [_char(c, flags) for c in codes]
    if len(codes) > _SMALL_CLASS or None in chars:
        return None
    return frozenset(c for c in chars if c is not None)


def _exact(strings: _Strings | None, steps: int | None = 0) -> _Facts:
    return _Facts(strings, _known(strings), _known(strings), (), steps)


def _add(a: int | None, b: int | None) -> int | None:
    return None if a is None or b is None else a + b


def _fewest(needed: _Strings) -> _Strings:
    """``needed`` without the strings that hold another of it: "pass" is in every text
    "password" is in."""
    kept: list[str] = []
    for text in sorted(needed, key=len):
        if not any(shorter in text for shorter in kept):
            kept.append(text)
    return frozenset(kept)


def _strength(needed: _Strings) -> tuple[int, int]:
    """How rare a set's strings are likely to be: the shortest one's length without spaces
    (a space is everywhere), then fewer alternatives."""
    return min(len(text.strip()) for text in needed), -len(needed)


def _best(facts: _Facts) -> _Strings | None:
    options = [*facts.needs, *(s for s in (facts.exact, facts.prefix, facts.suffix) if s)]
    options = [o for o in options if all(o) and _strength(o)[0] > 0]
    return _fewest(max(options, key=_strength)) if options else None


def _joined(left: _Strings, right: _Strings) -> _Strings | None:
    """Every ``left`` string followed by every ``right`` one; None when too many."""
    if len(left) * len(right) > _CAP:
        return None
    return frozenset(a + b for a in left for b in right)


def _sequence(items: Any, flags: int) -> _Facts:
    """Items matched one after the other: runs of known strings joined across them."""
    needs: list[_Strings] = []
    steps: int | None = 0
    run: _Strings = _EMPTY  # strings the text matched so far ends with
    prefix: _Strings | None = None
    exact = True
    for op, av in items:
        facts = _node(op, av, flags)
        steps = _add(steps, facts.steps)
        needs += facts.needs
        if facts.exact is not None and (joined := _joined(run, facts.exact)) is not None:
            run = joined
            continue
        head = facts.prefix
        joined = _joined(run, head) if head is not None else None
        reached = joined if joined is not None else run
        needs += [s for s in (reached, head) if s is not None and _known(s)]
        if exact:
            prefix = _known(reached)
        exact = False
        run = facts.suffix if facts.suffix is not None else _EMPTY
    if exact:
        return _exact(run, steps)
    needs += [run] if _known(run) else []
    return _Facts(None, prefix, _known(run), tuple(needs), steps)


def _node(op: Any, av: Any, flags: int) -> _Facts:
    if op is sre.LITERAL:
        char = _char(av, flags)
        return _exact(None if char is None else frozenset({char}), int(av == _NEWLINE))
    if op is sre.NOT_LITERAL:
        return _Facts(steps=0 if av == _NEWLINE else None)
    if op is sre.ANY:
        return _Facts(steps=None if flags & _DOTALL else 0)
    if op is sre.IN:
        return _exact(_class_exact(av, flags), _class_steps(av))
    if op is sre.AT:
        end = av is sre.AT_END_STRING or (av is sre.AT_END and not flags & _MULTILINE)
        return _Facts(_EMPTY, _EMPTY, _EMPTY, (), None if end else 0)
    if op in (sre.ASSERT, sre.ASSERT_NOT):
        direction, pattern = av
        ahead = direction == 1 and _sequence(pattern, flags).steps != 0  # reads past a line
        return _Facts(_EMPTY, _EMPTY, _EMPTY, (), None if ahead else 0)
    if op is sre.SUBPATTERN:
        _, add, remove, pattern = av
        return _sequence(pattern, (flags | int(add)) & ~int(remove))
    if op is sre.ATOMIC_GROUP:
        return _sequence(av, flags)
    if op is sre.BRANCH:
        return _branch(av[1], flags)
    if op in _REPEATS:
        low, high, body = av
        return _repeat(low, high, body, flags)
    return _UNKNOWN  # a back-reference or a conditional: not followed


def _union(sets: list[_Strings | None], cap: int = _CAP) -> _Strings | None:
    if any(s is None for s in sets):
        return None
    union: _Strings = frozenset().union(*(s for s in sets if s is not None))
    return union if len(union) <= cap else None


def _branch(branches: Any, flags: int) -> _Facts:
    facts = [_sequence(b, flags) for b in branches]
    counts = [f.steps for f in facts]
    steps = None if None in counts else max(c for c in counts if c is not None)
    exact = _union([f.exact for f in facts])
    if exact is not None:
        return _exact(exact, steps)
    best = _union([_best(f) for f in facts], _NEEDS_CAP)
    needs = (best,) if best is not None else ()
    prefix = _union([f.prefix for f in facts])
    suffix = _union([f.suffix for f in facts])
    return _Facts(None, prefix, suffix, needs, steps)


def _repeat(low: int, high: int, body: Any, flags: int) -> _Facts:
    facts = _sequence(body, flags)
    steps = facts.steps
    if steps and not (len(body) == 1 and body[0][0] is sre.IN):
        # a run of one white-space class is one run however long; anything else, repeated,
        # crosses as many runs as it repeats
        steps = None if high == sre.MAXREPEAT else steps * high
    if low == 0:
        if facts.exact is not None and high == 1:
            return _exact(facts.exact | _EMPTY, steps)
        return _Facts(steps=steps)
    if low == high == 1:
        return facts
    best = _best(facts)
    needs = (best,) if best is not None else ()
    return _Facts(None, facts.prefix, facts.suffix, needs, steps)


_READ: dict[int, tuple[re.Pattern[str], Trigger]] = {}
"""Each pattern's trigger, by the pattern's id (hashing a pattern hashes its whole program);
the pattern is kept so that its id is not reused."""


def table() -> Path:
    """Where the triggers of the finders' patterns are stored, as :func:`read` reads them:
    reading them all costs ~50 ms, which every process would pay on its first redaction. A
    pattern edited since the table was written is not in it (the key is its text) and is
    read afresh; ``python -m squad.text.secrets`` writes the table again."""
    from pathlib import Path  # (on first use: start-up)

    return Path(__file__).with_name("triggers.json")


def trigger(pattern: re.Pattern[str]) -> Trigger:
    """What every match of ``pattern`` holds and how many lines it may span (from
    :func:`table` when it holds the pattern, else :func:`read`)."""
    known = _READ.get(id(pattern))
    if known is not None:
        return known[1]
    found = _stored().get(key(pattern)) or read(pattern)
    _READ[id(pattern)] = (pattern, found)
    return found


def read(pattern: re.Pattern[str]) -> Trigger:
    """:func:`trigger`, read from the pattern's syntax tree."""
    parsed = _parser.parse(pattern.pattern, pattern.flags)
    facts = _sequence(parsed.data, int(parsed.state.flags))
    sets = [*facts.needs, *(s for s in (facts.exact, facts.prefix, facts.suffix) if s)]
    needs = {_fewest(s) for s in sets if all(s) and _strength(s)[0] > 0}
    ordered = sorted(needs, key=lambda n: (_strength(n), sorted(n)), reverse=True)
    return Trigger(tuple(ordered), facts.steps)


def key(pattern: re.Pattern[str]) -> str:
    """The pattern's key in :func:`table`: a digest of its text and flags."""
    import hashlib  # (on first use: ~2 ms of start-up otherwise)

    text = f"{int(pattern.flags)}\0{pattern.pattern}".encode()
    return hashlib.blake2b(text, digest_size=8).hexdigest()


@functools.cache
def _stored() -> dict[str, Trigger]:
    import json  # (on first use: ~2 ms of start-up otherwise)

    try:
        stored = json.loads(table().read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    return {
        k: Trigger(tuple(frozenset(need) for need in v["needs"]), v["reach"])
        for k, v in stored.items()
    }


def table_text(patterns: Iterable[re.Pattern[str]]) -> str:
    """:func:`table`'s text for ``patterns``: each one's trigger as :func:`read` reads it, one
    pattern a line."""
    import json

    lines = []
    for pattern in sorted(patterns, key=key):
        rule = read(pattern)
        entry = {"needs": [sorted(n) for n in rule.needs], "reach": rule.reach}
        lines.append(f"{json.dumps(key(pattern))}: {json.dumps(entry, ensure_ascii=False)}")
    return "{\n" + ",\n".join(lines) + "\n}\n"
