"""Short texts' finds are kept (:func:`squad.text.secrets.find_secrets`): what the cache
gives is what a fresh scan finds, for every corpus text, with and without the messages before
it and the learned detector, in any order of asking."""

from __future__ import annotations

from squad.text.secrets import _CACHED_MESSAGE, _scanned, find_secrets
from tests.text.secrets_golden import inputs


def test_every_corpus_text_asked_again_gets_what_a_fresh_scan_finds() -> None:
    texts = [(text, before) for text, before in inputs() if len(text) <= _CACHED_MESSAGE]
    assert any(before for _, before in texts)  # follow-ups: the messages before count
    changed = []
    for i, (text, before) in enumerate(texts):
        asks: list[tuple[tuple[str, ...], bool]] = [((), False)]
        if before:  # a follow-up: without, then with the messages before it, each way
            asks += [(before, False), (before, True), ((), True)]
        elif i % 5 == 0:  # the learned detector is the slow part: on a fifth of the rest
            asks.append(((), True))
        for previous, learned in asks:
            fresh = _scanned(text, previous, learned)
            first = find_secrets(text, previous=previous, learned=learned)
            again = find_secrets(text, previous=previous, learned=learned)
            if not fresh == first == again:
                changed.append((text[:60], previous, learned, fresh, again))
    assert not changed, f"{len(changed)} differ; first: {changed[:2]}"


def test_a_kept_result_is_a_copy_the_caller_may_change() -> None:
    text = "the db password is hunter2hunter2"
    first = find_secrets(text, previous=["what's the db password?"])
    first.clear()

    assert find_secrets(text, previous=["what's the db password?"]) == _scanned(
        text, ["what's the db password?"], True
    )
