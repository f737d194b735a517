"""Experiential memory: one embedding vector per fact, for semantic ranking.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-30

Only a new table, so existing facts are not touched; facts get their vectors lazily, when an
embedder is configured and ranks them. Spelled out rather than imported from
squad.store.tables, as 0001 explains.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "memory_vectors",
        sa.Column("fact_id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("model", sa.String(), nullable=False),
        sa.Column("dims", sa.Integer(), nullable=False),
        sa.Column("vector", sa.LargeBinary(), nullable=False),
        sa.ForeignKeyConstraint(
            ["fact_id"],
            ["memory_facts.id"],
            name="fk_memory_vectors_fact_id_memory_facts",
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("fact_id", name="pk_memory_vectors"),
    )


def downgrade() -> None:
    op.drop_table("memory_vectors")
