"""``squad memory extract`` and the chat trigger, through the console script's entry point, in
process (the subject is their output)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.test_cli import Cli
from tests.conftest import EXAMPLES


@pytest.fixture
def cli(tmp_path: Path) -> Cli:
    """In process: these tests are about what the commands print and store."""
    return Cli(tmp_path, in_process=True)


DOCS = next(p for p in EXAMPLES if p.stem == "docs-site")

TRANSCRIPT = [
    {"role": "system", "content": "You are a helpful agent."},
    {"role": "user", "content": "We use pnpm in this repo, never npm."},
    {"role": "assistant", "content": "Got it."},
    {"role": "user", "content": "Can you check why the build is red?"},
    {"role": "user", "content": "I prefer answers with the code first."},
    {"role": "user", "content": "우리 서비스는 8080 포트를 써요."},
]


def transcript(cli: Cli, *, as_list: bool) -> Path:
    path = cli.tmp / ("t.json" if as_list else "t.jsonl")
    if as_list:
        path.write_text(json.dumps(TRANSCRIPT))
    else:
        path.write_text("\n".join(json.dumps(m) for m in TRANSCRIPT) + "\n")
    return path


@pytest.mark.parametrize("as_list", [False, True])
def test_extract_prints_facts_with_scope_section_and_source_turns(
    cli: Cli,
    as_list: bool,
) -> None:
    result = cli("memory", "extract", transcript(cli, as_list=as_list), "--format", "json")
    assert result.returncode == 0, result.stderr
    facts = {f["text"]: f for f in json.loads(result.stdout)["facts"]}
    assert facts["We use pnpm in this repo, never npm."]["scope"] == "project"
    assert facts["We use pnpm in this repo, never npm."]["source_turns"] == [1]
    assert facts["I prefer answers with the code first."]["scope"] == "experiential"
    assert facts["I prefer answers with the code first."]["section"] is None
    assert facts["우리 서비스는 8080 포트를 써요."]["source_turns"] == [5]
    assert not any("build is red" in text for text in facts)


def test_extract_into_an_agent_writes_unless_dry_run(cli: Cli) -> None:
    cli.json("create", DOCS)
    path = transcript(cli, as_list=False)
    memory_md = cli.workspaces / "docs-site" / "agents" / "writer" / "memory.md"
    before = memory_md.read_text()
    dry = cli("memory", "extract", path, "--squad", "docs-site", "--agent", "writer", "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert "(nothing written)" in dry.stdout and memory_md.read_text() == before

    wet = cli(
        "memory", "extract", path, "--squad", "docs-site", "--agent", "writer", "--format", "json"
    )
    assert wet.returncode == 0, wet.stderr
    assert "- We use pnpm in this repo, never npm. (" in memory_md.read_text()
    again = json.loads(
        cli(
            "memory",
            "extract",
            path,
            "--squad",
            "docs-site",
            "--agent",
            "writer",
            "--format",
            "json",
            "--dry-run",
        ).stdout
    )
    assert {d["reason"] for d in again["dropped"]} == {"duplicate"}


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"role": "user"', "t.jsonl:1:"),
        ('{"role": "robot", "content": "hi"}', "role must be one of"),
        ('[{"role": "user", "content": 3}]', "content must be a string"),
    ],
)
def test_a_bad_transcript_is_a_clear_error(cli: Cli, content: str, message: str) -> None:
    path = cli.tmp / "t.jsonl"
    path.write_text(content + "\n")
    result = cli("memory", "extract", path)
    assert result.returncode == 2
    assert message in result.stderr and "Traceback" not in result.stderr


def test_chat_extracts_in_the_background_every_n_turns(cli: Cli) -> None:
    cli.json("create", DOCS)
    lines = ["In this repo the API listens on port 8080."] + [f"Note {i}." for i in range(5)]
    for line in lines:
        result = cli("chat", "docs-site", "planner", "-m", line)
        assert result.returncode == 0, result.stderr
    text = (cli.workspaces / "docs-site" / "agents" / "planner" / "memory.md").read_text()
    assert "In this repo the API listens on port 8080." in text
