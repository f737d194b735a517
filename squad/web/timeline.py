"""The run page's picture: a run as a timeline of its tasks, server-drawn SVG (pure).

One lane per task (per agent when a run has many tasks), a bar from each task's start to its
end (to "now" while it runs), the critical path marked (the longest chain of dependencies by
the time its tasks took), the waits for a person's approval shaded, and a time axis in
elapsed ``m:ss``. Each bar's ``<title>`` names the task, its agent and its duration; the
table below the picture keeps the exact figures.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from squad.web.svg import Words, clock_label, duration_text, esc, short, text_width, time_step

__all__ = [
    "MAX_TASK_LANES",
    "Span",
    "approval_waits",
    "critical_path",
    "plan_graph",
    "timeline_svg",
]

MAX_TASK_LANES = 12
"""Past this many tasks the timeline draws one lane per agent, so it stays a picture."""

WIDTH = 760
"""The timeline's width on a desktop; a phone gets one drawn at :data:`NARROW`."""
NARROW = 360
PAD_R = 18
LANE_H = 26
BAR_H = 14
LEGEND_ROW = 20
AXIS_H = 44


@dataclass(frozen=True)
class Span:
    """One task on the timeline: when it ran (``end`` None while it runs), what it waited
    for, and the approval waits before it."""

    id: str
    agent: str
    status: str
    start: datetime | None
    end: datetime | None
    depends_on: tuple[str, ...] = ()
    waits: tuple[tuple[datetime, datetime], ...] = ()


def critical_path(durations: Mapping[str, float], deps: Mapping[str, Sequence[str]]) -> list[str]:
    """The chain of dependencies whose tasks took longest in all, first task first.

    Dependencies on unknown tasks are ignored and a cycle is cut where it closes (a plan a
    model wrote was validated, but this draws whatever it is given). Among equal chains the
    one of more tasks wins, then the one whose tasks come first in ``durations``.
    """
    order = {task: index for index, task in enumerate(durations)}
    best: dict[str, tuple[float, list[str]]] = {}

    def longest(task: str, visiting: frozenset[str]) -> tuple[float, list[str]]:
        if task in best:
            return best[task]
        before: tuple[float, list[str]] = (0.0, [])
        for dep in sorted(set(deps.get(task, ())), key=lambda d: order.get(d, len(order))):
            if dep not in durations or dep in visiting:
                continue
            found = longest(dep, visiting | {task})
            if found[0] > before[0] or (found[0] == before[0] and not before[1] and found[1]):
                before = found
        result = (before[0] + max(0.0, durations[task]), [*before[1], task])
        best[task] = result
        return result

    chains = [longest(task, frozenset()) for task in durations]
    if not chains:
        return []
    top = max((total, len(chain)) for total, chain in chains)
    return next(chain for total, chain in chains if (total, len(chain)) == top)


def _time(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value)
    except ValueError:
        return None


def approval_waits(
    events: Sequence[Mapping[str, Any]], until: datetime
) -> dict[str, list[tuple[datetime, datetime]]]:
    """When each task waited for a person, from a run log: from its ``awaiting_approval``
    status to its next status or its start; a wait still open ends at ``until``."""
    opened: dict[str, datetime] = {}
    waits: dict[str, list[tuple[datetime, datetime]]] = {}
    for event in events:
        kind = event.get("event")
        task = event.get("node") or event.get("task")
        at = _time(event.get("time"))
        if not isinstance(task, str) or at is None or kind not in ("task_status", "node_start"):
            continue
        if kind == "task_status" and event.get("status") == "awaiting_approval":
            opened.setdefault(task, at)
        elif task in opened:
            waits.setdefault(task, []).append((opened.pop(task), at))
    for task, start in opened.items():
        waits.setdefault(task, []).append((start, max(start, until)))
    return waits


def plan_graph(events: Sequence[Mapping[str, Any]]) -> list[tuple[str, str, tuple[str, ...]]]:
    """The tasks of the last plan in a run log as (id, agent, depends_on); empty without one
    (or from a log written before plans carried their graph)."""
    for event in reversed(events):
        if event.get("event") != "plan_written":
            continue
        graph = event.get("graph")
        if not isinstance(graph, list):
            return []
        tasks = []
        for item in graph:
            if not isinstance(item, dict) or not isinstance(item.get("id"), str):
                continue
            deps = item.get("depends_on")
            tasks.append(
                (
                    item["id"],
                    str(item.get("agent") or ""),
                    tuple(str(d) for d in deps) if isinstance(deps, list) else (),
                )
            )
        return tasks
    return []


_STATUS = re.compile(r"[a-z_]{1,40}")


def _status_class(status: str) -> str:
    return status if _STATUS.fullmatch(status) else "other"


