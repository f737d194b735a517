"""A run ``squad run`` hands to the daemon: when the daemon takes it (only when it would run as
in the command's own process), and the ticket that follows it. The daemon runs in this
process on the offline model; the command's side over real HTTP is
``tests/cli/test_run_handoff.py``."""

from __future__ import annotations

import hashlib
import queue
import threading
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from squad.app import App
from squad.daemon.handoff import (
    HandOver,
    Ticket,
    environment_digest,
    settings_digest,
)
from squad.daemon.service import Daemon
from squad.errors import SquadError
from squad.settings import DaemonSettings, Settings
from squad.store import RunStatus, Store
from tests.daemon.test_service import events, squad_yaml, write_squad
from tests.support.waiting import wait_for

WAIT = 60.0
ENVIRON = {"HOME": "/home/someone", "PATH": "/usr/bin", "PWD": "/tmp"}
"""The environment the daemon says its runs see (pytest's own changes from step to step)."""


class Follower:
    """What a ticket delivers, in order."""

    def __init__(self) -> None:
        self.items: queue.SimpleQueue[tuple[str, Any]] = queue.SimpleQueue()
        self.ticket = Ticket(self.items.put)

    def until_final(self) -> list[tuple[str, Any]]:
        got = []
        while True:
            item = self.items.get(timeout=WAIT)
            got.append(item)
            if item[0] in ("result", "error"):
                return got


@pytest.fixture
def store(settings: Settings) -> Iterator[Store]:
    with Store.open(settings.database_url) as opened:
        yield opened


@pytest.fixture
def daemon(settings: Settings, store: Store) -> Iterator[Daemon]:
    write_squad(settings, "demo.yaml", squad_yaml("demo", "{interval: 1d}"))
    running = Daemon(
        App.open(settings, store=store), heartbeat_s=0.2, debounce_s=0.1, environ=ENVIRON
    )
    thread = threading.Thread(target=running.run)
    thread.start()
    try:
        wait_for(running.ctx.ready.is_set, "the daemon ready")
        yield running
    finally:
        running.request_stop("test")
        thread.join(WAIT)


def check(current: Settings, **fields: Any) -> HandOver:
    given: dict[str, Any] = {
        "settings": settings_digest(current),
        "environment": environment_digest({**ENVIRON, "PWD": "/elsewhere"}),
        "squad": "demo",
        **fields,
    }
    return HandOver(**given)


def test_the_daemon_runs_a_squad_handed_over_and_its_ticket_follows_it_to_the_end(
    daemon: Daemon, settings: Settings, store: Store
) -> None:
    follower = Follower()
    assert daemon.hand_off(check(settings, goal="Ship the handed run."), follower.ticket) is None
    got = follower.until_final()
    kinds = [kind for kind, _ in got]
    assert kinds[0] == "run_id" and kinds[-1] == "result"
    assert ("progress", "outline: planner working") in got
    result = got[-1][1]
    (run,) = store.list_runs("demo")
    assert (result.run_id, result.status) == (run.id, "succeeded") == (got[0][1], "succeeded")
    assert (run.trigger, run.goal) == ("manual", "Ship the handed run.")
    (asked,) = events(settings, "run_requested")
    assert (asked["squad"], asked["trigger"]) == ("demo", "manual")
    (end,) = events(settings, "run_end")
    assert (end["run_id"], end["status"]) == (run.id, "succeeded")


def test_a_file_is_taken_only_as_the_daemon_loaded_it(
    daemon: Daemon, settings: Settings, store: Store
) -> None:
    path = (settings.squads_dir / "demo.yaml").resolve()
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    stale = check(settings, squad=None, file=str(path), digest="0" * 64)
    assert daemon.hand_off(stale, Follower().ticket) == "the daemon runs no such squad"
    copy = settings.squads_dir.parent / "demo-copy.yaml"
    copy.write_bytes(path.read_bytes())
    elsewhere = check(settings, squad=None, file=str(copy.resolve()), digest=digest)
    assert daemon.hand_off(elsewhere, Follower().ticket) == "the daemon runs no such squad"
    follower = Follower()
    assert (
        daemon.hand_off(check(settings, squad=None, file=str(path), digest=digest), follower.ticket)
        is None
    )
    assert follower.until_final()[-1][1].status == "succeeded"
    assert [r.trigger for r in store.list_runs("demo")] == ["manual"]


def test_what_a_command_would_run_differently_stays_in_the_command(
    daemon: Daemon, settings: Settings, store: Store
) -> None:
    other = replace(settings, memory_ranking="hashing")
    refusals = {
        "settings": check(settings, settings=settings_digest(other)),
        "environment": check(
            settings, environment=environment_digest({**ENVIRON, "OPENAI_API_KEY": "sk-new"})
        ),
        "squad": check(settings, squad="nobody"),
    }
    for what, given in refusals.items():
        refused = daemon.hand_off(given, Follower().ticket)
        assert refused is not None and what in refused, (what, refused)

    # The workspace was created again from another definition of the squad since.
    other_spec = squad_yaml("demo").replace("Ship it.", "Ship something else.")
    other_file = settings.squads_dir.parent / "other.yaml"
    other_file.write_text(other_spec)
    from squad.spec.loader import squad_from_file

    daemon.app.squads.create(squad_from_file(other_file), source=other_file)
    refused = daemon.hand_off(check(settings), Follower().ticket)
    assert refused == "the squad's workspace holds another definition than the daemon's"
    assert store.list_runs("demo") == [] and events(settings, "run_requested") == []


