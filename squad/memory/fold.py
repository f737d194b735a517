"""Folding the oldest Insights of a full ``memory.md``: consolidation instead of refusal. Pure.

When a write would take memory.md past its cap (and nightly, for a file over
:data:`NIGHTLY_AT` of it), the oldest fact lines of ``# Insights`` are folded until the file
is back to :data:`FOLD_TO` of its cap: they move whole, byte for byte, to the agent's daily
log (so nothing is lost), and in their place the file keeps one dated summary line per
topic. The summary is extractive (no model): the topic's distinct facts, newest first, after
merging duplicates with the same judgement the memory tools use; superseded lines are moved
but not summarised (they are history already). The nightly consolidation may hand in a
:data:`TopicSummaries` that asks a real model for each topic's line instead
(:mod:`squad.memory.fold_summary`); a topic it gives no usable line keeps the extractive one.

Only fact items are folded: a top-level bullet with its indented continuation lines. Other
lines of the section (prose, sub-headings, code blocks, anything holding a credential) stay
where they are. :func:`plan_fold` chooses what to move; :func:`apply_fold` takes those items
out of whatever the file holds when the write happens (a person may have edited it since the
plan: lines they changed or removed are simply not found, so never lost), and puts the
summary lines where the first of them was.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from functools import lru_cache

from squad.memory.dedupe import SameAs, fact_of, same_key
from squad.memory.document import MemoryDocument, split_lines, superseded

__all__ = [
    "FOLD_SECTION",
    "FOLD_TO",
    "NIGHTLY_AT",
    "FoldPlan",
    "Folded",
    "TopicSummaries",
    "apply_fold",
    "daily_entry",
    "plan_fold",
    "summary_lines",
]

FOLD_SECTION = "Insights"
FOLD_TO = 0.7
"""The share of its cap a fold brings memory.md back to (room for a while of new lines)."""
NIGHTLY_AT = 0.8
"""The share of its cap over which the nightly maintenance folds a memory.md."""
SUMMARY_MAX_CHARS = 240
"""Longest summary text (the facts of one topic; the rest counted as "+N more")."""
FACT_MAX_CHARS = 120
MAX_TOPICS = 8
"""Summary lines per fold at most: the smallest topics beyond them are summarised together."""
OTHER = "other notes"

TopicSummaries = Callable[[Mapping[str, Sequence[str]]], Mapping[str, str]]
"""``{topic: its distinct facts, newest first}`` -> ``{topic: one summary line}`` for the
topics it can summarise (the others keep their extractive line)."""

_BULLET = re.compile(r"^ {0,3}[-*+][ \t]+\S")
_FENCE = re.compile(r"^\s{0,3}(?:`{3,}|~{3,})")
_STAMP = re.compile(r"\((\d{4}-\d\d-\d\d)")
_WORD = re.compile(r"[^\W_]+")
_STOP = frozenset(
    {
        "about", "after", "also", "because", "been", "before", "being", "could", "does",
        "each", "from", "have", "here", "into", "just", "like", "made", "make", "many",
        "more", "most", "much", "must", "need", "only", "other", "over", "same", "should",
        "some", "such", "than", "that", "their", "them", "then", "there", "these", "they",
        "this", "those", "very", "were", "what", "when", "where", "which", "while", "will",
        "with", "would", "your",
    }
)  # fmt: skip


@dataclass(frozen=True)
class FoldPlan:
    """What a fold moves out of the section and what it leaves in its place."""

    items: tuple[str, ...]
    """Each moved item as the file holds it: its lines with their endings."""
    summaries: tuple[str, ...]
    """The summary lines, without line endings."""

    @property
    def lines(self) -> list[str]:
        """Every moved line, without its ending."""
        return [line for item in self.items for line in item.splitlines()]


@dataclass(frozen=True)
class Folded:
    """What one fold did, as its write reports it."""

    moved: int
    """Lines moved whole to the daily log."""
    summaries: int
    daily: str
    """The daily log that holds them (workspace path)."""


@dataclass(frozen=True)
class _Item:
    text: str
    foldable: bool


def _items(body: str) -> list[_Item]:
    """The section body as items: each top-level bullet with its indented continuation
    lines (foldable), every other line on its own (kept)."""
    items: list[_Item] = []
    fenced = False
    for line in split_lines(body):
        bare = line.rstrip("\r\n")
        fence = _FENCE.match(bare) is not None
        if fence:
            fenced = not fenced
        continues = (
            items
            and items[-1].foldable
            and bare.strip()
            and bare[:1] in (" ", "\t")
            and not fence
            and not fenced
        )
        if continues:
            items[-1] = _Item(items[-1].text + line, True)
        elif not fenced and not fence and _BULLET.match(bare):
            items.append(_Item(line, True))
        else:
            items.append(_Item(line, False))
    return items


def plan_fold(
    document: MemoryDocument,
    *,
    need: int,
    room: int,
    day: date,
    pointer: str,
    same_as: SameAs = same_key,
    summarise: TopicSummaries | None = None,
) -> FoldPlan | None:
    """The oldest fact items of ``# Insights`` whose folding frees at least ``need`` bytes of
    memory.md (net of the summary lines), or as many as there are; never more than ``room``
    bytes of them (what the daily log can take). None when nothing can be folded.

    The items are chosen with the extractive summary; ``summarise`` is then asked once for
    the chosen items' lines, which are used when they free at least as much."""
    from squad.text.secrets import contains_secret

    section = document.find(FOLD_SECTION)
    if section is None or need <= 0:
        return None
    candidates = (item.text for item in _items(section.body) if item.foldable)
    chosen: list[str] = []
    summaries: list[str] = []
    freed = kept = 0  # bytes taken out, bytes of the summary lines put in
    exhausted = False
    while True:
        while freed - kept < need:  # enough, were the summaries as long as before
            text = next(candidates, None)
            if text is None or freed + len(text.encode()) > room:
                exhausted = True  # no more items, or no more room in the daily log
                break
            if contains_secret(text):
                continue  # a credential never moves to another file: it stays for a person
            chosen.append(text)
            freed += len(text.encode())
        if not chosen:
            return None
        summaries = summary_lines(chosen, day=day, pointer=pointer, same_as=same_as)
        kept = sum(len(line.encode()) + len(document.newline) for line in summaries)
        if freed - kept >= need or exhausted:
            break
    if freed - kept <= 0:
        return None  # summaries as long as what they replace: folding frees nothing
    if summarise is not None:
        written = summary_lines(
            chosen, day=day, pointer=pointer, same_as=same_as, summarise=summarise
        )
        if sum(len(line.encode()) + len(document.newline) for line in written) <= kept:
            summaries = written
    return FoldPlan(tuple(chosen), tuple(summaries))


