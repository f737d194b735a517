"""Decisions as text, pure: the key that finds a repeated decision, the order of a search's
hits, and ``decisions.md`` rendered whole from the store's records.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

from squad.store.decisions import DecisionRecord

__all__ = ["decision_key", "rank_decisions", "render_decisions"]


def decision_key(text: str) -> str:
    """What makes two decision texts the same decision: sha256 of the text case-folded, its
    whitespace collapsed and its final punctuation dropped."""
    normal = re.sub(r"\s+", " ", text.casefold()).strip().rstrip(".!。 ")
    return hashlib.sha256(normal.encode()).hexdigest()


def rank_decisions(
    decisions: Sequence[DecisionRecord], words: Sequence[str]
) -> list[DecisionRecord]:
    """The decisions holding every one of ``words`` (case-folded) in some field, best first.

    Best: more query words in the title, then more (field, word) matches over title,
    decision, reasons and alternatives, then the newer.
    """
    scored = []
    for d in decisions:
        fields = [
            d.title.casefold(),
            d.decision.casefold(),
            "\n".join(d.reasons).casefold(),
            "\n".join(d.alternatives).casefold(),
        ]
        if not all(any(w in f for f in fields) for w in words):
            continue
        title_hits = sum(w in fields[0] for w in words)
        hits = sum(w in f for f in fields for w in words)
        scored.append(((-title_hits, -hits, -d.decided_at.timestamp(), -d.id), d))
    scored.sort(key=lambda pair: pair[0])
    return [d for _, d in scored]


def render_decisions(squad: str, decisions: Sequence[DecisionRecord]) -> str:
    """``decisions.md`` for ``squad``: every decision in id order, superseded ones struck."""
    out = [
        "# Decisions",
        "",
        f"Decisions of squad `{squad}` and their reasons, in the order they were made. squad "
        "writes this file from its state database, so edits here do not last: record a new "
        "decision instead (`squad decisions record`), which may supersede an old one. A "
        "superseded decision stays here, struck through, with a link to what replaced it.",
    ]
    for d in sorted(decisions, key=lambda d: d.id):
        out += ["", f'<a id="decision-{d.id}"></a>']
        if d.superseded_by is None:
            out.append(f"## {d.id}. {_inert(d.title)}")
        else:
            out.append(f"## ~~{d.id}. {_inert(d.title)}~~")
        out.append("")
        if d.superseded_by is not None:
            out += [
                f"**Superseded by [decision {d.superseded_by}](#decision-{d.superseded_by}).**",
                "",
            ]
        if d.supersedes is not None:
            out += [f"Supersedes [decision {d.supersedes}](#decision-{d.supersedes}).", ""]
        for line in _inert(d.decision).splitlines():
            line = line.strip()
            struck = line and d.superseded_by is not None
            out.append(f"> ~~{line}~~" if struck else f"> {line}".rstrip())
        out += ["", "Reasons:"]
        out += [f"- {_one_line(reason)}" for reason in d.reasons]
        if d.alternatives:
            out += ["", "Alternatives considered:"]
            out += [f"- {_one_line(alternative)}" for alternative in d.alternatives]
        when = d.decided_at.strftime("%Y-%m-%d %H:%M UTC")
        out += ["", f"Decided by `{d.decided_by}` on {when}."]
    return "\n".join(out) + "\n"


def _one_line(text: str) -> str:
    return _inert(re.sub(r"\s+", " ", text).strip())


def _inert(text: str) -> str:
    """Text that renders as itself: no HTML tag (a fake ``decision-N`` anchor) gets in."""
    return text.replace("&", "&amp;").replace("<", "&lt;")
