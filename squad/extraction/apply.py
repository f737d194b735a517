"""The extractor's writes: project facts to memory.md, experiential facts to Layer A.

Both go through the memory issue's safe paths: memory.md edits take the file's lock and check
its version (a concurrent edit means read again and redo, up to :data:`EDIT_ATTEMPTS` times),
respect its size cap, refuse credentials and are audited; Layer A facts go through the store,
audited here. Superseded facts are kept: struck through and dated in memory.md, marked
``superseded`` (with the new fact's id) in the store.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from squad.classifier.subjects import subject_for
from squad.errors import MemoryError_, MemoryFullError, SecretInMemoryError, StaleWriteError
from squad.extraction.candidates import Candidate, Existing
from squad.extraction.lines import parse_line, render_line, struck
from squad.extraction.quality import Decision, changes, similarity
from squad.history.message import FactOp
from squad.memory.agent import AgentContext
from squad.memory.audit import AuditLog, AuditRecord
from squad.memory.dedupe import fact_of
from squad.memory.files import MemoryFile
from squad.memory.service import MemoryService
from squad.memory.sightings import sighting_key
from squad.text.secrets import redact, refuse_secrets

__all__ = ["EDIT_ATTEMPTS", "Applied", "apply_decisions", "existing_facts"]

EDIT_ATTEMPTS = 3
ACTOR = "extractor"
RECENT_FACTS = 30
"""Existing facts shown to the model and checked against, per layer."""
RELATED = 0.5
"""Similarity at which an older memory.md line is checked against a candidate too."""


@dataclass
class Applied:
    """What one extraction changed, and what it did not and why (JSON-ready dicts)."""

    written: list[dict[str, Any]] = field(default_factory=list)
    dropped: list[dict[str, Any]] = field(default_factory=list)


def existing_facts(memory: MemoryService, ctx: AgentContext) -> list[Existing]:
    """The agent's current facts: memory.md bullet lines, then recent Layer A facts."""
    out: list[Existing] = []
    for name, line in _project_lines(memory, ctx)[-RECENT_FACTS:]:
        parsed = parse_line(line)
        if parsed is None or parsed.superseded:
            continue
        out.append(_project_fact(memory, ctx, len(out) + 1, name, line, parsed.text))
    facts = memory.store.memory.facts(memory.namespace_id(ctx), limit=RECENT_FACTS)
    for fact in reversed(facts):  # oldest first, like the file
        out.append(
            Existing(
                number=len(out) + 1,
                scope="experiential",
                text=fact.text,
                subject=fact.subject,
                ref=f"fact:{fact.id}",
                fact_id=fact.id,
            )
        )
    return out


def related_facts(
    memory: MemoryService,
    ctx: AgentContext,
    candidates: Sequence[Candidate],
    existing: Sequence[Existing],
) -> list[Existing]:
    """``existing`` and the older live memory.md lines, past the newest :data:`RECENT_FACTS`
    (the ones a model is shown), that a candidate may repeat or change: the same subject,
    half its words alike, or a change of it (:func:`~squad.extraction.quality.changes`).
    So a fact told again, or changed, months after the line it repeats is judged against
    that line, however much was written since."""
    shown = {e.line for e in existing if e.line is not None}
    wanted = [(c.text, c.subject) for c in candidates if c.scope == "project"]
    if not wanted:
        return list(existing)
    subjects = any(c_subject for _, c_subject in wanted)  # else no line's subject can match
    out = list(existing)
    for name, line in _project_lines(memory, ctx)[:-RECENT_FACTS]:
        parsed = parse_line(line)
        if parsed is None or parsed.superseded or line in shown:
            continue
        subject = subject_for(parsed.text, "project") if subjects else None
        if any(
            (subject is not None and subject == c_subject)
            or similarity(c_text, parsed.text) >= RELATED
            or changes(c_text, parsed.text)
            for c_text, c_subject in wanted
        ):
            out.append(_project_fact(memory, ctx, len(out) + 1, name, line, parsed.text))
    return out


