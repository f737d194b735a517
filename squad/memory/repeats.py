"""Which lines of a memory block say the same thing, and which are history. Pure.

The block shows each thing once: a fact told in four chats, written four times to memory.md
and filed in Layer A, is one line; a recalled message whose text is already a line of
memory.md or a Layer A fact shown is not shown again. Two lines are the same when their
:func:`line_key` is: the text without its list marker, its trailing date note (``(2026-11-02)``,
``(2026-11-02; details: ...)``) or its end punctuation, whitespace made single, case folded.
That is exact sameness after formatting, deliberately: merging near-duplicates, which may
differ in a word that matters, is the extractor's and the memory tools' decision, made once
when the line is written, not re-guessed for every prompt.

A memory.md line struck through as a whole (``- ~~old fact~~ (superseded 2026-11-29)``) is a
superseded fact: it stays in the file as history and is never injected
(:func:`squad.memory.document.superseded`, the one definition).
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["line_key"]

_MARKER = re.compile(r"^\s*(?:[-*+]|\d{1,3}[.)])\s+")
_DATE_NOTE = re.compile(r"\s*\(\d{4}-\d\d-\d\d[^()]*\)\s*$")
_END_PUNCTUATION = ".!;:,"


def line_key(text: str) -> str:
    """What ``text`` says, for telling repeats apart: '' for a line that says nothing."""
    flat = " ".join(unicodedata.normalize("NFKC", text).split())
    flat = _MARKER.sub("", flat)
    flat = _DATE_NOTE.sub("", flat)
    return flat.rstrip(_END_PUNCTUATION + " ").casefold()
