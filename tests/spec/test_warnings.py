"""Warnings: what validates but is unlikely to be meant, located like errors, never fatal."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from squad.cli import main
from squad.errors import Problem
from squad.spec.lint import warnings_for
from squad.spec.loader import load_squad_text, squad_from_text
from tests.conftest import EXAMPLES

HEAD = "name: x\nprocess: hierarchical\n"
AGENTS = "agents:\n  - {id: a, role: r}\n"


def warnings_of(text: str) -> list[Problem]:
    return list(load_squad_text(text, source="squad.yaml").warnings)


# (id, yaml, line, column, dotted path, words in message + hint)
WARNED = [
    (
        "api-key-env-home",
        HEAD + "model: {name: openai/gpt-4o-mini, api_key_env: HOME}\n" + AGENTS,
        3,
        48,
        "model.api_key_env",
        ["'HOME'", "holds no API key", "OPENAI_API_KEY"],
    ),
    (
        "api-key-env-locale",
        HEAD + AGENTS.replace("r}", "r, model: {name: m, api_key_env: LC_ALL}}"),
        4,
        52,
        "agents[0].model.api_key_env",
        ["'LC_ALL'"],
    ),
    (
        "api-key-env-endpoint",
        HEAD + "model: {name: openai/m, api_key_env: OPENAI_API_BASE}\n" + AGENTS,
        3,
        38,
        "model.api_key_env",
        ["holds an address", "api_base:"],
    ),
    (
        "provider-typo",
        HEAD + "model: opnai/gpt-4o-mini\n" + AGENTS,
        3,
        8,
        "model.name",
        ["'opnai' looks like a typo of 'openai'", "'openai/gpt-4o-mini'"],
    ),
    (
        "provider-case",
        HEAD + "model: {name: Anthropic/claude}\n" + AGENTS,
        3,
        15,
        "model.name",
        ["typo of 'anthropic'"],
    ),
    (
        "offline-typo",
        HEAD + AGENTS.replace("r}", "r, model: ofline}"),
        4,
        29,
        "agents[0].model.name",
        ["did you mean 'offline'?"],
    ),
    (
        "strict-plan-on-a-sequential-squad",
        "name: x\nprocess: {type: sequential, strict_plan: true}\n"
        + AGENTS
        + "tasks: [{id: t, description: d, agent: a}]\n",
        2,
        42,
        "process.strict_plan",
        ["no effect on a sequential squad", "type: hierarchical"],
    ),
    (
        "leap-day-cron",
        HEAD + AGENTS + "schedule: {cron: '0 9 29 2 *'}\n",
        5,
        18,
        "schedule.cron",
        ["only on 29 February", "four years"],
    ),
    (
        "timezone-with-interval",
        HEAD + AGENTS + "schedule: {interval: 1h, timezone: Europe/Berlin}\n",
        5,
        36,
        "schedule.timezone",
        ["no effect on an interval"],
    ),
    (
        "extract-without-memory",
        HEAD + AGENTS + "memory: {enabled: false, extract: true}\n",
        5,
        35,
        "memory.extract",
        ["memory is off for every agent"],
    ),
    (
        "agent-extract-without-memory",
        HEAD + "agents:\n  - {id: a, role: r, memory: {enabled: false, extract: true}}\n",
        4,
        56,
        "agents[0].memory.extract",
        ["agent 'a'", "memory is off"],
    ),
]


@pytest.mark.parametrize(
    ("text", "line", "column", "path", "words"),
    [pytest.param(*case[1:], id=case[0]) for case in WARNED],
)
def test_warning_is_located_at_its_key(
    text: str, line: int, column: int, path: str, words: list[str]
) -> None:
    (warning,) = warnings_of(text)
    assert (warning.line, warning.column, warning.dotted_path) == (line, column, path)
    rendered = warning.render()
    assert rendered.startswith(f"squad.yaml:{line}:{column}: ")
    for word in words:
        assert word in rendered


@pytest.mark.parametrize(
    "text",
    [
        HEAD + "model: {name: openai/gpt-4o-mini, api_key_env: OPENAI_API_KEY}\n" + AGENTS,
        HEAD + "model: {name: mycorp/llm, api_key_env: MYCORP_CREDENTIALS}\n" + AGENTS,
        HEAD + "model: ollama_chat/llama3\n" + AGENTS,
        HEAD + "model: azure_ai/gpt\n" + AGENTS,
        HEAD + "model: nscale/some-model\n" + AGENTS,
        HEAD + "model: gpt-4o-mini\n" + AGENTS,
        HEAD + "model: offline\n" + AGENTS,
        "name: x\nprocess: {type: hierarchical, strict_plan: true}\n" + AGENTS,
        HEAD + AGENTS + "schedule: {cron: '0 9 * * 1-5', timezone: Europe/Berlin}\n",
        HEAD + AGENTS + "schedule: {cron: '0 0 29 2 1'}\n",  # ORed with Mondays
        HEAD + AGENTS + "schedule: {cron: '0 0 29 1-2 *'}\n",
        HEAD + AGENTS + "memory: {extract: true}\n",
        HEAD
        + "agents:\n  - {id: a, role: r, memory: {enabled: true}}\n  - {id: b, role: r}\n"
        + "memory: {enabled: false, extract: true}\n",
    ],
    ids=[
        "key-variable",
        "custom-provider-and-variable",
        "ollama-chat",
        "azure-ai",
        "rare-provider-near-a-common-one",
        "bare-model-name",
        "offline",
        "strict-plan-on-a-hierarchical-squad",
        "timezone-with-cron",
        "leap-day-or-weekday",
        "leap-day-and-january",
        "extract-with-memory",
        "extract-with-memory-on-for-one-agent",
    ],
)
def test_what_is_plausibly_meant_gets_no_warning(text: str) -> None:
    assert warnings_of(text) == []


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_the_examples_have_no_warnings(path: Path) -> None:
    assert warnings_of(path.read_text(encoding="utf-8")) == []


def test_warnings_are_a_pure_function_of_the_spec() -> None:
    spec = squad_from_text(HEAD + "model: {name: m, api_key_env: PATH}\n" + AGENTS)
    (warning,) = warnings_for(spec)
    assert (warning.path, warning.source, warning.line) == (("model", "api_key_env"), None, None)


def _validate(monkeypatch: pytest.MonkeyPatch, capsys: Any, *args: str | Path) -> Any:
    monkeypatch.setattr(sys, "argv", ["squad", "validate", *map(str, args)])
    code = 0
    try:
        main()
    except SystemExit as exit_:
        code = exit_.code
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_validate_prints_warnings_and_still_exits_0(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    path = tmp_path / "warned.yaml"
    path.write_text(
        HEAD
        + "model: {name: m, api_key_env: HOME, cost_per_1k_input: 0, cost_per_1k_output: 0}\n"
        + AGENTS
    )
    code, out, err = _validate(monkeypatch, capsys, path)
    assert code == 0
    assert f"ok: {path}" in out
    assert err.startswith(f"{path}:3:31: warning: model.api_key_env: api_key_env names 'HOME'")


def test_validate_json_lists_warnings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    warned = tmp_path / "warned.yaml"
    warned.write_text(HEAD + AGENTS + "schedule: {cron: '0 0 29 2 *'}\n")
    broken = tmp_path / "broken.yaml"
    broken.write_text(HEAD + AGENTS + "schedule: {cron: '0 0 30 2 *'}\n")
    code, out, err = _validate(monkeypatch, capsys, warned, broken, "--json")
    assert code == 2 and err == ""
    first, second = json.loads(out)
    assert first["valid"] and [w["path"] for w in first["warnings"]] == ["schedule.cron"]
    assert first["warnings"][0]["line"] == 5
    assert not second["valid"] and second["warnings"] == []
    assert "never fire" in second["problems"][0]["message"]
