"""``squad run`` with a daemon up for the home: the installed command in a subprocess hands the
run to a real ``squad daemon`` (its HTTP API on 127.0.0.1) and follows it; or runs it itself
when the daemon would run it differently. Waits poll with a generous timeout; nothing asserts
on speed (``bench.status_bench`` measures the hand-off)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from squad.model.stub_answers import answer, slow
from squad.model.testing import OpenAIStubServer
from tests.cli.test_cli import SQUAD, Cli
from tests.daemon.test_daemon_cli import Daemon, slow_squad_yaml

pytestmark = pytest.mark.slow
WAIT = 60.0

DEMO = """\
name: demo
agents: [{id: writer, role: Writes}, {id: editor, role: Edits}]
tasks:
  - {id: draft, description: Draft it., agent: writer}
  - {id: edit, description: Edit it., agent: editor, depends_on: [draft]}
schedule: {interval: 1d}
"""


@pytest.fixture
def cli(tmp_path: Path) -> Cli:
    return Cli(tmp_path)


@pytest.fixture
def daemon(cli: Cli) -> Iterator[Daemon]:
    running = Daemon(cli)
    (running.squads / "demo.yaml").write_text(DEMO)
    yield running
    if running.process is not None and running.process.poll() is None:
        running.process.kill()
        running.process.wait()


def up(daemon: Daemon, *args: str) -> None:
    daemon.start(*args)
    daemon.wait_for(
        lambda: (s := daemon.status())["daemon"]["state"] == "up" and s.get("http"),
        "the daemon up and serving",
    )


def ran_in_daemon(daemon: Daemon, run_id: str) -> bool:
    return any(e.get("run_id") == run_id for e in daemon.events("run_end"))


def run_id_of(stdout: str) -> str:
    first = stdout.splitlines()[0]  # "run <id>: succeeded"
    return first.split()[1].rstrip(":")


def test_run_with_the_daemon_up_is_run_by_it_and_reads_as_a_run_of_the_commands_own(
    daemon: Daemon, cli: Cli
) -> None:
    up(daemon)
    handed = cli("run", "demo", "--goal", "Ship the handed run.")
    assert handed.returncode == 0, handed.stderr
    run_id = run_id_of(handed.stdout)
    assert ran_in_daemon(daemon, run_id)
    assert "draft: writer working" in handed.stderr and "edit: done" in handed.stderr
    assert "tasks: 2 done" in handed.stdout

    here = cli("run", "demo", "--no-daemon")
    assert here.returncode == 0, here.stderr
    assert not ran_in_daemon(daemon, run_id_of(here.stdout))
    for line in ("tasks: 2 done", "workspace: "):
        assert line in here.stdout and line in handed.stdout

    as_json = cli("run", daemon.squads / "demo.yaml", "--json")
    assert as_json.returncode == 0, as_json.stderr
    result = json.loads(as_json.stdout)
    assert ran_in_daemon(daemon, result["run_id"])
    local = json.loads(cli("run", "demo", "--no-daemon", "--json").stdout)
    assert set(result) == set(local)
    assert (result["status"], result["tasks"]) == ("succeeded", local["tasks"])
    runs = cli.json("runs", "list", "demo")
    assert isinstance(runs, list) and {r["trigger"] for r in runs} == {"manual"}


def test_the_command_imports_no_graph_or_store_when_the_daemon_runs_it(
    daemon: Daemon, cli: Cli
) -> None:
    up(daemon)
    code = (
        "import sys\n"
        "from squad.cli import main\n"
        "sys.argv = ['squad', 'run', 'demo']\n"
        "try:\n"
        "    main()\n"
        "except SystemExit as end:\n"
        "    code = end.code\n"
        "heavy = sorted(m for m in ('langgraph', 'sqlalchemy', 'litellm') if m in sys.modules)\n"
        "print(code, heavy, file=sys.stderr)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        env=cli.env,
        cwd=cli.tmp,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.stderr.splitlines()[-1] == "0 []", done.stderr
    assert ran_in_daemon(daemon, run_id_of(done.stdout))


def test_what_the_daemon_would_run_differently_runs_in_the_command(
    daemon: Daemon, cli: Cli
) -> None:
    up(daemon)
    other_key = {**cli.env, "OPENAI_API_KEY": "sk-exported-since"}
    done = subprocess.run(
        [str(SQUAD), "run", "demo"], env=other_key, cwd=cli.tmp, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert not ran_in_daemon(daemon, run_id_of(done.stdout))

    copy = cli.tmp / "demo-copy.yaml"
    copy.write_text(DEMO)
    done = cli("run", copy)
    assert done.returncode == 0, done.stderr
    assert not ran_in_daemon(daemon, run_id_of(done.stdout))

    with_model = cli("run", "demo", "--model", "offline")
    assert with_model.returncode == 0, with_model.stderr
    assert not ran_in_daemon(daemon, run_id_of(with_model.stdout))
    assert daemon.events("run_requested") == []


@contextmanager
def handed_slow_run(
    daemon: Daemon, cli: Cli, first_call_s: float
) -> Iterator[tuple[OpenAIStubServer, subprocess.Popen[str]]]:
    """``squad run slow`` in the background, handed to the daemon, once the daemon's run
    makes its first model call (which the stub answers after ``first_call_s``)."""
    with OpenAIStubServer() as stub:
        stub.script(slow(first_call_s, answer("The outline.")), answer("The draft."))
        (daemon.squads / "slow.yaml").write_text(slow_squad_yaml(stub.url, "{interval: 1d}"))
        daemon.cli.env["STUB_KEY"] = "test-key"
        up(daemon)
        command = subprocess.Popen(
            [str(SQUAD), "run", "slow"],
            env=cli.env,
            cwd=cli.tmp,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        daemon.wait_for(lambda: stub.requests, "the first model call")
        yield stub, command


def test_ctrl_c_stops_a_handed_run_at_its_next_checkpoint_and_resume_finishes_it(
    daemon: Daemon, cli: Cli
) -> None:
    with handed_slow_run(daemon, cli, 2.0) as (stub, command):
        command.send_signal(signal.SIGINT)
        stdout, stderr = command.communicate(timeout=WAIT)
        assert command.returncode == 1, stderr
        assert "stopping after the current step" in stderr
        run_id = run_id_of(stdout)
        assert stdout.splitlines()[0] == f"run {run_id}: interrupted"
        (end,) = daemon.events("run_end")
        assert (end["run_id"], end["status"]) == (run_id, "interrupted")
        workspace = cli.workspaces / "slow"
        assert (workspace / "tasks" / "outline" / "output.md").read_text().strip() == "The outline."

        resumed = cli("resume", run_id)
        assert resumed.returncode == 0, resumed.stderr
        assert len(stub.requests) == 2  # the outline was not asked for again
        ends = [e["status"] for e in daemon.events("run_end") if e["run_id"] == run_id]
        assert ends == ["interrupted", "succeeded"]  # the daemon resumed it too
        assert [e["trigger"] for e in daemon.events("run_requested")] == ["manual", "resume"]


def test_an_answer_to_a_gate_is_carried_out_by_the_daemon_or_refused_as_the_command_would(
    daemon: Daemon, cli: Cli
) -> None:
    gated = DEMO.replace("depends_on: [draft]}", "depends_on: [draft], approval: true}")
    (daemon.squads / "demo.yaml").write_text(gated)
    up(daemon)
    paused = cli("run", "demo")
    assert paused.returncode == 1, paused.stderr
    run_id = run_id_of(paused.stdout)
    assert f"squad approve {run_id} edit" in paused.stdout

    wrong = cli("approve", run_id, "draft")  # not the task it waits on: the command says so
    assert wrong.returncode == 2 and "draft" in wrong.stderr, wrong.stderr
    approved = cli("approve", run_id, "edit", "--reason", "reads well")
    assert approved.returncode == 0, approved.stderr
    assert approved.stdout.splitlines()[0] == f"run {run_id}: succeeded"
    asked = [(e["trigger"], e.get("run_id")) for e in daemon.events("run_requested")]
    assert asked == [("manual", None), ("approval", run_id)]
    ends = [e["status"] for e in daemon.events("run_end") if e["run_id"] == run_id]
    assert ends == ["awaiting_approval", "succeeded"]


def test_a_daemon_killed_under_a_handed_run_ends_the_command_with_what_to_do(
    daemon: Daemon, cli: Cli
) -> None:
    with handed_slow_run(daemon, cli, 8.0) as (_, command):
        assert daemon.process is not None
        os.kill(daemon.process.pid, signal.SIGKILL)
        daemon.process.wait()
        stdout, stderr = command.communicate(timeout=WAIT)
        assert command.returncode == 1 and stdout == ""
        assert "the daemon stopped answering while run " in stderr
        assert "squad resume " in stderr and "Traceback" not in stderr
        run_id = stderr.split("while run ", 1)[1].split()[0]
        listed = cli.json("runs", "list", "slow")
        assert isinstance(listed, list) and [r["run_id"] for r in listed] == [run_id]
