"""How the seam runs litellm's call: on which thread, in which context."""

from __future__ import annotations

import asyncio
import contextvars
import threading
from collections.abc import Callable
from typing import TypeVar

from squad.model.litellm_load import isolated

T = TypeVar("T")
MARK: contextvars.ContextVar[str] = contextvars.ContextVar("mark", default="unset")


def on_a_thread(fn: Callable[[], T]) -> T:
    """``fn`` run on a thread of its own, as a run's task makes its calls."""
    out: list[T] = []
    worker = threading.Thread(target=lambda: out.append(fn()), name="test-task")
    worker.start()
    worker.join()
    return out[0]


def test_a_call_from_a_task_thread_runs_on_that_thread_in_a_copy_of_its_context() -> None:
    def task() -> tuple[threading.Thread, threading.Thread, str, str]:
        MARK.set("task")

        def call() -> tuple[threading.Thread, str]:
            seen = MARK.get()
            MARK.set("call")  # what the call sets stays in the call
            return threading.current_thread(), seen

        ran_on, seen = isolated(call)
        return threading.current_thread(), ran_on, seen, MARK.get()

    caller, ran_on, seen, after = on_a_thread(task)
    assert ran_on is caller  # no thread started for it
    assert (seen, after) == ("task", "task")


def test_a_call_from_the_main_thread_runs_on_a_worker_and_sets_nothing_in_the_callers_context() -> (
    None
):
    def call() -> threading.Thread:
        MARK.set("call")
        return threading.current_thread()

    ran_on = isolated(call)
    assert ran_on is not threading.main_thread()
    assert not ran_on.is_alive()
    assert MARK.get() == "unset"


def test_a_call_from_a_thread_running_an_event_loop_runs_on_a_worker() -> None:
    async def inside_a_loop() -> tuple[threading.Thread, threading.Thread]:
        return threading.current_thread(), isolated(threading.current_thread)

    caller, ran_on = on_a_thread(lambda: asyncio.run(inside_a_loop()))
    assert ran_on is not caller


def test_an_error_in_a_call_from_a_task_thread_reaches_the_caller() -> None:
    def fails() -> None:
        raise KeyError("from the call")

    def task() -> str:
        try:
            isolated(fails)
        except KeyError as exc:
            return str(exc)
        return "no error"

    assert on_a_thread(task) == "'from the call'"
