"""Alembic environment for the state store.

It only runs on the connection :mod:`squad.store.migrate` passes in through
``config.attributes["connection"]``, inside the transaction and lock the caller holds; there is
no ``alembic.ini`` and no offline (``--sql``) mode. The same settings serve upgrades and
autogenerate comparison (``command.check`` / ``command.revision(autogenerate=True)``).
"""

from __future__ import annotations

from alembic import context
from sqlalchemy.engine import Connection

from squad.errors import StoreError
from squad.store.tables import metadata


def run_migrations() -> None:
    connection = context.config.attributes.get("connection")
    if context.is_offline_mode() or not isinstance(connection, Connection):
        raise StoreError(
            "squad's migrations run through squad.store (Store.open / migrate.upgrade) with a "
            "live connection; the alembic command line and --sql mode are not supported"
        )
    context.configure(
        connection=connection,
        target_metadata=metadata,
        # SQLite can alter little in place: render later migrations as copy-and-move batches.
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
        compare_server_default=True,
    )
    with context.begin_transaction():
        context.run_migrations()


run_migrations()
