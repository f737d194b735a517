"""Many workers on one Postgres (``cluster.enabled``), as ratios measured in the same run:

* throughput: 60 runs (20 squads, 3 runs each, two tasks per run) on the stub model server at
  200 ms per call, on three ``squad worker`` processes against one; target: three finish in at
  most 0.37x the time of one (2.7x the throughput, issue 35; 2.5x before it);
* enqueue-to-start latency p95 with idle workers: a squad run job, from its defer to the node
  starting it, against procrastinate's own bare round trip (a no-op job on a bare worker in a
  process of its own, same polling, same database) measured moments before; target 2x;
* an idle cluster's cost, in the notes: each worker's CPU over 20 s and its connections to
  Postgres (counted in ``pg_stat_activity`` by the client ports of its sockets).

Needs the Postgres at SQUAD_TEST_POSTGRES_URL (default the machine's ``test`` database); skipped
with a note when it is unreachable. Run alone with ``python -m bench.cluster_bench``.
"""

from __future__ import annotations

import os
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine

    from bench.__main__ import Result
    from tests.support.cluster import Cluster, Node

DEFAULT_URL = "postgresql+psycopg://postgres@127.0.0.1:5432/test"
LATENCY_S = 0.2
RUNS = 60
SQUADS = 20
PER_NODE = 2
LATENCY_SAMPLES = 30
IDLE_S = 20.0
THROUGHPUT_TARGET = 1 / 2.7
LATENCY_TARGET = 2.0
POLL_S = 1.0
HEARTBEAT_S = 5.0
"""The defaults of ``cluster.poll_s`` and ``cluster.heartbeat_s``."""


def _admin() -> Engine | None:
    from sqlalchemy import create_engine
    from sqlalchemy.exc import OperationalError
    from sqlalchemy.pool import NullPool

    url = os.environ.get("SQUAD_TEST_POSTGRES_URL", DEFAULT_URL)
    engine = create_engine(url, poolclass=NullPool, connect_args={"connect_timeout": 5})
    try:
        with engine.connect():
            pass
    except OperationalError:
        engine.dispose()
        return None
    return engine


def _p95(values: list[float]) -> float:
    return statistics.quantiles(values, n=20)[-1]


def _wait(check: Any, what: str, timeout: float = 300.0, every: float = 0.2) -> Any:
    """Poll ``check`` (sparingly: this process shares the two cores with the nodes)."""
    deadline = time.monotonic() + timeout
    while not (found := check()):
        if time.monotonic() > deadline:
            raise RuntimeError(f"timed out waiting for {what}")
        time.sleep(every)
    return found


def _ended(cluster: Cluster) -> int:
    from sqlalchemy import text

    with cluster.admin.connect() as connection:
        query = f'SELECT count(*) FROM "{cluster.schema}".runs WHERE ended_at IS NOT NULL'
        return int(connection.execute(text(query)).scalar_one())


def throughput(
    admin: Engine, workers: int, *, runs: int = RUNS, tree: Path | None = None
) -> tuple[float, float]:
    """Seconds for ``runs`` runs on ``workers`` warmed-up workers, and the CPU seconds the
    workers and this process (the stub model server's) spent meanwhile. ``tree``: the
    checkout whose ``squad`` the workers import (this one by default)."""
    from tests.support.cluster import cluster_on

    with (
        tempfile.TemporaryDirectory() as tmp,
        cluster_on(Path(tmp), admin, latency_s=LATENCY_S) as cluster,
    ):
        if tree is not None:
            cluster.env["PYTHONPATH"] = str(tree)
        cluster.write_settings(runs_per_node=PER_NODE, poll_s=POLL_S, heartbeat_s=HEARTBEAT_S)
        names = [f"tp{n}" for n in range(SQUADS)]
        for name in names:
            cluster.add_squad(name)
        cluster.register(*names)
        nodes = [cluster.start("worker", f"w{n}") for n in range(workers)]
        _wait(lambda: all(n.events("node_start") for n in nodes), "the workers")
        for attempt in range(5):  # warm up: every worker has run (and imported litellm)
            before = _ended(cluster)
            for n, name in enumerate(names[: workers * PER_NODE * 2]):
                cluster.defer(name, f"warm{attempt}-{n}")
            count = before + workers * PER_NODE * 2
            _wait(lambda count=count: _ended(cluster) >= count, "the warm-up runs")
            if all(n.events("run_end") for n in nodes):
                break
        before = _ended(cluster)
        cpu = sum(_cpu_s(n.process.pid) for n in nodes) + _self_cpu_s()
        started = time.monotonic()
        for n in range(runs):
            cluster.defer(names[n % SQUADS], f"tp-{n}")
        _wait(lambda: _ended(cluster) >= before + runs, f"{runs} runs")
        took = time.monotonic() - started
        cpu = sum(_cpu_s(n.process.pid) for n in nodes) + _self_cpu_s() - cpu
        return took, cpu


