"""A library package's ``__init__`` run at its first use, when only a submodule is imported.

Importing ``a.b.c`` runs ``a/__init__.py`` and ``a/b/__init__.py`` first, and some packages'
``__init__`` imports everything they have. LangGraph's graph imports two such packages for one
small submodule each: ``langgraph.runtime`` needs ``langgraph_sdk.auth.types`` (a dataclass)
and ``langgraph_sdk/__init__.py`` imports the SDK's HTTP client with it (httpx, rich, click,
websockets: about 110 ms); ``langsmith._internal._v2_migration_utils`` needs
``langsmith.types.run_select_field`` (one ``Literal``) and ``langsmith/types/__init__.py``
imports 150 generated OpenAPI models (about 190 ms). A run uses neither ``__init__``.

:func:`defer_package_inits` puts :class:`DeferringFinder` first on :data:`sys.meta_path`. When
one of :data:`REVIEWED` is imported, the import system gets the package's own spec, module and
attributes (``__path__``, ``__spec__``, ``__file__``, its loader) as from the path finder, but
the ``__init__`` is not run: the module is a :class:`DeferredPackage`, whose submodules import
as usual (the import system reads only the attributes above). Any other attribute read of
it (a name the ``__init__`` defines, ``__dict__``, ``__all__``, ``dir()``, a submodule the
``__init__`` may rebind) runs the real ``__init__`` into it first, under a lock, and the
module becomes a plain module: what a caller reads is what the package defines.

What is deferred is each package's ``__init__`` as reviewed here: a package is deferred only
when its ``__init__.py`` has the digest in :data:`REVIEWED` (re-exports, no side effects), is
loaded by the standard source loader, and is a package on the path; otherwise it imports as
usual (a test says when an installed version no longer matches, so the review is redone).
The finder is installed by the commands that run a squad, not at import.
"""

from __future__ import annotations

import importlib.machinery
import sys
import threading
import types
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from contextlib import AbstractContextManager

__all__ = ["REVIEWED", "DeferredPackage", "DeferringFinder", "defer_package_inits"]

REVIEWED: Mapping[str, str] = {
    "langsmith.types": "5020fa3b09dd326ceb0f082daa5d8f8b",  # langsmith 0.15.1
    "langgraph_sdk": "c1cac5a865157c5c61fe2c80a042728e",  # langgraph-sdk 0.4.14
}
"""Package -> BLAKE2b (16 bytes) of the ``__init__.py`` whose deferral was reviewed: it only
re-exports its submodules' names and does nothing else a caller could miss."""

_PLAIN = frozenset(
    {"__name__", "__spec__", "__path__", "__loader__", "__package__", "__file__", "__cached__"}
)
"""What the import system sets before a package's ``__init__`` runs (and reads to import its
submodules): read from a deferred package without running the ``__init__``."""
_bootstrap: Any = sys.modules["importlib._bootstrap"]
_LOCK = threading.RLock()
"""Held while a deferred ``__init__`` runs where the import system has no module locks."""


class _NoDeadlockCheck(Exception):
    """Never raised: what :data:`_DEADLOCK` is where the import system has no such check."""


_DEADLOCK: type[BaseException] = getattr(_bootstrap, "_DeadlockError", _NoDeadlockCheck)
"""What the import system's module lock raises when taking it would close a cycle."""
_RUNNING: set[str] = set()
"""Deferred packages whose ``__init__`` is running (its own reads of the package are plain)."""


class DeferredPackage(types.ModuleType):
    """A package imported without running its ``__init__``; reading any attribute but
    :data:`_PLAIN` runs it, and the module is a plain module from then on."""

    def __getattribute__(self, name: str) -> Any:
        if name not in _PLAIN and name != "__class__":
            _run_init(self)
        return types.ModuleType.__getattribute__(self, name)


