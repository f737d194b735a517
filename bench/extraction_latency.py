"""Chat reply latency with the background extractor on (interval 6) against off, same run.

``python -m bench.extraction_latency`` chats 200 turns with one agent through
:class:`~squad.chat.session.ChatSession` (system prompt with memory, store writes, spend) on a
zero-latency model, once with extraction off and once on, and compares the 99th percentile
of reply times. "On" runs the model path (the gate, then the instant model's JSON answer) and
the offline extractor, both writing to memory.md and Layer A. Target: p99 ratio at most 1.05.
Also: offline extraction throughput, in messages per second.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from datetime import date

from bench.support import InstantModel, temp_settings

TURNS = 200
TARGET = 1.05
LINES = [
    "In this repo the API listens on port {n}.",
    "I prefer short answers with code first.",
    "Can you check the build?",
    "We decided to deploy every Friday.",
    "Thanks, that helps.",
    "The staging URL is https://staging{n}.example.dev.",
    "우리 서비스는 {n} 포트를 써요.",
    "What's next on the list?",
]
SQUAD = """\
name: bench
memory: {{extract: {enabled}, trigger_interval: 6}}
agents:
  - {{id: worker, role: Does the work, model: instant/x}}
tasks:
  - {{id: t, description: Work., agent: worker}}
"""
FACTS = json.dumps(
    {"facts": [{"text": "The API listens on port 8080", "scope": "project", "subject": "port"}]}
)


def chat_latencies(enabled: bool, turns: int = TURNS) -> list[float]:
    from squad.app import App
    from squad.chat.session import ChatSession
    from squad.spec.loader import squad_from_text

    with temp_settings() as settings:
        spec = squad_from_text(SQUAD.format(enabled=str(enabled).lower()))
        with App.open(settings, model_factory=lambda _s, _e: InstantModel("Noted.", FACTS)) as app:
            app.squads.create(spec)
            chat = ChatSession.open(app.runner(), "bench", "worker")
            chat.say("Hello.")  # warm: tokenizer, imports, namespace
            samples = []
            for i in range(turns):
                line = LINES[i % len(LINES)].format(n=8000 + i)
                start = time.perf_counter()
                chat.say(line)
                samples.append(time.perf_counter() - start)
    return samples


def p99(samples: list[float]) -> float:
    return statistics.quantiles(samples, n=100)[98]


def offline_throughput(messages: int = 2000) -> float:
    from squad.extraction.candidates import ConversationMessage
    from squad.extraction.extract import extract_offline

    batch = [
        ConversationMessage(
            i, "user" if i % 2 == 0 else "assistant", LINES[i % len(LINES)].format(n=i)
        )
        for i in range(messages)
    ]
    extract_offline(batch[:50], date(2026, 11, 29))  # warm: weights
    start = time.perf_counter()
    extract_offline(batch, date(2026, 11, 29))
    return messages / (time.perf_counter() - start)


def measure(repeat: int = 5) -> tuple[float, float]:
    """Median over ``repeat`` rounds of the p99 reply time, extraction (off, on)."""
    off, on = [], []
    for _ in range(repeat):
        off.append(p99(chat_latencies(False)))
        on.append(p99(chat_latencies(True)))
    return statistics.median(off), statistics.median(on)


def main() -> int:
    off, on = measure()
    if "--json" in sys.argv:
        print(json.dumps({"off_s": off, "on_s": on, "offline_per_s": offline_throughput()}))
        return 0
    ratio = on / off
    flag = "ok" if ratio <= TARGET else "OVER"
    print(
        f"p99 reply over {TURNS} turns: extractor on {on * 1000:.1f} ms, off {off * 1000:.1f} ms,"
        f" ratio {ratio:.2f}x (target <= {TARGET}x)  {flag}"
    )
    print(f"offline extraction: {offline_throughput():,.0f} messages/s")
    return 0 if ratio <= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