def timeline_svg(
    spans: Sequence[Span],
    *,
    origin: datetime,
    now: datetime,
    critical: Sequence[str],
    words: Words,
    width: int = WIDTH,
) -> str:
    """The run's timeline ``width`` pixels wide (narrower than 600: a phone's, with a
    shorter label column): every value escaped, sized by its ``viewBox``."""
    narrow = width < 600
    label_w = 88 if narrow else 150
    by_agent = len(spans) > MAX_TASK_LANES
    lanes: list[str] = []
    for span in spans:
        lane = span.agent if by_agent else span.id
        if lane not in lanes:
            lanes.append(lane)
    ends = [span.end or now for span in spans if span.start is not None]
    ends += [end for span in spans for _, end in span.waits]
    starts = [s.start for s in spans if s.start is not None] + [
        start for span in spans for start, _ in span.waits
    ]
    origin = min([origin, *starts])
    total = max(1.0, max([(end - origin).total_seconds() for end in ends], default=0.0))
    step = time_step(total, 4 if narrow else 6)
    axis_end = total * 1.02  # ticks up to the end, not past it to a round number
    plot_w = width - label_w - PAD_R
    left = 8 if narrow else label_w
    legend, legend_rows = _legend(words, critical=bool(critical), left=left, width=width)
    top = 6 + legend_rows * LEGEND_ROW
    height = top + len(lanes) * LANE_H + AXIS_H

    def x(at: datetime) -> float:
        return label_w + max(0.0, (at - origin).total_seconds()) / axis_end * plot_w

    on_path = set(critical)
    title = words("Timeline of the run's tasks")
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="picture timeline" '
        f'viewBox="0 0 {width} {height}" width="{width}" height="{height}" role="img" '
        f'aria-labelledby="timeline-title-{width}"><title id="timeline-title-{width}">'
        f"{esc(title)}</title>",
        legend,
    ]
    for index, lane in enumerate(lanes):
        y = top + index * LANE_H
        if index % 2:
            out.append(
                f'<rect class="lane" x="0" y="{y}" width="{width}" height="{LANE_H}"></rect>'
            )
        shown = short(lane, 11 if narrow else 20)
        out.append(
            f'<text class="lane-label" x="{label_w - 8}" y="{y + LANE_H / 2 + 4:.1f}" '
            f'text-anchor="end"><title>{esc(lane)}</title>{esc(shown)}</text>'
        )
    # ticks under the lanes, so the bars are drawn over the grid
    base = top + len(lanes) * LANE_H
    tick = 0
    while tick <= axis_end + 1e-9:
        tx = label_w + tick / axis_end * plot_w
        out.append(
            f'<line class="grid" x1="{tx:.1f}" y1="{top}" x2="{tx:.1f}" y2="{base}"></line>'
            f'<line class="tick" x1="{tx:.1f}" y1="{base}" x2="{tx:.1f}" y2="{base + 5}"></line>'
            f'<text class="tick-label" x="{tx:.1f}" y="{base + 17}" text-anchor="middle">'
            f"{esc(clock_label(tick))}</text>"
        )
        tick += step
    out.append(
        f'<line class="axis" x1="{label_w}" y1="{base + 0.5}" x2="{label_w + plot_w}" '
        f'y2="{base + 0.5}"></line>'
    )
    unit = words("h:min:s") if axis_end >= 3600 else words("min:s")
    # words(...) outside the f-strings: the catalogue's extractor does not look inside them
    axis_title = words("time since the run started ({unit})", unit=unit)
    on_path_said = words("critical path")
    out.append(
        f'<text class="axis-title" x="{label_w + plot_w / 2:.1f}" y="{base + 36}" '
        f'text-anchor="middle">{esc(axis_title)}</text>'
    )
    for span in spans:
        lane_y = top + lanes.index(span.agent if by_agent else span.id) * LANE_H
        bar_y = lane_y + (LANE_H - BAR_H) / 2
        for start, end in span.waits:
            wx, wend = x(start), x(end)
            waited = duration_text((end - start).total_seconds(), words)
            said = words("{task} waited for approval: {duration}", task=span.id, duration=waited)
            out.append(
                f'<rect class="wait" x="{wx:.1f}" y="{lane_y + 2}" '
                f'width="{max(2.0, wend - wx):.1f}" height="{LANE_H - 4}">'
                f"<title>{esc(said)}</title></rect>"
            )
        if span.start is None:
            continue
        end = span.end or now
        bx, bend = x(span.start), x(end)
        took = duration_text((end - span.start).total_seconds(), words)
        running = span.end is None
        said = (
            words(
                "{task} ({agent}): running for {duration}",
                task=span.id,
                agent=span.agent,
                duration=took,
            )
            if running
            else words(
                "{task} ({agent}): {duration}, {status}",
                task=span.id,
                agent=span.agent,
                duration=took,
                status=words(span.status),
            )
        )
        if span.id in on_path:
            said = f"{said} · {on_path_said}"
        classes = f"bar {_status_class(span.status)}" + (" critical" if span.id in on_path else "")
        classes += " open" if running else ""
        out.append(
            f'<rect class="{classes}" x="{bx:.1f}" y="{bar_y:.1f}" '
            f'width="{max(2.0, bend - bx):.1f}" height="{BAR_H}" rx="3" data-task="{esc(span.id)}">'
            f"<title>{esc(said)}</title></rect>"
        )
    if any(span.start is not None and span.end is None for span in spans):
        nx, now_said = x(now), words("now")
        out.append(
            f'<line class="now" x1="{nx:.1f}" y1="{top - 4}" x2="{nx:.1f}" y2="{base}">'
            f"<title>{esc(now_said)}</title></line>"
        )
    out.append("</svg>")
    return "".join(out)


def _legend(words: Words, *, critical: bool, left: int, width: int) -> tuple[str, int]:
    """The key to the colours, wrapped to ``width``; with its count of rows."""
    keys = [
        ("bar done", words("done")),
        ("bar running", words("running")),
        ("bar failed", words("failed")),
        ("wait", words("waiting for approval")),
    ]
    if critical:
        keys.append(("bar done critical", words("critical path")))
    out = ['<g class="legend">']
    at, row = float(left), 0
    for css, text in keys:
        wide = 19 + text_width(text) + 14
        if at + wide > width and at > left:
            at, row = float(left), row + 1
        y = 6 + row * LEGEND_ROW
        out.append(
            f'<rect class="{css}" x="{at:.1f}" y="{y}" width="14" height="10" rx="2"></rect>'
            f'<text x="{at + 19:.1f}" y="{y + 9}">{esc(text)}</text>'
        )
        at += wide
    out.append("</g>")
    return "".join(out), row + 1