def squad_latency(admin: Engine) -> tuple[list[float], dict[str, Any]]:
    """Defer-to-start of run jobs on idle workers, one at a time; then the idle figures."""
    from tests.support.cluster import cluster_on

    waits: list[float] = []
    with (
        tempfile.TemporaryDirectory() as tmp,
        cluster_on(Path(tmp), admin, latency_s=0.0) as cluster,
    ):
        cluster.write_settings(poll_s=POLL_S, heartbeat_s=HEARTBEAT_S)
        cluster.add_squad("lat", tasks=1)
        cluster.register("lat")
        nodes = [cluster.start("worker", f"w{n}") for n in range(3)]
        _wait(lambda: all(n.events("node_start") for n in nodes), "the workers")
        for n in range(LATENCY_SAMPLES + 3):  # the first three warm the workers up
            asked = time.time()
            job = cluster.defer("lat", f"lat-{n}")
            time.sleep(0.5)  # let it start undisturbed by this process's polling
            start = _wait(
                lambda job=job: next(
                    (e for e in cluster.events("run_start") if e.get("job") == job), None
                ),
                "a run to start",
            )
            _wait(lambda n=n: (r := cluster.run_of(f"lat-{n}")) and r.ended_at, "it to end")
            if n >= 3:
                waits.append(datetime.fromisoformat(start["time"]).timestamp() - asked)
            time.sleep(0.05)
        idle = idle_figures(cluster, nodes)
    return waits, idle


def idle_figures(cluster: Cluster, nodes: list[Node]) -> dict[str, Any]:
    time.sleep(3.0)
    before = {n.name: _cpu_s(n.process.pid) for n in nodes}
    time.sleep(IDLE_S)
    cpu = {n.name: (_cpu_s(n.process.pid) - before[n.name]) / IDLE_S for n in nodes}
    connections = {n.name: _connections(cluster, n.process.pid) for n in nodes}
    return {"cpu_share": cpu, "connections": connections}


def _self_cpu_s() -> float:
    times = os.times()
    return times.user + times.system


def _cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _connections(cluster: Cluster, pid: int) -> int:
    """Connections of process ``pid`` to Postgres: its TCP sockets' local ports, found in
    ``pg_stat_activity.client_port``."""
    from sqlalchemy import text

    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = str(fd.readlink())
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    ports = set()
    for table in ("tcp", "tcp6"):
        for line in Path(f"/proc/{pid}/net/{table}").read_text().splitlines()[1:]:
            parts = line.split()
            if parts[9] in inodes:
                ports.add(int(parts[1].rsplit(":", 1)[1], 16))
    with cluster.admin.connect() as connection:
        found = connection.execute(
            text("SELECT client_port FROM pg_stat_activity WHERE client_port IS NOT NULL")
        ).scalars()
        return len(ports.intersection(found))


