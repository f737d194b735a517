"""One daemon per squad home: an OS lock on daemon.pid, takeable after a crash."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from squad.daemon.lock import PID_FILE, DaemonLock, pid_alive, probe_lock
from squad.errors import SquadError


def dead_pid() -> int:
    """The pid of a process that has exited."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_second_lock_of_a_home_is_refused_with_the_owners_pid(tmp_path: Path) -> None:
    first = DaemonLock(tmp_path)
    first.acquire(4242)
    try:
        with pytest.raises(SquadError, match=r"already running for .* \(pid 4242\)"):
            DaemonLock(tmp_path).acquire()
        assert probe_lock(tmp_path).held and probe_lock(tmp_path).pid == 4242
    finally:
        first.release()
    assert probe_lock(tmp_path).held is False
    assert (tmp_path / PID_FILE).read_text() == ""  # emptied, never deleted


@pytest.mark.slow
def test_lock_left_by_a_dead_process_is_taken_over(tmp_path: Path) -> None:
    gone = dead_pid()
    (tmp_path / PID_FILE).write_text(f"{gone}\n")
    assert probe_lock(tmp_path).held is False
    with DaemonLock(tmp_path) as lock:
        assert lock.previous_pid == gone
        assert (tmp_path / PID_FILE).read_text() == f"{os.getpid()}\n"


@pytest.mark.slow
def test_lock_is_released_when_its_process_dies(tmp_path: Path) -> None:
    code = (
        "import os, sys; from pathlib import Path; from squad.daemon.lock import DaemonLock; "
        f"DaemonLock(Path({str(tmp_path)!r})).acquire(); os._exit(0)"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
    assert probe_lock(tmp_path).held is False
    with DaemonLock(tmp_path) as lock:
        assert lock.previous_pid is not None


@pytest.mark.slow
def test_probe_of_a_home_without_a_daemon_says_so(tmp_path: Path) -> None:
    state = probe_lock(tmp_path)
    assert (state.held, state.pid) == (False, None)
    assert pid_alive(os.getpid()) and not pid_alive(dead_pid())
