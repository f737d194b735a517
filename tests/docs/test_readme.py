"""The README a newcomer reads, and the docs site beside it, checked against the code.

Every ``squad ...`` line in a shell block of the README must name a real command of the CLI
with options it has and the arguments it takes; the "first squad" walkthrough (the shell block
after a ``<!-- walkthrough -->`` line) must exist and go from scaffolding to a run. The README
stays short, and every relative link of the README and of ``docs/`` leads to a file that is
there. The commands are resolved against the Typer app in process; nothing is run.
"""

from __future__ import annotations

import glob
import importlib.util
import re
import shlex
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
README = REPO / "README.md"
DOCS = REPO / "docs"
MAX_README_LINES = 300


FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.MULTILINE | re.DOTALL)
WALKTHROUGH = re.compile(r"^<!-- walkthrough -->\n```(?:sh|console|bash)\n(.*?)^```", re.M | re.S)
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")


@dataclass(frozen=True)
class Line:
    """One ``squad ...`` command line of a README shell block."""

    number: int
    text: str

    @property
    def words(self) -> list[str]:
        return shlex.split(self.text, comments=True)


def _shell_lines(text: str) -> list[Line]:
    lines = []
    for block in FENCE.finditer(text):
        if block[1] not in ("sh", "bash", "console"):
            continue
        start = text.count("\n", 0, block.start(2)) + 1
        for offset, raw in enumerate(block[2].splitlines()):
            command = raw.removeprefix("$ ").strip()
            if command.startswith("squad "):
                lines.append(Line(start + offset, command))
    return lines


README_LINES = _shell_lines(README.read_text(encoding="utf-8"))


def _cli() -> Any:
    import typer.main

    from squad.cli.app import app

    return typer.main.get_command(app)


def resolve(words: list[str]) -> str:
    """The command path ``words`` names; raises AssertionError saying what does not exist."""
    assert words[0] == "squad", words
    command = _cli()
    path = ["squad"]
    rest = words[1:]
    while getattr(command, "commands", None) and rest and not rest[0].startswith("-"):
        name = rest.pop(0)
        assert name in command.commands, (
            f"{' '.join(path)} has no command {name!r}; it has {sorted(command.commands)}"
        )
        command = command.commands[name]
        path.append(name)
    assert not getattr(command, "commands", None), f"{' '.join(path)} needs a subcommand"
    options: dict[str, Any] = {}
    for param in command.params:
        if param.param_type_name == "option":
            for name in (*param.opts, *param.secondary_opts):
                options[name] = param
    options.update({"--help": None, "-h": None})
    arguments = [p for p in command.params if p.param_type_name == "argument"]
    positional: list[str] = []
    only_positional = False
    while rest:
        word = rest.pop(0)
        if only_positional or not word.startswith("-") or word == "-":
            positional.append(word)
            continue
        if word == "--":
            only_positional = True
            continue
        name, equals, _ = word.partition("=")
        assert name in options, f"{' '.join(path)} has no option {name!r}; it has {sorted(options)}"
        param = options[name]
        takes_value = param is not None and not getattr(param, "is_flag", False)
        if takes_value and not equals:
            assert rest, f"{' '.join(path)} {name} needs a value"
            rest.pop(0)
    variadic = any(a.nargs == -1 for a in arguments)
    required = sum(1 for a in arguments if a.required)
    assert len(positional) >= required, (
        f"{' '.join(path)} needs {required} argument(s), got {positional}"
    )
    assert variadic or len(positional) <= len(arguments), (
        f"{' '.join(path)} takes {len(arguments)} argument(s), got {positional}"
    )
    return " ".join(path)


@pytest.mark.parametrize(
    "line", [pytest.param(line, id=f"README.md:{line.number}") for line in README_LINES]
)
def test_readme_command_names_a_real_command_with_its_options(line: Line) -> None:
    resolve(line.words)


def test_the_resolver_refuses_commands_and_options_that_do_not_exist() -> None:
    """The check above can fail: an unknown command, option or missing argument is caught."""
    assert resolve(["squad", "ws", "tree", "docs-site", "--depth", "2"]) == "squad ws tree"
    for words, message in (
        (["squad", "runz", "list"], "has no command 'runz'"),
        (["squad", "run", "x.yaml", "--modle", "m"], "has no option '--modle'"),
        (["squad", "approve", "RUN"], "needs 2 argument(s)"),
        (["squad", "memory"], "needs a subcommand"),
        (["squad", "logs", "a", "b"], "takes 1 argument(s)"),
    ):
        with pytest.raises(AssertionError, match=re.escape(message)):
            resolve(words)


def test_the_walkthrough_goes_from_a_template_to_a_run() -> None:
    blocks = WALKTHROUGH.findall(README.read_text(encoding="utf-8"))
    assert blocks, "README.md has no shell block after a <!-- walkthrough --> line"
    commands = [line.strip() for block in blocks for line in block.splitlines()]
    steps = [shlex.split(c, comments=True)[:2] for c in commands if c]
    for step in (["squad", "init"], ["cd", "my-squads"], ["squad", "validate"], ["squad", "run"]):
        assert step in steps, f"the walkthrough lacks {' '.join(step)}: {commands}"
    assert len(commands) <= 15, "the first squad should take about 15 lines"


