"""Long-term recall: messages know who spoke them, and the lexical index stems English words.

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-02

``conversation_messages.author`` names the speaker of a message when it is known (a person
in a transcript replayed into squad, say); recalled lines show it. The fact index now holds
light English stems (``squad.text.lexical.stem``), so every active fact is indexed again:
postings, dfs and the namespaces' counters are rebuilt from the facts' text. That data step
uses the tokeniser of the code running it, which is the one its queries will use.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_CHUNK = 500


def upgrade() -> None:
    with op.batch_alter_table("conversation_messages") as batch:
        batch.add_column(sa.Column("author", sa.String(), nullable=True))
    reindex(op.get_bind())


def reindex(conn: sa.Connection) -> None:
    """Rebuild the fact index (postings, dfs, namespace counters) from the active facts."""
    from squad.text.lexical import term_counts

    meta = sa.MetaData()
    facts = sa.Table("memory_facts", meta, autoload_with=conn)
    postings = sa.Table("memory_postings", meta, autoload_with=conn)
    terms = sa.Table("memory_terms", meta, autoload_with=conn)
    namespaces = sa.Table("memory_namespaces", meta, autoload_with=conn)
    conn.execute(sa.delete(postings))
    conn.execute(sa.delete(terms))
    conn.execute(sa.update(namespaces).values(indexed_facts=0, indexed_terms=0))
    dfs: Counter[tuple[int, str]] = Counter()
    sizes: Counter[int] = Counter()
    lengths: Counter[int] = Counter()
    last = 0
    while True:
        rows = conn.execute(
            sa.select(facts.c.id, facts.c.namespace_id, facts.c.text, facts.c.subject)
            .where(facts.c.status == "active", facts.c.id > last)
            .order_by(facts.c.id)
            .limit(_CHUNK)
        ).all()
        if not rows:
            break
        batch = []
        for row in rows:
            text = row.text if row.subject is None else f"{row.subject}\n{row.text}"
            counts = term_counts(text)
            size = sum(counts.values())
            sizes[row.namespace_id] += 1
            lengths[row.namespace_id] += size
            for term, tf in counts.items():
                dfs[(row.namespace_id, term)] += 1
                batch.append(
                    {
                        "namespace_id": row.namespace_id,
                        "term": term,
                        "fact_id": row.id,
                        "tf": tf,
                        "doc_len": size,
                    }
                )
        if batch:
            conn.execute(sa.insert(postings), batch)
        last = rows[-1].id
    items = [{"namespace_id": ns, "term": term, "df": df} for (ns, term), df in dfs.items()]
    for start in range(0, len(items), _CHUNK):
        conn.execute(sa.insert(terms), items[start : start + _CHUNK])
    for ns, count in sizes.items():
        conn.execute(
            sa.update(namespaces)
            .where(namespaces.c.id == ns)
            .values(indexed_facts=count, indexed_terms=lengths[ns])
        )


def downgrade() -> None:
    with op.batch_alter_table("conversation_messages") as batch:
        batch.drop_column("author")
