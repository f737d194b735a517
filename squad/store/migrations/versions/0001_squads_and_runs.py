"""Squads and their runs.

Revision ID: 0001
Revises:
Create Date: 2026-11-29

Migrations are history: never import squad.store.tables here, spell the schema out, so a later
change to the tables cannot rewrite what an old migration did.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "squads",
        sa.Column("name", sa.String(), nullable=False),
        sa.Column("workspace", sa.String(), nullable=False),
        sa.Column("source", sa.String(), nullable=True),
        sa.Column("definition_sha256", sa.String(64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("name", name="pk_squads"),
    )
    op.create_table(
        "runs",
        sa.Column("id", sa.String(), nullable=False),
        sa.Column("squad", sa.String(), nullable=False),
        sa.Column("status", sa.String(32), nullable=False),
        sa.Column("trigger", sa.String(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("ended_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("tokens_in", sa.Integer(), server_default=sa.text("0"), nullable=False),
        sa.Column("tokens_out", sa.Integer(), server_default=sa.text("0"), nullable=False),
        sa.Column("cost_usd", sa.Float(), server_default=sa.text("0"), nullable=False),
        sa.ForeignKeyConstraint(
            ["squad"], ["squads.name"], name="fk_runs_squad_squads", ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name="pk_runs"),
    )
    op.create_index("ix_runs_squad_created_at", "runs", ["squad", "created_at"])


def downgrade() -> None:
    op.drop_index("ix_runs_squad_created_at", table_name="runs")
    op.drop_table("runs")
    op.drop_table("squads")
