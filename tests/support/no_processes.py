"""The guard behind ``make test-fast``: a test that starts a process fails, naming the marker.

``SQUAD_TEST_NO_SUBPROCESS=1`` turns it on (``tests/conftest.py`` installs it at session
start, in each xdist worker, never in the xdist controller, which starts the workers). Every
way a test could start one is closed: ``subprocess.Popen`` (and so ``run``, ``check_output``,
``os.popen``, asyncio's subprocesses), ``os.fork`` / ``forkpty`` / ``posix_spawn(p)`` /
``system`` (and so ``os.spawn*`` and ``pty.fork``), and multiprocessing's ``Process.start``
(and so its pools and ``ProcessPoolExecutor``). The attempt raises ``pytest.fail`` (a
BaseException: code under test that catches ``Exception`` or ``OSError`` does not swallow it)
and is remembered, so a test whose attempt happened in a thread, or was swallowed anyway,
still fails.
"""

from __future__ import annotations

import gc
import multiprocessing.process
import os
import subprocess
import warnings
from collections.abc import Callable, Generator, Iterator
from contextlib import contextmanager
from typing import Any

import pytest

ENV = "SQUAD_TEST_NO_SUBPROCESS"
ADVICE = (
    "make test-fast starts no process: mark the test @pytest.mark.slow "
    "(it starts a process: the console script, a server, a child)"
)


def wanted() -> bool:
    return os.environ.get(ENV) == "1"


class NoProcesses:
    """A pytest plugin: while installed, starting a process fails the running test."""

    def __init__(self) -> None:
        self.attempts: list[str] = []
        self.refused = False  # by the running test
        self._undo: list[Callable[[], None]] = []

    def install(self) -> None:
        self._replace(subprocess.Popen, "__init__", "subprocess.Popen")
        self._replace(multiprocessing.process.BaseProcess, "start", "multiprocessing Process.start")
        for name in ("fork", "forkpty", "posix_spawn", "posix_spawnp", "system"):
            if hasattr(os, name):
                self._replace(os, name, f"os.{name}")

    def uninstall(self) -> None:
        while self._undo:
            self._undo.pop()()

    def _replace(self, owner: Any, name: str, label: str) -> None:
        original = getattr(owner, name)

        def refuse(*args: Any, **kwargs: Any) -> Any:
            what = _describe(label, args, kwargs)
            self.attempts.append(what)
            self.refused = True
            pytest.fail(f"{what}: {ADVICE}", pytrace=False)

        setattr(owner, name, refuse)
        self._undo.append(lambda: setattr(owner, name, original))

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item) -> Generator[None, object, object]:
        self.attempts.clear()
        self.refused = False
        try:
            return (yield)
        finally:
            if self.refused:  # what the refused start left open (a log file for its stderr)
                with warnings.catch_warnings():  # closes here, not as a ResourceWarning failing
                    warnings.simplefilter("ignore", ResourceWarning)  # the next test
                    gc.collect()

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        report = yield
        if self.attempts:
            message = f"{item.nodeid} tried to start a process ({self.attempts[0]}): {ADVICE}"
            if report.passed:  # the refusal was swallowed, or raised in a thread
                report.outcome = "failed"
                report.longrepr = message
            else:  # it failed on what the refusal left undone (a server that never came up)
                report.sections.append(("process guard", message))
        self.attempts.clear()  # one failure per attempt, not one more in each phase after
        return report


def _describe(label: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    if label == "subprocess.Popen":  # args[0] is the Popen being made
        command = kwargs.get("args", args[1] if len(args) > 1 else None)
        return f"{label}({command!r})"
    if label.startswith("os.") and args:
        return f"{label}({args[0]!r})"
    return label


@contextmanager
def refused() -> Iterator[NoProcesses]:
    """The guard installed for the length of the block (the guard's own tests use it)."""
    guard = NoProcesses()
    guard.install()
    try:
        yield guard
    finally:
        guard.uninstall()
