"""A memory change made outside a run, gathered while it is made, committed as itself.

While a :class:`Change` is open (its owner holds the history lock exclusively), every write
to a workspace file made in the same context of execution reports its bytes before and after
(:meth:`Change.wrote`), and Layer A facts report what happened to them (:meth:`Change.fact`).
At the end the change is committed on top of ``HEAD`` with each write carried over
(:func:`squad.history.merge.carry_over`): lines a run is writing meanwhile, not committed
yet, stay out of it, and go into that run's commit.

:func:`active` finds the change open in this context for a workspace, so nested writers (a
memory.md append inside ``squad memory remember``) join it instead of committing alone.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path

from squad.history.message import FactChange

__all__ = ["Change", "Write", "active", "opened"]


@dataclass(frozen=True)
class Write:
    path: str
    """Relative to the workspace, with forward slashes."""
    before: bytes | None
    after: bytes | None


@dataclass
class Change:
    """What one memory change wrote; its owner fills in how to describe it."""

    workspace: Path
    author: str
    subject: str | None = None
    """The commit's first line (a default is made from what changed)."""
    agent: str | None = None
    """The agent whose memory changed (``Squad-Agent``)."""
    trailers: list[tuple[str, str]] = field(default_factory=list)
    writes: list[Write] = field(default_factory=list)
    facts: list[FactChange] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    """Lines for the body beyond the changed text (why, from which run)."""
    keep: bool = False
    """Commit it even if it wrote nothing: a decision that belongs in the history (a
    review-queue rejection leaves memory as it was, and is still a commit)."""
    lines_hidden: bool = False
    """The commit's body counts the changed lines instead of quoting them: a change that
    takes credentials out (``squad memory scan --fix``) must not copy them into its message."""

    def wrote(self, path: str, before: bytes | None, after: bytes | None) -> None:
        if before != after:
            self.writes.append(Write(path, before, after))

    def fact(self, change: FactChange) -> None:
        self.facts.append(change)

    @property
    def empty(self) -> bool:
        return not self.writes and not self.facts


_OPEN: ContextVar[tuple[Change, ...]] = ContextVar("squad_history_changes", default=())


def active(workspace: Path) -> Change | None:
    """The change open for ``workspace`` in this context, if any."""
    return next((c for c in _OPEN.get() if c.workspace == workspace), None)


@contextmanager
def opened(change: Change) -> Iterator[Change]:
    """Make ``change`` the one writers of its workspace report to, for the block."""
    token = _OPEN.set((*_OPEN.get(), change))
    try:
        yield change
    finally:
        _OPEN.reset(token)
