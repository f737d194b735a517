"""The agent's decision tools: record a decision with its reasons, find earlier ones.

Plain methods bound to one agent, with plain parameters and docstrings the model reads, so the
runtime can offer them like any tool function. Each returns text for the model; a refusal (a
credential, or a repeat of one found earlier in the agent's conversation; no reason; an unknown
decision to supersede) comes back as ``refused: ...``, never raised into the agent loop.
"""

from __future__ import annotations

from collections.abc import Callable, Collection

from squad.errors import MemoryError_, UsageError, WorkspaceError
from squad.memory.agent import AgentContext
from squad.memory.decisions.log import Decision, DecisionLog
from squad.text.secrets import refuse_secrets

__all__ = ["DecisionTools"]

SEARCH_RESULTS = 10


class DecisionTools:
    """Decision tools for ``ctx``'s agent, credited as ``agent:<agent id>``; ``known``:
    credential values found earlier in its conversation, refused wherever a record repeats
    them."""

    def __init__(self, log: DecisionLog, ctx: AgentContext, *, known: Collection[str] = ()) -> None:
        self._log = log
        self._ctx = ctx
        self._actor = f"agent:{ctx.agent.id}"
        self._known = known

    def decision_record(
        self,
        title: str,
        decision: str,
        reasons: str,
        alternatives: str = "",
        supersedes: int | None = None,
    ) -> str:
        """Record a decision of your squad with why it was made, in decisions.md.

        title: one line naming it. decision: what was decided. reasons: why, one reason per
        line (at least one). alternatives: what else was considered, one per line. supersedes:
        the id of an earlier decision this one replaces (find it with decision_search).
        """

        def run() -> str:
            if self._known:
                said = "\n".join((title, decision, reasons, alternatives))
                refuse_secrets(said, what="the decision", known=self._known)
            recorded = self._log.record(
                self._ctx.squad.name,
                self._ctx.workspace,
                title=title,
                decision=decision,
                reasons=_lines(reasons),
                alternatives=_lines(alternatives),
                decided_by=self._actor,
                supersedes=supersedes,
                run_id=self._ctx.run_id,
            )
            replaced = (
                f"; it supersedes decision {recorded.supersedes}"
                if recorded.supersedes is not None
                else ""
            )
            return f"recorded decision {recorded.id} in decisions.md{replaced}"

        return _guard(run)

    def decision_search(self, query: str) -> str:
        """Find your squad's current decisions and their reasons: every word must match."""

        def run() -> str:
            found = self._log.search(query, squads=[self._ctx.squad.name], limit=SEARCH_RESULTS)
            if not found:
                return f"no current decision matches {query!r}"
            return "\n\n".join(_described(d) for d in found)

        return _guard(run)


def _lines(text: str) -> list[str]:
    """One item per non-blank line, list bullets taken off."""
    items = []
    for line in (text or "").splitlines():
        line = line.strip()
        for bullet in ("- ", "* ", "• "):
            line = line.removeprefix(bullet)
        if line.strip():
            items.append(line.strip())
    return items


def _described(d: Decision) -> str:
    lines = [
        f"decision {d.id}: {d.title} ({d.decided_at.date().isoformat()}, by {d.decided_by})",
        d.decision,
        "reasons: " + "; ".join(d.reasons),
    ]
    if d.alternatives:
        lines.append("alternatives considered: " + "; ".join(d.alternatives))
    if d.supersedes is not None:
        lines.append(f"supersedes decision {d.supersedes}")
    return "\n".join(lines)


def _guard(action: Callable[[], str]) -> str:
    try:
        return action()
    except (MemoryError_, UsageError, WorkspaceError) as error:
        return f"refused: {error}"