def _project_lines(memory: MemoryService, ctx: AgentContext) -> list[tuple[str, str]]:
    """Every non-blank line of memory.md with its section, in file order."""
    document = memory.memory_file(ctx).snapshot().document
    lines: list[tuple[str, str]] = []
    for name in document.names:
        section = document.find(name)
        if section is not None:
            lines += [(name, line) for line in section.content_lines()]
    return lines


def _project_fact(
    memory: MemoryService, ctx: AgentContext, number: int, name: str, line: str, text: str
) -> Existing:
    return Existing(
        number=number,
        scope="project",
        text=text,
        subject=subject_for(text, "project"),
        ref=f"{memory.memory_file(ctx).relative}#{name}",
        section=name,
        line=line,
    )


def apply_decisions(
    memory: MemoryService,
    ctx: AgentContext,
    decisions: Sequence[Decision],
    *,
    now: datetime,
    source: str,
    seqs: dict[int, int],
    run_id: str | None = None,
) -> Applied:
    """Write the decisions' facts; ``seqs`` maps message index to store seq (provenance).

    ``source`` is the run id, or the chat session and day, the facts came from: project facts
    seen again in three of them are proposed for promotion by ``squad memory gc``.
    """
    today = now.date()
    applied = Applied()
    for d in decisions:
        if d.kind == "drop":
            applied.dropped.append(_entry(d.candidate, d.reason, d.target))
    project = [d for d in decisions if d.kind != "drop" and d.candidate.scope == "project"]
    experiential = [
        d for d in decisions if d.kind != "drop" and d.candidate.scope == "experiential"
    ]
    if project:
        _write_project(memory, ctx, project, today, applied)
    for d in experiential:
        _write_experiential(memory, ctx, d, now, seqs, run_id, applied)
    for entry in (*applied.written, *applied.dropped):  # provenance in the store's terms
        entry["source_seqs"] = [seqs[i] for i in entry["source_turns"] if i in seqs]
    for d in decisions:  # a project fact seen again, in another run or session, is evidence
        seen = d.target.text if d.kind != "write" and d.target is not None else d.candidate.text
        if d.candidate.scope == "project" and d.reason in (
            "new",
            "supersedes",
            "duplicate",
            "near-duplicate",
        ):
            memory.store.maintenance.record_sighting(
                ctx.squad.name, ctx.agent.id, sighting_key(seen), seen, source
            )
    return applied


WITHHELD = "[withheld: the fact carried a credential]"
"""What a pass's record keeps of a fact dropped for carrying a credential."""


def _shown(text: str, reason: str) -> str:
    """A fact's text as the pass's record keeps it (``extraction_runs``, the dashboard): a fact
    dropped as a secret may hold a value only the wider classifier check saw, so none of it is
    kept; any other is kept with its credentials redacted."""
    if reason == "secret":
        return WITHHELD
    return redact(text)[0]


def _entry(
    c: Candidate, reason: str, target: Existing | None = None, **more: Any
) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "text": _shown(c.text, reason),
        "scope": c.scope,
        "reason": reason,
        "source_turns": list(c.source_turns),
        "extractor": c.extractor,
    }
    if c.section and c.scope == "project":
        entry["section"] = c.section
    if target is not None:
        entry["target"] = target.ref
    entry.update(more)
    return entry


