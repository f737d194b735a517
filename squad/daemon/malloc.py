"""How the C allocator serves a daemon that runs for weeks.

glibc gives each new thread that meets contention an arena of its own, up to eight per core,
and keeps each one's freed memory for reuse: a daemon whose run and task threads come and go
grows its resident memory run after run by fragments no single arena can give back (measured
with ``python -m bench.run_memory``: 4 MB per 1,000 runs late in a run with the default, 0.9
with two arenas). :func:`limit_arenas` caps them for the threads started after it; a no-op
where the C library is not glibc. :func:`give_back` returns the free pages of every arena to
the system (``malloc_trim``), which the daemon does once a minute: glibc otherwise returns only
what is free at the top of the main heap.
"""

from __future__ import annotations

import ctypes
import functools
from typing import Any

__all__ = ["ARENAS", "give_back", "limit_arenas"]

ARENAS = 2
"""malloc arenas a daemon process uses at most (``MALLOC_ARENA_MAX`` overrides it)."""
_M_ARENA_MAX = -8
"""``mallopt``'s parameter number for the arena cap (glibc's malloc.h)."""


def limit_arenas(arenas: int = ARENAS) -> bool:
    """Cap glibc's malloc arenas at ``arenas``; True if it took (False: not glibc, or the
    environment's ``MALLOC_ARENA_MAX`` already decided)."""
    import os

    if os.environ.get("MALLOC_ARENA_MAX"):
        return False
    mallopt = _libc_function("mallopt", (ctypes.c_int, ctypes.c_int))
    return mallopt is not None and bool(mallopt(_M_ARENA_MAX, arenas))


def give_back() -> bool:
    """Return the allocator's free pages to the system; True if it released any (False
    too where the C library is not glibc)."""
    trim = _libc_function("malloc_trim", (ctypes.c_size_t,))
    return trim is not None and bool(trim(0))


@functools.cache
def _libc_function(name: str, argtypes: tuple[type, ...]) -> Any:
    """The C library's function ``name`` returning an int, or None where there is none.

    Looked up among the symbols the process already has (``dlopen(NULL)``: Python links the C
    library), once per function: ``ctypes.util.find_library`` would run ``ldconfig -p`` in a
    new process each time, and the daemon gives memory back every minute."""
    try:
        function = getattr(ctypes.CDLL(None), name)
    except (OSError, AttributeError):
        return None
    function.argtypes = argtypes
    function.restype = ctypes.c_int
    return function
