"""Words for the experiential-memory index: tokenising and BM25 weights, no I/O.

The store indexes each fact under :func:`term_counts` of its text and looks a query up under
:func:`query_terms`; both go through the same tokeniser, so a word is found exactly when it was
indexed. Words are ``\\w`` runs (any script), casefolded, split where a Hangul, Han or kana run
meets another script (``API를`` gives ``api``) and at underscores (``user_id`` gives ``user``
and ``id``). Korean glues particles to words (``사용자는``, ``사용자가``), so CJK words of three or
more characters are also indexed by their character bigrams: ``사용자`` then finds both.
English words are indexed by a light stem (:func:`stem`): ``painted``, ``painting`` and
``paints`` are all ``paint``, so "what did she paint" finds "I painted a sunrise".
"""

from __future__ import annotations

import math
import re
from collections import Counter

__all__ = [
    "K1",
    "MAX_TERM_CHARS",
    "STOPWORDS",
    "B",
    "bm25",
    "bm25_coefficients",
    "idf",
    "query_terms",
    "stem",
    "term_counts",
    "terms",
]

MAX_TERM_CHARS = 64
"""Longer runs (hashes, base64, minified code) are never typed in a query and are dropped."""

_STOPWORD_TEXT = """
    about after all also am an and any are as at be been being but by can could did do does
    for from had has have he her his how if in into is it its me my of on or our she so than
    that the their them then there these they this those to too us was we were what when where
    which who whom why will with would you your
"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())
"""English function words: in almost every fact, they would only add noise and postings."""

K1 = 1.2
"""BM25 term-frequency saturation."""
B = 0.75
"""BM25 length normalisation: 0 ignores fact length, 1 normalises fully."""

_WORD = re.compile(r"[^\W_]+")
_CJK_RUN = re.compile(
    r"[\u1100-\u11ff\u3040-\u30ff\u3130-\u318f\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7a3]+"
)


def _words(text: str) -> list[str]:
    """Every word of ``text`` in order, with repeats, before stopwords and length are applied."""
    out: list[str] = []
    for word in _WORD.findall(text.casefold()):
        start = 0
        for run in _CJK_RUN.finditer(word):
            if run.start() > start:
                out.append(word[start : run.start()])
            out.append(run.group())
            start = run.end()
        if start < len(word):
            out.append(word[start:])
    return out


_ASCII_WORD = re.compile(r"[a-z]+")
_UNDOUBLED = frozenset("bdfgkmnprt")


def stem(word: str) -> str:
    """A light English stem of a casefolded word: plural, -ing, -ed, -ly and a final e go.

    Deliberately conservative (a wrong merge costs precision everywhere): words of three
    letters or fewer, and any word that is not plain ASCII letters, are kept as they are;
    a stem keeps at least three letters. ``studies`` -> ``study``, ``running`` -> ``run``,
    ``hiked`` and ``hike`` -> ``hik``, ``class``, ``status`` and ``speed`` unchanged.
    """
    if len(word) < 4 or _ASCII_WORD.fullmatch(word) is None:
        return word
    if word.endswith("ies"):
        word = word[:-3] + "y"
    elif word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    for suffix in ("ing", "ed"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3 and not word.endswith("eed"):
            word = word[: -len(suffix)]
            if len(word) > 3 and word[-1] == word[-2] and word[-1] in _UNDOUBLED:
                word = word[:-1]  # running -> run, planned -> plan; spelled, passed stay
            break
    else:
        if word.endswith("ly") and len(word) >= 6:
            word = word[:-2]
    if word.endswith("e") and len(word) >= 4:
        word = word[:-1]
    return word


def _keep(word: str) -> bool:
    return 2 <= len(word) <= MAX_TERM_CHARS and word not in STOPWORDS


def terms(text: str) -> list[str]:
    """The distinct words of ``text``, casefolded, in first-seen order.

    Words shorter than two characters, longer than :data:`MAX_TERM_CHARS` and English
    stopwords are left out; numbers and mixed words (``8080``, ``py311``) stay.
    """
    return list(dict.fromkeys(w for w in _words(text) if _keep(w)))


def _is_cjk(word: str) -> bool:
    return _CJK_RUN.fullmatch(word) is not None


def term_counts(text: str, *, stemmed: bool = True) -> dict[str, int]:
    """How often each index term occurs in ``text``: its words (stemmed, unless ``stemmed``
    is False) plus bigrams of CJK words.

    The values add up to the document length BM25 normalises by. Order is first occurrence.
    """
    counts: Counter[str] = Counter()
    for word in _words(text):
        if not _keep(word):
            continue
        counts[stem(word) if stemmed else word] += 1
        if len(word) > 2 and _is_cjk(word):
            counts.update(word[i : i + 2] for i in range(len(word) - 1))
    return dict(counts)


def query_terms(text: str) -> list[str]:
    """The distinct index terms of a query, in first-seen order."""
    return list(term_counts(text))


def idf(n_docs: int, df: int) -> float:
    """BM25 inverse document frequency (the Lucene form, which is never negative)."""
    return math.log(1.0 + (n_docs - df + 0.5) / (df + 0.5))


def bm25_coefficients(n_docs: int, df: int, avg_len: float) -> tuple[float, float, float]:
    """``(scale, flat, per_len)`` such that a term's BM25 score in a document is
    ``scale * tf / (tf + flat + per_len * doc_len)``: the form a database can compute."""
    per_len = K1 * B / avg_len if avg_len > 0 else 0.0
    flat = K1 * (1.0 - B) if avg_len > 0 else K1
    return idf(n_docs, df) * (K1 + 1.0), flat, per_len


def bm25(n_docs: int, df: int, tf: int, doc_len: int, avg_len: float) -> float:
    """One term's BM25 score in one document (``tf`` occurrences in ``doc_len`` terms)."""
    scale, flat, per_len = bm25_coefficients(n_docs, df, avg_len)
    return scale * tf / (tf + flat + per_len * doc_len)