def test_the_walkthrough_runs_as_written_on_the_offline_model(tmp_path: Path) -> None:
    """The README's first squad, command by command, in an empty folder with a fresh squad
    home: every step exits 0 and the run leaves its results in the workspace."""
    from tests.support.cli import run_in_process

    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "SQUAD_HOME": str(tmp_path / "home")}
    blocks = WALKTHROUGH.findall(README.read_text(encoding="utf-8"))
    cwd = tmp_path / "start"
    cwd.mkdir()
    ran = []
    for raw in (line for block in blocks for line in block.splitlines()):
        words = shlex.split(raw, comments=True)
        if not words:
            continue
        if words[0] == "cd":
            cwd = cwd / words[1]
            continue
        assert words[0] == "squad", f"the walkthrough has a step this test cannot run: {raw!r}"
        args = [m for w in words[1:] for m in (sorted(glob.glob(w, root_dir=cwd)) or [w])]
        result = run_in_process(args, env=env, cwd=cwd)
        assert result.returncode == 0, f"{raw!r} exited {result.returncode}:\n{result.stderr}"
        ran.append(words[1])
    assert {"init", "validate", "run"} <= set(ran), ran
    outputs = sorted((cwd / "workspaces").glob("*/tasks/*/output.md"))
    assert outputs, "the walkthrough's run left no task output in the workspace"
    assert all(o.read_text(encoding="utf-8").strip() for o in outputs)


def test_readme_is_short_enough_to_finish() -> None:
    lines = README.read_text(encoding="utf-8").count("\n")
    assert lines <= MAX_README_LINES, f"README.md has {lines} lines; move detail to docs/"


def _markdown_files() -> list[Path]:
    return [README, *sorted(p for p in DOCS.rglob("*.md") if "hooks" not in p.parts)]


def _relative_links(path: Path) -> list[str]:
    text = FENCE.sub("", path.read_text(encoding="utf-8"))
    text = re.sub(r"`[^`\n]*`", "", text)
    targets = []
    for match in LINK.finditer(text):
        target = match[1]
        if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
            continue
        targets.append(target.split("#", 1)[0])
    return targets


def test_every_relative_link_of_the_readme_and_docs_leads_to_a_file() -> None:
    broken = [
        f"{path.relative_to(REPO)}: {target}"
        for path in _markdown_files()
        for target in _relative_links(path)
        if not (path.parent / target).exists()
    ]
    assert not broken, broken
    assert len(_relative_links(README)) >= 10  # the README's links are found at all


def test_the_link_check_finds_a_broken_link(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("[ok](page.md) [gone](missing.md#x) `[code](no.md)` [web](https://x.y)\n")
    assert _relative_links(page) == ["page.md", "missing.md"]


def test_the_memory_page_states_the_figures_the_assembly_test_pins() -> None:
    """tests/memory/test_assembly.py keeps these numbers true; this keeps them stated."""
    text = (DOCS / "memory.md").read_text(encoding="utf-8")
    assert "41 tokens with cl100k" in text
    assert re.search(r"that fits both headers with their notices is 105\*\*", text)


# -- the generated reference ----------------------------------------------------------------


def _reference() -> ModuleType:
    spec = importlib.util.spec_from_file_location("docs_reference", DOCS / "hooks" / "reference.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_cli_reference_has_a_section_for_every_command_and_option() -> None:
    reference = _reference()
    text = reference.cli_markdown()
    root = _cli()
    for path in reference.cli_commands():
        assert f"`{' '.join(path)}` {{#{'-'.join(path)}}}" in text, path
    for param in root.commands["run"].params:
        if param.param_type_name == "option":
            assert f"`{param.opts[0]}`" in text


def test_the_http_reference_lists_every_operation_of_the_api_routers() -> None:
    from squad.web import actions, api, files_api, stream

    text = _reference().http_api_markdown()
    for router in (api.router, files_api.router, actions.router, stream.router):
        for route in router.routes:
            for method in getattr(route, "methods", ()):
                if method != "HEAD":
                    assert f"### {method} `{route.path}`" in text, (method, route.path)


def test_the_yaml_and_settings_references_list_every_key() -> None:
    from squad.settings import SettingsFile
    from squad.spec.models import AgentSpec, ModelSpec, SquadSpec, TaskSpec

    reference = _reference()
    yaml_text = reference.squad_yaml_markdown()
    for model in (SquadSpec, AgentSpec, TaskSpec, ModelSpec):
        for key in model.model_fields:
            assert f"| `{key}` |" in yaml_text, (model.__name__, key)
    settings_text = reference.settings_markdown()
    for key in SettingsFile.model_fields:
        assert f"| `{key}` |" in settings_text, key


def test_an_unknown_reference_marker_fails_the_build() -> None:
    reference = _reference()
    with pytest.raises(ValueError, match="unknown reference 'clii'"):
        reference.on_page_markdown("<!-- reference: clii -->\n")
    assert reference.on_page_markdown("no marker\n") == "no marker\n"
