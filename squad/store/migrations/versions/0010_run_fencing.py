"""Runs carry a fencing epoch: the cluster's claim of a run is checked by the database.

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-06

``runs.epoch`` counts the claims of a run (0: never claimed); a cluster node that takes a run
raises it and writes the run's state (its status, its task rows, its checkpoints) only where
the epoch is still its own, so a node that lost the run while frozen cannot write over the
node that took it. ``runs.owner`` names the node of the latest claim. Spelled out rather
than imported from squad.store.tables, as 0001 explains.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("runs") as batch:
        batch.add_column(
            sa.Column("epoch", sa.Integer(), nullable=False, server_default=sa.text("0"))
        )
        batch.add_column(sa.Column("owner", sa.String(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("runs") as batch:
        batch.drop_column("owner")
        batch.drop_column("epoch")
