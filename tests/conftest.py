"""Shared fixtures: example definitions, a frozen clock, isolated settings."""

from __future__ import annotations

import os
import secrets
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.engine import Engine, make_url
from sqlalchemy.exc import OperationalError
from sqlalchemy.pool import NullPool

from squad.app import App
from squad.clock import FrozenClock
from squad.extraction.background import Worker
from squad.settings import Settings
from squad.spec.loader import squad_from_text
from squad.spec.models import SquadSpec
from squad.store import Store

REPO = Path(__file__).resolve().parent.parent
DEFAULT_POSTGRES_URL = "postgresql+psycopg://postgres@127.0.0.1:5432/test"
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


@pytest.fixture
def clock() -> FrozenClock:
    return FrozenClock()


@pytest.fixture
def make_spec() -> Callable[..., SquadSpec]:
    def make(text: str = BASIC_YAML) -> SquadSpec:
        return squad_from_text(text, source="test.yaml")

    return make


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    """Settings rooted in a temporary folder, no environment leaking in."""
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
    """An engine on the test Postgres server; skips (or fails, if required) when unreachable."""
    url = os.environ.get("SQUAD_TEST_POSTGRES_URL", DEFAULT_POSTGRES_URL)
    engine = create_engine(url, poolclass=NullPool, connect_args={"connect_timeout": 5})
    try:
        with engine.connect():
            pass
    except OperationalError as exc:
        engine.dispose()
        message = f"PostgreSQL at {make_url(url)!r} is unreachable: {exc.orig}"
        if os.environ.get("SQUAD_REQUIRE_POSTGRES") == "1":
            pytest.fail(f"{message} (SQUAD_REQUIRE_POSTGRES=1 demands it)")
        pytest.skip(message)
    yield engine
    engine.dispose()


def _fresh_postgres_schema(admin: Engine) -> Iterator[str]:
    """A URL whose search_path is a new, empty schema, dropped with everything in it after."""
    schema = f"squad_test_{secrets.token_hex(6)}"
    with admin.begin() as connection:
        connection.execute(text(f'CREATE SCHEMA "{schema}"'))
    url = admin.url.update_query_dict({"options": f"-csearch_path={schema}"})
    try:
        yield url.render_as_string(hide_password=False)
    finally:
        with admin.begin() as connection:
            connection.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def store_url(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """The URL of an empty database, once per backend."""
    if request.param == "sqlite":
        # A folder that does not exist yet: the store must create it.
        yield f"sqlite:///{tmp_path_factory.mktemp('store') / 'state' / 'squad.db'}"
    else:
        yield from _fresh_postgres_schema(request.getfixturevalue("postgres_admin"))


@pytest.fixture
def app(settings: Settings) -> Iterator[App]:
    """The composition root over the test's settings, closed (extraction drained) after."""
    with App.open(settings) as opened:
        yield opened


@pytest.fixture(autouse=True)
def no_extraction_left_behind() -> Iterator[None]:
    """Extraction passes a test queued and did not wait for are dropped when it ends, so none
    runs later, in another test (against a stub server that is gone)."""
    before = set(threading.enumerate())
    yield
    for thread in set(threading.enumerate()) - before:
        if isinstance(thread, Worker):
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
