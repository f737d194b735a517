"""Experiential memory in the store; every test runs on SQLite and (when reachable) Postgres."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import datetime, timedelta

import pytest
from sqlalchemy import text

from squad.clock import FrozenClock
from squad.errors import MemoryError_, UsageError
from squad.store import FactRecord, FactStatus, NamespaceRecord, NewFact, Store, memory_index
from squad.store.engine import make_engine

from .conftest import START

PLANNER = "profile:planner-v1"


@pytest.fixture
def ns(store: Store) -> NamespaceRecord:
    return store.memory.ensure_namespace(PLANNER, "Agent Experience: Planner")


def _add(store: Store, namespace: NamespaceRecord, fact: str, **kwargs: object) -> FactRecord:
    values: dict[str, object] = {"squad": "docs", "agent": "planner"} | kwargs
    return store.memory.add_fact(namespace.id, fact, **values)  # type: ignore[arg-type]


def _ids(facts: list[FactRecord]) -> list[int]:
    return [fact.id for fact in facts]


@pytest.fixture
def check_index(store_url: str) -> Iterator[None]:
    """After the test: every df, posting and namespace counter agrees with the active facts."""
    yield
    engine = make_engine(store_url)
    try:
        with engine.connect() as conn:

            def rows(sql: str) -> set[tuple[object, ...]]:
                return {tuple(row) for row in conn.execute(text(sql))}

            assert rows("SELECT namespace_id, term, df FROM memory_terms") == rows(
                "SELECT namespace_id, term, count(*) FROM memory_postings "
                "GROUP BY namespace_id, term"
            )
            assert rows("SELECT DISTINCT fact_id FROM memory_postings") == rows(
                "SELECT id FROM memory_facts WHERE status = 'active'"
            )
            assert rows("SELECT id, indexed_facts, indexed_terms FROM memory_namespaces") == rows(
                "SELECT n.id, count(p.fact_id), coalesce(sum(p.doc_len), 0) "
                "FROM memory_namespaces n LEFT JOIN "
                "(SELECT DISTINCT namespace_id, fact_id, doc_len FROM memory_postings) p "
                "ON p.namespace_id = n.id GROUP BY n.id"
            )
    finally:
        engine.dispose()


# namespaces


def test_namespace_is_created_disabled_and_shared_by_identity(store: Store) -> None:
    first = store.memory.ensure_namespace(PLANNER, "Agent Experience: Planner")
    again = store.memory.ensure_namespace(PLANNER, "Agent Experience: Planner")
    other = store.memory.ensure_namespace("squad:docs/writer", "Agent Experience: Writer")

    assert first == again
    assert (first.enabled, first.fact_count, first.created_at) == (False, 0, START)
    assert other.id != first.id
    assert store.memory.list_namespaces() == [first, other]


def test_ensure_namespace_renames_and_keeps_the_enabled_flag(
    store: Store, ns: NamespaceRecord, clock: FrozenClock
) -> None:
    store.memory.set_namespace_enabled(ns.id, True)
    renamed_at = clock.advance()
    renamed = store.memory.ensure_namespace(PLANNER, "Agent Experience: Chief Planner")

    assert (renamed.id, renamed.name, renamed.enabled) == (
        ns.id,
        "Agent Experience: Chief Planner",
        True,
    )
    assert (renamed.created_at, renamed.updated_at) == (START, renamed_at)


@pytest.mark.parametrize("ref_kind", ["identity", "name", "id", "id-string"])
def test_namespace_is_enabled_and_disabled_by_identity_name_or_id(
    store: Store, ns: NamespaceRecord, ref_kind: str
) -> None:
    refs: dict[str, int | str] = {
        "identity": ns.identity,
        "name": ns.name,
        "id": ns.id,
        "id-string": str(ns.id),
    }
    ref = refs[ref_kind]
    enabled = store.memory.set_namespace_enabled(ref, True)
    assert enabled.enabled is True
    assert store.memory.get_namespace(ns.id) == enabled
    assert store.memory.set_namespace_enabled(ref, False).enabled is False


def test_unknown_namespace_ref_is_a_usage_error_naming_close_matches(
    store: Store, ns: NamespaceRecord
) -> None:
    with pytest.raises(UsageError, match="did you mean 'Agent Experience: Planner'") as caught:
        store.memory.set_namespace_enabled("Agent Experience: Planer", True)
    assert "no memory namespace 'Agent Experience: Planer'" in str(caught.value)
    with pytest.raises(UsageError, match="squad memory namespaces"):
        store.memory.set_namespace_enabled("zzz", True)
    with pytest.raises(UsageError, match="no memory namespace '999'"):
        store.memory.set_namespace_enabled(999, True)


def test_a_name_two_namespaces_share_must_be_given_as_identity_or_id(store: Store) -> None:
    a = store.memory.ensure_namespace("squad:docs/writer", "Agent Experience: Writer")
    b = store.memory.ensure_namespace("squad:blog/writer", "Agent Experience: Writer")
    with pytest.raises(UsageError, match="2 memory namespaces are named") as caught:
        store.memory.set_namespace_enabled("Agent Experience: Writer", True)
    assert f"{a.id} (squad:docs/writer)" in str(caught.value)
    assert store.memory.set_namespace_enabled(b.identity, True).id == b.id


def test_get_namespace_by_id_or_identity(store: Store, ns: NamespaceRecord) -> None:
    assert store.memory.get_namespace(ns.id) == ns
    assert store.memory.get_namespace(str(ns.id)) == ns
    assert store.memory.get_namespace(PLANNER) == ns
    assert store.memory.get_namespace("profile:nobody") is None
    assert store.memory.get_namespace(ns.id + 1) is None


@pytest.mark.parametrize("identity", ["", "  ", "42"])
def test_namespace_identity_must_be_non_empty_and_not_a_number(store: Store, identity: str) -> None:
    with pytest.raises(UsageError, match="identity"):
        store.memory.ensure_namespace(identity, "Agent Experience: X")


def test_namespace_fact_count_counts_only_active_facts(
    store: Store, ns: NamespaceRecord, clock: FrozenClock
) -> None:
    old, new, gone = (_add(store, ns, f"fact {word}") for word in ("one", "two", "three"))
    _add(store, ns, "fact soon expired", transient=True, expires_at=START + timedelta(seconds=5))
    store.memory.supersede(old.id, new.id)
    store.memory.forget(gone.id)
    assert store.memory.get_namespace(ns.id).fact_count == 2  # type: ignore[union-attr]
    clock.advance(10)
    assert [n.fact_count for n in store.memory.list_namespaces()] == [1]


# facts


def test_add_fact_round_trips_every_field(store: Store, ns: NamespaceRecord) -> None:
    expires = START + timedelta(days=1)
    fact = _add(
        store,
        ns,
        "The user wants answers in Korean",
        run_id="run-1",
        turns=[3, 4],
        subject="language",
        source="extraction",
        transient=True,
        expires_at=expires,
    )
    assert fact == FactRecord(
        id=fact.id,
        namespace_id=ns.id,
        text="The user wants answers in Korean",
        subject="language",
        squad="docs",
        agent="planner",
        run_id="run-1",
        turns=(3, 4),
        source="extraction",
        status=FactStatus.ACTIVE,
        transient=True,
        expires_at=expires,
        created_at=START,
        updated_at=START,
        access_count=0,
        last_accessed_at=None,
        superseded_by=None,
        superseded_at=None,
        forgotten_at=None,
    )
    assert store.memory.get_fact(fact.id) == fact
    assert store.memory.get_fact(fact.id + 100) is None


def test_fact_ids_are_small_increasing_and_never_reused(
    store: Store, ns: NamespaceRecord, check_index: None
) -> None:
    first, second = _add(store, ns, "first fact"), _add(store, ns, "second fact")
    assert store.memory.purge(second.id) is True
    third = _add(store, ns, "third fact")
    assert first.id < second.id < third.id < 10


def test_bulk_add_returns_what_is_stored(
    store: Store, ns: NamespaceRecord, check_index: None
) -> None:
    facts = [
        NewFact(text=f"bulk fact number {i} about topic{i % 3}", squad="s", agent="a")
        for i in range(1200)
    ]
    added = store.memory.add_facts_bulk(ns.id, facts)
    assert [f.text for f in added] == [f.text for f in facts]
    assert len(set(_ids(added))) == 1200
    assert store.memory.get_fact(added[700].id) == added[700]
    assert store.memory.get_namespace(ns.id).fact_count == 1200  # type: ignore[union-attr]


def test_adding_to_an_unknown_namespace_or_empty_text_is_refused(
    store: Store, ns: NamespaceRecord
) -> None:
    with pytest.raises(UsageError, match="no memory namespace with id 999"):
        store.memory.add_fact(999, "orphan", squad="s", agent="a")
    with pytest.raises(UsageError, match="non-empty text"):
        store.memory.add_fact(ns.id, "  ", squad="s", agent="a")
    with pytest.raises(ValueError, match="timezone-aware"):
        store.memory.add_fact(ns.id, "x y", squad="s", agent="a", expires_at=datetime(2031, 1, 1))
    assert store.memory.facts(ns.id, include_inactive=True) == []


def test_supersede_keeps_the_old_text_and_points_at_the_new_fact(
    store: Store, ns: NamespaceRecord, clock: FrozenClock, check_index: None
) -> None:
    old = _add(store, ns, "The user prefers spaces for indentation")
    new = _add(store, ns, "The user prefers tabs for indentation")
    at = clock.advance()
    superseded = store.memory.supersede(old.id, new.id)

    assert superseded.text == old.text
    assert (superseded.status, superseded.superseded_by) == (FactStatus.SUPERSEDED, new.id)
    assert superseded.superseded_at == superseded.updated_at == at
    assert store.memory.supersede(old.id, new.id) == superseded, "not idempotent"
    assert _ids(store.memory.relevant_facts(ns.id, "indentation spaces")) == [new.id]
    assert _ids(store.memory.facts(ns.id, include_inactive=True)) == [old.id, new.id]


def test_supersede_refuses_impossible_pairs(store: Store, ns: NamespaceRecord) -> None:
    other_ns = store.memory.ensure_namespace("squad:docs/writer", "Agent Experience: Writer")
    a, b, c = (_add(store, ns, f"fact {w}") for w in ("alpha", "beta", "gamma"))
    elsewhere = _add(store, other_ns, "fact elsewhere")
    store.memory.forget(c.id)

    with pytest.raises(UsageError, match="cannot supersede itself"):
        store.memory.supersede(a.id, a.id)
    with pytest.raises(UsageError, match="no memory fact with id 999"):
        store.memory.supersede(a.id, 999)
    with pytest.raises(UsageError, match="different namespaces"):
        store.memory.supersede(a.id, elsewhere.id)
    with pytest.raises(MemoryError_, match=f"fact {c.id} is forgotten"):
        store.memory.supersede(c.id, b.id)
    with pytest.raises(MemoryError_, match=f"fact {c.id} is forgotten"):
        store.memory.supersede(a.id, c.id)
    assert store.memory.get_fact(a.id).status is FactStatus.ACTIVE  # type: ignore[union-attr]


def test_forget_hides_a_fact_from_retrieval_and_search_but_keeps_it(
    store: Store, ns: NamespaceRecord, clock: FrozenClock, check_index: None
) -> None:
    fact = _add(store, ns, "The staging password rotates monthly")
    at = clock.advance()
    forgotten = store.memory.forget(fact.id)

    assert (forgotten.status, forgotten.forgotten_at, forgotten.text) == (
        FactStatus.FORGOTTEN,
        at,
        fact.text,
    )
    clock.advance()
    assert store.memory.forget(fact.id) == forgotten
    assert store.memory.relevant_facts(ns.id, "staging password") == []
    assert store.memory.search_facts("staging") == []
    assert store.memory.search_facts("staging", include_inactive=True) == [forgotten]
    assert store.memory.facts(ns.id) == []
    with pytest.raises(UsageError, match="no memory fact with id 999"):
        store.memory.forget(999)


def test_purge_deletes_the_fact_and_its_index_rows(
    store: Store, ns: NamespaceRecord, store_url: str, check_index: None
) -> None:
    old = _add(store, ns, "zebra crossing rule")
    new = _add(store, ns, "zebra crossing rule, revised")
    store.memory.supersede(old.id, new.id)

    assert store.memory.purge(new.id) is True
    assert store.memory.purge(new.id) is False
    assert store.memory.get_fact(new.id) is None
    kept = store.memory.get_fact(old.id)
    assert kept is not None
    assert (kept.status, kept.superseded_by) == (FactStatus.SUPERSEDED, None)
    engine = make_engine(store_url)
    try:
        with engine.connect() as conn:
            assert conn.execute(text("SELECT count(*) FROM memory_postings")).scalar() == 0
            assert conn.execute(text("SELECT count(*) FROM memory_terms")).scalar() == 0
    finally:
        engine.dispose()


def test_touch_counts_accesses_without_changing_updated_at(
    store: Store, ns: NamespaceRecord, clock: FrozenClock
) -> None:
    a, b = _add(store, ns, "fact alpha"), _add(store, ns, "fact beta")
    first = clock.advance()
    store.memory.touch_facts([a.id, b.id, a.id])
    second = clock.advance()
    store.memory.touch_facts([a.id])
    store.memory.touch_facts([])

    touched_a, touched_b = store.memory.get_fact(a.id), store.memory.get_fact(b.id)
    assert touched_a is not None and touched_b is not None
    assert (touched_a.access_count, touched_a.last_accessed_at) == (2, second)
    assert (touched_b.access_count, touched_b.last_accessed_at) == (1, first)
    assert touched_a.updated_at == START


# retrieval


def test_a_fact_sharing_rare_query_terms_outranks_newer_unrelated_ones(
    store: Store, ns: NamespaceRecord, clock: FrozenClock, check_index: None
) -> None:
    relevant = _add(store, ns, "Deploys go to the staging kubernetes cluster first")
    newer = []
    for i in range(30):
        clock.advance()
        newer.append(_add(store, ns, f"The user likes concise answers, note {i}"))

    found = store.memory.relevant_facts(
        ns.id, "How do I deploy to the kubernetes cluster?", limit=5
    )
    assert _ids(found) == [relevant.id, *_ids(newer[::-1][:4])]


def test_more_shared_rare_terms_rank_higher(
    store: Store, ns: NamespaceRecord, clock: FrozenClock
) -> None:
    one = _add(store, ns, "The billing service uses postgres")
    both = _add(store, ns, "The billing service pool size is twenty connections")
    for i in range(10):
        clock.advance()
        _add(store, ns, f"Unrelated note number {i}")
    found = store.memory.relevant_facts(ns.id, "billing pool size", limit=2)
    assert _ids(found) == [both.id, one.id]


def test_retrieval_excludes_superseded_forgotten_and_expired_facts(
    store: Store, ns: NamespaceRecord, clock: FrozenClock
) -> None:
    old = _add(store, ns, "redis cache port is 6379")
    new = _add(store, ns, "redis cache port is 6380")
    forgotten = _add(store, ns, "redis cache lives on host cache1")
    expiring = _add(
        store,
        ns,
        "redis cache is down today",
        transient=True,
        expires_at=START + timedelta(hours=1),
    )
    kept = _add(store, ns, "redis cache has no password locally")
    for i in range(5):
        _add(store, ns, f"filler fact {i}")
    store.memory.supersede(old.id, new.id)
    store.memory.forget(forgotten.id)

    assert expiring.id in _ids(store.memory.relevant_facts(ns.id, "redis cache"))
    clock.advance(2 * 3600)
    for query in ["redis cache", ""]:
        found = _ids(store.memory.relevant_facts(ns.id, query))
        assert {new.id, kept.id} <= set(found)
        assert not {old.id, forgotten.id, expiring.id} & set(found)


def test_empty_query_gives_the_newest_facts(
    store: Store, ns: NamespaceRecord, clock: FrozenClock
) -> None:
    added = []
    for i in range(8):
        clock.advance()
        added.append(_add(store, ns, f"fact number {i}"))
    assert _ids(store.memory.relevant_facts(ns.id, "", limit=3)) == _ids(added[::-1][:3])
    assert _ids(store.memory.relevant_facts(ns.id, "the of and", limit=3)) == _ids(added[::-1][:3])
    assert _ids(store.memory.relevant_facts(ns.id, "")) == _ids(added[::-1])
    with pytest.raises(ValueError, match="limit"):
        store.memory.relevant_facts(ns.id, "", limit=0)


def test_ties_go_to_the_newest_fact(store: Store, ns: NamespaceRecord, clock: FrozenClock) -> None:
    for i in range(6):
        clock.advance()
        _add(store, ns, f"background {i}")
    older = _add(store, ns, "mango smoothie")
    clock.advance()
    newer = _add(store, ns, "mango smoothie")
    assert _ids(store.memory.relevant_facts(ns.id, "mango", limit=2)) == [newer.id, older.id]


def test_a_term_in_most_facts_does_not_drown_the_rare_one(
    store: Store, ns: NamespaceRecord, clock: FrozenClock
) -> None:
    target = _add(store, ns, "project uses kubernetes on staging")
    others = []
    for i in range(20):
        clock.advance()
        others.append(_add(store, ns, f"project note {i} about project things"))

    found = store.memory.relevant_facts(ns.id, "project kubernetes", limit=3)
    assert _ids(found) == [target.id, *_ids(others[::-1][:2])]
    # Alone, the common term is skipped like a stopword: the result is plain recency.
    assert _ids(store.memory.relevant_facts(ns.id, "project", limit=3)) == _ids(others[::-1][:3])


def test_each_term_reads_only_its_newest_postings(
    store: Store, ns: NamespaceRecord, clock: FrozenClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(memory_index, "POSTINGS_PER_TERM", 2)
    walrus = []
    for i in range(5):
        clock.advance()
        walrus.append(_add(store, ns, f"walrus fact {i}"))
        clock.advance()
        _add(store, ns, f"other fact {i}")
    found = store.memory.relevant_facts(ns.id, "walrus", limit=3)
    assert _ids(found)[:2] == [walrus[4].id, walrus[3].id]
    assert found[2].text == "other fact 4"


def test_korean_facts_are_indexed_and_found(
    store: Store, ns: NamespaceRecord, clock: FrozenClock
) -> None:
    korean = _add(store, ns, "사용자는 한국어 답변을 선호합니다")
    for i in range(10):
        clock.advance()
        _add(store, ns, f"English note {i}")
    assert store.memory.relevant_facts(ns.id, "사용자가 원하는 답변", limit=1) == [korean]
    assert store.memory.search_facts("한국어") == [korean]


def test_retrieval_of_an_unknown_namespace_is_a_usage_error(store: Store) -> None:
    with pytest.raises(UsageError, match="no memory namespace with id 42"):
        store.memory.relevant_facts(42, "anything")


def test_concurrent_adds_to_one_namespace_keep_the_index_consistent(
    store: Store, ns: NamespaceRecord, check_index: None
) -> None:
    errors: list[BaseException] = []
    barrier = threading.Barrier(4)

    def add(worker: int) -> None:
        barrier.wait()
        try:
            for i in range(10):
                _add(store, ns, f"shared words plus worker{worker} item{i}")
        except BaseException as exc:  # noqa: BLE001 - handed back to the test thread
            errors.append(exc)

    threads = [threading.Thread(target=add, args=(w,)) for w in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert store.memory.get_namespace(ns.id).fact_count == 40  # type: ignore[union-attr]


# search and listing


def test_search_is_case_insensitive_by_default_and_exact_when_asked(
    store: Store, ns: NamespaceRecord
) -> None:
    fact = _add(store, ns, "Connect with PostgreSQL over TLS; the École server")
    assert store.memory.search_facts("postgresql") == [fact]
    assert store.memory.search_facts("postgresql", case_sensitive=True) == []
    assert store.memory.search_facts("PostgreSQL", case_sensitive=True) == [fact]
    assert store.memory.search_facts("tls", case_sensitive=True) == []
    assert store.memory.search_facts("école") == [fact]
    assert store.memory.search_facts("école", case_sensitive=True) == []


def test_search_treats_like_wildcards_as_plain_characters(
    store: Store, ns: NamespaceRecord
) -> None:
    percent = _add(store, ns, "coverage must stay at 100% on core_lib")
    _add(store, ns, "coverage is 1000 lines in corexlib")
    assert store.memory.search_facts("100%") == [percent]
    assert store.memory.search_facts("core_lib", case_sensitive=True) == [percent]


def test_search_filters_by_namespace_newest_first_with_limit(
    store: Store, ns: NamespaceRecord, clock: FrozenClock
) -> None:
    other = store.memory.ensure_namespace("squad:docs/writer", "Agent Experience: Writer")
    mine = _add(store, ns, "deploy on friday")
    clock.advance()
    theirs = _add(store, other, "never deploy on friday")
    assert store.memory.search_facts("deploy") == [theirs, mine]
    assert store.memory.search_facts("deploy", limit=1) == [theirs]
    assert store.memory.search_facts("deploy", namespace_ids=[ns.id]) == [mine]
    assert store.memory.search_facts("deploy", namespace_ids=[]) == []


def test_facts_lists_newest_first_and_inactive_only_on_request(
    store: Store, ns: NamespaceRecord, clock: FrozenClock
) -> None:
    a = _add(store, ns, "fact a")
    clock.advance()
    b = _add(store, ns, "fact b")
    clock.advance()
    c = _add(store, ns, "fact c")
    clock.advance()
    store.memory.forget(a.id)
    assert _ids(store.memory.facts(ns.id)) == [c.id, b.id]
    assert _ids(store.memory.facts(ns.id, limit=1)) == [c.id]
    assert _ids(store.memory.facts(ns.id, include_inactive=True)) == [a.id, c.id, b.id]


def test_enabled_namespaces_lists_only_enabled_ones_with_their_active_counts(
    store_url: str,
) -> None:
    from squad.store import Store

    with Store.open(store_url) as store:
        on = store.memory.ensure_namespace("profile:on", "Agent Experience: On")
        store.memory.ensure_namespace("profile:off", "Agent Experience: Off")
        store.memory.add_fact(on.id, "a fact", squad="s", agent="a")
        gone = store.memory.add_fact(on.id, "forgotten", squad="s", agent="a")
        store.memory.forget(gone.id)
        store.memory.set_namespace_enabled("profile:on", True)
        (found,) = store.memory.enabled_namespaces()
        assert (found.identity, found.fact_count) == ("profile:on", 1)


# scored retrieval and the newest fact (the conversation archive's reads)


def test_scored_facts_match_stems_and_come_best_first_with_their_scores(
    store: Store, ns: NamespaceRecord
) -> None:
    painted = _add(store, ns, "Caroline painted a sunrise over the lake")
    paints = _add(store, ns, "Melanie paints on weekends")
    _add(store, ns, "the logo is blue")
    _add(store, ns, "lunch was soup")
    hits = store.memory.scored_facts(ns.id, "when did Caroline paint a sunrise?")
    assert [f.id for f, _ in hits] == [painted.id, paints.id]
    assert hits[0][1] > hits[1][1] > 0
    assert store.memory.scored_facts(ns.id, "nothing matches here") == []
    store.memory.forget(painted.id)
    assert [f.id for f, _ in store.memory.scored_facts(ns.id, "paint")] == [paints.id]
    with pytest.raises(UsageError):
        store.memory.scored_facts(10_000, "paint")


def test_newest_fact_is_the_last_added_whatever_its_status(
    store: Store, ns: NamespaceRecord
) -> None:
    assert store.memory.newest_fact(ns.id) is None
    _add(store, ns, "first")
    last = _add(store, ns, "second", turns=(7,))
    store.memory.forget(last.id)
    newest = store.memory.newest_fact(ns.id)
    assert newest is not None and newest.id == last.id and newest.turns == (7,)


def test_messages_at_reads_only_the_seqs_asked_for_with_their_author(store: Store) -> None:
    for i in range(5):
        store.conversation.record_message(
            "d",
            "a",
            "user" if i % 2 == 0 else "assistant",
            f"m{i}",
            author="Ana" if i == 2 else None,
        )
    found = store.conversation.messages_at("d", "a", [5, 3, 3, 99])
    assert [(m.seq, m.content, m.author) for m in found] == [(3, "m2", "Ana"), (5, "m4", None)]
    assert store.conversation.messages_at("d", "other", [1]) == []
