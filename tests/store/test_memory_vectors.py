"""Fact vectors in the store (semantic ranking); every test runs on SQLite and Postgres."""

from __future__ import annotations

import struct
import threading

import pytest
from sqlalchemy import text

from squad.clock import FrozenClock
from squad.store import FactRecord, NamespaceRecord, NewFact, Store
from squad.store.engine import make_engine


def _vector(*values: float) -> bytes:
    return struct.pack(f"<{len(values)}f", *values)


@pytest.fixture
def ns(store: Store) -> NamespaceRecord:
    return store.memory.ensure_namespace("profile:planner-v1", "Agent Experience: Planner")


def _add(store: Store, namespace: NamespaceRecord, fact: str) -> FactRecord:
    return store.memory.add_fact(namespace.id, fact, squad="docs", agent="planner")


def _vector_rows(store_url: str) -> list[tuple[object, ...]]:
    engine = make_engine(store_url)
    try:
        with engine.connect() as conn:
            query = text("SELECT fact_id, model, dims FROM memory_vectors ORDER BY fact_id")
            return [tuple(row) for row in conn.execute(query)]
    finally:
        engine.dispose()


def test_vectors_round_trip_by_fact_id_and_model(store: Store, ns: NamespaceRecord) -> None:
    a, b, c = (_add(store, ns, f"fact {name}") for name in "abc")
    stored = store.memory.set_vectors(
        [(a.id, "m1", _vector(1.0, 0.0), 2), (b.id, "m1", _vector(0.5, -0.25), 2)]
    )
    assert stored == 2
    assert store.memory.vectors([a.id, b.id, c.id], "m1") == {
        a.id: _vector(1.0, 0.0),
        b.id: _vector(0.5, -0.25),
    }
    assert store.memory.vectors([b.id], "m1") == {b.id: _vector(0.5, -0.25)}
    assert store.memory.vectors([a.id, b.id], "m2") == {}
    assert store.memory.vectors([], "m1") == {}


def test_setting_a_vector_again_replaces_it_even_for_another_model(
    store: Store, ns: NamespaceRecord, store_url: str
) -> None:
    fact = _add(store, ns, "one fact, one vector")
    store.memory.set_vectors([(fact.id, "m1", _vector(1.0, 0.0), 2)])
    store.memory.set_vectors([(fact.id, "m1", _vector(0.0, 1.0), 2)])
    assert store.memory.vectors([fact.id], "m1") == {fact.id: _vector(0.0, 1.0)}
    store.memory.set_vectors([(fact.id, "m2", _vector(0.6, 0.8, 0.0), 3)])
    assert store.memory.vectors([fact.id], "m1") == {}
    assert store.memory.vectors([fact.id], "m2") == {fact.id: _vector(0.6, 0.8, 0.0)}
    assert _vector_rows(store_url) == [(fact.id, "m2", 3)]


def test_a_fact_given_twice_keeps_its_last_vector(store: Store, ns: NamespaceRecord) -> None:
    fact = _add(store, ns, "given twice")
    stored = store.memory.set_vectors(
        [(fact.id, "m", _vector(1.0), 1), (fact.id, "m", _vector(2.0), 1)]
    )
    assert stored == 1
    assert store.memory.vectors([fact.id], "m") == {fact.id: _vector(2.0)}


def test_vectors_of_missing_facts_are_skipped(store: Store, ns: NamespaceRecord) -> None:
    fact = _add(store, ns, "still here")
    gone = _add(store, ns, "purged before its vector arrived")
    store.memory.purge(gone.id)
    stored = store.memory.set_vectors(
        [(gone.id, "m", _vector(1.0), 1), (fact.id, "m", _vector(1.0), 1), (999, "m", b"\0" * 4, 1)]
    )
    assert stored == 1
    assert store.memory.vectors([fact.id, gone.id, 999], "m") == {fact.id: _vector(1.0)}
    assert store.memory.set_vectors([]) == 0


