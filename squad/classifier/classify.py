"""The offline fact extractor: does one chat message state a durable fact, and of which scope?

Used when no model is configured, and as the cheap gate that decides whether a batch of
messages is worth a model call. English and Korean. Three answers:

- ``project`` (Layer B): only meaningful inside this project: stack, layout, ports, owners,
  decisions, this repo's conventions, its deadlines.
- ``experiential`` (Layer A): follows the agent across projects: the user's preferences,
  working style and schedule, name, role, timezone, reusable lessons and techniques.
- none (``classify`` returns None): greetings, thanks, status updates, one-off requests,
  questions that state no fact, suggestions nobody took up, and anything with a credential.

How: credentials are refused first (:func:`~squad.classifier.cues.has_secret`). Then a
multinomial logistic regression scores the message over hand-written cues and lexical features
(:mod:`squad.classifier.cues`); its weights ship as ``data/extract_weights.json``, trained
by ``python -m bench.train_extractor`` from the repository's
``training/classifier/extract_examples.jsonl`` (our own examples, none taken from the
evaluation set; they stay out of the wheel). Scoring is dictionary look-ups: no numpy, no
training at run time. Relative dates are then made absolute (:mod:`squad.classifier.dates`), and a
project fact gets a section and a subject key (:mod:`squad.classifier.subjects`).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from functools import cache
from importlib import resources
from typing import Literal

from squad.classifier.cues import features, has_secret
from squad.classifier.dates import absolutise
from squad.classifier.subjects import section_for, subject_for
from squad.text.chatter import ChatterKind, Context, substance

__all__ = [
    "GATE_THRESHOLD",
    "LABELS",
    "LONG_MESSAGE_CHARS",
    "Example",
    "OfflineFact",
    "classify",
    "fact_probabilities",
    "parse_examples",
    "worth_a_model_call",
]

Label = Literal["none", "project", "experiential"]
LABELS: tuple[Label, ...] = ("none", "project", "experiential")
WEIGHTS_FILE = "extract_weights.json"

LONG_MESSAGE_CHARS = 280
"""Past this length a message's fact is its likeliest sentence, not the whole message."""

GATE_THRESHOLD = 0.5
"""A batch is worth a model call when some message is a fact with at least this probability.

Lower than it might be: a missed fact is lost for good, a wasted call costs one request."""


@dataclass(frozen=True)
class OfflineFact:
    """One fact found in one message, ready to be routed to Layer A or Layer B."""

    text: str
    """The message as a one-line fact, relative dates made absolute."""
    scope: Literal["project", "experiential"]
    section: str | None
    """memory.md section for a project fact (Decisions, Coding Rules, Project Context,
    Insights); None for an experiential one."""
    subject: str | None
    """What the fact is about ("backend port"), for supersession; None when unrecognised."""
    confidence: float
    """The classifier's probability for ``scope``, in [0, 1]."""


@dataclass(frozen=True)
class Example:
    """One labelled message of our own training or held-out data."""

    text: str
    label: Label
    role: str = "user"
    lang: str = ""


def parse_examples(text: str) -> list[Example]:
    """Examples from JSON Lines with ``text``, ``label`` and optional ``role`` and ``lang``."""
    rows = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        data = json.loads(line)
        if data["label"] not in LABELS:
            raise ValueError(f"line {number}: label {data['label']!r} is not one of {LABELS}")
        rows.append(
            Example(data["text"], data["label"], data.get("role", "user"), data.get("lang", ""))
        )
    return rows


@dataclass(frozen=True)
class _Weights:
    bias: tuple[float, ...]
    by_feature: dict[str, tuple[float, ...]]


@cache
def _weights() -> _Weights:
    """The shipped weights, read once on first use (never at import)."""
    raw = resources.files(__package__).joinpath("data", WEIGHTS_FILE).read_text(encoding="utf-8")
    data = json.loads(raw)
    if tuple(data["labels"]) != LABELS:
        raise ValueError(f"{WEIGHTS_FILE}: labels {data['labels']!r}, expected {LABELS!r}")
    return _Weights(tuple(data["bias"]), {name: tuple(w) for name, w in data["weights"].items()})


_SCORED_CHATTER: tuple[ChatterKind, ...] = ("acknowledgement",)
"""Chatter the weights learnt from, so it stays in the text they score."""
_NO_FACT: dict[Label, float] = {"none": 1.0, "project": 0.0, "experiential": 0.0}
_FENCE = re.compile(r"```.*?(?:```|\Z)", re.DOTALL)
_SENTENCE_BREAK = re.compile(r"(?<=[.!?。])\s+|\s*\n\s*")


