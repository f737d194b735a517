"""The key under which a project fact's sightings are counted (promotion evidence). Pure.

A project fact (a Layer B line of memory.md) that keeps coming back in different runs and chat
sessions is a candidate for experiential memory. The extractor records each sighting under
:func:`sighting_key` of the fact's text, so "- Deploys go out on Fridays (2026-11-29)" and
"deploys go out on fridays." count as the same fact, and memory gc proposes the promotion.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata

__all__ = ["MAX_KEY_CHARS", "fact_text", "sighting_key"]

MAX_KEY_CHARS = 200
"""Longest key; longer texts keep a prefix and a hash of the whole (a primary-key column)."""

_MONTH = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
)
_DATES = re.compile(
    r"\d{4}[-./]\d{1,2}[-./]\d{1,2}(?:t\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:z|[+-]\d{2}:?\d{2})?)?"
    r"|\b\d{1,2}[/.]\d{1,2}[/.]\d{2,4}\b"
    r"|\d{4}\s*년\s*\d{1,2}\s*월(?:\s*\d{1,2}\s*일)?|\b\d{1,2}\s*월\s*\d{1,2}\s*일"
    rf"|\b{_MONTH}\.?\s+\d{{1,2}}(?:st|nd|rd|th)?(?:,?\s+\d{{4}})?\b"
    rf"|\b\d{{1,2}}(?:st|nd|rd|th)?\s+{_MONTH}\.?(?:,?\s+\d{{4}})?\b",
)


def sighting_key(text: str) -> str:
    """``text`` normalised so rewordings by case, dates, punctuation or spacing collide.

    NFKC, casefold, dates removed (ISO ``2026-11-29``, ``11/29/2026``, ``Nov 29, 2026``,
    ``2026년 11월 29일``...), punctuation and symbols turned into spaces, whitespace collapsed.
    Texts longer than :data:`MAX_KEY_CHARS` once normalised keep a prefix plus a hash of the
    whole. Empty when nothing is left (a line of punctuation). A key is its own key.
    """
    key = unicodedata.normalize("NFKC", text).casefold()
    while True:  # until nothing changes, so that a key is its own key
        stripped = _DATES.sub(" ", key)
        stripped = "".join(" " if unicodedata.category(ch)[0] in "PSZC" else ch for ch in stripped)
        stripped = " ".join(stripped.split())
        if stripped == key:
            break
        key = stripped
    if len(key) <= MAX_KEY_CHARS:
        return key
    digest = hashlib.sha256(key.encode()).hexdigest()[:16]
    return f"{key[: MAX_KEY_CHARS - 18].rstrip()} h{digest}"


_BULLET = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
_DATED = re.compile(r"\s*\(\d{4}-\d{2}-\d{2}\)\s*$")


def fact_text(line: str) -> str:
    """A memory.md line as a fact: without its bullet and its trailing ``(YYYY-MM-DD)``."""
    return " ".join(_DATED.sub("", _BULLET.sub("", line)).split())
