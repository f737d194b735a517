"""The dashboard's spend chart after retention forgot the runs the spend belonged to."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from squad.app import App
from squad.clock import FrozenClock
from squad.settings import Settings
from squad.store import RunStatus, Store
from squad.web.charts import spend_activity

NOW = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)


def test_spend_of_forgotten_runs_stays_on_its_day(settings: Settings) -> None:
    clock = FrozenClock(NOW - timedelta(days=3))
    with Store.open(settings.database_url, clock=clock) as store:
        store.upsert_squad("docs", workspace="/ws/docs", source=None, definition_sha256="0" * 64)
        run = store.create_run("docs")
        store.spend.record("docs", model="m", cost_usd=0.4, run_id=run.id)
        store.spend.record("docs", model="m", cost_usd=0.1, run_id=run.id)
        store.update_run(run.id, status=RunStatus.SUCCEEDED)
        clock.now = NOW
        store.spend.record("docs", model="m", cost_usd=0.2)
        with App.open(settings, store=store, clock=clock) as app:
            before = spend_activity(app, now=NOW, days=7)
            assert store.retention.forget_runs(NOW - timedelta(days=1)).spend_rows == 2

            after = spend_activity(app, now=NOW, days=7)

    assert after.squads[0].days == before.squads[0].days
    (docs,) = after.squads
    assert docs.calls == 3 and round(docs.total_usd, 6) == 0.7
    assert [d.cost_usd for d in docs.days if d.cost_usd] == [0.5, 0.2]
