"""Every command, given something that cannot work, says what is wrong: a message on stderr,
exit 1 or 2, and never a Python traceback.

The commands run in-process through the console script's ``main`` (the same exit-code mapping
a user gets), so the whole set stays quick.
"""

from __future__ import annotations

import json
import sys
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from squad.cli import main
from squad.model.stub_answers import answer
from squad.model.testing import OpenAIStubServer
from squad.settings import Settings
from squad.store import Store
from tests.conftest import EXAMPLES

DOCS = next(p for p in EXAMPLES if p.stem == "docs-site")


@dataclass(frozen=True)
class Outcome:
    code: int
    stdout: str
    stderr: str


class Squad:
    """``squad ARGS...`` in this process, in a home of its own."""

    def __init__(self, tmp: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any) -> None:
        self.tmp = tmp
        self._capsys = capsys
        monkeypatch.chdir(tmp)
        for name in ("SQUAD_DATABASE_URL", "SQUAD_HOME", "SQUAD_WORKSPACES", "SQUAD_CONFIGS"):
            monkeypatch.delenv(name, raising=False)
        monkeypatch.setenv("SQUAD_HOME", str(tmp / "home"))
        monkeypatch.setenv("SQUAD_WORKSPACES", str(tmp / "workspaces"))
        monkeypatch.setenv("SQUAD_CONFIGS", str(tmp / "configs"))
        self._monkeypatch = monkeypatch

    def setenv(self, name: str, value: str) -> None:
        self._monkeypatch.setenv(name, value)

    def __call__(self, *args: str | Path) -> Outcome:
        self._capsys.readouterr()
        self._monkeypatch.setattr(sys, "argv", ["squad", *map(str, args)])
        code = 0
        try:
            main()
        except SystemExit as exit_:
            code = exit_.code if isinstance(exit_.code, int) else 1
        except BaseException:  # noqa: BLE001 - what a user would see as a traceback
            captured = self._capsys.readouterr()
            return Outcome(99, captured.out, captured.err + traceback.format_exc())
        captured = self._capsys.readouterr()
        return Outcome(code, captured.out, captured.err)


@pytest.fixture
def squad(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any) -> Squad:
    return Squad(tmp_path, monkeypatch, capsys)


def _docs(squad: Squad) -> None:
    assert squad("create", DOCS).code == 0


def _bad_yaml(squad: Squad) -> Path:
    path = squad.tmp / "broken.yaml"
    path.write_text("name: broken\nagents: [{id: w, role: Writes, rol: typo}]\n")
    return path


def _transcript(squad: Squad) -> Path:
    path = squad.tmp / "chat.jsonl"
    path.write_text(
        "\n".join(
            json.dumps(m)
            for m in (
                {"role": "user", "content": "We decided to deploy with Helm charts from now on."},
                {"role": "assistant", "content": "Noted, Helm it is."},
            )
        )
        + "\n"
    )
    return path


Case = tuple[str, Callable[[Squad], list[str | Path]], int, str]
"""(name, set-up returning the arguments, exit code, text the message must hold)."""

