"""Tokens per second on a real local model: through squad's model seam against the same
requests sent straight to llama.cpp's OpenAI-compatible server (SmolLM2-135M, the real-model
suite's setup). Target: at least 0.95x.

Opt-in, not part of ``make bench``: it needs the real-model environment, which
``scripts/realmodel_env.sh`` builds once (about ten minutes of C++ on two cores). Both ways
are warmed up (llama.cpp then has the prompt in its prefix cache for both) and alternate, so
a change of machine load lands on both. ``python -m bench.realmodel_bench [--json]``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROUNDS = 8
MAX_TOKENS = 128
PROMPT = "Describe a cup of green tea."
TARGET = 0.95


def _server() -> tuple[subprocess.Popen[bytes], str]:
    from tests.realmodel.conftest import (
        CONTEXT_TOKENS,
        _environment,
        _free_port,
        _wait_until_serving,
    )

    python, model = _environment()
    port = _free_port()
    threads = str(os.cpu_count() or 1)
    log = Path(tempfile.mkdtemp()) / "server.log"
    command = [
        str(python), "-m", "llama_cpp.server", "--model", str(model), "--host", "127.0.0.1",
        "--port", str(port), "--n_ctx", str(CONTEXT_TOKENS), "--n_threads", threads,
        "--n_threads_batch", threads,
    ]  # fmt: skip
    with log.open("wb") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)
    _wait_until_serving(process, port, log)
    return process, f"http://127.0.0.1:{port}/v1"


def measure() -> dict[str, Any]:
    import httpx

    from squad.model import LiteLLMModel
    from squad.model.types import Message
    from squad.spec.models import ModelSpec

    process, api_base = _server()
    try:
        body = {
            "model": "smollm2",
            "messages": [{"role": "user", "content": PROMPT}],
            "max_tokens": MAX_TOKENS,
            "temperature": 0,
        }
        model = LiteLLMModel(
            ModelSpec(
                name="openai/smollm2",
                api_base=api_base,
                max_tokens=MAX_TOKENS,
                temperature=0,
                cost_per_1k_input=0,
                cost_per_1k_output=0,
            )
        )

        def direct() -> tuple[float, int]:
            started = time.perf_counter()
            answer = httpx.post(f"{api_base}/chat/completions", json=body, timeout=300)
            return time.perf_counter() - started, int(answer.json()["usage"]["completion_tokens"])

        def through() -> tuple[float, int]:
            started = time.perf_counter()
            reply = model.complete([Message.user(PROMPT)])
            return time.perf_counter() - started, reply.usage.completion_tokens

        direct(), through()
        totals = {"direct": [0.0, 0], "squad": [0.0, 0]}
        for round_ in range(ROUNDS):
            ways = [("direct", direct), ("squad", through)]
            for name, way in ways if round_ % 2 == 0 else ways[::-1]:
                seconds, tokens = way()
                totals[name][0] += seconds
                totals[name][1] += tokens
    finally:
        process.terminate()
        process.wait(30)
    direct_tps = totals["direct"][1] / totals["direct"][0]
    squad_tps = totals["squad"][1] / totals["squad"][0]
    return {
        "rounds": ROUNDS,
        "direct_tokens_per_s": round(direct_tps, 2),
        "squad_tokens_per_s": round(squad_tps, 2),
        "ratio": round(squad_tps / direct_tps, 3),
        "target": TARGET,
    }


def main() -> int:
    figures = measure()
    if "--json" in sys.argv:
        print(json.dumps(figures))
        return 0
    flag = "ok" if figures["ratio"] >= TARGET else "UNDER"
    print(
        f"tokens/s: llama.cpp directly {figures['direct_tokens_per_s']}, through squad "
        f"{figures['squad_tokens_per_s']}: {figures['ratio']:.2f}x (target >= {TARGET}x)  {flag}"
    )
    return 0 if figures["ratio"] >= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
