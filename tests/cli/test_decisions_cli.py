"""``squad decisions`` through the console script's entry point, in process (the subject is its
output)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.cli.test_cli import Cli
from tests.conftest import EXAMPLES


@pytest.fixture
def cli(tmp_path: Path) -> Cli:
    """In process: these tests are about what the commands print and store."""
    return Cli(tmp_path, in_process=True)


DOCS = next(p for p in EXAMPLES if p.stem == "docs-site")
KEY = "sk-proj-Ab12Cd34Ef56Gh78Ij90Kl12"


@pytest.fixture
def docs(cli: Cli) -> Cli:
    cli.json("create", DOCS)
    return cli


def _listed(cli: Cli, *args: str) -> list[dict[str, Any]]:
    found = cli.json(*args)
    assert isinstance(found, list)
    return found


def _record(squad: Cli, *extra: str) -> dict[str, Any]:
    made = squad.json(
        "decisions",
        "record",
        "docs-site",
        "--title",
        "Build the docs with MkDocs",
        "--decision",
        "The site is built with MkDocs Material.",
        "--reason",
        "The team knows it",
        "--reason",
        "Search works offline",
        "--alternative",
        "Sphinx",
        *extra,
    )
    assert isinstance(made, dict)
    return made


def test_record_list_show_and_search(docs: Cli) -> None:
    old = _record(docs, "--by", "alice")
    new = _record(docs, "--supersedes", str(old["id"]))
    assert old["decided_by"] == "person:alice" and new["decided_by"] == "cli"
    assert new["supersedes"] == old["id"] and new["reasons"] == [
        "The team knows it",
        "Search works offline",
    ]

    current = _listed(docs, "decisions", "list", "docs-site")
    assert [d["id"] for d in current] == [new["id"]]
    everything = _listed(docs, "decisions", "list", "--all")
    assert [(d["id"], d["superseded_by"]) for d in everything] == [
        (new["id"], None),
        (old["id"], new["id"]),
    ]
    listed = docs("decisions", "list", "docs-site", "--all")
    assert listed.returncode == 0, listed.stderr
    assert f"[superseded by {new['id']}]" in listed.stdout
    assert "Build the docs with MkDocs  (by person:alice)" in listed.stdout

    shown = docs("decisions", "show", str(old["id"]))
    assert shown.returncode == 0, shown.stderr
    assert f"decision {old['id']}: Build the docs with MkDocs  [superseded]" in shown.stdout
    assert f"superseded:  by decision {new['id']}" in shown.stdout
    assert "- Search works offline" in shown.stdout and "- Sphinx" in shown.stdout
    assert docs.json("decisions", "show", str(new["id"])) == new

    found = _listed(docs, "decisions", "search", "MKDOCS offline", "--squad", "docs-site")
    assert [d["id"] for d in found] == [new["id"]]
    text = docs("decisions", "search", "sphinx", "--all")
    assert text.returncode == 0 and text.stdout.count("Build the docs with MkDocs") == 2

    mirror = (docs.workspaces / "docs-site" / "decisions.md").read_text()
    assert f"## ~~{old['id']}. Build the docs with MkDocs~~" in mirror
    assert f"(#decision-{new['id']})" in mirror
    audit = (docs.workspaces / "docs-site" / "logs" / "memory-audit.jsonl").read_text()
    decisions = [json.loads(line) for line in audit.splitlines()]
    assert [(r["actor"], r["file"]) for r in decisions if r["operation"] == "decision"] == [
        ("person:alice", f"decision:{old['id']}"),
        ("cli", f"decision:{new['id']}"),
    ]


def test_bad_input_exits_2_with_a_clear_message_and_stores_nothing(docs: Cli) -> None:
    cases = [
        (
            ["record", "nosuch", "--title", "T", "--decision", "D", "--reason", "R"],
            "no squad or workspace named 'nosuch'",
        ),
        (
            ["record", "docs-site", "--title", "T", "--decision", "D"],
            "at least one reason",
        ),
        (
            ["record", "docs-site", "--title", "T", "--decision", f"use {KEY}", "--reason", "R"],
            "contains a credential",
        ),
        (
            [
                *("record", "docs-site", "--title", "T", "--decision", "D", "--reason", "R"),
                *("--supersedes", "77"),
            ],
            "no decision 77 to supersede",
        ),
        (["show", "77"], "no decision 77"),
        (["show", "seven"], "Invalid value"),
        (["list", "nosuch"], "no squad or workspace named 'nosuch'"),
        (["search", "  "], "the query is empty"),
        (["search", "x", "--squad", "nosuch"], "no squad or workspace named 'nosuch'"),
    ]
    for args, message in cases:
        result = docs("decisions", *args)
        assert result.returncode == 2, (args, result.stdout, result.stderr)
        assert message in result.stderr, (args, result.stderr)
        assert "Traceback" not in result.stderr and KEY not in result.stderr
    assert not (docs.workspaces / "docs-site" / "decisions.md").exists()
    assert docs.json("decisions", "list", "--all") == []


def test_reading_commands_on_a_new_home_create_no_database(cli: Cli) -> None:
    assert cli.json("decisions", "list") == []
    nothing = cli("decisions", "search", "anything")
    assert nothing.returncode == 1 and "no decision matches 'anything'" in nothing.stdout
    assert not cli.home.exists() or not any(cli.home.rglob("*.db"))
