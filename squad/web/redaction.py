"""No secret leaves through the web front end: workspace text is shown with each credential
replaced by ``[REDACTED:<kind>]`` (the file on disk is untouched; ``squad ws show`` on the
machine shows it whole), and keys named in a squad definition show only as set or not set.

Search results are redacted line by line; the match spans are found again on the redacted
line, so a query for the secret itself finds nothing to show.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from typing import TypeVar

from squad.text.grep import (
    DEFAULT_TIMEOUT_S,
    ContextLineDict,
    LineMatchDict,
    SearchPattern,
    find_spans,
)
from squad.text.secrets import redact

__all__ = ["key_state", "redacted_hits", "redacted_text"]

M = TypeVar("M", bound=LineMatchDict)


def redacted_text(text: str) -> tuple[str, int]:
    """``text`` with its credentials redacted, and how many there were."""
    shown, found = redact(text)
    return shown, len(found)


def key_state(env_name: str | None, environ: Mapping[str, str] | None = None) -> str | None:
    """``set`` or ``not set`` for the variable a model's key is read from (None: no key)."""
    if not env_name:
        return None
    env = os.environ if environ is None else environ
    return "set" if env.get(env_name) else "not set"


def redacted_hits(
    matches: Iterable[M], pattern: SearchPattern, *, where: str
) -> tuple[list[M], int]:
    """Search matches (``LineMatch.to_dict`` shapes, alone or within a memory hit) with every
    shown line redacted; a match whose spans were all inside a credential is left out.
    Returns them and how many lines were redacted."""
    kept: list[M] = []
    hidden = 0
    for match in matches:
        line, count = redacted_text(match["line"])
        shown = match.copy()
        if count:
            hidden += 1
            spans = find_spans(pattern, line, timeout_s=DEFAULT_TIMEOUT_S, where=where)
            if not spans:
                continue
            shown["line"] = line
            shown["spans"] = [[s, e] for s, e in spans]
        shown["before"], before = _redacted_context(match["before"])
        shown["after"], after = _redacted_context(match["after"])
        hidden += before + after
        kept.append(shown)
    return kept, hidden


def _redacted_context(lines: list[ContextLineDict]) -> tuple[list[ContextLineDict], int]:
    shown: list[ContextLineDict] = []
    hidden = 0
    for item in lines:
        text, count = redacted_text(item["line"])
        hidden += bool(count)
        shown.append({**item, "line": text})
    return shown, hidden