def summary_lines(
    items: Sequence[str],
    *,
    day: date,
    pointer: str,
    same_as: SameAs = same_key,
    summarise: TopicSummaries | None = None,
) -> list[str]:
    """One dated line per topic of the (non-superseded) facts of ``items``: extractive, or
    ``summarise``'s line for the topics it gives one."""
    found: list[tuple[str, str | None]] = []  # (fact, its date stamp), oldest first
    for item in items:
        first = item.splitlines()[0] if item.strip() else ""
        if first and not superseded(first):
            stamps = _STAMP.findall(first)
            # continuation lines are detail: the daily log keeps them
            found.append((fact_of(first), stamps[0] if stamps else None))
    # Duplicates share a topic: merged within each topic, which keeps the judging cheap.
    facts: list[str] = []
    counts: list[int] = []
    days: list[list[str]] = []
    groups: dict[str, list[int]] = {}
    for (fact, stamp), topic in zip(found, _topics([f for f, _ in found]), strict=True):
        members = groups.setdefault(topic, [])
        same = same_key(fact, [facts[i] for i in members])  # cheap: the same normal form
        if same is None:
            same = same_as(fact, [facts[i] for i in members])
        if same is None:
            members.append(len(facts))
            facts.append(fact)
            counts.append(1)
            days.append([stamp] if stamp else [])
        else:
            counts[members[same]] += 1
            days[members[same]] += [stamp] if stamp else []
    bounded = _bounded(groups)
    written: Mapping[str, str] = {}
    if summarise is not None and bounded:
        written = summarise({t: [facts[i] for i in reversed(m)] for t, m in bounded.items()})
    lines = []
    for topic, members in bounded.items():
        shown = [_shortened(facts[i]) for i in reversed(members)]  # newest first
        text = f"{topic}: {written[topic]}" if topic in written else _extractive(topic, shown)
        stamped = sorted(d for i in members for d in days[i])
        span = f" of {stamped[0]}" if stamped else ""
        if stamped and stamped[-1] != stamped[0]:
            span += f"..{stamped[-1]}"
        folded = sum(counts[i] for i in members)
        noun = "line" if folded == 1 else "lines"
        lines.append(f"- {text} ({day.isoformat()}; {folded} {noun}{span} in {pointer})")
    return lines


