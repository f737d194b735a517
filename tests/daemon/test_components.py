"""The daemon as an ordered list of components: started in order, stopped in reverse (also
when a start fails half-way), and a cluster node's daemon made of another list.

The lifecycle is checked with small components that write down what happened to them; the
daemon with its real components, whose effects (lock, heartbeat row, published status, log,
threads) show what was stopped.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from squad.app import App
from squad.cluster.daemon import ClusterRuns, cluster_components
from squad.daemon.components.lifecycle import Lifecycle
from squad.daemon.components.runs import LocalRuns
from squad.daemon.context import DaemonContext
from squad.daemon.eventlog import DaemonLog, read_daemon_log
from squad.daemon.layout import local_components
from squad.daemon.lock import probe_lock
from squad.daemon.service import Daemon
from squad.daemon.status import PUBLISHED_FILE
from squad.errors import UsageError
from squad.settings import Settings
from squad.store import Store


class Recorded:
    """A component that writes its starts, ticks and stops into ``journal``."""

    def __init__(self, name: str, journal: list[str], *, fail: str = "") -> None:
        self.name = name
        self._journal = journal
        self._fail = fail

    def start(self, ctx: DaemonContext) -> None:
        if self._fail == "start":
            raise RuntimeError(f"{self.name} cannot start")
        self._journal.append(f"start {self.name}")

    def tick(self, ctx: DaemonContext, *, woken: bool) -> None:
        self._journal.append(f"tick {self.name}")

    def stop(self, ctx: DaemonContext) -> None:
        self._journal.append(f"stop {self.name}")
        if self._fail == "stop":
            raise RuntimeError(f"{self.name} cannot stop")


@pytest.fixture
def store(settings: Settings) -> Iterator[Store]:
    with Store.open(settings.database_url) as opened:
        yield opened


@pytest.fixture
def ctx(settings: Settings, store: Store) -> DaemonContext:
    settings.squads_dir.mkdir(parents=True, exist_ok=True)
    app = App.open(settings, store=store)
    log = DaemonLog(settings.home / "daemon.jsonl", clock=app.clock)
    return DaemonContext(app, settings, log, settings.squads_dir)


def events(settings: Settings) -> list[dict[str, Any]]:
    return read_daemon_log(settings.home / "daemon.jsonl")


def test_components_start_in_order_tick_in_order_and_stop_in_reverse(
    ctx: DaemonContext,
) -> None:
    journal: list[str] = []
    life = Lifecycle(Recorded(name, journal) for name in ("a", "b", "c"))

    life.start(ctx)
    for component in life.ticking():
        component.tick(ctx, woken=False)
    life.stop(ctx)

    assert journal == [
        *("start a", "start b", "start c"),
        *("tick a", "tick b", "tick c"),
        *("stop c", "stop b", "stop a"),
    ]
    assert life.started == []


def test_a_failing_start_stops_the_started_ones_in_reverse_and_never_the_rest(
    ctx: DaemonContext,
) -> None:
    journal: list[str] = []
    names = ("a", "b", "c", "d")
    life = Lifecycle(Recorded(n, journal, fail="start" if n == "c" else "") for n in names)

    with pytest.raises(RuntimeError, match="c cannot start"):
        life.start(ctx)
    life.stop(ctx)

    assert journal == ["start a", "start b", "stop b", "stop a"]


def test_a_failing_stop_is_logged_and_the_components_before_it_still_stop(
    ctx: DaemonContext, settings: Settings
) -> None:
    journal: list[str] = []
    life = Lifecycle(Recorded(n, journal, fail="stop" if n == "b" else "") for n in "abc")
    life.start(ctx)

    life.stop(ctx)

    assert journal[3:] == ["stop c", "stop b", "stop a"]
    [error] = [e for e in events(settings) if e["event"] == "b_error"]
    assert error["error"] == "RuntimeError: b cannot stop"


def test_the_local_daemon_is_this_list_and_once_leaves_out_the_scheduler_and_watcher(
    ctx: DaemonContext,
) -> None:
    names = [c.name for c in local_components(ctx)]
    assert names == [
        "lock",
        "heartbeat",
        "checkpoints",
        "runs",
        "scheduler",
        "catalog",
        "watcher",
        "startup",
        "jobs",
        "secrets_scan",
        "reload",
        "freed_memory",
    ]

    once = [c.name for c in local_components(dataclasses.replace(ctx, once=True))]
    assert once == [n for n in names if n not in ("scheduler", "watcher")]


def test_the_cluster_daemon_is_another_list_with_the_clusters_queue_for_runs_and_jobs(
    ctx: DaemonContext,
) -> None:
    local = local_components(ctx)
    cluster = cluster_components(ctx)

    swapped = [(a.name, b.name) for a, b in zip(local, cluster, strict=True) if a.name != b.name]
    assert swapped == [("runs", "cluster_runs")]
    assert [type(c) for c in local if isinstance(c, LocalRuns | ClusterRuns)] == [LocalRuns]
    assert [type(c) for c in cluster if isinstance(c, LocalRuns | ClusterRuns)] == [ClusterRuns]


def test_each_list_refuses_the_other_kind_of_home(ctx: DaemonContext) -> None:
    cluster = ctx.settings.cluster.model_copy(update={"enabled": True})
    clustered = dataclasses.replace(
        ctx, settings=dataclasses.replace(ctx.settings, cluster=cluster)
    )

    with pytest.raises(UsageError, match="without the cluster's queue"):
        local_components(clustered)
    with pytest.raises(UsageError, match="without --once"):
        cluster_components(dataclasses.replace(ctx, once=True))


class Failing:
    """An attachment (the last components to start) that fails with a bug, not a SquadError,
    and notes what it saw of the daemon when it started."""

    name = "failing"

    def __init__(self, home: Path) -> None:
        self._home = home
        self.lock_held_at_start: bool | None = None

    def start(self, daemon: Daemon) -> dict[str, Any]:
        self.lock_held_at_start = probe_lock(self._home).held
        raise RuntimeError("a bug in an attachment")

    def stop(self) -> None:
        raise AssertionError("an attachment that did not start is not stopped")


def test_a_daemon_whose_last_component_fails_to_start_stops_all_the_others(
    settings: Settings, store: Store
) -> None:
    settings.squads_dir.mkdir(parents=True)
    threads = {t.name for t in threading.enumerate()}
    failing = Failing(settings.home)
    daemon = Daemon(App.open(settings, store=store), attachments=[failing])

    with pytest.raises(RuntimeError, match="a bug in an attachment"):
        daemon.run()

    assert failing.lock_held_at_start is True  # the lock started first
    assert probe_lock(settings.home).held is False  # and was released
    assert not (settings.home / PUBLISHED_FILE).exists()  # the heartbeat stopped
    beat = store.daemon.get(str(settings.home))
    assert beat is not None and beat.stopped_at is not None
    assert {t.name for t in threading.enumerate() if t.is_alive()} <= threads  # no leftovers
    kinds = [e["event"] for e in events(settings)]
    assert kinds[0] == "start" and kinds[-1] == "stop"
    assert "ready" not in kinds
