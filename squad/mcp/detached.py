"""Runs asked for over ``squad mcp`` (stdio), each in a process of its own that outlives the
session.

An MCP host starts ``squad mcp`` for a conversation and ends it when the conversation ends,
often seconds after a ``run_start``. A run queued in that process died with it: "accepted",
then nothing. Here each request becomes a ``squad run`` (or ``squad approve``) started in a
session of its own, stdin closed, its output appended to ``mcp-runs.log`` in the squad home,
and the tool answers only once the store shows the run (its id), or says why it did not
start (the child's last words), or, on a slow machine, that it is starting. The run is then
the same as one started by hand: the run lock keeps one run per squad, ``squad status`` and
the dashboard follow it, ``squad resume`` continues it if it is killed.
"""

from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from squad.errors import UsageError

if TYPE_CHECKING:
    from squad.app import App
    from squad.daemon.handoff import HandOver, Ticket
    from squad.daemon.runqueue import RunRequest

__all__ = ["LOG_NAME", "Launched", "ProcessControl"]

LOG_NAME = "mcp-runs.log"
LOG_LIMIT = 1024 * 1024
"""Past this size the log is cut to its last :data:`LOG_KEEP` bytes before the next launch."""
LOG_KEEP = 256 * 1024
START_WAIT_S = 20.0
"""How long a tool waits for the store to show the run it asked for."""
_MAIN = "from squad.cli import main; main()"


@dataclass(frozen=True)
class Launched:
    """A run's process: its pid, the run's id once the store has it, what to tell the client."""

    pid: int
    run_id: str | None
    message: str


class ProcessControl:
    """A :class:`~squad.web.control.RunControl` whose runs each get a process of their own."""

    mode: Literal["daemon", "dashboard", "process"] = "process"

    def __init__(self, app: App, *, wait_s: float = START_WAIT_S, poll_s: float = 0.1) -> None:
        self._app = app
        self._wait_s = wait_s
        self._poll_s = poll_s
        self._children: set[int] = set()
        self.log = app.settings.home / LOG_NAME

    def submit(self, request: RunRequest) -> bool:
        self.launch(request)
        return True

    def hand_off(self, check: HandOver, ticket: Ticket) -> str | None:
        """``squad run`` hands runs to a daemon only."""
        return "this server is not the home's daemon"

    def launch(self, request: RunRequest) -> Launched:
        """Start ``request``'s process and wait until its run shows (see the module docstring);
        a UsageError with the process's last words when it ends without starting one."""
        self.close()  # reap earlier runs' processes that ended: a long session leaves no zombies
        store = self._app.store
        if request.decision is not None:
            assert request.run_id is not None
            task, approved, reason = request.decision
            args = ["approve", request.run_id, task]
            if not approved:
                args += ["--reject", "--reason", reason]
            before = None
        else:
            args = ["run", request.squad, "--trigger", request.trigger]
            if request.goal:
                args += ["--goal", request.goal]
            latest = store.list_runs(request.squad, limit=1)
            before = latest[0].id if latest else None
        offset = self._trim_log()
        pid = self._spawn(args)
        deadline = time.monotonic() + self._wait_s
        while True:
            run_id = self._shown(request, before)
            if run_id is not None:
                return Launched(pid, run_id, self._message(request, pid, run_id))
            code = self._exit_code(pid)
            if code is not None:
                if request.decision is not None and code == 0:
                    return Launched(pid, request.run_id, self._message(request, pid, None))
                raise UsageError(
                    f"the {'approval' if request.decision else 'run'} did not start: "
                    f"{self._last_words(offset) or f'its process exited with {code}'} "
                    f"(all of it in {self.log})"
                )
            if time.monotonic() >= deadline:
                return Launched(pid, None, self._message(request, pid, None))
            time.sleep(self._poll_s)

    def close(self, grace: float = 0.0) -> None:
        """Nothing to stop: the runs are on their own. Children that ended are reaped."""
        for pid in list(self._children):
            self._exit_code(pid)

    def _shown(self, request: RunRequest, before: str | None) -> str | None:
        """The run the request made, once the store shows it: a new run of the squad, or the
        paused run no longer waiting on the answered task."""
        from squad.store.records import RunStatus

        store = self._app.store
        if request.decision is not None:
            run = store.get_run(str(request.run_id))
            waiting = run is not None and run.status is RunStatus.AWAITING_APPROVAL
            return None if waiting or run is None else run.id
        latest = store.list_runs(request.squad, limit=1)
        if latest and latest[0].id != before:
            return latest[0].id
        return None

    def _message(self, request: RunRequest, pid: int, run_id: str | None) -> str:
        where = f"in process {pid} of its own, which goes on after this MCP session ends"
        if request.decision is not None:
            return f"answer given {where}; run_status with the squad follows the run"
        if run_id is None:
            return (
                f"run starting {where}; run_status with the squad shows it once it is "
                f"recorded (its output: {self.log})"
            )
        return f"run {run_id} started {where}; run_status with the squad follows it"

    def _spawn(self, args: list[str]) -> int:
        """``squad ARGS`` with this process's interpreter and environment, on this app's home,
        workspaces, configs and store, in a session of its own (a signal to the host's process
        group does not reach it), output to the log."""
        settings = self._app.settings
        env = {
            **os.environ,
            "SQUAD_HOME": str(settings.home),
            "SQUAD_WORKSPACES": str(settings.workspaces),
            "SQUAD_CONFIGS": str(settings.configs),
            "SQUAD_DATABASE_URL": settings.database_url,
        }
        null = os.open(os.devnull, os.O_RDONLY)
        out = os.open(self.log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            pid = os.posix_spawn(
                sys.executable,
                [sys.executable, "-c", _MAIN, *args],
                env,
                file_actions=[
                    (os.POSIX_SPAWN_DUP2, null, 0),
                    (os.POSIX_SPAWN_DUP2, out, 1),
                    (os.POSIX_SPAWN_DUP2, out, 2),
                ],
                setsid=True,
            )
        finally:
            os.close(null)
            os.close(out)
        self._children.add(pid)
        return pid

    def _exit_code(self, pid: int) -> int | None:
        """The child's exit code once it ended (reaping it), else None."""
        try:
            done, status = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            self._children.discard(pid)
            return -1
        if done == 0:
            return None
        self._children.discard(pid)
        return os.waitstatus_to_exitcode(status)

    def _trim_log(self) -> int:
        """The log's size now (where the next child's output starts), after cutting it to its
        last :data:`LOG_KEEP` bytes when it passed :data:`LOG_LIMIT`."""
        try:
            size = self.log.stat().st_size
        except FileNotFoundError:
            return 0
        if size <= LOG_LIMIT:
            return size
        with self.log.open("rb") as read:
            read.seek(size - LOG_KEEP)
            kept = read.read()
        _replace(self.log, kept[kept.find(b"\n") + 1 :])
        return self.log.stat().st_size

    def _last_words(self, offset: int) -> str:
        """The last lines the child wrote (from ``offset`` of the log), on one line."""
        try:
            with self.log.open("rb") as read:
                read.seek(offset)
                text = read.read().decode("utf-8", errors="replace")
        except OSError:
            return ""
        lines = [line.strip() for line in text.splitlines() if line.strip()]
        return " ".join(lines[-3:])[-1000:]


def _replace(path: Path, data: bytes) -> None:
    from squad.fsutil import atomic_write

    atomic_write(path, data, durable=False)
