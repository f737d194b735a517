"""Shared fixtures: example definitions, a frozen clock, isolated settings, databases.

squad and sqlalchemy are imported inside the fixtures, not here: a test file that needs
neither starts as fast as pytest itself (``tests/support/databases.py`` says how the
databases are made once and copied).
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine

    from squad.app import App
    from squad.clock import FrozenClock
    from squad.settings import Settings
    from squad.spec.models import SquadSpec
    from squad.store import Store
    from tests.support.databases import MigratedSchema

REPO = Path(__file__).resolve().parent.parent


def pytest_configure(config: pytest.Config) -> None:
    """Hypothesis checks what its examples do, not how fast it makes them: its timing health
    check and per-example deadline failed on a machine busy with other work (a generated
    input "slow" at 1.1 s), which says nothing about the code under test."""
    from hypothesis import HealthCheck, settings

    settings.register_profile("squad", deadline=None, suppress_health_check=[HealthCheck.too_slow])
    settings.load_profile("squad")


EXAMPLES = sorted((REPO / "configs" / "squads").glob("*.yaml"))

BASIC_YAML = """\
name: demo
goal: Ship it.
agents:
  - {id: planner, role: Plans the work, profile: planner-v1}
  - {id: writer, role: Writes the pages}
tasks:
  - {id: outline, description: Outline the guide., agent: planner}
  - {id: draft, description: Write the guide., agent: writer, depends_on: [outline]}
