"""The extractor's decisions: a conversation's clear decisions, filed in the decisions log.

Besides the one-line ``Decisions`` entry in memory.md, a decision the conversation gives a
reason for is recorded in the squad's decisions log
(:class:`squad.memory.decisions.log.DecisionLog`) with that reason: the "because ..." / "since
..." part of its sentence, or the sentence right after it when that one starts with "because",
"the reason is"... Only decisions that state a reason are filed: the log is for decisions
*with their reasons*, and repeating the decision as its own reason would only look like one.
Filing is idempotent: a decision the squad's log holds already (same text, spacing and case
aside) is not recorded again, so re-reading the same messages files nothing new.

:func:`stated_decision` is pure; :func:`file_decisions` writes.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from squad.classifier.subjects import section_for
from squad.errors import MemoryError_, UsageError, WorkspaceError
from squad.extraction.candidates import ConversationMessage
from squad.extraction.quality import Decision as Verdict
from squad.memory.agent import AgentContext
from squad.memory.decisions.log import DecisionLog

__all__ = ["StatedDecision", "file_decisions", "stated_decision"]

TITLE_CHARS = 80

_SENTENCE_BREAK = re.compile(r"(?<=[.!?。])\s+|\s*\n\s*")
_INLINE_CUE = re.compile(
    r"(?:,\s*|\s+|^)(?:because(?: of)?|since|given that|due to)\s+", re.IGNORECASE
)
_KOREAN_CUE = re.compile(r"^(?P<reason>.+?(?:때문에|이유로))\s*,?\s*(?P<decision>.+)$")
_LEADING_CUE = re.compile(
    r"^(?:(?:that's|that is|this is|it's|it is)\s+because|because|since|the reasons? (?:is|are|"
    r"being|was|were)(?: that)?|reasons?:|why\?|왜냐하면|이유는)\s*[:,—-]?\s*",
    re.IGNORECASE,
)
_TEMPORAL = re.compile(
    r"^(?:\d|v\d|last\b|yesterday|today|then\b|the (?:start|beginning|end)\b|(?:jan|feb|mar|apr"
    r"|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b|(?:mon|tues|wednes|thurs|fri|satur|sun)day)",
    re.IGNORECASE,
)
_DECIDED = re.compile(
    r"^(?:so\s*,?\s*)?(?:we(?:'ve| have)?|i(?:'ve| have)?)\s+(?:decided|agreed|chose|settled)"
    r"\s+(?:to|on|that)\s+",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class StatedDecision:
    """A decision as the log will hold it."""

    title: str
    decision: str
    reasons: tuple[str, ...]


def stated_decision(fact: str, sources: Sequence[str] = ()) -> StatedDecision | None:
    """The decision ``fact`` states, with the reason given for it in ``fact`` itself or else in
    one of its ``sources`` (the messages it was extracted from); None when none states one."""
    fact = re.sub(r"\s+", " ", fact).strip()
    found = _reasoned(fact)
    decision = found[0] if found else fact
    reason = found[1] if found else None
    for source in sources:
        if reason is not None:
            break
        from_source = _reasoned(source)
        reason = from_source[1] if from_source else None
    decision = _clean(decision)
    if reason is None or not decision:
        return None
    decision = decision[:1].upper() + decision[1:]
    return StatedDecision(_title(decision), decision, (reason,))


def file_decisions(
    log: DecisionLog,
    ctx: AgentContext,
    verdicts: Sequence[Verdict],
    batch: Sequence[ConversationMessage],
    *,
    written: Sequence[dict[str, object]],
    on_error: Callable[[str, Exception], None] | None = None,
) -> list[int]:
    """Record the reasoned decisions among the project facts just ``written`` to memory.md's
    Decisions section; the ids of the decisions recorded now (not those already there).

    A decision the log refuses (a cap, a credential) is skipped and told to ``on_error``: the
    memory.md entry stands on its own.
    """
    filed_texts = {
        str(entry["text"])
        for entry in written
        if str(entry.get("where", "")).endswith("#Decisions")
    }
    by_index = {m.index: m.content for m in batch}
    recorded: list[int] = []
    for verdict in verdicts:
        candidate = verdict.candidate
        if verdict.kind != "write" or candidate.text not in filed_texts:
            continue
        sources = [by_index[i] for i in candidate.source_turns if i in by_index]
        stated = stated_decision(candidate.text, sources)
        if stated is None:
            continue
        try:
            decision, created = log.record_once(
                ctx.squad.name,
                ctx.workspace,
                title=stated.title,
                decision=stated.decision,
                reasons=stated.reasons,
                decided_by=f"agent:{ctx.agent.id}",
            )
        except (MemoryError_, UsageError, WorkspaceError) as exc:
            if on_error is not None:
                on_error(candidate.text, exc)
            continue
        if created:
            recorded.append(decision.id)
    return recorded


def _reasoned(text: str) -> tuple[str, str] | None:
    """(decision, reason) from the decision sentence of ``text`` and the one after it."""
    sentences = [s.strip() for s in _SENTENCE_BREAK.split(text.strip()) if s.strip()]
    if not sentences:
        return None
    at = next((i for i, s in enumerate(sentences) if section_for(s) == "Decisions"), 0)
    sentence = sentences[at]
    split = _split_sentence(sentence)
    if split is not None:
        return split
    if at + 1 < len(sentences):
        lead = _LEADING_CUE.match(sentences[at + 1])
        if lead is not None:
            reason = _clean(sentences[at + 1][lead.end() :])
            if _is_reason(reason):
                return _clean(sentence), reason
    return None


def _split_sentence(sentence: str) -> tuple[str, str] | None:
    """A decision sentence holding its own reason: "X because Y", "Because Y, X", Korean
    "Y 때문에 X"."""
    korean = _KOREAN_CUE.match(sentence)
    if korean is not None and section_for(korean["decision"]) == "Decisions":
        return _clean(korean["decision"]), _clean(korean["reason"])
    cue = _INLINE_CUE.search(sentence)
    if cue is None:
        return None
    if cue.start() == 0:  # "Because Y, we decided X"
        reason, comma, decision = sentence[cue.end() :].partition(", ")
        if not comma:
            return None
    else:
        decision, reason = sentence[: cue.start()], sentence[cue.end() :]
    decision, reason = _clean(decision), _clean(reason)
    return (decision, reason) if decision and _is_reason(reason) else None


def _is_reason(text: str) -> bool:
    """Enough of a reason: words, and not a point in time ("since March")."""
    return len(text) >= 3 and bool(re.search(r"\w", text)) and not _TEMPORAL.match(text)


def _clean(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip(" ,;:—-").rstrip(".!。").strip()


def _title(decision: str) -> str:
    """A one-line title: the decision without "we decided to", capitalised, shortened."""
    title = _DECIDED.sub("", decision).strip() or decision
    title = title[:1].upper() + title[1:]
    if len(title) <= TITLE_CHARS:
        return title
    cut = title[: TITLE_CHARS - 1].rsplit(" ", 1)[0]
    return cut.rstrip(" ,;:") + "…"
