"""Runs name their commit in the workspace's history.

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-06

``runs.commit`` is the id of the run's latest commit in its workspace's git history (the
one made when it ended, or paused for an approval); None before the run's first commit and
for runs of a workspace whose history is off or paused.
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
        batch.add_column(sa.Column("commit", sa.String(64), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("runs") as batch:
        batch.drop_column("commit")
