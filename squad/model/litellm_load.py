"""Loading litellm: once, offline, quiet, ahead of time when a command knows it will need it.

litellm takes seconds to import, so it is never imported at ``import squad...`` time. A
command that is about to use a real model (``squad run`` of a squad on a provider, the
daemon, a worker) calls :meth:`ClientLoader.start` as soon as it has read the squad: the
import then runs on a background thread while the store opens and the run's graph is built.
Whoever needs the module first (:func:`load_litellm`) waits for that import, or does it
itself when nothing started one; the wait is shown through the listener the starter gave
and counted so the run log can say what it cost. With :mod:`squad.model.seam` this is the
only module that touches litellm.
"""

from __future__ import annotations

import contextvars
import importlib
import os
import sys
import threading
import time
import warnings
from collections.abc import Callable
from concurrent.futures import Future
from contextlib import AbstractContextManager, nullcontext
from typing import Any, Protocol, TypeVar

__all__ = [
    "CLIENT",
    "ClientLoader",
    "WaitListener",
    "isolated",
    "load_litellm",
    "quiet_litellm",
    "unlogged",
]

_T = TypeVar("_T")
BACKGROUND_SWITCH_S = 0.0005
"""The interpreter's thread switch interval while litellm imports in the background."""
_LITELLM_ENV = {"LITELLM_LOCAL_MODEL_COST_MAP": "True", "LITELLM_OFFLINE_MODE": "true"}
_PYDANTIC_READONLY = r".* (is|are) using the `ReadOnly` qualifier"
_PYDANTIC_INSTANCE_FIELDS = r"Accessing the 'model_\w*fields' attribute on the instance"


class WaitListener(Protocol):
    """Told when a caller has to wait for the client, and for how long it waited."""

    def waiting(self) -> None: ...

    def waited(self, seconds: float) -> None: ...


def import_litellm() -> Any:
    """litellm, imported with its network look-ups off and its banner quiet."""
    os.environ.update(_LITELLM_ENV)  # read at import: local cost map, no downloads
    module: Any = importlib.import_module("litellm")
    module.suppress_debug_info = True
    _hush_service_hooks(module)
    return module


def _hush_service_hooks(litellm: Any) -> None:
    """Skip litellm's per-request service hook while no service callback is registered.

    litellm times each sync request and hands the duration to its process-wide service
    logger, whose hook, on a thread with no event loop (a run's task threads), runs a
    coroutine through ``asyncio.run``: a new event loop, its selector and self-pipe made and
    closed per call, to tell the callbacks of ``litellm.service_callback``. squad registers
    none, so the logger litellm would create on first use is created here, one whose hook
    returns at once while that list is empty and does what litellm's does otherwise. With
    another litellm (no such logger), nothing changes.
    """
    try:
        from litellm._service_logger import ServiceLogging
        from litellm.litellm_core_utils import logging_utils
    except ImportError:
        return
    if getattr(logging_utils, "_service_logger", ...) is not None:
        return  # not litellm's lazily created logger: leave it

    class QuietServiceLogging(ServiceLogging):
        def service_success_hook(self, *args: Any, **kwargs: Any) -> None:
            if litellm.service_callback:
                super().service_success_hook(*args, **kwargs)

    logging_utils._service_logger = QuietServiceLogging()  # type: ignore[assignment]


class ClientLoader:
    """One import of the model client (litellm), in the background or in the first caller.

    ``sys.modules`` holds a module from the moment its import *starts*, so it cannot say
    whether litellm is ready: a thread that found it there could get a half-initialised
    module. The module is handed out only from the future the one importing thread
    completes. A failed import is re-raised to the caller that waited for it, as it was
    raised, and forgotten: the next caller tries again, as without a background import.
    """

    def __init__(self, importer: Callable[[], Any] = import_litellm) -> None:
        self._importer = importer
        self._lock = threading.Lock()
        self._future: Future[Any] | None = None
        self._listener: WaitListener | None = None
        self._unreported_wait_s = 0.0

    def start(self, listener: WaitListener | None = None) -> bool:
        """Start the import on a daemon thread unless it has started (or finished) already;
        ``listener`` hears of every wait for it from now on. True when this call started it."""
        with self._lock:
            if listener is not None:
                self._listener = listener
            if self._future is not None:
                return False
            future = self._future = Future()
        thread = threading.Thread(
            target=self._import_in_background,
            args=(future,),
            name="squad-model-client",
            daemon=True,
        )
        thread.start()
        return True

    @property
    def ready(self) -> bool:
        """Whether the client is imported: :meth:`load` would not wait."""
        future = self._future
        return future is not None and future.done() and future.exception() is None

    def load(self) -> Any:
        """The client module, once its import has finished: started now in this thread when
        nobody started it, else waited for (the listener hears of a wait)."""
        with self._lock:
            future = self._future
            mine = future is None
            if future is None:
                future = self._future = Future()
            listener = self._listener
        if future.done():
            return self._result(future)
        started = time.perf_counter()
        if listener is not None:
            listener.waiting()
        if mine:
            self._import_into(future)
        try:
            return self._result(future)
        finally:
            waited = time.perf_counter() - started
            with self._lock:
                self._unreported_wait_s += waited
            if listener is not None:
                listener.waited(waited)

    def take_wait(self) -> float:
        """Seconds callers waited for the client since this was last asked (then zero): the
        model call that follows a wait reports it once."""
        with self._lock:
            waited, self._unreported_wait_s = self._unreported_wait_s, 0.0
        return waited

    def _import_in_background(self, future: Future[Any]) -> None:
        """The import, handing the GIL back sooner while it runs: the main thread's set-up
        is many short system calls (SQLite, files, git), and after each one it would wait
        out up to the default 5 ms switch interval for this CPU-bound import to let go."""
        before = sys.getswitchinterval()
        sys.setswitchinterval(min(before, BACKGROUND_SWITCH_S))
        try:
            self._import_into(future)
        finally:
            if sys.getswitchinterval() == min(before, BACKGROUND_SWITCH_S):
                sys.setswitchinterval(before)  # unless someone else changed it meanwhile

    def _import_into(self, future: Future[Any]) -> None:
        try:
            future.set_result(self._importer())
        except BaseException as exc:  # noqa: BLE001 - handed to whoever waits, re-raised there
            future.set_exception(exc)

    def _result(self, future: Future[Any]) -> Any:
        error = future.exception()
        if error is None:
            return future.result()
        with self._lock:
            if self._future is future:
                self._future = None  # the next caller imports again, as it would have
        raise error


