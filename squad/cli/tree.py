"""The click command tree of a Typer app, each command built the first time it is asked for.

Typer builds the whole tree before it parses a word: every command's signature read and its
type hints evaluated, about 60 commands and 30 ms of every ``squad`` invocation. A command
needs only its own path (``squad memory context``: the root, the ``memory`` group, the
command), so :func:`lazy_tree` builds each group with its children as names, each made by
typer's own builders when the group is asked for it: by name when a command line is parsed,
all of them when a group's ``--help`` lists its commands. ``finish`` is applied to each
command as it is made. The order of a group's commands is typer's (commands, then groups,
as registered).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator, MutableMapping
from functools import partial
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import typer

__all__ = ["lazy_tree"]

Finish = Callable[[Any], Any]


class _Children(MutableMapping[str, Any]):
    """A group's commands by name, each built on first access (click's ``Group.commands``)."""

    def __init__(self, makers: dict[str, Callable[[], Any]]) -> None:
        self._makers = makers
        self._made: dict[str, Any] = {}

    def __getitem__(self, name: str) -> Any:
        if name not in self._made:
            self._made[name] = self._makers[name]()
        return self._made[name]

    def __setitem__(self, name: str, command: Any) -> None:
        self._makers.setdefault(name, lambda: command)
        self._made[name] = command

    def __delitem__(self, name: str) -> None:
        del self._makers[name]
        self._made.pop(name, None)

    def __iter__(self) -> Iterator[str]:
        return iter(self._makers)

    def __len__(self) -> int:
        return len(self._makers)


def lazy_tree(app: typer.Typer, finish: Finish) -> Any:
    """The click command of ``app``: a group's subcommands built on demand. An app typer
    would not make a plain group of (one command and no callback: that command is the whole
    program; or shell completion's options added) is built by typer whole, then finished."""
    from typer.main import get_command, get_group

    grouped = app.registered_callback or app.info.callback or app.registered_groups
    if app._add_completion or not (grouped or len(app.registered_commands) > 1):
        return _finished(get_command(app), finish)
    settings = {
        "pretty_exceptions_short": app.pretty_exceptions_short,
        "rich_markup_mode": app.rich_markup_mode,
    }
    root = get_group(_hollow(app))
    root.commands = _children(app, settings, app.suggest_commands, finish)
    return finish(root)


def _finished(command: Any, finish: Finish) -> Any:
    for sub in getattr(command, "commands", {}).values():
        _finished(sub, finish)
    return finish(command)


def _hollow(app: typer.Typer) -> typer.Typer:
    """``app`` without its commands and groups: typer builds only its own callback."""
    hollow = copy.copy(app)
    hollow.registered_commands = []
    hollow.registered_groups = []
    return hollow


def _children(app: typer.Typer, settings: dict[str, Any], suggest: bool, finish: Finish) -> Any:
    from typer.main import get_command_name, solve_typer_info_defaults

    makers: dict[str, Callable[[], Any]] = {}
    for info in app.registered_commands:
        assert info.callback is not None
        name = info.name or get_command_name(info.callback.__name__)
        makers[name] = partial(_command, info, settings, finish)
    for group_info in app.registered_groups:
        group_name = solve_typer_info_defaults(group_info).name
        if not group_name:
            raise ValueError("every group of squad's command line has a name")
        makers[group_name] = partial(_group, group_info, settings, suggest, finish)
    return _Children(makers)


def _command(info: Any, settings: dict[str, Any], finish: Finish) -> Any:
    from typer.main import get_command_from_info

    return finish(get_command_from_info(info, **settings))


def _group(info: Any, settings: dict[str, Any], suggest: bool, finish: Finish) -> Any:
    from typer.main import get_group_from_info

    sub = info.typer_instance
    hollow = copy.copy(info)
    hollow.typer_instance = _hollow(sub)
    group = get_group_from_info(hollow, suggest_commands=suggest, **settings)
    group.commands = _children(sub, settings, suggest, finish)
    return finish(group)
