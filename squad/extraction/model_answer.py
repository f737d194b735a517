"""The extraction model's answer: a JSON document checked at the trust boundary.

Checked strictly, so a retry can tell the model exactly what to fix: one line per fact,
absolute dates only, a known scope, a plausible section name, at most :data:`MAX_FACTS`.
"""

from __future__ import annotations

import json
import re
from datetime import date
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from squad.errors import AnswerError
from squad.extraction.candidates import Candidate

__all__ = ["MAX_FACTS", "ExtractionAnswer", "FactOut", "parse_answer"]

MAX_FACTS = 8
"""At most this many facts per batch: a batch of chat rarely holds more durable ones."""

_RELATIVE = re.compile(
    r"\b(?:yesterday|today|tomorrow|tonight|last night|this (?:morning|afternoon|evening|week"
    r"|month)|next (?:week|month|year|monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
    r"|last (?:week|month|year)|in (?:two|three|\d+) (?:days|weeks))\b|어제|오늘|내일|모레"
    r"|다음 ?주|지난 ?주|이번 ?주|다음 ?달",
    re.IGNORECASE,
)


class FactOut(BaseModel):
    model_config = ConfigDict(extra="forbid")

    text: Annotated[str, Field(min_length=3, max_length=400)]
    """The fact as one self-contained line, with absolute dates."""
    scope: Literal["project", "experiential"]
    section: Annotated[str, Field(min_length=1, max_length=60)] | None = None
    subject: Annotated[str, Field(min_length=1, max_length=80)] | None = None
    confidence: Annotated[float, Field(ge=0.0, le=1.0)] = 0.8
    source_turns: list[Annotated[int, Field(ge=0)]] = []
    replaces: Annotated[int, Field(ge=1)] | None = None
    expires_on: date | None = None

    @field_validator("text")
    @classmethod
    def _one_line_absolute(cls, value: str) -> str:
        if "\n" in value.strip():
            raise ValueError("must be one line (no line breaks)")
        found = _RELATIVE.search(value)
        if found:
            raise ValueError(
                f"uses the relative date {found.group(0)!r}; write the absolute date instead"
            )
        return " ".join(value.split())

    @field_validator("section")
    @classmethod
    def _heading(cls, value: str | None) -> str | None:
        if value is not None and (
            "\n" in value or value.lstrip().startswith("#") or not value.strip()
        ):
            raise ValueError("must be a plain section name such as 'Insights'")
        return value.strip() if value else value


class ExtractionAnswer(BaseModel):
    model_config = ConfigDict(extra="forbid")

    facts: Annotated[list[FactOut], Field(max_length=MAX_FACTS)]


def answer_schema() -> dict[str, Any]:
    """The JSON schema the model is asked to follow."""
    return ExtractionAnswer.model_json_schema()


def parse_answer(text: str, *, batch_size: int) -> list[Candidate]:
    """Candidates from the model's reply, or :class:`AnswerError` saying what is wrong.

    A fenced block (```json ... ```) is accepted; ``source_turns`` must index the batch.
    """
    body = text.strip()
    fenced = re.search(r"```(?:json)?\s*(.*?)```", body, re.DOTALL)
    if fenced:
        body = fenced.group(1).strip()
    try:
        data = json.loads(body)
    except json.JSONDecodeError as exc:
        raise AnswerError(f"the answer is not JSON ({exc.msg} at char {exc.pos})") from None
    try:
        answer = ExtractionAnswer.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'answer'}: {e['msg']}" for e in exc.errors()
        )
        raise AnswerError(problems) from None
    out = []
    for i, fact in enumerate(answer.facts):
        bad = [t for t in fact.source_turns if t >= batch_size]
        if bad:
            raise AnswerError(
                f"facts.{i}.source_turns: {bad} are not message numbers "
                f"(the conversation has 0 to {batch_size - 1})"
            )
        out.append(
            Candidate(
                text=fact.text,
                scope=fact.scope,
                section=(fact.section or "Insights") if fact.scope == "project" else None,
                subject=fact.subject.strip().casefold() if fact.subject else None,
                confidence=fact.confidence,
                source_turns=tuple(sorted(set(fact.source_turns))),
                replaces=fact.replaces,
                expires_on=fact.expires_on,
                extractor="model",
            )
        )
    return out
