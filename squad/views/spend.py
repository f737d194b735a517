"""Spend as the dashboard's charts show it: per squad per day, and tokens of recent runs."""

from __future__ import annotations

from squad.views._base import View

__all__ = ["RunTokens", "Spend", "SpendDay", "SquadSpend"]


class SpendDay(View):
    day: str
    cost_usd: float


class RunTokens(View):
    id: str
    created_at: str
    tokens: int
    status: str


class SquadSpend(View):
    squad: str
    days: list[SpendDay]
    total_usd: float
    calls: int
    runs: list[RunTokens]


class Spend(View):
    since: str
    days: int
    squads: list[SquadSpend]
