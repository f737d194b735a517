"""Whatever the input, the loader returns a squad or raises ConfigError; nothing else escapes.

Property-based: random bytes, random text, YAML-looking fragments, generated nested data,
and random edits of a real definition. Each run also checks that every problem renders and
names its source, and (pytest turns warnings into errors) that the parser warns about nothing.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterator
from functools import reduce
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from squad.errors import ConfigError
from squad.spec.loader import load_squad_file, load_squad_text
from squad.spec.models import SquadSpec
from tests.conftest import EXAMPLES

FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SOURCE = "fuzz.yaml"
BASE = EXAMPLES[0].read_text(encoding="utf-8")

FRAGMENTS = [
    "name: x\n", "process: hierarchical\n", "agents: [{id: a, role: r}]\n", "agents:\n",
    "  - ", "- ", "{", "}", "[", "]", ",", ":", ": ", "? ", "&a ", "*a", "&b ", "*b",
    "<<: ", "<<: [*a, *b]\n", "!!binary ", "!!str ", "!!int ", "!!float ", "!!null ",
    "!!timestamp ", "!!set ", "!!omap ", "!!python/object:os.system ", "!foo ", "! ",
    "!<tag:x> ", "!e!x ", "%TAG !e! tag:e,2000:\n", "---\n", "...\n", "%YAML 1.1\n",
    "%YAML 1.2\n", '"\\U0010FFFF"', '"\\UFFFFFFFF"', '"\\ud800"', '"\\x00"', "'", '"', "#",
    "\t", "\n", "  ", "    ", "0x", "0o", "1e999", "123", "-", ".inf", ".nan", "|\n", ">\n",
    "|-\n", "|+2\n", "~", "null", "yes", "2001-13-45", "1:30", "é", "\u2028", "\x85",
    "\ufeff", "\r\n", "\r", "@", "`", "%", "x", "model: ", "schedule: {cron: '", "0 0 30 2 *",
    "'}", "limits: {max_turns: ", "=", "api_key_env: HOME",
]  # fmt: skip
"""Pieces of YAML syntax, squad keys and known troublemakers, to be glued at random."""

scalars = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8)
nested = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4)
    ),
    max_leaves=40,
)


def _edit(text: str, edits: list[tuple[int, int, str]]) -> str:
    return reduce(lambda t, e: t[: e[0]] + e[2] + t[e[0] + e[1] :], edits, text)


texts = st.one_of(
    st.text(max_size=200),
    st.lists(st.sampled_from(FRAGMENTS), max_size=30).map("".join),
    st.lists(st.sampled_from(FRAGMENTS) | st.text(max_size=3), max_size=30).map("".join),
    st.lists(
        st.tuples(
            st.integers(0, len(BASE)),
            st.integers(0, 8),
            st.sampled_from(FRAGMENTS) | st.text(max_size=4),
        ),
        min_size=1,
        max_size=5,
    ).map(lambda edits: _edit(BASE, edits)),
    nested.map(
        lambda data: json.dumps({"name": "x", "agents": [{"id": "a", "role": "r"}], "x": data})
    ),
    st.tuples(st.integers(0, 200), st.sampled_from(["[", "{a: ", '{"a": ', "- ", "? "])).map(
        lambda t: "x: " + t[1] * t[0]
    ),
)


def check(load: Any, arg: Any) -> None:
    try:
        loaded = load(arg)
    except ConfigError as error:
        for problem in error.problems:
            assert problem.source is not None
            problem.render()
        return
    assert isinstance(loaded.spec, SquadSpec)
    for warning in loaded.warnings:
        warning.render()


@pytest.fixture(scope="module")
def folder() -> Iterator[Path]:
    with tempfile.TemporaryDirectory() as name:
        yield Path(name)


@FUZZ
@given(texts)
def test_any_text_gives_a_squad_or_a_config_error(text: str) -> None:
    check(lambda t: load_squad_text(t, source=SOURCE), text)


@FUZZ
@given(st.binary(max_size=400) | texts.map(lambda t: t.encode("utf-8", "surrogatepass")))
def test_any_file_gives_a_squad_or_a_config_error(folder: Path, raw: bytes) -> None:
    path = folder / SOURCE
    path.write_bytes(raw)
    check(load_squad_file, path)
