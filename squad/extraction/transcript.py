"""``squad memory extract TRANSCRIPT``: the extractor over a conversation file.

A transcript is JSON Lines of ``{"role": ..., "content": ...}`` objects, or one JSON list of
them. Roles are ``user``, ``assistant``, ``system`` and ``tool``; only user and assistant
messages are read for facts, but ``source_turns`` count every message of the file from 0.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from squad.errors import UsageError
from squad.extraction.apply import Applied, apply_decisions, existing_facts, related_facts
from squad.extraction.candidates import ConversationMessage, Existing
from squad.extraction.extract import extract_batch, redacted
from squad.extraction.job import BATCH_MESSAGES, MODEL_MIN_CONFIDENCE
from squad.extraction.quality import Decision, decide
from squad.extraction.record import MessagesRead, record_pass
from squad.extraction.review import held, hold_for_review
from squad.memory.agent import AgentContext
from squad.memory.service import MemoryService
from squad.model.types import ChatModel

__all__ = ["TranscriptResult", "extract_transcript", "read_transcript"]

ROLES = ("user", "assistant", "system", "tool")


def _message(item: Any, where: str) -> tuple[str, str]:
    if not isinstance(item, dict):
        raise UsageError(f"{where}: expected an object with role and content, got {item!r:.60}")
    role, content = item.get("role"), item.get("content")
    if role not in ROLES:
        raise UsageError(f"{where}: role must be one of {', '.join(ROLES)}, got {role!r}")
    if not isinstance(content, str):
        raise UsageError(f"{where}: content must be a string, got {type(content).__name__}")
    return role, content


def read_transcript(path: Path) -> list[tuple[str, str]]:
    """``(role, content)`` of every message in the file, or UsageError naming file and line."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UsageError(f"{path}: no such transcript file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path}: cannot read the transcript: {exc}") from None
    stripped = text.lstrip()
    if stripped.startswith("["):
        try:
            items = json.loads(text)
        except json.JSONDecodeError as exc:
            raise UsageError(
                f"{path}:{exc.lineno}:{exc.colno}: not valid JSON: {exc.msg}; a transcript is "
                'a JSON list of {"role": ..., "content": ...} objects, or JSON Lines of them'
            ) from None
        return [_message(item, f"{path}: item {i}") for i, item in enumerate(items)]
    out = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError as exc:
            raise UsageError(
                f"{path}:{number}:{exc.colno}: not valid JSON: {exc.msg}; each line must be one "
                '{"role": ..., "content": ...} object'
            ) from None
        out.append(_message(item, f"{path}:{number}"))
    return out


@dataclass
class TranscriptResult:
    extractor: str
    decisions: list[Decision] = field(default_factory=list)
    applied: Applied | None = None
    warnings: list[str] = field(default_factory=list)
    """Why a batch's facts came from the offline extractor instead of the model asked for."""
    review: str = "off"
    """The agent's ``memory.review``: facts it holds are listed with action ``review``."""

    def to_dict(self, *, dry_run: bool) -> dict[str, Any]:
        facts, dropped = [], []
        for d in self.decisions:
            c = d.candidate
            entry: dict[str, Any] = {
                "text": c.text,
                "scope": c.scope,
                "section": c.section if c.scope == "project" else None,
                "subject": c.subject,
                "confidence": round(c.confidence, 3),
                "source_turns": list(c.source_turns),
            }
            if d.kind == "drop":
                dropped.append({**entry, "reason": d.reason})
                continue
            entry["action"] = (
                "merge" if d.kind == "merge" else "review" if held(d, self.review) else "write"
            )
            entry["reason"] = d.reason
            if d.target is not None:
                entry["target"] = d.target.ref
            facts.append(entry)
        out: dict[str, Any] = {
            "facts": facts,
            "dropped": dropped,
            "extractor": self.extractor,
            "dry_run": dry_run,
            "warnings": list(self.warnings),
        }
        if self.applied is not None:
            out["written"] = self.applied.written
        return out


def extract_transcript(
    messages: Sequence[tuple[str, str]],
    *,
    now: datetime,
    model: ChatModel | None,
    memory: MemoryService | None = None,
    ctx: AgentContext | None = None,
    dry_run: bool = True,
    source: str = "transcript",
) -> TranscriptResult:
    """Extract, check against the agent's memory (when given) and write unless ``dry_run``."""
    talk = redacted(  # across batches: a cue may end one batch and its value start the next
        [
            ConversationMessage(i, "user" if role == "user" else "assistant", content)
            for i, (role, content) in enumerate(messages)
            if role in ("user", "assistant")
        ]
    )
    existing: list[Existing] = (
        existing_facts(memory, ctx) if memory is not None and ctx is not None else []
    )
    result = TranscriptResult(
        "offline" if model is None else "model", review=ctx.review if ctx is not None else "off"
    )
    for start in range(0, len(talk), BATCH_MESSAGES):
        batch = talk[start : start + BATCH_MESSAGES]
        found = extract_batch(batch, existing, now.date(), model)
        result.extractor = found.extractor if found.extractor != "gate" else result.extractor
        if found.fallback is not None:
            result.warnings.append(found.fallback)
        judged = (
            related_facts(memory, ctx, found.candidates, existing)
            if memory is not None and ctx is not None
            else existing
        )
        decided = decide(
            found.candidates,
            judged,
            min_confidence=MODEL_MIN_CONFIDENCE if found.extractor == "model" else 0.0,
        )
        result.decisions += decided
        existing = [  # what this batch adds is what the next one is checked against
            *existing,
            *(
                Existing(
                    len(existing) + i + 1,
                    d.candidate.scope,
                    d.candidate.text,
                    d.candidate.subject,
                    f"transcript:{d.candidate.source_turns}",
                )
                for i, d in enumerate(x for x in decided if x.kind == "write")
            ),
        ]
    if not dry_run and memory is not None and ctx is not None:
        with memory.change(ctx, "extractor") as change:
            now_apply, held = hold_for_review(memory, ctx, result.decisions, source=source, seqs={})
            result.applied = apply_decisions(
                memory, ctx, now_apply, now=now, source=source, seqs={}
            )
            result.applied.dropped += held
            pass_id = record_pass(
                memory,
                ctx,
                started=now,
                status="done",
                extractor=result.extractor,
                read=MessagesRead(0, 0, tuple(f"{source}#{m.index}" for m in talk)),
                applied=result.applied,
                reason=source,
            )
            if change is not None:
                change.subject = f"memory: extractor pass {pass_id} over {source}"
                change.trailers.append(("Squad-Pass", str(pass_id)))
    return result
