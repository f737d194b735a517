"""Start an MCP server that cannot outlive squad: ``python mcp_launch.py PARENT_PID -- CMD ARGS``.

squad stops its MCP servers when a run ends, but a SIGKILL (the OOM killer, ``kill -9``) runs
no code. On Linux this launcher asks the kernel to SIGKILL it when the thread that started it
dies (``prctl(PR_SET_PDEATHSIG)``, kept across ``exec``), checks that its parent is still the
one that started it (it may have died before the ``prctl``), then becomes the server with
``execvp``: same pid, same pipes, nothing left in between. Elsewhere it only execs.

It is run by path with ``-I -S`` (no site, no environment), so it needs nothing but the
standard library and works whatever the server's environment holds; keep it that way.
"""

from __future__ import annotations

import os
import signal
import sys

__all__ = ["main"]

PR_SET_PDEATHSIG = 1
EXIT_PARENT_GONE = 70
EXIT_CANNOT_EXEC = 127


def _die_with_parent() -> None:
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0) != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"prctl(PR_SET_PDEATHSIG) failed: {os.strerror(errno)}")


def main(argv: list[str]) -> int:
    if len(argv) < 3 or argv[1] != "--" or not argv[0].isdigit():
        sys.stderr.write("usage: mcp_launch.py PARENT_PID -- COMMAND [ARGS...]\n")
        return 2
    parent, command = int(argv[0]), argv[2:]
    if sys.platform.startswith("linux"):
        _die_with_parent()
    if os.getppid() != parent:  # the parent died before the prctl took hold
        return EXIT_PARENT_GONE
    try:
        os.execvp(command[0], command)
    except OSError as exc:
        sys.stderr.write(f"cannot start MCP server {command[0]!r}: {exc.strerror or exc}\n")
    return EXIT_CANNOT_EXEC


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
