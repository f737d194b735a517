"""The memory block of one agent turn: retrieval, memory.md, assembly, access bookkeeping.

``python -m bench.memory_assembly`` builds a workspace whose agent has a 50 KB memory.md and
a Layer A namespace of N facts, then times ``MemoryService.memory_block`` at T = 2,000 (the
whole per-turn path a prompt pays for), each turn with a different question. Reported as
ratios: against tokenising the memory.md once with no cache (the same run's baseline), and the
growth from 1,000 to 100,000 facts (target <= 3x).
"""

from __future__ import annotations

import statistics
import sys
import time
from dataclasses import dataclass

from bench.memory_retrieval import QUERY, generate_facts
from bench.support import temp_settings
from squad.app import App
from squad.memory.agent import AgentContext
from squad.spec.loader import squad_from_text
from squad.text.tokens import counter_for_model

SQUAD = """\
name: bench
process: hierarchical
agents:
  - {id: planner, role: Plans the work, profile: bench-planner}
memory: {max_tokens: 2000}
"""
MEMORY_BYTES = 50_000
TOPICS = [
    "and the retry policy for failed payments?",
    "what about the cache eviction settings?",
    "which logging format do the workers use?",
    "how are the feature flags rolled out?",
    "where do the nightly backups go?",
    "who reviews the schema migrations?",
    "what timeout does the search API use?",
    "how is the staging cluster sized?",
    "which queue handles email delivery?",
    "what is the on-call rotation?",
    "how are secrets injected into containers?",
]
GROWTH_TARGET = 3.0


@dataclass(frozen=True)
class Timing:
    facts: int
    block_s: float
    baseline_s: float
    tokens: int


def memory_md(size: int = MEMORY_BYTES) -> str:
    """A realistic sectioned memory.md of about ``size`` bytes."""
    facts = generate_facts(2_000, seed=7)
    sections = {"Project Context": [], "Coding Rules": [], "Decisions": [], "Insights": []}
    names = list(sections)
    text = ""
    for i, fact in enumerate(facts):
        sections[names[min(i % 10, 3)]].append(f"- {fact.text} (2026-11-{1 + i % 28:02d})")
        text = "".join(f"# {n}\n" + "\n".join(lines) + "\n\n" for n, lines in sections.items())
        if len(text.encode()) >= size:
            break
    return text


def measure(n_facts: int, repeat: int = 11) -> Timing:
    with temp_settings() as settings:
        spec = squad_from_text(SQUAD)
        with App.open(settings) as app:
            store = app.store
            workspace = app.squads.create(spec).path
            text = memory_md()
            (workspace / "agents" / "planner" / "memory.md").write_text(text)
            service = app.memory
            ctx = AgentContext.of(spec, "planner", workspace)
            namespace = service.namespace(ctx)
            store.memory.add_facts_bulk(namespace.id, generate_facts(n_facts))
            counter = counter_for_model(ctx.model, remember=False)
            service.memory_block(ctx, message=QUERY)  # warm caches and the tokenizer
            samples, baseline = [], []
            for turn in range(repeat):
                # Each turn asks something else, as turns do: only memory.md repeats.
                message = f"{QUERY} {TOPICS[turn % len(TOPICS)]}"
                start = time.perf_counter()
                block = service.memory_block(ctx, message=message)
                samples.append(time.perf_counter() - start)
                start = time.perf_counter()
                counter.count((workspace / "agents" / "planner" / "memory.md").read_text())
                baseline.append(time.perf_counter() - start)
            tokens = block.experiential.tokens + block.project.tokens
            assert tokens <= 2000
            return Timing(n_facts, statistics.median(samples), statistics.median(baseline), tokens)


def main() -> int:
    timings = {n: measure(n) for n in (1_000, 10_000, 100_000)}
    for timing in timings.values():
        print(
            f"{timing.facts:>8,} facts + 50 KB memory.md, T=2,000: "
            f"{timing.block_s * 1000:7.1f} ms per block ({timing.tokens} tokens), "
            f"{timing.block_s / timing.baseline_s:5.1f}x tokenising memory.md once"
        )
    growth = timings[100_000].block_s / timings[1_000].block_s
    flag = "ok" if growth <= GROWTH_TARGET else "OVER"
    print(f"growth 100,000 / 1,000 facts: {growth:.2f}x (target <= {GROWTH_TARGET:.0f}x)  {flag}")
    return 0 if growth <= GROWTH_TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
