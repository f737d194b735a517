"""Twelve simulated weeks of one squad's memory: does it stay clean, bounded and useful?

``python -m bench.memory_weeks [--weeks N] [--notes-per-day N] [--json]`` replays the weeks
of :mod:`bench.memory_weeks_corpus` through squad's real paths, on the built-in offline
model, in a temporary home, time moved by a :class:`~squad.clock.FrozenClock` that the App
(store, files, history, extractor) reads:

- every workday at 07:00 a scheduled run of the squad (``SquadRunner.run``, trigger
  ``schedule``), on Fridays at 17:00 a second one (the weekly status);
- every workday at 10:00 a chat (``ChatSession.say``, a minute per message), the person's
  facts, repeats, changes, junk and requests to remember among them, answered by the
  offline model (which calls ``memory_append`` when asked to remember);
- the background extractor as the daemon runs it: notified after every reply, a pass every
  ``trigger_interval`` replies, drained after each turn so the batches are the same every time;
- every night at 03:00 the daemon's consolidation (``run_consolidation``: memory gc, the
  fold of a memory.md past 80% of its cap).

After each week: memory.md's size against its cap, its live lines repeated (by
:func:`squad.memory.repeats.line_key`), the model's chatter and the person's junk filed
(memory.md lines and active Layer A facts holding a phrase of
:data:`~bench.memory_weeks_corpus.CHATTER`, or saying a line of
:data:`~bench.memory_weeks_corpus.JUNK`), and superseded facts still live. After weeks 1, 6
and 12 the questions about that week are asked (and at the last week every question again):
the memory block of each (``MemoryService.memory_block``, the prompt's, recall included) at
1,000 and 2,000 tokens, the squad's own split between memory and recall (2,000 : 1,000), is
checked for its evidence, its stale wording, and lines it shows twice.

Targets (:data:`TARGETS`): no line shown twice in a block, no chatter filed, no stale fact
injected from memory (memory.md or Layer A), memory.md under its cap every week, evidence at
2,000 tokens >= 0.9 for every probe week's questions. A superseded version a block recalls
from the conversation archive (the old message, under its date) is reported apart
(``stale_recalled``): it is what was said then, not a fact memory holds.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from bench.memory_weeks_corpus import (
    CHATTER,
    DAILY_NOTES,
    JUNK,
    PROBE_WEEKS,
    QUESTIONS,
    SQUAD_YAML,
    WEEKS,
    Question,
    holds,
    weeks,
)
from bench.support import temp_settings
from squad.memory.document import superseded
from squad.memory.repeats import line_key

if TYPE_CHECKING:
    from squad.app import App
    from squad.memory.agent import AgentContext

BUDGETS = (1_000, 2_000)
START = datetime(2027, 1, 4, tzinfo=UTC)
"""A Monday: week 1, day 0."""
EVIDENCE_TARGET = 0.9
TARGETS = {
    "duplicates_injected": "0 lines shown twice in any probe block",
    "chatter_filed": "0 lines of the model's chatter in memory.md or Layer A, any week",
    "stale_injected": "0 superseded facts in any probe block from memory.md or Layer A",
    "under_cap": "memory.md under its cap every week",
    "evidence_2000": f"evidence at 2,000 tokens >= {EVIDENCE_TARGET} for every probe week",
}
_RECALL_HEADING = "### Earlier conversation"


def replay(
    week_count: int = WEEKS, notes_per_day: int = DAILY_NOTES, budgets: Sequence[int] = BUDGETS
) -> dict[str, Any]:
    """Replay ``week_count`` weeks and return the report (see the module docstring)."""
    from squad.app import App
    from squad.chat.session import ChatSession
    from squad.clock import FrozenClock
    from squad.daemon.jobs import run_consolidation
    from squad.memory.agent import AgentContext
    from squad.spec.loader import squad_from_text

    began = time.perf_counter()
    clock = FrozenClock(START)
    plan = weeks(week_count, notes_per_day)
    report: dict[str, Any] = {
        "weeks": week_count,
        "notes_per_day": notes_per_day,
        "budgets": list(budgets),
        "per_week": [],
        "probes": [],
    }
    with temp_settings() as settings, App.open(settings, clock=clock) as app:
        spec = squad_from_text(SQUAD_YAML)
        workspace = app.squads.create(spec).path
        ctx = AgentContext.of(spec, "assistant", workspace)
        runner = app.runner()
        turns = runs = folds = 0
        for week in plan:
            monday = START + timedelta(days=7 * (week.number - 1))
            for day in range(7):
                today = monday + timedelta(days=day)
                for run in sorted((r for r in week.runs if r.day == day), key=lambda r: r.hour):
                    if run.hour >= 12:
                        continue
                    clock.now = today + timedelta(hours=run.hour)
                    _run(app, runner, spec, workspace, run.goal)
                    runs += 1
                for chat in (c for c in week.chats if c.day == day):
                    clock.now = today + timedelta(hours=10)
                    with ChatSession.open(runner, spec.name, "assistant") as session:
                        for message in chat.messages:
                            clock.advance(60)
                            session.say(message)
                            app.extraction.drain(120)
                            turns += 1
                for run in (r for r in week.runs if r.day == day and r.hour >= 12):
                    clock.now = today + timedelta(hours=run.hour)
                    _run(app, runner, spec, workspace, run.goal)
                    runs += 1
                clock.now = today + timedelta(days=1, hours=3)
                folds += len(run_consolidation(app, now=clock())["memory_folds"])
            row = _week_figures(app, ctx, week.number)
            row["folds_so_far"] = folds
            report["per_week"].append(row)
            asked = [q for q in QUESTIONS if q.week == week.number and q.week in PROBE_WEEKS]
            if week.number == week_count:
                asked = [q for q in QUESTIONS if q.week <= week_count and q.week in PROBE_WEEKS]
            for question in asked:
                report["probes"].append(_probe(app, ctx, question, week.number, budgets))
        report["turns"] = turns
        report["runs"] = runs
        report["folds"] = folds
    report["seconds"] = round(time.perf_counter() - began, 1)
    report["summary"] = _summary(report, budgets)
    report["targets_met"] = _targets(report)
    return report


def _run(app: App, runner: Any, spec: Any, workspace: Any, goal: str) -> None:
    result = runner.run(spec, workspace, goal=goal, trigger="schedule")
    if not result.succeeded:
        raise RuntimeError(f"the scheduled run failed: {result.error}")
    app.extraction.drain(120)


# -- after each week --------------------------------------------------------------------------


def _live_lines(text: str) -> list[str]:
    """memory.md's lines that a prompt may show: every line but headings, blank lines and
    lines struck through (a memory tool may write a line without a list marker)."""
    return [
        line.strip()
        for line in text.splitlines()
        if line.strip() and not line.lstrip().startswith("#") and not superseded(line)
    ]


def _repeats(keys: Iterable[str]) -> int:
    """How many of ``keys`` repeat an earlier one ('' says nothing and is not counted)."""
    counts = Counter(k for k in keys if k)
    return sum(n - 1 for n in counts.values())


def _repeated(keys: Iterable[str]) -> list[str]:
    """The keys said more than once, in order of first appearance."""
    counts = Counter(k for k in keys if k)
    return [k for k, n in counts.items() if n > 1]


def is_chatter(text: str) -> bool:
    """A memory line that holds the model's own words (:data:`CHATTER`)."""
    return any(holds(text, phrase) for phrase in CHATTER)


