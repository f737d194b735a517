"""The quality checks between extraction and memory: pure decisions, no I/O.

Memory fills with junk unless every candidate is questioned (an audit of a popular memory
library found 97.8% of ten thousand extracted memories were junk). Each candidate is, in order:

1. **dropped** when it is not a durable fact: it carries a credential (or the redaction marker
   of one: it was built from a message that did), is a question, reports
   transient status ("I'm running the tests now"), is a suggestion nobody took up ("maybe we
   could try Redis"), or the extractor was not confident enough;
2. **dropped as a duplicate** when memory (or an earlier candidate of the batch) already says
   the same after normalisation (case, punctuation, spacing, dates stamped on lines);
3. **merged** into a near-duplicate (most words shared, same numbers, same negation, and not
   a change of it with a word it did not have): nothing new is written, the existing fact
   counts as seen again;
4. **superseding** an existing fact of the same scope about the same subject (or the one the
   extractor named), or, for a candidate that says it is a change ("we now deploy on
   Tuesdays, not Fridays", "we switched CI from GitHub Actions to Buildkite", "이제 ..."), the
   fact most of whose content words it repeats (:func:`changes`): the new fact is written and
   the old one marked superseded, kept and dated;
5. otherwise **written** as new.

Near-duplicates never merge across a changed number or a negation: "the API listens on 8080"
and "the API listens on 9090" are a contradiction (rule 4), not a duplicate.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from squad.classifier.cues import has_secret
from squad.extraction.candidates import Candidate, Existing
from squad.text.bounded_cache import BoundedCache, text_key
from squad.text.secrets import contains_redaction

__all__ = [
    "CHANGE_OVERLAP",
    "NEAR_DUPLICATE",
    "Decision",
    "changes",
    "contained",
    "containment",
    "decide",
    "drop_reason",
    "normalise",
    "similarity",
]

NEAR_DUPLICATE = 0.8
"""Similarity at or above which two facts with the same numbers and negation are one fact."""

Kind = Literal["write", "merge", "drop"]

_I = re.IGNORECASE
_DATE_STAMP = re.compile(r"\s*\((?:\d{4}-\d\d-\d\d)[^)]*\)\s*$")
_QUESTION = re.compile(r"[?？]\s*$")
_TRANSIENT = [
    re.compile(p, _I)
    for p in (
        r"^(?:i'?m|i am|we'?re|we are|it'?s|it is)\s+(?:now\s+|just\s+|currently\s+|still\s+)?"
        r"(?:running|working on|looking (?:at|into)|checking|waiting|trying|about to|debugging"
        r"|building|deploying|compiling|fixing|writing|reading|testing)\b",
        r"\b(?:currently|right now|at the moment|as we speak)\b.*\b(?:running|working|waiting"
        r"|building|deploying|looking|checking|debugging|loading|compiling|down|failing)\b",
        r"\b(?:is|are)\s+(?:running|building|deploying|loading|compiling|failing|down)\s+"
        r"(?:now|right now|at the moment)\b",
        r"\b(?:in progress|brb|one sec(?:ond)?|give me a (?:sec|second|minute))\b",
        r"(?:지금|현재|잠시).{0,30}(?:중이|중입니다|중이에요|중이야|하는 중|돌리는 중|보는 중)",
    )
]
_SUGGESTION = [
    re.compile(p, _I)
    for p in (
        r"^(?:maybe|perhaps)\b",
        r"\b(?:how about|what if|we could|you could|might want to|why don'?t we|shall we"
        r"|it might be worth)\b",
        r"^consider\b",
        r"어떨까|어때요|어때\??$|어떨지|해보면 어떨|하는 건 어때",
    )
]
_NEGATION = re.compile(
    r"\b(?:not|no longer|never|no|don'?t|doesn'?t|isn'?t|aren'?t|won'?t|without)\b"
    r"|않|안 |못 |없",
    _I,
)
_NUMBER = re.compile(r"\d+(?:[.:]\d+)*")
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_CHANGE = re.compile(
    r"\b(?:now|no longer|any ?more|switched|moved|migrated|changed|replaced|instead"
    r"|from now on|going forward|these days)\b|\bnot\s+\w+\s*[.!]?$"
    r"|이제|바꿨|바꾸었|바뀌었|변경|대신|옮겼|더 이상",
    _I,
)
"""A fact that says it is a change of an earlier one."""
CHANGE_OVERLAP = 0.5
"""Share of an earlier fact's content words a change must repeat to supersede it."""
_FUNCTION_WORDS = frozenset(
    {
        "the", "and", "for", "our", "are", "was", "were", "with", "from", "this", "that",
        "now", "not", "use", "uses", "used", "using", "has", "have", "had", "its", "all",
        "any", "anymore", "longer", "into", "onto", "than", "then", "but", "also", "just",
        "instead", "switched", "moved", "migrated", "changed", "replaced", "will", "should",
    }
)  # fmt: skip


