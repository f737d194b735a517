"""Does a run cost the same after 1,000 earlier runs as after 10? Recall's cost, in one run.

``python -m bench.recall_history [--runs N] [--json]``: one temporary home, two copies of a
two-task squad (an outline by the planner, a draft by the writer from it) on the offline
model, with recall on as by default. One copy gets 10 earlier runs, the other ``--runs``
(1,000), each run with a goal of its own drawn from a small vocabulary (a scheduled squad
asked about a different service, customer and week each time), so the archives hold many
distinct texts sharing many words, the shape that makes recall work: every earlier run is
a candidate for the next one's prompt. The background extractor archives every message, as
the daemon would run it.

Then runs alternate between the two copies (drift hits both) with new goals of the same
kind, the extractor drained between runs (outside the time), and the median of each is
reported; ``ratio_1000_vs_10`` is the one after the long history over the one after the
short (target :data:`TARGET`). The same pair is measured with recall off as a control:
what the long history costs when recall reads nothing.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

TARGET = 1.15
SHORT = 10
LONG = 1_000
REPEAT = 31

SQUAD_YAML = """\
name: {name}
goal: Keep the services documented.
agents:
  - {{id: planner, role: Plans the documentation work, lead: true}}
  - {{id: writer, role: Writes the pages}}
tasks:
  - {{id: outline, description: Outline the guide for this run's goal., agent: planner}}
  - {{id: draft, description: Write the guide from the outline., agent: writer,
      depends_on: [outline]}}
memory: {{recall_max_tokens: {recall}}}
"""

SERVICES = [
    "billing",
    "payments",
    "invoices",
    "ledger",
    "checkout",
    "search",
    "catalog",
    "inventory",
    "shipping",
    "returns",
    "accounts",
    "identity",
    "notifications",
    "reporting",
    "analytics",
    "pricing",
    "coupons",
    "reviews",
]
TOPICS = [
    "connection pool",
    "retry policy",
    "rate limits",
    "schema migration",
    "backup schedule",
    "error budget",
    "alert routing",
    "cache eviction",
    "feature flags",
    "release checklist",
    "on-call rota",
    "data retention",
    "access review",
    "load test",
    "disaster recovery",
]
CUSTOMERS = [
    "Acme",
    "Globex",
    "Initech",
    "Umbrella",
    "Hooli",
    "Stark",
    "Wayne",
    "Tyrell",
    "Wonka",
    "Cyberdyne",
]


def goal(rnd: random.Random, n: int) -> str:
    """A run's goal: one service, topic and customer of many, and the run's number."""
    return (
        f"Document the {rnd.choice(TOPICS)} of the {rnd.choice(SERVICES)} service for "
        f"{rnd.choice(CUSTOMERS)}, run {n}: note what changed since the "
        f"{rnd.choice(TOPICS)} review of the {rnd.choice(SERVICES)} team."
    )


def measure(long: int = LONG, repeat: int = REPEAT) -> dict[str, Any]:
    """Median seconds of a run after ``SHORT`` and after ``long`` earlier runs, recall on and
    off, and how long the histories took to build."""
    from squad.app import App
    from squad.settings import Settings
    from squad.spec.loader import squad_from_text

    rnd = random.Random(20261206)
    figures: dict[str, Any] = {"short": SHORT, "long": long, "repeat": repeat}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        settings = Settings.load(
            {
                "SQUAD_HOME": str(root / "home"),
                "SQUAD_WORKSPACES": str(root / "ws"),
                "SQUAD_CONFIGS": str(root / "configs"),
            },
            cwd=root,
        )
        with App.open(settings) as app:
            squads: dict[int, Any] = {}
            specs_off: dict[int, Any] = {}
            folders: dict[int, Path] = {}
            for runs in (SHORT, long):
                name = f"docs-{runs}"
                squads[runs] = squad_from_text(SQUAD_YAML.format(name=name, recall=1000))
                specs_off[runs] = squad_from_text(SQUAD_YAML.format(name=name, recall=0))
                folders[runs] = app.squads.create(squads[runs]).path
            start = time.perf_counter()
            for runs in (SHORT, long):
                for n in range(runs):
                    result = app.runner().run(squads[runs], folders[runs], goal=goal(rnd, n))
                    assert result.succeeded, result.error
                    if n % 50 == 49:
                        app.drain_extraction(120)
                app.drain_extraction(120)
            figures["build_s"] = time.perf_counter() - start
            for recall, specs in (("on", squads), ("off", specs_off)):
                times: dict[int, list[float]] = {SHORT: [], long: []}
                for i in range(repeat + 1):
                    for runs in (SHORT, long):
                        text = goal(rnd, runs + i)
                        began = time.perf_counter()
                        result = app.runner().run(specs[runs], folders[runs], goal=text)
                        took = time.perf_counter() - began
                        assert result.succeeded, result.error
                        app.drain_extraction(120)
                        if i:  # the first of each warms imports and caches
                            times[runs].append(took)
                short_s, long_s = (statistics.median(times[r]) for r in (SHORT, long))
                figures[f"recall_{recall}"] = {"short_s": short_s, "long_s": long_s}
    on, off = figures["recall_on"], figures["recall_off"]
    figures["ratio_1000_vs_10"] = on["long_s"] / on["short_s"]
    figures["ratio_recall_off"] = off["long_s"] / off["short_s"]
    return figures


def results(figures: dict[str, Any]) -> list[Any]:
    from bench.__main__ import Result

    on = figures["recall_on"]
    return [
        Result(
            f"run after {figures['long']:,} runs",
            on["long_s"],
            f"after {figures['short']} runs",
            on["short_s"],
            TARGET,
        )
    ]


def notes(figures: dict[str, Any]) -> list[str]:
    on, off = figures["recall_on"], figures["recall_off"]
    return [
        f"recall over history: a 2-task run after {figures['long']:,} runs "
        f"{on['long_s'] * 1000:.1f} ms, after {figures['short']} {on['short_s'] * 1000:.1f} ms "
        f"({figures['ratio_1000_vs_10']:.2f}x, target {TARGET}x); recall off "
        f"{off['long_s'] * 1000:.1f} vs {off['short_s'] * 1000:.1f} ms "
        f"({figures['ratio_recall_off']:.2f}x); histories built in {figures['build_s']:.0f} s",
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=LONG, help="the long history's runs")
    parser.add_argument("--repeat", type=int, default=REPEAT, help="measured runs per copy")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    figures = measure(args.runs, args.repeat)
    if args.json:
        print(json.dumps(figures))
        return 0
    for line in notes(figures):
        print(line)
    return 0 if figures["ratio_1000_vs_10"] <= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
