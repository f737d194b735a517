"""How ``--help`` reads: click's plain layout, words for what a value is, paragraphs rewrapped.

Typer's own help names each value by its Python type (``<str>``, ``<bool>``, ``{target}``) and,
in its rich layout, keeps a docstring's line breaks inside the paragraphs after the first, so a
sentence breaks where its source line did. :func:`command` builds the click command of the
Typer app, and fixes each command as it is made: a value gets a word as a person reads it
(``TEXT``, ``PATH``, ``N``, an argument its name in capitals; a flag none), every command is
laid out by click's plain formatter, which rewraps each paragraph to the terminal (one
starting with ``\\b`` keeps its lines), and a group lists each command with its first
sentence, whole. A command added anywhere under the app gets the same, with nothing to
remember. The same classes coerce a value without pydantic where pydantic would hand it back
unchanged (:mod:`squad.cli.params`).
"""

from __future__ import annotations

import inspect
import re
from typing import TYPE_CHECKING, Any

from typer.core import TyperArgument, TyperCommand, TyperGroup, TyperOption

from squad.cli.params import runtime_param

if TYPE_CHECKING:
    import typer

__all__ = ["command", "first_sentence", "value_word", "walk"]


def value_word(param: TyperArgument | TyperOption) -> str | None:
    """What ``--help`` shows for ``param``'s value: None for a flag, else a word in capitals."""
    if isinstance(param, TyperOption) and (param.is_flag or param.count):
        return None
    if isinstance(param, TyperArgument):
        return (param.name or "value").upper()
    desc = param.type_descriptor
    if desc.is_choice:
        return "[" + "|".join(str(getattr(c, "value", c)) for c in desc.choices or ()) + "]"
    if desc.is_path or desc.is_file:
        return "PATH"
    kind = get_args_free(desc.annotation)
    if kind is bool:
        return "BOOLEAN"
    if kind is int:
        return "N"
    if kind is float:
        return "NUMBER"
    if desc.is_datetime:
        return "DATETIME"
    return "TEXT"


def get_args_free(annotation: Any) -> Any:
    """``int`` of ``list[int]``: the type of one value."""
    from typing import get_args, get_origin

    if get_origin(annotation) in (list, tuple) and get_args(annotation):
        return get_args(annotation)[0]
    return annotation


class _Argument(TyperArgument):
    """An argument shown by its name alone: ``TARGET``, ``[RUN_ID]``, ``FILES...``."""

    def display_type_rich(self, ctx: Any) -> str | None:
        return None

    def get_runtime_param(self) -> Any:
        return runtime_param(self)

    def _rich_display_name(self) -> str:
        return self.display_name_raw + ("..." if self.nargs != 1 else "")

    def _usage_display_name(self) -> str:
        name = self.display_name_raw if self.required else f"[{self.display_name_raw}]"
        return name + ("..." if self.nargs != 1 else "")


class _Option(TyperOption):
    """An option shown with the word for its value; a flag with none."""

    def get_runtime_param(self) -> Any:
        return runtime_param(self)

    def display_type_rich(self, ctx: Any) -> str | None:
        if self.is_flag or self.count:
            return None
        word = self.metavar or "TEXT"
        return word + ("..." if self.nargs != 1 else "")


class _Command(TyperCommand):
    """A command whose ``--help`` option coerces its value as :class:`_Option` does."""

    def get_help_option(self, ctx: Any) -> Any:
        return _as_option(super().get_help_option(ctx))


class _Group(TyperGroup):
    """A group whose ``--help`` option coerces its value as :class:`_Option` does."""

    def get_help_option(self, ctx: Any) -> Any:
        return _as_option(super().get_help_option(ctx))


def _as_option(option: Any) -> Any:
    if type(option) is TyperOption:
        option.__class__ = _Option
    return option


def first_sentence(text: str) -> str:
    """The first sentence of ``text``'s first paragraph, on one line (a group's listing)."""
    paragraph = inspect.cleandoc(text).split("\n\n")[0].partition("\f")[0]
    line = " ".join(paragraph.replace("\b", "").split())
    match = re.search(r"(?<=[.;:!?])\s+(?=[A-Z`])", line)
    return line[: match.start()] if match else line


def walk(root: Any) -> list[tuple[str, Any]]:
    """``root`` and every command under it, each with its path (``squad memory show``)."""
    found: list[tuple[str, Any]] = []
    stack = [(root.name or "squad", root)]
    while stack:
        path, cmd = stack.pop()
        found.append((path, cmd))
        for name, sub in (getattr(cmd, "commands", None) or {}).items():
            stack.append((f"{path} {name}", sub))
    return sorted(found, key=lambda item: item[0])


_OURS: dict[type, type] = {TyperCommand: _Command, TyperGroup: _Group}


def command(app: typer.Typer, name: str = "squad") -> Any:
    """The click command of ``app``, its help in plain words (see the module docstring); each
    command built when first asked for (:mod:`squad.cli.tree`)."""
    from squad.cli.tree import lazy_tree

    root = lazy_tree(app, _in_plain_words)
    root.name = name
    return root


def _in_plain_words(cmd: Any) -> Any:
    """``cmd`` (one command or group, not its children) laid out and coerced as above."""
    if type(cmd) in _OURS:
        cmd.__class__ = _OURS[type(cmd)]
    if hasattr(cmd, "rich_markup_mode"):
        cmd.rich_markup_mode = None  # click's formatter: paragraphs rewrapped, no boxes
    if cmd.help and not cmd.short_help:
        cmd.short_help = first_sentence(cmd.help)
    for param in cmd.params:
        if isinstance(param, TyperArgument):
            param.metavar = value_word(param)
            param.__class__ = _Argument
        elif isinstance(param, TyperOption):
            param.metavar = value_word(param)
            param.__class__ = _Option
    return cmd
