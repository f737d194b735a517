"""Tokenising and BM25 weights for the experiential-memory index (pure, no database)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from squad.text.lexical import (
    MAX_TERM_CHARS,
    STOPWORDS,
    bm25,
    bm25_coefficients,
    idf,
    query_terms,
    stem,
    term_counts,
    terms,
)


def test_terms_are_casefolded_deduplicated_and_in_first_seen_order() -> None:
    assert terms("Deploy the API; then DEPLOY again, api first") == [
        "deploy",
        "api",
        "again",
        "first",
    ]


def test_short_words_and_stopwords_are_dropped() -> None:
    assert terms("I want a pony and it is in the barn") == ["want", "pony", "barn"]


def test_numbers_and_mixed_words_are_kept_whole() -> None:
    assert terms("Use py311 on port 8080, not 3.9") == ["use", "py311", "port", "8080", "not"]


def test_underscores_split_identifiers() -> None:
    assert terms("user_id and __init__") == ["user", "id", "init"]


def test_korean_words_are_terms_and_split_from_latin_ones() -> None:
    assert terms("사용자는 API를 좋아합니다") == ["사용자는", "api", "좋아합니다"]


def test_runs_longer_than_the_cap_are_dropped() -> None:
    blob = "x" * (MAX_TERM_CHARS + 1)
    assert terms(f"token {blob} {'y' * MAX_TERM_CHARS}") == ["token", "y" * MAX_TERM_CHARS]


def test_term_counts_count_repeats_and_sum_to_the_document_length() -> None:
    counts = term_counts("Postgres pool; the postgres POOL size")
    assert counts == {"postgr": 2, "pool": 2, "siz": 1}
    assert sum(counts.values()) == 5
    assert term_counts("pools sized", stemmed=False) == {"pools": 1, "sized": 1}


@pytest.mark.parametrize(
    ("words", "stemmed"),
    [
        (["painted", "painting", "paints", "paint"], "paint"),
        (["hiked", "hiking", "hike", "hikes"], "hik"),
        (["running", "runs"], "run"),
        (["studies", "study"], "study"),
        (["researched", "research", "researching"], "research"),
    ],
)
def test_inflections_of_a_word_share_one_stem(words: list[str], stemmed: str) -> None:
    assert {stem(w) for w in words} == {stemmed}


@pytest.mark.parametrize("word", ["class", "status", "speed", "bus", "api", "py311", "사용자는"])
def test_short_words_non_ascii_words_and_ss_us_eed_endings_keep_their_form(word: str) -> None:
    assert stem(word) == word


def test_a_query_finds_another_inflection_of_an_indexed_word() -> None:
    assert set(query_terms("what did she paint?")) & set(term_counts("I painted a sunrise"))


def test_korean_words_are_also_indexed_by_bigrams_so_particles_do_not_hide_them() -> None:
    counts = term_counts("사용자는 한국어를 선호")
    assert counts == {
        "사용자는": 1,
        "사용": 1,
        "용자": 1,
        "자는": 1,
        "한국어를": 1,
        "한국": 1,
        "국어": 1,
        "어를": 1,
        "선호": 1,
    }
    assert set(query_terms("사용자가")) & set(counts) == {"사용", "용자"}


def test_query_terms_are_the_distinct_index_terms() -> None:
    assert query_terms("pool POOL size") == ["pool", "siz"]
    assert query_terms("the a of") == []


def test_idf_is_positive_and_falls_as_a_term_gets_common() -> None:
    weights = [idf(1000, df) for df in (1, 10, 500, 1000)]
    assert weights == sorted(weights, reverse=True)
    assert all(w > 0 for w in weights)
    # More than half the facts: under ln 2, the point where retrieval skips a term.
    assert idf(1000, 501) < math.log(2) == pytest.approx(idf(1000, 500))


def test_bm25_matches_the_textbook_formula() -> None:
    n_docs, df, tf, doc_len, avg_len = 1000, 7, 2, 12, 9.5
    k1, b = 1.2, 0.75
    expected = (
        math.log(1 + (n_docs - df + 0.5) / (df + 0.5))
        * tf
        * (k1 + 1)
        / (tf + k1 * (1 - b + b * doc_len / avg_len))
    )
    assert bm25(n_docs, df, tf, doc_len, avg_len) == pytest.approx(expected)
    scale, flat, per_len = bm25_coefficients(n_docs, df, avg_len)
    assert scale * tf / (tf + flat + per_len * doc_len) == pytest.approx(expected)


def test_bm25_rewards_repeats_and_penalises_length() -> None:
    assert bm25(100, 5, 2, 10, 10.0) > bm25(100, 5, 1, 10, 10.0)
    assert bm25(100, 5, 1, 30, 10.0) < bm25(100, 5, 1, 10, 10.0)


@given(st.text())
def test_terms_are_clean_for_any_text(text: str) -> None:
    found = terms(text)
    assert len(found) == len(set(found))
    for term in found:
        assert term == term.casefold()
        assert 2 <= len(term) <= MAX_TERM_CHARS
        assert term not in STOPWORDS
    assert set(found) <= set(term_counts(text, stemmed=False))
    assert {stem(term) for term in found} <= set(term_counts(text))
