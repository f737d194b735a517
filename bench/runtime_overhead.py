"""Orchestration overhead per agent turn, against a bare LangGraph graph of the same shape.

``python -m bench.runtime_overhead`` runs a sequential squad of N chained tasks on a
zero-latency model through ``SquadRunner`` (prompt assembly with memory, store writes, run
log, task files, durable checkpoints), and a bare ``StateGraph`` looping N steps that each
call the same model once, with the same SQLite checkpointer in durable mode. Target: at most
1.5x per turn.
"""

from __future__ import annotations

import json
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypedDict

from bench.support import InstantModel, temp_settings
from squad.model.types import Message

TASKS = 20
TARGET = 1.5


def squad_yaml(tasks: int) -> str:
    lines = ["name: bench", "agents:", "  - {id: worker, role: Does the work}", "tasks:"]
    for i in range(tasks):
        deps = f", depends_on: [t{i - 1}]" if i else ""
        lines.append(f"  - {{id: t{i}, description: Step {i} of the work., agent: worker{deps}}}")
    return "\n".join(lines) + "\n"


def squad_run(tasks: int) -> float:
    from squad.manager import SquadManager
    from squad.runtime.runner import SquadRunner
    from squad.spec.loader import squad_from_text

    with temp_settings() as settings:
        spec = squad_from_text(squad_yaml(tasks))
        with SquadManager(settings) as manager:
            workspace = manager.create(spec).path
            runner = SquadRunner(
                settings, manager.store, model_factory=lambda spec, on_event: InstantModel()
            )
            runner.run(spec, workspace)  # warm: tokenizer, imports, schema
            start = time.perf_counter()
            result = runner.run(spec, workspace)
            elapsed = time.perf_counter() - start
            assert result.succeeded, result
    return elapsed / tasks


class _State(TypedDict):
    done: int


def time_loop(step: Callable[[_State], _State], tasks: int, folder: Path) -> float:
    """Seconds per step of a LangGraph graph looping ``step`` ``tasks`` times, checkpointed
    durably to SQLite in ``folder`` (after one warm-up run), as squad's runs are."""
    from langgraph.checkpoint.sqlite import SqliteSaver
    from langgraph.graph import END, START, StateGraph

    graph = StateGraph(_State)
    graph.add_node("step", step)
    graph.add_edge(START, "step")
    graph.add_conditional_edges(
        "step", lambda s: END if s["done"] >= tasks else "step", ["step", END]
    )
    connection = sqlite3.connect(folder / "c.sqlite", check_same_thread=False)
    try:
        app = graph.compile(checkpointer=SqliteSaver(connection))
        for thread in ("warm", "timed"):
            start = time.perf_counter()
            config = {"recursion_limit": 10_000, "configurable": {"thread_id": thread}}
            app.invoke({"done": 0}, config, durability="sync")
            elapsed = time.perf_counter() - start
    finally:
        connection.close()
    return elapsed / tasks


def bare_graph(tasks: int) -> float:
    model = InstantModel()

    def step(state: _State) -> _State:
        model.complete([Message.system("s"), Message.user(f"step {state['done']}")])
        return {"done": state["done"] + 1}

    with tempfile.TemporaryDirectory() as tmp:
        return time_loop(step, tasks, Path(tmp))


def bare_graph_with_io(tasks: int) -> float:
    """The bare graph plus the durable I/O a squad turn must do, and nothing else: the task's
    output file (fsynced, renamed, folder fsynced), two commits to a SQLite store in WAL mode
    (task running; turn, spend and task done), two status files and five run-log lines."""
    import os

    from squad.fsutil import atomic_write

    model = InstantModel()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        store = sqlite3.connect(root / "store.sqlite", check_same_thread=False)
        store.execute("PRAGMA journal_mode = WAL")
        store.execute("CREATE TABLE turns (step INTEGER, role TEXT, content TEXT)")
        log = root / "run.jsonl"

        def step(state: _State) -> _State:
            n = state["done"]
            folder = root / "tasks" / f"t{n}"
            folder.mkdir(parents=True, exist_ok=True)
            for status in ("running", "done"):
                with store:
                    store.execute("INSERT INTO turns VALUES (?, ?, ?)", (n, "status", status))
                    if status == "done":
                        store.execute("INSERT INTO turns VALUES (?, 'user', 'x')", (n,))
                        store.execute("INSERT INTO turns VALUES (?, 'assistant', 'y')", (n,))
                record = json.dumps({"task": f"t{n}", "status": status}).encode()
                atomic_write(folder / "status.json", record, durable=False)
                if status == "running":
                    reply = model.complete([Message.system("s"), Message.user(f"step {n}")])
                    atomic_write(folder / "output.md", reply.content.encode())
            for _ in range(5):
                fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
                os.write(fd, b'{"event": "x"}\n')
                os.close(fd)
            return {"done": n + 1}

        try:
            return time_loop(step, tasks, root)
        finally:
            store.close()


def measure(repeat: int = 3) -> tuple[float, float]:
    ours = statistics.median(squad_run(TASKS) for _ in range(repeat))
    bare = statistics.median(bare_graph(TASKS) for _ in range(repeat))
    return ours, bare


def main() -> int:
    ours, bare = measure()
    with_io = statistics.median(bare_graph_with_io(TASKS) for _ in range(3))
    if "--json" in sys.argv:
        print(json.dumps({"squad_s": ours, "bare_s": bare, "with_io_s": with_io}))
        return 0
    ratio = ours / bare
    flag = "ok" if ratio <= TARGET else "OVER"
    print(
        f"per turn: squad {ours * 1000:.1f} ms, bare LangGraph {bare * 1000:.1f} ms, "
        f"ratio {ratio:.1f}x (target <= {TARGET}x)  {flag}"
    )
    print(
        f"bare LangGraph plus the same durable I/O (output fsync, 2 store commits, status "
        f"files, log lines): {with_io * 1000:.1f} ms; squad is {ours / with_io:.1f}x that"
    )
    return 0 if ratio <= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
