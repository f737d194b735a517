"""The public API is what each package's ``__all__`` says, no more and no less (as httpx checks
its own): every listed name resolves, and nothing public goes unlisted."""

from __future__ import annotations

import importlib
import pkgutil
from types import ModuleType

import squad


def _modules() -> list[str]:
    names = ["squad"]
    for info in pkgutil.walk_packages(squad.__path__, "squad."):
        if ".migrations" not in info.name:  # Alembic's scripts, loaded by Alembic only
            names.append(info.name)
    return sorted(names)


def _packages() -> list[str]:
    return [name for name in _modules() if hasattr(importlib.import_module(name), "__path__")]


def test_every_name_a_module_lists_resolves_once() -> None:
    offenders = []
    for name in _modules():
        module = importlib.import_module(name)
        listed = list(getattr(module, "__all__", []))
        offenders += [f"{name}.__all__ lists {item!r} twice" for item in _twice(listed)]
        offenders += [
            f"{name}.__all__ lists missing {item!r}"
            for item in dict.fromkeys(listed)
            if getattr(module, item, None) is None
        ]
    assert offenders == [], "\n".join(offenders)


def _twice(names: list[str]) -> list[str]:
    return sorted({name for name in names if names.count(name) > 1})


def test_every_package_lists_every_public_name_it_defines() -> None:
    """Classes and functions of a package found in its namespace are listed in ``__all__``;
    what it imports for its own use from elsewhere (``Path``, ``TYPE_CHECKING``) is not its API.
    """
    offenders = []
    for name in _packages():
        package = importlib.import_module(name)
        listed = set(getattr(package, "__all__", []))
        public = {
            key
            for key, value in vars(package).items()
            if not key.startswith("_")
            and not isinstance(value, ModuleType)
            and str(getattr(value, "__module__", "")).startswith(name)
        }
        if unlisted := public - listed:
            offenders.append(f"{name} does not list {sorted(unlisted)}")
    assert offenders == [], "\n".join(offenders)
