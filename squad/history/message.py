"""Commit messages: what a person reads in ``git log``, and trailers squad reads back (pure).

Every commit squad makes has a first line that says what happened, a short body, and
``Squad-*`` trailers (git's ``Key: value`` lines in the last paragraph, so ``git log
--format=%(trailers)`` and ``git interpret-trailers --parse`` show them too)::

    run 9f2c... succeeded: docs-site (schedule)

    tasks:
      outline  done  (planner)
      draft    done  (writer)
    tokens: 1,738 in, 374 out; cost $0.0000; 1.2 s

    Squad-Kind: run
    Squad-Run: 9f2c...
    Squad-Status: succeeded
    ...

The trailers are the record squad lists runs and memory history from, so they carry every
figure the first line and body show, in a form that parses back exactly.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum

__all__ = [
    "FactChange",
    "FactOp",
    "Kind",
    "RunNote",
    "TaskNote",
    "Trailers",
    "compose",
    "fact_trailer",
    "parse_fact",
    "parse_trailers",
    "run_message",
]

_TRAILER = re.compile(r"^(Squad-[A-Za-z0-9-]+): (.*)$")
MAX_BODY_LINES = 40
"""Lines of changed text a commit body shows before it says how many more there are."""


class Kind(StrEnum):
    """What a commit records (``Squad-Kind``)."""

    START = "start"
    """``history starts``: the workspace as it was when its history began."""
    RUN = "run"
    MEMORY = "memory"
    """A memory change outside a run: extraction pass, remember, forget, revert, edits."""
    HAND = "hand"
    """Changes a person made by hand, found before a run or pass starts."""
    WORKSPACE = "workspace"
    """squad's own changes to the workspace: a definition updated, decisions, boot files."""
    IMPORT = "import"


class FactOp(StrEnum):
    """What happened to a Layer A fact; :meth:`undo` is what a revert does to it."""

    ADDED = "added"
    FORGOTTEN = "forgotten"
    REVIVED = "revived"
    SUPERSEDED = "superseded"
    """Replaced by a newer fact (out of retrieval, kept)."""
    PURGED = "purged"
    """Deleted for good: a revert adds its text again, as a new fact."""

    def undo(self) -> FactOp:
        return {
            FactOp.ADDED: FactOp.FORGOTTEN,
            FactOp.FORGOTTEN: FactOp.REVIVED,
            FactOp.REVIVED: FactOp.FORGOTTEN,
            FactOp.SUPERSEDED: FactOp.REVIVED,
            FactOp.PURGED: FactOp.ADDED,
        }[self]


@dataclass(frozen=True)
class FactChange:
    """One Layer A fact added, forgotten or revived, for one agent."""

    op: FactOp
    fact_id: int
    agent: str
    text: str


def fact_trailer(change: FactChange) -> tuple[str, str]:
    text = " ".join(change.text.split())
    return "Squad-Fact", f"{change.agent} {change.op.value} {change.fact_id} {text}".rstrip()


def parse_fact(value: str) -> FactChange | None:
    """A ``Squad-Fact`` trailer's value back as a change (None if it is not one)."""
    parts = value.split(" ", 3)
    if len(parts) < 3 or not parts[2].isdigit():
        return None
    try:
        op = FactOp(parts[1])
    except ValueError:
        return None
    return FactChange(op, int(parts[2]), parts[0], parts[3] if len(parts) > 3 else "")


@dataclass(frozen=True)
class Trailers:
    """The ``Squad-*`` trailers of one message, in order; a key may repeat."""

    items: tuple[tuple[str, str], ...] = ()

    def get(self, key: str) -> str | None:
        return next((v for k, v in self.items if k == key), None)

    def all(self, key: str) -> list[str]:
        return [v for k, v in self.items if k == key]

    @property
    def kind(self) -> str | None:
        return self.get("Squad-Kind")

    def facts(self) -> list[FactChange]:
        return [f for v in self.all("Squad-Fact") if (f := parse_fact(v)) is not None]


