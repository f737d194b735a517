"""Pydantic's look-up of plugins, answered cheaply when no installed distribution has one.

The first model pydantic builds makes it look for plugins: its ``pydantic.plugin._loader``
imports :mod:`importlib.metadata` (and with it ``email``, ``zipfile``, ``csv``: about 12 ms)
and reads the entry points of every installed distribution (5-15 ms more on a virtual
environment of 170 distributions), at the start of every command that has a parameter
(typer coerces them with pydantic) or loads the settings. Here the same metadata files are
read the way that look-up finds them, for the ``[pydantic]`` group alone (about 1 ms), and
when no distribution declares the group pydantic is given the answer its own look-up would
reach: no plugins. When a distribution declares the group, or something on the path is not
read here as :mod:`importlib.metadata` would read it (a zip archive or an egg on
``sys.path``, a finder of distributions other than the path finder), pydantic's own look-up
runs: a plugin a user installed is loaded as before.

:func:`answer_plugin_lookup` puts :class:`PluginLookup` where pydantic imports its loader
from (``sys.modules``) before pydantic first asks; it reads nothing until pydantic does, so a
command that builds no model (``squad --help``) pays nothing. When pydantic's loader is
imported already it is told the answer instead (:func:`settle_plugin_scan`).
"""

from __future__ import annotations

import os
import re
import sys
import types
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

__all__ = ["PluginLookup", "answer_plugin_lookup", "plugins_declared", "settle_plugin_scan"]

LOADER = "pydantic.plugin._loader"
"""The module pydantic asks for its plugins (``get_plugins``)."""
_GROUP = re.compile(rb"^[ \t]*\[[ \t]*pydantic[ \t]*\]", re.MULTILINE)
"""The ``[pydantic]`` section header of an ``entry_points.txt``."""
_METADATA = (".dist-info", ".egg-info")
_DISABLED = ("__all__", "1", "true")
"""``PYDANTIC_DISABLE_PLUGINS`` values with which pydantic looks for no plugin at all."""


class PluginLookup(types.ModuleType):
    """``pydantic.plugin._loader`` as pydantic uses it (``get_plugins``), answering "no
    plugins" when :func:`plugins_declared` says so and handing over to pydantic's own loader
    otherwise."""

    def __init__(self) -> None:
        super().__init__(
            LOADER, "squad's stand-in for pydantic's plugin loader (see squad.pydantic_plugins)."
        )
        self.PYDANTIC_ENTRY_POINT_GROUP = "pydantic"
        self._plugins: dict[str, Any] | None = None
        self._loading_plugins = False

    def get_plugins(self) -> Iterable[Any]:
        """What pydantic's ``get_plugins`` returns: none when none is declared, else what
        pydantic's loader finds (that loader then takes this module's place)."""
        if os.environ.get("PYDANTIC_DISABLE_PLUGINS") in _DISABLED:
            return ()
        if self._plugins is None:
            if plugins_declared(sys.path, sys.meta_path) is not False:
                found: Iterable[Any] = _pydantic_loader().get_plugins()
                return found
            self._plugins = {}
        return self._plugins.values()

    def __getattr__(self, name: str) -> Any:
        """Any other name pydantic asks its loader for (a later pydantic's): pydantic's own
        loader answers, imported in this module's place."""
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(_pydantic_loader(), name)


def answer_plugin_lookup() -> None:
    """Put :class:`PluginLookup` in pydantic's loader's place, before pydantic imports it;
    when pydantic has imported it already, :func:`settle_plugin_scan`."""
    if LOADER in sys.modules:
        settle_plugin_scan()
    else:
        sys.modules[LOADER] = PluginLookup()


def settle_plugin_scan() -> None:
    """Tell pydantic's imported loader it has no plugins when none is declared; otherwise,
    or when it has looked already or is told not to, leave it be."""
    if os.environ.get("PYDANTIC_DISABLE_PLUGINS") in _DISABLED:
        return  # pydantic looks for none
    loader: Any = sys.modules.get(LOADER)
    if loader is None:
        try:
            from pydantic.plugin import _loader
        except ImportError:  # pragma: no cover - a pydantic without plugins
            return
        loader = _loader
    if isinstance(loader, PluginLookup):
        return  # it answers when asked
    if getattr(loader, "_plugins", False) is not None or not hasattr(loader, "get_plugins"):
        return  # found already, or a pydantic whose look-up is not this one
    if plugins_declared(sys.path, sys.meta_path) is False:
        loader._plugins = {}  # what its look-up finds when no entry point is in the group


def _pydantic_loader() -> Any:
    """pydantic's own plugin loader, imported in the stand-in's place."""
    import importlib.machinery
    import importlib.util

    import pydantic.plugin

    spec = importlib.machinery.PathFinder.find_spec(LOADER, list(pydantic.plugin.__path__))
    if spec is None or spec.loader is None:  # pragma: no cover - pydantic ships it
        raise ImportError(f"cannot find {LOADER}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[LOADER] = module
    spec.loader.exec_module(module)
    return module


def plugins_declared(path: Sequence[str], finders: Sequence[object]) -> bool | None:
    """Whether a distribution on ``path`` declares pydantic plugins; None when that cannot be
    told without :mod:`importlib.metadata` (the module docstring says when)."""
    import importlib.machinery

    for finder in finders:
        if hasattr(finder, "find_distributions") and finder is not importlib.machinery.PathFinder:
            return None
    for entry in path:
        root = entry or "."
        try:
            children = os.scandir(root)
        except (FileNotFoundError, NotADirectoryError):
            if Path(root).exists():
                return None  # a zip archive: importlib.metadata reads inside it
            continue
        except OSError:
            return None
        with children:
            for child in children:
                name = child.name.lower()
                if name.endswith(".egg"):
                    return None
                if not name.endswith(_METADATA) or not child.is_dir():
                    continue
                try:  # os.open: a Path per distribution costs as much as reading the file
                    fd = os.open(child.path + os.sep + "entry_points.txt", os.O_RDONLY)
                except FileNotFoundError:
                    continue
                except OSError:
                    return None
                try:
                    text = _read_all(fd)
                except OSError:
                    return None
                finally:
                    os.close(fd)
                if _GROUP.search(text):
                    return True
    return False


def _read_all(fd: int) -> bytes:
    chunks = []
    while chunk := os.read(fd, 65536):
        chunks.append(chunk)
    return b"".join(chunks)
