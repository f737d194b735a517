"""The real-model suite's server: SmolLM2-135M-Instruct behind llama.cpp's OpenAI-compatible
HTTP server, on 127.0.0.1, once per session.

Opt-in: the tests are skipped unless ``SQUAD_REALMODEL=1`` is set or the ``realmodel`` marker
is selected (``-m realmodel``); ``make test-realmodel`` does both. The server runs from its own
virtual environment (``scripts/realmodel_env.sh`` builds it once, then it is reused; set
``SQUAD_REALMODEL_VENV`` to use another), so squad's own environment never holds llama.cpp.
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import REPO

ENV_SCRIPT = REPO / "scripts" / "realmodel_env.sh"
START_TIMEOUT_S = 180.0
CONTEXT_TOKENS = 8192
"""SmolLM2's trained context; llama.cpp's default of 2048 is too small for an agent's prompt."""


def _enabled(config: pytest.Config) -> bool:
    if os.environ.get("SQUAD_REALMODEL") == "1":
        return True
    expression = str(config.getoption("markexpr", "") or "")
    return "realmodel" in expression and "not realmodel" not in expression


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if _enabled(config):
        return
    skip = pytest.mark.skip(
        reason="the real-model suite: set SQUAD_REALMODEL=1 (make test-realmodel)"
    )
    for item in items:
        if item.get_closest_marker("realmodel") is not None:
            item.add_marker(skip)


@dataclass(frozen=True)
class RealModel:
    """The running server and what a squad YAML needs to reach it."""

    port: int
    model_path: Path
    log: Path

    @property
    def api_base(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def model_yaml(self, **extra: object) -> str:
        """The squad's ``model:`` mapping (YAML flow style): keyless, priced at $0."""
        fields = {
            "name": "openai/smollm2",
            "api_base": self.api_base,
            "cost_per_1k_input": 0,
            "cost_per_1k_output": 0,
            **extra,
        }
        return "{" + ", ".join(f"{k}: {v}" for k, v in fields.items()) + "}"


def _environment() -> tuple[Path, Path]:
    """The server venv's python and the GGUF file, building the venv if it is not there."""
    venv = Path(os.environ.get("SQUAD_REALMODEL_VENV", REPO / ".venv-realmodel"))
    built = subprocess.run(
        ["bash", str(ENV_SCRIPT)],
        cwd=REPO,
        env={**os.environ, "SQUAD_REALMODEL_VENV": str(venv)},
        capture_output=True,
        text=True,
        timeout=3600,
    )
    if built.returncode != 0:
        pytest.fail(f"{ENV_SCRIPT.name} failed ({built.returncode}):\n{built.stderr[-3000:]}")
    model = Path(built.stdout.strip().splitlines()[-1])
    if not model.is_file():
        pytest.fail(f"{ENV_SCRIPT.name} printed {str(model)!r}, which is not a file")
    return venv / "bin" / "python", model


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _wait_until_serving(process: subprocess.Popen[bytes], port: int, log: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(
                f"the llama.cpp server exited ({process.returncode}):\n{log.read_text()[-3000:]}"
            )
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=5) as r:
                if r.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(0.25)
    pytest.fail(f"the llama.cpp server did not answer in {START_TIMEOUT_S:.0f} s")


@pytest.fixture(scope="session")
def real_model(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RealModel]:
    """llama.cpp serving SmolLM2 on a free loopback port, for the whole session."""
    python, model = _environment()
    port = _free_port()
    threads = os.cpu_count() or 1
    log = tmp_path_factory.mktemp("llama-server") / "server.log"
    command = [
        str(python),
        "-m",
        "llama_cpp.server",
        "--model",
        str(model),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--n_ctx",
        str(CONTEXT_TOKENS),
        # llama.cpp's default is half the cores: on two, one thread.
        "--n_threads",
        str(threads),
        "--n_threads_batch",
        str(threads),
    ]
    with log.open("wb") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)
    try:
        _wait_until_serving(process, port, log)
        yield RealModel(port, model, log)
    finally:
        process.terminate()
        try:
            process.wait(15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(15)
