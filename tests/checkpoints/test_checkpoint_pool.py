"""Postgres checkpoints' pooled connections: one the server dropped while it sat idle in the
pool is replaced before it is handed out; one used moments ago is handed out unchecked."""

from __future__ import annotations

import pytest
from sqlalchemy.engine import Engine, make_url

from squad.checkpoints.postgres import PostgresCheckpoints
from squad.store import pool_checks
from tests.support.databases import drop_connections

pytestmark = pytest.mark.postgres

APP = "squad-checkpoint-pool-test"


def _checkpoints(url: str) -> PostgresCheckpoints:
    named = make_url(url).update_query_dict({"application_name": APP})
    return PostgresCheckpoints(named.render_as_string(hide_password=False))


def test_a_checkpoint_connection_dropped_while_idle_is_replaced(
    fresh_schema: str, postgres_admin: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pool_checks, "PING_IDLE_S", 0.0)
    checkpoints = _checkpoints(fresh_schema)
    try:
        checkpoints.setup()
        drop_connections(postgres_admin, APP)
        assert checkpoints.threads() == []
    finally:
        checkpoints.close()


def test_a_checkpoint_connection_used_moments_ago_is_handed_out_unchecked(
    fresh_schema: str, postgres_admin: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    import psycopg

    monkeypatch.setattr(pool_checks, "PING_IDLE_S", 3600.0)
    checkpoints = _checkpoints(fresh_schema)
    try:
        checkpoints.setup()
        drop_connections(postgres_admin, APP)
        with pytest.raises(psycopg.OperationalError):
            checkpoints.threads()
    finally:
        checkpoints.close()
