"""The review queue: facts the extractor proposes that wait for a person.

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-20

With ``memory.review`` on (``low_confidence`` or ``all``) the extractor files the facts it
would have written in ``memory_review`` instead, as ``pending``; a person approves (the fact is
then written as the extractor would have written it), edits or rejects each. Decided rows are
kept (a rejected text is not queued again) until retention drops them with the old runs.
Spelled out rather than imported from squad.store.tables, as 0001 explains.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "memory_review",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("squad", sa.String(), nullable=False),
        sa.Column("agent", sa.String(), nullable=False),
        sa.Column("layer", sa.String(16), nullable=False),
        sa.Column("section", sa.String(), nullable=True),
        sa.Column("subject", sa.String(), nullable=True),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("key", sa.String(64), nullable=False),
        sa.Column("confidence", sa.Float(), nullable=False),
        sa.Column("extractor", sa.String(32), nullable=False),
        sa.Column("turns", sa.JSON(), nullable=False),
        sa.Column("run_id", sa.String(), nullable=True),
        sa.Column("source", sa.String(), nullable=False),
        sa.Column("details", sa.JSON(), nullable=True),
        sa.Column("proposed_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("decided_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("decided_by", sa.String(), nullable=True),
        sa.Column("edited_text", sa.Text(), nullable=True),
        sa.Column("outcome", sa.Text(), nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_memory_review"),
        sqlite_autoincrement=True,
    )
    op.create_index(
        "ix_memory_review_squad_agent_status", "memory_review", ["squad", "agent", "status", "id"]
    )
    op.create_index("ix_memory_review_squad_agent_key", "memory_review", ["squad", "agent", "key"])
    op.create_index("ix_memory_review_decided_at", "memory_review", ["decided_at"])


def downgrade() -> None:
    op.drop_index("ix_memory_review_decided_at", table_name="memory_review")
    op.drop_index("ix_memory_review_squad_agent_key", table_name="memory_review")
    op.drop_index("ix_memory_review_squad_agent_status", table_name="memory_review")
    op.drop_table("memory_review")
