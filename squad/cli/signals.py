"""Stop signals while a command works: one way to catch them and put things back after.

SIGINT (Ctrl-C), SIGTERM (``kill``, ``squad stop``) and SIGHUP (the terminal closed) all ask
for the same graceful stop: without a handler SIGHUP kills the process at once, leaving a run
``running`` with nothing logged. The daemon takes SIGHUP for a reload instead, as daemons do.
"""

from __future__ import annotations

import signal
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager

__all__ = ["STOP_SIGNALS", "on_signals", "on_stop_signals"]

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


@contextmanager
def on_signals(
    handle: Callable[[signal.Signals], None], signals: Sequence[signal.Signals]
) -> Iterator[None]:
    """Inside the block each of ``signals`` calls ``handle`` (with the signal); the handlers
    that were there before come back after it."""
    previous = {
        sig: signal.signal(sig, lambda signum, _frame: handle(signal.Signals(signum)))
        for sig in signals
    }
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def on_stop_signals(handle: Callable[[signal.Signals], None]) -> AbstractContextManager[None]:
    """:func:`on_signals` for SIGINT, SIGTERM and SIGHUP."""
    return on_signals(handle, STOP_SIGNALS)
