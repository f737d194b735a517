"""Pydantic's look-up of plugins, answered cheaply when no installed distribution has one.

The first model pydantic builds makes it look for plugins: it reads the entry points of every
installed distribution through :mod:`importlib.metadata` (5-15 ms of each command's start on
a virtual environment of 170 distributions). :func:`settle_plugin_scan` reads the same files
the way that look-up finds them, for the ``[pydantic]`` group alone (about 1 ms), and when no
distribution declares the group gives pydantic the answer its own look-up would reach: no
plugins. When a distribution declares the group, or something on the path is not read here as
:mod:`importlib.metadata` would read it (a zip archive or an egg on ``sys.path``, a finder of
distributions other than the path finder), pydantic is left to look for itself: a plugin a
user installed is loaded as before.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

__all__ = ["settle_plugin_scan"]

_GROUP = re.compile(rb"^[ \t]*\[[ \t]*pydantic[ \t]*\]", re.MULTILINE)
"""The ``[pydantic]`` section header of an ``entry_points.txt``."""
_METADATA = (".dist-info", ".egg-info")


def settle_plugin_scan() -> None:
    """Tell pydantic it has no plugins when none is installed (see the module); otherwise,
    or when pydantic has looked already or is told not to, leave it be."""
    if os.environ.get("PYDANTIC_DISABLE_PLUGINS") in ("__all__", "1", "true"):
        return  # pydantic looks for none
    try:
        from pydantic.plugin import _loader
    except ImportError:  # pragma: no cover - a pydantic without plugins
        return
    if getattr(_loader, "_plugins", False) is not None or not hasattr(_loader, "get_plugins"):
        return  # found already, or a pydantic whose look-up is not this one
    if plugins_declared(sys.path, sys.meta_path) is False:
        _loader._plugins = {}  # what its look-up finds when no entry point is in the group


def plugins_declared(path: list[str], finders: list[object]) -> bool | None:
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
                try:
                    text = Path(child.path, "entry_points.txt").read_bytes()
                except FileNotFoundError:
                    continue
                except OSError:
                    return None
                if _GROUP.search(text):
                    return True
    return False