def bare_latency(admin: Engine) -> list[float]:
    """procrastinate alone: a no-op job's defer-to-start on an idle bare worker."""
    import procrastinate
    from sqlalchemy import text

    from squad.jobqueue.schema import conninfo
    from squad.settings import ClusterSettings, Settings

    schema = f"bench_bare_{secrets.token_hex(4)}"
    url = admin.url.render_as_string(hide_password=False)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "starts"
        out.touch()
        settings = Settings(
            home=Path(tmp),
            workspaces=Path(tmp),
            configs=Path(tmp),
            database_url=url,
            cluster=ClusterSettings(enabled=True, schema_name=schema),
        )
        from squad.jobqueue.schema import ensure_schema

        ensure_schema(settings)
        worker = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "bench.cluster_bare_worker",
                conninfo(url),
                schema,
                str(out),
                "1",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        app = procrastinate.App(
            connector=procrastinate.SyncPsycopgConnector(
                conninfo=conninfo(url), kwargs={"options": f"-c search_path={schema}"}
            )
        )
        try:
            time.sleep(2.0)
            asked: dict[int, float] = {}
            with app.open():
                deferrer = app.configure_task("bare.noop")
                for n in range(LATENCY_SAMPLES + 3):
                    at = time.time()
                    job = deferrer.defer()
                    time.sleep(0.5)
                    _wait(lambda job=job: f"{job} " in out.read_text(), "the bare job")
                    if n >= 3:
                        asked[job] = at
                    time.sleep(0.05)
            starts = dict(line.split() for line in out.read_text().splitlines())
            return [float(starts[str(job)]) - at for job, at in asked.items()]
        finally:
            worker.terminate()
            worker.wait(timeout=30)
            with admin.begin() as connection:
                connection.execute(text(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE'))


def measure() -> dict[str, Any]:
    admin = _admin()
    if admin is None:
        return {"skipped": "no Postgres at SQUAD_TEST_POSTGRES_URL"}
    try:
        bare = bare_latency(admin)
        waits, idle = squad_latency(admin)
        one, one_cpu = throughput(admin, 1)
        three, three_cpu = throughput(admin, 3)
    finally:
        admin.dispose()
    return {
        "one_worker_s": one,
        "three_workers_s": three,
        "one_worker_cpu_s": one_cpu,
        "three_workers_cpu_s": three_cpu,
        "cores": os.cpu_count() or 1,
        "bare_p95_s": _p95(bare),
        "bare_p50_s": statistics.median(bare),
        "squad_p95_s": _p95(waits),
        "squad_p50_s": statistics.median(waits),
        "idle": idle,
    }


def results(figures: dict[str, Any]) -> list[Result]:
    from bench.__main__ import Result

    if "skipped" in figures:
        return []
    return [
        Result(
            f"cluster {RUNS} runs, 3 workers",
            figures["three_workers_s"],
            "1 worker",
            figures["one_worker_s"],
            THROUGHPUT_TARGET,
        ),
        Result(
            "cluster enqueue-to-start p95",
            figures["squad_p95_s"],
            "bare procrastinate",
            figures["bare_p95_s"],
            LATENCY_TARGET,
        ),
    ]


def notes(figures: dict[str, Any]) -> list[str]:
    if "skipped" in figures:
        return [f"cluster benchmark skipped: {figures['skipped']}"]
    idle = figures["idle"]
    cpu = ", ".join(f"{k} {v * 100:.2f}%" for k, v in sorted(idle["cpu_share"].items()))
    conns = ", ".join(f"{k} {v}" for k, v in sorted(idle["connections"].items()))
    speedup = figures["one_worker_s"] / figures["three_workers_s"]
    cores = figures["cores"]
    busy = figures["three_workers_cpu_s"] / (figures["three_workers_s"] * cores)
    per_run = figures["three_workers_cpu_s"] / RUNS
    return [
        f"cluster throughput: {RUNS} runs in {figures['one_worker_s']:.1f}s on 1 worker, "
        f"{figures['three_workers_s']:.1f}s on 3 ({speedup:.2f}x; {PER_NODE} runs per worker)",
        f"cluster CPU with 3 workers: {per_run * 1000:.0f} ms per run (2 model calls), "
        f"{busy * 100:.0f}% of {cores} cores busy (1 worker: "
        f"{figures['one_worker_cpu_s'] / (figures['one_worker_s'] * cores) * 100:.0f}%)",
        f"cluster enqueue-to-start p50 {figures['squad_p50_s'] * 1000:.1f} ms "
        f"(bare procrastinate {figures['bare_p50_s'] * 1000:.1f} ms)",
        f"idle cluster over {IDLE_S:.0f}s: CPU {cpu}; Postgres connections {conns}",
    ]


def bench_cluster(notes_out: list[str] | None = None) -> list[Result]:
    """This benchmark in a fresh process; notes go to ``notes_out`` (else are printed)."""
    from bench.support import in_fresh_process

    return in_fresh_process("bench.cluster_bench", results, notes, notes_out)


def compare_throughput(trees: list[Path], runs: int, repeats: int) -> int:
    """The throughput part alone, for working on it: 1 and 3 workers of each checkout in
    ``trees``, interleaved, ``repeats`` rounds; the median ratio per checkout is printed.

        python -m bench.cluster_bench --throughput [--runs N] [--repeats N] [--tree DIR]...
    """
    admin = _admin()
    if admin is None:
        print("cluster benchmark skipped: no Postgres at SQUAD_TEST_POSTGRES_URL")
        return 0
    ratios: dict[Path, list[float]] = {tree: [] for tree in trees}
    cpus: dict[Path, list[float]] = {tree: [] for tree in trees}
    try:
        for round_ in range(repeats):
            # Every other round in reverse: on a shared machine no tree always goes first.
            for tree in trees if round_ % 2 == 0 else trees[::-1]:
                one, one_cpu = throughput(admin, 1, runs=runs, tree=tree)
                three, three_cpu = throughput(admin, 3, runs=runs, tree=tree)
                ratios[tree].append(one / three)
                cpus[tree].append(three_cpu / runs * 1000)
                print(
                    f"round {round_} {tree}: 1 worker {one:.2f}s ({one_cpu / runs * 1000:.0f} ms "
                    f"CPU a run), 3 workers {three:.2f}s ({three_cpu / runs * 1000:.0f} ms "
                    f"CPU a run): {one / three:.2f}x",
                    flush=True,
                )
    finally:
        admin.dispose()
    for tree, found in ratios.items():
        cpu = cpus[tree]
        print(
            f"{tree}: median {statistics.median(found):.2f}x of {len(found)} "
            f"({min(found):.2f}-{max(found):.2f}x); 3 workers' CPU a run median "
            f"{statistics.median(cpu):.0f} ms ({min(cpu):.0f}-{max(cpu):.0f})"
        )
    return 0


def main() -> int:
    from bench.support import REPO, report, tree_args

    if "--throughput" in sys.argv:
        args = sys.argv[1:]
        runs = int(args[args.index("--runs") + 1]) if "--runs" in args else RUNS
        repeats = int(args[args.index("--repeats") + 1]) if "--repeats" in args else 3
        return compare_throughput([REPO, *tree_args(args)], runs, repeats)
    return report(measure(), results, notes)


if __name__ == "__main__":
    sys.exit(main())