_JUNK_KEYS = frozenset(line_key(j) for j in JUNK)


def is_junk(text: str) -> bool:
    """A memory line that says nothing but one of the person's junk messages."""
    return line_key(text) in _JUNK_KEYS


def _stale_phrases(week: int) -> list[str]:
    """The stale wordings of the facts changed by the end of ``week``."""
    return [p for q in QUESTIONS if q.stale and q.week <= week for p in q.stale]


def _week_figures(app: App, ctx: AgentContext, week: int) -> dict[str, Any]:
    from squad.memory.daily import DailyLog

    file = app.memory.memory_file(ctx)
    text = file.path.read_text(encoding="utf-8") if file.path.exists() else ""
    lines = _live_lines(text)
    facts = [f.text for f in app.store.memory.facts(app.memory.namespace_id(ctx))]
    filed = lines + facts
    log = DailyLog(ctx.workspace, ctx.agent.id)
    stale = _stale_phrases(week)
    return {
        "week": week,
        "memory_md_bytes": len(text.encode()),
        "cap_bytes": file.cap_bytes,
        "memory_md_lines": len(lines),
        "struck_lines": sum(
            1 for line in text.splitlines() if line.startswith("- ") and superseded(line)
        ),
        "duplicate_lines": _repeats(line_key(line) for line in lines),
        "duplicate_examples": _repeated(line_key(line) for line in lines)[:3],
        "layer_a_facts": len(facts),
        "layer_a_duplicates": _repeats(line_key(f) for f in facts),
        "chatter_filed": sum(1 for t in filed if is_chatter(t)),
        "chatter_examples": [t for t in filed if is_chatter(t)][:3],
        "junk_filed": sum(1 for t in filed if is_junk(t)),
        "stale_live": sum(1 for t in filed if any(holds(t, p) for p in stale)),
        "stale_examples": [t for t in filed if any(holds(t, p) for p in stale)][:4],
        "daily_log_bytes": sum(len(log.read(day).encode()) for day in log.days()),
    }


