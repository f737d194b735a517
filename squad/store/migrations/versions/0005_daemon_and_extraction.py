"""Daemon heartbeats, extraction runs, project-fact sightings.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-29

All new tables; nothing existing changes. Spelled out rather than imported from
squad.store.tables, as 0001 explains.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "daemon_heartbeats",
        sa.Column("home", sa.String(), nullable=False),
        sa.Column("pid", sa.Integer(), nullable=False),
        sa.Column("host", sa.String(), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("beat_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("stopped_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("state", sa.JSON(), nullable=True),
        sa.PrimaryKeyConstraint("home", name="pk_daemon_heartbeats"),
    )
    op.create_table(
        "extraction_runs",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("squad", sa.String(), nullable=False),
        sa.Column("agent", sa.String(), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("extractor", sa.String(32), nullable=False),
        sa.Column("from_seq", sa.Integer(), nullable=False),
        sa.Column("to_seq", sa.Integer(), nullable=False),
        sa.Column("message_ids", sa.JSON(), nullable=False),
        sa.Column("written", sa.JSON(), nullable=False),
        sa.Column("dropped", sa.JSON(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_extraction_runs"),
        sqlite_autoincrement=True,
    )
    op.create_index(
        "ix_extraction_runs_squad_agent_started_at",
        "extraction_runs",
        ["squad", "agent", "started_at"],
    )
    op.create_table(
        "memory_sightings",
        sa.Column("squad", sa.String(), nullable=False),
        sa.Column("agent", sa.String(), nullable=False),
        sa.Column("key", sa.String(), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("sources", sa.JSON(), nullable=False),
        sa.Column("first_seen_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_seen_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("proposed_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("squad", "agent", "key", name="pk_memory_sightings"),
    )


def downgrade() -> None:
    op.drop_table("memory_sightings")
    op.drop_index("ix_extraction_runs_squad_agent_started_at", table_name="extraction_runs")
    op.drop_table("extraction_runs")
    op.drop_table("daemon_heartbeats")
