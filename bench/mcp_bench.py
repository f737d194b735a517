"""squad's MCP server over stdio against the same tools called in-process, with 10,000 facts.

One squad, one agent whose experiential namespace holds 10,000 facts and whose memory.md holds
200 lines. ``memory_search`` and ``memory_context`` are each called 200 times with varying
queries: in-process through :class:`~squad.mcp.tools.SquadTools` (the function each tool
runs), and through a real ``squad mcp`` subprocess with the SDK's stdio client (JSON-RPC,
the pipe, the SDK's dispatch and argument validation, JSON both ways). The figure is the ratio
of the p95 latencies per call; the target is at most 3x.

Run alone with ``python -m bench.mcp_bench``; ``python -m bench`` includes it, in a process of
its own.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bench.support import temp_settings

if TYPE_CHECKING:
    from bench.__main__ import Result
    from squad.settings import Settings

FACTS = 10_000
CALLS = 200
WARMUP = 10
TARGET = 3.0
TOPICS = [
    "deploy", "billing", "search", "onboarding", "invoices", "latency", "cache", "tokens",
    "release", "review", "docs", "export", "import", "queue", "retry", "schema",
]  # fmt: skip
SQUAD_YAML = """\
name: bench-mcp
agents:
  - id: keeper
    role: Keeps what the team learns
tasks:
  - id: note
    description: Take notes
    agent: keeper
"""


def _fill(settings: Settings) -> None:
    from squad.app import App
    from squad.store.records import NewFact

    configs = settings.configs / "squads"
    configs.mkdir(parents=True, exist_ok=True)
    (configs / "bench-mcp.yaml").write_text(SQUAD_YAML)
    with App.open(settings) as app:
        spec, _ = app.squads.create_from_file(configs / "bench-mcp.yaml")
        ctx = app.agent(spec.name, "keeper")
        namespace = app.memory.namespace(ctx)
        facts = [
            NewFact(
                text=f"The {TOPICS[i % len(TOPICS)]} service number {i} needs "
                f"{TOPICS[(i * 7) % len(TOPICS)]} checks before each change",
                squad=spec.name,
                agent="keeper",
                source="bench",
            )
            for i in range(FACTS)
        ]
        for start in range(0, FACTS, 1000):
            app.store.memory.add_facts_bulk(namespace.id, facts[start : start + 1000])
        memory = app.memory.memory_file(ctx)
        lines = "\n".join(
            f"- {TOPICS[i % len(TOPICS)]} rule {i}: keep {TOPICS[(i * 3) % len(TOPICS)]} small"
            for i in range(200)
        )
        memory.append("Insights", lines, actor="bench")


def _calls() -> list[tuple[str, dict[str, Any]]]:
    calls = []
    for i in range(CALLS):
        topic = TOPICS[i % len(TOPICS)]
        calls.append(("memory_search", {"query": f"{topic} service number {i}"}))
        message = f"How do we handle {topic}?"
        calls.append(
            ("memory_context", {"squad": "bench-mcp", "agent": "keeper", "message": message})
        )
    return calls


def _p95(samples: list[float]) -> float:
    return statistics.quantiles(samples, n=20)[-1]


def _in_process(settings: Settings) -> dict[str, list[float]]:
    from squad.app import App
    from squad.mcp.tools import Scope, SquadTools

    times: dict[str, list[float]] = {"memory_search": [], "memory_context": []}
    with App.open(settings) as app:
        tools = SquadTools(app, None, Scope())
        run = {
            "memory_search": lambda a: tools.memory_search(a["query"]),
            "memory_context": lambda a: tools.memory_context(a["squad"], a["agent"], a["message"]),
        }
        calls = _calls()
        for name, arguments in calls[: WARMUP * 2]:
            json.dumps(run[name](arguments))
        for name, arguments in calls:
            start = time.perf_counter()
            run[name](arguments)
            times[name].append(time.perf_counter() - start)
    return times


def _over_stdio(settings: Settings) -> dict[str, list[float]]:
    import anyio
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(
        command=str(Path(sys.executable).parent / "squad"),
        args=["mcp", "--read-only"],
        env={
            "SQUAD_HOME": str(settings.home),
            "SQUAD_WORKSPACES": str(settings.workspaces),
            "SQUAD_CONFIGS": str(settings.configs),
        },
    )
    times: dict[str, list[float]] = {"memory_search": [], "memory_context": []}

    async def main() -> None:
        async with Client(stdio_client(params)) as client:
            calls = _calls()
            for name, arguments in calls[: WARMUP * 2]:
                await client.call_tool(name, arguments)
            for name, arguments in calls:
                start = time.perf_counter()
                result = await client.call_tool(name, arguments)
                times[name].append(time.perf_counter() - start)
                if result.is_error:
                    raise RuntimeError(f"{name} failed: {result.content[0].text}")

    anyio.run(main)
    return times


def measure() -> dict[str, Any]:
    with temp_settings() as settings:
        started = time.perf_counter()
        _fill(settings)
        filled_s = time.perf_counter() - started
        local = _in_process(settings)
        remote = _over_stdio(settings)
    figures: dict[str, Any] = {"facts": FACTS, "calls": CALLS, "fill_s": round(filled_s, 2)}
    for name in ("memory_search", "memory_context"):
        figures[name] = {
            "in_process_p95_s": _p95(local[name]),
            "stdio_p95_s": _p95(remote[name]),
            "in_process_median_s": statistics.median(local[name]),
            "stdio_median_s": statistics.median(remote[name]),
        }
    return figures


def results(figures: dict[str, Any]) -> list[Result]:
    from bench.__main__ import Result

    return [
        Result(
            f"MCP {name} p95 (10k facts)",
            figures[name]["stdio_p95_s"],
            "in-process p95",
            figures[name]["in_process_p95_s"],
            TARGET,
        )
        for name in ("memory_search", "memory_context")
    ]


def notes(figures: dict[str, Any]) -> list[str]:
    lines = [f"  MCP bench: {figures['facts']:,} facts filled in {figures['fill_s']} s"]
    for name in ("memory_search", "memory_context"):
        f = figures[name]
        lines.append(
            f"  {name}: median {f['in_process_median_s'] * 1000:.2f} ms in-process, "
            f"{f['stdio_median_s'] * 1000:.2f} ms over stdio"
        )
    return lines


def bench_mcp(notes_out: list[str] | None = None) -> list[Result]:
    """This benchmark in a fresh process; notes go to ``notes_out`` (else are printed)."""
    from bench.support import in_fresh_process

    return in_fresh_process("bench.mcp_bench", results, notes, notes_out)


def main() -> int:
    from bench.support import report

    return report(measure(), results, notes)


if __name__ == "__main__":
    sys.exit(main())
