"""Reading prompts the way the offline model does: labelled sections, words, clauses.

Pure functions over strings, no I/O. A section is a ``Label: value`` line or a ``Label:`` /
``## Label`` line followed by its body; only the labels in :data:`LABELS` count, each mapped
to the canonical name the offline model asks for (``Squad goal:`` -> ``goal``).
"""

from __future__ import annotations

import re

from squad.paths import SLUG_PATTERN

__all__ = [
    "ABBREVIATIONS",
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
_ANY_WORD = re.compile(r"[^\W_]+")
"""A word in any script (Hangul too): what makes a clause worth a task."""
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


def sections(text: str, *, paragraphs: bool = False) -> dict[str, str]:
    """Known labelled sections of ``text``; the first of each label wins.

    ``Label: value`` runs on over the lines below it while its sentence is unfinished (a
    value wrapped over lines), up to a blank line; with ``paragraphs``, when a label follows
    it, up to that label, blank lines and all (a goal of several paragraphs in a prompt that
    goes on with its next section). ``Label:`` or ``## Label`` alone takes the lines below it
    up to the next label. Work and conversation sections run to the end of the text.
    """
    found: dict[str, list[str]] = {}
    inline: dict[str, bool] = {}
    closed: set[str] = set()  # inline sections a label line ended
    current: str | None = None
    greedy = False
    for line in text.splitlines():
        match = None if greedy else _LABEL_LINE.match(line)
        label = LABELS.get(match["label"].strip().lower()) if match else None
        if match and label:
            if current is not None:
                closed.add(current)
            current = label if label not in found else None
            if current is not None:
                found[current] = [match["rest"]] if match["rest"] else []
                inline[current] = bool(match["rest"])
                greedy = label in _GREEDY
        elif current is not None:
            found[current].append(line)
    for label, lines in found.items():
        if inline[label] and label not in _GREEDY and not (paragraphs and label in closed):
            found[label] = _wrapped(lines)
    return {k: "\n".join(v).strip() for k, v in found.items() if "\n".join(v).strip()}


def _wrapped(lines: list[str]) -> list[str]:
    """The first line and those its sentence runs on to (up to a blank line, or the line
    that ends it with ``.``, ``!``, ``?``, ``:``)."""
    kept = lines[:1]
    for line in lines[1:]:
        if not line.strip() or re.search(r"[.!?:。！？]\W*$", kept[-1].rstrip()):
            break
        kept.append(line)
    return kept


def section(text: str, label: str, *, paragraphs: bool = False) -> str | None:
    return sections(text, paragraphs=paragraphs).get(label)


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


_ITEM = re.compile(r"^\s*(?:[-*+•>]|\d{1,3}[.)])\s+")
"""A list item's marker (``-``, ``*``, ``1.``, ``2)``, a quote's ``>``) at the start of a line."""
_HEADING = re.compile(r"^\s*#{1,6}\s")
_END = re.compile(r"[.!?]+[\"'”’)\]」』]*(?=\s)|[。！？]+[\"'”’)\]」』]*|[;；]")
"""Where a sentence may end: terminal punctuation (closing quotes and brackets kept with it)
before a space (full-width, as CJK text writes it, before anything), or a semicolon."""
ABBREVIATIONS = word_set(
    """e.g i.e cf vs al approx incl esp fig mr mrs ms dr prof st jr sr no vol ca resp viz"""
)
"""Words whose period ends no sentence (``e.g. the README``, ``Dr. Kim``)."""


def _lines_to_blocks(text: str) -> list[str]:
    """Lines joined where a sentence runs on: a line break is a space, except that a blank
    line, a list item and a heading start a new block, and so does a line that begins with a
    capitalised verb after a line without end punctuation (a goal written one task a line)."""
    blocks: list[list[str]] = []
    current: list[str] = []

    def close() -> None:
        nonlocal current
        if current:
            blocks.append(current)
        current = []

    for line in text.splitlines():
        stripped = line.strip()
        if not stripped:
            close()
        elif _ITEM.match(line) or _HEADING.match(line):
            close()
            current = [_ITEM.sub("", line).strip(" \t#")]
            if _HEADING.match(line):
                close()
        elif current and _starts_a_task(current[-1], stripped):
            close()
            current = [stripped]
        else:
            current.append(stripped)
    close()
    return [" ".join(lines) for lines in blocks]


def _starts_a_task(previous: str, line: str) -> bool:
    first = line.split()[0]
    last = words(previous)[-1:] or [""]
    return (
        first[:1].isupper()
        and first.lower().strip(",:;") in VERBS
        and not re.search(r"[.!?:,;。！？]$", previous)
        and last[0] not in STOPWORDS
    )


def _ends_here(block: str, end: re.Match[str]) -> bool:
    """Whether the punctuation at ``end`` ends a sentence: not an abbreviation's period
    (``e.g.``, ``Dr.``), an initial's (``J. Kim``), an inline list number's (``1. do``) or,
    before a lowercase word, a dotted initialism's (``the U.S. team``) or ``etc.``'s."""
    if not end.group().startswith(".") or end.group().startswith(".."):
        return True
    before = re.search(r"(\S+)$", block[: end.start()])
    word = before[1].lstrip("([\"'“‘").lower() if before else ""
    after = block[end.end() :].lstrip()
    lower_next = bool(after) and (after[0].islower() or after[0].isdigit())
    if word in ABBREVIATIONS or word.isdigit():
        return False
    if len(word) == 1 and word.isalpha() and block[end.start() - 1].isupper():
        return False
    if word == "etc" or re.fullmatch(r"(?:[a-z]\.)+[a-z]", word):
        return not lower_next
    return True


def sentences(text: str) -> list[str]:
    """The sentences of ``text``: a sentence runs on over a single line break (text wrapped in
    YAML or a prompt); a blank line, a list item or a heading ends one, as do ``.``, ``!``,
    ``?`` (and their full-width forms) before a space, and ``;``. Korean sentences end the
    same way (``...한다.``); a period after an abbreviation does not end one."""
    out: list[str] = []
    for block in _lines_to_blocks(text):
        start = 0
        for end in _END.finditer(block):
            if _ends_here(block, end):
                out.append(block[start : end.end()])
                start = end.end()
        out.append(block[start:])
    parts = [_ITEM.sub("", p.strip().rstrip(";；")).strip() for p in out]
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
    return [c for c in out if len(_ANY_WORD.findall(c)) >= 2 or c.lower() in VERBS]


def sentence_case(text: str) -> str:
    text = text.strip().rstrip(".;:,")
    return (text[:1].upper() + text[1:] + ".") if text else text


def shorten(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rsplit(" ", 1)[0] + "…"
