"""Credentials in conversation history written before it was stored redacted are redacted.

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-01

Data only, no schema change. Since this release the conversation store keeps every message
with recognised credentials replaced by ``[REDACTED:kind]``; rows written before it still hold
what was pasted. They are rewritten here the same way, each message judged after the ones
before it in its agent's history (so "my password is" / "hunter2x" loses the value), one
agent at a time. Irreversible by design: the downgrade leaves the rows as they are.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_MESSAGES = sa.table(
    "conversation_messages",
    sa.column("id", sa.Integer()),
    sa.column("squad", sa.String()),
    sa.column("agent", sa.String()),
    sa.column("run_id", sa.String()),
    sa.column("session_id", sa.String()),
    sa.column("content", sa.Text()),
    sa.column("seq", sa.Integer()),
)


def upgrade() -> None:
    from squad.text.secrets import redact_conversation

    bind = op.get_bind()
    agents = bind.execute(sa.select(_MESSAGES.c.squad, _MESSAGES.c.agent).distinct()).all()
    for squad, agent in agents:
        rows = bind.execute(
            sa.select(
                _MESSAGES.c.id, _MESSAGES.c.run_id, _MESSAGES.c.session_id, _MESSAGES.c.content
            )
            .where(_MESSAGES.c.squad == squad, _MESSAGES.c.agent == agent)
            .order_by(_MESSAGES.c.seq)
        ).all()
        threads: dict[tuple[str | None, str | None], list[tuple[int, str]]] = {}
        for row in rows:
            threads.setdefault((row.run_id, row.session_id), []).append((row.id, row.content))
        for messages in threads.values():
            redacted = redact_conversation([content for _, content in messages])
            for (row_id, content), new in zip(messages, redacted, strict=True):
                if new != content:
                    bind.execute(
                        sa.update(_MESSAGES).where(_MESSAGES.c.id == row_id).values(content=new)
                    )


def downgrade() -> None:
    """Redacted text cannot be put back; the rows stay as they are."""
