"""A run whose first model call waited for litellm's import says so in its run log."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest

from squad.app import App
from squad.model import ChatModel, LiteLLMModel, ModelEvent
from squad.model.litellm_load import ClientLoader, load_litellm
from squad.model.testing import FREE_PRICES, OpenAIStubServer
from squad.runtime.runlog import read_events, run_log_path
from squad.spec.loader import squad_from_text
from squad.spec.models import ModelSpec


def test_the_wait_for_the_model_client_is_logged_once_per_run(
    app: App, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("STUB_KEY", "stub-key")
    litellm = load_litellm()
    release = threading.Event()

    def slow_import() -> Any:
        assert release.wait(10)
        return litellm

    loader = ClientLoader(slow_import)

    class Release:
        def waiting(self) -> None:
            release.set()  # the first use is waiting: let the import finish

        def waited(self, seconds: float) -> None:
            pass

    loader.start(Release())

    def models(spec: ModelSpec, on_event: Callable[[ModelEvent], None]) -> ChatModel:
        return LiteLLMModel(spec, on_event=on_event, loader=loader)

    with OpenAIStubServer() as stub:
        spec = squad_from_text(
            "name: waiting\n"
            f"model: {{name: openai/stub, api_base: '{stub.url}', api_key_env: STUB_KEY, "
            f"{FREE_PRICES}}}\n"
            "memory: {enabled: false}\n"
            "agents: [{id: a, role: Does things}]\n"
            "tasks:\n  - {id: one, description: Do one., agent: a}\n"
            "  - {id: two, description: Do two., agent: a, depends_on: [one]}\n",
            source="test.yaml",
        )
        workspace = app.squads.create(spec).path
        result = app.runner(model_factory=models).run(spec, workspace)

    assert result.succeeded, result.error
    log = read_events(run_log_path(workspace, result.run_id))
    waits = [e for e in log if e["event"] == "model_client_wait"]
    assert len(waits) == 1  # two calls, one wait
    assert waits[0]["model"] == "openai/stub" and waits[0]["wait_s"] >= 0
    first_call = next(i for i, e in enumerate(log) if e["event"] == "model_call")
    assert log.index(waits[0]) < first_call
