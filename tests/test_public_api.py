"""The public API is what each package's ``__all__`` says, no more and no less (as httpx checks
its own): every listed name resolves, and nothing public goes unlisted."""

from __future__ import annotations

import importlib
import pkgutil
from types import ModuleType

import pytest

import squad


def _modules() -> list[str]:
    names = ["squad"]
    for info in pkgutil.walk_packages(squad.__path__, "squad."):
        if ".migrations" not in info.name:  # Alembic's scripts, loaded by Alembic only
            names.append(info.name)
    return sorted(names)


def _packages() -> list[str]:
    return [name for name in _modules() if hasattr(importlib.import_module(name), "__path__")]


@pytest.mark.parametrize("name", _modules())
def test_every_name_a_module_lists_resolves_once(name: str) -> None:
    module = importlib.import_module(name)
    listed = list(getattr(module, "__all__", []))
    assert len(listed) == len(set(listed)), f"{name}.__all__ lists a name twice"
    for item in listed:
        assert getattr(module, item, None) is not None, f"{name}.__all__ lists missing {item!r}"


@pytest.mark.parametrize("name", _packages())
def test_a_package_lists_every_public_name_it_defines(name: str) -> None:
    """Classes and functions of the package found in its namespace are listed in ``__all__``;
    what it imports for its own use from elsewhere (``Path``, ``TYPE_CHECKING``) is not its API.
    """
    package = importlib.import_module(name)
    listed = set(getattr(package, "__all__", []))
    public = {
        key
        for key, value in vars(package).items()
        if not key.startswith("_")
        and not isinstance(value, ModuleType)
        and str(getattr(value, "__module__", "")).startswith(name)
    }
    assert public <= listed, f"{name} does not list {sorted(public - listed)}"