def test_an_interrupted_run_or_a_busy_squad_stays_in_the_command(
    daemon: Daemon, settings: Settings, store: Store
) -> None:
    run = store.create_run("demo", trigger="manual", goal=None)
    store.update_run(run.id, status=RunStatus.INTERRUPTED)
    refused = daemon.hand_off(check(settings), Follower().ticket)
    assert refused is not None and "interrupted" in refused
    store.update_run(run.id, status=RunStatus.FAILED)

    gate = threading.Event()
    first = Follower()
    # The first run waits in its first progress line until the test lets it go on.
    blocked = Ticket(lambda item: (first.items.put(item), gate.wait(WAIT)))
    assert daemon.hand_off(check(settings), blocked) is None
    wait_for(lambda: not first.items.empty(), "the first run started")
    refused = daemon.hand_off(check(settings), Follower().ticket)
    assert refused is not None and "running or queued" in refused
    gate.set()
    assert first.until_final()[-1][1].status == "succeeded"


def test_a_stop_asked_through_the_ticket_stops_the_run_at_its_next_checkpoint(
    daemon: Daemon, settings: Settings, store: Store
) -> None:
    follower = Follower()
    ticket = follower.ticket
    ticket.stop()  # before the run even has its runner: it applies once it does
    assert daemon.hand_off(check(settings), ticket) is None
    result = follower.until_final()[-1][1]
    assert result.status == "interrupted"
    (run,) = store.list_runs("demo")
    assert run.status is RunStatus.INTERRUPTED


def test_a_ticket_delivers_one_end_whatever_happens() -> None:
    follower = Follower()
    ticket = follower.ticket
    ticket.progress("draft: writer working")
    ticket.failed(SquadError("the model failed"))
    ticket.close("never started")
    ticket.progress("too late")
    got = [follower.items.get_nowait() for _ in range(2)]
    assert got[0] == ("progress", "draft: writer working")
    assert got[1][0] == "error" and str(got[1][1]) == "the model failed"
    assert follower.items.empty()

    closed = Follower()
    closed.ticket.close("the daemon is stopping")
    kind, error = closed.items.get_nowait()
    assert kind == "error" and str(error) == "the daemon is stopping"


def test_the_environment_digest_ignores_the_shells_bookkeeping_only() -> None:
    base = {"HOME": "/home/u", "PATH": "/usr/bin", "OPENAI_API_KEY": "sk-1"}
    shell = {**base, "PWD": "/tmp", "SHLVL": "3", "_": "/usr/bin/squad", "COLUMNS": "80"}
    assert environment_digest(base) == environment_digest(shell)
    for changed in (
        {**base, "OPENAI_API_KEY": "sk-2"},
        {**base, "ANTHROPIC_API_KEY": "x"},
        {**base, "HTTPS_PROXY": "http://proxy:3128"},
        {k: v for k, v in base.items() if k != "OPENAI_API_KEY"},
    ):
        assert environment_digest(changed) != environment_digest(base)


def test_the_settings_digest_ignores_the_daemons_own_section(settings: Settings) -> None:
    port = replace(settings, daemon=DaemonSettings.model_validate({"http": {"port": 0}}))
    assert settings_digest(port) == settings_digest(settings)
    assert settings_digest(replace(settings, home=Path("/elsewhere"))) != settings_digest(settings)


def test_a_resume_or_an_answer_is_taken_only_for_a_run_in_that_state(
    daemon: Daemon, settings: Settings, store: Store
) -> None:
    follower = Follower()
    assert daemon.hand_off(check(settings), follower.ticket) is None
    done = follower.until_final()[-1][1]
    resume = check(settings, squad=None, run_id=done.run_id)
    assert daemon.hand_off(resume, Follower().ticket) == "the run is succeeded, not interrupted"
    answer = check(settings, squad=None, run_id=done.run_id, decision=("draft", True, ""))
    assert daemon.hand_off(answer, Follower().ticket) == "the run does not wait on that task"
    unknown = check(settings, squad=None, run_id="nosuchrun")
    assert daemon.hand_off(unknown, Follower().ticket) == "the daemon runs no such run's squad"

    store.update_run(done.run_id, status=RunStatus.INTERRUPTED)
    follower = Follower()
    assert daemon.hand_off(resume, follower.ticket) is None
    kind, resumed = follower.until_final()[-1]
    # Every task had ended: the resume finds nothing left to do and calls no model again.
    assert kind == "result" and resumed.status == "succeeded"
    assert (resumed.run_id, resumed.model_calls) == (done.run_id, done.model_calls)
    asked = [(e["trigger"], e.get("run_id")) for e in events(settings, "run_requested")]
    assert asked == [("manual", None), ("resume", done.run_id)]
