"""The installed ``squad`` console script, run in a subprocess like a user would."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES, REPO
from tests.support.cli import run_in_process

SQUAD = Path(sys.executable).parent / "squad"
pytestmark = pytest.mark.slow

BROKEN = """\
name: broken
agents:
  - {id: writer, role: Writes, rol: typo}
tasks:
  - {id: draft, description: Write., agent: writer, approval: maybe}
"""


class Cli:
    def __init__(self, tmp_path: Path, *, in_process: bool = False) -> None:
        self.in_process = in_process
        self.tmp = tmp_path
        self.home = tmp_path / "home"
        self.workspaces = tmp_path / "workspaces"
        self.env = {
            **{k: v for k, v in os.environ.items() if not k.startswith("SQUAD_")},
            "SQUAD_HOME": str(self.home),
            "SQUAD_WORKSPACES": str(self.workspaces),
            "SQUAD_CONFIGS": str(tmp_path / "configs"),
            "COLUMNS": "200",
        }

    def __call__(self, *args: str | Path) -> subprocess.CompletedProcess[str]:
        if self.in_process:  # the subject is the output, not the process
            return run_in_process([str(a) for a in args], env=self.env, cwd=self.tmp)
        return subprocess.run(
            [str(SQUAD), *map(str, args)],
            env=self.env,
            cwd=self.tmp,
            capture_output=True,
            text=True,
            timeout=120,
        )

    def json(self, *args: str | Path) -> object:
        result = self(*args, "--json")
        assert result.returncode == 0, result.stderr
        return json.loads(result.stdout)


@pytest.fixture
def cli(tmp_path: Path) -> Cli:
    return Cli(tmp_path)


def write(path: Path, text: str | bytes) -> Path:
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return path


def test_help_lists_the_commands(cli: Cli) -> None:
    result = cli("--help")
    assert result.returncode == 0
    for command in ("validate", "schema", "create", "restore", "ws"):
        assert command in result.stdout


def test_cli_import_does_not_load_heavy_libraries() -> None:
    code = (
        "import sys, squad.cli; heavy = [m for m in ('litellm', 'langgraph', 'sqlalchemy', "
        "'sqlmodel', 'alembic', 'pydantic', 'ruamel', 'opentelemetry') if m in sys.modules]; "
        "print(heavy)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]"


def test_examples_validate(cli: Cli) -> None:
    result = cli("validate", *EXAMPLES)
    assert result.returncode == 0, result.stderr
    assert result.stdout.count("ok: ") == len(EXAMPLES)


def test_bad_file_exits_2_with_located_problems_and_creates_nothing(cli: Cli) -> None:
    bad = write(cli.tmp / "broken.yaml", BROKEN)
    before = sorted(p.name for p in cli.tmp.iterdir())
    for command in ("validate", "create"):
        result = cli(command, bad)
        assert result.returncode == 2
        assert "Traceback" not in result.stderr
        assert f"{bad}:3:32: agents[0].rol: unknown key 'rol'; did you mean 'role'?" in (
            result.stderr
        )
        assert f"{bad}:5:63: tasks[0].approval: expected true or false" in result.stderr
    assert sorted(p.name for p in cli.tmp.iterdir()) == before


def test_one_bad_file_among_good_ones_creates_nothing(cli: Cli) -> None:
    bad = write(cli.tmp / "broken.yaml", BROKEN)
    result = cli("create", EXAMPLES[0], bad)
    assert result.returncode == 2
    assert not cli.workspaces.exists() and not cli.home.exists()


@pytest.mark.parametrize(
    ("content", "words"),
    [
        (b"", "file is empty"),
        (b"name: x\ndescription: caf\xe9\n", "not valid UTF-8"),
        (b"- a\n", "top level must be a mapping"),
        (b"name: x\n" + b"#" * (1024 * 1024), "over the 1,048,576-byte limit"),
    ],
    ids=["empty", "latin1", "list-root", "too-large"],
)
def test_unreadable_definitions_exit_2_without_traceback(
    cli: Cli, content: bytes, words: str
) -> None:
    bad = write(cli.tmp / "bad.yaml", content)
    result = cli("validate", bad)
    assert result.returncode == 2
    assert words in result.stderr and "Traceback" not in result.stderr


def test_validate_json_reports_each_file(cli: Cli) -> None:
    bad = write(cli.tmp / "broken.yaml", BROKEN)
    result = cli("validate", EXAMPLES[0], bad, "--json")
    assert result.returncode == 2
    good, broken = json.loads(result.stdout)
    assert good["valid"] and not broken["valid"]
    assert [p["line"] for p in broken["problems"]] == [3, 5]


def test_schema_is_json_schema_and_the_committed_copy_is_current(cli: Cli) -> None:
    result = cli("schema")
    assert result.returncode == 0
    schema = json.loads(result.stdout)
    assert schema["$schema"].endswith("2020-12/schema")
    assert {"name", "agents", "tasks", "schedule"} <= set(schema["properties"])
    assert schema["additionalProperties"] is False
    committed = json.loads((REPO / "configs" / "squad.schema.json").read_text())
    assert committed == schema, "run: squad schema -o configs/squad.schema.json"


def test_create_then_explore_a_workspace(cli: Cli) -> None:
    docs = next(p for p in EXAMPLES if p.stem == "docs-site")
    created = cli.json("create", docs)
    assert created[0]["manifest"] == "created"
    ws = cli.workspaces / "docs-site"
    assert (ws / ".squad-config.json").is_file()
    assert (cli.home / "squad.db").is_file()

    assert [row["squad"] for row in cli.json("ws", "list")] == ["docs-site"]
    tree = cli.json("ws", "tree", "docs-site", "--depth", "1")
    assert {e["name"] for e in tree["entries"]} == {  # the history's .git is not shown
        ".gitignore",
        ".squad-config.json",
        "agents",
        "logs",
        "plans",
        "tasks",
    }
    shown = cli.json("ws", "show", "docs-site", "agents/writer/memory.md")
    assert shown["kind"] == "markdown" and "# Insights" in shown["text"]

    (ws / "tasks" / "notes.md").write_text("first line\nThe Getting Started guide\n")
    found = cli.json("ws", "search", "docs-site", "getting started")
    assert [(f["path"], f["matches"][0]["line_number"]) for f in found["files"]] == [
        ("tasks/notes.md", 2)
    ]
    plain = cli("ws", "search", "docs-site", "getting started", "-C", "1")
    assert "tasks/notes.md" in plain.stdout and "first line" in plain.stdout

    (health,) = cli.json("ws", "health", "docs-site")
    assert health["file_count"] >= 5
    assert {m["agent"] for m in health["memory_files"]} == {"planner", "writer", "reviewer"}
    assert (health["history"]["state"], health["history"]["commits"]) == ("ok", 1)
    assert not any(path.startswith(".git/") for path, _ in health["largest_files"])

    again = cli.json("create", docs)
    assert again[0]["manifest"] == "unchanged" and again[0]["created"] == []


def test_restore_works_when_yaml_and_database_are_gone(cli: Cli) -> None:
    source = write(cli.tmp / "temp.yaml", EXAMPLES[0].read_text())
    created = cli.json("create", source)
    source.unlink()
    (cli.home / "squad.db").unlink()
    restored = cli.json("restore", created[0]["workspace"])
    assert restored["squad"] == created[0]["squad"] and restored["manifest"] == "unchanged"
    assert [row["squad"] for row in cli.json("ws", "list")] == [created[0]["squad"]]


def test_ws_commands_refuse_escapes_and_unknown_squads(cli: Cli) -> None:
    cli.json("create", EXAMPLES[0])
    squad = EXAMPLES[0].stem
    escape = cli("ws", "show", squad, "../../etc/passwd")
    assert escape.returncode == 2 and "without '..'" in escape.stderr
    unknown = cli("ws", "tree", "nope")
    assert unknown.returncode == 2 and "no squad or workspace named 'nope'" in unknown.stderr
    (cli.workspaces / squad / "tasks" / "blob.bin").write_bytes(b"\x00\x01binary")
    binary = cli("ws", "show", squad, "tasks/blob.bin")
    assert binary.returncode == 1 and "binary" in binary.stderr
    bad_regex = cli("ws", "search", squad, "(", "--regex")
    assert bad_regex.returncode == 2 and "Traceback" not in bad_regex.stderr


def test_bad_settings_file_exits_2_with_its_location(cli: Cli) -> None:
    (cli.tmp / "configs").mkdir()
    settings = write(cli.tmp / "configs" / "settings.yaml", "workspace: x\n")
    result = cli("ws", "list")
    assert result.returncode == 2
    assert f"{settings}:1:1: workspace: unknown key 'workspace'; did you mean 'workspaces'?" in (
        result.stderr
    )
