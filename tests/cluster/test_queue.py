"""The cluster's queue on the test Postgres: its schema set up once however many nodes start
at once and kept apart from the store's tables, one job per fire of a schedule, one waiting
extraction pass per agent, and a new run coalesced into one already waiting."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import inspect, text
from sqlalchemy.engine import Engine, make_url

from squad.app import App
from squad.jobqueue.schema import ensure_schema
from squad.settings import Settings

pytestmark = pytest.mark.postgres


@pytest.fixture
def cluster_app(tmp_path: Path, postgres_admin: Engine) -> Iterator[App]:
    token = tmp_path.name[-10:].replace("-", "_").lower()
    store, queue = f"squad_q_store_{token}", f"squad_q_jobs_{token}"
    with postgres_admin.begin() as connection:
        connection.execute(text(f'CREATE SCHEMA "{store}"'))
    url = postgres_admin.url.update_query_dict({"options": f"-csearch_path={store}"})
    configs = tmp_path / "configs"
    configs.mkdir()
    (configs / "settings.yaml").write_text(
        f"database_url: '{url.render_as_string(hide_password=False)}'\n"
        f"cluster: {{enabled: true, schema_name: {queue}}}\n"
    )
    settings = Settings.load(
        {"SQUAD_HOME": str(tmp_path / "home"), "SQUAD_CONFIGS": str(configs)}, cwd=tmp_path
    )
    try:
        with App.open(settings) as app:
            yield app
    finally:
        with postgres_admin.begin() as connection:
            connection.execute(text(f'DROP SCHEMA IF EXISTS "{store}" CASCADE'))
            connection.execute(text(f'DROP SCHEMA IF EXISTS "{queue}" CASCADE'))


def test_nodes_starting_at_once_set_up_the_queue_once_in_its_own_schema(
    cluster_app: App, postgres_admin: Engine
) -> None:
    made: list[bool] = []
    errors: list[BaseException] = []

    def start() -> None:
        try:
            made.append(ensure_schema(cluster_app.settings))
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=start) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert sorted(made) == [False, False, False, True]
    assert ensure_schema(cluster_app.settings) is False
    cluster_app.store.list_squads()  # the store's own schema, migrated
    schema = cluster_app.settings.cluster.schema_name
    with postgres_admin.connect() as connection:
        found = inspect(connection)
        assert "procrastinate_jobs" in found.get_table_names(schema=schema)
        options = str(make_url(cluster_app.settings.database_url).query["options"])
        store_tables = found.get_table_names(schema=options.removeprefix("-csearch_path="))
        assert "squads" in store_tables and "procrastinate_jobs" not in store_tables
        trigger = connection.execute(
            text("SELECT count(*) FROM pg_trigger WHERE tgname = 'squad_notify_job_released'")
        ).scalar_one()
    assert trigger >= 1


def test_a_fire_of_a_schedule_is_queued_once_whoever_defers_it(cluster_app: App) -> None:
    client = cluster_app.cluster
    fire = ("squad:demo", 1_800_000_000)
    first = client.defer_run({"squad": "demo", "trigger": "schedule"}, fire=fire)
    again = client.defer_run({"squad": "demo", "trigger": "schedule"}, fire=fire)
    later = client.defer_run(
        {"squad": "demo", "trigger": "schedule"}, fire=("squad:demo", 1_800_000_060)
    )
    assert first is not None and again is None and later is not None
    jobs = client.jobs("todo")
    assert sorted(j.args["timestamp"] for j in jobs) == [1_800_000_000, 1_800_000_060]
    assert {j.lock for j in jobs} == {"squad:demo"}  # one run of the squad at a time


def test_one_extraction_pass_per_agent_waits_in_the_queue(cluster_app: App) -> None:
    client = cluster_app.cluster
    assert client.defer_extraction("demo", "writer") is not None
    assert client.defer_extraction("demo", "writer") is None  # coalesced into the waiting one
    assert client.defer_extraction("demo", "planner") is not None
    locks = sorted(j.lock or "" for j in client.jobs("todo"))
    assert locks == ["extract:demo/planner", "extract:demo/writer"]


def test_a_new_run_asked_for_while_one_waits_is_coalesced(cluster_app: App) -> None:
    client = cluster_app.cluster
    assert not client.waiting_run("demo")
    client.defer_run({"squad": "demo", "trigger": "web"})
    assert client.waiting_run("demo")
    assert not client.waiting_run("other")


def test_a_run_goal_and_an_approval_reason_are_queued_with_their_credentials_redacted(
    cluster_app: App,
) -> None:
    # The queue's table is storage like any other: what a node reads back is the redacted
    # goal, as the run's own row keeps it.
    token = "ghp_" + "Zq8Lw3Vt6Nc1Xr5Bm9Kd2Hf7Jp4Gs0Ya6Ue3"
    client = cluster_app.cluster
    client.defer_run({"squad": "demo", "trigger": "web", "goal": f"audit the repo with {token}"})
    client.defer_run(
        {
            "squad": "other",
            "trigger": "web",
            "run_id": "r1",
            "decision": ["t2", True, "ok, the deploy password is Vexo!2931kl"],
        }
    )
    stored = [job.args for job in client.jobs("todo")]
    assert len(stored) == 2
    assert token not in repr(stored) and "Vexo!2931kl" not in repr(stored)
    goal = next(args["goal"] for args in stored if "goal" in args)
    assert goal.startswith("audit the repo with [REDACTED:")
    decision = next(args["decision"] for args in stored if "decision" in args)
    assert decision[:2] == ["t2", True] and "[REDACTED:" in decision[2]
