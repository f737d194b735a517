"""How the C allocator serves a daemon that runs for weeks.

glibc gives each new thread that meets contention an arena of its own, up to eight per core,
and keeps each one's freed memory for reuse: a daemon whose run and task threads come and go
grows its resident memory run after run by fragments no single arena can give back (measured
with ``python -m bench.run_memory``: 4 MB per 1,000 runs late in a run with the default, 0.9
with two arenas). :func:`limit_arenas` caps them for the threads started after it; a no-op
where the C library is not glibc.
"""

from __future__ import annotations

import ctypes
import ctypes.util

__all__ = ["ARENAS", "limit_arenas"]

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
    name = ctypes.util.find_library("c")
    if name is None:
        return False
    try:
        libc = ctypes.CDLL(name)
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    return bool(mallopt(_M_ARENA_MAX, arenas))