# -- the questions ----------------------------------------------------------------------------


def _probe(
    app: App, ctx: AgentContext, question: Question, week: int, budgets: Sequence[int]
) -> dict[str, Any]:
    """The memory block of ``question`` asked at the end of ``week``, at each budget."""
    from squad.memory.assembly import CLOSE_MARK, MEMORY_TITLE, OPEN_MARK, WARNING

    counter = app.memory.counter(ctx)
    frame = counter.count("\n".join((MEMORY_TITLE, OPEN_MARK, WARNING, CLOSE_MARK)))
    regions, _ = app.memory.plan(ctx)  # the squad's split: its budgets, else its window's
    memory_budget, recall_budget = regions.budget("memory"), regions.budget("recall")
    recall_share = recall_budget / (memory_budget + recall_budget)
    out: dict[str, Any] = {"about_week": question.week, "asked_week": week, "q": question.text}
    for budget in budgets:
        inside = budget - frame
        recall = round(inside * recall_share)
        block = app.memory.memory_block(
            ctx,
            message=question.text,
            max_tokens=inside - recall,
            recall_tokens=recall,
            touch=False,
        )
        facts, recalled = _block_lines(block.text)
        stale = [p for p in question.stale if any(holds(line, p) for line in facts)]
        stale_recalled = [p for p in question.stale if any(holds(line, p) for line in recalled)]
        out[str(budget)] = {
            "tokens": counter.count(block.text),
            "hit": all(holds(block.text, p) for p in question.evidence),
            "stale": len(stale),
            "stale_recalled": len(stale_recalled),
            "duplicates": _repeats(_shown_key(line) for line in facts + recalled),
            "chatter": sum(1 for line in facts + recalled if _model_chatter(line)),
            "task_prompts": sum(1 for line in recalled if line.startswith(_TASK_PROMPT)),
        }
    return out


_TASK_PROMPT = "- user: Task: "
"""How a recalled run's task prompt starts (the runner records it as the user's turn)."""


def _model_chatter(line: str) -> bool:
    """A block line holding the model's words: chatter, not a recalled task prompt (the
    squad's own prompt, counted apart as ``task_prompts``)."""
    return is_chatter(line) and not line.startswith(_TASK_PROMPT)


def _block_lines(text: str) -> tuple[list[str], list[str]]:
    """A block's lines that say something: those from memory (Layer A, memory.md, a line
    without a list marker included), and those recalled. Headings, the frame and the line
    that describes each layer under its heading are left out."""
    from squad.memory.assembly import CLOSE_MARK, MEMORY_TITLE, OPEN_MARK, WARNING

    frame = {MEMORY_TITLE, OPEN_MARK, WARNING, CLOSE_MARK}
    facts: list[str] = []
    recalled: list[str] = []
    into = facts
    under_layer = False
    for line in text.splitlines():
        if line.startswith(_RECALL_HEADING):
            into = recalled
        if line.startswith("### "):
            under_layer = True
            continue
        if under_layer and not line.startswith(("- ", "#")):
            under_layer = False  # the layer's description
            continue
        under_layer = False
        if line.strip() and not line.startswith("#") and line not in frame:
            into.append(line)
    return facts, recalled


def _shown_key(line: str) -> str:
    """What a block line says, a recalled message's speaker ("user: ") left out."""
    body = line[2:] if line.startswith("- ") else line
    head, sep, rest = body.partition(": ")
    if sep and len(head) <= 40 and " " not in head.strip():
        body = rest
    return line_key(body)


# -- the report -------------------------------------------------------------------------------


