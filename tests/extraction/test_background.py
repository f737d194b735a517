"""The trigger and the worker: chat and runs queue passes every N replies, never waiting."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from squad.app import App
from squad.chat.session import ChatSession
from squad.extraction.background import BackgroundExtractor, Worker
from squad.extraction.job import AgentExtractor, PassControl
from squad.memory.service import MemoryService
from squad.model import LiteLLMModel
from squad.model.stub_answers import Behaviour, answer
from squad.model.testing import OpenAIStubServer
from squad.settings import Settings
from squad.spec.loader import squad_from_text
from squad.spec.models import ModelSpec
from tests.extraction.conftest import World
from tests.support.waiting import wait_for

MakeWorld = Callable[..., World]

FACTS = json.dumps({"facts": [{"text": "The API listens on port 8080", "scope": "project"}]})


def test_a_pass_runs_only_once_the_interval_is_reached(make_world: MakeWorld) -> None:
    world = make_world(interval=3)
    worker = BackgroundExtractor(world.extractor())
    try:
        for _ in range(2):
            world.talk("In this repo the API listens on port 8080.")
            worker.notify(world.ctx)
        assert worker.drain(20)
        assert world.manager.store.extraction.runs("demo") == []
        world.talk("We decided to deploy every Friday.")
        worker.notify(world.ctx)
        assert worker.drain(20)
        [run] = world.manager.store.extraction.runs("demo")
        assert run.status == "done"
    finally:
        worker.close()


def test_replies_counted_by_an_earlier_process_are_not_lost(make_world: MakeWorld) -> None:
    world = make_world(interval=3)
    world.talk("In this repo the API listens on port 8080.", "OK then.", "Fine.")
    worker = BackgroundExtractor(world.extractor())  # a new process: it has counted nothing
    try:
        worker.notify(world.ctx)  # its first notify checks the store: three replies wait
        assert worker.drain(20)
        assert len(world.manager.store.extraction.runs("demo")) == 1
    finally:
        worker.close()


def test_a_failing_pass_is_reported_and_the_worker_lives_on(make_world: MakeWorld) -> None:
    world = make_world(interval=1)
    errors: list[BaseException] = []

    def broken(ctx: Any) -> Any:
        raise RuntimeError("no model today")

    worker = BackgroundExtractor(
        AgentExtractor(world.memory, broken), on_error=lambda ctx, exc: errors.append(exc)
    )
    try:
        world.talk("The API listens on port 8080 in this repo.")
        worker.notify(world.ctx)
        assert worker.drain(20)
        assert [str(e) for e in errors] == ["no model today"]
        assert not world.manager.store.conversation.watermark("demo", "planner").in_flight
    finally:
        worker.close()


CHAT_YAML = """\
name: demo
goal: Ship it.
memory: {{trigger_interval: 2}}
model: {{name: openai/stub, api_base: '{url}', api_key_env: STUB_KEY,
  cost_per_1k_input: 0, cost_per_1k_output: 0}}
agents:
  - {{id: writer, role: Writes the pages}}
tasks:
  - {{id: draft, description: Write the guide., agent: writer}}
"""


@pytest.fixture
def gated_stub(
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[tuple[OpenAIStubServer, threading.Event]]:
    """Chat replies at once; extraction requests wait until the test opens the gate."""
    monkeypatch.setenv("STUB_KEY", "stub-key")
    gate = threading.Event()

    def handle(body: Any) -> Behaviour:
        if body.get("response_format"):
            gate.wait(30)
            return answer(FACTS)
        return answer("Noted.")

    with OpenAIStubServer(handler=handle) as server:
        yield server, gate
    gate.set()


def test_chat_replies_while_an_extraction_is_still_in_flight(
    settings: Settings,
    gated_stub: tuple[OpenAIStubServer, threading.Event],
    app: App,
) -> None:
    stub, gate = gated_stub
    manager = app.squads
    manager.create(squad_from_text(CHAT_YAML.format(url=stub.url), source="demo.yaml"))
    runner = app.runner()
    chat = ChatSession.open(runner, "demo", "writer")
    chat.say("In this repo the API listens on port 8080.")
    chat.say("We decided to deploy every Friday.")  # the second reply: a pass starts
    conversation = manager.store.conversation
    wait_for(lambda: conversation.watermark("demo", "writer").in_flight, "a pass in flight")
    # The extraction is blocked inside its model call, and chat goes on regardless.
    assert chat.say("And the docs live in docs/.") == "Noted."
    assert chat.say("Thanks!") == "Noted."
    assert conversation.watermark("demo", "writer").in_flight
    gate.set()
    app.drain_extraction()
    memory = MemoryService(settings, manager.store)
    ctx = chat.ctx
    assert "The API listens on port 8080" in memory.memory_file(ctx).read()
    # The replies that came during the pass were picked up by a second pass.
    wm = conversation.watermark("demo", "writer")
    assert wm.last_processed_seq == 8 and not wm.in_flight


RUN_YAML = """\
name: demo
goal: Ship it.
memory: {trigger_interval: 1}
agents:
  - {id: planner, role: Plans the work}