def _extractive(topic: str, shown: Sequence[str]) -> str:
    """The topic's facts (newest first) joined, within :data:`SUMMARY_MAX_CHARS`."""
    text = f"{topic}: {shown[0]}"
    for number, fact in enumerate(shown[1:], start=1):
        more = f" (+{len(shown) - number} more)"
        if len(text) + 2 + len(fact) + len(more) > SUMMARY_MAX_CHARS:
            return text + more
        text += f"; {fact}"
    return text


def _topics(facts: Sequence[str]) -> list[str]:
    """Each fact's topic: its subject when the classifier knows one, else its most specific
    word shared with another fact of the fold (the rarest such word, so that "search" rather
    than "needs" names a group; :data:`OTHER` when it shares none)."""
    subjects = [_subject(fact) for fact in facts]
    words = [
        list(dict.fromkeys(w for w in _WORD.findall(fact.casefold()) if len(w) > 3))
        for fact in facts
    ]
    frequency = Counter(w for i, ws in enumerate(words) if subjects[i] is None for w in ws)
    topics = []
    for subject, ws in zip(subjects, words, strict=True):
        if subject is not None:
            topics.append(subject)
            continue
        shared = [w for w in ws if w not in _STOP and frequency[w] >= 2]
        topics.append(min(shared, key=lambda w: frequency[w]) if shared else OTHER)
    return topics


@lru_cache(maxsize=8192)
def _subject(fact: str) -> str | None:
    from squad.classifier.subjects import subject_for  # its rule tables: only when folding

    return subject_for(fact, "project")


def _bounded(groups: dict[str, list[int]]) -> dict[str, list[int]]:
    """At most :data:`MAX_TOPICS` groups, in the order their first fact came; the smallest
    beyond that are merged into :data:`OTHER`."""
    if len(groups) <= MAX_TOPICS:
        return groups
    biggest = sorted(groups, key=lambda t: (t == OTHER, -len(groups[t]), groups[t][0]))
    kept = set(biggest[: MAX_TOPICS - 1])
    out: dict[str, list[int]] = {}
    for topic, members in groups.items():
        out.setdefault(topic if topic in kept else OTHER, []).extend(members)
    return {topic: sorted(members) for topic, members in out.items()}


def _shortened(fact: str) -> str:
    fact = " ".join(fact.split())
    return fact if len(fact) <= FACT_MAX_CHARS else fact[: FACT_MAX_CHARS - 1].rstrip() + "…"


def apply_fold(document: MemoryDocument, plan: FoldPlan) -> MemoryDocument:
    """``document`` with the plan's items taken out of ``# Insights`` (each the first time
    it is found whole; one a person changed since the plan stays as they left it) and the
    summary lines where the first of them was. Unchanged when none is found."""
    section = document.find(FOLD_SECTION)
    if section is None:
        return document
    lines = split_lines(section.body)
    gone: set[int] = set()
    first: int | None = None
    cursor = 0
    for item in plan.items:
        wanted = [line.rstrip("\r\n") for line in split_lines(item)]
        at = _find(lines, wanted, gone, cursor)
        if at is None:
            continue
        gone.update(range(at, at + len(wanted)))
        first = at if first is None else min(first, at)
        cursor = at + len(wanted)
    if first is None:
        return document
    body = []
    for index, line in enumerate(lines):
        if index == first:
            body += [summary + document.newline for summary in plan.summaries]
        if index not in gone:
            body.append(line)
    return document.with_body(FOLD_SECTION, "".join(body))


def _find(lines: list[str], wanted: list[str], gone: set[int], cursor: int) -> int | None:
    """Where ``wanted`` (lines without endings) first stands whole in ``lines``, clear of
    ``gone``: looked for from ``cursor`` on (items come in file order), then before it."""
    starts: list[int] = [
        *range(cursor, len(lines) - len(wanted) + 1),
        *range(min(cursor, len(lines))),
    ]
    for at in starts:
        if lines[at].rstrip("\r\n") != wanted[0] or at + len(wanted) > len(lines):
            continue
        span = range(at, at + len(wanted))
        if any(i in gone for i in span):
            continue
        if all(lines[at + k].rstrip("\r\n") == wanted[k] for k in range(len(wanted))):
            return at
    return None


def daily_entry(plan: FoldPlan, relative: str) -> str:
    """The daily log entry holding the moved lines, whole and in their order."""
    moved = plan.lines
    return (
        f"Folded from {relative} # {FOLD_SECTION}: {len(moved)} lines, kept here whole; "
        f"{len(plan.summaries)} summary lines took their place.\n\n" + "\n".join(moved)
    )
