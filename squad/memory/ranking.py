"""Semantic reranking of experiential facts: a pure function over candidates and vectors.

Retrieval stays two-stage. The store picks the candidates, bounded by an index and a LIMIT
(``relevant_facts``: BM25 over the message, then the newest facts); :func:`rerank` only
reorders them by cosine similarity to the message. So its cost is bounded by the candidate
limit, never by the size of a namespace, and no vector outside the candidates is read.

The rule: facts with a vector first, by cosine similarity (rounded to 6 decimals, so float
noise across machines cannot swap near-equal facts), equal scores newest first (``updated_at``
then id, as lexical ties); facts without a usable vector after them, in their lexical order.
Pure cosine rather than a blend with the lexical rank, because the candidate list mixes two
orders a blend cannot tell apart: BM25 hits, then a recency fill with no relevance rank at all.
The lexical stage has already done its job (recall); this one decides precision. And as the
memory service embeds every candidate that lacks a vector, "without a vector" means a vector
of the wrong size, a corner case that keeps its lexical place rather than vanishing.

:func:`line_relevance` scores the lines of a memory.md for a message the same lexical way
(BM25, the file's lines as the corpus), so a memory.md over its share keeps the lines that
bear on the task at hand rather than those that happen to sit lowest in the file.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from squad.text.lexical import bm25, query_terms, term_counts

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from squad.store.records import FactRecord

__all__ = ["SCORE_DECIMALS", "embedding_text", "line_relevance", "rerank"]

SCORE_DECIMALS = 6
"""Cosine similarities are compared at this precision; closer ones are ties."""


def embedding_text(text: str, subject: str | None = None) -> str:
    """What a fact is embedded as: its subject (when it has one) and text, as it is indexed."""
    return text if subject is None else f"{subject}\n{text}"


def rerank(
    message_vector: npt.NDArray[np.float32],
    candidates: Sequence[FactRecord],
    vectors: Mapping[int, npt.NDArray[np.float32]],
) -> list[FactRecord]:
    """``candidates`` (in lexical order) reordered by similarity to the message, most first.

    ``vectors`` maps fact ids to vectors; entries of facts that are not candidates are
    ignored, and a vector whose size differs from the message's counts as missing. An all-zero
    message vector (nothing to embed) leaves the lexical order as it is.
    """
    import numpy as np

    query = np.asarray(message_vector, dtype=np.float32).ravel()
    query_norm = float(np.linalg.norm(query))
    if query_norm == 0.0:
        return list(candidates)
    with_vector: list[FactRecord] = []
    rows: list[npt.NDArray[np.float32]] = []
    without: list[FactRecord] = []
    for fact in candidates:
        vector = vectors.get(fact.id)
        if vector is not None and vector.size == query.size:
            with_vector.append(fact)
            rows.append(np.asarray(vector, dtype=np.float32).ravel())
        else:
            without.append(fact)
    if not with_vector:
        return without
    matrix = np.stack(rows)
    norms = np.linalg.norm(matrix, axis=1) * query_norm
    dots = matrix @ query
    cosines = np.divide(dots, norms, out=np.zeros_like(dots), where=norms > 0)
    scored = [
        (round(float(score), SCORE_DECIMALS), fact)
        for score, fact in zip(cosines, with_vector, strict=True)
    ]
    scored.sort(key=lambda item: (item[1].updated_at, item[1].id), reverse=True)
    scored.sort(key=lambda item: item[0], reverse=True)  # stable: equal scores stay newest first
    return [fact for _, fact in scored] + without


def line_relevance(message: str, lines: Sequence[str]) -> list[float]:
    """Each line's BM25 score for ``message``, the lines themselves as the corpus: 0.0 for a
    line that shares no term with it (and for every line when the message has none)."""
    wanted = set(query_terms(message))
    counts = [term_counts(line) for line in lines]
    if not wanted or not counts:
        return [0.0] * len(lines)
    df = Counter(term for c in counts for term in c.keys() & wanted)
    lengths = [sum(c.values()) for c in counts]
    avg_len = sum(lengths) / len(lengths)
    return [
        sum(bm25(len(counts), df[term], c[term], length, avg_len) for term in c.keys() & wanted)
        for c, length in zip(counts, lengths, strict=True)
    ]