@pytest.mark.parametrize(
    ("data", "dims", "model"),
    [(b"\0" * 7, 2, "m"), (b"", 0, "m"), (b"\0" * 4, 1, "")],
)
def test_malformed_vectors_are_refused(
    store: Store, ns: NamespaceRecord, data: bytes, dims: int, model: str
) -> None:
    fact = _add(store, ns, "a fact")
    with pytest.raises(ValueError, match=f"vector of fact {fact.id}"):
        store.memory.set_vectors([(fact.id, model, data, dims)])
    assert store.memory.vectors([fact.id], model) == {}


def test_purge_drops_the_vector_and_forget_keeps_it(
    store: Store, ns: NamespaceRecord, store_url: str
) -> None:
    purged, forgotten = _add(store, ns, "purge me"), _add(store, ns, "forget me")
    store.memory.set_vectors(
        [(purged.id, "m", _vector(1.0), 1), (forgotten.id, "m", _vector(1.0), 1)]
    )
    store.memory.forget(forgotten.id)
    assert store.memory.purge(purged.id) is True
    assert _vector_rows(store_url) == [(forgotten.id, "m", 1)]
    store.memory.purge(forgotten.id)
    assert _vector_rows(store_url) == []


def test_facts_missing_vectors_are_the_newest_live_ones_without_this_model(
    store: Store, ns: NamespaceRecord, clock: FrozenClock
) -> None:
    facts = []
    for i in range(5):
        facts.append(_add(store, ns, f"fact {i}"))
        clock.advance()
    other_ns = store.memory.ensure_namespace("squad:docs/writer", "Agent Experience: Writer")
    _add(store, other_ns, "another namespace")
    store.memory.set_vectors([(facts[4].id, "m", _vector(1.0), 1)])
    store.memory.set_vectors([(facts[2].id, "old-model", _vector(1.0), 1)])
    store.memory.forget(facts[3].id)

    missing = store.memory.facts_missing_vectors(ns.id, "m")
    assert [f.id for f in missing] == [facts[2].id, facts[1].id, facts[0].id]
    assert store.memory.facts_missing_vectors(ns.id, "m", limit=1) == [missing[0]]
    with pytest.raises(ValueError, match="limit must be at least 1"):
        store.memory.facts_missing_vectors(ns.id, "m", limit=0)


def test_backfill_in_pages_reaches_every_fact(store: Store, ns: NamespaceRecord) -> None:
    added = store.memory.add_facts_bulk(
        ns.id, [NewFact(text=f"bulk fact {i}", squad="docs", agent="a") for i in range(1203)]
    )
    while page := store.memory.facts_missing_vectors(ns.id, "m", limit=500):
        store.memory.set_vectors((f.id, "m", _vector(float(f.id)), 1) for f in page)
    ids = [f.id for f in added]
    found = store.memory.vectors(ids, "m")
    assert found.keys() == set(ids)
    assert found[ids[-1]] == _vector(float(ids[-1]))


def test_concurrent_vector_writes_and_purges_never_fail(
    store: Store, ns: NamespaceRecord, store_url: str
) -> None:
    facts = store.memory.add_facts_bulk(
        ns.id, [NewFact(text=f"fact {i}", squad="docs", agent="a") for i in range(60)]
    )
    errors: list[BaseException] = []
    barrier = threading.Barrier(3)

    def write(model: str) -> None:
        barrier.wait()
        try:
            for fact in facts:
                store.memory.set_vectors([(f.id, model, _vector(1.0), 1) for f in facts[:30]])
                store.memory.set_vectors([(fact.id, model, _vector(2.0), 1)])
        except BaseException as exc:  # noqa: BLE001 - handed back to the test thread
            errors.append(exc)

    def purge() -> None:
        barrier.wait()
        try:
            for fact in facts[::2]:
                store.memory.purge(fact.id)
        except BaseException as exc:  # noqa: BLE001 - handed back to the test thread
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(m,)) for m in ("a", "b")]
    threads.append(threading.Thread(target=purge))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert {row[0] for row in _vector_rows(store_url)} <= {f.id for f in facts[1::2]}
