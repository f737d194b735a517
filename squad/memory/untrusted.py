"""Keep memory text from opening or closing the ``<untrusted-memory>`` frame around it (pure).

A fact, a memory.md line or a recalled message may hold the frame's tag in any form a model
could still read as the tag: any case, spaces inside (``</ untrusted-memory >``), HTML or
XML entities (``&lt;``, ``&#60;``, ``&#x3C;``, double-encoded ``&amp;lt;``), percent and
backslash escapes (``%3C``, ``\\u003c``), full-width and other look-alike brackets and
slashes (``＜``, ``‹``, ``〈``, ``⁄``), dashes for the hyphen, invisible characters between
letters, and Cyrillic or Greek look-alike letters. :func:`defuse` finds each such tag on a
normalised view of the text (entities decoded, NFKC, case folded, invisibles dropped) and
rewrites the original span as ``[untrusted_memory]`` / ``[/untrusted_memory]``: no bracket,
no hyphen, readable, and found by nothing here again (defusing twice changes nothing).
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["defuse"]

_OPENERS = "<‹«〈⟨❬❮˂ᐸ⧼⦉⦑"
_CLOSERS = ">›»〉⟩❭❯˃ᐳ⧽⦊⦒"
_SLASHES = "/⁄∕⧸\\"
_DASHES = "-_‐‑‒–—―−⁃"
_LOOKALIKES = str.maketrans(
    {
        "а": "a", "е": "e", "о": "o", "р": "p", "с": "c", "у": "y", "х": "x", "ѕ": "s",
        "ԁ": "d", "т": "t", "м": "m", "г": "r", "ո": "n", "ս": "u", "ı": "i", "ο": "o",
        "υ": "u", "τ": "t", "ε": "e", "ρ": "p", "ν": "v", "κ": "k", "ɡ": "g", "ʀ": "r",
    }
)  # fmt: skip
_GAP = r"[\s]*"
_NAME = _GAP.join("untrusted") + f"[\\s{re.escape(_DASHES)}]*" + _GAP.join("memory")
_TAG = re.compile(
    f"[{re.escape(_OPENERS)}]{_GAP}(?P<slash>[{re.escape(_SLASHES)}]{_GAP})?{_NAME}"
    f"(?P<close>{_GAP}[{re.escape(_CLOSERS)}])?"
)
_ESCAPE = re.compile(
    r"&(?:#[0-9]{1,7};?|#[xX][0-9a-fA-F]{1,6};?|[A-Za-z][A-Za-z0-9]{1,31};|(?:lt|gt|LT|GT))"
    r"|%[0-9a-fA-F]{2}|\\u[0-9a-fA-F]{4}|\\x[0-9a-fA-F]{2}"
)
_CANDIDATE = re.compile(f"[{re.escape(_OPENERS)}\uff1c\ufe64\u2329&%\\\\]")
"""Where a tag can begin: an opening bracket (NFKC folds U+FF1C, U+FE64 and U+2329 to one)
or the start of an escape."""
_TAG_START = re.compile(f"[{re.escape(_OPENERS)}]\\s*(?:[{re.escape(_SLASHES)}]\\s*)?(?:u|$)")
_PEEK = 24
"""Characters of the text read to rule a candidate out: past the longest escaped ``</u``."""
_LONGEST_ESCAPE = 34
"""Characters of the longest escape :data:`_ESCAPE` matches (``&``, a 32-letter name, ``;``)."""
_ESCAPE_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789#;&%\\")
_WINDOW = 600
"""Characters of the text a tag may span (every letter double-encoded still fits)."""
_ROUNDS = 3
"""Layers of encoding undone (``&amp;amp;lt;`` is three)."""


def defuse(text: str) -> str:
    """``text`` with every form of the frame's opening and closing tag made harmless."""
    out = []
    at = 0
    for candidate in _CANDIDATE.finditer(text):
        start = candidate.start()
        if start < at or not _could_start(text, start):
            continue
        view, spans = _normalised(text[start : start + _WINDOW])
        match = _TAG.match(view)
        if match is None:
            continue
        out.append(text[at:start])
        slash, close = "/" if match["slash"] else "", "]" if match["close"] else ""
        out.append(f"[{slash}untrusted_memory{close}")
        at = start + spans[match.end() - 1][1]
    if not out:
        return text
    out.append(text[at:])
    return "".join(out)


def _could_start(text: str, start: int) -> bool:
    """Whether a tag may begin at ``start``: its first characters, normalised, are an
    opening bracket, then space or a slash, then a ``u`` (a cheap test before the real one).

    The characters read never end inside an escape: ``&#117;`` cut to ``&#1`` would decode
    to another character and rule a real tag out."""
    chunk = text[start : start + _PEEK + _LONGEST_ESCAPE]
    end = _PEEK
    while end < len(chunk) and chunk[end] in _ESCAPE_CHARS:  # an escape may go on: read it all
        end += 1
    view, _ = _normalised(chunk[:end])
    return _TAG_START.match(view) is not None


def _normalised(text: str) -> tuple[str, list[tuple[int, int]]]:
    """A view of ``text`` to match the tag on, and for each of its characters the span of
    ``text`` it came from."""
    view, spans = text, [(i, i + 1) for i in range(len(text))]
    for _ in range(_ROUNDS):
        if _ESCAPE.search(view) is None:
            break
        view, origin = _decode_once(view)
        spans = [(spans[a][0], spans[b - 1][1]) for a, b in origin]
    if view.isascii():
        return view.lower(), spans
    chars: list[str] = []
    final: list[tuple[int, int]] = []
    for index, char in enumerate(view):
        if char.isascii():
            chars.append(char.lower())
            final.append(spans[index])
            continue
        if unicodedata.category(char) == "Cf":  # zero-width space, joiners, soft hyphen...
            continue
        for folded in unicodedata.normalize("NFKC", char).casefold().translate(_LOOKALIKES):
            chars.append(folded)
            final.append(spans[index])
    return "".join(chars), final


def _decode_once(text: str) -> tuple[str, list[tuple[int, int]]]:
    """``text`` with one layer of escapes decoded, and each character's span in ``text``."""
    out: list[str] = []
    origin: list[tuple[int, int]] = []
    at = 0
    for match in _ESCAPE.finditer(text):
        out.append(text[at : match.start()])
        origin.extend((i, i + 1) for i in range(at, match.start()))
        decoded = _decode(match.group())
        if decoded is None:
            decoded = match.group()
            origin.extend((i, i + 1) for i in range(match.start(), match.end()))
        else:
            origin.extend([(match.start(), match.end())] * len(decoded))
        out.append(decoded)
        at = match.end()
    out.append(text[at:])
    origin.extend((i, i + 1) for i in range(at, len(text)))
    return "".join(out), origin


def _decode(escape: str) -> str | None:
    if escape[0] == "%":
        return chr(int(escape[1:], 16))
    if escape[0] == "\\":
        return chr(int(escape[2:], 16))
    if escape[1] == "#":
        digits = escape[2:].rstrip(";")
        number = int(digits[1:], 16) if digits[:1] in "xX" else int(digits)
        return chr(number) if 0 < number <= 0x10FFFF else None
    if escape[1:].lower() in ("lt", "gt"):
        return "<" if escape[1:].lower() == "lt" else ">"
    import html  # its entity table: only for a named escape near a frame tag

    decoded = html.unescape(escape)
    if decoded == escape:
        decoded = html.unescape(escape.lower())  # &LT; as a model reads it
    return None if decoded == escape.lower() else decoded
