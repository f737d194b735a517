"""What a turn writes: one store transaction at its end, ``running`` shown while it lasts,
``output.md`` there for every task the store says is done (:mod:`squad.runtime.executor`);
on each store backend."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from squad.app import App
from squad.manager import SquadManager
from squad.model import ChatModel, ModelEvent, model_for
from squad.model.types import Message, ModelReply, Price, TokenCallback, ToolSpec
from squad.runtime.running_notice import RunningNotices
from squad.settings import Settings
from squad.spec.models import ModelSpec
from squad.store.records import TaskStatus
from tests.conftest import BASIC_YAML


@pytest.fixture
def settings(tmp_path: Path, store_url: str) -> Settings:
    return Settings.load(
        {
            "SQUAD_HOME": str(tmp_path / "home"),
            "SQUAD_WORKSPACES": str(tmp_path / "workspaces"),
            "SQUAD_CONFIGS": str(tmp_path / "configs"),
            "SQUAD_DATABASE_URL": store_url,
        },
        cwd=tmp_path,
    )


@pytest.fixture
def manager(app: App) -> SquadManager:
    return app.squads


class _WaitsFor:
    """The offline model, except that the call whose last message mentions ``marker`` first
    waits until ``ready()`` holds (or gives up after a minute; the test then fails)."""

    def __init__(self, inner: ChatModel, marker: str, ready: Callable[[], bool]) -> None:
        self._inner = inner
        self._marker = marker
        self._ready = ready
        self.saw: list[bool] = []

    def price(self) -> Price | None:
        return self._inner.price()

    def reserve_usd(self, messages: Sequence[Message], tools: Sequence[ToolSpec]) -> float:
        return self._inner.reserve_usd(messages, tools)

    def complete(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[ToolSpec] = (),
        response_format: Mapping[str, Any] | None = None,
        timeout_s: float | None = None,
        on_token: TokenCallback | None = None,
    ) -> ModelReply:
        if self._marker in messages[-1].content:
            deadline = time.monotonic() + 60
            while not self._ready() and time.monotonic() < deadline:
                time.sleep(0.02)
            self.saw.append(self._ready())
        return self._inner.complete(
            messages,
            tools=tools,
            response_format=response_format,
            timeout_s=timeout_s,
            on_token=on_token,
        )


def test_a_lasting_turn_shows_running_in_the_store_while_its_model_works(
    app: App, manager: SquadManager, make_spec: Callable[..., Any]
) -> None:
    spec = make_spec(BASIC_YAML)
    workspace = manager.create(spec).path
    models: list[_WaitsFor] = []

    def draft_running() -> bool:
        runs = app.store.interrupted_runs("demo")  # the run under way, as a kill would leave it
        record = app.store.run_state.get_task(runs[0].id, "draft") if runs else None
        return record is not None and record.status is TaskStatus.RUNNING

    def factory(spec: ModelSpec, on_event: Callable[[ModelEvent], None]) -> ChatModel:
        models.append(_WaitsFor(model_for(spec, on_event), "Write the guide.", draft_running))
        return models[-1]

    result = app.runner(model_factory=factory).run(spec, workspace)

    assert result.succeeded
    assert any(m.saw == [True] for m in models)
    record = app.store.run_state.get_task(result.run_id, "draft")
    assert record is not None and record.status is TaskStatus.DONE
    assert record.started_at is not None and record.ended_at is not None
    assert record.started_at < record.ended_at


def test_a_quick_turn_records_its_start_with_its_outcome(
    app: App, manager: SquadManager, make_spec: Callable[..., Any]
) -> None:
    spec = make_spec(BASIC_YAML)
    workspace = manager.create(spec).path

    result = app.runner().run(spec, workspace)

    assert result.succeeded
    for task in ("outline", "draft"):
        record = app.store.run_state.get_task(result.run_id, task)
        assert record is not None and record.status is TaskStatus.DONE
        assert record.started_at is not None and record.output == f"tasks/{task}/output.md"
        assert (workspace / "tasks" / task / "output.md").read_text(encoding="utf-8").strip()


def test_a_done_task_whose_output_file_is_gone_runs_again_on_resume(
    app: App, manager: SquadManager, make_spec: Callable[..., Any]
) -> None:
    # What a power loss between the turn's commit and its output's fsync can leave: the store
    # says done, the checkpoint never came, output.md is empty. Stopped right after the
    # outline's store commit (its progress line comes after it), with the file emptied.
    spec = make_spec(BASIC_YAML)
    workspace = manager.create(spec).path
    outline = workspace / "tasks" / "outline" / "output.md"

    def lose_the_outline(line: str) -> None:
        if line == "outline: done":
            outline.write_bytes(b"")
            raise KeyboardInterrupt  # before the graph checkpoints the outline

    stopped = app.runner(progress=lose_the_outline).run(spec, workspace)
    assert stopped.status == "interrupted"
    done = app.store.run_state.get_task(stopped.run_id, "outline")
    assert done is not None and done.status is TaskStatus.DONE

    resumed = app.runner().resume(stopped.run_id)

    assert resumed.succeeded
    assert outline.read_text(encoding="utf-8").strip()


def test_a_notice_taken_before_it_is_due_is_never_shown() -> None:
    shown: list[str] = []
    notices = RunningNotices(delay=3600)

    def write(store: Any) -> None:
        """Stands for the store write."""

    notices.wait("t1", write, lambda: shown.append("t1"))

    assert notices.take("t1") is write
    assert notices.take("t1") is None
    assert shown == []


def test_a_notice_still_waiting_when_due_is_shown_once_and_not_taken_after() -> None:
    shown = threading.Event()
    notices = RunningNotices(delay=0)

    def write(store: Any) -> None:
        """Stands for the store write."""

    notices.wait("t1", write, shown.set)

    assert shown.wait(30)
    assert notices.take("t1") is None
