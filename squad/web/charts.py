"""Spend and activity as data and as small server-drawn SVG bar charts (pure; no JS library).

A person should see the trend without reading numbers: one bar per day (spend) or per run
(tokens), scaled to the tallest, with the value in each bar's tooltip.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from datetime import date, datetime, timedelta
from html import escape
from typing import TYPE_CHECKING, Any

from squad.views import Spend

if TYPE_CHECKING:
    from squad.app import App

__all__ = ["MAX_BAR_W", "bar_chart", "spend_activity"]

MAX_BAR_W = 28.0
"""A bar is at most this wide, so one run is a bar, not a block."""


def bar_chart(
    bars: Sequence[tuple[str, float]],
    *,
    width: int = 640,
    height: int = 140,
    unit: str = "",
    digits: int = 4,
) -> str:
    """An SVG of labelled bars; every label and value is escaped."""
    gap = 2
    n = max(1, len(bars))
    bar_w = min(MAX_BAR_W, max(1.0, (width - gap * n) / n))
    top = max((value for _, value in bars), default=0.0) or 1.0
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" viewBox="0 0 {width} '
        f'{height + 18}" width="{width}" height="{height + 18}" role="img">'
    ]
    for index, (label, value) in enumerate(bars):
        h = 0.0 if value <= 0 else max(1.0, value / top * height)
        x = index * (bar_w + gap)
        shown = f"{value:.{digits}f}" if isinstance(value, float) and digits else f"{value:g}"
        parts.append(
            f'<rect x="{x:.1f}" y="{height - h:.1f}" width="{bar_w:.1f}" height="{h:.1f}">'
            f"<title>{escape(label)}: {escape(unit)}{escape(shown)}</title></rect>"
        )
    parts.append(
        f'<line x1="0" y1="{height + 0.5}" x2="{width}" y2="{height + 0.5}" class="axis"/>'
    )
    if bars:
        parts.append(f'<text x="0" y="{height + 14}">{escape(bars[0][0])}</text>')
        last_x = min(width, (n - 1) * (bar_w + gap) + bar_w)
        if n > 1 and last_x > 260:  # room for both labels
            parts.append(
                f'<text x="{last_x:.1f}" y="{height + 14}" text-anchor="end">'
                f"{escape(bars[-1][0])}</text>"
            )
    parts.append("</svg>")
    return "".join(parts)


def spend_activity(app: App, *, now: datetime, days: int = 30, runs: int = 50) -> Spend:
    """Spend per squad per day over ``days`` days, and tokens of each squad's last runs."""
    start_day = (now - timedelta(days=days - 1)).date()
    day_list = [start_day + timedelta(days=i) for i in range(days)]
    per_squad: dict[str, dict[date, float]] = defaultdict(lambda: defaultdict(float))
    calls: dict[str, int] = defaultdict(int)
    token_runs: dict[str, list[dict[str, Any]]] = {}
    if app.database_exists():
        since = datetime.combine(start_day, datetime.min.time(), tzinfo=now.tzinfo)
        # By UTC day, the ledger's calls and the totals of runs retention forgot alike.
        for squad, day, cost, count in app.store.retention.spend_by_day(since):
            per_squad[squad][date.fromisoformat(day)] += cost
            calls[squad] += count
        for name in sorted({r.squad for r in app.store.list_runs(limit=1000)} | set(per_squad)):
            recent = list(reversed(app.store.list_runs(name, runs)))
            token_runs[name] = [
                {
                    "id": r.id,
                    "created_at": r.created_at.isoformat(),
                    "tokens": r.tokens_in + r.tokens_out,
                    "status": r.status.value,
                }
                for r in recent
            ]
    squads = []
    for name in sorted(set(per_squad) | set(token_runs)):
        costs = [round(per_squad[name].get(d, 0.0), 6) for d in day_list]
        daily = [
            {"day": d.isoformat(), "cost_usd": c} for d, c in zip(day_list, costs, strict=True)
        ]
        squads.append(
            {
                "squad": name,
                "days": daily,
                "total_usd": round(sum(costs), 6),
                "calls": calls.get(name, 0),
                "runs": token_runs.get(name, []),
            }
        )
    return Spend.model_validate({"since": start_day.isoformat(), "days": days, "squads": squads})
