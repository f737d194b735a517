"""A cluster of one scheduling daemon and three workers runs many runs of many squads: each
run ends exactly once, one squad never runs twice at a time, and no task's model call is
made twice."""

from __future__ import annotations

import itertools
from collections import Counter
from pathlib import Path

import pytest
from sqlalchemy.engine import Engine

from tests.support.cluster import cluster_on

pytestmark = pytest.mark.postgres

SQUADS = [f"sq{n}" for n in range(10)]


def test_thirty_runs_of_ten_squads_on_a_daemon_and_three_workers_end_exactly_once(
    tmp_path: Path, postgres_admin: Engine
) -> None:
    with cluster_on(tmp_path, postgres_admin, latency_s=0.05) as cluster:
        for name in SQUADS:
            cluster.add_squad(name)
        daemon = cluster.start("daemon", "d0")
        cluster.wait_for(
            lambda: len(daemon.events("schedule")) == len(SQUADS), "the daemon to load the squads"
        )
        workers = [cluster.start("worker", f"w{n}") for n in range(3)]
        cluster.wait_for(
            lambda: all(w.events("node_start") for w in workers), "the workers to start"
        )
        labels = {}
        for round_ in range(3):
            for name in SQUADS:
                label = f"{name}-{round_}"
                labels[label] = name
                cluster.defer(name, label)
        cluster.wait_for(
            lambda: (
                len([r for r in cluster.runs() if r.ended_at is not None]) == 30
                and not cluster.jobs("todo")
                and not cluster.jobs("doing")
            ),
            "30 runs to end",
        )

        runs = cluster.runs()
        assert len(runs) == 30
        assert Counter(r.status.value for r in runs) == {"succeeded": 30}
        assert {r.goal for r in runs} == {f"run {label}" for label in labels}
        assert len({r.job for r in runs}) == 30  # one job per run
        ends = Counter(e["run_id"] for e in cluster.events("run_end"))
        assert set(ends.values()) == {1}, ends
        assert set(ends) == {r.id for r in runs}

        calls = cluster.model.counts()
        expected = {(label, f"{squad}/t{n}") for label, squad in labels.items() for n in (1, 2)}
        assert set(calls) == expected
        assert set(calls.values()) == {1}, [k for k, v in calls.items() if v > 1]

        # One squad never ran twice at once: its runs' spans do not overlap.
        for name in SQUADS:
            spans = sorted(
                (r.started_at, r.ended_at) for r in runs if r.squad == name and r.started_at
            )
            for (_, ended), (started, _) in itertools.pairwise(spans):
                assert ended is not None and started is not None and ended <= started
        by_node = Counter(e["node"] for e in cluster.events("run_end"))
        assert len(by_node) >= 3, by_node  # the work was shared
