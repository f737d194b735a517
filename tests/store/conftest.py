"""Fixtures shared by the store tests: one URL per backend, a controllable clock."""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.engine import Engine, make_url
from sqlalchemy.exc import OperationalError
from sqlalchemy.pool import NullPool

from squad.clock import FrozenClock
from squad.store import Store

DEFAULT_POSTGRES_URL = "postgresql+psycopg://postgres@127.0.0.1:5432/test"
START = datetime(2030, 1, 2, 3, 4, 5, 678901, tzinfo=UTC)


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
def clock() -> FrozenClock:
    """Overrides the suite-wide clock: starts at an instant with microseconds, so round trips
    through each backend are checked to the microsecond, and ``advance`` returns the new time."""
    return FrozenClock(START)


@pytest.fixture
def store(store_url: str, clock: FrozenClock) -> Iterator[Store]:
    with Store.open(store_url, clock=clock) as opened:
        yield opened
