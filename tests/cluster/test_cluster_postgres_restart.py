"""Postgres restarts under a running cluster (``pg_ctlcluster ... restart``): nodes reconnect,
runs in flight finish or resume, none is lost or run twice, and the workers listen again
(a run deferred afterwards starts on a notification, not at the next poll)."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections import Counter
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy.engine import Engine

from tests.support.cluster import cluster_on

# serial: a restart drops every connection to the server, the other xdist workers' too.
pytestmark = [pytest.mark.postgres, pytest.mark.serial]

SQUADS = ("pa", "pb", "pc", "pd")
POLL_S = 5.0
"""Long, so that a run starting well within it proves the worker was notified."""


def _restart_command() -> list[str]:
    if shutil.which("pg_ctlcluster") is None or not Path("/etc/postgresql").is_dir():
        message = "restarting Postgres needs pg_ctlcluster (Debian's postgresql-common)"
    elif os.geteuid() != 0:
        message = "restarting Postgres needs root"
    else:
        version = sorted(os.listdir("/etc/postgresql"))[0]
        return ["pg_ctlcluster", "--skip-systemctl-redirect", version, "main", "restart"]
    if os.environ.get("SQUAD_REQUIRE_POSTGRES") == "1":
        pytest.fail(f"{message} (SQUAD_REQUIRE_POSTGRES=1 demands this test)")
    pytest.skip(message)


def test_runs_in_flight_survive_a_postgres_restart_and_workers_listen_again(
    tmp_path: Path, postgres_admin: Engine
) -> None:
    restart = _restart_command()
    with cluster_on(tmp_path, postgres_admin, latency_s=0.5) as cluster:
        cluster.write_settings(poll_s=POLL_S)
        for name in SQUADS:
            cluster.add_squad(name, tasks=3)
        daemon = cluster.start("daemon", "d0")
        cluster.wait_for(lambda: daemon.events("ready"), "the daemon")
        workers = [cluster.start("worker", f"w{n}") for n in range(2)]
        cluster.wait_for(lambda: all(w.events("node_start") for w in workers), "the workers")
        labels = [f"{name}-{n}" for n in range(2) for name in SQUADS]
        for label in labels:
            cluster.defer(label.split("-")[0], label)
        cluster.wait_for(
            lambda: len({run for run, _ in cluster.model.counts()}) >= 4, "runs in flight"
        )

        subprocess.run(restart, check=True, capture_output=True, timeout=120)

        cluster.wait_for(
            lambda: len([r for r in cluster.runs() if r.ended_at]) == len(labels),
            "every run to end after the restart",
            timeout=180,
        )
        runs = cluster.runs()
        assert sorted(r.goal or "" for r in runs) == sorted(f"run {label}" for label in labels)
        assert {r.status.value for r in runs} == {"succeeded"}
        # A run's record ends before its node logs run_end: wait for the log, then count.
        cluster.wait_for(
            lambda: {e["run_id"] for e in cluster.events("run_end")} >= {r.id for r in runs},
            "every run_end logged",
        )
        ends = Counter(e["run_id"] for e in cluster.events("run_end"))
        assert ends == dict.fromkeys((r.id for r in runs), 1)
        calls = cluster.model.counts()
        for label in labels:
            squad = label.split("-")[0]
            done = [calls[(label, f"{squad}/t{n}")] for n in (1, 2, 3)]
            assert all(count >= 1 for count in done), (label, done)
            assert sum(done) <= 4, (label, done)  # at most the step in flight again

        # Back to notifications: a new run starts well within the poll interval.
        cluster.wait_for(lambda: not cluster.jobs("doing"), "the queue to be idle")
        waits = []
        for n in range(3):
            asked = time.time()
            job = cluster.defer("pa", f"after-{n}")

            def started(job: int = job) -> dict[str, Any] | None:
                return next((e for e in cluster.events("run_start") if e.get("job") == job), None)

            def ended(n: int = n) -> bool:
                run = cluster.run_of(f"after-{n}")
                return run is not None and run.ended_at is not None

            start = cluster.wait_for(started, "the run after the restart to start")
            waits.append(datetime.fromisoformat(start["time"]).timestamp() - asked)
            cluster.wait_for(ended, "it to end")
        assert sorted(waits)[1] < POLL_S / 2, waits