def _write_project(
    memory: MemoryService,
    ctx: AgentContext,
    decisions: Sequence[Decision],
    today: date,
    applied: Applied,
) -> None:
    file = memory.memory_file(ctx)
    new_lines: dict[str, list[tuple[Decision, str]]] = defaultdict(list)
    strike: dict[str, set[str]] = defaultdict(set)
    # The decisions saw the newest RECENT_FACTS lines; a fact told again after many newer
    # ones is judged here against every live line of the file, as the memory tools' writes are.
    live = [fact_of(line) for _, line in file.snapshot().document.live_lines()]
    for d in decisions:
        repeats = d.kind == "write" and d.reason == "new"
        if repeats and file.same_as(d.candidate.text, live) is not None:
            applied.dropped.append(_entry(d.candidate, "duplicate"))
            continue
        if d.kind == "merge":
            applied.written.append(
                _entry(d.candidate, "merged", d.target, where=d.target.ref if d.target else None)
            )
            continue
        c = d.candidate
        pointer = None
        if c.detail:
            try:
                pointer = memory.daily_log(ctx).append(
                    f"{c.text}\n\n> " + "\n> ".join(c.detail.splitlines()), actor=ACTOR, day=today
                )
            except (MemoryFullError, SecretInMemoryError):
                pointer = None
        new_lines[c.section or "Insights"].append((d, render_line(c.text, today, pointer=pointer)))
        if d.target is not None and d.target.section and d.target.line:
            strike[d.target.section].add(d.target.line)
    for section in sorted(set(new_lines) | set(strike)):
        lines = new_lines.get(section, [])
        try:
            _edit_section(file, section, [line for _, line in lines], strike[section], today)
        except (MemoryFullError, SecretInMemoryError, MemoryError_) as exc:
            for d, _ in lines:
                applied.dropped.append(_entry(d.candidate, f"not written: {exc}"))
            continue
        for d, _ in lines:
            applied.written.append(
                _entry(
                    d.candidate,
                    d.reason,
                    d.target,
                    where=f"{file.relative}#{section}",
                )
            )


def _edit_section(
    file: MemoryFile, section: str, lines: list[str], strike: set[str], today: date
) -> None:
    for attempt in range(EDIT_ATTEMPTS):
        snapshot = file.snapshot()
        current = snapshot.document.find(section)
        if current is None or not strike:
            if lines:
                file.append(section, "\n".join(lines), actor=ACTOR)
            return
        body = [struck(line, today) if line in strike else line for line in current.content_lines()]
        body += lines
        try:
            file.replace(
                section,
                "\n".join(body),
                actor=ACTOR,
                automatic=True,
                expected_version=snapshot.version,
            )
            return
        except StaleWriteError:
            if attempt == EDIT_ATTEMPTS - 1:
                raise
    raise AssertionError("unreachable")


def _write_experiential(
    memory: MemoryService,
    ctx: AgentContext,
    d: Decision,
    now: datetime,
    seqs: dict[int, int],
    run_id: str | None,
    applied: Applied,
) -> None:
    store = memory.store.memory
    c = d.candidate
    if d.kind == "merge":
        if d.target is not None and d.target.fact_id is not None:
            store.touch_facts([d.target.fact_id])
        applied.written.append(
            _entry(c, "merged", d.target, where=d.target.ref if d.target else None)
        )
        return
    expires = (
        datetime.combine(c.expires_on + timedelta(days=1), time(0), tzinfo=UTC)
        if c.expires_on is not None
        else None
    )
    try:
        refuse_secrets(c.text, what="the fact")  # the store does not check; memory.md does
        fact = store.add_fact(
            memory.namespace_id(ctx),
            c.text,
            squad=ctx.squad.name,
            agent=ctx.agent.id,
            run_id=run_id,
            turns=[seqs[i] for i in c.source_turns if i in seqs],
            subject=c.subject,
            source=ACTOR,
            transient=expires is not None,
            expires_at=expires,
        )
    except SecretInMemoryError as exc:
        applied.dropped.append(_entry(c, f"not written: {exc}"))
        return
    memory.note_fact(ctx, FactOp.ADDED, fact.id, c.text)
    if d.target is not None and d.target.fact_id is not None:
        store.supersede(d.target.fact_id, fact.id)
        memory.note_fact(ctx, FactOp.SUPERSEDED, d.target.fact_id, d.target.text)
    AuditLog(ctx.workspace).append(
        AuditRecord(
            time=now.isoformat(),
            actor=ACTOR,
            operation="remember",
            file=f"fact:{fact.id}",
            note=f"supersedes {d.target.ref}" if d.target is not None else None,
        )
    )
    applied.written.append(_entry(c, d.reason, d.target, where=f"fact:{fact.id}"))
