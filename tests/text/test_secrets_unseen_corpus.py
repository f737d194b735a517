"""A second chat corpus of credentials, written blind and measured before any rule saw it.

``data/chat_credentials_unseen.jsonl.gz`` holds 200 messages (100 English, 100 Korean) with
the exact values a reader must remove; ``data/chat_credential_negatives_unseen.jsonl.gz``
120 near misses. Written by someone who had seen neither the detector, its tests nor the
first corpus. First measured, the memory writer removed every value from 150 of the 200 and
the classifier refused 162, with 3 and 7 false alarms among the 120 negatives; then
:mod:`squad.text.secrets._spoken` and new shapes (lock codes, corrections, seed phrases,
Docker Hub, age and Sentry keys, JWK private members) took them to 177 and 184, with none,
and :mod:`squad.text.secrets._files` (``.npmrc``, ``.pgpass``, PuTTY keys, Terraform variable
defaults, Oracle connect strings) with a wider app-password and authenticator-key window, "is
literally ..." and ``become_pass`` to 187 and 191; a correction whose values are joined words
and digits ("hotspot-7781, not hotspot-7718") and a code keyed into a lock ("the alarm panel
... punch in 0913") to 189 and 192; a PIN said with a copula right after its name ("법인카드
비밀번호 4829 에요") and, for the classifier, a password-shaped word with no name ("try this one
instead: Blue$Monkey77") to 190 and 194; a ``user / password`` pair after a login question on
the line above to 191 and 195.
The shares below are the floor to keep, not a measure of unseen text.
"""

from __future__ import annotations

from tests.text.chat_corpus import false_alarms, load, refused, removed

CREDENTIALS = load("chat_credentials_unseen.jsonl.gz")
NEGATIVES = load("chat_credential_negatives_unseen.jsonl.gz")


def test_the_unseen_corpus_covers_both_languages() -> None:
    assert len(CREDENTIALS) == 200 and len(NEGATIVES) == 120
    assert sum(row["lang"] == "ko" for row in CREDENTIALS) == 100
    assert sum(row["lang"] == "ko" for row in NEGATIVES) == 60
    assert all(value in row["text"] for row in CREDENTIALS for value in row["values"])


def test_the_writer_removes_every_value_from_at_least_191_of_the_200() -> None:
    assert removed(CREDENTIALS) >= 191


def test_the_classifier_refuses_at_least_195_of_the_200() -> None:
    assert refused(CREDENTIALS) >= 195


def test_no_near_miss_of_the_unseen_corpus_is_a_credential() -> None:
    assert false_alarms(NEGATIVES) == []
