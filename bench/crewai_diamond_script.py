"""The CrewAI half of ``bench.crewai_diamond``: run by CrewAI's own interpreter, not squad's.

``python bench/crewai_diamond_script.py URL UNEVEN`` builds the diamond of
``bench.parallel_bench`` (``start`` -> ``b1``..``b4``, each taking ``start`` as context ->
``finish``, taking the four) as six tasks in a ``Crew(process=sequential)``, on CrewAI's own
``LLM`` pointed at the OpenAI-compatible stub server at URL (``openai/stub`` with a custom base
URL routes to CrewAI's native OpenAI provider: the ``openai`` SDK's chat completions over real
HTTP, no litellm). It builds the crew in these modes:

- ``sequential``: the six tasks one after another, as CrewAI's sequential process runs them;
- ``async``: the same, with ``async_execution=True`` on the four middle tasks, CrewAI's own
  parallelism (each async task runs in a thread of its own until the next synchronous task,
  ``finish``, waits for them);
- ``uneven-sequential`` and ``uneven-async``: the uneven diamond UNEVEN describes as JSON,
  ``{"tasks": [{"id", "description", "context": [ids]}, ...], "async": [ids]}`` (tasks in
  CrewAI's order; ``async`` the ones with ``async_execution=True`` in ``uneven-async``). The
  caller, ``bench.crewai_diamond``, chooses that order and says why.

Each task has an agent of its own (same role, goal and LLM): CrewAI keeps one executor per
agent and mutates it for each task, so one agent shared by four concurrent tasks would race.

It kicks off one crew of each mode to warm up and prints ``{"version", "async_error",
"uneven_async_error"}`` (each error null when that async mode works, else why it does not).
Then, for each mode name read from stdin, it times one kickoff on a freshly built crew
(construction timed apart) and prints one JSON line: ``{"mode", "build_s", "kickoff_s",
"network_attempts"}``. The caller counts the model calls at the stub server.

Memory, tools, delegation, telemetry and tracing are off, and every socket connect or DNS
lookup other than to 127.0.0.1 is refused and counted, so a run that needed the network
fails instead of quietly reaching it.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import sys
import time
from typing import Any

OFFLINE_ENV = {
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    "LITELLM_OFFLINE_MODE": "true",
    "CREWAI_DISABLE_TELEMETRY": "true",
    "OTEL_SDK_DISABLED": "true",
    "CREWAI_TRACING_ENABLED": "false",
}
LOOPBACK = ("127.0.0.1", "localhost")
MIDDLE = ("b1", "b2", "b3", "b4")
EXPECTED = "task is complete"  # in the stub's answer, so in the crew's final output

network_attempts: list[str] = []
_connect = socket.socket.connect
_getaddrinfo = socket.getaddrinfo


def _guarded_connect(sock: socket.socket, address: Any) -> None:
    if isinstance(address, tuple) and address[0] in LOOPBACK:
        return _connect(sock, address)
    network_attempts.append(f"connect {address!r}")
    raise OSError(f"network is off in this benchmark: connect to {address!r} refused")


def _guarded_lookup(host: Any, *args: Any, **kwargs: Any) -> Any:
    if host in LOOPBACK:
        return _getaddrinfo(host, *args, **kwargs)
    network_attempts.append(f"getaddrinfo {host!r}")
    raise socket.gaierror(f"network is off in this benchmark: lookup of {host!r} refused")


def go_offline() -> None:
    for name in ("OPENAI_BASE_URL", "OPENAI_API_BASE", "OPENAI_API_KEY"):
        os.environ.pop(name, None)
    os.environ.update(OFFLINE_ENV)
    socket.socket.connect = _guarded_connect  # type: ignore[method-assign]
    socket.getaddrinfo = _guarded_lookup
    # BaseLLM's fallback token estimate logs a warning on every call; the estimate still runs.
    logging.getLogger("crewai.llms.base_llm").setLevel(logging.ERROR)


def main() -> int:
    url, uneven = sys.argv[1], json.loads(sys.argv[2])
    go_offline()
    import crewai
    from crewai import LLM, Agent, Crew, Process, Task

    def build(mode: str) -> Any:
        # max_retries=0: a failed call fails the run, as squad's bench retries never
        llm = LLM(model="openai/stub", base_url=url, api_key="stub-key", max_retries=0)

        def task(description: str, context: list[Any], *, concurrent: bool = False) -> Any:
            agent = Agent(
                role="Worker",
                goal="Does one step",
                backstory="A worker.",
                llm=llm,
                tools=[],
                memory=False,
                allow_delegation=False,
                verbose=False,
            )
            return Task(
                description=description,
                expected_output="A short note.",
                agent=agent,
                context=context,
                async_execution=concurrent,
            )

        if mode.startswith("uneven-"):
            concurrent = set(uneven["async"]) if mode == "uneven-async" else set()
            built: dict[str, Any] = {}
            for step in uneven["tasks"]:
                context = [built[dep] for dep in step["context"]]
                concurrently = step["id"] in concurrent
                built[step["id"]] = task(step["description"], context, concurrent=concurrently)
            tasks = list(built.values())
        else:
            start = task("Do step start.", [])
            middle = [
                task(f"Do step {step}.", [start], concurrent=mode == "async") for step in MIDDLE
            ]
            tasks = [start, *middle, task("Do step finish.", middle)]
        return Crew(
            agents=[t.agent for t in tasks],
            tasks=tasks,
            process=Process.sequential,
            memory=False,
            verbose=False,
            tracing=False,
        )

    def kickoff(mode: str) -> tuple[float, float]:
        started = time.perf_counter()
        crew = build(mode)
        built = time.perf_counter()
        output = crew.kickoff()
        done = time.perf_counter()
        if EXPECTED not in str(output):
            raise RuntimeError(f"unexpected crew output {str(output)!r}")
        return built - started, done - built

    def warm(mode: str) -> str | None:
        """Why ``mode`` does not work, or None once one kickoff of it has."""
        try:
            kickoff(mode)
        except Exception as error:  # noqa: BLE001 - reported to the caller, who skips the mode
            return f"{type(error).__name__}: {error}"
        return None

    kickoff("sequential")  # warm: imports, pydantic schemas, the HTTP client, the SQLite file
    hello = {
        "version": crewai.__version__,
        "async_error": warm("async"),
        "uneven_async_error": warm("uneven-async"),
    }
    print(json.dumps(hello), flush=True)
    for line in sys.stdin:
        mode = line.strip()
        build_s, kickoff_s = kickoff(mode)
        batch = {
            "mode": mode,
            "build_s": build_s,
            "kickoff_s": kickoff_s,
            "network_attempts": network_attempts,
        }
        print(json.dumps(batch), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
