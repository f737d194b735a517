"""A cluster of daemons and workers on one Postgres.

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-02

Squads keep their validated definition (a worker that never saw the YAML file runs it), runs
name the cluster job that runs them, and nodes beat in ``cluster_nodes``. Spelled out rather
than imported from squad.store.tables, as 0001 explains.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("squads") as batch:
        batch.add_column(sa.Column("definition", sa.JSON(), nullable=True))
    with op.batch_alter_table("runs") as batch:
        batch.add_column(sa.Column("job", sa.String(), nullable=True))
        batch.create_index("ix_runs_job", ["job"], unique=False)
    op.create_table(
        "cluster_nodes",
        sa.Column("name", sa.String(), nullable=False),
        sa.Column("host", sa.String(), nullable=False),
        sa.Column("pid", sa.Integer(), nullable=False),
        sa.Column("role", sa.String(16), nullable=False),
        sa.Column("worker_id", sa.Integer(), nullable=True),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("beat_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("stopped_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("state", sa.JSON(), nullable=True),
        sa.PrimaryKeyConstraint("name", name=op.f("pk_cluster_nodes")),
    )


def downgrade() -> None:
    op.drop_table("cluster_nodes")
    with op.batch_alter_table("runs") as batch:
        batch.drop_index("ix_runs_job")
        batch.drop_column("job")
    with op.batch_alter_table("squads") as batch:
        batch.drop_column("definition")
