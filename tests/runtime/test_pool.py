"""The run's tasks at work across steps: results as they end, errors after the rest end."""

from __future__ import annotations

import threading
from contextvars import ContextVar

import pytest

from squad.runtime.pool import TaskPool

WHO: ContextVar[str] = ContextVar("who", default="nobody")


def test_next_returns_the_task_that_ended_while_the_others_work() -> None:
    pool: TaskPool[str] = TaskPool()
    slow_may_end = threading.Event()
    pool.start("fast", lambda: "fast done")
    pool.start("slow", lambda: "slow done" if slow_may_end.wait(10) else "timed out")
    assert pool.next() == [("fast", "fast done")]
    assert pool.running == {"slow"}
    slow_may_end.set()
    assert pool.rest() == [("slow", "slow done")]
    assert pool.running == frozenset() and pool.next() == []


def test_a_task_runs_in_a_copy_of_the_context_that_started_it() -> None:
    pool: TaskPool[str] = TaskPool()
    WHO.set("the step")
    pool.start("t", WHO.get)
    assert pool.next() == [("t", "the step")]


def test_an_error_is_raised_once_every_other_task_has_ended() -> None:
    pool: TaskPool[str] = TaskPool()
    ended: list[str] = []
    broken = threading.Event()

    def slow() -> str:
        broken.wait(10)
        ended.append("slow")
        return "slow done"

    def fail() -> str:
        broken.set()
        raise OSError(28, "No space left on device")

    pool.start("slow", slow)
    pool.start("broken", fail)
    with pytest.raises(OSError, match="No space left"):
        pool.next()
        pool.next()  # the slow one may have been the first to be collected
    assert ended == ["slow"] and pool.running == frozenset()


def test_a_task_cannot_be_started_twice_at_once() -> None:
    pool: TaskPool[str] = TaskPool()
    gate = threading.Event()
    pool.start("t", lambda: "done" if gate.wait(10) else "timed out")
    with pytest.raises(RuntimeError, match="already running"):
        pool.start("t", lambda: "again")
    gate.set()
    pool.close()
    assert pool.running == frozenset()
