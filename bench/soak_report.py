"""What ``bench.soak`` makes of its samples: pure functions over plain data, no I/O.

* :func:`trend`: a metric's start, end and least-squares slope per hour over the whole run
  and over each half, and whether it ``plateaued``: the second half's slope is at most 5% of
  the first half's, or both slopes are *tiny* (see :data:`TINY_PER_HOUR`).
* :func:`account`: the runs the schedule asked for against the runs the store recorded.
* :func:`table`: the report as text.

What counts as *tiny* (per hour, in absolute value), chosen to sit above what the sampling
noise of a one-hour soak makes of a flat series and below what would matter in a month:

=======================  ==============  ===============================================
metric                   tiny per hour   a month at that slope
=======================  ==============  ===============================================
``rss_bytes``            2 MiB           1.4 GiB (noise: allocator, run threads)
``fds``, ``threads``     5               run worker threads and connections come and go
``*_bytes``              1 MiB           720 MiB
``rows.*``               50 rows         36,000 rows
``workspace_files``      20 files        14,400 files
``approvals_waiting*``   1 run           720 runs
``status_latency_s``     0.05 s          36 s
=======================  ==============  ===============================================
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

__all__ = [
    "PLATEAU_RATIO",
    "TERMINAL",
    "TINY_PER_HOUR",
    "account",
    "slope_per_hour",
    "table",
    "tiny_for",
    "trend",
]

PLATEAU_RATIO = 0.05
"""Second-half slope at most this fraction of the first half's: the metric plateaued."""

MIB = 1024 * 1024

TINY_PER_HOUR: dict[str, float] = {
    "rss_bytes": 2 * MIB,
    "fds": 5,
    "threads": 5,
    "_bytes": 1 * MIB,
    "rows.": 50,
    "workspace_files": 20,
    "approvals_waiting": 1,
    "approvals_waiting_max_per_squad": 1,
    "status_latency_s": 0.05,
}
"""Slopes (per hour, absolute) too small to matter, by metric name, suffix or prefix."""

TERMINAL = frozenset({"succeeded", "failed", "stopped"})
"""Run statuses that end a run."""

DAEMON_TRIGGERS = frozenset({"schedule", "on_start"})
"""Runs the daemon starts by itself (as opposed to a person's ``squad run``)."""

Point = tuple[float, float]
"""(seconds since the daemon was ready, value)."""


def tiny_for(metric: str) -> float:
    """The slope per hour below which ``metric`` counts as flat."""
    if metric in TINY_PER_HOUR:
        return TINY_PER_HOUR[metric]
    for key, tiny in TINY_PER_HOUR.items():
        if (key.startswith("_") and metric.endswith(key)) or (
            key.endswith(".") and metric.startswith(key)
        ):
            return tiny
    raise KeyError(f"no tiny slope defined for metric {metric!r}")


def slope_per_hour(points: Sequence[Point]) -> float:
    """The least-squares slope of ``points`` in units per hour (0 for fewer than 2 points)."""
    if len(points) < 2:
        return 0.0
    n = len(points)
    mean_t = sum(t for t, _ in points) / n
    mean_v = sum(v for _, v in points) / n
    var = sum((t - mean_t) ** 2 for t, _ in points)
    if var == 0:
        return 0.0
    cov = sum((t - mean_t) * (v - mean_v) for t, v in points)
    return cov / var * 3600.0


def trend(metric: str, points: Sequence[Point]) -> dict[str, Any]:
    """Start, end and slopes of one metric, and whether it plateaued (see the module)."""
    if not points:
        return {"samples": 0, "plateaued": None}
    middle = (points[0][0] + points[-1][0]) / 2
    first = [p for p in points if p[0] <= middle]
    second = [p for p in points if p[0] >= middle]
    slope_1, slope_2 = slope_per_hour(first), slope_per_hour(second)
    tiny = tiny_for(metric)
    both_tiny = abs(slope_1) <= tiny and abs(slope_2) <= tiny
    return {
        "samples": len(points),
        "start": points[0][1],
        "end": points[-1][1],
        "min": min(v for _, v in points),
        "max": max(v for _, v in points),
        "slope_per_h": slope_per_hour(points),
        "first_half_slope_per_h": slope_1,
        "second_half_slope_per_h": slope_2,
        "tiny_per_h": tiny,
        "plateaued": both_tiny or slope_2 <= PLATEAU_RATIO * max(slope_1, 0.0),
    }