"""


def pytest_sessionstart(session: pytest.Session) -> None:
    """With SQUAD_TEST_NO_SUBPROCESS=1 (``make test-fast``), a test that starts a process fails
    (``tests/support/no_processes.py``). Not in the xdist controller: it starts the workers
    (already running when this runs in them, so the guard never stands in xdist's way)."""
    from tests.support import no_processes

    controller = session.config.pluginmanager.has_plugin("dsession")
    if no_processes.wanted() and not controller:
        guard = no_processes.NoProcesses()
        guard.install()
        session.config.pluginmanager.register(guard, "squad-no-processes")


@pytest.fixture(scope="session", autouse=True)
def private_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """``XDG_CACHE_HOME`` in a temporary folder for the session (and the processes its tests
    start): the tokenizers' parsed rank tables are kept there, not in the user's cache."""
    folder = tmp_path_factory.mktemp("xdg-cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_CACHE_HOME", str(folder))
        yield folder


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under pytest-xdist, a test marked ``serial`` is skipped: it disturbs what the other
    workers use (it restarts the Postgres server); ``make test`` runs it after the rest."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return
    skip = pytest.mark.skip(reason="runs alone: `pytest -m serial` (make test runs it last)")
    for item in items:
        if item.get_closest_marker("serial") is not None:
            item.add_marker(skip)


@pytest.fixture
def clock() -> FrozenClock:
    from squad.clock import FrozenClock

    return FrozenClock()


@pytest.fixture
def make_spec() -> Callable[..., SquadSpec]:
    from squad.spec.loader import squad_from_text

    def make(text: str = BASIC_YAML) -> SquadSpec:
        return squad_from_text(text, source="test.yaml")

    return make


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    """Settings rooted in a temporary folder, no environment leaking in."""
    from squad.settings import Settings

    return Settings.load(
        {
            "SQUAD_HOME": str(tmp_path / "home"),
            "SQUAD_WORKSPACES": str(tmp_path / "workspaces"),
            "SQUAD_CONFIGS": str(tmp_path / "configs"),
        },
        cwd=tmp_path,
    )


@pytest.fixture(scope="session")
def postgres_admin() -> Iterator[Engine]:
    """An engine on this pytest process's own Postgres database (``<db>_<worker>`` beside the
    one SQUAD_TEST_POSTGRES_URL names); skips (or fails, if required) when unreachable."""
    from sqlalchemy.exc import OperationalError

    from tests.support.databases import base_postgres_url, own_database

    base = base_postgres_url()
    with ExitStack() as stack:
        try:
            engine = stack.enter_context(own_database(base))
        except OperationalError as exc:
            message = f"PostgreSQL at {base!r} is unreachable: {exc.orig}"
            if os.environ.get("SQUAD_REQUIRE_POSTGRES") == "1":
                pytest.fail(f"{message} (SQUAD_REQUIRE_POSTGRES=1 demands it)")
            pytest.skip(message)
        yield engine


@pytest.fixture(scope="session")
def postgres_store(postgres_admin: Engine) -> Iterator[MigratedSchema]:
    """A schema migrated once per session, emptied for each test that asks for it."""
    from tests.support.databases import MigratedSchema

    schema = MigratedSchema(postgres_admin)
    yield schema
    schema.close()


@pytest.fixture(scope="session")
def sqlite_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A SQLite database migrated once per session, copied for each test that asks for one."""
    from tests.support.databases import migrated_sqlite

    return migrated_sqlite(tmp_path_factory.mktemp("template"))


@pytest.fixture
def fresh_schema(postgres_admin: Engine) -> Iterator[str]:
    """A URL whose search_path is a new, empty schema, dropped with everything in it after."""
    import secrets

    from sqlalchemy import text

    from tests.support.databases import schema_url

    schema = f"squad_test_{secrets.token_hex(6)}"
    with postgres_admin.begin() as connection:
        connection.execute(text(f'CREATE SCHEMA "{schema}"'))
    try:
        yield schema_url(postgres_admin, schema)
    finally:
        with postgres_admin.begin() as connection:
            connection.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def empty_store_url(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """The URL of an empty database, once per backend (for the migration tests)."""
    if request.param == "sqlite":
        # A folder that does not exist yet: the store must create it.
        yield f"sqlite:///{tmp_path_factory.mktemp('store') / 'state' / 'squad.db'}"
    else:
        yield request.getfixturevalue("fresh_schema")


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def store_url(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> str:
    """The URL of a database migrated to head and holding nothing, once per backend."""
    if request.param == "sqlite":
        from tests.support.databases import copy_sqlite

        path = tmp_path_factory.mktemp("store") / "state" / "squad.db"
        copy_sqlite(request.getfixturevalue("sqlite_template"), path)
        return f"sqlite:///{path}"
    schema: MigratedSchema = request.getfixturevalue("postgres_store")
    return schema.empty()


@pytest.fixture
def app(settings: Settings, request: pytest.FixtureRequest) -> Iterator[App]:
    """The composition root over the test's settings (its SQLite database a copy of the
    migrated template), closed (extraction drained) after."""
    from squad.app import App
    from squad.store.engine import parse_url, sqlite_file
    from tests.support.databases import copy_sqlite

    path = sqlite_file(parse_url(settings.database_url))
    if path is not None and not path.exists():
        copy_sqlite(request.getfixturevalue("sqlite_template"), path)
    with App.open(settings) as opened:
        yield opened


@pytest.fixture(autouse=True)
def no_extraction_left_behind() -> Iterator[None]:
    """Extraction passes a test queued and did not wait for are dropped when it ends, so none
    runs later, in another test (against a stub server that is gone)."""
    before = set(threading.enumerate())
    yield
    background = sys.modules.get("squad.extraction.background")
    if background is None:  # never imported: no extraction can have started
        return
    for thread in set(threading.enumerate()) - before:
        if isinstance(thread, background.Worker):
            thread.owner.close(10.0, abandon=True)


def propose(
    store: Store,
    squad: str,
    agent: str,
    text: str,
    *,
    layer: str = "project",
    confidence: float = 0.55,
) -> int:
    """Put ``text`` in the agent's review queue as the extractor would (offline, from a chat
    message); the new item's id."""
    from squad.extraction.review import review_key
    from squad.store.review import NewProposal

    record, queued = store.review.propose(
        NewProposal(
            squad=squad,
            agent=agent,
            layer=layer,  # type: ignore[arg-type]
            text=text,
            key=review_key(text),
            confidence=confidence,
            extractor="offline",
            source="chat:2030-01-01",
            section="Insights" if layer == "project" else None,
        )
    )
    assert queued, f"{text!r} was not queued"
    return record.id