def parse_trailers(message: str) -> Trailers:
    """The ``Squad-*`` lines of the message's last paragraph."""
    paragraphs = [p for p in re.split(r"\n\s*\n", message.strip()) if p.strip()]
    if len(paragraphs) < 2:
        return Trailers()
    found = []
    for line in paragraphs[-1].splitlines():
        match = _TRAILER.match(line.strip())
        if match is None:
            return Trailers()  # not a trailer block: a body that happens to end the message
        found.append((match[1], match[2].strip()))
    return Trailers(tuple(found))


def compose(subject: str, body: Iterable[str], trailers: Sequence[tuple[str, str]]) -> str:
    """A message: one subject line, the body, then the trailers as the last paragraph."""
    subject = " ".join(subject.split())
    lines = [_single_line(line) for line in body]
    parts = [subject]
    if lines:
        parts.append("\n".join(lines).strip("\n"))
    if trailers:
        parts.append("\n".join(f"{k}: {_single_line(v)}" for k, v in trailers))
    return "\n\n".join(parts) + "\n"


def _single_line(text: str) -> str:
    return text.replace("\r", " ").replace("\n", " ")


@dataclass(frozen=True)
class TaskNote:
    task: str
    agent: str
    status: str
    error: str | None = None


@dataclass(frozen=True)
class RunNote:
    """What a run commit says about its run."""

    run_id: str
    squad: str
    status: str
    trigger: str
    started_at: datetime | None = None
    ended_at: datetime | None = None
    tasks: tuple[TaskNote, ...] = ()
    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: float = 0.0
    outputs: str = "tasks"
    """Where its task outputs are: ``tasks``, or ``runs/<id>/tasks`` for a run approved
    after newer runs had finished (its outputs never overwrite theirs)."""
    left_out: tuple[str, ...] = field(default=())
    """Files kept out of the commit, each with why (a credential, or over the size cap)."""

    @property
    def duration_s(self) -> float | None:
        if self.started_at is None or self.ended_at is None:
            return None
        return max(0.0, (self.ended_at - self.started_at).total_seconds())


def run_message(note: RunNote) -> str:
    width = max((len(t.task) for t in note.tasks), default=0)
    body = []
    if note.tasks:
        body.append("tasks:")
        for t in note.tasks:
            error = f": {t.error}" if t.error else ""
            body.append(f"  {t.task.ljust(width)}  {t.status}  ({t.agent}){error[:200]}")
    figures = f"tokens: {note.tokens_in:,} in, {note.tokens_out:,} out; cost ${note.cost_usd:.4f}"
    if note.duration_s is not None:
        figures += f"; {note.duration_s:.1f} s"
    body.append(figures)
    if note.outputs != "tasks":
        body.append(f"outputs in {note.outputs}/ (newer runs had finished; theirs are kept)")
    for kept_out in note.left_out:  # each names its file and why: a credential, or the size
        body.append(f"left out: {kept_out}")
    trailers = [
        ("Squad-Kind", Kind.RUN.value),
        ("Squad-Run", note.run_id),
        ("Squad-Squad", note.squad),
        ("Squad-Status", note.status),
        ("Squad-Trigger", note.trigger),
    ]
    if note.started_at is not None:
        trailers.append(("Squad-Started", note.started_at.isoformat()))
    if note.ended_at is not None:
        trailers.append(("Squad-Ended", note.ended_at.isoformat()))
    trailers += [
        ("Squad-Tokens-In", str(note.tokens_in)),
        ("Squad-Tokens-Out", str(note.tokens_out)),
        ("Squad-Cost-USD", f"{note.cost_usd:.6f}"),
    ]
    trailers += [("Squad-Task", f"{t.task} {t.agent} {t.status}") for t in note.tasks]
    if note.outputs != "tasks":
        trailers.append(("Squad-Outputs", note.outputs))
    subject = f"run {note.run_id} {note.status}: {note.squad} ({note.trigger})"
    return compose(subject, body, trailers)
