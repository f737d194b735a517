"""Session compression: a long chat's history cut to a token budget, landmarks kept. Pure.

Past the budget, the history sent with a turn becomes, in this order:

1. ONE summary message (role ``user``, the role every provider accepts anywhere after the
   system prompt), starting ``[Earlier in this session]``, standing for every older message
   that is not kept;
2. the older *landmarks*, verbatim and in order: new requests (a user message that asks for
   something), decisions ("we'll go with", "decided", "let's use", "하기로", "결정"), errors
   (a traceback, an ``...Error:``, "I get an error", "에러가 나요") with the assistant reply
   that follows each (its fix), and user corrections ("no,", "actually", "that's wrong", "not
   X but Y", "아니", "틀렸");
3. the most recent ``keep_turns`` turns, verbatim (a turn starts at a user message).

Landmarks are kept oldest first as far as the budget allows; when they do not all fit, the
*oldest* landmarks join the summary first (so what is kept is the newest landmarks). The
summary gets whatever room is left and is cut to fit it.

Guarantees: a history within the budget comes back unchanged; whenever the recent turns fit
the budget, the result fits it too (the summary is left out when not even its first line
fits); recent turns are never changed or dropped. A message costs the tokens of its content
plus :data:`MESSAGE_OVERHEAD`. Same input, same output.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum

from squad.classifier.cues import CUES
from squad.model.types import Message, Role
from squad.text.tokens import TokenCounter

__all__ = [
    "KEEP_TURNS",
    "MESSAGE_OVERHEAD",
    "SUMMARY_PREFIX",
    "SUMMARY_ROLE",
    "CompressedHistory",
    "Landmark",
    "Summariser",
    "compress_history",
    "fit_text",
    "history_tokens",
    "landmarks",
    "message_tokens",
    "recent_start",
]

SUMMARY_PREFIX = "[Earlier in this session]"
SUMMARY_ROLE: Role = "user"
MESSAGE_OVERHEAD = 4
"""Tokens a message costs beyond its content (role and separators, as chat formats add)."""
KEEP_TURNS = 3
"""Most recent turns always sent verbatim."""

Summariser = Callable[[Sequence[Message], int, TokenCounter], str]
"""Summarises the dropped messages (oldest first) in about ``max_tokens`` tokens (the second
argument); what it returns is cut to fit anyway. :func:`squad.chat.summarise.offline_summary`
is the default; :class:`squad.chat.summarise.ModelSummariser` asks a model."""


class Landmark(StrEnum):
    """Why an older message is kept verbatim."""

    REQUEST = "request"
    DECISION = "decision"
    ERROR = "error"
    FIX = "fix"
    """The assistant reply that follows an error."""
    CORRECTION = "correction"


_I = re.IGNORECASE
_REQUEST = re.compile(
    rf"{CUES['request']}|{CUES['ko_request']}"
    r"|\b(?:new|next|another|different) (?:task|request|thing|question|job)\b"
    r"|\bI (?:need|want|would like) (?:you )?to\b|\bnow (?:let's|please|I need|I want)\b"
    r"|다음으로|이번에는|새 (?:작업|요청)|새로운 (?:작업|요청)",
    _I,
)
_DECISION = re.compile(
    r"\bwe(?:'ll| will| shall)? go with\b|\bgoing with\b|\blet'?s (?:use|go with|stick with"
    r"|keep|pick|switch to)\b|\b(?:we|I)(?:'ve| have)? decided\b|\bdecided (?:to|on|against)\b"
    r"|\bdecision\b|\bwe(?:'ll| will) use\b|\bthe plan is\b|\bsettled on\b"
    r"|\bagreed (?:to|on)\b|하기로|결정|확정|채택|(?:으로|로) 갑시다|(?:으로|로) 가죠",
    _I,
)
_ERROR = re.compile(  # case matters only for ``NameError``-like names
    rf"{CUES['error_paste']}|Traceback \(most recent call last\)|\b[A-Z]\w*(?:Error|Exception)\b"
    r"|(?i:\b(?:error|exception|panic|fatal):"
    r"|\b(?:get|got|getting|see|seeing|hit|hitting|throws?|threw|raises?|raised)\s+"
    r"(?:an?\s+|the\s+|this\s+)?(?:\w+\s+)?(?:error|exception)s?\b"
    r"|\bfail(?:s|ed)? with\b|\bexit(?:ed)? (?:code|status) [1-9]|\bsegfault|\bstack ?trace\b)"
    r"|(?:에러|오류|예외)(?:가|이)? ?(?:나|났|발생|떠|뜹|떴)",
)
_CORRECTION = re.compile(
    r"^\s*(?:no\b[,.!]?|nope\b|not quite\b|actually\b|wait,? (?:no|that)\b|wrong\b"
    r"|incorrect\b|아니|틀렸|틀려)"
    r"|\bthat(?:'s| is) (?:wrong|incorrect|not (?:right|correct|what I))\b"
    r"|\b(?:you|that) misunderstood\b|\bI (?:said|meant)\b|\bnot\b[^.!?\n]{1,40}?,? but\b"
    r"|틀렸|잘못 (?:이해|알)|그게 아니|아니라",
    _I,
)


@dataclass(frozen=True)
class CompressedHistory:
    """The history to send, and what compression did to get it."""

    messages: tuple[Message, ...]
    tokens: int
    """What :attr:`messages` cost (:func:`history_tokens`)."""
    summarised: int = 0
    """Older messages folded into the summary (0: nothing was compressed)."""
    landmarks_kept: int = 0
    """Older messages kept verbatim as landmarks."""


def message_tokens(message: Message, counter: TokenCounter) -> int:
    return counter.count(message.content) + MESSAGE_OVERHEAD


def history_tokens(messages: Sequence[Message], counter: TokenCounter) -> int:
    return sum(message_tokens(m, counter) for m in messages)


def landmarks(history: Sequence[Message]) -> list[frozenset[Landmark]]:
    """For each message, why it is a landmark (empty: it is not one)."""
    kinds: list[set[Landmark]] = [set() for _ in history]
    for i, message in enumerate(history):
        text = message.content
        if message.role == "user":
            if _CORRECTION.search(text):
                kinds[i].add(Landmark.CORRECTION)
            elif _REQUEST.search(text.strip()):
                kinds[i].add(Landmark.REQUEST)
        if _DECISION.search(text):
            kinds[i].add(Landmark.DECISION)
        if _ERROR.search(text):
            kinds[i].add(Landmark.ERROR)
            fix = next(
                (j for j in range(i + 1, len(history)) if history[j].role == "assistant"), None
            )
            if fix is not None:
                kinds[fix].add(Landmark.FIX)
    return [frozenset(k) for k in kinds]


def recent_start(history: Sequence[Message], keep_turns: int) -> int:
    """Index of the first message of the last ``keep_turns`` turns (0 when there are fewer)."""
    if keep_turns <= 0:
        return len(history)
    seen = 0
    for i in range(len(history) - 1, -1, -1):
        if history[i].role == "user":
            seen += 1
            if seen == keep_turns:
                return i
    return 0


def compress_history(
    history: Sequence[Message],
    *,
    budget: int,
    counter: TokenCounter,
    keep_turns: int = KEEP_TURNS,
    summariser: Summariser | None = None,
) -> CompressedHistory:
    """``history`` (oldest first) within ``budget`` tokens; see the module docstring."""
    if budget < 0:
        raise ValueError(f"budget must be 0 or more, got {budget!r}")
    costs = [message_tokens(m, counter) for m in history]
    if sum(costs) <= budget:
        return CompressedHistory(tuple(history), sum(costs))
    start = recent_start(history, keep_turns)
    room = budget - sum(costs[start:])
    marks = landmarks(history[:start])
    kept = [i for i in range(start) if marks[i]]
    while True:
        dropped = start - len(kept)
        floor = _summary_cost(dropped, "", counter) if dropped else 0
        if sum(costs[i] for i in kept) + floor <= room or not kept:
            break
        kept.pop(0)  # the oldest landmark joins the summary
    older = [history[i] for i in kept]
    keep = set(kept)
    folded = [history[i] for i in range(start) if i not in keep]
    summary = _summary(folded, room - sum(costs[i] for i in kept), counter, summariser)
    messages = (*summary, *older, *history[start:])
    return CompressedHistory(messages, history_tokens(messages, counter), len(folded), len(older))


def _summary(
    folded: Sequence[Message],
    room: int,
    counter: TokenCounter,
    summariser: Summariser | None,
) -> tuple[Message, ...]:
    """The summary message of ``folded`` in at most ``room`` tokens (none if it cannot fit)."""
    if not folded or _summary_cost(len(folded), "", counter) > room:
        return ()
    if summariser is None:
        from squad.chat.summarise import offline_summary

        summariser = offline_summary
    header = _header(len(folded))
    allowance = room - _summary_cost(len(folded), "", counter)
    body = summariser(folded, allowance, counter).strip()
    limit = room - MESSAGE_OVERHEAD
    text = header if not body else fit_text(f"{header}\n{body}", limit, counter, keep=len(header))
    return (Message(SUMMARY_ROLE, text),)


def _header(count: int) -> str:
    noun = "message" if count == 1 else "messages"
    return f"{SUMMARY_PREFIX} {count} earlier {noun}, summarised for context (not new requests):"


def _summary_cost(count: int, body: str, counter: TokenCounter) -> int:
    text = _header(count) + (f"\n{body}" if body else "")
    return counter.count(text) + MESSAGE_OVERHEAD


def fit_text(text: str, max_tokens: int, counter: TokenCounter, *, keep: int = 0) -> str:
    """The longest prefix of ``text`` within ``max_tokens``, cut at a line or word end.

    The first ``keep`` characters are never cut (the caller knows they fit); a cut text
    ends with ``…``.
    """
    if counter.count(text) <= max_tokens:
        return text
    low, high = keep, len(text)  # the answer's length is in [low, high)
    while high - low > 1:
        middle = (low + high) // 2
        if counter.count(_cut(text, middle, keep)) <= max_tokens:
            low = middle
        else:
            high = middle
    return _cut(text, low, keep)


def _cut(text: str, length: int, keep: int) -> str:
    if length <= keep:
        return text[:keep]
    head = text[:length]
    space = max(head.rfind("\n"), head.rfind(" "))
    if space > keep:
        head = head[:space]
    return head.rstrip() + "…"
