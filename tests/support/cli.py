"""``squad`` run inside the test process, for tests whose subject is what a command prints,
exits with and stores, not the process it runs in.

A subprocess pays Python's start-up and squad's imports on every command (one to three
seconds on two busy cores); :class:`InProcessCli` calls the console script's ``main`` with the
command's environment, folder, arguments and streams swapped in for the call, and answers as
``subprocess.run`` would (``returncode``, ``stdout``, ``stderr``). Tests about processes
(signals, kills, daemons, locks held by another process) keep spawning the real script.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
import traceback
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path


class _Stream(io.TextIOWrapper):
    """A text stream over bytes, as a pipe is: not a terminal, ``.buffer`` there to write to."""

    def __init__(self, data: bytes = b"") -> None:
        super().__init__(io.BytesIO(data), encoding="utf-8", errors="replace", newline=None)

    def text(self) -> str:
        self.flush()
        buffer = self.buffer
        assert isinstance(buffer, io.BytesIO)
        return buffer.getvalue().decode("utf-8", errors="replace")


@contextmanager
def _swapped(env: Mapping[str, str], cwd: Path, argv: list[str]) -> Iterator[None]:
    saved_env, saved_cwd, saved_argv = dict(os.environ), Path.cwd(), sys.argv
    os.environ.clear()
    os.environ.update(env)
    os.chdir(cwd)
    sys.argv = argv
    try:
        yield
    finally:
        sys.argv = saved_argv
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)


def run_in_process(
    args: list[str], *, env: Mapping[str, str], cwd: Path, stdin: str = ""
) -> subprocess.CompletedProcess[str]:
    """``squad *args`` as the console script runs it, in this process."""
    from squad.cli import main

    out, err, given = _Stream(), _Stream(), _Stream(stdin.encode())
    saved = sys.stdin, sys.stdout, sys.stderr
    code = 0
    with _swapped(env, cwd, ["squad", *args]):
        sys.stdin, sys.stdout, sys.stderr = given, out, err
        try:
            main()
        except SystemExit as exit_:
            code = exit_.code if isinstance(exit_.code, int) else (0 if exit_.code is None else 1)
            if isinstance(exit_.code, str):
                err.write(exit_.code + "\n")
        except Exception:  # noqa: BLE001 - as a process dies of it: a traceback, exit 1
            err.write(traceback.format_exc())
            code = 1
        finally:
            sys.stdin, sys.stdout, sys.stderr = saved
    return subprocess.CompletedProcess(["squad", *args], code, out.text(), err.text())
