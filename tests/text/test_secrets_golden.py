"""The redactor decides today as it decided when the golden file was written (issue 32's speed
work changed how the finders read a text, never what they find): every corpus text, every
bench shape, and the corpora joined into long texts (:mod:`tests.text.secrets_golden`)."""

from __future__ import annotations

from tests.text.secrets_golden import digest, finds, inputs, load_golden


def test_every_corpus_text_gives_the_finds_the_golden_file_holds() -> None:
    texts, golden = inputs(), load_golden()
    assert golden["inputs"] == digest(texts), (
        "the corpora changed: regenerate the golden file with "
        "`python -m tests.text.secrets_golden` and say why in the commit"
    )
    found = [[list(find) for find in each] for each in finds(texts)]
    expected = golden["finds"]
    assert isinstance(expected, list)
    changed = [
        (text[:80], expected[i], found[i])
        for i, (text, _) in enumerate(texts)
        if found[i] != expected[i]
    ]
    assert not changed, f"{len(changed)} texts changed; first: {changed[:3]}"
