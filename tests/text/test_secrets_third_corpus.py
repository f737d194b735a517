"""A third chat corpus of credentials, written blind and measured before any rule saw it.

``data/chat_credentials_third.jsonl.gz`` holds 160 messages (80 English, 80 Korean) with the
exact values a reader must remove; ``data/chat_credential_negatives_third.jsonl.gz`` 100 near
misses (placeholders, digests, public keys, policies, test cards, extension numbers...).
Written by someone who had seen neither the detector, its tests nor the other corpora. First
measured, the memory writer removed every value from 133 of the 160 and the classifier refused
139, with no false alarm; then Atlassian, Mapbox, Toss Payments, Firebase server and Entra ID
client secret shapes, Go MySQL DSNs, ``htpasswd -b``, recovery codes of two groups of four,
"wallet seed", backup and grouped one-time codes, "도어 번호 ...*", a Korean value said with a
past copula after an ellipsis ("뭐였더라... 아 맞다 ... 이었어요"), a PIN said with a copula
right after its name ("택배함 비번 8023 이에요") and, for the classifier, a password-shaped word
with no name ("try `Wint3r!sComing`") took them to 147 and 153, still with none. The shares
below are the floor to keep, not a measure of unseen text.
"""

from __future__ import annotations

from tests.text.chat_corpus import false_alarms, load, refused, removed

CREDENTIALS = load("chat_credentials_third.jsonl.gz")
NEGATIVES = load("chat_credential_negatives_third.jsonl.gz")


def test_the_third_corpus_covers_both_languages() -> None:
    assert len(CREDENTIALS) == 160 and len(NEGATIVES) == 100
    assert sum(row["lang"] == "ko" for row in CREDENTIALS) == 80
    assert sum(row["lang"] == "ko" for row in NEGATIVES) == 50
    assert all(value in row["text"] for row in CREDENTIALS for value in row["values"])


def test_the_writer_removes_every_value_from_at_least_147_of_the_160() -> None:
    assert removed(CREDENTIALS) >= 147


def test_the_classifier_refuses_at_least_153_of_the_160() -> None:
    assert refused(CREDENTIALS) >= 153


def test_no_near_miss_of_the_third_corpus_is_a_credential() -> None:
    assert false_alarms(NEGATIVES) == []
