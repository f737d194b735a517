"""A deferred package ``__init__`` runs at the first read that needs it, and a caller reads
what the package defines: the same values, submodules and names as after a plain import."""

from __future__ import annotations

import contextlib
import hashlib
import http.server
import importlib
import os
import subprocess
import sys
import threading
import types
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from squad.deferred_init import REVIEWED, DeferredPackage, DeferringFinder

ROOT = Path(__file__).resolve().parent.parent
INIT = """\
import _deferred_probe
_deferred_probe.runs.append(__name__)
from .heavy import HEAVY as HEAVY
from .light import light as light
__all__ = ["HEAVY", "light"]
"""
"""A package whose ``__init__`` imports a heavy submodule and rebinds the name of a light
one to that submodule's function (as a plain import would leave it)."""


@pytest.fixture
def probe() -> Iterator[types.ModuleType]:
    """``_deferred_probe.runs``: the packages whose ``__init__`` ran, in order."""
    module = types.ModuleType("_deferred_probe")
    module.runs = []  # type: ignore[attr-defined]
    sys.modules["_deferred_probe"] = module
    yield module
    del sys.modules["_deferred_probe"]


def _package(folder: Path, name: str, init: str = INIT) -> str:
    """The package ``name`` in ``folder`` (on ``sys.path`` in the tests); its digest."""
    package = folder / name
    package.mkdir()
    (package / "__init__.py").write_text(init)
    (package / "heavy.py").write_text("HEAVY = 'heavy'\n")
    (package / "light.py").write_text("def light():\n    return 'light'\n")
    return hashlib.blake2b(init.encode(), digest_size=16).hexdigest()


@pytest.fixture
def on_path(tmp_path: Path) -> Iterator[Path]:
    sys.path.insert(0, str(tmp_path))
    before = set(sys.modules)
    yield tmp_path
    sys.path.remove(str(tmp_path))
    for name in set(sys.modules) - before:
        del sys.modules[name]


def _deferring(packages: dict[str, str]) -> DeferringFinder:
    finder = DeferringFinder(packages)
    sys.meta_path.insert(0, finder)
    return finder


def test_a_submodule_imports_without_its_package_init_which_runs_at_first_read(
    on_path: Path, probe: types.ModuleType
) -> None:
    finder = _deferring({"pkg_a": _package(on_path, "pkg_a")})
    import pkg_a.light

    package = sys.modules["pkg_a"]
    assert type(package) is DeferredPackage
    assert "pkg_a.heavy" not in sys.modules and probe.runs == []
    assert finder not in sys.meta_path  # each package it waited for is imported
    assert package.__path__ == [str(on_path / "pkg_a")]
    assert package.__file__ == str(on_path / "pkg_a" / "__init__.py")
    assert pkg_a.light() == "light"  # the name __init__ rebinds: its function, as plain
    assert probe.runs == ["pkg_a"] and type(package) is types.ModuleType
    assert package.HEAVY == "heavy" and package.__all__ == ["HEAVY", "light"]
    assert package.__loader__ is package.__spec__.loader
    assert type(package.__loader__).__name__ == "SourceFileLoader"
    import pkg_a  # a later plain import: the same module, its __init__ not run again

    assert pkg_a is package and probe.runs == ["pkg_a"]


@pytest.mark.parametrize(
    "read",
    [
        lambda package: package.__dict__,
        lambda package: dir(package),
        lambda package: package.__doc__,
        lambda package: package.missing_name,
    ],
    ids=["dict", "dir", "doc", "missing"],
)
def test_every_read_but_the_import_systems_runs_the_init_first(
    on_path: Path, probe: types.ModuleType, read: object
) -> None:
    _deferring({"pkg_b": _package(on_path, "pkg_b")})
    importlib.import_module("pkg_b.light")

    package = sys.modules["pkg_b"]
    assert callable(read)
    with contextlib.suppress(AttributeError):
        read(package)
    assert probe.runs == ["pkg_b"] and "HEAVY" in vars(package)
    with pytest.raises(AttributeError):
        package.missing_name  # noqa: B018 - what a plain module says


def test_an_init_that_is_not_the_reviewed_one_runs_at_import(
    on_path: Path, probe: types.ModuleType
) -> None:
    _package(on_path, "pkg_c")
    _deferring({"pkg_c": "0" * 32})
    importlib.import_module("pkg_c.light")

    assert type(sys.modules["pkg_c"]) is types.ModuleType
    assert probe.runs == ["pkg_c"] and "pkg_c.heavy" in sys.modules


