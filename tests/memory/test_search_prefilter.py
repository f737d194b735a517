"""The store narrowing a literal memory search (``MemoryStore.candidate_facts``) never loses a
hit: the same search with and without it finds the same facts, in the same order, on SQLite
and on PostgreSQL, for texts full of the characters case folding treats unevenly (the dotless
``ı`` and dotted ``İ``, the long ``ſ``, the Kelvin sign, ``ß``, ligatures, Greek sigma)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from squad.memory.search import search_all_memory
from squad.store import Store
from squad.store.records import NewFact
from squad.text.grep import compile_query

TRICKY = "ıİſKßẞﬆςσΣIiSsKk é"
WORDS = ["deploy", "Straße", "KIT", "kit", "Iris", "ısık", "ſtep", "Ünïcode", "σοφία", "ok"]


@pytest.fixture
def filled(store_url: str) -> Iterator[tuple[Store, int]]:
    """A store of 200 facts mixing the words and the tricky letters."""
    with Store.open(store_url) as store:
        namespace = store.memory.ensure_namespace("profile:keeper", "keeper")
        texts = [f"{a} {b} {TRICKY[i % len(TRICKY)]}{c}" for i, (a, b, c) in enumerate(
            (a, b, c) for a in WORDS for b in WORDS[:5] for c in ("", "x", "K", "ı")
        )]  # fmt: skip
        store.memory.add_facts_bulk(
            namespace.id,
            [NewFact(text=t, squad="s", agent="keeper", source="test") for t in texts],
        )
        yield store, namespace.id


def _found(store: Store, query: str, case_sensitive: bool, narrowed: bool) -> list[str]:
    pattern = compile_query(query, regex=False, case_sensitive=case_sensitive)
    result = search_all_memory(
        [],
        store.memory,
        pattern,
        layer="experiential",
        literal=query if narrowed else None,
        case_sensitive=case_sensitive,
    )
    return [h.where for h in result.hits]


QUERIES = ["i", "I", "is", "IS", "s", "S", "k", "K", "kit", "KIT", "ss", "strasse", "ſ", "ı",
           "İ", "σ", "Σ", "é", "deploy STRASSE", "ok K", "x", " ", "ix", "iI"]  # fmt: skip


@pytest.mark.parametrize("case_sensitive", [False, True])
def test_narrowing_in_the_store_finds_exactly_what_trying_every_fact_finds(
    filled: tuple[Store, int], case_sensitive: bool
) -> None:
    store, _ = filled
    for query in QUERIES:
        everything = _found(store, query, case_sensitive, narrowed=False)
        narrowed = _found(store, query, case_sensitive, narrowed=True)
        assert narrowed == everything, (query, case_sensitive)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(query=st.text(alphabet=TRICKY + "abdeoptxyz", min_size=1, max_size=4), case=st.booleans())
def test_any_short_query_of_tricky_letters_loses_no_hit(
    filled: tuple[Store, int], query: str, case: bool
) -> None:
    store, _ = filled
    assert _found(store, query, case, narrowed=True) == _found(store, query, case, narrowed=False)


def test_an_ascii_query_is_narrowed_in_sqlite(tmp_path: Path) -> None:
    with Store.open(f"sqlite:///{tmp_path / 'squad.db'}") as store:
        namespace = store.memory.ensure_namespace("profile:keeper", "keeper")
        store.memory.add_facts_bulk(
            namespace.id,
            [NewFact(text=t, squad="s", agent="keeper", source="test") for t in WORDS],
        )
        narrowed = store.memory.candidate_facts(namespace.id, "KIT", case_sensitive=False)
        assert [f.text for f in narrowed] == ["kit", "KIT"]  # newest first, both cases
        assert len(store.memory.candidate_facts(namespace.id, "é", case_sensitive=False)) == len(
            WORDS
        )  # not ASCII: every fact, for the pattern to judge