def account(
    *,
    runs: Mapping[str, Mapping[str, Any]],
    events: Iterable[Mapping[str, Any]],
    intervals_s: Mapping[str, float],
    window_s: float,
) -> dict[str, Any]:
    """The schedule's runs against the store's.

    ``runs``: every run the store showed, by id, as last seen (``squad``, ``trigger``,
    ``status``), including runs retention deleted later; ``events``: the daemon's log;
    ``intervals_s``: each squad's interval; ``window_s``: from ``ready`` to the stop signal.

    * ``expected``: interval ticks in the window (each squad +-1 with the phase of its clock);
    * ``fired``: ticks the daemon acted on: runs it started, requests it merged into one
      waiting (``run_coalesced``), fires it skipped on purpose (``fire_skipped*``) and queued
      requests it dropped at shutdown (``run_dropped``);
    * ``started``: runs the store recorded for the daemon's triggers; ``finished``: those
      that ended; ``waiting_approval``, ``interrupted`` (the stop cut them; resumable);
    * ``lost``: ``run_start`` events of new runs (less ``run_skipped``) with no run in the
      store; ``duplicated``: runs in the store beyond those events, plus runs that ended
      more than once; ``left_running``: runs still ``running``/``pending`` after the daemon
      exited.
    """
    starts: Counter[str] = Counter()
    skipped: Counter[str] = Counter()
    other: Counter[str] = Counter()
    ends: Counter[str] = Counter()
    errors = 0
    for event in events:
        name, squad = event.get("event"), str(event.get("squad"))
        fresh = event.get("run_id") is None and event.get("trigger") in DAEMON_TRIGGERS
        if name == "run_start" and fresh:
            starts[squad] += 1
        elif name == "run_skipped" and fresh:
            skipped[squad] += 1
        elif (name in ("run_coalesced", "run_dropped") and event.get("trigger") == "schedule") or (
            isinstance(name, str) and name.startswith("fire_skipped")
        ):
            other[squad] += 1
        elif name == "run_error":
            errors += 1
        elif name == "run_end" and event.get("status") in TERMINAL:
            ends[str(event.get("run_id"))] += 1
    recorded: Counter[str] = Counter()
    statuses: Counter[str] = Counter()
    for run in runs.values():
        if run.get("trigger") in DAEMON_TRIGGERS:
            recorded[str(run["squad"])] += 1
            statuses[str(run["status"])] += 1
    squads = set(intervals_s) | set(starts) | set(recorded)
    lost = sum(max(0, starts[s] - skipped[s] - recorded[s]) for s in squads)
    duplicated = sum(max(0, recorded[s] - (starts[s] - skipped[s])) for s in squads)
    duplicated += sum(count - 1 for count in ends.values() if count > 1)
    expected = sum(int(window_s // interval) for interval in intervals_s.values())
    return {
        "expected": expected,
        "fired": sum(starts.values()) + sum(other.values()),
        "started": sum(recorded.values()),
        "finished": sum(statuses[s] for s in TERMINAL),
        "waiting_approval": statuses["awaiting_approval"],
        "interrupted": statuses["interrupted"],
        "lost": lost,
        "duplicated": duplicated,
        "left_running": statuses["running"] + statuses["pending"],
        "skipped": sum(skipped.values()),
        "run_errors": errors,
        "statuses": dict(sorted(statuses.items())),
    }


def _human(metric: str, value: float) -> str:
    if metric.endswith("_bytes"):
        return f"{value / MIB:.1f}M"
    if metric.endswith("_s"):
        return f"{value:.3f}"
    return f"{value:.0f}" if abs(value) >= 10 or value == int(value) else f"{value:.2f}"


def table(report: Mapping[str, Any]) -> str:
    """The report as lines of text: a row per metric, then the run accounting."""
    lines = [
        f"{report['squads']} squads, {report['minutes']:g} min, retention window "
        f"{report['retention']['window_minutes']:g} min "
        f"(applied: {', '.join(report['retention']['applied']) or 'none'})",
        f"{'metric':34} {'start':>9} {'end':>9} {'slope/h':>9} {'1st/h':>9} {'2nd/h':>9}  "
        "plateaued",
    ]
    for metric, row in report["metrics"].items():
        if not row.get("samples"):
            continue
        cells = [
            _human(metric, row[key])
            for key in (
                "start",
                "end",
                "slope_per_h",
                "first_half_slope_per_h",
                "second_half_slope_per_h",
            )
        ]
        lines.append(f"{metric:34} " + " ".join(f"{c:>9}" for c in cells) + f"  {row['plateaued']}")
    runs = report["runs"]
    lines.append(
        "runs: "
        + ", ".join(
            f"{key} {runs[key]}"
            for key in (
                "expected",
                "fired",
                "started",
                "finished",
                "waiting_approval",
                "interrupted",
                "lost",
                "duplicated",
                "left_running",
            )
        )
    )
    status = report.get("status_vs_help")
    if status:
        lines.append(
            f"squad status {status['status_s']:.2f}s (median) vs squad --help "
            f"{status['help_s']:.2f}s: {status['ratio']:.2f}x"
        )
    return "\n".join(lines)
