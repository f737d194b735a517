"""Names of a package loaded on first access, each from its own module (PEP 562).

A package whose ``__init__`` re-exports many modules' names imports all of them with it;
with :func:`lazy_names` as its ``__getattr__`` a caller that needs one name imports that
name's module alone (``squad status`` builds five views, not sixty).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_names"]


def lazy_names(
    package: str, homes: Mapping[str, str], namespace: dict[str, Any]
) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``package``: ``homes`` maps each name to the submodule
    it lives in; a name found is kept in ``namespace`` (the package's globals), so it is
    looked up once."""

    def attribute(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{home}"), name)
        namespace[name] = value
        return value

    return attribute
