"""The cluster on the dashboard, against a real uvicorn server on 127.0.0.1 and the test
Postgres: ``/api/v1/cluster`` answers the nodes (one up, one lost, one stopped), the queue's
depth and the jobs running and on which node; a home outside a cluster gets a 404 that says
how to turn cluster mode on, one whose database is down a 503; and the overview, in Chromium,
shows the Cluster section with the lost node's badge.

The cluster is made by hand, without nodes: squad's own heartbeat rows are written with the
store (a frozen clock makes one node's beat old), and procrastinate's workers take the jobs
through its job manager, so each job is running on a known worker.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from sqlalchemy import text
from sqlalchemy.engine import Engine

from squad.app import App
from squad.clock import FrozenClock
from squad.settings import Settings
from squad.spec.loader import squad_from_text
from squad.web.server import login_url
from tests.conftest import BASIC_YAML
from tests.support.web import Site, serve
from tests.web.test_browser import (  # noqa: F401 - browser: the module's Chromium
    TIMEOUT_MS,
    VIEWPORT,
    browser,
    expect,
    page_errors,
    shot,
)

if TYPE_CHECKING:
    from playwright.sync_api import Browser

pytestmark = pytest.mark.postgres

STALL_TIMEOUT_S = 600
"""Long enough that the live worker's procrastinate heartbeat (never moved here) stays fresh
for the whole module."""
LOST_FOR_S = 1200


@dataclass
class Clustered:
    site: Site
    jobs: dict[str, int]
    """The job ids: ``run`` (on d-up), ``extraction`` (on w-lost, stalled), ``waiting``."""


def home(root: Path, settings_yaml: str | None = None) -> Settings:
    configs = root / "configs"
    (configs / "squads").mkdir(parents=True)
    if settings_yaml is not None:
        (configs / "settings.yaml").write_text(settings_yaml)
    return Settings.load(
        {
            "SQUAD_HOME": str(root / "home"),
            "SQUAD_WORKSPACES": str(root / "workspaces"),
            "SQUAD_CONFIGS": str(configs),
        },
        cwd=root,
    )


def cluster_yaml(database_url: str, queue_schema: str) -> str:
    return (
        f"database_url: '{database_url}'\n"
        "cluster:\n"
        "  enabled: true\n"
        f"  schema_name: {queue_schema}\n"
        f"  stall_timeout_s: {STALL_TIMEOUT_S}\n"
    )


def make_cluster(app: App, clock: FrozenClock, admin: Engine, queue_schema: str) -> dict[str, int]:
    """Three nodes and three jobs: a run on d-up, an extraction pass on w-lost (whose worker
    stopped beating, so the job is stalled), a second run of the squad waiting on its lock;
    w-stopped said it stopped."""
    app.squads.create(squad_from_text(BASIC_YAML, source="test.yaml"))
    client = app.cluster
    manager = client.open().app.job_manager
    up_worker = int(client.call(manager.register_worker()))
    lost_worker = int(client.call(manager.register_worker()))

    def take(job: int | None, worker: int) -> int:
        assert job is not None
        taken = client.call(manager.fetch_job(queues=None, worker_id=worker))
        assert taken is not None and taken.id == job
        return job

    run = take(client.defer_run({"squad": "demo", "trigger": "test"}), up_worker)
    extraction = take(client.defer_extraction("demo", "writer"), lost_worker)
    waiting = client.defer_run({"squad": "demo", "trigger": "test"})
    assert waiting is not None
    with admin.begin() as connection:
        connection.execute(
            text(
                f'UPDATE "{queue_schema}".procrastinate_workers '
                "SET last_heartbeat = now() - interval '1 hour' WHERE id = :id"
            ),
            {"id": lost_worker},
        )

    nodes = app.store.cluster
    started = clock()
    nodes.beat(
        "w-lost",
        host="node-b",
        pid=202,
        role="worker",
        started_at=started,
        worker_id=lost_worker,
        state={"concurrency": 1, "running": []},
    )
    clock.advance(LOST_FOR_S)
    running = [
        {
            "job": run,
            "squad": "demo",
            "run_id": "run-on-d-up",
            "attempt": 1,
            "since": clock().isoformat(),
        }
    ]
    nodes.beat(
        "d-up",
        host="node-a",
        pid=101,
        role="daemon",
        started_at=started,
        worker_id=up_worker,
        state={"concurrency": 2, "running": running},
    )
    nodes.beat(
        "w-stopped", host="node-c", pid=303, role="worker", started_at=started, worker_id=None
    )
    assert nodes.mark_stopped("w-stopped", pid=303)
    return {"run": run, "extraction": extraction, "waiting": waiting}


@contextmanager
def cluster_home(root: Path, admin: Engine, clock: FrozenClock) -> Iterator[tuple[App, str]]:
    """An App on a cluster home: a fresh schema for the store, another for the queue (its
    name given back), both dropped after."""
    suffix = secrets.token_hex(5)
    store_schema, queue_schema = f"squad_web_{suffix}", f"squad_webq_{suffix}"
    with admin.begin() as connection:
        connection.execute(text(f'CREATE SCHEMA "{store_schema}"'))
    try:
        url = admin.url.update_query_dict({"options": f"-csearch_path={store_schema}"})
        database_url = url.render_as_string(hide_password=False)
        settings = home(root, cluster_yaml(database_url, queue_schema))
        with App.open(settings, clock=clock) as app:
            yield app, queue_schema
    finally:
        with admin.begin() as connection:
            connection.execute(text(f'DROP SCHEMA IF EXISTS "{store_schema}" CASCADE'))
            connection.execute(text(f'DROP SCHEMA IF EXISTS "{queue_schema}" CASCADE'))


@pytest.fixture(scope="module")
def clustered(
    tmp_path_factory: pytest.TempPathFactory, postgres_admin: Engine
) -> Iterator[Clustered]:
    """The cluster of :func:`make_cluster` behind a real server, its clock frozen after the
    nodes beat."""
    clock = FrozenClock(datetime.now(UTC))
    with cluster_home(tmp_path_factory.mktemp("cluster-web"), postgres_admin, clock) as (
        app,
        queue_schema,
    ):
        jobs = make_cluster(app, clock, postgres_admin, queue_schema)
        with serve(app) as site:
            yield Clustered(site, jobs)


def cluster_json(site: Site) -> dict[str, Any]:
    response = site.get("/api/v1/cluster")
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("application/json")
    body: dict[str, Any] = response.json()
    return body


# -- the API -----------------------------------------------------------------------------------


def test_cluster_api_names_each_node_with_its_state_heartbeat_age_and_runs(
    clustered: Clustered,
) -> None:
    body = cluster_json(clustered.site)

    nodes = {node["name"]: node for node in body["nodes"]}
    assert {name: node["state"] for name, node in nodes.items()} == {
        "d-up": "up",
        "w-lost": "lost",
        "w-stopped": "stopped",
    }
    up, lost = nodes["d-up"], nodes["w-lost"]
    assert (up["role"], up["host"], up["pid"], up["concurrency"]) == ("daemon", "node-a", 101, 2)
    assert up["beat_age_s"] == 0.0
    assert lost["beat_age_s"] == LOST_FOR_S
    assert [(r["job"], r["run_id"]) for r in up["running"]] == [
        (clustered.jobs["run"], "run-on-d-up")
    ]
    assert lost["running"] == []  # what a lost node last said it ran is not shown as running
    assert body["stall_timeout_s"] == STALL_TIMEOUT_S


def test_cluster_api_counts_the_waiting_job_and_names_the_node_of_each_running_one(
    clustered: Clustered,
) -> None:
    body = cluster_json(clustered.site)
    jobs = clustered.jobs

    assert body["queue"]["waiting"] == 1
    assert body["queue"]["by_queue"]["runs"] == 1
    running = {job["job"]: job for job in body["running"]}
    assert set(running) == {jobs["run"], jobs["extraction"]}
    run, extraction = running[jobs["run"]], running[jobs["extraction"]]
    assert (run["task"], run["what"], run["node"], run["stalled"]) == (
        "squad.run",
        "demo",
        "d-up",
        False,
    )
    assert (extraction["task"], extraction["what"], extraction["node"]) == (
        "squad.extract",
        "demo/writer",
        "w-lost",
    )
    assert extraction["stalled"] is True
    assert [job["job"] for job in body["stalled"]] == [jobs["extraction"]]


def test_overview_api_carries_the_same_cluster_view(clustered: Clustered) -> None:
    response = clustered.site.get("/api/v1/overview")
    assert response.status_code == 200, response.text
    assert response.json()["cluster"] == cluster_json(clustered.site)


def test_cluster_api_is_404_with_how_to_turn_cluster_mode_on_outside_a_cluster(
    tmp_path: Path,
) -> None:
    with App.open(home(tmp_path)) as app, serve(app) as site:
        response = site.get("/api/v1/cluster")
        overview = site.get("/")

    assert response.status_code == 404
    assert response.headers["content-type"].startswith("application/json")
    detail = response.json()["detail"]
    assert "not part of a cluster" in detail
    assert "cluster: {enabled: true}" in detail and "settings.yaml" in detail
    assert overview.status_code == 200
    assert 'id="cluster"' not in overview.text
    assert 'id="squads"' in overview.text


def test_cluster_api_is_503_and_the_overview_says_unreachable_when_the_queue_is_gone(
    tmp_path: Path, postgres_admin: Engine
) -> None:
    with cluster_home(tmp_path, postgres_admin, FrozenClock(datetime.now(UTC))) as (app, queue):
        app.cluster.open()
        with postgres_admin.begin() as connection:
            connection.execute(text(f'DROP SCHEMA "{queue}" CASCADE'))
        with serve(app) as site:
            response = site.get("/api/v1/cluster")
            overview = site.get("/")

    assert response.status_code == 503
    assert response.headers["content-type"].startswith("application/json")
    assert "the cluster's queue failed" in response.json()["detail"]
    assert overview.status_code == 200
    assert 'id="cluster-unreachable"' in overview.text
    assert "cluster-nodes" not in overview.text
    assert 'id="squads"' in overview.text  # the rest of the overview still shows


# -- the overview page -------------------------------------------------------------------------


@pytest.mark.browser
def test_overview_in_chromium_shows_the_cluster_nodes_with_a_lost_badge(
    browser: Browser,  # noqa: F811 - the fixture imported from test_browser
    clustered: Clustered,
) -> None:
    site, jobs = clustered.site, clustered.jobs
    context = browser.new_context(viewport=VIEWPORT)
    context.set_default_timeout(TIMEOUT_MS)
    page = context.new_page()
    problems = page_errors(page)
    try:
        page.goto(login_url(site.url, site.token))
        expect(page).to_have_url(site.url)
        section = page.locator("#cluster")
        expect(section.get_by_role("heading", name="Cluster")).to_be_visible()

        lost = section.locator('#cluster-nodes tr[data-node="w-lost"]')
        badge = lost.locator(".status")
        expect(badge).to_have_text("lost")
        expect(badge).to_have_class(re.compile(r"\bnode-lost\b"))
        assert badge.evaluate("e => getComputedStyle(e).color") == "rgb(179, 38, 30)"
        expect(lost).to_contain_text("node-b")
        expect(lost).to_contain_text("20 min ago")

        up = section.locator('#cluster-nodes tr[data-node="d-up"]')
        expect(up.locator(".status")).to_have_text("up")
        expect(up).to_contain_text("0 s ago")
        expect(up.get_by_role("link", name="run-on-d-up")).to_be_visible()
        stopped = section.locator('#cluster-nodes tr[data-node="w-stopped"]')
        expect(stopped.locator(".status")).to_have_text("stopped")

        expect(section.locator("#cluster-summary")).to_contain_text("1 lost")
        expect(section.locator("#cluster-queue")).to_have_text("1 waiting in the queue")
        stalled = section.locator(f'#cluster-jobs tr[data-job="{jobs["extraction"]}"]')
        expect(stalled).to_contain_text("stalled")
        expect(stalled).to_contain_text("w-lost")
        running = section.locator(f'#cluster-jobs tr[data-job="{jobs["run"]}"]')
        expect(running).to_contain_text("d-up")
        expect(running.get_by_role("link", name="run-on-d-up")).to_be_visible()
        shot(page, "cluster-overview.png")

        # The overview polls its body: the section comes back with it.
        with page.expect_response(lambda r: "part=body" in r.url) as polled:
            pass
        assert polled.value.status == 200
        expect(section.locator('tr[data-node="w-lost"] .status')).to_have_text("lost")
    finally:
        context.close()
    assert problems == []


def test_the_cluster_section_in_korean_counts_ages_and_stalls_in_korean(
    clustered: Clustered,
) -> None:
    """The cluster section is in the catalogue like the rest of the overview; node names,
    hosts and job ids stay as they are."""
    body = clustered.site.client.get(
        "/?part=body", headers={"Accept-Language": "ko", "HX-Request": "true"}
    ).text
    section = body[body.index('<section id="cluster"') :]
    assert '<h2 id="cluster-title">클러스터</h2>' in section
    assert "연결 끊김 1" in section  # the lost node, counted
    assert "대기열 1건" in section
    assert "20분 전" in section and "0초 전" in section  # heartbeat ages
    assert '<span class="status node-lost">연결 끊김</span>' in section
    assert "1건 멈춤" in section  # the stalled extraction job
    assert "w-lost" in section and "node-b" in section
