"""``squad run / approve / resume / logs / chat`` through the console script, offline model."""

from __future__ import annotations

import json

import pytest

from tests.cli.test_cli import Cli, cli  # noqa: F401 - the fixture is reused
from tests.conftest import EXAMPLES

pytestmark = pytest.mark.slow
DOCS = next(p for p in EXAMPLES if p.stem == "docs-site")
CODE = next(p for p in EXAMPLES if p.stem == "code-review")


def test_run_pauses_at_approval_then_approve_finishes_it(cli: Cli) -> None:  # noqa: F811
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


def test_hierarchical_run_writes_a_plan_and_succeeds(cli: Cli) -> None:  # noqa: F811
    result = cli("run", CODE)
    assert result.returncode == 0, result.stderr
    assert "run " in result.stdout and ": succeeded" in result.stdout
    assert (cli.workspaces / "code-review" / "plans" / "plan-001.md").is_file()
    rejected = cli("run", DOCS, "--json")
    run_id = json.loads(rejected.stdout)["run_id"]
    no = cli("approve", run_id, "publish", "--reject", "--reason", "tone", "--json")
    assert no.returncode == 1
    assert json.loads(no.stdout)["tasks"]["publish"] == "failed"


def test_chat_replies_once_and_keeps_the_conversation(cli: Cli) -> None:  # noqa: F811
    cli.json("create", DOCS)
    first = cli("chat", "docs-site", "writer", "-m", "Please remember that we deploy on Fridays.")
    assert first.returncode == 0, first.stderr
    memory = (cli.workspaces / "docs-site" / "agents" / "writer" / "memory.md").read_text()
    assert "We deploy on Fridays." in memory
    second = cli("chat", "docs-site", "writer", "-m", "Thanks, that is all.")
    assert second.returncode == 0 and second.stdout.strip()


def test_unknown_run_and_squad_are_usage_errors(cli: Cli) -> None:  # noqa: F811
    assert cli("resume", "nope").returncode == 2
    assert cli("run", "no-such-squad").returncode == 2
    assert cli("logs", "no-such-squad").returncode == 2