def normalise(text: str) -> str:
    """The form two texts share when they say the same thing: NFKC, casefolded, without
    punctuation, a trailing date stamp or markdown strike-through, spaces collapsed."""
    text = unicodedata.normalize("NFKC", text).replace("~~", "")
    text = _DATE_STAMP.sub("", text.strip())
    return " ".join(_WORD.findall(text.casefold()))


_SHINGLES: BoundedCache[frozenset[str]] = BoundedCache(4096, max_weight=500_000)
"""Texts' words by the text, up to 500,000 characters of texts (a text's words weigh about
five bytes a character of it): a memory's lines, and the messages of a batch or two."""


def _shingles(text: str) -> frozenset[str]:
    """A text's words and Korean bigrams, kept: an echo check compares each assistant fact
    with every earlier message of its batch, and each candidate with the memory's lines."""
    return _SHINGLES.get(text_key(text), lambda: _shingles_of(text), len(text))


def _shingles_of(text: str) -> frozenset[str]:
    words = normalise(text).split()
    grams = {w for w in words if len(w) > 2 or not w.isascii()}
    for word in words:  # Korean words change shape with particles: compare their bigrams too
        if not word.isascii() and len(word) > 1:
            grams |= {word[i : i + 2] for i in range(len(word) - 1)}
    return frozenset(grams)


def containment(part: str, whole: str) -> float:
    """How much of ``part``'s words (and Korean bigrams) ``whole`` contains, 0 to 1."""
    return contained(_shingles(part), _shingles(whole))


def shingles(text: str) -> frozenset[str]:
    """``text``'s words and Korean bigrams, as :func:`containment` compares them."""
    return _shingles(text)


def contained(inner: frozenset[str], outer: frozenset[str]) -> float:
    """:func:`containment` of two texts' :func:`shingles`."""
    if not inner:
        return 0.0
    return len(inner & outer) / len(inner)


def similarity(a: str, b: str) -> float:
    """How much two facts say alike, 0 to 1: overlap of their words (and Korean bigrams)."""
    left, right = _shingles(a), _shingles(b)
    if not left or not right:
        return 1.0 if normalise(a) == normalise(b) else 0.0
    small, large = sorted((len(left), len(right)))
    overlap: float = len(left & right) / small
    return overlap * math.sqrt(small / large)


def _content(text: str) -> frozenset[str]:
    return frozenset(w for w in _shingles(text) if w not in _FUNCTION_WORDS)


def changes(candidate: str, earlier: str) -> bool:
    """Whether ``candidate`` says it changes ``earlier``: it reads as a change and repeats at
    least two and :data:`CHANGE_OVERLAP` of ``earlier``'s content words (so "we now use ruff
    for linting" does not replace "we use black for formatting")."""
    if not _CHANGE.search(candidate):
        return False
    old = _content(earlier)
    shared = len(old & _content(candidate))
    return shared >= 2 and shared >= CHANGE_OVERLAP * len(old)


def _news(candidate: str, earlier: str) -> bool:
    """Whether ``candidate`` changes ``earlier`` with words it did not have ("Dana owns the
    billing service now" after "Ji-ho owns the billing service"): never a near-duplicate."""
    return changes(candidate, earlier) and bool(_content(candidate) - _content(earlier))


def _same_claims(a: str, b: str) -> bool:
    """Same numbers and the same negation: only then can two similar facts be one."""
    return set(_NUMBER.findall(a)) == set(_NUMBER.findall(b)) and bool(_NEGATION.search(a)) == bool(
        _NEGATION.search(b)
    )


