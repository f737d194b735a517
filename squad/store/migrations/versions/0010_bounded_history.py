"""A store that stays bounded: spend rolled up by day, archive texts kept once.

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-06

Retention forgets runs older than ``daemon.retention.runs_days``; their spend survives as per
day totals in ``spend_days``. An agent's conversation archive keeps each distinct text once:
``archive_texts`` maps a text's sha256 to the fact that holds it, whose ``turns`` gather every
seq it was said at. Spelled out rather than imported from squad.store.tables, as 0001 explains.
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
    op.create_table(
        "spend_days",
        sa.Column("squad", sa.String(), nullable=False),
        sa.Column("day", sa.String(10), nullable=False),
        sa.Column("model", sa.String(), nullable=False),
        sa.Column("calls", sa.Integer(), nullable=False),
        sa.Column("prompt_tokens", sa.Integer(), nullable=False),
        sa.Column("completion_tokens", sa.Integer(), nullable=False),
        sa.Column("cost_usd", sa.Float(), nullable=False),
        sa.Column("latency_s", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("squad", "day", "model", name=op.f("pk_spend_days")),
    )
    op.create_table(
        "archive_texts",
        sa.Column("namespace_id", sa.Integer(), nullable=False),
        sa.Column("key", sa.String(64), nullable=False),
        sa.Column("fact_id", sa.Integer(), nullable=False),
        sa.Column("occurrences", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["namespace_id"],
            ["memory_namespaces.id"],
            name=op.f("fk_archive_texts_namespace_id_memory_namespaces"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["fact_id"],
            ["memory_facts.id"],
            name=op.f("fk_archive_texts_fact_id_memory_facts"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("namespace_id", "key", name=op.f("pk_archive_texts")),
    )


def downgrade() -> None:
    op.drop_table("archive_texts")
    op.drop_table("spend_days")
