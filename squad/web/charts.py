"""Spend and activity as data and as small server-drawn SVG bar charts (pure; no JS library).

A person should see the trend without reading numbers: one bar per day (spend) or per run
(tokens), on a value axis with round ticks, labelled under the bars, with the exact value in
each bar's tooltip.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Sequence
from datetime import date, datetime, timedelta
from typing import TYPE_CHECKING, Any

from squad.views import Spend
from squad.web.svg import esc, nice_ticks, text_width

if TYPE_CHECKING:
    from squad.app import App

__all__ = ["MAX_BAR_W", "bar_chart", "spend_activity"]

MAX_BAR_W = 28.0
"""A bar is at most this wide, so one run is a bar, not a block."""
AXIS_W = 64
"""Room left of the bars for the value axis's labels."""
MAX_X_LABELS = 6


def bar_chart(
    bars: Sequence[tuple[str, str, float]],
    *,
    title: str,
    value_text: Callable[[float], str],
    tick_text: Callable[[float, int], str],
    width: int = 640,
    height: int = 140,
) -> str:
    """An SVG of bars with a title, a value axis with round ticks and labels under the bars.

    Each bar is ``(label under it, label in its tooltip, value)``; ``value_text`` says a
    bar's value in its tooltip and ``tick_text`` a tick's (with the decimals it needs), so
    the page says both in its reader's unit and language. Every text is escaped.
    """
    top_pad, bottom = 22, 34
    plot_w = width - AXIS_W - 8
    gap = 2
    n = max(1, len(bars))
    bar_w = min(MAX_BAR_W, max(1.0, (plot_w - gap * n) / n))
    ticks, digits = nice_ticks(max((value for *_, value in bars), default=0.0))
    top = ticks[-1]
    base = top_pad + height
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart picture" viewBox="0 0 {width} '
        f'{base + bottom}" width="{width}" height="{base + bottom}" role="img">'
        f"<title>{esc(title)}</title>"
        f'<text class="chart-title" x="{AXIS_W}" y="13">{esc(title)}</text>'
    ]
    for tick in ticks:
        y = base - tick / top * height
        parts.append(
            f'<line class="grid" x1="{AXIS_W}" y1="{y:.1f}" x2="{width - 8}" y2="{y:.1f}"></line>'
            f'<text class="tick-label" x="{AXIS_W - 6}" y="{y + 3.5:.1f}" text-anchor="end">'
            f"{esc(tick_text(tick, digits))}</text>"
        )
    for index, (_, label, value) in enumerate(bars):
        h = 0.0 if value <= 0 else max(1.0, value / top * height)
        x = AXIS_W + index * (bar_w + gap)
        parts.append(
            f'<rect x="{x:.1f}" y="{base - h:.1f}" width="{bar_w:.1f}" height="{h:.1f}">'
            f"<title>{esc(label)}: {esc(value_text(value))}</title></rect>"
        )
    parts.append(
        f'<line x1="{AXIS_W}" y1="{base + 0.5}" x2="{width - 8}" y2="{base + 0.5}" class="axis"/>'
        f'<line x1="{AXIS_W - 0.5}" y1="{top_pad}" x2="{AXIS_W - 0.5}" y2="{base}" class="axis"/>'
    )
    widest = max((text_width(label) for label, *_ in bars), default=0.0) + 10
    every = max(1, -(-len(bars) // MAX_X_LABELS), math.ceil(widest / (bar_w + gap)))
    for index in range(0, len(bars), every):
        x = AXIS_W + index * (bar_w + gap) + bar_w / 2
        parts.append(
            f'<line class="tick" x1="{x:.1f}" y1="{base}" x2="{x:.1f}" y2="{base + 4}"></line>'
            f'<text class="tick-label" x="{x:.1f}" y="{base + 16}" text-anchor="middle">'
            f"{esc(bars[index][0])}</text>"
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
