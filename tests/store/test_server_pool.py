"""A server store's pooled connections (Postgres): a connection the server dropped while it
sat idle in the pool is replaced before it is handed out; one used moments ago is handed out
unchecked (no round trip), and the first statement that finds it dropped replaces the pool."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from sqlalchemy import text
from sqlalchemy.engine import Engine
from sqlalchemy.exc import OperationalError

from squad.store import engine as store_engine
from squad.store import pool_checks
from tests.support.databases import drop_connections

pytestmark = pytest.mark.postgres

APP = "squad-pool-test"


@contextmanager
def _engine(admin: Engine) -> Iterator[Engine]:
    url = admin.url.update_query_dict({"application_name": APP})
    engine = store_engine.make_engine(url.render_as_string(hide_password=False))
    try:
        yield engine
    finally:
        engine.dispose()


def _select_one(engine: Engine) -> int:
    with engine.connect() as connection:
        return int(connection.execute(text("SELECT 1")).scalar_one())


def test_a_connection_dropped_while_idle_is_replaced_before_it_is_handed_out(
    postgres_admin: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pool_checks, "PING_IDLE_S", 0.0)
    with _engine(postgres_admin) as engine:
        assert _select_one(engine) == 1
        drop_connections(postgres_admin, APP)
        assert _select_one(engine) == 1


def test_a_connection_used_moments_ago_is_handed_out_unchecked_and_a_drop_replaces_the_pool(
    postgres_admin: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pool_checks, "PING_IDLE_S", 3600.0)
    with _engine(postgres_admin) as engine:
        assert _select_one(engine) == 1
        drop_connections(postgres_admin, APP)
        with pytest.raises(OperationalError):
            _select_one(engine)
        assert _select_one(engine) == 1


def _async_pool_select_one_after_drop(admin: Engine) -> int:
    import asyncio

    from psycopg_pool import AsyncConnectionPool

    from squad.store.pool_checks import idle_checked_async_pool

    url = admin.url.set(drivername="postgresql").update_query_dict({"application_name": APP})

    async def scenario() -> int:
        pool = idle_checked_async_pool(AsyncConnectionPool)(
            url.render_as_string(hide_password=False), min_size=1, max_size=1, open=False
        )
        await pool.open(wait=True)
        try:
            async with pool.connection() as connection:
                await connection.execute("SELECT 1")
            await asyncio.to_thread(drop_connections, admin, APP)
            async with pool.connection() as connection:
                row = await (await connection.execute("SELECT 1")).fetchone()
                assert row is not None
                return int(row[0])
        finally:
            await pool.close()

    return asyncio.run(scenario())


def test_a_queue_connection_dropped_while_idle_is_replaced(
    postgres_admin: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pool_checks, "PING_IDLE_S", 0.0)
    assert _async_pool_select_one_after_drop(postgres_admin) == 1


def test_a_queue_connection_used_moments_ago_is_handed_out_unchecked(
    postgres_admin: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    import psycopg

    monkeypatch.setattr(pool_checks, "PING_IDLE_S", 3600.0)
    with pytest.raises(psycopg.OperationalError):
        _async_pool_select_one_after_drop(postgres_admin)
