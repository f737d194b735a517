"""Runtime: conversation messages, extraction watermarks, task states, spend; run goal and model.

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-01

``runs`` gains three nullable columns, added in a batch so SQLite may rebuild the table if it
must (it need not for nullable columns: alembic adds them in place); existing runs keep their
rows and get NULL. Everything else is new tables. Spelled out rather than imported from
squad.store.tables, as 0001 explains.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("runs") as batch:
        batch.add_column(sa.Column("goal", sa.Text(), nullable=True))
        batch.add_column(sa.Column("model", sa.String(), nullable=True))
        batch.add_column(sa.Column("summary", sa.JSON(), nullable=True))
    op.create_table(
        "conversation_messages",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("message_id", sa.String(), nullable=False),
        sa.Column("squad", sa.String(), nullable=False),
        sa.Column("agent", sa.String(), nullable=False),
        sa.Column("run_id", sa.String(), nullable=True),
        sa.Column("session_id", sa.String(), nullable=True),
        sa.Column("role", sa.String(16), nullable=False),
        sa.Column("content", sa.Text(), nullable=False),
        sa.Column("tool_name", sa.String(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("turn", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_conversation_messages"),
        sa.UniqueConstraint("message_id", name="uq_conversation_messages_message_id"),
        sa.UniqueConstraint(
            "squad", "agent", "seq", name="uq_conversation_messages_squad_agent_seq"
        ),
    )
    op.create_table(
        "message_counters",
        sa.Column("squad", sa.String(), nullable=False),
        sa.Column("agent", sa.String(), nullable=False),
        sa.Column("last_seq", sa.Integer(), nullable=False),
        sa.Column("turns", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("squad", "agent", name="pk_message_counters"),
    )
    op.create_table(
        "extraction_watermarks",
        sa.Column("squad", sa.String(), nullable=False),
        sa.Column("agent", sa.String(), nullable=False),
        sa.Column("last_processed_seq", sa.Integer(), server_default=sa.text("0"), nullable=False),
        sa.Column("last_run_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("in_flight", sa.Boolean(), nullable=False),
        sa.Column("pending", sa.Boolean(), nullable=False),
        sa.Column("claimed_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("squad", "agent", name="pk_extraction_watermarks"),
    )
    op.create_table(
        "run_tasks",
        sa.Column("run_id", sa.String(), nullable=False),
        sa.Column("task_id", sa.String(), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("squad", sa.String(), nullable=False),
        sa.Column("agent", sa.String(), nullable=False),
        sa.Column("status", sa.String(32), nullable=False),
        sa.Column("attempts", sa.Integer(), server_default=sa.text("0"), nullable=False),
        sa.Column("rounds", sa.Integer(), server_default=sa.text("0"), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("output", sa.String(), nullable=True),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("ended_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["run_id"], ["runs.id"], name="fk_run_tasks_run_id_runs", ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("run_id", "task_id", name="pk_run_tasks"),
    )
    op.create_table(
        "spend_ledger",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("squad", sa.String(), nullable=False),
        sa.Column("run_id", sa.String(), nullable=True),
        sa.Column("agent", sa.String(), nullable=True),
        sa.Column("model", sa.String(), nullable=False),
        sa.Column("prompt_tokens", sa.Integer(), nullable=False),
        sa.Column("completion_tokens", sa.Integer(), nullable=False),
        sa.Column("cost_usd", sa.Float(), nullable=False),
        sa.Column("latency_s", sa.Float(), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_spend_ledger"),
    )
    op.create_index("ix_spend_ledger_squad_at", "spend_ledger", ["squad", "at"])
    op.create_index("ix_spend_ledger_run_id", "spend_ledger", ["run_id"])


def downgrade() -> None:
    op.drop_index("ix_spend_ledger_run_id", table_name="spend_ledger")
    op.drop_index("ix_spend_ledger_squad_at", table_name="spend_ledger")
    op.drop_table("spend_ledger")
    op.drop_table("run_tasks")
    op.drop_table("extraction_watermarks")
    op.drop_table("message_counters")
    op.drop_table("conversation_messages")
    with op.batch_alter_table("runs") as batch:
        batch.drop_column("summary")
        batch.drop_column("model")
        batch.drop_column("goal")
