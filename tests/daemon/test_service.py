"""The daemon in this process: start-up runs, resumes, hot reload, stop, its log and heartbeat.

The offline model (through litellm, as in production) and the OpenAI stub server on 127.0.0.1
do the model's part; nothing of squad's own is mocked.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from squad import flock
from squad.app import App
from squad.daemon.eventlog import read_daemon_log
from squad.daemon.service import Daemon
from squad.manager import SquadManager
from squad.memory.agent import AgentContext
from squad.memory.service import MemoryService
from squad.model.stub_answers import status
from squad.model.testing import FREE_PRICES as FREE
from squad.model.testing import OpenAIStubServer
from squad.runtime.runlock import lock_path
from squad.settings import Settings
from squad.store import RunStatus, Store
from tests.conftest import BASIC_YAML
from tests.support.waiting import wait_for

WAIT = 60.0


def squad_yaml(name: str, schedule: str = "", *, model: str = "") -> str:
    text = BASIC_YAML.replace("name: demo", f"name: {name}")
    if model:
        text = text.replace("goal:", f"model: {model}\ngoal:", 1)
    return text + (f"schedule: {schedule}\n" if schedule else "")


def write_squad(settings: Settings, file: str, text: str) -> Path:
    settings.squads_dir.mkdir(parents=True, exist_ok=True)
    path = settings.squads_dir / file
    path.write_text(text)
    return path


def events(settings: Settings, kind: str | None = None) -> list[dict[str, Any]]:
    found = read_daemon_log(settings.home / "daemon.jsonl")
    return [e for e in found if kind is None or e["event"] == kind]


@pytest.fixture
def store(settings: Settings) -> Iterator[Store]:
    with Store.open(settings.database_url) as opened:
        yield opened


def test_once_runs_the_on_start_squads_then_exits_zero(settings: Settings, store: Store) -> None:
    write_squad(settings, "a.yaml", squad_yaml("alpha", "{interval: 1d, run_on_start: true}"))
    write_squad(settings, "b.yaml", squad_yaml("beta", "{cron: '0 9 * * 1-5'}"))

    assert Daemon(App.open(settings, store=store), exit_when_idle=True).run() == 0

    (run,) = store.list_runs("alpha")
    assert (run.status, run.trigger) == (RunStatus.SUCCEEDED, "on_start")
    assert store.list_runs("beta") == []
    assert (settings.workspaces / "beta" / ".squad-config.json").is_file()
    kinds = [e["event"] for e in events(settings)]
    assert kinds[0] == "start" and kinds[-1] == "stop"
    assert {"load", "run_start", "run_end"} <= set(kinds)
    (end,) = events(settings, "run_end")
    assert (end["squad"], end["status"], end["run_id"]) == ("alpha", "succeeded", run.id)
    assert end["prompt_tokens"] > 0 and end["duration_s"] == run.duration_s() is not None
    assert events(settings, "stop")[0]["reason"] == "idle"
    heartbeat = store.daemon.get(str(settings.home))
    assert heartbeat is not None and heartbeat.stopped_at is not None
    assert not (settings.home / "daemon.pid").read_text()


def test_once_exits_one_when_a_run_fails(
    settings: Settings, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("STUB_KEY", "stub-key")
    with OpenAIStubServer(handler=lambda _: status(400, "refused")) as stub:
        model = f"{{name: openai/stub, api_base: '{stub.url}', api_key_env: STUB_KEY, {FREE}}}"
        write_squad(settings, "a.yaml", squad_yaml("alpha", "{run_on_start: true}", model=model))
        assert Daemon(App.open(settings, store=store), exit_when_idle=True).run() == 1
    (run,) = store.list_runs("alpha")
    assert run.status is RunStatus.FAILED


def test_bad_file_is_reported_and_the_other_squads_still_run(
    settings: Settings, store: Store
) -> None:
    write_squad(settings, "a.yaml", squad_yaml("alpha", "{run_on_start: true}"))
    write_squad(settings, "bad.yaml", "name: beta\nagents: [\n")
    write_squad(settings, "twin.yaml", squad_yaml("alpha"))
    assert Daemon(App.open(settings, store=store), exit_when_idle=True).run() == 0
    assert store.list_runs("alpha")[0].status is RunStatus.SUCCEEDED
    errors = {Path(e["file"]).name: e["error"] for e in events(settings, "load_error")}
    assert set(errors) == {"bad.yaml", "twin.yaml"}
    assert "bad.yaml:" in errors["bad.yaml"]
    assert "already defined by a.yaml" in errors["twin.yaml"]


def test_start_resumes_interrupted_and_dead_runs_but_leaves_paused_and_live_foreign_ones(
    settings: Settings, store: Store
) -> None:
    for name in ("alpha", "beta", "gamma"):
        write_squad(settings, f"{name}.yaml", squad_yaml(name))
    manager = SquadManager(settings, store=store)
    for name in ("alpha", "beta", "gamma"):
        manager.create_from_file(settings.squads_dir / f"{name}.yaml")
    runs = {}
    for name, squad, trigger, status_ in (
        ("paused", "alpha", "schedule", RunStatus.AWAITING_APPROVAL),
        ("ours", "alpha", "schedule", RunStatus.RUNNING),  # left by a daemon that died
        ("foreign", "beta", "manual", RunStatus.RUNNING),  # a `squad run` still at it
        ("dead", "gamma", "manual", RunStatus.RUNNING),  # a `squad run` that was killed
    ):
        run = store.create_run(squad, trigger=trigger)
        store.update_run(run.id, status=status_)
        runs[name] = run.id
    note = json.dumps({"run_id": runs["foreign"], "pid": 1, "since": "2026-01-01T00:00:00Z"})
    foreign = flock.acquire(lock_path(settings.locks_dir, "beta"), note)

    try:
        assert Daemon(App.open(settings, store=store), exit_when_idle=True).run() == 1
    finally:
        foreign.release()

    # "ours" and "dead" died before their first checkpoint: they cannot resume, so they are
    # failed for good rather than retried at every start.
    settled = {e["run_id"] for e in events(settings, "run_settled")}
    assert settled == {runs["ours"], runs["dead"]}
    started = {(e["trigger"], e["run_id"]) for e in events(settings, "run_start")}
    assert started == {("resume", runs["ours"]), ("resume", runs["dead"])}
    for name in ("ours", "dead"):
        run = store.get_run(runs[name])
        assert run is not None and run.status is RunStatus.FAILED
        assert "could not resume" in str(run.error)
    for name, expected in (("paused", "awaiting_approval"), ("foreign", "running")):
        run = store.get_run(runs[name])
        assert run is not None and run.status == expected


def test_missing_squads_folder_is_a_usage_error(settings: Settings) -> None:
    from squad.errors import UsageError

    with pytest.raises(UsageError, match="does not exist"):
        Daemon(App.open(settings), exit_when_idle=True).run()


def test_files_added_changed_and_removed_while_running_are_rescheduled(
    settings: Settings, store: Store
) -> None:
    write_squad(settings, "a.yaml", squad_yaml("alpha", "{interval: 1d}"))
    daemon = Daemon(App.open(settings, store=store), heartbeat_s=0.2, debounce_s=0.1)
    codes: list[int] = []
    thread = threading.Thread(target=lambda: codes.append(daemon.run()))
    thread.start()
    try:
        wait_for(lambda: bool(events(settings, "schedule")), "alpha scheduled")
        write_squad(settings, "b.yaml", squad_yaml("beta", "{interval: 2h, run_on_start: true}"))
        wait_for(lambda: bool(events(settings, "run_end")), "beta's on-start run")
        write_squad(settings, "a.yaml", squad_yaml("alpha", "{cron: '0 0 * * 0'}"))
        wait_for(lambda: bool(events(settings, "reschedule")), "alpha rescheduled")
        (settings.squads_dir / "b.yaml").unlink()
        wait_for(lambda: bool(events(settings, "unschedule")), "beta unscheduled")
        wait_for(
            lambda: [s["name"] for s in daemon.state()["squads"]] == ["alpha"], "state updated"
        )
        (squad,) = daemon.state()["squads"]
        assert squad["schedule"] == "cron '0 0 * * 0' (UTC)"
        assert squad["next_fire"] is not None
    finally:
        daemon.request_stop("test")
        thread.join(WAIT)
    assert codes == [0]
    (end,) = events(settings, "run_end")
    assert (end["squad"], end["status"]) == ("beta", "succeeded")
    assert events(settings, "unschedule")[0]["reason"] == "file removed"
    assert events(settings, "stop")[0]["reason"] == "test"


def test_a_gated_squad_on_a_schedule_keeps_one_run_waiting_and_skips_its_fires(
    settings: Settings, store: Store
) -> None:
    gated = squad_yaml("gated", "{interval: 1s}").replace(
        "agent: writer, depends_on: [outline]}",
        "agent: writer, depends_on: [outline], approval: true}",
    )
    write_squad(settings, "gated.yaml", gated)
    daemon = Daemon(App.open(settings, store=store), heartbeat_s=0.2, debounce_s=0.1)
    thread = threading.Thread(target=daemon.run)
    thread.start()
    try:
        wait_for(
            lambda: len(events(settings, "fire_skipped_waiting_approval")) >= 3,
            "three fires skipped while the first run waits",
        )
    finally:
        daemon.request_stop("test")
        thread.join(WAIT)
    waiting = [r for r in store.list_runs("gated") if r.status is RunStatus.AWAITING_APPROVAL]
    assert len(waiting) == 1 and len(store.list_runs("gated")) == 1
    skipped = events(settings, "fire_skipped_waiting_approval")
    assert {e["waiting"] for e in skipped} == {waiting[0].id}
    assert {e["trigger"] for e in skipped} == {"schedule"}


def test_boot_file_edits_reach_the_next_prompt_without_a_restart(
    settings: Settings, store: Store, make_spec: Callable[..., Any]
) -> None:
    spec = make_spec()
    workspace = SquadManager(settings, store=store).create(spec).path
    memory = MemoryService(settings, store)
    context = AgentContext.of(spec, "writer", workspace)
    memory.system_prompt(context)  # first prompt: writes the default SOUL.md
    (settings.home / "SOUL.md").write_text("You are Ada, terse and exact.\n")
    (workspace / "AGENTS.md").write_text("Always cite the ticket number.\n")
    prompt = memory.system_prompt(context)
    assert "You are Ada, terse and exact." in prompt
    assert "Always cite the ticket number." in prompt
    (settings.home / "SOUL.md").write_text("You are Grace, warm and thorough.\n")
    prompt = memory.system_prompt(context)
    assert "Grace" in prompt and "Ada" not in prompt


def test_start_up_extracts_for_agents_whose_replies_were_left_unread(
    settings: Settings, store: Store
) -> None:
    """A chat process that ended before its pass ran leaves replies past the watermark: the
    daemon's sweep (at start-up, then on its cron) gives those agents their pass."""
    write_squad(
        settings,
        "a.yaml",
        squad_yaml("alpha").replace("goal:", "memory: {trigger_interval: 2}\ngoal:", 1),
    )
    for line in ("In this repo the API listens on port 8080.", "We deploy on Fridays."):
        store.conversation.record_message("alpha", "writer", "user", line, session_id="chat")
        store.conversation.record_message("alpha", "writer", "assistant", "OK.", session_id="chat")
    store.conversation.record_message("alpha", "planner", "user", "Hi", session_id="chat")

    assert Daemon(App.open(settings, store=store), exit_when_idle=True).run() == 0

    [run] = store.extraction.runs("alpha", "writer")
    assert run.status == "done"
    assert store.extraction.runs("alpha", "planner") == []  # one reply short of the interval
    memory = (settings.workspaces / "alpha" / "agents" / "writer" / "memory.md").read_text()
    assert "In this repo the API listens on port 8080." in memory
    (sweep,) = [e for e in events(settings, "job_end") if e["job"] == "extraction"]
    assert sweep["report"]["checked"] == ["alpha/planner", "alpha/writer"]


