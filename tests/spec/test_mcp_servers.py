"""``mcp_servers:`` and agents' ``tools:``: every mistake located at its key, with a fix."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from squad.errors import ConfigError, Problem
from squad.spec.lint import warnings_for
from squad.spec.loader import load_squad_text, squad_from_text

HEAD = "name: x\nprocess: hierarchical\n"


def agents(tools: str = "[time]") -> str:
    return f"agents:\n  - {{id: a, role: r, tools: {tools}}}\n"


def problems_of(text: str) -> list[Problem]:
    with pytest.raises(ConfigError) as caught:
        squad_from_text(text, source="squad.yaml")
    return list(caught.value.problems)


def test_both_kinds_of_server_and_the_tools_that_name_them_validate() -> None:
    spec = squad_from_text(
        HEAD
        + "mcp_servers:\n"
        + "  time:\n"
        + "    command: mcp-server-time\n"
        + "    args: [--local-timezone, UTC]\n"
        + "    env: [TZ_DATA]\n"
        + "    timeout_s: 5\n"
        + "  search:\n"
        + "    url: http://127.0.0.1:8000/mcp\n"
        + "    headers_env: {Authorization: SEARCH_TOKEN}\n"
        + agents("[time, search.find]"),
        source="squad.yaml",
    )
    time, search = spec.mcp_servers["time"], spec.mcp_servers["search"]
    assert (time.transport, time.args, time.env, time.timeout_s) == (
        "stdio",
        ["--local-timezone", "UTC"],
        ["TZ_DATA"],
        5,
    )
    assert time.startup_timeout_s == 60
    assert (search.transport, search.headers_env) == ("http", {"Authorization": "SEARCH_TOKEN"})
    assert search.timeout_s == 30
    assert spec.agents[0].tools == ["time", "search.find"]


# (id, mcp_servers block, tools, line, column, dotted path, words in message + hint)
CASES = [
    (
        "name-not-a-slug",
        "  My_Time: {command: mcp-server-time}\n",
        "[My_Time]",
        4,
        3,
        "mcp_servers.My_Time",
        ["MCP server name 'My_Time' is not a valid id", "'my-time'"],
    ),
    (
        "command-and-url",
        "  time: {command: mcp-server-time, url: 'http://127.0.0.1:1/mcp'}\n",
        "[time]",
        4,
        41,
        "mcp_servers.time.url",
        ["either command (stdio) or url", "not both"],
    ),
    (
        "neither-command-nor-url",
        "  time: {timeout_s: 3}\n",
        "[time]",
        4,
        9,
        "mcp_servers.time",
        ["needs a command", "or a url"],
    ),
    (
        "empty-command",
        "  time: {command: ''}\n",
        "[time]",
        4,
        19,
        "mcp_servers.time.command",
        ["must not be empty"],
    ),
    (
        "relative-command",
        "  time: {command: ./bin/server}\n",
        "[time]",
        4,
        19,
        "mcp_servers.time.command",
        ["relative path", "name found on PATH or an absolute path"],
    ),
    (
        "command-with-arguments",
        "  time: {command: npx -y mcp-time}\n",
        "[time]",
        4,
        19,
        "mcp_servers.time.command",
        ["holds spaces", "command: npx", "args:"],
    ),
    (
        "tilde-command",
        "  time: {command: ~/bin/server}\n",
        "[time]",
        4,
        19,
        "mcp_servers.time.command",
        ["'~'", "absolute path"],
    ),
    (
        "args-on-a-url-server",
        "  time: {url: 'http://127.0.0.1:1/mcp', args: [x]}\n",
        "[time]",
        4,
        47,
        "mcp_servers.time.args",
        ["args belongs to a stdio server"],
    ),
    (
        "headers-on-a-stdio-server",
        "  time: {command: mcp-server-time, headers_env: {X-Key: KEY}}\n",
        "[time]",
        4,
        49,
        "mcp_servers.time.headers_env",
        ["headers_env belongs to a server reached by url"],
    ),
    (
        "env-value-instead-of-name",
        "  time: {command: mcp-server-time, env: ['sk-abc123']}\n",
        "[time]",
        4,
        42,
        "mcp_servers.time.env[0]",
        ["not an environment variable name", "never the key itself"],
    ),
    (
        "bad-url",
        "  time: {url: 'ftp://example/mcp'}\n",
        "[time]",
        4,
        15,
        "mcp_servers.time.url",
        ["not an http(s) URL"],
    ),
    (
        "bad-header-name",
        "  time: {url: 'http://127.0.0.1:1/mcp', headers_env: {'Bad Header': KEY}}\n",
        "[time]",
        4,
        55,
        "mcp_servers.time.headers_env.Bad Header",
        ["not an HTTP header name"],
    ),
    (
        "unknown-key-in-a-server",
        "  time: {command: mcp-server-time, timeout: 3}\n",
        "[time]",
        4,
        36,
        "mcp_servers.time.timeout",
        ["unknown key 'timeout'", "did you mean 'timeout_s'"],
    ),
    (
        "duplicate-server-name",
        "  time: {command: mcp-server-time}\n  time: {command: other}\n",
        "[time]",
        5,
        3,
        "mcp_servers.time",
        ["duplicate key 'time'", "line 4"],
    ),
    (
        "unknown-server-in-tools",
        "  time: {command: mcp-server-time}\n",
        "[tme]",
        6,
        30,
        "agents[0].tools[0]",
        ["unknown MCP server 'tme'", "did you mean 'time'"],
    ),
    (
        "unknown-server-tool-in-tools",
        "  time: {command: mcp-server-time}\n",
        "[git.git_log]",
        6,
        30,
        "agents[0].tools[0]",
        ["unknown MCP server 'git'", "valid: 'time'"],
    ),
    (
        "tools-entry-listed-twice",
        "  time: {command: mcp-server-time}\n",
        "[time, time]",
        6,
        36,
        "agents[0].tools[1]",
        ["'time' is listed twice", "list it once"],
    ),
    (
        "tool-name-missing-after-dot",
        "  time: {command: mcp-server-time}\n",
        "['time.']",
        6,
        30,
        "agents[0].tools[0]",
        ["names no tool after the '.'"],
    ),
]


@pytest.mark.parametrize(
    ("servers", "tools", "line", "column", "path", "words"),
    [case[1:] for case in CASES],
    ids=[case[0] for case in CASES],
)
def test_a_bad_server_or_tools_entry_is_reported_at_its_key(
    servers: str, tools: str, line: int, column: int, path: str, words: list[str]
) -> None:
    [problem] = problems_of(HEAD + "mcp_servers:\n" + servers + agents(tools))
    text = f"{problem.message}; {problem.hint}"
    assert (problem.line, problem.column, problem.dotted_path) == (line, column, path), text
    for word in words:
        assert word in text


def test_tools_naming_a_server_in_a_squad_without_servers_says_how_to_define_one() -> None:
    [problem] = problems_of(HEAD + agents("[time]"))
    assert problem.message == "agent 'a' lists tools of unknown MCP server 'time'"
    assert problem.hint is not None and "mcp_servers:" in problem.hint


def test_a_command_not_found_on_this_machine_is_a_warning_not_an_error() -> None:
    text = HEAD + "mcp_servers:\n  time: {command: mcp-server-nowhere}\n" + agents()
    [warning] = load_squad_text(text, source="squad.yaml").warnings
    assert (warning.line, warning.column, warning.dotted_path) == (
        4,
        19,
        "mcp_servers.time.command",
    )
    assert "'mcp-server-nowhere' of MCP server 'time' is not on PATH" in warning.message
    spec = squad_from_text(text)
    assert warnings_for(spec, which=lambda _: "/usr/bin/mcp-server-nowhere") == []


def test_an_absolute_command_that_is_missing_is_warned_about(tmp_path: Path) -> None:
    missing = tmp_path / "server"
    text = HEAD + f"mcp_servers:\n  time: {{command: '{missing}'}}\n" + agents()
    [warning] = load_squad_text(text, source="squad.yaml").warnings
    assert "does not exist or is not executable on this machine" in warning.message
    present = HEAD + f"mcp_servers:\n  py: {{command: '{sys.executable}'}}\n" + agents("[py]")
    assert load_squad_text(present).warnings == ()


def test_a_server_no_agent_uses_and_a_redundant_tools_entry_are_warned_about() -> None:
    text = (
        HEAD
        + f"mcp_servers:\n  time: {{command: '{sys.executable}'}}\n"
        + f"  idle: {{command: '{sys.executable}'}}\n"
        + agents("[time, time.get_current_time]")
    )
    warnings = load_squad_text(text, source="squad.yaml").warnings
    assert [(w.dotted_path, w.message) for w in warnings] == [
        ("mcp_servers.idle", "MCP server 'idle' is in no agent's tools, so it is never started"),
        (
            "agents[0].tools[1]",
            "tools entry 'time.get_current_time' has no effect: 'time' already allows all its "
            "tools",
        ),
    ]


def test_a_definition_round_tripped_through_its_manifest_still_validates() -> None:
    from squad.spec.loader import squad_from_dict

    spec = squad_from_text(HEAD + "mcp_servers:\n  time: {command: mcp-server-time}\n" + agents())
    again = squad_from_dict(spec.model_dump(mode="json"))
    assert again == spec
