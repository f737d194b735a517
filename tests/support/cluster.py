"""A cluster on this machine, for the cluster tests and ``bench/cluster_bench.py``: real
``squad daemon`` and ``squad worker`` processes on a Postgres server (a fresh schema for the
store, another for the queue, both dropped after), each node with a home of its own, one
workspaces folder they all share, and the stub model server in the calling process, whose
request log says which task's model call was made how often.

Every model request of a run names its run and task: the run's goal is ``run <label>`` and
each task's description ``Do step <squad>/<task>.``, both in the prompt.
"""

from __future__ import annotations

import os
import re
import secrets
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import text
from sqlalchemy.engine import Engine

from squad.app import App
from squad.daemon.eventlog import read_daemon_log
from squad.model.stub_answers import answer, slow
from squad.model.testing import FREE_PRICES, OpenAIStubServer
from squad.settings import Settings
from squad.store.records import RunRecord
from tests.support.waiting import wait_for

SQUAD = Path(sys.executable).parent / "squad"
CALL = re.compile(r"Task: Do step ([\w-]+/[\w-]+)\.")
GOAL = re.compile(r"Goal: run ([\w-]+)")
WAIT_S = 120.0


def squad_yaml(
    name: str,
    url: str,
    *,
    tasks: int = 2,
    schedule: str | None = None,
    approval: str | None = None,
) -> str:
    """A squad of ``tasks`` steps in a row on the stub model; ``approval`` names the task that
    waits for a person's answer."""
    model = f"{{name: openai/stub, api_base: '{url}', api_key_env: STUB_KEY, {FREE_PRICES}}}"
    lines = [
        f"name: {name}",
        f"model: {model}",
        "memory: {extract: false}",
        "agents:",
        "  - {id: worker, role: Does one step}",
        "tasks:",
    ]
    for number in range(1, tasks + 1):
        after = f", depends_on: [t{number - 1}]" if number > 1 else ""
        if approval == f"t{number}":
            after += ", approval: true"
        lines.append(
            f"  - {{id: t{number}, description: Do step {name}/t{number}., agent: worker{after}}}"
        )
    if schedule is not None:
        lines.append(f"schedule: {schedule}")
    return "\n".join(lines) + "\n"


class ModelLog:
    """What the stub server was asked: (run label, squad/task) per request."""

    def __init__(self, latency_s: float) -> None:
        self.latency_s = latency_s
        self._lock = threading.Lock()
        self.calls: list[tuple[str, str, float]] = []

    def __call__(self, body: Any) -> Any:
        users = [str(m.get("content")) for m in body.get("messages", []) if m.get("role") == "user"]
        prompt = users[-1] if users else ""
        task, goal = CALL.search(prompt), GOAL.search(prompt)
        with self._lock:
            self.calls.append(
                (goal.group(1) if goal else "?", task.group(1) if task else "?", time.time())
            )
        return slow(self.latency_s, answer("Done."))

    def counts(self) -> Counter[tuple[str, str]]:
        with self._lock:
            return Counter((run, task) for run, task, _ in self.calls)

    def seen(self, run: str, task: str) -> int:
        return self.counts()[(run, task)]


class Node:
    """One ``squad daemon`` or ``squad worker`` process."""

    def __init__(self, cluster: Cluster, name: str, kind: str, args: list[str]) -> None:
        self.cluster = cluster
        self.name = name
        self.kind = kind
        self.home = cluster.root / "homes" / name
        self.home.mkdir(parents=True, exist_ok=True)
        self.log = self.home / ("daemon.jsonl" if kind == "daemon" else "worker.jsonl")
        err = (cluster.root / f"{name}.err").open("a")
        env = {**cluster.env, "SQUAD_HOME": str(self.home), "SQUAD_NODE": name}
        self.process = subprocess.Popen(
            [str(SQUAD), kind, *args],
            env=env,
            cwd=cluster.root,
            stdout=subprocess.DEVNULL,
            stderr=err,
            text=True,
        )
        err.close()

    def events(self, kind: str | None = None) -> list[dict[str, Any]]:
        if not self.log.is_file():
            return []
        return [e for e in read_daemon_log(self.log) if kind is None or e["event"] == kind]

    def alive(self) -> bool:
        return self.process.poll() is None

    def kill(self) -> None:
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=30)

    def freeze(self) -> None:
        """SIGSTOP: the process holds what it holds (locks, connections) but does nothing,
        like a long GC pause or a frozen VM."""
        self.process.send_signal(signal.SIGSTOP)

    def thaw(self) -> None:
        self.process.send_signal(signal.SIGCONT)

    def stderr(self) -> str:
        return (self.cluster.root / f"{self.name}.err").read_text()

    def stop(self, timeout: float = 60.0) -> int:
        if self.alive():
            self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            return self.process.wait(timeout=30)


