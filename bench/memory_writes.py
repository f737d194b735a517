"""An agent's memory.md after 2,000 ``memory_append`` calls: size, latency, nothing lost.

``python -m bench.memory_writes [--json] [--appends N]`` replays N agent writes of varied
facts through the agent's own tool (``MemoryTools.memory_append``, inside a run, so no
history commit is timed) on a squad made with ``App``, the clock moving one day every
:data:`PER_DAY` writes. About one write in six says again something already written: the
same words, a normalised variant (case, punctuation, a date stamp) or a near duplicate.

Reported: memory.md's final size and its cap, write latency (median, p95, max), writes
refused, lines left out as already known, folds, the daily logs' total size, and whether
every fact written is still findable, whole, in memory.md or a daily log (``lost``: must be
0; a refused write is counted under ``refused``, not lost).
"""

from __future__ import annotations

import json
import random
import statistics
import sys
import time
from typing import Any

from bench.support import temp_settings
from squad.app import App
from squad.clock import FrozenClock
from squad.memory.agent import AgentContext
from squad.memory.daily import DailyLog
from squad.memory.tools import MemoryTools
from squad.spec.loader import squad_from_text

SQUAD = """\
name: bench
process: hierarchical
agents:
  - {id: planner, role: Plans the work}
"""
APPENDS = 2_000
PER_DAY = 50
SEED = 31
SUBJECTS = [
    "the search indexer", "the billing service", "the deploy pipeline", "the docs site",
    "the mobile app", "the staging cluster", "the nightly backup", "the auth gateway",
    "the metrics exporter", "the schema migration", "the feature flag service", "the CDN",
]  # fmt: skip
CLAIMS = [
    "runs on port {n}", "retries failed jobs {n} times", "keeps logs for {n} days",
    "is owned by team {n}", "times out after {n} seconds", "was upgraded to version {n}",
    "needs {n} GB of memory", "deploys every {n} hours", "alerts after {n} errors",
    "is pinned to release {n}",
]  # fmt: skip


def facts(count: int, rng: random.Random) -> list[str]:
    """``count`` fact lines; about one in six repeats an earlier one in some form."""
    out: list[str] = []
    for _ in range(count):
        if out and rng.random() < 0.17:
            earlier = rng.choice(out)
            kind = rng.randrange(3)
            if kind == 0:
                out.append(earlier)
            elif kind == 1:
                out.append(earlier.upper().rstrip(".") + "!")
            else:
                out.append(earlier.replace("- the ", "- The ", 1) + " as well")
            continue
        claim = rng.choice(CLAIMS).format(n=rng.randrange(1, 10_000))
        out.append(f"- {rng.choice(SUBJECTS)} {claim}")
    return out


def measure(appends: int = APPENDS) -> dict[str, Any]:
    rng = random.Random(SEED)
    told = facts(appends, rng)
    clock = FrozenClock()
    with temp_settings() as settings, App.open(settings, clock=clock) as app:
        spec = squad_from_text(SQUAD)
        workspace = app.squads.create(spec).path
        ctx = AgentContext.of(spec, "planner", workspace, run_id="bench")
        tools = MemoryTools(app.memory, ctx)
        latencies: list[float] = []
        written: set[str] = set()
        refused = known = folds = 0
        for n, fact in enumerate(told):
            if n and n % PER_DAY == 0:
                clock.advance(86_400)
            start = time.perf_counter()
            answer = tools.memory_append("Insights", fact)
            latencies.append(time.perf_counter() - start)
            refused += answer.startswith("refused")
            known += "already known" in answer
            folds += "were folded" in answer
            if not answer.startswith(("refused", "already known")):
                written.add(fact)
        file = app.memory.memory_file(ctx)
        text = file.path.read_text()
        log = DailyLog(workspace, "planner")
        daily = "".join(log.read(day) for day in log.days())
        kept = text + daily
        lost = sum(1 for fact in written if fact not in kept)
        size = file.path.stat().st_size
        lines = [line for line in text.splitlines() if line.startswith("- ")]
        ordered = sorted(latencies)
        return {
            "appends": appends,
            "memory_md_bytes": size,
            "cap_bytes": file.cap_bytes,
            "memory_md_lines": len(lines),
            "duplicate_lines": len(lines) - len(set(lines)),
            "refused": refused,
            "known": known,
            "folds": folds,
            "daily_logs": len(log.days()),
            "daily_bytes": len(daily.encode()),
            "lost": lost,
            "latency_ms_p50": round(1000 * statistics.median(ordered), 2),
            "latency_ms_p95": round(1000 * ordered[int(0.95 * (len(ordered) - 1))], 2),
            "latency_ms_max": round(1000 * ordered[-1], 2),
            "total_s": round(sum(latencies), 2),
        }


def main(argv: list[str]) -> int:
    appends = int(argv[argv.index("--appends") + 1]) if "--appends" in argv else APPENDS
    result = measure(appends)
    if "--json" in argv:
        print(json.dumps(result))
    else:
        for key, value in result.items():
            print(f"{key:>18}: {value}")
    return 0 if result["lost"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