def test_the_default_soul_a_run_writes_is_not_logged_as_a_boot_change_but_a_persons_edit_is(
    settings: Settings, store: Store
) -> None:
    from tests.hostile.test_daemon_hostile import running

    write_squad(settings, "a.yaml", squad_yaml("alpha", "{interval: 1d, run_on_start: true}"))
    soul = settings.home / "SOUL.md"
    with running(settings, store) as daemon:
        wait_for(lambda: bool(events(settings, "run_end")), "the start-up run")
        assert soul.is_file(), "the run wrote the default persona"
        (settings.home / "USER.md").write_text("Short answers.\n")
        wait_for(lambda: bool(events(settings, "boot_changed")), "the USER.md edit logged")
        logged = [f for e in events(settings, "boot_changed") for f in e["files"]]
        assert logged == [str(settings.home / "USER.md")]

        soul.write_text("You are terse.\n")  # a person's edit
        wait_for(lambda: len(events(settings, "boot_changed")) == 2, "the SOUL.md edit logged")
        assert events(settings, "boot_changed")[1]["files"] == [str(soul)]
        assert daemon.state()["phase"] == "running"


def _idle_threads(settings: Settings, squads: int) -> int:
    """Threads the daemon started that are alive while it idles over ``squads`` squads (not
    every thread of the process: one an earlier test left ending would count too)."""
    from tests.hostile.test_daemon_hostile import running

    before = set(threading.enumerate())
    for i in range(squads):
        write_squad(settings, f"s{i}.yaml", squad_yaml(f"s{i}", "{interval: 300d}"))
    with Store.open(settings.database_url) as opened, running(settings, opened) as daemon:
        wait_for(lambda: len(daemon.state()["squads"]) == squads, "the squads loaded")
        time.sleep(0.3)  # a few beats: nothing more starts on its own
        return len(set(threading.enumerate()) - before)