def _summary(report: dict[str, Any], budgets: Sequence[int]) -> dict[str, Any]:
    rows, probes = report["per_week"], report["probes"]
    evidence: dict[str, dict[str, float]] = {}
    for probe in probes:
        key = f"week{probe['about_week']}@week{probe['asked_week']}"
        evidence.setdefault(key, {})
    for key in evidence:
        mine = [p for p in probes if f"week{p['about_week']}@week{p['asked_week']}" == key]
        for budget in budgets:
            hits = sum(p[str(budget)]["hit"] for p in mine)
            evidence[key][str(budget)] = round(hits / len(mine), 3)
    return {
        "memory_md_bytes_max": max(r["memory_md_bytes"] for r in rows),
        "cap_bytes": rows[-1]["cap_bytes"],
        "duplicate_lines_max": max(r["duplicate_lines"] for r in rows),
        "chatter_filed_max": max(r["chatter_filed"] for r in rows),
        "junk_filed_max": max(r["junk_filed"] for r in rows),
        "stale_live_max": max(r["stale_live"] for r in rows),
        "duplicates_injected": sum(p[str(b)]["duplicates"] for p in probes for b in budgets),
        "chatter_injected": sum(p[str(b)]["chatter"] for p in probes for b in budgets),
        "task_prompts_recalled": sum(p[str(b)]["task_prompts"] for p in probes for b in budgets),
        "stale_injected": sum(p[str(b)]["stale"] for p in probes for b in budgets),
        "stale_recalled": sum(p[str(b)]["stale_recalled"] for p in probes for b in budgets),
        "evidence": evidence,
    }


def _targets(report: dict[str, Any]) -> dict[str, bool]:
    summary, rows = report["summary"], report["per_week"]
    return {
        "duplicates_injected": summary["duplicates_injected"] == 0,
        "chatter_filed": summary["chatter_filed_max"] == 0,
        "stale_injected": summary["stale_injected"] == 0,
        "under_cap": all(r["memory_md_bytes"] < r["cap_bytes"] for r in rows),
        "evidence_2000": all(
            rates.get("2000", 0.0) >= EVIDENCE_TARGET for rates in summary["evidence"].values()
        ),
    }


def table(report: dict[str, Any]) -> list[str]:
    """The report as the lines ``python -m bench.memory_weeks`` prints."""
    out = [
        f"{'week':>4} {'memory.md':>10} {'lines':>6} {'dup':>4} {'struck':>6} {'layerA':>6} "
        f"{'chatter':>7} {'junk':>4} {'stale':>5} {'daily':>8} {'folds':>5}"
    ]
    for r in report["per_week"]:
        out.append(
            f"{r['week']:>4} {r['memory_md_bytes']:>10,} {r['memory_md_lines']:>6} "
            f"{r['duplicate_lines']:>4} {r['struck_lines']:>6} {r['layer_a_facts']:>6} "
            f"{r['chatter_filed']:>7} {r['junk_filed']:>4} {r['stale_live']:>5} "
            f"{r['daily_log_bytes']:>8,} {r['folds_so_far']:>5}"
        )
    summary = report["summary"]
    out.append(f"memory.md cap: {summary['cap_bytes']:,} bytes")
    for key, rates in summary["evidence"].items():
        figures = ", ".join(f"{rate:.2f} at {budget}" for budget, rate in rates.items())
        out.append(f"evidence, questions about {key.replace('@', ' asked at ')}: {figures}")
    out.append(
        f"injected (every probe block, both budgets): {summary['duplicates_injected']} "
        f"duplicates, {summary['stale_injected']} stale facts from memory, "
        f"{summary['stale_recalled']} stale recalled messages, "
        f"{summary['chatter_injected']} lines of the model's chatter, "
        f"{summary['task_prompts_recalled']} recalled task prompts"
    )
    for probe in report["probes"]:
        for budget in report["budgets"]:
            row = probe[str(budget)]
            if not row["hit"] or row["stale"] or row["duplicates"]:
                out.append(
                    f"  week {probe['asked_week']}, {budget} tokens: {probe['q']!r} "
                    f"hit={row['hit']} stale={row['stale']} duplicates={row['duplicates']}"
                )
    for name, met in report["targets_met"].items():
        out.append(f"target {name}: {'met' if met else 'MISSED'} ({TARGETS[name]})")
    out.append(
        f"{report['turns']} chat turns, {report['runs']} scheduled runs, {report['folds']} "
        f"nightly folds in {report['seconds']} s"
    )
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--weeks", type=int, default=WEEKS, help="weeks to replay (1-12)")
    parser.add_argument(
        "--notes-per-day", type=int, default=DAILY_NOTES, help="generated facts per workday chat"
    )
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    args = parser.parse_args(argv)
    if not 1 <= args.weeks <= WEEKS:
        parser.error(f"--weeks must be 1 to {WEEKS}, got {args.weeks}")
    if args.notes_per_day < 0:
        parser.error(f"--notes-per-day must be 0 or more, got {args.notes_per_day}")
    report = replay(args.weeks, args.notes_per_day)
    if args.json:
        print(json.dumps(report))
    else:
        print("\n".join(table(report)))
    return 0 if all(report["targets_met"].values()) else 1


if __name__ == "__main__":
    sys.exit(main())