def _score(text: str, role: str) -> dict[Label, float]:
    weights = _weights()
    scores = list(weights.bias)
    for name in set(features(text, role)):
        for i, w in enumerate(weights.by_feature.get(name, ())):
            scores[i] += w
    top = max(scores)
    exps = [math.exp(s - top) for s in scores]
    total = sum(exps)
    return {label: e / total for label, e in zip(LABELS, exps, strict=True)}


def _best_span(text: str, role: str, context: Context = ()) -> tuple[str, dict[Label, float]]:
    """The part of ``text`` that states its fact, and the message's label probabilities.

    Fenced code blocks are dropped first: code states no fact by itself ("Here is the
    refactored function: ```...```" is an answer, not a stack), its prose may. The label is
    the whole message's: a long message is not a fact because one of its sentences, read
    alone, looks like one (a status report's "the queue runs on Redis now" is still a status
    report). Judged sentence by sentence, long messages of chatter yielded a fact three times
    in five on our blind set; whole, one in ten. A long message (an assistant's answer, a
    pasted paragraph) that states a fact gives its likeliest sentence as the fact's text, so
    a fact is one sentence rather than a screenful. A credential anywhere, code included,
    refuses the whole message.

    An assistant's chatter (:mod:`squad.text.chatter`: acknowledgements, boilerplate, tool
    receipts, refusals, the offline model's fixed phrases, restatements of ``context``) is
    never a fact's text: a reply that is all chatter states no fact, and the fact of one that
    is not comes from what is left, which is also what is scored. Acknowledgements are
    scored with it, as the weights were trained: "Got it." before a fact is a sign of one.
    """
    if has_secret(text):
        return "", _NO_FACT
    prose = _FENCE.sub(" ", text)
    own = substance(prose, role=role, context=context) if role == "assistant" else prose
    if not re.search(r"\w", own):
        return "", _NO_FACT
    if own != prose:
        prose = substance(prose, role=role, context=context, keep=_SCORED_CHATTER)
    probabilities = _score(prose, role)
    label = max(LABELS, key=lambda name: probabilities[name])
    if len(own) <= LONG_MESSAGE_CHARS or label == "none":
        return own, probabilities
    spans = [
        s
        for s in _SENTENCE_BREAK.split(own)
        if len(s) <= LONG_MESSAGE_CHARS and re.search(r"\w", s)
    ]
    best = max(spans, key=lambda span: _score(span, role)[label], default=own)
    return best, probabilities


def fact_probabilities(text: str, role: str = "user", context: Context = ()) -> dict[Label, float]:
    """The probability of each label for one message, judged whole (code blocks and an
    assistant's chatter aside; ``context`` is what was said before it).

    A message holding a credential, or no word at all, is ``none`` with certainty.
    """
    return _best_span(text, role, context)[1]


_LEAD_IN = re.compile(
    r"^(?:(?:noted|got it|understood|to recap|recap|heads up|fyi|note|ok(?:ay)?|so|actually"
    r"|알겠습니다|확인했(?:어요|습니다)|정리하면|참고로)\s*[:,.!\-—]\s*)+",
    re.IGNORECASE,
)


def _one_line(text: str) -> str:
    text = re.sub(r"\s+", " ", text).strip()
    return _LEAD_IN.sub("", text) or text


def classify(
    text: str, *, role: str = "user", today: date, context: Context = ()
) -> OfflineFact | None:
    """The durable fact ``text`` states, or None when it states none (or holds a credential).

    ``role`` is ``"user"`` or ``"assistant"``; ``today`` anchors relative dates. ``context``
    is what the user or the task said before an assistant's ``text``: what it merely
    restates is not its fact.
    """
    span, probabilities = _best_span(text, role, context)
    label = max(LABELS, key=lambda name: probabilities[name])
    if label == "none":
        return None
    return OfflineFact(
        text=absolutise(_one_line(span), today),
        scope=label,
        section=section_for(span) if label == "project" else None,
        subject=subject_for(span, label),
        confidence=round(probabilities[label], 3),
    )


def worth_a_model_call(
    messages: Sequence[tuple[str, str]], *, threshold: float = GATE_THRESHOLD
) -> bool:
    """True when some ``(role, text)`` message looks fact-bearing: P(fact) >= ``threshold``.

    System, tool and task messages are never fact sources; a task prompt is an assistant
    message's context, as the user's messages before it are.
    """
    said: list[str] = []
    for role, text in messages:
        if role in ("user", "assistant"):
            context = said if role == "assistant" else ()
            probabilities = fact_probabilities(text, role, context)
            if 1.0 - probabilities["none"] >= threshold:
                return True
        if role in ("user", "task"):
            said.append(text)
    return False
