"""The store's one-query reads for ``squad status``: each squad's newest run, runs' spend."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from squad.clock import FrozenClock
from squad.settings import Settings
from squad.store import RunStatus, Store

START = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)


@pytest.fixture
def clock() -> FrozenClock:
    return FrozenClock(START)


@pytest.fixture
def store(settings: Settings, clock: FrozenClock) -> Iterator[Store]:
    with Store.open(settings.database_url, clock=clock) as opened:
        yield opened


def add_squad(store: Store, name: str) -> None:
    store.upsert_squad(name, workspace=f"/w/{name}", source=None, definition_sha256="0")


def test_latest_runs_names_each_squads_newest_run_as_list_runs_does(
    store: Store, clock: FrozenClock
) -> None:
    for name in ("alpha", "beta", "gamma"):
        add_squad(store, name)
    made = []
    for i in range(9):
        clock.advance(1 if i != 4 else 0)  # two runs share an instant
        made.append(store.create_run(("alpha", "beta")[i % 2]))
    store.update_run(made[-1].id, status=RunStatus.FAILED, error="boom")

    latest = store.latest_runs()

    assert set(latest) == {"alpha", "beta"}  # gamma has no run
    for name in ("alpha", "beta"):
        assert latest[name] == store.list_runs(name, limit=1)[0]
    assert latest["alpha"].status is RunStatus.FAILED


def test_spend_of_runs_sums_each_run_like_the_spend_of_one_run(store: Store) -> None:
    add_squad(store, "alpha")
    one, two, none = (store.create_run("alpha") for _ in range(3))
    for run, cost in ((one, 0.5), (one, 0.25), (two, 1.0)):
        store.spend.record(
            "alpha",
            model="m",
            prompt_tokens=10,
            completion_tokens=5,
            cost_usd=cost,
            latency_s=0.1,
            run_id=run.id,
        )
    found = store.spend.of_runs([one.id, two.id, none.id])
    assert found == {one.id: store.spend.of_run(one.id), two.id: store.spend.of_run(two.id)}
    assert store.spend.of_runs([]) == {}
