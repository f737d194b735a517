"""The CrewAI half of ``bench.crewai_compare``: run by CrewAI's own interpreter, not squad's.

``python bench/crewai_script.py`` builds three agents and three chained tasks in a sequential
``Crew`` on a zero-latency ``BaseLLM``, kicks off one crew to warm up and prints
``{"version": ...}``. Then, for each number N read from stdin, it times N kickoffs (each on a
freshly built crew, construction timed apart) and prints one JSON line:
``{"build_s", "kickoff_s", "llm_calls", "network_attempts"}``, the last two counted since
start. Batches on demand let the caller interleave them with squad's runs.

Telemetry and tracing are switched off through the environment before crewai is imported,
and every socket connect or DNS lookup is refused and counted, so a run that needed the
network fails instead of quietly reaching it.
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
ANSWER = "Thought: I now know the final answer\nFinal Answer: Done: the task is complete."

network_attempts: list[str] = []


def _refuse_connect(sock: socket.socket, address: Any) -> None:
    network_attempts.append(f"connect {address!r}")
    raise OSError(f"network is off in this benchmark: connect to {address!r} refused")


def _refuse_lookup(host: Any, *args: Any, **kwargs: Any) -> Any:
    network_attempts.append(f"getaddrinfo {host!r}")
    raise socket.gaierror(f"network is off in this benchmark: lookup of {host!r} refused")


def go_offline() -> None:
    os.environ.update(OFFLINE_ENV)
    socket.socket.connect = _refuse_connect  # type: ignore[method-assign, assignment]
    socket.getaddrinfo = _refuse_lookup
    # BaseLLM's fallback token estimate logs a warning on every call; the estimate still runs.
    logging.getLogger("crewai.llms.base_llm").setLevel(logging.ERROR)


def main() -> int:
    go_offline()
    import crewai
    from crewai import Agent, Crew, Process, Task
    from crewai.llms.base_llm import BaseLLM

    calls = 0

    class InstantLLM(BaseLLM):
        """A zero-latency LLM: answers every call at once in the ReAct final-answer form."""

        def call(
            self,
            messages: Any,
            tools: Any = None,
            callbacks: Any = None,
            available_functions: Any = None,
            from_task: Any = None,
            from_agent: Any = None,
            response_model: Any = None,
        ) -> str:
            nonlocal calls
            calls += 1
            return ANSWER

    def build() -> Any:
        llm = InstantLLM(model="instant")
        agents = [
            Agent(
                role=f"Worker {i}",
                goal="Does the work",
                backstory="A worker.",
                llm=llm,
                tools=[],
                memory=False,
                allow_delegation=False,
                verbose=False,
            )
            for i in range(3)
        ]
        tasks: list[Any] = []
        for i, agent in enumerate(agents):
            tasks.append(
                Task(
                    description=f"Step {i} of the work.",
                    expected_output="A short note.",
                    agent=agent,
                    context=tasks[-1:] or None,
                )
            )
        return Crew(
            agents=agents,
            tasks=tasks,
            process=Process.sequential,
            memory=False,
            verbose=False,
            tracing=False,
        )

    build().kickoff()  # warm: imports, pydantic schemas, the task-output SQLite file
    print(json.dumps({"version": crewai.__version__}), flush=True)
    for line in sys.stdin:
        build_s: list[float] = []
        kickoff_s: list[float] = []
        for _ in range(int(line)):
            start = time.perf_counter()
            crew = build()
            built = time.perf_counter()
            output = crew.kickoff()
            build_s.append(built - start)
            kickoff_s.append(time.perf_counter() - built)
            if "task is complete" not in str(output):
                raise RuntimeError(f"unexpected crew output {str(output)!r}")
        batch = {
            "build_s": build_s,
            "kickoff_s": kickoff_s,
            "llm_calls": calls,
            "network_attempts": network_attempts,
        }
        print(json.dumps(batch), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
