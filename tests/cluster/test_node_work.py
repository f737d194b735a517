"""A node's run jobs are idempotent across attempts (what makes losing a node safe), tested
without a queue: the job handler on a real store and the offline model, with the model calls
counted. A first attempt starts the run and names its job; a later attempt resumes it from its
checkpoint, starts over one that never reached a checkpoint, and leaves one that ended alone."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from squad.app import App
from squad.cluster.node import should_fence
from squad.cluster.work import NodeWork
from squad.jobqueue.queue import GaveUp, HandedOver, JobInfo
from squad.model.factory import model_for
from squad.model.types import ChatModel, Message, ModelEvent, Price, ToolSpec
from squad.settings import Settings
from squad.spec.models import ModelSpec, SquadSpec
from squad.store.records import RunStatus

TASK = re.compile(r"Task: Do step (\w+)\.")
RELAY = """\
name: relay
agents: [{id: worker, role: Does one step}]
memory: {extract: false}
tasks:
  - {id: t1, description: Do step one., agent: worker}
  - {id: t2, description: Do step two., agent: worker, depends_on: [t1]}
"""


class Counting:
    """Wraps the offline model and counts each task's model calls."""

    def __init__(self) -> None:
        self.calls: Counter[str] = Counter()
        self.on_call: Callable[[str], None] = lambda task: None

    def __call__(self, spec: ModelSpec, on_event: Callable[[ModelEvent], None]) -> ChatModel:
        inner = model_for(spec, on_event)
        outer = self

        class Model:
            def price(self) -> Price | None:
                return inner.price()

            def reserve_usd(self, messages: Sequence[Message], tools: Sequence[ToolSpec]) -> float:
                return inner.reserve_usd(messages, tools)

            def complete(self, messages: Any, **kwargs: Any) -> Any:
                found = TASK.search(str(messages[-1].content))
                task = {"one": "t1", "two": "t2"}.get(found.group(1) if found else "", "?")
                outer.calls[task] += 1
                outer.on_call(task)
                return inner.complete(messages, **kwargs)

        return Model()  # type: ignore[return-value]


@pytest.fixture
def counting() -> Counting:
    return Counting()


@pytest.fixture
def app(settings: Settings, counting: Counting) -> Iterator[App]:
    with App.open(settings, model_factory=counting) as opened:
        yield opened


@pytest.fixture
def work(app: App, make_spec: Callable[..., SquadSpec]) -> NodeWork:
    app.squads.create(make_spec(RELAY))
    events: list[tuple[str, dict[str, Any]]] = []
    node = NodeWork(app, lambda event, **f: events.append((event, f)), on_change=lambda: None)
    node.events = events  # type: ignore[attr-defined]
    return node


def job(number: int, attempts: int = 0) -> JobInfo:
    return JobInfo(number, "squad.run", "runs", "doing", attempts, "squad:relay", {}, 1)


ARGS = {"squad": "relay", "trigger": "test"}


def test_a_first_attempt_starts_the_run_and_names_its_job(
    work: NodeWork, app: App, counting: Counting
) -> None:
    result = work.run_job(job(7), ARGS)
    run = app.store.get_run(result["run_id"])
    assert run is not None and run.status is RunStatus.SUCCEEDED and run.job == "7"
    assert counting.calls == {"t1": 1, "t2": 1}


def test_a_later_attempt_of_an_ended_run_leaves_it_as_it_is(
    work: NodeWork, app: App, counting: Counting
) -> None:
    first = work.run_job(job(7), ARGS)
    again = work.run_job(job(7, attempts=1), ARGS)  # its node died before the job was marked
    assert again == {"run_id": first["run_id"], "status": "succeeded"}
    assert counting.calls == {"t1": 1, "t2": 1}
    assert len(app.store.list_runs("relay")) == 1


def test_a_later_attempt_resumes_from_the_checkpoint_without_redoing_finished_tasks(
    work: NodeWork, app: App, counting: Counting
) -> None:
    def die_in_t2(task: str) -> None:
        if task == "t2" and counting.calls["t2"] == 1:
            raise RuntimeError("the node went away mid-step")

    counting.on_call = die_in_t2
    with pytest.raises(RuntimeError):
        work.run_job(job(9), ARGS)
    run = app.store.run_of_job("9")
    assert run is not None and run.status is RunStatus.INTERRUPTED

    result = work.run_job(job(9, attempts=1), ARGS)
    assert result == {"run_id": run.id, "status": "succeeded"}
    assert counting.calls == {"t1": 1, "t2": 2}  # t2 was in flight; t1 was not redone
    assert ("run_resumed", {"squad": "relay", "run_id": run.id, "job": 9}) in work.events  # type: ignore[attr-defined]


