"""``squad mcp --print-config``: host configurations that parse and launch squad from any
folder, without squad on PATH."""

from __future__ import annotations

import json
import os
import shlex
import tomllib
from pathlib import Path
from typing import Any

import pytest

from tests.scaffold.conftest import Project

ODD = "my proj ü \"q\" 'a' $HOME"
"""A folder name each format must quote: spaces, quotes, a non-ASCII letter, a dollar."""


def _launch(text: str, host: str) -> tuple[list[str], dict[str, str]]:
    """The command and environment a host would take from ``text``."""
    if host == "claude":
        words = shlex.split(text)
        assert words[:6] == ["claude", "mcp", "add", "squad", "--scope", "user"]
        split = words.index("--")
        pairs = words[6:split]
        assert pairs[::2] == ["-e"] * (len(pairs) // 2)
        env = dict(pair.split("=", 1) for pair in pairs[1::2])
        return words[split + 1 :], env
    if host == "codex":
        server = tomllib.loads(text)["mcp_servers"]["squad"]
    else:
        server = json.loads(text)["mcpServers"]["squad"]
    return [server["command"], *server["args"]], server["env"]


@pytest.mark.parametrize("host", ["claude", "codex", "cursor"])
def test_print_config_parses_and_pins_absolute_paths(
    project: Project, tmp_path: Path, host: str
) -> None:
    project.root = tmp_path / ODD
    assert project("init").returncode == 0
    result = project("mcp", "--print-config", host, "--read-only", "--squad", "docs")
    assert result.returncode == 0, result.stderr
    assert result.stderr.startswith("# ") and "no squads folder" not in result.stderr
    command, env = _launch(result.stdout, host)
    program = Path(command[0])
    assert program.is_absolute() and os.access(program, os.X_OK)
    assert command[1:] in (
        ["mcp", "--squad=docs", "--read-only"],
        ["-m", "squad", "mcp", "--squad=docs", "--read-only"],
    )
    assert env == {
        "SQUAD_HOME": str(project.home),
        "SQUAD_CONFIGS": str(project.root / "configs"),
        "SQUAD_WORKSPACES": str(project.root / "workspaces"),
    }


def test_print_config_without_a_squad_script_runs_the_interpreter_as_a_module(
    tmp_path: Path,
) -> None:
    from squad.cli.mcp_config import server_command

    assert server_command(str(tmp_path / "bin" / "python3")) == [
        str(tmp_path / "bin" / "python3"),
        "-m",
        "squad",
    ]
    script = tmp_path / "bin" / "squad"
    script.parent.mkdir()
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    assert server_command(str(tmp_path / "bin" / "python3")) == [str(script)]


def test_print_config_names_a_store_url_set_in_the_environment(project: Project) -> None:
    project.env["SQUAD_DATABASE_URL"] = "sqlite:////srv/squad/state.db"
    result = project("mcp", "--print-config", "cursor")
    assert result.returncode == 0
    assert "no squads folder" in result.stderr
    _, env = _launch(result.stdout, "cursor")
    assert env["SQUAD_DATABASE_URL"] == "sqlite:////srv/squad/state.db"


@pytest.mark.slow
def test_the_printed_config_serves_the_projects_squads_from_another_folder(
    project: Project, tmp_path: Path
) -> None:
    """What a host does: start the printed command, in a folder of its own, and list the
    squads over stdio."""
    import anyio
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client
    from mcp_types import Implementation

    assert project("init", "--template", "docs").returncode == 0
    assert project("run", "configs/squads/docs.yaml").returncode == 0
    printed = project("mcp", "--print-config", "cursor")
    command, env = _launch(printed.stdout, "cursor")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    params = StdioServerParameters(
        command=command[0],
        args=command[1:],
        # the tree under test, as this interpreter imports it; no PATH: nothing is looked up
        env={**env, "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
        cwd=str(elsewhere),
    )

    async def main() -> Any:
        with (tmp_path / "stderr.txt").open("w") as errlog:
            client = Client(
                stdio_client(params, errlog=errlog),
                client_info=Implementation(name="cursor", version="1"),
            )
            async with client:
                return await client.call_tool("squads", {})

    answer = anyio.run(main)
    assert not answer.is_error, answer.content[0].text
    (squad,) = json.loads(answer.content[0].text)["squads"]
    assert squad["name"] == "docs"
    assert squad["workspace"] == str(project.root / "workspaces" / "docs")
