"""Run limits: agent turns and spend, charged as the run goes (pure bookkeeping).

The spend cap is per squad and counts what earlier runs spent (from the store's ledger), so
a squad cannot pass ``limits.max_cost_usd`` by running many times.
"""

from __future__ import annotations

from dataclasses import dataclass

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

    @property
    def spent_usd(self) -> float:
        return self.spent_before_usd + self.cost_usd

    def out_of_money(self) -> bool:
        """Whether the spend cap is reached. A cap of 0 still allows free calls (the offline
        model); any other cap is a ceiling."""
        spent = self.spent_usd
        return spent > self.max_cost_usd or (self.max_cost_usd > 0 and spent >= self.max_cost_usd)

    def before_turn(self) -> None:
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

    def charge(self, prompt_tokens: int, completion_tokens: int, cost_usd: float) -> None:
        self.prompt_tokens += prompt_tokens
        self.completion_tokens += completion_tokens
        self.cost_usd += cost_usd
