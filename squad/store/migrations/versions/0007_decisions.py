"""Decisions with their reasons.

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-02

One new table; nothing existing changes. Spelled out rather than imported from
squad.store.tables, as 0001 explains.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "decisions",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("squad", sa.String(), nullable=False),
        sa.Column("title", sa.Text(), nullable=False),
        sa.Column("decision", sa.Text(), nullable=False),
        sa.Column("decision_key", sa.String(64), nullable=False),
        sa.Column("reasons", sa.Text(), nullable=False),
        sa.Column("alternatives", sa.Text(), nullable=False),
        sa.Column("decided_by", sa.String(), nullable=False),
        sa.Column("decided_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("supersedes", sa.Integer(), nullable=True),
        sa.Column("superseded_by", sa.Integer(), nullable=True),
        sa.ForeignKeyConstraint(
            ["supersedes"],
            ["decisions.id"],
            name="fk_decisions_supersedes_decisions",
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["superseded_by"],
            ["decisions.id"],
            name="fk_decisions_superseded_by_decisions",
            ondelete="SET NULL",
        ),
        sa.PrimaryKeyConstraint("id", name="pk_decisions"),
        sqlite_autoincrement=True,
    )
    op.create_index("ix_decisions_squad_id", "decisions", ["squad", "id"])
    op.create_index("ix_decisions_squad_decision_key", "decisions", ["squad", "decision_key"])


def downgrade() -> None:
    op.drop_index("ix_decisions_squad_decision_key", table_name="decisions")
    op.drop_index("ix_decisions_squad_id", table_name="decisions")
    op.drop_table("decisions")
