"""``squad validate`` refuses what ``squad run`` would: an unpriced model, a key not set."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from squad.runtime.runnable import run_problems
from squad.spec.loader import squad_from_text
from tests.conftest import EXAMPLES
from tests.support.cli import run_in_process

SELF_HOSTED = """\
name: local-llm
model:
  name: openai/llama3
  api_base: 'http://127.0.0.1:8080/v1'
agents:
  - {id: worker, role: Does one step}
  - {id: critic, role: Reviews, model: anthropic/claude-haiku-4-5}
tasks:
  - {id: start, description: Do step start., agent: worker}
"""
PRICED = SELF_HOSTED.replace(
    "  api_base: 'http://127.0.0.1:8080/v1'\n",
    "  api_base: 'http://127.0.0.1:8080/v1'\n  cost_per_1k_input: 0\n  cost_per_1k_output: 0\n",
)
NO_KEYS = {"PATH": "/usr/bin"}


def test_a_self_hosted_model_without_prices_is_refused_as_run_would() -> None:
    [problem] = run_problems(squad_from_text(SELF_HOSTED), None)

    assert problem.path == ("model",)
    assert "'openai/llama3' has no price" in problem.message and "squad run" in problem.message
    assert "cost_per_1k_input and cost_per_1k_output" in (problem.hint or "")
    assert run_problems(squad_from_text(PRICED), None) == []


def test_a_provider_model_without_its_key_variable_names_the_variables_to_set() -> None:
    [problem] = run_problems(squad_from_text(PRICED), NO_KEYS)

    assert problem.path == ("agents", 1, "model")
    assert "provider 'anthropic'" in problem.message
    assert (problem.hint or "").startswith("set ANTHROPIC_API_KEY or ANTHROPIC_AUTH_TOKEN")
    assert "--no-env" in (problem.hint or "")
    assert run_problems(squad_from_text(PRICED), {"ANTHROPIC_API_KEY": "sk-x"}) == []
    assert run_problems(squad_from_text(PRICED), {"ANTHROPIC_API_KEY": ""}) != []


def test_a_key_named_by_api_key_env_must_be_set_and_a_local_server_needs_none() -> None:
    named = squad_from_text(
        "name: gw\nmodel: {name: openai/gpt-4o-mini, api_base: 'http://10.0.0.2/v1', "
        "api_key_env: GATEWAY_KEY}\nagents: [{id: a, role: r}]\n"
        "tasks: [{id: t, description: d, agent: a}]\n"
    )
    local = squad_from_text(
        "name: local\nmodel: {name: ollama/llama3}\nagents: [{id: a, role: r}]\n"
        "tasks: [{id: t, description: d, agent: a}]\n"
    )

    [problem] = run_problems(named, NO_KEYS)
    assert "GATEWAY_KEY (named by api_key_env)" in problem.message
    assert run_problems(named, {"GATEWAY_KEY": "k"}) == []
    assert run_problems(local, NO_KEYS) == []  # ollama is priced (0) and takes no key


def test_a_bare_model_name_takes_its_provider_from_litellms_map() -> None:
    spec = squad_from_text(
        "name: bare\nmodel: gpt-4o-mini\nagents: [{id: a, role: r}]\n"
        "tasks: [{id: t, description: d, agent: a}]\n"
    )

    [problem] = run_problems(spec, NO_KEYS)
    assert "provider 'openai'" in problem.message and "OPENAI_API_KEY" in (problem.hint or "")


def test_validate_reports_them_at_the_model_key_and_exits_2(tmp_path: Path) -> None:
    path = tmp_path / "local.yaml"
    path.write_text(SELF_HOSTED)
    env = {"PATH": os.environ.get("PATH", ""), "COLUMNS": "200"}

    result = run_in_process(["validate", str(path)], env=env, cwd=tmp_path)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    lines = result.stderr.splitlines()
    assert lines[0].startswith(f"error: {path}:3:3: model: model 'openai/llama3' has no price")
    assert lines[1].startswith(f"error: {path}:7:40: agents[1].model: model 'anthropic/claude")
    assert "set ANTHROPIC_API_KEY or ANTHROPIC_AUTH_TOKEN" in lines[1] and len(lines) == 2

    skipped = run_in_process(["validate", "--no-env", str(path)], env=env, cwd=tmp_path)
    assert skipped.returncode == 2 and "ANTHROPIC_API_KEY" not in skipped.stderr

    path.write_text(PRICED)
    clean = run_in_process(["validate", "--no-env", str(path)], env=env, cwd=tmp_path)
    assert clean.returncode == 0, clean.stderr


def test_the_example_squads_validate_on_a_machine_with_no_keys(tmp_path: Path) -> None:
    env = {"PATH": os.environ.get("PATH", "")}
    result = run_in_process(["validate", *map(str, EXAMPLES)], env=env, cwd=tmp_path)

    assert result.returncode == 0, result.stderr


VALIDATE_PROBE = """\
import sys
from squad.cli import main

sys.argv = ["squad", "validate", sys.argv[1]]
try:
    main()
except SystemExit:
    pass
print("litellm" in sys.modules, file=sys.stderr)
"""


@pytest.mark.slow
def test_validate_never_imports_litellm(tmp_path: Path) -> None:
    path = tmp_path / "local.yaml"
    path.write_text(SELF_HOSTED)
    result = subprocess.run(
        [sys.executable, "-c", VALIDATE_PROBE, str(path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert "has no price" in result.stderr
    assert result.stderr.strip().splitlines()[-1] == "False"