def _run_init(module: types.ModuleType) -> None:
    """Run ``module``'s own ``__init__`` into it, once, holding the import system's lock of
    its name (as an import does: another thread importing or reading it waits, and a cycle of
    threads is told apart as the import system tells it, the read then seeing the package as
    far as it has run); a failure leaves it deferred and propagates, as the import would."""
    name = types.ModuleType.__getattribute__(module, "__name__")
    lock = _module_lock(name)
    try:
        lock.__enter__()
    except _DEADLOCK:
        return
    try:
        if type(module) is not DeferredPackage or name in _RUNNING:
            return
        spec = types.ModuleType.__getattribute__(module, "__spec__")
        _RUNNING.add(name)
        spec._initializing = True
        try:
            spec.loader.exec_module(module)
            module.__class__ = types.ModuleType  # type: ignore[assignment] # plain from now
        finally:
            spec._initializing = False
            _RUNNING.discard(name)
    finally:
        lock.__exit__(None, None, None)


def _module_lock(name: str) -> AbstractContextManager[Any]:
    """The import system's lock of the module ``name`` (its own re-entrant one, with its
    deadlock check); a lock of this module's where that is not there."""
    manager = getattr(_bootstrap, "_ModuleLockManager", None)
    return _LOCK if manager is None else manager(name)


class _DeferringLoader:
    """The loader the import system is given for a deferred package: the module it makes
    carries the package's own loader, and is left deferred."""

    def __init__(self, loader: Any) -> None:
        self.loader = loader

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType | None:
        created: types.ModuleType | None = self.loader.create_module(spec)
        return created

    def exec_module(self, module: types.ModuleType) -> None:
        spec = module.__spec__
        assert spec is not None
        spec.loader = self.loader
        module.__loader__ = self.loader
        module.__class__ = DeferredPackage


class DeferringFinder:
    """First on :data:`sys.meta_path`: the spec of each of ``packages`` is the one the
    finders after it give, with the package's ``__init__`` deferred when it is the reviewed
    one; it leaves :data:`sys.meta_path` when each has been imported."""

    def __init__(self, packages: Mapping[str, str]) -> None:
        self._waiting = dict(packages)

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: types.ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        digest = self._waiting.pop(fullname, None)
        if digest is None:
            return None
        if not self._waiting:
            self.remove()
        spec = _next_spec(self, fullname, path, target)
        if spec is not None and _deferrable(spec, digest):
            spec.loader = _DeferringLoader(spec.loader)  # type: ignore[assignment]
        return spec

    def remove(self) -> None:
        """Leave :data:`sys.meta_path` (imports after it are as usual)."""
        if self in sys.meta_path:
            sys.meta_path.remove(self)


def _next_spec(
    finder: object, fullname: str, path: Sequence[str] | None, target: types.ModuleType | None
) -> importlib.machinery.ModuleSpec | None:
    """The spec the finders after ``finder`` give ``fullname``, as the import system asks
    them; None (the import system then asks them itself) when one of them answers only the
    older ``find_module``, which this does not ask."""
    for other in list(sys.meta_path):
        if other is finder:
            continue
        find = getattr(other, "find_spec", None)
        if find is None:
            return None
        spec: importlib.machinery.ModuleSpec | None = find(fullname, path, target)
        if spec is not None:
            return spec
    return None


def _deferrable(spec: importlib.machinery.ModuleSpec, digest: str) -> bool:
    """A package from a source file, by the standard loader, whose ``__init__.py`` is the
    reviewed one (``digest``)."""
    if type(spec.loader) is not importlib.machinery.SourceFileLoader:
        return False
    if spec.submodule_search_locations is None or not spec.origin:
        return False
    if not spec.origin.endswith("__init__.py"):
        return False
    import hashlib
    from pathlib import Path

    try:
        source = Path(spec.origin).read_bytes()
    except OSError:
        return False
    return hashlib.blake2b(source, digest_size=16).hexdigest() == digest


def defer_package_inits(packages: Mapping[str, str] = REVIEWED) -> DeferringFinder | None:
    """Defer the ``__init__`` of each of ``packages`` not imported yet (see the module
    docstring); the finder, or None when each is imported already."""
    waiting = {name: digest for name, digest in packages.items() if name not in sys.modules}
    if not waiting:
        return None
    finder = DeferringFinder(waiting)
    sys.meta_path.insert(0, finder)
    return finder
