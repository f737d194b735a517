"""Loading litellm: once, offline, quiet, and called off the main thread.

litellm takes seconds to import, so it is imported on the first call, never at
``import squad...`` time, with its cost map read locally and its network look-ups off;
threads that make their first call at once all wait for that one import to finish. With
:mod:`squad.model.seam` this is the only module that touches litellm.
"""

from __future__ import annotations

import contextvars
import importlib
import os
import threading
import warnings
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["isolated", "load_litellm", "quiet_litellm"]

_T = TypeVar("_T")
_IMPORT_LOCK = threading.Lock()
_LOADED: list[Any] = []
"""litellm once its import has finished (see :func:`load_litellm`)."""
_LITELLM_ENV = {"LITELLM_LOCAL_MODEL_COST_MAP": "True", "LITELLM_OFFLINE_MODE": "true"}
_PYDANTIC_READONLY = r".* (is|are) using the `ReadOnly` qualifier"
_PYDANTIC_INSTANCE_FIELDS = r"Accessing the 'model_\w*fields' attribute on the instance"


def load_litellm() -> Any:
    """litellm, imported once with its network look-ups off and its banner quiet.

    ``sys.modules`` holds a module from the moment its import *starts*, so it cannot say
    whether litellm is ready: a thread that found it there could get a half-initialised
    module. The module is handed out only after its import has finished, under the lock.
    """
    if not _LOADED:
        with _IMPORT_LOCK:
            if not _LOADED:
                os.environ.update(_LITELLM_ENV)  # read at import: local cost map, no downloads
                module: Any = importlib.import_module("litellm")
                module.suppress_debug_info = True
                _LOADED.append(module)
    return _LOADED[0]


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


def isolated(fn: Callable[[], _T]) -> _T:
    """Run ``fn`` on a short-lived worker thread and hand back its result or exception.

    litellm's sync path times each request with a service hook that calls
    ``asyncio.get_event_loop()``; on the main thread that creates and installs an event loop
    nobody closes, which later surfaces as an "unclosed event loop" ResourceWarning wherever it
    happens to be collected. On any other thread the hook uses ``asyncio.run`` and cleans up.
    """
    outcome: list[tuple[bool, Any]] = []
    context = contextvars.copy_context()

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
