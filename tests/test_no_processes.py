"""The guard behind ``make test-fast``: starting a process fails the test, naming the marker."""

from __future__ import annotations

import multiprocessing
import os
import subprocess
import sys

import pytest

from tests.support.no_processes import refused


def test_running_a_command_fails_and_names_the_slow_marker() -> None:
    with refused() as guard, pytest.raises(pytest.fail.Exception) as failure:
        subprocess.run([sys.executable, "-c", "pass"], check=True)
    assert "@pytest.mark.slow" in str(failure.value)
    assert sys.executable in str(failure.value)
    assert guard.attempts == [f"subprocess.Popen({[sys.executable, '-c', 'pass']!r})"]


def test_the_refusal_is_not_an_exception_code_under_test_would_catch() -> None:
    with refused(), pytest.raises(pytest.fail.Exception):
        try:
            subprocess.check_output(["true"])
        except Exception:  # noqa: BLE001 - what code under test catches; the refusal passes
            pytest.fail("the refusal was caught as an Exception")


def test_forking_and_spawning_fail_too() -> None:
    with refused() as guard:
        for start in (
            os.fork,
            lambda: os.system("true"),
            lambda: os.posix_spawn("/bin/true", ["true"], {}),
        ):
            with pytest.raises(pytest.fail.Exception):
                start()
    assert guard.attempts == ["os.fork", "os.system('true')", "os.posix_spawn('/bin/true')"]


def test_a_multiprocessing_child_fails_too() -> None:
    child = multiprocessing.get_context("spawn").Process(target=print)
    with refused() as guard, pytest.raises(pytest.fail.Exception):
        child.start()
    assert guard.attempts == ["multiprocessing Process.start"]


def test_the_process_machinery_is_given_back_after() -> None:
    originals = (subprocess.Popen.__init__, os.fork, multiprocessing.process.BaseProcess.start)
    with refused():
        assert subprocess.Popen.__init__ is not originals[0]
    assert (
        subprocess.Popen.__init__,
        os.fork,
        multiprocessing.process.BaseProcess.start,
    ) == originals
