"""``squad run / approve / resume / logs / chat`` through the console script, offline model: in
process where the subject is the output, the installed script where it is the process."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.test_cli import Cli
from tests.conftest import EXAMPLES

DOCS = next(p for p in EXAMPLES if p.stem == "docs-site")
CODE = next(p for p in EXAMPLES if p.stem == "code-review")


@pytest.fixture
def cli(tmp_path: Path) -> Cli:
    return Cli(tmp_path, in_process=True)


def test_run_pauses_at_approval_then_approve_finishes_it(cli: Cli) -> None:
    paused = cli("run", DOCS, "--json")
    assert paused.returncode == 1, paused.stderr
    result = json.loads(paused.stdout)
    assert result["status"] == "awaiting_approval" and result["awaiting"] == "publish"
    assert "outline: done" in paused.stderr
    ws = cli.workspaces / "docs-site"
    assert json.loads((ws / "tasks" / "draft" / "status.json").read_text())["status"] == "done"
    assert (ws / "tasks" / "outline" / "output.md").read_text().strip()
    wrong = cli("approve", result["run_id"], "draft")
    assert wrong.returncode == 2 and "waits for task 'publish'" in wrong.stderr
    done = cli("approve", result["run_id"], "publish", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["tasks"] == {
        "outline": "done",
        "draft": "done",
        "review": "done",
        "publish": "done",
    }
    events = cli.json("logs", "docs-site")
    assert events[0]["event"] == "run_start" and events[-1]["event"] == "run_end"
    assert events[-1]["status"] == "succeeded"
    assert any(e["event"] == "model_call" and e["prompt_tokens"] > 0 for e in events)


def test_hierarchical_run_writes_a_plan_and_succeeds(cli: Cli) -> None:
    result = cli("run", CODE)
    assert result.returncode == 0, result.stderr
    assert "run " in result.stdout and ": succeeded" in result.stdout
    assert (cli.workspaces / "code-review" / "plans" / "plan-001.md").is_file()
    rejected = cli("run", DOCS, "--json")
    run_id = json.loads(rejected.stdout)["run_id"]
    no = cli("approve", run_id, "publish", "--reject", "--reason", "tone", "--json")
    assert no.returncode == 1
    assert json.loads(no.stdout)["tasks"]["publish"] == "failed"


def test_chat_replies_once_and_keeps_the_conversation(cli: Cli) -> None:
    cli.json("create", DOCS)
    first = cli("chat", "docs-site", "writer", "-m", "Please remember that we deploy on Fridays.")
    assert first.returncode == 0, first.stderr
    memory = (cli.workspaces / "docs-site" / "agents" / "writer" / "memory.md").read_text()
    assert "We deploy on Fridays." in memory
    second = cli("chat", "docs-site", "writer", "-m", "Thanks, that is all.")
    assert second.returncode == 0 and second.stdout.strip()


def test_unknown_run_and_squad_are_usage_errors(cli: Cli) -> None:
    assert cli("resume", "nope").returncode == 2
    assert cli("run", "no-such-squad").returncode == 2
    assert cli("logs", "no-such-squad").returncode == 2


@pytest.mark.slow
def test_sigterm_stops_after_the_current_task_and_resume_finishes_it(
    cli: Cli,
) -> None:
    import signal
    import subprocess
    import time

    from squad.model.stub_answers import answer, slow
    from squad.model.testing import FREE_PRICES, OpenAIStubServer
    from tests.cli.test_cli import SQUAD

    with OpenAIStubServer() as stub:
        stub.script(slow(2.0, answer("The outline.")), answer("The draft."))
        definition = cli.tmp / "slow.yaml"
        definition.write_text(
            "name: slow\n"
            f"model: {{name: openai/stub-model, api_base: '{stub.url}', api_key_env: STUB_KEY,"
            f" {FREE_PRICES}}}\n"
            "agents: [{id: writer, role: Writes}]\n"
            "tasks:\n"
            "  - {id: outline, description: Outline it., agent: writer}\n"
            "  - {id: draft, description: Draft it., agent: writer, depends_on: [outline]}\n"
        )
        env = {**cli.env, "STUB_KEY": "test-key"}
        process = subprocess.Popen(
            [str(SQUAD), "run", str(definition), "--json"],
            env=env,
            cwd=cli.tmp,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        deadline = time.monotonic() + 60
        while not stub.requests:
            assert time.monotonic() < deadline and process.poll() is None
            time.sleep(0.05)
        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=60)
        assert process.returncode == 1, err
        stopped = json.loads(out)
        assert stopped["status"] == "interrupted"
        assert "stopping after the current step" in err
        ws = cli.workspaces / "slow"
        assert (ws / "tasks" / "outline" / "output.md").read_text().strip() == "The outline."
        assert not (ws / "tasks" / "draft" / "output.md").exists()
        cli.env["STUB_KEY"] = "test-key"
        resumed = cli("resume", stopped["run_id"], "--json")
        assert resumed.returncode == 0, resumed.stderr
        assert json.loads(resumed.stdout)["tasks"] == {"outline": "done", "draft": "done"}
        assert len(stub.requests) == 2  # the outline was not asked for again


LITELLM_PROBE = """\
import sys
from squad.cli import main

for argv in (["run", sys.argv[1], "--auto-approve"], ["chat", "docs-site", "writer", "-m", "Hi"]):
    sys.argv = ["squad", *argv]
    try:
        main()
    except SystemExit as done:
        assert not done.code, f"squad {' '.join(argv)} exited {done.code}"
print("litellm" in sys.modules, file=sys.stderr)
"""


@pytest.mark.slow
def test_offline_runs_and_chats_never_import_litellm(cli: Cli) -> None:
    """litellm takes seconds and hundreds of MB to import; only a real provider needs it."""
    import subprocess
    import sys

    result = subprocess.run(
        [sys.executable, "-c", LITELLM_PROBE, str(DOCS)],
        env=cli.env,
        cwd=cli.tmp,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert result.stderr.strip().splitlines()[-1] == "False"
