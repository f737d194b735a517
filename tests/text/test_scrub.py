"""Stored text redacted in the shape it is stored in (text, JSON, JSON Lines, conversations)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import NamedTuple

from squad.text.scrub import (
    Found,
    scrub_conversation,
    scrub_json_lines,
    scrub_json_text,
    scrub_text,
    scrub_value,
)

TOKEN = "ghp_" + "aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dF3hJ5"


def test_text_names_the_line_and_kind_and_a_second_pass_changes_nothing() -> None:
    text = f"# Notes\n- push with {TOKEN}\n"

    first = scrub_text(text)
    second = scrub_text(first.value)

    assert first.value == "# Notes\n- push with [REDACTED:github_token]\n"
    assert first.found == (Found("github_token", "line 2"),)
    assert second.value == first.value and not second.changed


def test_a_conversation_loses_a_bare_value_after_its_cue_and_says_which_message() -> None:
    messages = ["What's the staging db password?", "Tr0ub4dor&3xQ", "thanks"]

    scrubbed = scrub_conversation(messages)

    assert [s.value for s in scrubbed] == [messages[0], "[REDACTED:followup_secret]", "thanks"]
    assert [s.changed for s in scrubbed] == [False, True, False]
    assert scrubbed[1].found == (Found("followup_secret", "line 1"),)


def test_json_text_keeps_its_shape_and_finds_values_named_by_their_key_or_hidden_by_escapes() -> (
    None
):
    named = scrub_json_text('{"password": "hunter2x", "port": 5432}')
    escaped = scrub_json_text(json.dumps({"note": "What's the db password?\nTr0ub4dor&3xQ"}))

    assert json.loads(named.value) == {"password": "[REDACTED:password_assignment]", "port": 5432}
    assert named.found == (Found("password_assignment", "line 1"),)
    assert json.loads(escaped.value)["note"].endswith("\n[REDACTED:followup_secret]")
    assert escaped.found == (Found("followup_secret", ".note line 2"),)
    assert not scrub_json_text(named.value).changed and not scrub_json_text(escaped.value).changed


def test_json_strings_are_judged_on_their_own_too_where_the_text_around_them_hides_them() -> None:
    line = '{"event":"message","text":"my password is sunshine","n":1}'

    scrubbed = scrub_json_text(line)

    assert json.loads(scrubbed.value)["text"] == "my password is [REDACTED:password_prose]"
    assert scrubbed.found == (Found("password_prose", ".text"),)


def test_json_lines_rewrite_only_the_lines_that_change_and_keep_torn_and_blank_lines() -> None:
    clean = '{"event":"run_start","run_id":"r1"}'
    text = f'{clean}\n{{"event":"tool_result","output":"GH={TOKEN}"}}\n\n{{"torn": "pw='

    scrubbed = scrub_json_lines(text)

    lines = scrubbed.value.split("\n")
    assert lines[0] == clean and lines[2] == "" and lines[3] == '{"torn": "pw='
    assert json.loads(lines[1]) == {"event": "tool_result", "output": "GH=[REDACTED:github_token]"}
    assert scrubbed.found == (Found("github_token", "line 2"),)


@dataclass(frozen=True)
class _Note:
    text: str
    count: int


def test_values_are_walked_through_dicts_lists_tuples_and_dataclasses_keeping_the_rest() -> None:
    untouched = {"n": 1}
    value = {"a": [f"use {TOKEN}", untouched], "b": (_Note(f"or {TOKEN}", 2),), TOKEN: "key"}

    scrubbed = scrub_value(value)

    assert scrubbed.value["a"][0] == "use [REDACTED:github_token]"
    assert scrubbed.value["a"][1] is untouched
    assert scrubbed.value["b"] == (_Note("or [REDACTED:github_token]", 2),)
    assert TOKEN in scrubbed.value  # keys are names, not values
    assert [f.where for f in scrubbed.found] == [".a[0]", ".b[0].text"]
    assert scrub_value(untouched).value is untouched


class _Snapshot(NamedTuple):
    value: object
    kind: str = "snapshot"


def test_a_named_tuple_keeps_its_fields_when_a_string_in_it_is_redacted() -> None:
    scrubbed = scrub_value(_Snapshot({"t1": f"use {TOKEN}"}))

    assert scrubbed.value == _Snapshot({"t1": "use [REDACTED:github_token]"})
    assert [f.where for f in scrubbed.found] == ["[0].t1"]