CASES: list[Case] = [
    ("init", lambda s: ["init", s.tmp / "p", "--template", "code-reveiw"], 2, "did you mean"),
    ("new squad", lambda s: ["new", "squad", "Not_A_Slug"], 2, "'Not_A_Slug'"),
    ("validate", lambda s: ["validate", _bad_yaml(s)], 2, "unknown key 'rol'"),
    (
        "schema",
        lambda s: ["schema", "-o", s.tmp / "no" / "such" / "dir" / "s.json"],
        2,
        "cannot write",
    ),
    ("create", lambda s: ["create", s.tmp / "missing.yaml"], 2, "missing.yaml"),
    ("restore", lambda s: ["restore", s.tmp], 1, "not a squad workspace"),
    ("run", lambda s: ["run", "nosuch"], 2, "'nosuch'"),
    ("resume", lambda s: (_docs(s), ["resume", "r-404"])[1], 2, "'r-404'"),
    ("approve", lambda s: (_docs(s), ["approve", "r-404", "publish"])[1], 2, "'r-404'"),
    ("logs", lambda s: (_docs(s), ["logs", "docs-site"])[1], 2, "no runs yet"),
    ("chat", lambda s: (_docs(s), ["chat", "docs-site", "nobody", "-m", "hi"])[1], 2, "nobody"),
    ("daemon", lambda s: ["daemon", "--configs", s.tmp / "nowhere"], 2, "does not exist"),
    ("status", lambda s: _bad_settings(s, ["status"]), 2, "settings.yaml"),
    ("dashboard", lambda s: _bad_settings(s, ["dashboard", "--port", "0"]), 2, "settings.yaml"),
    ("stop", lambda s: ["stop"], 1, "no daemon is running"),
    ("ws list", lambda s: _bad_settings(s, ["ws", "list"]), 2, "settings.yaml"),
    ("ws tree", lambda s: ["ws", "tree", "nosuch"], 2, "'nosuch'"),
    ("ws show", lambda s: (_docs(s), ["ws", "show", "docs-site", "../../etc/passwd"])[1], 2, ".."),
    ("ws search", lambda s: (_docs(s), ["ws", "search", "docs-site", "(", "-e"])[1], 2, "regex"),
    ("ws health", lambda s: ["ws", "health", "nosuch"], 2, "'nosuch'"),
    ("memory namespaces", lambda s: _bad_url(s, ["memory", "namespaces"]), 1, "database"),
    ("memory enable", lambda s: ["memory", "enable", "nobody"], 2, "nobody"),
    ("memory disable", lambda s: ["memory", "disable", "404"], 2, "404"),
    (
        "memory remember",
        lambda s: (
            _docs(s),
            [
                "memory",
                "remember",
                "docs-site",
                "writer",
                "password=hunter22",
                "--layer",
                "project",
            ],
        )[1],
        2,
        "credential",
    ),
    ("memory forget", lambda s: ["memory", "forget", "404"], 2, "404"),
    ("memory extract", lambda s: ["memory", "extract", s.tmp / "none.jsonl"], 2, "none.jsonl"),
    ("memory scan", lambda s: ["memory", "scan", "--squad", "nope"], 2, "nope"),
    ("memory gc", lambda s: _bad_url(s, ["memory", "gc"]), 1, "database"),
    ("memory revive", lambda s: ["memory", "revive", "404"], 2, "404"),
    (
        "memory promote",
        lambda s: (_docs(s), ["memory", "promote", "docs-site", "writer", "nothing seen"])[1],
        2,
        "nothing seen",
    ),
    (
        "memory show",
        lambda s: (_docs(s), ["memory", "show", "docs-site", "nobody"])[1],
        2,
        "nobody",
    ),
    ("memory context", lambda s: ["memory", "context", "nosuch", "writer"], 2, "'nosuch'"),
    ("memory search", lambda s: ["memory", "search", "(", "--regex"], 2, "regex"),
    ("memory edit", lambda s: ["memory", "edit", "diary", "--file", s.tmp / "x"], 2, "diary"),
    ("mcp", lambda s: (_docs(s), ["mcp", "--squad", "nosuch"])[1], 2, "'nosuch'"),
    ("worker", lambda s: ["worker"], 2, "squad worker works for a cluster"),
    ("cluster nodes", lambda s: ["cluster", "nodes"], 2, "not part of a cluster"),
    ("decisions list", lambda s: (_docs(s), ["decisions", "list", "nosuch"])[1], 2, "'nosuch'"),
    ("decisions show", lambda s: ["decisions", "show", "404"], 2, "no decision 404"),
    (
        "decisions search",
        lambda s: (_docs(s), ["decisions", "search", "x", "--squad", "nosuch"])[1],
        2,
        "'nosuch'",
    ),
    ("runs list", lambda s: ["runs", "list", "nosuch"], 2, "'nosuch'"),
    ("runs show", lambda s: ["runs", "show", "abc"], 2, "too short"),
    ("runs status", lambda s: ["runs", "status", "nosuch"], 2, "no run 'nosuch'"),
    ("runs diff", lambda s: (_docs(s), ["runs", "diff", "feedface0000"])[1], 2, "no run"),
    ("memory history", lambda s: ["memory", "history", "nosuch", "writer"], 2, "'nosuch'"),
    (
        "memory review",
        lambda s: (_docs(s), ["memory", "review", "approve", "docs-site", "writer", "404"])[1],
        2,
        "404",
    ),
    (
        "memory revert",
        lambda s: (_docs(s), ["memory", "revert", "docs-site", "writer", "../x"])[1],
        2,
        "not a memory change id",
    ),
    ("export", lambda s: ["export", "nosuch", "-o", s.tmp / "out.tar.gz"], 2, "'nosuch'"),
    ("import", lambda s: ["import", s.tmp / "missing.tar.gz"], 2, "missing.tar.gz"),
    (
        "decisions record",
        lambda s: (
            _docs(s),
            ["decisions", "record", "docs-site", "--title", "t", "--decision", "d"],
        )[1],
        2,
        "at least one reason",
    ),
]


