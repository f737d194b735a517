"""Recall's reads in plain sqlite3 on a SQLite file answer exactly as the SQLAlchemy path
does (the one Postgres keeps), see a batch's writes inside it, and give way to SQLAlchemy
when they cannot read."""

from __future__ import annotations

import threading
from datetime import timedelta

from sqlalchemy import event
from sqlalchemy.engine import Engine

from squad.clock import FrozenClock
from squad.store import Store
from squad.store.archive import ArchiveStore
from squad.store.conversation import ConversationStore
from squad.store.memory import MemoryStore
from squad.store.records import NewFact
from squad.store.sqlite_fast import IDLE_KEPT


def _archive(store: Store, clock: FrozenClock) -> int:
    """An archive of a few texts, one said twice; its namespace id."""
    namespace = store.memory.ensure_namespace("archive:docs/writer", "docs/writer (archive)")
    said = [
        "We deploy the docs site with MkDocs on Fridays",
        "The staging server runs Postgres 16",
        "We deploy the docs site with MkDocs on Fridays",
        "Nobody deploys on Mondays after the outage",
        "The glossary lives in docs/glossary.md",
    ]
    store.archive.add(
        namespace.id, [NewFact(t, "docs", "writer", turns=(i + 1,)) for i, t in enumerate(said)]
    )
    clock.advance()
    store.conversation.record_messages(
        "docs", "writer", [("user", t, None) for t in said] + [("assistant", "Done.", None)]
    )
    return namespace.id


def _sqlalchemy_only(store: Store, clock: FrozenClock) -> tuple[ArchiveStore, ConversationStore]:
    engine = store._engine
    return ArchiveStore(engine, now=clock), ConversationStore(engine, now=clock, new_id=lambda: "x")


def _statements(engine: Engine) -> list[str]:
    seen: list[str] = []
    event.listen(engine, "before_cursor_execute", lambda *args: seen.append(args[2]))
    return seen


def test_recall_reads_answer_as_sqlalchemys_and_run_no_statement_through_it(
    store: Store, clock: FrozenClock
) -> None:
    namespace_id = _archive(store, clock)
    archive, conversation = _sqlalchemy_only(store, clock)
    through_sqlalchemy = _statements(store._engine)

    for query in ("when do we deploy the docs", "postgres staging", "nothing matches", ""):
        expected = archive.search(namespace_id, query, limit=3)
        del through_sqlalchemy[:]
        found = store.archive.search(namespace_id, query, limit=3)
        assert found == expected, query
        assert store.archive.search(namespace_id, query, limit=3, unless=found[0]) == (
            found[0],
            None,
        )
        assert store._engine.dialect.name != "sqlite" or through_sqlalchemy == []
    assert [h.turns for h in store.archive.search(namespace_id, "deploy docs", limit=1)[1] or []]
    expected_messages = conversation.messages_at("docs", "writer", [6, 2, 4, 99])
    assert [m.seq for m in expected_messages] == [2, 4, 6]
    assert store.conversation.messages_at("docs", "writer", [6, 2, 4, 99]) == expected_messages


def test_layer_a_reads_answer_as_sqlalchemys_expired_facts_left_out(
    store: Store, clock: FrozenClock
) -> None:
    namespace = store.memory.ensure_namespace("squad:docs/writer", "docs/writer")
    texts = [f"Deploy step {n} of the docs site uses MkDocs" for n in range(12)]
    texts += ["The staging server runs Postgres", "Release notes go out on Fridays"]
    for n, text in enumerate(texts):
        expires = clock() + timedelta(seconds=30 if n % 5 == 0 else 3600)
        store.memory.add_fact(namespace.id, text, squad="docs", agent="writer", expires_at=expires)
        clock.advance()
    clock.advance(60)  # facts 0, 5 and 10 have expired
    sqlalchemy_only = MemoryStore(store._engine, now=clock)
    through_sqlalchemy = _statements(store._engine)

    for query, limit in (("deploy the docs", 4), ("deploy the docs", 200), ("", 5), ("zzz", 3)):
        expected = sqlalchemy_only.relevant_facts(namespace.id, query, limit=limit)
        del through_sqlalchemy[:]
        found = store.memory.relevant_facts(namespace.id, query, limit=limit)
        assert found == expected, (query, limit)
        assert store._engine.dialect.name != "sqlite" or through_sqlalchemy == []
    assert len(found) == 3 and all("5" not in f.text for f in found)


def test_the_enabled_namespaces_read_as_sqlalchemys(store: Store, clock: FrozenClock) -> None:
    for identity in ("squad:docs/b", "squad:docs/a", "squad:docs/c"):
        store.memory.ensure_namespace(identity, identity.removeprefix("squad:"))
        clock.advance()
    for ref in ("squad:docs/b", "squad:docs/a"):
        store.memory.set_namespace_enabled(ref, True)
    store.memory.add_fact(
        store.memory.ensure_namespace("squad:docs/a", "docs/a").id,
        "A fact",
        squad="docs",
        agent="a",
    )
    sqlalchemy_only = MemoryStore(store._engine, now=clock)
    through_sqlalchemy = _statements(store._engine)

    found = store.memory.enabled_namespaces()

    assert [n.name for n in found] == ["docs/a", "docs/b"] and found[0].fact_count == 1
    assert store._engine.dialect.name != "sqlite" or through_sqlalchemy == []
    assert found == sqlalchemy_only.enabled_namespaces()


def test_inside_a_batch_recall_reads_see_its_writes(store: Store, clock: FrozenClock) -> None:
    with store.batch("write and read"):
        store.conversation.record_messages("docs", "writer", [("user", "in the batch", None)])
        [message] = store.conversation.messages_at("docs", "writer", [1])
        assert message.content == "in the batch"


def test_a_closed_store_reads_through_sqlalchemy_and_says_so_in_its_words(
    store: Store, clock: FrozenClock
) -> None:
    namespace_id = _archive(store, clock)
    before = store.archive.search(namespace_id, "deploy", limit=2)
    if store._fast is not None:
        store._fast.close()  # what a failing plain read meets: sqlite3 refuses
    assert store.archive.search(namespace_id, "deploy", limit=2) == before
    assert [m.seq for m in store.conversation.messages_at("docs", "writer", [1])] == [1]


def test_threads_reading_at_once_leave_a_bounded_few_connections_open(
    store: Store, clock: FrozenClock
) -> None:
    namespace_id = _archive(store, clock)
    expected = store.archive.search(namespace_id, "deploy the docs", limit=3)
    start = threading.Barrier(3 * IDLE_KEPT)
    found = []

    def read() -> None:
        start.wait()
        for _ in range(5):
            found.append(store.archive.search(namespace_id, "deploy the docs", limit=3))

    threads = [threading.Thread(target=read) for _ in range(3 * IDLE_KEPT)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert found == [expected] * (15 * IDLE_KEPT)
    if store._fast is not None:
        assert 1 <= len(store._fast._idle) <= IDLE_KEPT
