"""Run limits: agent turns and spend, charged as the run goes (pure bookkeeping).

The spend cap is per squad and counts what earlier runs spent (from the store's ledger), so
a squad cannot pass ``limits.max_cost_usd`` by running many times. Before each model call
the most it may cost is reserved (:meth:`RunBudget.reserve`), and the call is not made when
that could pass the cap; after it, the real cost replaces the reservation
(:meth:`RunBudget.settle`). So the cap is a ceiling, not a line crossed by one call.

Tasks of one run share a budget from several threads: each check and its charge happen under
one lock, so parallel tasks cannot take the same last turn or overspend the cap together.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from squad.errors import LimitReached

__all__ = ["RunBudget"]


@dataclass
class RunBudget:
    max_turns: int
    max_cost_usd: float
    spent_before_usd: float = 0.0
    turns: int = 0
    cost_usd: float = 0.0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    reserved_usd: float = 0.0
    _lock: threading.RLock = field(
        default_factory=threading.RLock, init=False, repr=False, compare=False
    )

    @property
    def spent_usd(self) -> float:
        return self.spent_before_usd + self.cost_usd

    def out_of_money(self) -> bool:
        """Whether the spend cap is reached. A cap of 0 still allows free calls (the offline
        model); any other cap is a ceiling."""
        spent = self.spent_usd
        return spent > self.max_cost_usd or (self.max_cost_usd > 0 and spent >= self.max_cost_usd)

    def before_turn(self) -> None:
        with self._lock:
            self._before_turn()

    def _before_turn(self) -> None:
        if self.turns >= self.max_turns:
            raise LimitReached(
                "max_turns",
                f"the run used its {self.max_turns} agent turns (limits.max_turns in the squad's "
                "definition)",
            )
        if self.out_of_money():
            raise LimitReached(
                "max_cost_usd",
                f"the squad has spent ${self.spent_usd:.4f} of its ${self.max_cost_usd:g} cap; "
                "raise limits.max_cost_usd in its definition to go on",
            )
        self.turns += 1

    def reserve(self, estimate_usd: float) -> None:
        """Hold ``estimate_usd`` for a call about to be made; refuses when it could pass the cap."""
        if estimate_usd <= 0:
            return
        with self._lock:
            self._reserve(estimate_usd)

    def _reserve(self, estimate_usd: float) -> None:
        committed = self.spent_usd + self.reserved_usd
        if committed + estimate_usd > self.max_cost_usd:
            raise LimitReached(
                "max_cost_usd",
                f"the next model call may cost up to ${estimate_usd:.4f} and the squad has spent "
                f"${committed:.4f} of its ${self.max_cost_usd:g} cap; raise limits.max_cost_usd "
                "in its definition to go on",
            )
        self.reserved_usd += estimate_usd

    def settle(
        self, estimate_usd: float, prompt_tokens: int, completion_tokens: int, cost_usd: float
    ) -> None:
        """The call reserved with ``estimate_usd`` is over: charge what it really cost."""
        with self._lock:
            if estimate_usd > 0:
                self.reserved_usd = max(self.reserved_usd - estimate_usd, 0.0)
            self.charge(prompt_tokens, completion_tokens, cost_usd)

    def charge(self, prompt_tokens: int, completion_tokens: int, cost_usd: float) -> None:
        with self._lock:
            self.prompt_tokens += prompt_tokens
            self.completion_tokens += completion_tokens
            self.cost_usd += cost_usd
