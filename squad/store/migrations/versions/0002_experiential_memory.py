"""Experiential memory: namespaces, facts and their lexical index.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-30

Only new tables, so existing squads and runs are not touched (no batch rebuild needed on
SQLite). Spelled out rather than imported from squad.store.tables, as 0001 explains.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "memory_namespaces",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("identity", sa.String(), nullable=False),
        sa.Column("name", sa.String(), nullable=False),
        sa.Column("enabled", sa.Boolean(), nullable=False),
        sa.Column("indexed_facts", sa.Integer(), server_default=sa.text("0"), nullable=False),
        sa.Column("indexed_terms", sa.Integer(), server_default=sa.text("0"), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_memory_namespaces"),
        sa.UniqueConstraint("identity", name="uq_memory_namespaces_identity"),
        sqlite_autoincrement=True,
    )
    op.create_table(
        "memory_facts",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("namespace_id", sa.Integer(), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("subject", sa.String(), nullable=True),
        sa.Column("squad", sa.String(), nullable=False),
        sa.Column("agent", sa.String(), nullable=False),
        sa.Column("run_id", sa.String(), nullable=True),
        sa.Column("turns", sa.JSON(), nullable=False),
        sa.Column("source", sa.String(), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("transient", sa.Boolean(), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("access_count", sa.Integer(), server_default=sa.text("0"), nullable=False),
        sa.Column("last_accessed_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("superseded_by", sa.Integer(), nullable=True),
        sa.Column("superseded_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("forgotten_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["namespace_id"],
            ["memory_namespaces.id"],
            name="fk_memory_facts_namespace_id_memory_namespaces",
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["superseded_by"],
            ["memory_facts.id"],
            name="fk_memory_facts_superseded_by_memory_facts",
            ondelete="SET NULL",
        ),
        sa.PrimaryKeyConstraint("id", name="pk_memory_facts"),
        sqlite_autoincrement=True,
    )
    op.create_index(
        "ix_memory_facts_recent", "memory_facts", ["namespace_id", "status", "updated_at", "id"]
    )
    op.create_index(
        "ix_memory_facts_expiry", "memory_facts", ["namespace_id", "status", "expires_at"]
    )
    op.create_index("ix_memory_facts_superseded_by", "memory_facts", ["superseded_by"])
    op.create_table(
        "memory_terms",
        sa.Column("namespace_id", sa.Integer(), nullable=False),
        sa.Column("term", sa.String(), nullable=False),
        sa.Column("df", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["namespace_id"],
            ["memory_namespaces.id"],
            name="fk_memory_terms_namespace_id_memory_namespaces",
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("namespace_id", "term", name="pk_memory_terms"),
        sqlite_with_rowid=False,
    )
    op.create_table(
        "memory_postings",
        sa.Column("namespace_id", sa.Integer(), nullable=False),
        sa.Column("term", sa.String(), nullable=False),
        sa.Column("fact_id", sa.Integer(), nullable=False),
        sa.Column("tf", sa.Integer(), nullable=False),
        sa.Column("doc_len", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["fact_id"],
            ["memory_facts.id"],
            name="fk_memory_postings_fact_id_memory_facts",
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("namespace_id", "term", "fact_id", name="pk_memory_postings"),
        sqlite_with_rowid=False,
    )
    op.create_index("ix_memory_postings_fact_id", "memory_postings", ["fact_id"])


def downgrade() -> None:
    op.drop_index("ix_memory_postings_fact_id", table_name="memory_postings")
    op.drop_table("memory_postings")
    op.drop_table("memory_terms")
    op.drop_index("ix_memory_facts_superseded_by", table_name="memory_facts")
    op.drop_index("ix_memory_facts_expiry", table_name="memory_facts")
    op.drop_index("ix_memory_facts_recent", table_name="memory_facts")
    op.drop_table("memory_facts")
    op.drop_table("memory_namespaces")
