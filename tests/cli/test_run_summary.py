"""What ``squad run`` says at its end agrees with ``squad status``, ``squad runs`` and the run
log: its turns, its duration, and how to approve a paused run (offline model, in process)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from squad.daemon.runs import run_end_fields
from squad.runtime.run_result import RunResult
from squad.store.records import RunRecord, RunStatus, run_duration_s
from tests.cli.test_cli import Cli
from tests.conftest import EXAMPLES

EXAMPLE = next(p for p in EXAMPLES if p.stem == "docs-site")


@pytest.fixture
def cli(tmp_path: Path) -> Cli:
    return Cli(tmp_path, in_process=True)


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    """The four-task example in the squads folder ``squad status`` reads."""
    folder = tmp_path / "configs" / "squads"
    folder.mkdir(parents=True)
    path = folder / EXAMPLE.name
    path.write_text(EXAMPLE.read_text())
    return path


def test_four_task_run_paused_and_approved_reports_four_turns(cli: Cli, docs: Path) -> None:
    paused = json.loads(cli("run", docs, "--json").stdout)
    assert paused["status"] == "awaiting_approval"
    assert (paused["turns"], paused["model_calls"]) == (3, 3)
    done = cli("approve", paused["run_id"], "publish")
    assert done.returncode == 0, done.stderr
    # The approval's process made one turn; the run made four, one per task.
    assert "  turns: 4 (4 model calls)" in done.stdout
    events = cli.json("logs", "docs-site")
    assert sum(e["event"] == "model_call" for e in events) == 4


def test_run_summary_status_and_runs_list_show_one_duration(cli: Cli, docs: Path) -> None:
    ran = cli("run", docs, "--auto-approve", "--json")
    assert ran.returncode == 0, ran.stderr
    result = json.loads(ran.stdout)
    assert (result["turns"], result["model_calls"]) == (4, 4)
    took = result["duration_s"]
    assert isinstance(took, float) and took > 0
    status = cli.json("status")
    last = next(s for s in status["squads"] if s["name"] == "docs-site")["last_run"]
    assert last["id"] == result["run_id"] and last["duration_s"] == took
    listed = cli.json("runs", "list")
    assert [r["duration_s"] for r in listed if r["run_id"] == result["run_id"]] == [took]
    text = cli("run", docs, "--auto-approve")
    second = next(s for s in cli.json("status")["squads"] if s["name"] == "docs-site")
    shown = second["last_run"]["duration_s"]
    assert f"took: {shown}s" in text.stdout
    assert f"succeeded in {shown}s" in cli("status").stdout


def test_a_paused_run_has_no_duration_until_it_ends_then_one_everywhere(
    cli: Cli, docs: Path
) -> None:
    paused = json.loads(cli("run", docs, "--json").stdout)
    run_id = paused["run_id"]
    assert paused["duration_s"] is None

    def shown() -> tuple[object, object]:
        status = cli.json("status")
        last = next(s for s in status["squads"] if s["name"] == "docs-site")["last_run"]
        (listed,) = [r for r in cli.json("runs", "list") if r["run_id"] == run_id]
        return last["duration_s"], listed["duration_s"]

    assert shown() == (None, None)  # its commit at the pause is not its end
    done = json.loads(cli("approve", run_id, "publish", "--json").stdout)
    assert done["duration_s"] is not None
    assert shown() == (done["duration_s"], done["duration_s"])


def test_run_duration_counts_from_first_running_to_the_end_waits_included() -> None:
    start = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
    end = start + timedelta(minutes=10, seconds=1.26)
    assert run_duration_s(start, end) == 601.3
    assert run_duration_s(start, None) is None
    assert run_duration_s(None, end) is None
    running = RunRecord("r", "s", RunStatus.RUNNING, "manual", start, start, None, None, 0, 0, 0.0)
    assert running.duration_s() is None
    assert running.duration_s(now=start + timedelta(seconds=2)) == 2.0
    paused = RunRecord(
        "r", "s", RunStatus.AWAITING_APPROVAL, "manual", start, start, None, None, 0, 0, 0.0
    )
    assert paused.duration_s(now=end) is None  # not running, not ended: no figure


def test_daemon_run_end_event_carries_the_runs_store_duration(tmp_path: Path) -> None:
    result = RunResult("r", "s", "succeeded", tmp_path, duration_s=12.5)
    assert run_end_fields(result)["duration_s"] == 12.5


def test_logs_names_the_run_and_how_to_approve_it_while_paused(cli: Cli, docs: Path) -> None:
    run_id = json.loads(cli("run", docs, "--json").stdout)["run_id"]
    shown = cli("logs", "docs-site")
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert lines[0].startswith(f"run {run_id} of docs-site (")
    assert lines[-1] == (
        f"run {run_id} is waiting for approval of task publish (writer): "
        f"squad approve {run_id} publish  (--reject --reason TEXT to refuse)"
    )
    by_id = cli("logs", "docs-site", "--run", run_id)
    assert by_id.stdout == shown.stdout
    assert cli("approve", run_id, "publish").returncode == 0
    after = cli("logs", "docs-site").stdout
    assert after.startswith(f"run {run_id} of docs-site (") and "waiting for approval" not in after
    assert isinstance(cli.json("logs", "docs-site"), list)  # --json stays the events alone


def test_status_lists_the_paused_run_with_its_approve_command(cli: Cli, docs: Path) -> None:
    run_id = json.loads(cli("run", docs, "--json").stdout)["run_id"]
    text = cli("status").stdout
    assert "waiting for approval (1):" in text
    assert f"docs-site run {run_id} task publish (writer)" in text
    assert f"squad approve {run_id} publish" in text
    waiting = cli.json("status")["waiting_approvals"]
    assert [(w["run_id"], w["task"], w["agent"]) for w in waiting] == [
        (run_id, "publish", "writer")
    ]


def test_max_turns_counts_the_turns_before_an_approval_too(cli: Cli, docs: Path) -> None:
    docs.write_text(docs.read_text().replace("max_turns: 50", "max_turns: 3"))
    paused = json.loads(cli("run", docs, "--json").stdout)
    assert (paused["status"], paused["turns"]) == ("awaiting_approval", 3)
    stopped = cli("approve", paused["run_id"], "publish", "--json")
    assert stopped.returncode == 1
    result = json.loads(stopped.stdout)
    assert (result["status"], result["turns"], result["model_calls"]) == ("stopped", 3, 3)
    assert "the run used its 3 agent turns" in result["error"]


def test_a_result_sent_as_its_json_object_reads_back_as_the_same_result() -> None:
    paused = RunResult(
        "a" * 32,
        "demo",
        "awaiting_approval",
        Path("/w/demo"),
        tasks={"draft": "done", "edit": "awaiting_approval"},
        turns=3,
        model_calls=4,
        prompt_tokens=900,
        completion_tokens=120,
        cost_usd=0.0125,
        awaiting="edit",
    )
    failed = RunResult("b" * 32, "demo", "failed", Path("/w/demo"), error="x", duration_s=2.5)
    for result in (paused, failed):
        assert RunResult.from_dict(json.loads(json.dumps(result.to_dict()))) == result
