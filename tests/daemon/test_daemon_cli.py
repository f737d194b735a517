"""``squad daemon``, ``status`` and ``stop`` as a user runs them: the installed console script
in a subprocess, squads folder, home and workspaces in a temporary folder. Waits poll the
daemon's log or ``squad status`` with a generous timeout; nothing asserts on speed."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from squad.daemon.eventlog import read_daemon_log
from squad.model.testing import FREE_PRICES as FREE
from tests.cli.test_cli import SQUAD, Cli
from tests.support.waiting import wait_for

pytestmark = pytest.mark.slow
WAIT = 60.0

SQUAD_YAML = """\
name: {name}
agents: [{{id: writer, role: Writes}}]
tasks: [{{id: draft, description: Draft it., agent: writer}}]
schedule: {schedule}
"""


class Daemon:
    """A ``squad daemon`` subprocess, its log, and helpers to wait on it."""

    def __init__(self, cli: Cli) -> None:
        self.cli = cli
        self.squads = cli.tmp / "configs" / "squads"
        self.squads.mkdir(parents=True, exist_ok=True)
        self.log = cli.home / "daemon.jsonl"
        self.process: subprocess.Popen[str] | None = None

    def start(self, *args: str) -> subprocess.Popen[str]:
        stderr = (self.cli.tmp / "daemon.err").open("a")
        stdout = (self.cli.tmp / "daemon.out").open("a")
        if "--port" not in args:  # any free port: never the user's dashboard port
            args = (*args, "--port", "0")
        self.process = subprocess.Popen(
            [str(SQUAD), "daemon", *args],
            env=self.cli.env,
            cwd=self.cli.tmp,
            stdout=stdout,
            stderr=stderr,
            text=True,
        )
        stderr.close()
        stdout.close()
        return self.process

    def events(self, kind: str) -> list[dict[str, Any]]:
        return [e for e in read_daemon_log(self.log) if e["event"] == kind]

    def wait_for(self, check: Callable[[], Any], what: str) -> Any:
        return wait_for(check, what, timeout=WAIT, interval=0.1, gone=self._exited)

    def _exited(self) -> str | None:
        if self.process is None or self.process.poll() is None:
            return None
        return f"the daemon exited ({self.process.returncode})"

    def wait_event(self, kind: str, **fields: Any) -> dict[str, Any]:
        def match() -> dict[str, Any] | None:
            for event in self.events(kind):
                if all(event.get(k) == v for k, v in fields.items()):
                    return event
            return None

        found: dict[str, Any] = self.wait_for(match, f"{kind} {fields}")
        return found

    def status(self) -> dict[str, Any]:
        data = self.cli.json("status")
        assert isinstance(data, dict)
        return data

    def stop(self) -> int:
        assert self.process is not None
        self.process.send_signal(signal.SIGTERM)
        return self.process.wait(timeout=WAIT)


def slow_squad_yaml(api_base: str, schedule: str) -> str:
    """Squad ``slow``: an outline, then a draft, each a call to the stub server at
    ``api_base`` (its key in ``STUB_KEY``), on ``schedule``."""
    return (
        "name: slow\n"
        f"model: {{name: openai/stub-model, api_base: '{api_base}', api_key_env: STUB_KEY,"
        f" {FREE}}}\n"
        "agents: [{id: writer, role: Writes}]\n"
        "tasks:\n"
        "  - {id: outline, description: Outline it., agent: writer}\n"
        "  - {id: draft, description: Draft it., agent: writer, depends_on: [outline]}\n"
        f"schedule: {schedule}\n"
    )


@pytest.fixture
def daemon(cli: Cli) -> Iterator[Daemon]:
    running = Daemon(cli)
    yield running
    if running.process is not None and running.process.poll() is None:
        running.process.kill()
        running.process.wait()


@pytest.fixture
def cli(tmp_path: Path) -> Cli:
    return Cli(tmp_path)


def write(daemon: Daemon, file: str, name: str, schedule: str) -> Path:
    path = daemon.squads / file
    path.write_text(SQUAD_YAML.format(name=name, schedule=schedule))
    return path


def test_adding_changing_and_removing_files_reschedules_without_a_restart(
    daemon: Daemon,
) -> None:
    write(daemon, "alpha.yaml", "alpha", "{interval: 1d}")
    daemon.start()
    daemon.wait_event("schedule", squad="alpha")

    write(daemon, "beta.yaml", "beta", "{cron: '0 9 * * 1-5', timezone: Asia/Seoul}")
    first = daemon.wait_event("schedule", squad="beta")
    assert first["schedule"] == "cron '0 9 * * 1-5' (Asia/Seoul)"
    assert first["next_fire"].endswith("T00:00:00+00:00")  # 09:00 in Seoul

    write(daemon, "beta.yaml", "beta", "{interval: 2h}")
    daemon.wait_event("reschedule", squad="beta", schedule="every 2h")

    (daemon.squads / "bad.yaml").write_text("name: broken\nagents: [\n")
    daemon.wait_event("load_error", file=str(daemon.squads / "bad.yaml"))

    (daemon.cli.home / "USER.md").write_text("I prefer short answers.\n")
    (daemon.cli.workspaces / "alpha" / "AGENTS.md").write_text("Cite tickets.\n")
    daemon.wait_for(lambda: len(daemon.events("boot_changed")) >= 1, "boot_changed")
    changed = {f for e in daemon.events("boot_changed") for f in e["files"]}
    daemon.wait_for(
        lambda: (
            {f for e in daemon.events("boot_changed") for f in e["files"]}
            >= {
                str(daemon.cli.home / "USER.md"),
                str(daemon.cli.workspaces / "alpha" / "AGENTS.md"),
            }
        ),
        f"both boot files logged (so far {changed})",
    )

    status = daemon.wait_for(
        lambda: (s := daemon.status())["failed_files"] and s, "status with the bad file"
    )
    assert status["daemon"]["state"] == "up" and status["daemon"]["pid"] == daemon.process.pid
    squads = {s["name"]: s for s in status["squads"]}
    assert set(squads) == {"alpha", "beta"}
    assert squads["beta"]["schedule"] == "every 2h" and squads["beta"]["next_fire"]
    assert [Path(f["file"]).name for f in status["failed_files"]] == ["bad.yaml"]
    assert status["queue_length"] == 0 and status["extraction_backlog"] == []

    (daemon.squads / "beta.yaml").unlink()
    daemon.wait_event("unschedule", squad="beta", reason="file removed")

    stopped = daemon.cli("stop")
    assert stopped.returncode == 0, stopped.stderr
    assert daemon.process is not None and daemon.process.wait(timeout=WAIT) == 0
    down = daemon.status()
    assert down["daemon"]["state"] == "down"
    assert [s["name"] for s in down["squads"]] == ["alpha"]
    assert [Path(f["file"]).name for f in down["failed_files"]] == ["bad.yaml"]


def test_an_edited_settings_file_applies_live_and_status_names_what_needs_a_restart(
    daemon: Daemon,
) -> None:
    settings_file = daemon.cli.tmp / "configs" / "settings.yaml"
    write(daemon, "alpha.yaml", "alpha", "{interval: 2h}")
    daemon.start()
    daemon.wait_event("ready")
    settings_file.write_text("memory: {ranking: hashing}\ndaemon: {max_concurrent_runs: 3}\n")
    reloaded = daemon.wait_event("settings_reloaded")
    assert reloaded["applied"] == ["daemon.max_concurrent_runs"]
    assert reloaded["restart_needed"] == ["memory.ranking"]

    text = daemon.wait_for(
        lambda: "restart the daemon" in (out := daemon.cli("status").stdout) and out,
        "status naming the restart",
    )
    assert "settings.yaml changed memory.ranking: restart the daemon to apply" in text
    assert "next jobs: consolidation " in text and " retention " in text
    assert daemon.status()["settings_restart_needed"] == ["memory.ranking"]
    assert daemon.stop() == 0


def test_second_daemon_for_a_home_exits_1_and_a_dead_ones_lock_is_taken_over(
    daemon: Daemon,
) -> None:
    first = daemon.start()
    daemon.wait_event("start")
    second = daemon.cli("daemon")
    assert second.returncode == 1
    assert f"a daemon is already running for {daemon.cli.home} (pid {first.pid})" in second.stderr
    assert "Traceback" not in second.stderr
    first.kill()  # no clean-up at all: the pid stays in the file
    first.wait()
    assert (daemon.cli.home / "daemon.pid").read_text().strip() == str(first.pid)
    assert daemon.status()["daemon"]["state"] == "down"
    nothing = daemon.cli("stop")
    assert nothing.returncode == 1 and "no daemon is running" in nothing.stderr

    again = daemon.cli("up", "--once")
    assert again.returncode == 0, again.stderr
    assert daemon.events("start")[-1]["took_over_from"] == first.pid


def test_sigterm_lets_the_step_finish_and_the_next_start_resumes_the_run(
    daemon: Daemon,
) -> None:
    from squad.model.stub_answers import answer, slow
    from squad.model.testing import OpenAIStubServer

    with OpenAIStubServer() as stub:
        stub.script(slow(2.0, answer("The outline.")), answer("The draft."))
        (daemon.squads / "slow.yaml").write_text(
            slow_squad_yaml(stub.url, "{interval: 1d, run_on_start: true}")
        )
        daemon.cli.env["STUB_KEY"] = "test-key"
        daemon.start()
        daemon.wait_for(lambda: stub.requests, "the first model call")
        assert daemon.stop() == 0
        (end,) = daemon.events("run_end")
        assert end["status"] == "interrupted"
        assert daemon.events("stop")[-1]["reason"] == "SIGTERM"
        workspace = daemon.cli.workspaces / "slow"
        assert (workspace / "tasks" / "outline" / "output.md").read_text().strip() == "The outline."
        assert not (workspace / "tasks" / "draft" / "output.md").exists()
        status = daemon.status()["squads"][0]["last_run"]
        assert (status["id"], status["status"]) == (end["run_id"], "interrupted")

        resumed = daemon.cli("daemon", "--once")
        assert resumed.returncode == 0, resumed.stderr
        start = daemon.events("run_start")[-1]
        assert (start["trigger"], start["run_id"]) == ("resume", end["run_id"])
        final = daemon.events("run_end")[-1]
        assert (final["run_id"], final["status"]) == (end["run_id"], "succeeded")
        assert len(stub.requests) == 2  # the outline was not asked for again
        assert (workspace / "tasks" / "draft" / "output.md").read_text().strip() == "The draft."


def test_a_missing_squads_folder_is_bad_usage(cli: Cli) -> None:
    result = cli("daemon", "--configs", str(cli.tmp / "nope"))
    assert result.returncode == 2
    assert "does not exist" in result.stderr and "Traceback" not in result.stderr


def test_help_lists_the_daemon_commands(cli: Cli) -> None:
    result = cli("--help")
    for command in ("daemon", "up", "status", "stop"):
        assert command in result.stdout
    code = (
        "import sys, squad.cli; print([m for m in ('apscheduler', 'watchdog') if m in sys.modules])"
    )
    imported = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert imported.stdout.strip() == "[]"
    assert json.loads(cli("status", "--json").stdout)["daemon"]["state"] == "down"


def test_stop_says_stopped_only_once_the_daemon_process_is_gone(daemon: Daemon) -> None:
    write(daemon, "a.yaml", "alpha", "{interval: 2h}")
    daemon.start("--no-http")
    daemon.wait_event("ready")
    stopped = daemon.cli("stop")
    assert stopped.returncode == 0, stopped.stderr
    assert daemon.process is not None
    assert daemon.process.poll() == 0, "squad stop returned while the daemon was still exiting"
    assert "stopped" in stopped.stdout


LINGERER = """\
import signal, sys, time
from pathlib import Path
from squad.daemon.lock import DaemonLock

