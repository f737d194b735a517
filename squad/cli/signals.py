"""SIGINT and SIGTERM while a command works: one way to catch them and put things back after."""

from __future__ import annotations

import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager

__all__ = ["on_stop_signals"]


@contextmanager
def on_stop_signals(handle: Callable[[signal.Signals], None]) -> Iterator[None]:
    """Inside the block SIGINT and SIGTERM call ``handle`` (with the signal); the handlers
    that were there before come back after it."""
    previous = {
        sig: signal.signal(sig, lambda signum, _frame: handle(signal.Signals(signum)))
        for sig in (signal.SIGINT, signal.SIGTERM)
    }
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