tasks:
  - {id: outline, description: "Outline the guide; the docs use MkDocs.", agent: planner}
"""


def test_a_run_triggers_extraction_for_its_agents(settings: Settings, app: App) -> None:
    manager = app.squads
    spec = squad_from_text(RUN_YAML, source="demo.yaml")
    workspace = manager.create(spec).path
    runner = app.runner()
    result = runner.run(spec, workspace)
    app.drain_extraction()
    assert result.succeeded
    [run] = manager.store.extraction.runs("demo", "planner")
    assert (run.status, run.extractor) == ("done", "offline")
    assert manager.store.conversation.watermark("demo", "planner").last_processed_seq >= 2


def test_the_offline_model_gets_the_offline_extractor_without_a_call() -> None:
    from squad.extraction.models import ExtractionModels

    made: list[ModelSpec] = []

    def factory(spec: ModelSpec, on_event: Any) -> LiteLLMModel:
        made.append(spec)
        return LiteLLMModel(spec)

    models = ExtractionModels(factory)
    assert models.for_spec(ModelSpec(name="offline")) is None
    assert models.for_spec(ModelSpec(name="openai/gpt-4o-mini")) is models.for_spec(
        ModelSpec(name="openai/gpt-4o-mini")
    )
    assert [s.name for s in made] == ["openai/gpt-4o-mini"]


class Ticks:
    """A monotonic clock the test moves."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_queued_pass_waits_for_a_quiet_moment_or_its_deadline(make_world: MakeWorld) -> None:
    world = make_world(interval=1)
    ticks = Ticks()
    worker = BackgroundExtractor(world.extractor(), quiet_s=5, max_delay_s=60, monotonic=ticks)
    try:
        world.talk("In this repo the API listens on port 8080.")
        worker.notify(world.ctx)  # replies keep coming: the pass waits
        time.sleep(0.3)
        assert world.manager.store.extraction.runs("demo") == []
        ticks.now += 61  # past its deadline; the next reply wakes the worker
        world.talk("OK.")
        worker.notify(world.ctx)
        wait_for(lambda: len(world.manager.store.extraction.runs("demo")) == 1, "the pass recorded")
    finally:
        worker.close()


def test_drain_starts_waiting_passes_at_once(make_world: MakeWorld) -> None:
    world = make_world(interval=1)
    worker = BackgroundExtractor(world.extractor(), quiet_s=3600, max_delay_s=3600)
    try:
        world.talk("In this repo the API listens on port 8080.")
        worker.notify(world.ctx)
        assert worker.drain(20)
        assert len(world.manager.store.extraction.runs("demo")) == 1
    finally:
        worker.close()


def test_a_pass_still_in_its_model_call_at_close_releases_its_claim_for_the_next_process(
    make_world: MakeWorld, gated_stub: tuple[OpenAIStubServer, threading.Event]
) -> None:
    # `squad chat -m` six times on a slow model: the sixth process's pass is still waiting
    # for the model when the process must end. It used to keep the claim (in_flight) for
    # STALE_CLAIM, so no later pass ran and nothing was ever extracted or recorded.
    stub, gate = gated_stub
    world = make_world(interval=2)
    world.talk("In this repo the API listens on port 8080.", "We deploy every Friday.")
    conversation = world.manager.store.conversation
    first = BackgroundExtractor(world.extractor(stub.model()))
    first.notify(world.ctx)
    wait_for(lambda: len(stub.requests) == 1, "the model call")  # the pass is inside its model call
    assert conversation.watermark("demo", "planner").in_flight

    assert not first.close(timeout=0.2)
    wm = conversation.watermark("demo", "planner")
    assert (wm.in_flight, wm.last_processed_seq) == (False, 0)

    gate.set()  # the abandoned call returns: the given-up pass writes nothing
    for thread in threading.enumerate():
        if isinstance(thread, Worker) and thread.owner is first:
            thread.join(20)
    assert world.manager.store.extraction.runs("demo") == []
    second = BackgroundExtractor(world.extractor(stub.model()))  # the next process
    try:
        second.notify(world.ctx)
        assert second.drain(20)
    finally:
        second.close()
    [run] = world.manager.store.extraction.runs("demo", "planner")
    assert (run.status, run.extractor) == ("done", "model")
    assert world.memory_md().count("The API listens on port 8080") == 1
    wm = conversation.watermark("demo", "planner")
    assert (wm.in_flight, wm.last_processed_seq) == (False, 4)


def test_a_pass_that_had_not_begun_when_close_gave_up_never_claims(
    make_world: MakeWorld,
) -> None:
    world = make_world(interval=1)
    world.talk("In this repo the API listens on port 8080.")
    control = PassControl()
    control.give_up(world.memory)
    assert world.extractor().run(world.ctx, control=control) == []
    assert world.manager.store.extraction.runs("demo") == []
    assert not world.manager.store.conversation.watermark("demo", "planner").in_flight