def test_a_package_not_loaded_from_a_source_file_imports_as_usual(
    on_path: Path, probe: types.ModuleType
) -> None:
    digest = _package(on_path, "pkg_z")
    archive = on_path / "bundle.zip"
    with zipfile.ZipFile(archive, "w") as bundle:
        for path in sorted((on_path / "pkg_z").iterdir()):
            bundle.write(path, f"pkg_zip/{path.name}")
    sys.path.insert(0, str(archive))
    try:
        _deferring({"pkg_zip": digest})
        importlib.import_module("pkg_zip.light")
    finally:
        sys.path.remove(str(archive))
    assert type(sys.modules["pkg_zip"]) is types.ModuleType
    assert probe.runs == ["pkg_zip"] and "pkg_zip.heavy" in sys.modules


def test_an_init_that_fails_fails_at_the_read_and_again_at_the_next(
    on_path: Path, probe: types.ModuleType
) -> None:
    init = "import _deferred_probe\n_deferred_probe.runs.append(1)\nraise ValueError('broken')\n"
    _deferring({"pkg_d": _package(on_path, "pkg_d", init)})
    importlib.import_module("pkg_d.light")

    package = sys.modules["pkg_d"]
    for runs in ([1], [1, 1]):
        with pytest.raises(ValueError, match="broken"):
            package.anything  # noqa: B018
        assert probe.runs == runs and type(package) is DeferredPackage


def test_threads_reading_at_once_run_the_init_once(on_path: Path, probe: types.ModuleType) -> None:
    init = (
        "import time\nimport _deferred_probe\n_deferred_probe.runs.append(1)\n"
        "time.sleep(0.05)\nDONE = True\n"
    )
    _deferring({"pkg_e": _package(on_path, "pkg_e", init)})
    importlib.import_module("pkg_e.light")

    package = sys.modules["pkg_e"]
    seen: list[object] = []
    threads = [threading.Thread(target=lambda: seen.append(package.DONE)) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert seen == [True] * 4 and probe.runs == [1]


def test_the_installed_packages_inits_are_the_reviewed_ones() -> None:
    """When this fails an upgrade changed a deferred ``__init__``: read the new one; if it
    still only re-exports, put its digest in ``REVIEWED`` (a mismatch only costs the time)."""
    import importlib.util

    for name, digest in REVIEWED.items():
        spec = importlib.util.find_spec(name)
        assert spec is not None and spec.origin is not None
        found = hashlib.blake2b(Path(spec.origin).read_bytes(), digest_size=16).hexdigest()
        assert found == digest, f"{name}'s __init__ changed ({spec.origin}): review it again"


GRAPH = """
import sys
if sys.argv[1] == "defer":
    from squad.deferred_init import defer_package_inits
    defer_package_inits()
from typing_extensions import TypedDict
from langgraph.graph import END, START, StateGraph

class State(TypedDict):
    x: int

graph = StateGraph(State)
graph.add_node("probe_step", lambda state: {"x": state["x"] + 1})
graph.add_edge(START, "probe_step")
graph.add_edge("probe_step", END)
print(graph.compile().invoke({"x": 1})["x"])
print(type(sys.modules["langsmith.types"]).__name__, "langgraph_sdk.client" in sys.modules)
import langsmith.types
import langgraph_sdk
print(langsmith.types.Run.__name__, langgraph_sdk.get_client.__name__)
"""


@pytest.mark.parametrize("mode", ["defer", "plain"])
def test_langgraph_runs_and_traces_to_langsmith_with_the_inits_deferred(mode: str) -> None:
    """A graph run with LangSmith tracing on (to a server on loopback) posts its run either
    way; deferred, the SDK client and langsmith's types are not imported until read."""
    posted: list[bytes] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def _answer(self) -> None:
            size = int(self.headers.get("content-length") or 0)
            if self.command == "POST":
                posted.append(self.rfile.read(size))
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", "2")
            self.end_headers()
            self.wfile.write(b"{}")

        do_GET = do_POST = do_PATCH = _answer

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "LANGSMITH_TRACING": "true",
        "LANGSMITH_ENDPOINT": f"http://127.0.0.1:{server.server_address[1]}",
        "LANGSMITH_API_KEY": "lsv2-not-a-key",
    }
    try:
        done = subprocess.run(
            [sys.executable, "-c", GRAPH, mode],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    finally:
        server.shutdown()
        server.server_close()
    assert done.returncode == 0, done.stderr
    deferred = "DeferredPackage False" if mode == "defer" else "module True"
    assert done.stdout.splitlines() == ["2", deferred, "Run get_client"]
    assert any(b"probe_step" in body for body in posted)