lock = DaemonLock(Path(sys.argv[1]))
signal.signal(signal.SIGTERM, lambda *_: lock.release())  # lets go of the home, lives on
lock.acquire()
print("locked", flush=True)
time.sleep(600)
"""


def test_stop_says_so_when_the_process_outlives_its_lock_past_the_timeout(cli: Cli) -> None:
    """A daemon that let go of the home but has not exited by --timeout: exit 1 and a
    message naming its pid, never "stopped"."""
    cli.home.mkdir(parents=True)
    with subprocess.Popen(
        [sys.executable, "-c", LINGERER, str(cli.home)], stdout=subprocess.PIPE, text=True
    ) as lingerer:
        try:
            assert lingerer.stdout is not None
            assert lingerer.stdout.readline().strip() == "locked"
            stopped = cli("stop", "--timeout", "1")
            assert stopped.returncode == 1
            assert "stopped" not in stopped.stdout
            assert f"pid {lingerer.pid}" in stopped.stderr
            assert "has not exited" in stopped.stderr
            assert lingerer.poll() is None
        finally:
            lingerer.kill()


def test_a_daemon_killed_by_a_fatal_signal_leaves_every_threads_stack_in_its_stderr(
    daemon: Daemon,
) -> None:
    write(daemon, "alpha.yaml", "alpha", "{interval: 1d}")
    process = daemon.start()
    daemon.wait_event("ready")
    process.send_signal(signal.SIGABRT)  # as a C extension's failed assertion would
    assert process.wait(timeout=WAIT) == -signal.SIGABRT
    err = (daemon.cli.tmp / "daemon.err").read_text()
    assert "Fatal Python error: Aborted" in err
    assert "Current thread" in err and "Thread 0x" in err  # the others' stacks too
    assert 'File "' in err  # Python frames, not just the signal's name
