"""A run that pauses for a person's approval in a cluster: its job ends with the run waiting;
the answer is a job of its own, which any node takes, and the run goes on from its checkpoint
without redoing what it did before the gate."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy.engine import Engine

from squad.store.records import RunStatus
from tests.support.cluster import cluster_on

pytestmark = pytest.mark.postgres


def test_an_approval_answer_is_a_job_that_resumes_the_paused_run_on_any_node(
    tmp_path: Path, postgres_admin: Engine
) -> None:
    with cluster_on(tmp_path, postgres_admin, latency_s=0.05) as cluster:
        cluster.add_squad("gate", tasks=3, approval="t2")
        cluster.register("gate")
        workers = [cluster.start("worker", f"w{n}") for n in range(2)]
        cluster.wait_for(lambda: all(w.events("node_start") for w in workers), "the workers")
        cluster.defer("gate", "a1")
        paused = cluster.wait_for(
            lambda: (
                (r := cluster.run_of("a1")) is not None
                and r.status is RunStatus.AWAITING_APPROVAL
                and r
            ),
            "the run to wait for approval",
        )
        assert not cluster.jobs("todo") and not cluster.jobs("doing")  # nothing holds a node

        cluster.app.cluster.defer_run(
            {"squad": "gate", "trigger": "web", "run_id": paused.id, "decision": ["t2", True, ""]}
        )
        done = cluster.wait_for(
            lambda: (r := cluster.run_of("a1")) is not None and r.ended_at and r, "the run to end"
        )
        assert done.id == paused.id and done.status is RunStatus.SUCCEEDED
        calls = cluster.model.counts()
        assert [calls[("a1", f"gate/t{n}")] for n in (1, 2, 3)] == [1, 1, 1]


def test_a_gated_squad_on_a_schedule_keeps_one_run_waiting_in_a_cluster(
    tmp_path: Path, postgres_admin: Engine
) -> None:
    with cluster_on(tmp_path, postgres_admin, latency_s=0.05) as cluster:
        cluster.add_squad("tick", tasks=2, approval="t1", schedule="{interval: 2s}")
        daemon = cluster.start("daemon", "d0")
        cluster.wait_for(
            lambda: len(cluster.events("fire_skipped_waiting_approval")) >= 3,
            "three fires skipped while the first run waits",
            timeout=180,
        )
        assert daemon.stop() == 0
        runs = cluster.runs()
        assert len(runs) == 1 and runs[0].status is RunStatus.AWAITING_APPROVAL
        skipped = cluster.events("fire_skipped_waiting_approval")
        assert {e["waiting"] for e in skipped} == {runs[0].id}