def test_the_daemons_thread_count_does_not_grow_with_its_squads(tmp_path: Path) -> None:
    def home(name: str) -> Settings:
        root = tmp_path / name
        return Settings.load(
            {
                "SQUAD_HOME": str(root / "home"),
                "SQUAD_WORKSPACES": str(root / "workspaces"),
                "SQUAD_CONFIGS": str(root / "configs"),
            },
            cwd=root,
        )

    few, many = _idle_threads(home("few"), 1), _idle_threads(home("many"), 12)
    assert many == few, f"{many - few} more threads for 11 more squads"


def test_a_workspace_agents_md_edit_is_logged_without_a_watch_of_its_own(
    settings: Settings, store: Store
) -> None:
    from tests.hostile.test_daemon_hostile import running

    write_squad(settings, "a.yaml", squad_yaml("alpha", "{interval: 300d}"))
    with running(settings, store):
        rules = settings.workspaces / "alpha" / "AGENTS.md"
        rules.write_text("Cite tickets.\n")
        wait_for(lambda: bool(events(settings, "boot_changed")), "the AGENTS.md edit logged")
        assert events(settings, "boot_changed")[0]["files"] == [str(rules)]
        rules.touch()  # no byte changed
        time.sleep(0.5)
    assert len(events(settings, "boot_changed")) == 1
