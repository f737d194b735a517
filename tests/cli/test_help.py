"""Every command's ``--help`` names values in words and keeps sentences whole: rendered in
process for each command of the app, as ``squad ... --help`` prints it."""

from __future__ import annotations

import inspect
import re
from pathlib import Path
from typing import Any

import pytest

from squad.cli import app
from squad.cli.help import command, first_sentence, walk
from tests.cli.test_cli import Cli

WIDE = 1000
"""A width no paragraph of squad's help reaches: rendered at it, a paragraph is one line."""


def _rendered(width: int = WIDE) -> list[tuple[str, Any, str]]:
    """Each command's path, click command and help text as ``--help`` prints it."""
    root = command(app)
    contexts: dict[str, Any] = {}
    found = []
    for path, cmd in walk(root):
        parent = contexts.get(path.rpartition(" ")[0])
        ctx = cmd.context_class(
            cmd,
            info_name=path.rpartition(" ")[2],
            parent=parent,
            terminal_width=width,
            max_content_width=width,
        )
        contexts[path] = ctx
        found.append((path, cmd, cmd.get_help(ctx)))
    return found


def _one_line(text: str) -> str:
    return " ".join(text.split())


def test_no_help_names_a_value_by_its_python_type() -> None:
    rendered = _rendered(80)
    assert len(rendered) > 40  # every command and group, not just the top
    for path, _, text in rendered:
        assert text.startswith(f"Usage: {path} "), text  # rendered here, not printed elsewhere
        found = re.findall(r"<(?:bool|str|int|float|path|list\[[^\]]*\])>|\{[a-z_]+\}", text)
        assert not found, f"`{path} --help` shows {found}:\n{text}"


def test_flags_show_no_value_and_options_a_word_in_capitals() -> None:
    by_path = {path: text for path, _, text in _rendered(80)}
    run = by_path["squad run"]
    assert "Usage: squad run [OPTIONS] TARGET" in run
    assert re.search(r"^  --model TEXT ", run, re.M)
    assert re.search(r"^  --auto-approve +Approve", run, re.M)
    assert re.search(r"^  -o, --output PATH ", by_path["squad export"], re.M)
    assert "Usage: squad validate [OPTIONS] FILES..." in by_path["squad validate"]


def test_every_help_paragraph_is_one_line_when_the_terminal_is_wide_enough() -> None:
    """A line break in a docstring or help string never reaches the screen: each paragraph,
    option help and command summary is rewrapped, so at a width it fits in, it is one line."""
    for path, cmd, text in _rendered():
        lines = set(text.splitlines())
        for paragraph in inspect.cleandoc(cmd.help or "").partition("\f")[0].split("\n\n"):
            if paragraph.strip() and not paragraph.startswith("\b"):
                assert f"  {_one_line(paragraph)}" in lines, (path, paragraph, text)
        for param in cmd.params:
            if param.help and not getattr(param, "hidden", False):
                wanted = _one_line(param.help)
                assert any(line.strip().endswith(wanted) or wanted in line for line in lines), (
                    path,
                    param.name,
                    text,
                )
        for name, sub in (getattr(cmd, "commands", None) or {}).items():
            if sub.help and not sub.hidden:
                summary = first_sentence(sub.help)
                assert not summary.endswith("..."), (path, name, summary)
                assert any(line.split() == [name, *summary.split()] for line in lines), (
                    path,
                    name,
                    text,
                )


def test_first_sentence_keeps_a_group_listing_whole_and_short() -> None:
    assert first_sentence("Write a squad to one file.\nRefused when\nit runs.") == (
        "Write a squad to one file."
    )
    assert first_sentence("A summary, then what needs a person (failed\nruns).\n\nMore.") == (
        "A summary, then what needs a person (failed runs)."
    )
    assert first_sentence("Same as `squad daemon`.") == "Same as `squad daemon`."


def test_the_console_script_prints_the_same_help(tmp_path: Path) -> None:
    cli = Cli(tmp_path, in_process=True)
    shown = cli("run", "--help")
    assert shown.returncode == 0
    assert "Usage: squad run [OPTIONS] TARGET" in shown.stdout
    assert "<bool>" not in shown.stdout and "<str>" not in shown.stdout
    top = cli("--help").stdout
    assert "<bool>" not in top and re.search(r"^  status +A summary, then", top, re.M)


def test_the_tree_has_typers_commands_in_typers_order_with_the_same_parameters() -> None:
    from typer.main import get_command

    def shape(root: Any) -> list[tuple[str, list[str], list[str | None]]]:
        return [
            (path, list(getattr(cmd, "commands", {})), [p.name for p in cmd.params])
            for path, cmd in walk(root)
        ]

    ours, typers = command(app), get_command(app)
    typers.name = "squad"
    assert shape(ours) == shape(typers)
    assert len(shape(ours)) > 50


def test_a_command_line_builds_only_the_commands_on_its_path() -> None:
    root = command(app)
    with pytest.raises(SystemExit) as done:
        root.main(["memory", "context", "-h"], prog_name="squad")
    assert done.value.code == 0
    built = {
        path
        for path, cmd in [("squad", root), ("squad memory", root.commands["memory"])]
        for path in [f"{path} {name}" for name in cmd.commands._made]
    }
    assert built == {"squad memory", "squad memory context"}
