"""``squad runs``, ``squad memory history/revert``, ``squad export/import`` as a user runs them
(in process: the subject is their output), exit code 2 with a clear message (never a
traceback) for bad input."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES
from tests.support.cli import run_in_process


class Cli:
    """``squad`` on a home of its own under ``root``, run in this process."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.env = {
            **{k: v for k, v in os.environ.items() if not k.startswith("SQUAD_")},
            "SQUAD_HOME": str(root / "home"),
            "SQUAD_WORKSPACES": str(root / "workspaces"),
            "SQUAD_CONFIGS": str(root / "configs"),
            "COLUMNS": "200",
        }

    def __call__(self, *args: str | Path) -> subprocess.CompletedProcess[str]:
        return run_in_process([str(a) for a in args], env=self.env, cwd=self.root)

    def json(self, *args: str | Path) -> object:
        result = self(*args, "--json")
        assert result.returncode == 0, result.stderr
        return json.loads(result.stdout)


def refused(result: subprocess.CompletedProcess[str], words: str) -> None:
    assert result.returncode == 2, (result.returncode, result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    assert words in result.stderr, result.stderr


@pytest.fixture
def cli(tmp_path: Path) -> Cli:
    (tmp_path / "a").mkdir()
    return Cli(tmp_path / "a")


def test_runs_are_listed_shown_and_diffed_from_the_history(cli: Cli) -> None:
    review = next(p for p in EXAMPLES if p.stem == "code-review")
    assert "no runs yet" in cli("runs", "list").stdout
    for goal in ("Add a --dry-run flag to the export command.", "Add a --verbose flag."):
        assert cli("run", review, "--goal", goal).returncode == 0
    listed = cli.json("runs", "list", "code-review")
    assert isinstance(listed, list) and len(listed) == 2
    new, old = listed[0], listed[1]
    assert new["source"] == "history" and new["commit"] and new["status"] == "succeeded"
    table = cli("runs", "list").stdout
    assert new["run_id"][:12] in table and "commit" in table.splitlines()[0]

    shown = cli.json("runs", "show", new["run_id"][:8])
    assert shown["previous_run"] == old["run_id"]
    assert any(c["path"].startswith("plans/") for c in shown["changes"])

    patch = cli("runs", "diff", new["run_id"])
    assert patch.returncode == 0 and "+Goal: Add a --verbose flag." in patch.stdout
    limited = cli("runs", "diff", new["run_id"], old["run_id"], "--", "tasks")
    assert limited.returncode == 0 and "plans/" not in limited.stdout
    stat = cli("runs", "diff", new["run_id"], "--stat")
    assert "files changed" in stat.stdout

    refused(cli("runs", "diff", "feedfacefeedface"), "no run 'feedfacefeedface'")
    refused(cli("runs", "show", "ab"), "too short")
    refused(cli("runs", "list", "nosuch"), "no squad named 'nosuch'")


def test_memory_history_and_revert_from_the_command_line(cli: Cli) -> None:
    docs = next(p for p in EXAMPLES if p.stem == "docs-site")
    assert cli("create", docs).returncode == 0
    assert (
        cli("memory", "remember", "docs-site", "writer", "Docs use MkDocs", "--layer", "project")
    ).returncode == 0
    changes = cli.json("memory", "history", "docs-site", "writer")
    assert isinstance(changes, list)
    newest = changes[0]
    assert newest["who"] == "cli" and any("Docs use MkDocs" in a for a in newest["added"])
    done = cli("memory", "revert", "docs-site", "writer", newest["id"])
    assert done.returncode == 0 and "reverted" in done.stdout
    memory = Path(cli.env["SQUAD_WORKSPACES"]) / "docs-site" / "agents" / "writer" / "memory.md"
    assert "MkDocs" not in memory.read_text()
    refused(cli("memory", "revert", "docs-site", "writer", newest["id"]), "nothing to undo")
    refused(cli("memory", "revert", "docs-site", "writer", "0000000000"), "no commit")
    refused(cli("memory", "revert", "docs-site", "writer", "zz/top"), "not a memory change id")


def test_a_squad_exported_here_is_imported_into_another_home(cli: Cli, tmp_path: Path) -> None:
    review = next(p for p in EXAMPLES if p.stem == "code-review")
    assert cli("run", review).returncode == 0
    archive = tmp_path / "review.tar.gz"
    exported = cli.json("export", "code-review", "-o", archive)
    assert isinstance(exported, dict) and exported["commits"] >= 2
    refused(cli("export", "code-review", "-o", archive), "exists")

    (tmp_path / "b").mkdir()
    other = Cli(tmp_path / "b")
    imported = other.json("import", archive)
    assert isinstance(imported, dict) and imported["squad"] == "code-review"
    assert imported["commits"] == exported["commits"] + 1
    assert len(other.json("runs", "list")) == 1  # type: ignore[arg-type]
    refused(other("import", archive), "already exists")
    broken = tmp_path / "broken.tar.gz"
    broken.write_bytes(b"\x1f\x8b not an archive")
    refused(other("import", broken), "not a readable squad export")
    assert other("run", "code-review").returncode == 0
