"""Fixtures for the model seam: a stub OpenAI server, a recording sleep, leak and network guards."""

from __future__ import annotations

import ipaddress
import os
import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from squad.model import LiteLLMModel, ModelEvent, RetryPolicy
from squad.model.litellm_load import CLIENT, load_litellm
from squad.model.testing import OpenAIStubServer
from squad.spec.models import ModelSpec

# litellm's own process-wide pool for its logging callbacks: created on the first call and
# kept for the life of the process, like its HTTP client cache. Not ours to close.
LITELLM_POOL = "litellm-logging"


def _open_sockets() -> set[str]:
    fds = Path("/proc/self/fd")
    out = set()
    for fd in fds.iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:"):
            out.add(f"{fd.name}:{target}")
    return out


def _describe_sockets(fds: set[str]) -> list[str]:
    """Each socket with its /proc/net line (kind, addresses), to say whose it is."""
    out = []
    for fd in sorted(fds):
        inode = fd.split("[", 1)[1].rstrip("]")
        found = [
            f"{table}: {line.strip()}"
            for table in ("tcp", "tcp6", "udp", "unix")
            if Path(f"/proc/net/{table}").is_file()
            for line in Path(f"/proc/net/{table}").read_text().splitlines()
            if f" {inode} " in f" {line} "
        ]
        out.append(f"{fd} {found or '(not in /proc/net)'}")
    return out


def _our_threads() -> set[threading.Thread]:
    return {t for t in threading.enumerate() if not t.name.startswith(LITELLM_POOL)}


@pytest.fixture(autouse=True)
def no_leaks() -> Iterator[None]:
    """Every test leaves no thread and (on Linux) no socket behind."""
    threads = _our_threads()
    sockets = _open_sockets() if Path("/proc/self/fd").is_dir() else None
    yield
    deadline = time.monotonic() + 2
    while _our_threads() - threads and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not _our_threads() - threads, f"threads left running: {_our_threads() - threads}"
    if sockets is not None:
        # Like threads, a socket may take a moment to go: one a library's own worker (litellm's
        # logging pool) is still closing. One still open after the grace period is a leak.
        while _open_sockets() - sockets and time.monotonic() < deadline:
            time.sleep(0.01)
        extra = _open_sockets() - sockets
        assert not extra, f"sockets left open: {_describe_sockets(extra)}"


@pytest.fixture(autouse=True)
def loopback_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """No test reaches the internet: IP connections go to loopback addresses or fail."""
    real_connect = socket.socket.connect

    def connect(self: socket.socket, address: Any) -> None:
        if self.family in (socket.AF_INET, socket.AF_INET6):
            host = address[0]
            if host != "localhost" and not ipaddress.ip_address(host).is_loopback:
                raise OSError(f"tests may only talk to 127.0.0.1, not {host!r}")
        real_connect(self, address)

    monkeypatch.setattr(socket.socket, "connect", connect)


@pytest.fixture
def server() -> Iterator[OpenAIStubServer]:
    with OpenAIStubServer() as stub:
        yield stub


class Recorder:
    """Collects what the seam hands to ``sleep`` and ``on_event``."""

    def __init__(self) -> None:
        self.delays: list[float] = []
        self.events: list[ModelEvent] = []

    def sleep(self, seconds: float) -> None:
        self.delays.append(seconds)

    @property
    def kinds(self) -> list[str]:
        return [e.kind for e in self.events]


@pytest.fixture
def recorder() -> Recorder:
    """A recorder for a seam whose client is loaded: the first call of a test process would
    also report its wait for litellm's import (pinned in test_client_loader), once."""
    load_litellm()
    CLIENT.take_wait()
    return Recorder()


MakeModel = Callable[..., LiteLLMModel]


@pytest.fixture
def make_model(server: OpenAIStubServer, recorder: Recorder) -> MakeModel:
    """A seam pointed at the stub, deterministic back-off, sleeps and events recorded."""

    def make(
        name: str = "openai/gpt-4o-mini",
        *,
        retry: RetryPolicy | None = None,
        environ: dict[str, str] | None = None,
        **spec: Any,
    ) -> LiteLLMModel:
        spec.setdefault("api_base", server.url)
        spec.setdefault("api_key_env", "STUB_KEY")
        return LiteLLMModel(
            ModelSpec(name=name, **spec),
            retry=retry or RetryPolicy(jitter=0),
            on_event=recorder.events.append,
            sleep=recorder.sleep,
            environ={"STUB_KEY": "x"} if environ is None else environ,
        )

    return make
