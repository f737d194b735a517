"""Fencing of runs, checked by the database: a claim raises a run's epoch, and a write that
carries an older epoch is refused in its own transaction, whatever it changes (the run's
status and end, a task row, a whole step's batch). Against SQLite and (when reachable)
Postgres."""

from __future__ import annotations

import pytest

from squad.errors import RunFenced
from squad.store import RunStatus, Store, TaskStatus

SHA = "0" * 64


def _run(store: Store) -> str:
    store.upsert_squad("docs", workspace="/ws/docs", source=None, definition_sha256=SHA)
    return store.create_run("docs", trigger="test", job="7").id


def test_each_claim_raises_the_epoch_and_names_its_node(store: Store) -> None:
    run_id = _run(store)
    fresh = store.get_run(run_id)
    assert fresh is not None and (fresh.epoch, fresh.owner) == (0, None)
    assert store.run_state.claim(run_id, "n1") == 1
    assert store.run_state.claim(run_id, "n2") == 2
    found = store.get_run(run_id)
    assert found is not None and (found.epoch, found.owner, found.job) == (2, "n2", "7")
    assert store.run_state.claim(run_id, "n3", job="9") == 3  # a later job of the run claims it
    rebound = store.get_run(run_id)
    assert rebound is not None and (rebound.owner, rebound.job) == ("n3", "9")


def test_a_write_with_an_older_claim_is_refused_and_changes_nothing(store: Store) -> None:
    run_id = _run(store)
    old = store.run_state.claim(run_id, "frozen")
    store.update_run(run_id, status=RunStatus.RUNNING, epoch=old)
    store.run_state.set_task(run_id, "t1", squad="docs", agent="a", status="running", epoch=old)
    new = store.run_state.claim(run_id, "survivor")

    with pytest.raises(RunFenced) as refused:
        store.update_run(run_id, status=RunStatus.SUCCEEDED, summary={"x": 1}, epoch=old)
    assert refused.value.run_id == run_id and refused.value.epoch == old
    with pytest.raises(RunFenced):
        store.run_state.set_task(run_id, "t1", squad="docs", agent="a", status="done", epoch=old)
    with pytest.raises(RunFenced):
        store.run_state.set_task(run_id, "t2", squad="docs", agent="a", status="done", epoch=old)
    with pytest.raises(RunFenced):
        store.run_state.check_fence(run_id, old)

    run = store.get_run(run_id)
    assert run is not None
    assert run.status is RunStatus.RUNNING and run.ended_at is None and run.summary is None
    assert [(t.task_id, t.status) for t in store.run_state.tasks(run_id)] == [
        ("t1", TaskStatus.RUNNING)
    ]
    # The newer claim writes.
    store.run_state.set_task(run_id, "t1", squad="docs", agent="a", status="done", epoch=new)
    store.run_state.check_fence(run_id, new)
    ended = store.update_run(run_id, status=RunStatus.SUCCEEDED, epoch=new)
    assert ended.status is RunStatus.SUCCEEDED and ended.ended_at is not None


def test_a_fenced_step_batch_lands_none_of_its_writes(store: Store) -> None:
    run_id = _run(store)
    old = store.run_state.claim(run_id, "frozen")
    store.run_state.claim(run_id, "survivor")
    with pytest.raises(RunFenced), store.batch("record a step"):
        store.conversation.record_messages("docs", "a", [("assistant", "late", None)])
        store.run_state.set_task(run_id, "t1", squad="docs", agent="a", status="done", epoch=old)
    assert store.run_state.tasks(run_id) == []
    assert store.conversation.replies_after("docs", "a", 0) == 0


def test_writes_without_a_claim_are_not_fenced(store: Store) -> None:
    run_id = _run(store)
    store.run_state.claim(run_id, "n1")
    store.run_state.set_task(run_id, "t1", squad="docs", agent="a", status="done")
    assert store.update_run(run_id, status=RunStatus.FAILED).status is RunStatus.FAILED