def _bad_settings(squad: Squad, args: list[str | Path]) -> list[str | Path]:
    (squad.tmp / "configs").mkdir(exist_ok=True)
    (squad.tmp / "configs" / "settings.yaml").write_text("daemon: {max_concurrent_runs: many}\n")
    return args


def _bad_url(squad: Squad, args: list[str | Path]) -> list[str | Path]:
    squad.setenv("SQUAD_DATABASE_URL", "postgresql+psycopg://nobody@127.0.0.1:1/none")
    return args


def test_every_command_is_covered() -> None:
    """A new command gets a case here: the list of cases is the list of commands."""
    from typer.main import get_command

    from squad.cli.app import app

    root = get_command(app)
    commands: set[str] = set()
    for name, command in root.commands.items():  # type: ignore[attr-defined]
        subcommands = getattr(command, "commands", None)
        if subcommands:
            commands |= {f"{name} {sub}" for sub in subcommands}
        elif name != "up":  # the same command as `daemon`
            commands.add(name)
    assert commands == {case[0] for case in CASES}


@pytest.mark.parametrize(
    ("name", "setup", "code", "says"),
    CASES,
    ids=[c[0] for c in CASES],
)
def test_a_failing_command_prints_a_message_and_no_traceback(
    squad: Squad, name: str, setup: Callable[[Squad], list[str | Path]], code: int, says: str
) -> None:
    outcome = squad(*setup(squad))
    assert "Traceback" not in outcome.stderr + outcome.stdout, outcome.stderr
    assert outcome.code == code, outcome.stderr
    assert outcome.stderr.startswith("error: "), outcome.stderr
    assert says in outcome.stderr


def test_chat_over_the_spend_cap_says_so_without_a_traceback(squad: Squad) -> None:
    _docs(squad)
    settings = Settings.load()
    with Store.open(settings.database_url) as store:
        store.spend.record("docs-site", agent="writer", model="openai/gpt-4o", cost_usd=9.0)
    outcome = squad("chat", "docs-site", "writer", "-m", "hello")
    assert "Traceback" not in outcome.stderr, outcome.stderr
    assert outcome.code == 1
    assert "of its $5 cap; raise limits.max_cost_usd" in outcome.stderr


def test_extract_with_a_model_whose_json_is_invalid_twice_warns_and_files_offline_facts(
    squad: Squad,
) -> None:
    with OpenAIStubServer() as server:
        server.script(answer("these are no facts"), answer('{"facts": [{"text": 1}]}'))
        squad.setenv("OPENAI_BASE_URL", server.url)
        squad.setenv("OPENAI_API_KEY", "sk-stub")
        outcome = squad("memory", "extract", _transcript(squad), "--model", "openai/stub")
        assert len(server.requests) == 2
    assert "Traceback" not in outcome.stderr, outcome.stderr
    assert outcome.code == 0
    assert "warning: the model's answer was invalid twice" in outcome.stderr
    assert "Helm charts" in outcome.stdout  # the offline extractor's fact, still found