def test_a_run_lost_before_its_first_checkpoint_starts_over_on_the_same_record(
    work: NodeWork, app: App, counting: Counting
) -> None:
    record = app.store.create_run("relay", trigger="test", job="11")
    app.store.update_run(record.id, status=RunStatus.RUNNING)
    result = work.run_job(job(11, attempts=1), ARGS)
    assert result == {"run_id": record.id, "status": "succeeded"}
    assert counting.calls == {"t1": 1, "t2": 1}
    assert [r.id for r in app.store.list_runs("relay")] == [record.id]


def test_a_job_that_resumes_a_run_claims_it_and_the_run_names_that_job(
    work: NodeWork, app: App, counting: Counting
) -> None:
    record = app.store.create_run("relay", trigger="test", job="11")
    app.store.update_run(record.id, status=RunStatus.INTERRUPTED)
    result = work.run_job(job(12), {**ARGS, "run_id": record.id})
    assert result == {"run_id": record.id, "status": "succeeded"}
    found = app.store.get_run(record.id)
    assert found is not None
    assert (found.job, found.epoch, found.owner) == ("12", 1, work.owner)


def test_a_stopping_node_hands_its_run_over_at_the_next_checkpoint(
    work: NodeWork, app: App, counting: Counting
) -> None:
    counting.on_call = lambda task: work.stop_all() if task == "t1" else None
    with pytest.raises(HandedOver):
        work.run_job(job(5), ARGS)
    run = app.store.run_of_job("5")
    assert run is not None and run.status is RunStatus.INTERRUPTED
    assert counting.calls == {"t1": 1}  # t1 finished and was checkpointed; t2 never began
    with pytest.raises(HandedOver):  # and it takes no new run while stopping
        work.run_job(job(6), ARGS)


def test_a_job_handed_over_past_its_attempts_fails_its_run_and_itself(
    work: NodeWork, app: App
) -> None:
    record = app.store.create_run("relay", trigger="test", job="13")
    limit = app.settings.cluster.max_attempts
    with pytest.raises(GaveUp):  # never retried: the job ends failed, as the run
        work.run_job(job(13, attempts=limit), ARGS)
    found = app.store.get_run(record.id)
    assert found is not None and found.status is RunStatus.FAILED
    assert "handed over" in (found.error or "")
    assert found.epoch == 1 and found.owner == work.owner  # claimed: a late holder is fenced


def test_a_squad_the_store_does_not_know_is_dropped(work: NodeWork) -> None:
    assert "dropped" in work.run_job(job(3), {"squad": "ghost", "trigger": "test"})


def test_a_worker_runs_the_definition_the_store_registered_without_the_yaml(
    app: App, tmp_path: Path
) -> None:
    path = tmp_path / "relay.yaml"
    path.write_text(RELAY)
    spec, _ = app.squads.create_from_file(path)
    path.unlink()
    found, workspace = app.squads.registered("relay")
    assert found == spec
    assert (workspace / ".squad-config.json").is_file()


def test_a_fenced_node_stops_its_run_at_the_next_checkpoint_and_takes_none_until_unfenced(
    work: NodeWork, app: App, counting: Counting
) -> None:
    counting.on_call = lambda task: work.fence() if task == "t1" else None
    with pytest.raises(HandedOver):
        work.run_job(job(21), ARGS)
    assert counting.calls == {"t1": 1}
    with pytest.raises(HandedOver):
        work.run_job(job(22), ARGS)
    work.unfence()
    counting.on_call = lambda task: None
    result = work.run_job(job(21, attempts=1), ARGS)  # the handed-over run, resumed
    assert result["status"] == "succeeded"
    assert counting.calls == {"t1": 1, "t2": 1}


def test_a_node_fences_itself_well_before_the_others_take_it_for_lost() -> None:
    assert not should_fence(10.0, 30.0)
    assert should_fence(19.0, 30.0)
    assert not should_fence(2.0, 4.0) and should_fence(2.5, 4.0)


def test_retention_in_a_cluster_forgets_nodes_silent_for_a_week(settings: Settings) -> None:
    from datetime import timedelta

    from squad.clock import FrozenClock
    from squad.cluster.maintenance import maintain

    clock = FrozenClock()
    with App.open(settings, clock=clock) as app:
        beat = {"host": "h", "pid": 1, "role": "worker", "worker_id": None}
        app.store.cluster.beat("old", started_at=clock(), **beat)
        clock.advance(timedelta(days=6).total_seconds())
        app.store.cluster.beat("recent", started_at=clock(), **beat)
        clock.advance(timedelta(days=2).total_seconds())
        report = maintain(app, "retention")
        assert report["nodes_forgotten"] == 1
        assert [n.name for n in app.store.cluster.list()] == ["recent"]
