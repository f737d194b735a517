"""Reading prompts the way the offline model does: labelled sections, words, clauses.

Pure functions over strings, no I/O. A section is a ``Label: value`` line or a ``Label:`` /
``## Label`` line followed by its body; only the labels in :data:`LABELS` count, each mapped
to the canonical name the offline model asks for (``Squad goal:`` -> ``goal``).
"""

from __future__ import annotations

import re

from squad.paths import SLUG_PATTERN

__all__ = [
    "LABELS",
    "SLUG",
    "STOPWORDS",
    "VERBS",
    "clauses",
    "mentions",
    "section",
    "sections",
    "sentence_case",
    "sentences",
    "shorten",
    "stem",
    "terms",
    "word_set",
    "words",
]


def word_set(words: str) -> frozenset[str]:
    return frozenset(words.split())


LABELS: dict[str, str] = {
    "goal": "goal",
    "squad goal": "goal",
    "objective": "goal",
    "agents": "agents",
    "available agents": "agents",
    "team": "agents",
    "your team": "agents",
    "task": "task",
    "your task": "task",
    "task description": "task",
    "expected output": "expected",
    "acceptance criteria": "expected",
    "work": "work",
    "work to review": "work",
    "output": "work",
    "result": "work",
    "submission": "work",
    "deliverable": "work",
    "draft": "work",
    "conversation": "conversation",
    "transcript": "conversation",
}
_GREEDY = {"work", "conversation"}  # run to the end: they hold headings and labels of their own
_LABEL_LINE = re.compile(
    r"^\s*(?:#{1,6}\s*)?(?:\*\*)?(?P<label>[A-Za-z][A-Za-z ]{0,30}?)(?:\*\*)?\s*"
    r"(?::(?:\*\*)?\s*(?P<rest>.*)|$)"
)
_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9'-]*")
SLUG = re.compile(SLUG_PATTERN)
STOPWORDS = word_set(
    """a about above after again all also an and any are as at be been before being below but
    by can could did do does doing done each few for from further had has have having here how
    i if in into is it its itself just me more most my no nor not of off on once only or other
    our out over own same she should so some such than that the their them then there these they
    this those through to too under until up very was we were what when where which while who
    whom why will with would you your yours please make sure using use via etc hello hey
    thanks thank"""
)
VERBS = word_set(
    """add analyse analyze assess audit build check clean collect compare compile create debug
    decide define deploy describe design document draft edit estimate evaluate explain find fix
    gather identify implement improve install integrate interview investigate list measure
    migrate monitor optimise optimize outline plan polish prepare present profile proofread
    prototype publish refactor release report research review revise rewrite run schedule score
    set ship sketch split summarise summarize survey test translate update validate verify
    write"""
)


def mentions(text: str, word: str) -> bool:
    return re.search(rf"\b{word}\b", text) is not None


def sections(text: str) -> dict[str, str]:
    """Known labelled sections of ``text``; the first of each label wins.

    ``Label: value`` is one line; ``Label:`` or ``## Label`` alone takes the lines below it up
    to the next label. Work and conversation sections run to the end of the text.
    """
    found: dict[str, list[str]] = {}
    current: list[str] | None = None
    greedy = False
    for line in text.splitlines():
        match = None if greedy else _LABEL_LINE.match(line)
        label = LABELS.get(match["label"].strip().lower()) if match else None
        if match and label:
            current = [] if label not in found else None
            if current is not None:
                found[label] = current
                greedy = label in _GREEDY
                if match["rest"]:
                    current.append(match["rest"])
                    current = current if greedy else None
        elif current is not None:
            current.append(line)
    return {k: "\n".join(v).strip() for k, v in found.items() if "\n".join(v).strip()}


def section(text: str, label: str) -> str | None:
    return sections(text).get(label)


def words(text: str) -> list[str]:
    return [w.lower().strip("'-") for w in _WORD.findall(text)]


def terms(text: str, limit: int = 8) -> list[str]:
    """Content words in order of appearance: the key terms of a task."""
    out: list[str] = []
    for word in words(text):
        if len(word) >= 4 and word not in STOPWORDS and word.isalnum() and word not in out:
            out.append(word)
    return out[:limit]


def stem(word: str) -> str:
    return word[:4] if len(word) >= 4 else word


def sentences(text: str) -> list[str]:
    parts = re.split(r"(?<=[.!?])\s+|\n+|;\s*", text)
    return [p.strip(" \t-*•>").strip() for p in parts if p.strip(" \t-*•>").strip()]


def clauses(text: str) -> list[str]:
    """Sentences, further split at ``then`` and at ``and`` or ``,`` before a known verb."""
    out: list[str] = []
    for sentence in sentences(text):
        for piece in re.split(r",?\s+(?:and\s+)?then\s+", sentence, flags=re.IGNORECASE):
            tokens = piece.split()
            start = 0
            for i in range(1, len(tokens)):
                prev, word = tokens[i - 1], tokens[i].lower().strip(",")
                joined = prev.lower() == "and" or prev.endswith(",")
                if word in VERBS and joined and i - start >= 2:
                    end = i - 1 if prev.lower() == "and" else i
                    out.append(" ".join(tokens[start:end]))
                    start = i
            out.append(" ".join(tokens[start:]))
    out = [
        re.sub(r"^(?:and|then|also|next|finally|first)\s+", "", c.strip(" .,;:"), flags=re.I)
        for c in out
    ]
    return [c for c in out if len(words(c)) >= 2 or c.lower() in VERBS]


def sentence_case(text: str) -> str:
    text = text.strip().rstrip(".;:,")
    return (text[:1].upper() + text[1:] + ".") if text else text


def shorten(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rsplit(" ", 1)[0] + "…"
