"""Semantic reranking of Layer A: the pure rule, then the memory service with a real embedder."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from squad.clock import FrozenClock
from squad.manager import SquadManager
from squad.memory.agent import AgentContext
from squad.memory.embeddings import HashingEmbedder, vector_from_bytes
from squad.memory.ranking import embedding_text, rerank
from squad.memory.service import MemoryService
from squad.settings import Settings
from squad.spec.loader import squad_from_text
from squad.store import FactRecord, FactStatus, Store
from tests.conftest import BASIC_YAML

T0 = datetime(2030, 1, 1, tzinfo=UTC)


def _fact(fact_id: int, *, age_s: int = 0, text: str = "") -> FactRecord:
    at = T0 - timedelta(seconds=age_s)
    return FactRecord(
        id=fact_id,
        namespace_id=1,
        text=text or f"fact {fact_id}",
        subject=None,
        squad="demo",
        agent="writer",
        run_id=None,
        turns=(),
        source="test",
        status=FactStatus.ACTIVE,
        transient=False,
        expires_at=None,
        created_at=at,
        updated_at=at,
        access_count=0,
        last_accessed_at=None,
        superseded_by=None,
        superseded_at=None,
        forgotten_at=None,
    )


def _v(*values: float) -> np.ndarray:
    return np.array(values, dtype=np.float32)


def _ids(facts: list[FactRecord]) -> list[int]:
    return [fact.id for fact in facts]


# the rule


def test_candidates_are_ordered_by_cosine_similarity() -> None:
    candidates = [_fact(1), _fact(2), _fact(3)]
    vectors = {1: _v(0.0, 1.0), 2: _v(1.0, 0.0), 3: _v(0.6, 0.8)}
    assert _ids(rerank(_v(1.0, 0.0), candidates, vectors)) == [2, 3, 1]


def test_similarity_is_cosine_whatever_the_vectors_length() -> None:
    candidates = [_fact(1), _fact(2)]
    vectors = {1: _v(10.0, 10.0), 2: _v(0.1, 0.0)}
    assert _ids(rerank(_v(3.0, 0.0), candidates, vectors)) == [2, 1]


def test_facts_without_a_usable_vector_follow_in_lexical_order() -> None:
    candidates = [_fact(1), _fact(2), _fact(3), _fact(4), _fact(5)]
    vectors = {2: _v(0.0, 1.0), 4: _v(1.0, 0.0), 5: _v(1.0, 0.0, 0.0)}  # 5: wrong size
    assert _ids(rerank(_v(1.0, 0.0), candidates, vectors)) == [4, 2, 1, 3, 5]


def test_equal_scores_go_to_the_newest_fact_then_the_higher_id() -> None:
    candidates = [_fact(1, age_s=30), _fact(2, age_s=10), _fact(3, age_s=20), _fact(4, age_s=10)]
    same = _v(1.0, 0.0)
    # Within 1e-6 counts as equal: float noise must not decide.
    vectors = {1: same, 2: same, 3: _v(1.0, 1e-4), 4: same}
    assert _ids(rerank(_v(1.0, 0.0), candidates, vectors)) == [4, 2, 3, 1]


def test_rerank_returns_exactly_the_candidates_and_ignores_other_vectors() -> None:
    candidates = [_fact(i) for i in range(1, 6)]
    rng = np.random.default_rng(7)
    vectors = {i: rng.normal(size=8).astype(np.float32) for i in range(1, 200)}
    query = rng.normal(size=8).astype(np.float32)
    ranked = rerank(query, candidates, vectors)
    assert sorted(_ids(ranked)) == [1, 2, 3, 4, 5]
    assert rerank(query, list(reversed(candidates)), vectors) == ranked  # stable
    assert rerank(query, [], vectors) == []


def test_a_message_with_nothing_to_embed_keeps_the_lexical_order() -> None:
    candidates = [_fact(1), _fact(2)]
    vectors = {1: _v(0.0, 1.0), 2: _v(1.0, 0.0)}
    assert rerank(_v(0.0, 0.0), candidates, vectors) == candidates


def test_a_fact_is_embedded_with_its_subject() -> None:
    assert embedding_text("Use MkDocs") == "Use MkDocs"
    assert embedding_text("Use MkDocs", "docs tooling") == "docs tooling\nUse MkDocs"


# the memory service


@pytest.fixture
def store(settings: Settings, clock: FrozenClock) -> Iterator[Store]:
    with Store.open(settings.database_url, clock=clock) as opened:
        yield opened


@pytest.fixture
def writer(settings: Settings, store: Store, clock: FrozenClock) -> AgentContext:
    manager = SquadManager(settings, store=store, clock=clock)
    manager.create(squad_from_text(BASIC_YAML))
    return AgentContext.of(squad_from_text(BASIC_YAML), "writer", settings.workspaces / "demo")


def _service(
    settings: Settings, store: Store, clock: FrozenClock, *, semantic: bool
) -> MemoryService:
    embedder = HashingEmbedder() if semantic else None
    return MemoryService(settings, store, clock=clock, embedder=embedder)


def _block_facts(service: MemoryService, ctx: AgentContext, message: str, **kw: int) -> list[str]:
    block = service.memory_block(ctx, message=message, **kw)  # type: ignore[arg-type]
    return [line[2:] for line in block.text.splitlines() if line.startswith("- ")]


DEPLOY = "Deployment goes through the CI pipeline on Fridays"
OTHERS = ["The logo is blue", "Coffee machine is on the second floor", "Tables need borders"]


def _remember_all(service: MemoryService, ctx: AgentContext, clock: FrozenClock) -> None:
    for text in [DEPLOY, *OTHERS]:  # the deploy fact is the oldest
        service.remember(ctx, text, layer="experiential")
        clock.advance(60)


def test_remember_stores_the_fact_vector(
    settings: Settings, store: Store, clock: FrozenClock, writer: AgentContext
) -> None:
    service = _service(settings, store, clock, semantic=True)
    fact = service.remember(writer, "  Tables   need borders ", layer="experiential").fact
    assert fact is not None
    embedder = HashingEmbedder()
    stored = store.memory.vectors([fact.id], embedder.name)
    vector = vector_from_bytes(stored[fact.id], embedder.dimensions)
    assert vector is not None
    assert np.array_equal(vector, embedder.embed(["Tables need borders"])[0])


def test_without_an_embedder_nothing_is_embedded(
    settings: Settings, store: Store, clock: FrozenClock, writer: AgentContext
) -> None:
    service = _service(settings, store, clock, semantic=False)
    _remember_all(service, writer, clock)
    _block_facts(service, writer, "who deploys the service?")
    namespace = service.namespace(writer)
    assert len(store.memory.facts_missing_vectors(namespace.id, HashingEmbedder().name)) == 4


def test_semantic_ranking_puts_a_word_variant_where_lexical_ranking_cannot(
    settings: Settings, store: Store, clock: FrozenClock, writer: AgentContext
) -> None:
    lexical = _service(settings, store, clock, semantic=False)
    _remember_all(lexical, writer, clock)
    message = "who deploys the service?"
    # No shared term: lexical retrieval falls back to recency, the deploy fact is the oldest...
    assert _block_facts(lexical, writer, message)[0] == DEPLOY
    # ...while the semantic ranking puts it last, the place of the most relevant fact.
    semantic = _service(settings, store, clock, semantic=True)
    assert _block_facts(semantic, writer, message)[-1] == DEPLOY


def test_candidates_without_vectors_are_embedded_once_and_stored(
    settings: Settings, store: Store, clock: FrozenClock, writer: AgentContext
) -> None:
    _remember_all(_service(settings, store, clock, semantic=False), writer, clock)
    semantic = _service(settings, store, clock, semantic=True)
    namespace = semantic.namespace(writer)
    name = HashingEmbedder().name
    assert len(store.memory.facts_missing_vectors(namespace.id, name)) == 4

    first = semantic.memory_block(writer, message="who deploys the service?")
    assert store.memory.facts_missing_vectors(namespace.id, name) == []
    stored = store.memory.vectors([f.id for f in store.memory.facts(namespace.id)], name)
    second = semantic.memory_block(writer, message="who deploys the service?")
    assert store.memory.vectors(list(stored), name) == stored
    assert first.text == second.text


def test_without_a_message_the_order_stays_lexical_and_nothing_is_embedded(
    settings: Settings, store: Store, clock: FrozenClock, writer: AgentContext
) -> None:
    lexical = _service(settings, store, clock, semantic=False)
    _remember_all(lexical, writer, clock)
    semantic = _service(settings, store, clock, semantic=True)
    expected = lexical.memory_block(writer, touch=False).text
    assert semantic.memory_block(writer, touch=False).text == expected
    assert semantic.memory_block(writer, message="  ", touch=False).text == expected
    namespace = semantic.namespace(writer)
    assert len(store.memory.facts_missing_vectors(namespace.id, HashingEmbedder().name)) == 4


def test_the_budget_keeps_and_touches_the_semantically_closest_facts(
    settings: Settings, store: Store, clock: FrozenClock, writer: AgentContext
) -> None:
    semantic = _service(settings, store, clock, semantic=True)
    _remember_all(semantic, writer, clock)
    namespace = semantic.namespace(writer)
    message = "who deploys the service?"
    one_fact = next(  # the smallest budget whose Layer A share holds a single fact
        total
        for total in range(1, 200)
        if semantic.memory_block(
            writer, message=message, max_tokens=total, touch=False
        ).experiential.kept
    )
    assert _block_facts(semantic, writer, message, max_tokens=one_fact) == [DEPLOY]
    touched = {f.text: f.access_count for f in store.memory.facts(namespace.id)}
    assert touched == {DEPLOY: 1} | dict.fromkeys(OTHERS, 0)


def test_a_subject_is_part_of_what_is_embedded(
    settings: Settings, store: Store, clock: FrozenClock, writer: AgentContext
) -> None:
    semantic = _service(settings, store, clock, semantic=True)
    namespace = semantic.namespace(writer)
    with_subject = store.memory.add_fact(
        namespace.id, "Use the staging cluster", squad="demo", agent="writer", subject="deploying"
    )
    clock.advance(60)
    store.memory.add_fact(namespace.id, "Tables need borders", squad="demo", agent="writer")
    assert _block_facts(semantic, writer, "who deploys the service?")[-1] == with_subject.text
    embedder = HashingEmbedder()
    stored = vector_from_bytes(
        store.memory.vectors([with_subject.id], embedder.name)[with_subject.id],
        embedder.dimensions,
    )
    expected = embedder.embed([embedding_text(with_subject.text, with_subject.subject)])[0]
    assert stored is not None and np.array_equal(stored, expected)