class Cluster:
    """Nodes, squads, the queue and the store of one test's cluster."""

    def __init__(self, root: Path, admin: Engine, stub: OpenAIStubServer, model: ModelLog) -> None:
        self.root = root
        self.admin = admin
        self.stub = stub
        self.model = model
        token = secrets.token_hex(5)
        self.schema = f"squad_cluster_{token}"
        self.queue_schema = f"squad_queue_{token}"
        with admin.begin() as connection:
            connection.execute(text(f'CREATE SCHEMA "{self.schema}"'))
        url = admin.url.update_query_dict({"options": f"-csearch_path={self.schema}"})
        self.database_url = url.render_as_string(hide_password=False)
        self.configs = root / "configs"
        (self.configs / "squads").mkdir(parents=True)
        self.workspaces = root / "workspaces"
        self.nodes: list[Node] = []
        self.env = {
            **{k: v for k, v in os.environ.items() if not k.startswith(("SQUAD_", "OTEL_"))},
            "SQUAD_CONFIGS": str(self.configs),
            "SQUAD_WORKSPACES": str(self.workspaces),
            "STUB_KEY": "stub",
            "LITELLM_LOCAL_MODEL_COST_MAP": "True",
            "LITELLM_OFFLINE_MODE": "true",
            "NO_PROXY": "127.0.0.1,localhost",
        }
        self.write_settings()
        self._app: App | None = None

    def write_settings(
        self,
        *,
        stall_timeout_s: float = 4.0,
        heartbeat_s: float = 0.5,
        poll_s: float = 0.5,
        runs_per_node: int = 2,
        grace_s: int = 30,
        max_attempts: int = 20,
    ) -> None:
        self.stall_timeout_s = stall_timeout_s
        (self.configs / "settings.yaml").write_text(
            f"database_url: '{self.database_url}'\n"
            "daemon:\n"
            f"  max_concurrent_runs: {runs_per_node}\n"
            f"  shutdown_grace_s: {grace_s}\n"
            "  http: {enabled: false}\n"
            "cluster:\n"
            "  enabled: true\n"
            f"  schema_name: {self.queue_schema}\n"
            f"  stall_timeout_s: {stall_timeout_s}\n"
            f"  heartbeat_s: {heartbeat_s}\n"
            f"  poll_s: {poll_s}\n"
            f"  max_attempts: {max_attempts}\n"
        )

    # -- the test process's own view ---------------------------------------------------------

    @property
    def app(self) -> App:
        """An App on the cluster's settings (for the store and the queue), in the test."""
        if self._app is None:
            env = {**self.env, "SQUAD_HOME": str(self.root / "homes" / "test")}
            self._app = App.open(Settings.load(env, cwd=self.root))
        return self._app

    def add_squad(
        self, name: str, *, tasks: int = 2, schedule: str | None = None, approval: str | None = None
    ) -> Path:
        path = self.configs / "squads" / f"{name}.yaml"
        text = squad_yaml(name, self.stub.url, tasks=tasks, schedule=schedule, approval=approval)
        path.write_text(text)
        return path

    def register(self, *names: str) -> None:
        """Register squads in the store the way a scheduling daemon does (for clusters of
        workers only)."""
        for name in names:
            self.app.squads.create_from_file(self.configs / "squads" / f"{name}.yaml")

    def defer(self, squad: str, label: str) -> int:
        job = self.app.cluster.defer_run(
            {"squad": squad, "trigger": "test", "goal": f"run {label}"}
        )
        assert job is not None
        return int(job)

    def runs(self) -> list[RunRecord]:
        return self.app.store.list_runs(limit=1000)

    def run_of(self, label: str) -> RunRecord | None:
        found = [r for r in self.runs() if r.goal == f"run {label}"]
        assert len(found) <= 1, f"run {label} has {len(found)} records"
        return found[0] if found else None

    def jobs(self, status: str) -> list[Any]:
        return self.app.cluster.jobs(status)

    def job_status(self, job: int) -> str | None:
        """The queue's status of one job (None when the queue has no such job)."""
        with self.admin.begin() as connection:
            found = connection.execute(
                text(f'SELECT status FROM "{self.queue_schema}".procrastinate_jobs WHERE id = :id'),
                {"id": job},
            ).scalar()
        return None if found is None else str(found)

    def start(self, kind: str, name: str, *args: str) -> Node:
        node = Node(self, name, kind, list(args))
        self.nodes.append(node)
        return node

    def wait_for(self, check: Callable[[], Any], what: str, timeout: float = WAIT_S) -> Any:
        try:
            return wait_for(check, what, timeout=timeout, interval=0.2, gone=self._node_failed)
        except AssertionError as exc:
            raise AssertionError(f"{exc}\n{self.digest()}") from None

    def digest(self) -> str:
        """What each node logged last and printed to stderr: a failed wait's context."""
        parts = []
        for node in self.nodes:
            events = node.events()
            kinds = Counter(e["event"] for e in events)
            tail = "\n    ".join(str(e) for e in events[-12:])
            err = (self.root / f"{node.name}.err").read_text()[-1500:]
            parts.append(
                f"{node.name} ({node.kind}, returncode {node.process.poll()}): {dict(kinds)}"
                f"\n    {tail}\n  stderr: {err or '(empty)'}"
            )
        return "\n".join(parts)

    def _node_failed(self) -> str | None:
        for node in self.nodes:
            if node.process.returncode not in (None, 0, -9) and not node.alive():
                err = (self.root / f"{node.name}.err").read_text()[-3000:]
                return f"{node.name} exited {node.process.returncode}: {err}"
        return None

    def events(self, kind: str) -> list[dict[str, Any]]:
        return [dict(e, node=n.name) for n in self.nodes for e in n.events(kind)]

    def close(self) -> None:
        for node in self.nodes:
            if node.alive():
                node.stop(timeout=30)
        if self._app is not None:
            self._app.close()
        with self.admin.begin() as connection:
            connection.execute(text(f'DROP SCHEMA IF EXISTS "{self.schema}" CASCADE'))
            connection.execute(text(f'DROP SCHEMA IF EXISTS "{self.queue_schema}" CASCADE'))


@contextmanager
def cluster_on(root: Path, admin: Engine, *, latency_s: float) -> Iterator[Cluster]:
    model = ModelLog(latency_s)
    with OpenAIStubServer(handler=model) as stub:
        cluster = Cluster(root, admin, stub, model)
        try:
            yield cluster
        finally:
            cluster.close()
