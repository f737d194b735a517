"""The bounded cache behind the credential scanner's finds: answers kept by key, the least
recently used dropped first, and long texts kept as digests, never as themselves."""

from __future__ import annotations

import threading

from squad.text import secrets
from squad.text.bounded_cache import KEY_CHARS, BoundedCache, text_key


def test_a_short_text_is_its_own_key_and_a_long_one_a_digest() -> None:
    assert text_key("status: done") == "status: done"
    long = "x" * (KEY_CHARS + 1)
    key = text_key(long)
    assert isinstance(key, bytes) and len(key) == 16
    assert text_key(long) == key


def test_the_parts_of_a_key_keep_their_borders() -> None:
    assert text_key("ab", "c") != text_key("a", "bc")
    assert text_key("learned", "x") != text_key("rules", "x")


def test_the_least_recently_used_value_goes_first() -> None:
    cache: BoundedCache[int] = BoundedCache(2)
    made: list[str] = []

    def make(key: str) -> int:
        made.append(key)
        return len(made)

    assert cache.get("a", lambda: make("a")) == 1
    assert cache.get("b", lambda: make("b")) == 2
    assert cache.get("a", lambda: make("a")) == 1  # kept, and now the most recent
    assert cache.get("c", lambda: make("c")) == 3  # b goes
    assert len(cache) == 2
    assert cache.get("b", lambda: make("b")) == 4  # made again
    assert made == ["a", "b", "c", "b"]


def test_a_value_that_is_none_is_kept_too() -> None:
    cache: BoundedCache[None] = BoundedCache(4)
    calls: list[int] = []
    cache.get("k", lambda: calls.append(1))
    cache.get("k", lambda: calls.append(1))
    assert calls == [1]


def test_threads_asking_at_once_get_their_values_and_the_bound_holds() -> None:
    cache: BoundedCache[str] = BoundedCache(50)
    wrong: list[str] = []

    def ask(n: int) -> None:
        for i in range(300):
            key = f"{(i * 7 + n) % 120}"
            if cache.get(key, lambda key=key: key * 2) != key * 2:
                wrong.append(key)

    threads = [threading.Thread(target=ask, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert wrong == [] and len(cache) == 50


def test_the_scanner_keeps_digests_of_the_texts_it_scanned_not_the_texts() -> None:
    text = "deploy notes " * 60 + "password: Zq8#kLm2!vR7x"  # over KEY_CHARS, with a credential
    first = secrets.find_secrets(text, previous=["what is the db password?"])
    again = secrets.find_secrets(text, previous=["what is the db password?"])
    assert first == again and first  # the kept answer is the scan's
    kept = secrets._FINDS.keys()
    assert text not in kept
    assert all(len(key) <= KEY_CHARS for key in kept)
    assert text_key("learned", text, "what is the db password?") in kept


def test_a_weighted_cache_keeps_no_more_than_its_weight() -> None:
    cache: BoundedCache[str] = BoundedCache(100, max_weight=10)
    for key in ("aaaa", "bbbb", "cc"):
        cache.get(key, lambda key=key: key.upper(), weight=len(key))
    assert cache.weight() == 10 and cache.keys() == ["aaaa", "bbbb", "cc"]
    cache.get("dddd", lambda: "DDDD", weight=4)  # aaaa goes; the rest fits
    assert cache.keys() == ["bbbb", "cc", "dddd"] and cache.weight() == 10
    assert cache.get("e" * 11, lambda: "big", weight=11) == "big"  # answered, not kept
    kept = cache.keys()
    assert "e" * 11 not in kept and cache.weight() == 10
