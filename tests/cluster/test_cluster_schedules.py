"""Two scheduling daemons on one Postgres schedule the same one-minute interval squad: each
fire becomes one job (procrastinate's periodic dedup on squad and fire time), so each runs
once; the second daemon is a hot standby, not a duplicate."""

from __future__ import annotations

from collections import Counter
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy.engine import Engine

from tests.support.cluster import cluster_on

pytestmark = pytest.mark.postgres

FIRES = 2


def test_two_scheduling_daemons_run_each_fire_of_a_one_minute_interval_once(
    tmp_path: Path, postgres_admin: Engine
) -> None:
    with cluster_on(tmp_path, postgres_admin, latency_s=0.05) as cluster:
        cluster.add_squad("tick", tasks=1, schedule="{interval: 1m}")
        daemons = [cluster.start("daemon", f"d{n}") for n in range(2)]
        cluster.wait_for(lambda: all(d.events("ready") for d in daemons), "both daemons")
        # A fire between one daemon's start and the other's is seen by one daemon only.
        both_up = max(datetime.fromisoformat(d.events("ready")[0]["time"]) for d in daemons)

        def watched(queued: list[dict[str, Any]]) -> list[str]:
            """The fires both daemons were scheduling for, first ones first."""
            fires = sorted({e["scheduled"] for e in queued})
            return [f for f in fires if datetime.fromisoformat(f) > both_up][:FIRES]

        def fired() -> bool:
            watch = watched(cluster.events("fire_queued"))
            taken = {t["scheduled"] for t in cluster.events("fire_taken")}
            return len(watch) >= FIRES and set(watch) <= taken

        cluster.wait_for(fired, f"{FIRES} fires seen by both daemons", timeout=200)
        cluster.wait_for(
            lambda: len([r for r in cluster.runs() if r.ended_at]) >= FIRES, "the runs to end"
        )

        for daemon in daemons:  # nothing more fires while the figures are read
            assert daemon.stop() == 0
        queued = cluster.events("fire_queued")
        taken = cluster.events("fire_taken")
        fires = sorted({e["scheduled"] for e in queued})
        assert Counter(e["scheduled"] for e in queued) == dict.fromkeys(fires, 1)
        # The other daemon saw each fire too, and found it queued already.
        watch = watched(queued)
        assert len(watch) == FIRES and {e["scheduled"] for e in taken} >= set(watch)
        for fire in watch:
            nodes = {e["node"] for e in queued + taken if e["scheduled"] == fire}
            assert nodes == {"d0", "d1"}
            assert fire.endswith(":00+00:00")  # anchored: every daemon fires on the minute
        jobs = [
            job
            for status in ("todo", "doing", "succeeded", "failed")
            for job in cluster.jobs(status)
            if job.task == "squad.run"
        ]
        assert sorted(job.args["timestamp"] for job in jobs) == [
            int(datetime.fromisoformat(fire).timestamp()) for fire in fires
        ]
        runs = [r for r in cluster.runs() if r.trigger == "schedule"]
        assert len({r.job for r in runs}) == len(runs) <= len(fires)
        assert {r.status.value for r in runs if r.ended_at} == {"succeeded"}
        assert len([r for r in runs if r.ended_at]) >= FIRES
