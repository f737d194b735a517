"""Echoes: a credential value found once in a conversation is redacted wherever it occurs
later, in any role, although the detector alone would not see it there (:mod:`squad.text.
secrets._echo`)."""

from __future__ import annotations

import pytest

from squad.errors import SecretInMemoryError
from squad.text.secrets import (
    ECHO_KIND,
    KINDS,
    SeenSecrets,
    contains_secret,
    find_secrets,
    redact,
    redact_conversation,
    redact_fields,
    refuse_secrets,
    secret_values,
)

PASSWORD = "tangerinepie"


def test_a_reply_repeating_a_password_the_user_gave_is_redacted_in_every_later_message() -> None:
    said = [
        f"my password is {PASSWORD}",
        f"OK, {PASSWORD} is saved.",
        f'I stored "{PASSWORD}" in your notes ({PASSWORD}).',
        f"{PASSWORD}를 기억할게요",
        "wrote notes.md",
    ]
    assert redact_conversation(said) == [
        "my password is [REDACTED:password_prose]",
        "OK, [REDACTED:echo] is saved.",
        'I stored "[REDACTED:echo]" in your notes ([REDACTED:echo]).',
        "[REDACTED:echo]를 기억할게요",
        "wrote notes.md",
    ]
    assert find_secrets(said[1]) == []  # alone, the detector sees nothing: the case at hand


def test_an_echo_is_a_literal_value_standing_on_its_own() -> None:
    known = [PASSWORD]
    assert redact(f"x{PASSWORD} and {PASSWORD}5", known=known)[0] == (
        f"x{PASSWORD} and {PASSWORD}5"
    )  # glued to letters or digits: another word
    assert redact("TANGERINEPIE, Tangerinepie", known=known)[0] == (
        "TANGERINEPIE, Tangerinepie"
    )  # case-sensitive
    assert redact(f"<{PASSWORD}>, «{PASSWORD}»", known=known)[0] == (
        "<[REDACTED:echo]>, «[REDACTED:echo]»"
    )
    assert (  # no word edge (the rules alone: the learned detector may take the whole word)
        redact("x$ecret99!y", known=["$ecret99!"], learned=False)[0] == "x[REDACTED:echo]y"
    )


def test_values_shorter_than_four_characters_or_without_a_letter_or_digit_are_not_looked_for() -> (
    None
):
    assert redact("abc abc 1234 ---- 1234", known=["abc", "1234", "----"])[0] == (
        "abc abc [REDACTED:echo] ---- [REDACTED:echo]"
    )
    assert secret_values("door code: 4471") == ["4471"]
    assert len(SeenSecrets(["abc", "----", "[REDACTED:echo]"])) == 0


def test_redacting_with_known_values_is_idempotent_and_never_touches_a_marker() -> None:
    known = ["REDACTED", "echo", PASSWORD]
    once = redact(f"{PASSWORD} [REDACTED:echo]", known=known)[0]
    assert once == "[REDACTED:echo] [REDACTED:echo]"
    assert redact(once, known=known)[0] == once


def test_an_echo_overlapping_a_find_becomes_one_span_of_the_finds_kind() -> None:
    key = "sk-proj-" + "Ab12Cd34Ef56Gh78Ij90Kl12Mn34Op56Qr78"
    text = f"use {key}"
    assert redact(text, known=[key[:20]])[0] == "use [REDACTED:openai_api_key]"
    assert redact(text, known=[f"use {key}"])[0] == "[REDACTED:openai_api_key]"
    assert ECHO_KIND not in KINDS  # find_secrets never reports one


def test_the_values_of_a_conversation_are_kept_in_memory_and_shown_by_no_repr() -> None:
    seen = SeenSecrets()
    seen.learn("What's the db password?")
    seen.learn("hunter2x", previous=["What's the db password?"])
    seen.learn(f"my password is {PASSWORD}")
    assert list(seen) == ["hunter2x", PASSWORD] and PASSWORD in seen
    assert PASSWORD not in repr(seen) and "hunter2x" not in repr(seen)
    assert redact("hunter2x it is", known=seen)[0] == "[REDACTED:echo] it is"


def test_refusing_and_checking_count_an_echo_and_never_repeat_it() -> None:
    with pytest.raises(SecretInMemoryError) as caught:
        refuse_secrets(f"{PASSWORD} is the staging login", what="the note", known=[PASSWORD])
    assert "echo on line 1" in str(caught.value) and PASSWORD not in str(caught.value)
    assert contains_secret(f"OK {PASSWORD}", known=[PASSWORD])
    assert not contains_secret(f"OK {PASSWORD}")


def test_log_fields_are_redacted_of_known_values_short_or_long() -> None:
    fields = {"text": f"OK {PASSWORD}", "long": "x " * 100 + PASSWORD, "n": 3}
    assert redact_fields(fields, known=[PASSWORD]) == {
        "text": "OK [REDACTED:echo]",
        "long": "x " * 100 + "[REDACTED:echo]",
        "n": 3,
    }
    assert redact_fields(fields)["text"] == f"OK {PASSWORD}"  # the cache keeps no known value
