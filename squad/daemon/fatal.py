"""A long-running node that dies of a signal says where, in its own stderr.

A daemon or worker killed by SIGSEGV, SIGABRT, SIGBUS, SIGFPE or SIGILL (a C extension's
fault, a failed assertion, the C allocator finding its heap damaged) would otherwise leave
an exit code and nothing else: Python's tracebacks are never printed, and glibc writes its own
fatal messages to the controlling terminal, which a service has not. :func:`report_fatal_signals`
turns on :mod:`faulthandler` (every thread's Python stack, on stderr, then the signal's usual
end) and has glibc write to stderr too.
"""

from __future__ import annotations

import contextlib
import faulthandler
import os
import sys

__all__ = ["report_fatal_signals"]


def report_fatal_signals() -> None:
    """From now on a fatal signal prints every thread's stack to stderr (and glibc's
    message, if it has one), then ends the process as the signal would have."""
    os.environ.setdefault("LIBC_FATAL_STDERR_", "1")  # read by glibc when it aborts
    with contextlib.suppress(AttributeError, ValueError, OSError):  # no usable stderr
        faulthandler.enable(file=sys.stderr, all_threads=True)
