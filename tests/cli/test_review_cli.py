"""``squad memory review`` as a user runs it (in process: the subject is its output) on a squad
whose extractor holds every fact back; ``--json`` shapes, and exit code 2 with a clear message
for bad ids."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.test_history_cli import Cli, refused

YAML = """\
name: notes
goal: Keep notes.
memory: {review: all}
agents:
  - {id: scribe, role: Writes notes}
tasks:
  - {id: write, description: Write the notes., agent: scribe}
"""
CHAT = [
    {"role": "user", "content": "We use Postgres 16 for the main database."},
    {"role": "assistant", "content": "OK."},
    {"role": "user", "content": "I prefer short answers."},
    {"role": "assistant", "content": "OK."},
]


@pytest.fixture
def cli(tmp_path: Path) -> Cli:
    root = tmp_path / "a"
    (root / "configs" / "squads").mkdir(parents=True)
    (root / "configs" / "squads" / "notes.yaml").write_text(YAML)
    made = Cli(root)
    assert made("run", root / "configs" / "squads" / "notes.yaml").returncode == 0
    chat = root / "chat.jsonl"
    chat.write_text("\n".join(json.dumps(m) for m in CHAT) + "\n")
    extracted = made("memory", "extract", chat, "--squad", "notes", "--agent", "scribe")
    assert extracted.returncode == 0, extracted.stderr
    return made


def test_review_list_approve_reject_and_edit_from_the_cli(cli: Cli) -> None:
    listed = cli.json("memory", "review", "list", "notes", "scribe")
    assert isinstance(listed, dict)
    assert set(listed) == {"squad", "agent", "mode", "status", "items"}
    assert listed["mode"] == "all" and listed["status"] == "pending"
    items = listed["items"]
    assert [i["layer"] for i in items] == ["project", "experiential"]
    assert set(items[0]) >= {"id", "text", "confidence", "section", "source", "status"}
    shown = cli("memory", "show", "notes", "scribe").stdout
    assert "Postgres" not in shown and "short answers" not in shown
    text = cli("memory", "review", "list", "notes", "scribe").stdout
    assert f"#{items[0]['id']}" in text and "[Project Context]" in text

    done = cli.json(
        "memory",
        "review",
        "edit",
        "notes",
        "scribe",
        str(items[0]["id"]),
        "We use Postgres 17 for the main database.",
    )
    assert isinstance(done, dict) and done["action"] == "edit"
    (decided,) = done["decided"]
    assert decided["written"] and decided["item"]["edited_text"].endswith(
        "Postgres 17 for the main database."
    )
    assert decided["item"]["decided_by"] == "cli"
    rejected = cli("memory", "review", "reject", "notes", "scribe", "--all")
    assert rejected.returncode == 0 and f"#{items[1]['id']} rejected" in rejected.stdout
    shown = cli("memory", "show", "notes", "scribe").stdout
    assert "Postgres 17" in shown and "short answers" not in shown
    assert cli.json("memory", "review", "list", "notes", "scribe")["items"] == []  # type: ignore[index]

    refused(cli("memory", "review", "approve", "notes", "scribe", "4242"), "no review item 4242")
    refused(
        cli("memory", "review", "approve", "notes", "scribe", str(items[1]["id"])),
        "was rejected already, by cli",
    )
    refused(cli("memory", "review", "approve", "notes", "scribe", "0"), "out of range")
    refused(cli("memory", "review", "approve", "notes", "scribe"), "give the review item ids")
    refused(cli("memory", "review", "approve", "notes", "scribe", "--all"), "nothing awaits")
    refused(cli("memory", "review", "list", "notes", "nobody"), "no agent 'nobody'")
    not_a_number = cli("memory", "review", "reject", "notes", "scribe", "abc")
    assert not_a_number.returncode == 2 and "Traceback" not in not_a_number.stderr
