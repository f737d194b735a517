"""How the seam runs litellm's call: on which thread, in which context, and what litellm logs
of it, against the stub server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import contextvars
import threading
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import pytest

from squad.model.litellm_load import isolated, load_litellm
from squad.model.stub_answers import answer
from squad.model.testing import OpenAIStubServer
from squad.model.types import Message
from tests.model.conftest import MakeModel

T = TypeVar("T")
HELLO = [Message.user("Say hello.")]
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


# -- litellm's own success logging --------------------------------------------------------------


@pytest.fixture
def logging_pool(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of what litellm hands its logging thread pool."""
    import litellm.utils

    handed: list[str] = []
    pool = litellm.utils.executor
    submit = pool.submit

    def recording(fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
        target = args[0] if args and fn.__name__ == "run" else fn  # contextvars' ctx.run(f, ...)
        handed.append(getattr(target, "__name__", repr(target)))
        return submit(fn, *args, **kwargs)

    monkeypatch.setattr(pool, "submit", recording)
    return handed


def test_litellm_prepares_no_success_log_when_no_callback_would_hear_it(
    server: OpenAIStubServer, make_model: MakeModel, logging_pool: list[str]
) -> None:
    server.script(answer("hi", prompt_tokens=10, completion_tokens=2))
    reply = on_a_thread(lambda: make_model().complete(HELLO))

    assert reply.content == "hi"
    assert reply.usage.cost_usd > 0  # spend is squad's own, still priced
    assert "success_handler" not in logging_pool


class HeardCalls:
    """A litellm callback, as an application embedding squad might register one."""

    def __init__(self) -> None:
        from litellm.integrations.custom_logger import CustomLogger

        heard = self.heard = threading.Event()
        self.models: list[str] = []
        models = self.models

        class Logger(CustomLogger):  # type: ignore[misc]
            def log_success_event(
                self, kwargs: Any, response_obj: Any, start_time: Any, end_time: Any
            ) -> None:
                models.append(str(kwargs.get("model")))
                heard.set()

        self.logger = Logger()


@pytest.fixture
def registered_callback() -> Iterator[HeardCalls]:
    litellm = load_litellm()
    calls = HeardCalls()
    litellm.callbacks.append(calls.logger)
    try:
        yield calls
    finally:
        litellm.callbacks.remove(calls.logger)


def test_a_callback_registered_with_litellm_still_hears_of_every_call(
    server: OpenAIStubServer, make_model: MakeModel, registered_callback: HeardCalls
) -> None:
    server.script(answer("hi"))
    on_a_thread(lambda: make_model().complete(HELLO))

    assert registered_callback.heard.wait(10), "litellm's callback never heard of the call"
    assert registered_callback.models == ["gpt-4o-mini"]


# -- litellm's service hook ---------------------------------------------------------------------


@pytest.fixture
def new_loops(monkeypatch: pytest.MonkeyPatch) -> list[asyncio.AbstractEventLoop]:
    """The event loops asyncio makes from now on (``asyncio.run`` makes one each time)."""
    made: list[asyncio.AbstractEventLoop] = []
    real = asyncio.events.new_event_loop

    def counting() -> asyncio.AbstractEventLoop:
        loop = real()
        made.append(loop)
        return loop

    monkeypatch.setattr(asyncio.events, "new_event_loop", counting)
    return made


def test_a_call_from_a_task_thread_makes_no_event_loop_when_no_service_callback_listens(
    server: OpenAIStubServer, make_model: MakeModel, new_loops: list[asyncio.AbstractEventLoop]
) -> None:
    server.script(answer("hi"))
    reply = on_a_thread(lambda: make_model().complete(HELLO))

    assert reply.content == "hi"
    assert new_loops == []


def test_a_service_callback_registered_with_litellm_still_gets_litellms_hook(
    server: OpenAIStubServer,
    make_model: MakeModel,
    new_loops: list[asyncio.AbstractEventLoop],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(load_litellm(), "service_callback", ["an-application's"])
    server.script(answer("hi"))
    on_a_thread(lambda: make_model().complete(HELLO))

    assert new_loops  # litellm ran its hook's coroutine on a loop of its own, as it does
    assert all(loop.is_closed() for loop in new_loops)