def drop_reason(candidate: Candidate, *, min_confidence: float = 0.0) -> str | None:
    """Why ``candidate`` is not a durable fact, or None when it may be one."""
    if candidate.dropped:
        return candidate.dropped
    text = candidate.text.strip()
    if len(normalise(text)) < 3:
        return "empty"
    if has_secret(text) or contains_redaction(text):
        return "secret"
    if _QUESTION.search(text):
        return "question"
    if any(p.search(text) for p in _TRANSIENT):
        return "transient status"
    if any(p.search(text) for p in _SUGGESTION):
        return "suggestion nobody accepted"
    if candidate.confidence < min_confidence:
        return f"low confidence ({candidate.confidence:.2f} < {min_confidence:.2f})"
    return None


@dataclass(frozen=True)
class Decision:
    """What happens to one candidate."""

    kind: Kind
    candidate: Candidate
    reason: str
    """``new``, ``supersedes``, ``near-duplicate``, ``duplicate``, or why it was dropped."""
    target: Existing | None = None
    """The fact merged into (merge), the fact superseded (write), the duplicate (drop)."""


def decide(
    candidates: Sequence[Candidate],
    existing: Sequence[Existing],
    *,
    min_confidence: float = 0.0,
    near: float = NEAR_DUPLICATE,
) -> list[Decision]:
    """One decision per candidate, in order (see the module docstring)."""
    by_number = {e.number: e for e in existing}
    # A later candidate about the same subject replaces an earlier one of the same batch.
    last_for_subject: dict[tuple[str, str], int] = {}
    reasons = [drop_reason(c, min_confidence=min_confidence) for c in candidates]
    for i, c in enumerate(candidates):
        if c.subject and reasons[i] is None:
            last_for_subject[(c.scope, c.subject)] = i
    decisions: list[Decision] = []
    accepted: list[Candidate] = []
    superseded_here: set[str] = set()
    for i, candidate in enumerate(candidates):
        reason = reasons[i]
        if reason is not None:
            decisions.append(Decision("drop", candidate, reason))
            continue
        key = normalise(candidate.text)
        if any(normalise(a.text) == key for a in accepted):
            decisions.append(Decision("drop", candidate, "duplicate in the batch"))
            continue
        if candidate.subject and last_for_subject[(candidate.scope, candidate.subject)] != i:
            later = candidates[last_for_subject[(candidate.scope, candidate.subject)]]
            if normalise(later.text) != key:
                decisions.append(Decision("drop", candidate, "superseded in the same batch"))
                continue
        same_scope = [e for e in existing if e.scope == candidate.scope]
        exact = next((e for e in same_scope if normalise(e.text) == key), None)
        if exact is not None:
            decisions.append(Decision("drop", candidate, "duplicate", exact))
            continue
        close = max(
            (
                (similarity(candidate.text, e.text), e.number, e)
                for e in same_scope
                if _same_claims(candidate.text, e.text) and not _news(candidate.text, e.text)
            ),
            default=None,
            key=lambda item: (item[0], item[1]),
        )
        if close is not None and close[0] >= near:
            decisions.append(Decision("merge", candidate, "near-duplicate", close[2]))
            accepted.append(candidate)
            continue
        old = _superseded(candidate, same_scope, by_number, superseded_here)
        accepted.append(candidate)
        if old is not None:
            superseded_here.add(old.ref)
            decisions.append(Decision("write", candidate, "supersedes", old))
        else:
            decisions.append(Decision("write", candidate, "new"))
    return decisions


def _superseded(
    candidate: Candidate,
    same_scope: Sequence[Existing],
    by_number: dict[int, Existing],
    taken: set[str],
) -> Existing | None:
    named = by_number.get(candidate.replaces) if candidate.replaces is not None else None
    if named is not None and named.scope == candidate.scope and named.ref not in taken:
        return named
    if candidate.subject:
        for e in reversed(same_scope):  # the newest fact about the subject
            if e.subject == candidate.subject and e.ref not in taken:
                return e
    changed = [e for e in same_scope if e.ref not in taken and changes(candidate.text, e.text)]
    if changed:  # the one it repeats most of, the newest of equals
        return max(changed, key=lambda e: (similarity(candidate.text, e.text), e.number))
    return None
