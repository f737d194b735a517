"""litellm's import started ahead in the background: who waits, what they are told, what they
get when it failed. A gated importer stands in for the seconds litellm takes."""

from __future__ import annotations

import io
import os
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from squad.cli.model_client import LOADING, LoadingNotice
from squad.cli.output import Output
from squad.model import LiteLLMModel, ModelEvent
from squad.model.factory import model_for, preload_client, squad_models
from squad.model.litellm_load import ClientLoader, load_litellm
from squad.model.testing import OpenAIStubServer
from squad.model.types import Message
from squad.spec.loader import squad_from_text
from squad.spec.models import ModelSpec


class Gate:
    """An importer that blocks until released, then returns ``module`` or raises ``error``."""

    def __init__(self, module: Any = None, error: BaseException | None = None) -> None:
        self.module = module if module is not None else object()
        self.error = error
        self.entered = threading.Event()
        self.release = threading.Event()
        self.calls = 0

    def __call__(self) -> Any:
        self.calls += 1
        self.entered.set()
        assert self.release.wait(10), "the test never released the import"
        if self.error is not None:
            raise self.error
        return self.module


class Heard:
    def __init__(self, on_waiting: Callable[[], None] = lambda: None) -> None:
        self.events: list[str] = []
        self.waits: list[float] = []
        self._on_waiting = on_waiting

    def waiting(self) -> None:
        self.events.append("waiting")
        self._on_waiting()

    def waited(self, seconds: float) -> None:
        self.events.append("waited")
        self.waits.append(seconds)


def in_thread(fn: Callable[[], Any]) -> tuple[threading.Thread, list[Any]]:
    outcome: list[Any] = []

    def run() -> None:
        try:
            outcome.append(fn())
        except BaseException as exc:  # noqa: BLE001 - looked at by the test
            outcome.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    return thread, outcome


def test_a_caller_waits_for_the_background_import_is_told_and_gets_its_module() -> None:
    gate = Gate()
    loader = ClientLoader(gate)
    heard = Heard(on_waiting=gate.release.set)  # released only once the caller is waiting

    assert loader.start(heard) is True
    assert gate.entered.wait(5)
    assert not loader.ready
    assert loader.load() is gate.module

    assert heard.events == ["waiting", "waited"]
    assert gate.calls == 1 and loader.ready
    assert loader.take_wait() == pytest.approx(heard.waits[0])
    assert loader.take_wait() == 0.0  # reported once


def test_a_client_imported_before_the_first_use_is_handed_out_without_a_wait() -> None:
    gate = Gate()
    gate.release.set()
    loader = ClientLoader(gate)
    heard = Heard()
    loader.start(heard)
    deadline = time.monotonic() + 5
    while not loader.ready and time.monotonic() < deadline:
        time.sleep(0.01)

    assert loader.load() is gate.module
    assert heard.events == [] and loader.take_wait() == 0.0
    assert loader.start(heard) is False and gate.calls == 1  # started once, imported once


def test_threads_that_need_the_client_together_all_wait_for_one_import() -> None:
    gate = Gate()
    loader = ClientLoader(gate)
    loader.start()
    assert gate.entered.wait(5)
    waiters = [in_thread(loader.load) for _ in range(4)]
    gate.release.set()
    for thread, _ in waiters:
        thread.join(5)

    assert [outcome for _, outcome in waiters] == [[gate.module]] * 4
    assert gate.calls == 1


def test_a_failed_background_import_is_raised_where_the_client_is_first_used() -> None:
    missing = ModuleNotFoundError("No module named 'litellm'")
    gate = Gate(error=missing)
    loader = ClientLoader(gate)
    loader.start()
    gate.release.set()

    with pytest.raises(ModuleNotFoundError, match=r"^No module named 'litellm'$") as raised:
        loader.load()
    assert raised.value is missing  # as the import raised it, not wrapped
    with pytest.raises(ModuleNotFoundError):
        loader.load()  # forgotten after it was raised: the next use imports again
    assert gate.calls == 2


def test_a_use_with_no_import_started_imports_in_the_caller() -> None:
    gate = Gate()
    gate.release.set()
    loader = ClientLoader(gate)

    assert loader.load() is gate.module
    assert gate.calls == 1 and loader.take_wait() > 0.0
    assert not [t for t in threading.enumerate() if t.name == "squad-model-client"]


def test_the_offline_model_and_test_factories_start_no_import() -> None:
    offline = squad_from_text(
        "name: quiet\nagents: [{id: a, role: r}]\ntasks: [{id: t, description: d, agent: a}]\n"
    )
    real = squad_models(offline, override="openai/gpt-4o-mini")

    assert squad_models(offline) == ["offline"]
    assert preload_client(squad_models(offline)) is False
    assert preload_client(real, factory=lambda spec, on_event: model_for(spec)) is False


def test_squad_models_names_each_agents_model_or_the_squads() -> None:
    spec = squad_from_text(
        "name: mixed\nmodel: anthropic/claude-3-5-haiku-latest\nagents:\n"
        "  - {id: a, role: r}\n  - {id: b, role: r, model: openai/gpt-4o-mini}\n"
        "tasks: [{id: t, description: d, agent: a}]\n"
    )

    assert squad_models(spec) == ["anthropic/claude-3-5-haiku-latest", "openai/gpt-4o-mini"]
    assert squad_models(spec, agents=("b",)) == ["openai/gpt-4o-mini"]


def test_the_wait_is_shown_on_a_terminal() -> None:
    master, replica = os.openpty()
    with os.fdopen(replica, "w", closefd=True) as terminal:
        notice = LoadingNotice(Output(stream=terminal))
        notice.waiting()
        notice.waited(1.5)
        terminal.flush()
        shown = os.read(master, 4096).decode()
    os.close(master)

    assert LOADING in shown and shown.count(LOADING) == 1


def test_nothing_is_shown_when_stderr_is_not_a_terminal() -> None:
    stream = io.StringIO()
    notice = LoadingNotice(Output(stream=stream))
    notice.waiting()
    notice.waited(1.5)

    assert stream.getvalue() == ""


def test_a_call_that_waited_for_the_client_reports_the_wait_once(
    server: OpenAIStubServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("STUB_KEY", "stub-key")
    litellm = load_litellm()
    gate = Gate(module=litellm)
    loader = ClientLoader(gate)
    loader.start(Heard(on_waiting=gate.release.set))
    events: list[ModelEvent] = []
    spec = ModelSpec(
        name="openai/stub",
        api_base=server.url,
        api_key_env="STUB_KEY",
        cost_per_1k_input=0,
        cost_per_1k_output=0,
    )
    model = LiteLLMModel(spec, on_event=events.append, loader=loader)

    model.complete([Message.user("hello")])
    model.complete([Message.user("again")])

    loads = [e for e in events if e.kind == "load"]
    assert len(loads) == 1 and loads[0].latency_s > 0 and loads[0].model == "openai/stub"
    assert [e.kind for e in events].count("call") == 2