CLIENT = ClientLoader()
"""The process's litellm: an import is process-wide, so there is one loader for it."""


def load_litellm() -> Any:
    """litellm, imported once with its network look-ups off and its banner quiet
    (:data:`CLIENT`: waits for a background import that is under way)."""
    return CLIENT.load()


_QUIET = (
    (_PYDANTIC_READONLY, UserWarning, ""),
    (_PYDANTIC_INSTANCE_FIELDS, DeprecationWarning, r"litellm(\.|$)"),
)


def quiet_litellm() -> None:
    """Silence the two warnings litellm's own code raises on the way (nothing of ours).

    - litellm builds pydantic adapters for its ``ReadOnly`` TypedDicts when a submodule first
      loads (stream handler, provider helpers); pydantic warns it will not enforce read-only.
    - litellm's stream handler reads every attribute of each chunk with ``getattr``, which
      touches pydantic's deprecated instance ``model_fields``/``model_computed_fields``.

    Under strict warning settings (``-W error``, pytest ``filterwarnings = error``) either
    would turn into a failed call. The filters are added, when missing, and never removed:
    ``warnings.catch_warnings`` would save and restore the process-wide filter list around
    each call, undoing what a concurrent call (another run, an extraction pass) just set.
    """
    for message, category, module in _QUIET:
        present = any(
            action == "ignore"
            and getattr(pattern, "pattern", None) == message
            and kind is category
            and getattr(where, "pattern", "") == module
            for action, pattern, kind, where, _ in warnings.filters
        )
        if not present:
            warnings.filterwarnings("ignore", message=message, category=category, module=module)


_SUCCESS_LISTENERS = ("success_callback", "_async_success_callback", "callbacks")
"""litellm's process-wide lists whose entries hear of a successful call."""


def unlogged(litellm: Any) -> AbstractContextManager[object]:
    """A call's success left unlogged by litellm when nothing would hear of it.

    After each sync call litellm hands its logging object's success handler to a thread pool,
    which prices the response again, builds a standard logging payload (model info, metadata,
    redaction) and passes it to the registered callbacks. squad registers none: it records
    spend, events and traces itself. With no callback registered (and litellm's debug print
    of that payload off) the handler is CPU for nothing on the interpreter lock a parallel
    run's calls share. litellm skips it for a call made inside ``internal_sub_call``, its
    mark for a sub-call whose caller logs and bills it, which is what squad is. When an
    application embedding squad registers a callback, or litellm has no such mark, calls
    are logged as before.
    """
    try:
        from litellm._internal_context import internal_sub_call
    except ImportError:  # another litellm: log as it does
        return nullcontext()
    if os.environ.get("LITELLM_PRINT_STANDARD_LOGGING_PAYLOAD"):
        return nullcontext()
    if any(getattr(litellm, name, None) for name in _SUCCESS_LISTENERS):
        return nullcontext()
    context: AbstractContextManager[object] = internal_sub_call()
    return context


def isolated(fn: Callable[[], _T]) -> _T:
    """Run ``fn`` where litellm's event-loop look-up leaves no loop behind, in a copy of the
    caller's context, and hand back its result or exception.

    litellm's sync path times each request with a service hook that calls
    ``asyncio.get_event_loop()``. On the main thread with no loop that creates and installs
    one nobody closes, which later surfaces as an "unclosed event loop" ResourceWarning
    wherever it happens to be collected; on a thread running a loop the hook would schedule
    work onto that loop. So a call from the main thread, or from a thread running an event
    loop, runs on a short-lived worker thread. Any other thread (a run's task threads, where
    a parallel run's calls come from) gets no loop from the look-up (the hook, when it runs
    at all, uses ``asyncio.run`` and cleans up: :func:`_hush_service_hooks`) and runs ``fn``
    itself: no thread started and joined per call, which a fan-out of calls would pay on the
    shared interpreter lock.
    """
    context = contextvars.copy_context()
    if threading.current_thread() is not threading.main_thread() and not _runs_a_loop():
        return context.run(fn)
    outcome: list[tuple[bool, Any]] = []

    def run() -> None:
        try:
            outcome.append((True, context.run(fn)))
        except BaseException as exc:  # noqa: BLE001 - handed to the calling thread, re-raised there
            outcome.append((False, exc))

    worker = threading.Thread(target=run, name="squad-model-call", daemon=True)
    worker.start()
    worker.join()
    ok, value = outcome[0]
    if ok:
        return value  # type: ignore[no-any-return]
    raise value


def _runs_a_loop() -> bool:
    """Whether this thread is running an asyncio event loop."""
    import asyncio  # loaded already by then: litellm imports it

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True
