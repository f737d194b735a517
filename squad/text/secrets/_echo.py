"""Echoes: a credential said again later in the same conversation, in any role. Pure.

"my password is Blu3Whale$2024" is a credential by its words; the reply "OK, Blu3Whale$2024 is
saved" is not, to the detector, yet it carries the same value. So once a value has been found
in a conversation (a chat session, a run), every later occurrence of the same literal value is
redacted too, as ``[REDACTED:echo]``, whoever says it: the user again, the assistant, a tool.

Judgment calls:

- A literal, case-sensitive substring: an echo with the value changed (cut short, upper-cased,
  spaced out) is not found; the detector may still find it by its own shape or words.
- Not glued to other letters or digits: where the value starts (ends) with an ASCII letter or
  digit, the character just before (after) it is not one, so the value inside quotes,
  brackets, punctuation, a URL or before a Korean particle counts ("Blu3Whale$2024를"), and
  ``hunter2`` inside ``hunter23`` does not.
- Values shorter than :data:`MIN_CHARS` (4) are not looked for: a three-character value would
  take every "abc" or "123" of the conversation with it. From four on it is: a four-digit PIN
  said again is the PIN. A value with no letter or digit, or holding a redaction marker, is not
  a value to look for either.
- Never inside a ``[REDACTED:...]`` marker, so redacting stays idempotent.
- Values are kept by the caller in memory only (:class:`SeenSecrets`), never stored: after a
  restart an echo of a value from before it is recognised only if the detector recognises it.
"""

from __future__ import annotations

import threading
from collections.abc import Collection, Iterable, Iterator, Sequence

from squad.text.secrets._values import ALNUM, MARKER

__all__ = ["KIND", "MIN_CHARS", "SeenSecrets", "merged", "spans", "usable"]

KIND = "echo"
MIN_CHARS = 4
"""The shortest value looked for again (see the module docstring)."""
_GLUE = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")


def usable(value: str) -> bool:
    """Whether ``value`` is worth looking for again: :data:`MIN_CHARS` or more, with a letter
    or digit, not (part of) a redaction."""
    return len(value) >= MIN_CHARS and ALNUM.search(value) is not None and "[REDACTED:" not in value


def spans(text: str, known: Iterable[str]) -> list[tuple[int, int]]:
    """Every ``(start, end)`` where one of ``known`` occurs in ``text`` on its own (neither
    neighbour an ASCII letter or digit) and outside a redaction marker; unsorted, may overlap."""
    markers: list[tuple[int, int]] | None = None
    found: list[tuple[int, int]] = []
    for value in known:
        if not usable(value):
            continue
        start = text.find(value)
        while start >= 0:
            end = start + len(value)
            glued = (start > 0 and value[0] in _GLUE and text[start - 1] in _GLUE) or (
                end < len(text) and value[-1] in _GLUE and text[end] in _GLUE
            )
            if not glued:
                if markers is None:
                    markers = [m.span() for m in MARKER.finditer(text)]
                if not any(a < end and start < b for a, b in markers):
                    found.append((start, end))
            start = text.find(value, start + 1)
    return found


def merged(
    matches: Sequence[tuple[str, int, int]], echoes: Iterable[tuple[int, int]]
) -> list[tuple[str, int, int]]:
    """``matches`` (``(kind, start, end)``, sorted, non-overlapping: the detector's) with the
    ``echoes`` spans added, sorted and non-overlapping.

    Spans that overlap become one covering them all, so no piece of a value is left in the
    clear; it keeps a rule's kind when one of the rules' matches is among them (the more
    specific), else it is an :data:`KIND` echo: a value known to be the one said earlier says
    more than the learned detector's guess (:data:`LEARNED_KIND`), and stays the same whatever
    that detector's training.
    """
    ordered = sorted(
        [(start, end, _strength(kind), kind) for kind, start, end in matches]
        + [(start, end, 1, KIND) for start, end in echoes]
    )
    out: list[tuple[str, int, int]] = []
    strengths: list[int] = []
    for start, end, strength, kind in ordered:
        if out and start < out[-1][2]:
            last_kind, last_start, last_end = out[-1]
            if strength > strengths[-1]:
                last_kind, strengths[-1] = kind, strength
            out[-1] = (last_kind, last_start, max(last_end, end))
        else:
            out.append((kind, start, end))
            strengths.append(strength)
    return out


LEARNED_KIND = "credential"
"""The learned detector's kind (:mod:`._learned`), weaker than an echo's."""


def _strength(kind: str) -> int:
    return 0 if kind == LEARNED_KIND else 2


class SeenSecrets(Collection[str]):
    """The credential values found so far in one conversation (a chat session, a run).

    Kept in memory only, for the life of the session or run, and never written anywhere: it is
    what lets a reply that repeats a value be redacted after the message that carried it was
    stored redacted. Pass it as ``known`` to the redaction functions. Safe to share between the
    threads of a run's parallel tasks.
    """

    def __init__(self, values: Iterable[str] = ()) -> None:
        self._lock = threading.Lock()
        self._values: dict[str, None] = {}
        self.add(values)

    def add(self, values: Iterable[str]) -> None:
        """Remember ``values`` (those :func:`usable`)."""
        fresh = [v for v in values if usable(v)]
        if fresh:
            with self._lock:
                self._values.update(dict.fromkeys(fresh))

    def learn(self, text: str, *, previous: Sequence[str] = ()) -> None:
        """Remember the credential values the detector finds in ``text`` (``previous``: the
        messages just before it, where a bare value's cue may be)."""
        from squad.text.secrets import secret_values  # the package imports this module

        self.add(secret_values(text, previous=previous))

    def __contains__(self, value: object) -> bool:
        return value in self._values

    def __iter__(self) -> Iterator[str]:
        with self._lock:  # a snapshot: another thread may add while a caller iterates
            return iter(tuple(self._values))

    def __len__(self) -> int:
        return len(self._values)

    def __repr__(self) -> str:
        return f"SeenSecrets({len(self)} values)"  # never the values themselves
