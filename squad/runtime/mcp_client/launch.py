"""Start an MCP server that cannot outlive squad, nor leave its own children behind.

``python launch.py PARENT_PID [--set NAME=VALUE ...] -- CMD ARGS``

squad stops its MCP servers when a run ends, but a SIGKILL (the OOM killer, ``kill -9``) runs
no code. On Linux this launcher asks the kernel to SIGKILL it when the thread that started it
dies (``prctl(PR_SET_PDEATHSIG)``, kept across ``exec``), checks that its parent is still the
one that started it (it may have died before the ``prctl``), then becomes the server with
``execvp``: same pid, same pipes, nothing left in between. Elsewhere it only execs.

The death signal reaches the server alone, and so does the SDK's shutdown when the server
exits by itself once its stdin closes; but ``npx``, ``uvx`` and other wrappers start the real
server, or helpers, as children of their own. So the server leads a process group of its own
(the SDK starts it in a new session; else the launcher makes one), and before the ``exec`` the
launcher leaves a *watchdog* behind: a process outside that group (double-forked, so the
server never sees an extra child of its own) that waits for the server to exit, for whatever
reason, then sends SIGTERM to the group and, after :data:`GRACE_S`, SIGKILL, and exits. On
Linux it waits on a pidfd; elsewhere it polls. A process that leaves the group on purpose
(``setsid``, a daemon) escapes it: only a cgroup would hold that, and cgroups are not
something an unprivileged user can count on.

``--set`` puts variables in the server's environment only (the marker naming the run and the
server), so the watchdog, which shares the launcher's environment, carries none of them.

It is run by path with ``-I -S`` (no site, no environment), so it needs nothing but the
standard library and works whatever the server's environment holds; keep it that way.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path

__all__ = ["main"]

PR_SET_PDEATHSIG = 1
EXIT_PARENT_GONE = 70
EXIT_CANNOT_EXEC = 127
GRACE_S = 2.0
"""How long the server's leftover children have between SIGTERM and SIGKILL."""
POLL_S = 0.05
USAGE = "usage: launch.py PARENT_PID [--set NAME=VALUE ...] -- COMMAND [ARGS...]\n"


def _die_with_parent() -> None:
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0) != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"prctl(PR_SET_PDEATHSIG) failed: {os.strerror(errno)}")


def _parse(argv: list[str]) -> tuple[int, dict[str, str], list[str]] | None:
    if not argv or not argv[0].isdigit() or "--" not in argv:
        return None
    split = argv.index("--")
    options, command = argv[1:split], argv[split + 1 :]
    extra: dict[str, str] = {}
    if not command or len(options) % 2:
        return None
    for flag, value in zip(options[::2], options[1::2], strict=True):
        name, equals, content = value.partition("=")
        if flag != "--set" or not equals or not name:
            return None
        extra[name] = content
    return int(argv[0]), extra, command


def main(argv: list[str]) -> int:
    parsed = _parse(argv)
    if parsed is None:
        sys.stderr.write(USAGE)
        return 2
    parent, extra, command = parsed
    if sys.platform.startswith("linux"):
        _die_with_parent()
    if os.getppid() != parent:  # the parent died before the prctl took hold
        return EXIT_PARENT_GONE
    if hasattr(os, "fork"):
        try:
            _lead_a_group()
            _leave_a_watchdog()
        except OSError as exc:  # no fork left: the server runs unwatched rather than not at all
            sys.stderr.write(f"mcp_launch: cannot watch the server's children: {exc}\n")
    try:
        os.execvpe(command[0], command, {**os.environ, **extra})
    except OSError as exc:
        sys.stderr.write(f"cannot start MCP server {command[0]!r}: {exc.strerror or exc}\n")
    return EXIT_CANNOT_EXEC


def _lead_a_group() -> None:
    """Make this process (so the server) lead its own process group."""
    if os.getpgrp() != os.getpid():
        os.setpgid(0, 0)


def _leave_a_watchdog() -> None:
    """Double-fork a watchdog of this process's group; return once it watches."""
    group = os.getpid()
    ready, told = os.pipe()
    middle = os.fork()
    if middle == 0:  # pragma: no cover - a forked child; it never returns
        try:
            os.close(ready)
            if os.fork() == 0:
                _watch(group, told)
        finally:
            os._exit(0)
    os.close(told)
    os.waitpid(middle, 0)
    os.read(ready, 1)  # a byte once it watches, or EOF if it died first
    os.close(ready)


def _watch(group: int, told: int) -> None:  # pragma: no cover - runs in the forked watchdog
    """The watchdog: out of the group, off the server's pipes; wait, then stop the group."""
    try:
        os.setsid()
        null = os.open(os.devnull, os.O_RDWR)
        os.dup2(null, 0)
        os.dup2(null, 1)  # keep stderr: the server's own log
        os.close(null)
        wait = _exit_waiter(group)
        os.write(told, b".")
        os.close(told)
        wait()
        _stop_group(group)
    finally:
        os._exit(0)


def _exit_waiter(pid: int) -> Callable[[], None]:
    """A function returning once ``pid`` has exited (opened now, while ``pid`` surely lives)."""
    try:
        pidfd = os.pidfd_open(pid)
    except (AttributeError, OSError):
        pidfd = None
    if pidfd is not None:
        poller = select.poll()
        poller.register(pidfd, select.POLLIN)

        def wait_pidfd() -> None:
            while not poller.poll():
                pass

        return wait_pidfd

    def wait_polling() -> None:
        while _exists(pid):
            time.sleep(POLL_S * 4)

    return wait_polling


def _exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a zombie no longer runs; /proc tells where there is one
        stat = Path(f"/proc/{pid}/stat").read_bytes()
        return stat.rsplit(b")", 1)[1].split()[0] != b"Z"
    except (OSError, IndexError):
        return True


def _stop_group(group: int) -> None:
    """SIGTERM to every process left in ``group``; SIGKILL to those still there after GRACE_S."""
    try:
        os.killpg(group, signal.SIGTERM)
    except OSError:
        return  # nobody left (or nobody we may signal)
    deadline = time.monotonic() + GRACE_S
    while time.monotonic() < deadline:
        time.sleep(POLL_S)
        try:
            os.killpg(group, 0)
        except OSError:
            return
    with contextlib.suppress(OSError):
        os.killpg(group, signal.SIGKILL)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
