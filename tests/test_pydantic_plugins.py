"""Pydantic's plugin look-up is answered only when no distribution declares a plugin."""

from __future__ import annotations

import importlib.machinery
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from squad.pydantic_plugins import (
    LOADER,
    PluginLookup,
    _pydantic_loader,
    plugins_declared,
    settle_plugin_scan,
)

FINDERS = [importlib.machinery.PathFinder]


def _distribution(folder: Path, name: str, entry_points: str | None) -> None:
    info = folder / f"{name}-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Name: {name}\nVersion: 1.0\n")
    if entry_points is not None:
        (info / "entry_points.txt").write_text(entry_points)


def test_a_declared_plugin_group_is_found_among_other_groups(tmp_path: Path) -> None:
    _distribution(tmp_path, "tool", "[console_scripts]\ntool = tool:main\n")
    _distribution(tmp_path, "Plug", "[console_scripts]\nx = y:z\n\n[pydantic]\nplug = plug:p\n")
    assert plugins_declared([str(tmp_path / "missing"), str(tmp_path)], FINDERS) is True


def test_distributions_without_the_group_declare_none(tmp_path: Path) -> None:
    _distribution(tmp_path, "tool", "[console_scripts]\ntool = tool:main  # [pydantic]\n")
    _distribution(tmp_path, "bare", None)
    (tmp_path / "old.egg-info").write_text("Name: old\n")  # a file: no entry points
    assert plugins_declared(["", str(tmp_path)], FINDERS) is False


def test_what_only_importlib_metadata_reads_leaves_the_answer_open(tmp_path: Path) -> None:
    archive = tmp_path / "bundle.zip"
    with zipfile.ZipFile(archive, "w") as bundle:
        bundle.writestr("plug-1.0.dist-info/entry_points.txt", "[pydantic]\nplug = plug:p\n")
    (tmp_path / "eggs" / "plug-1.0.egg").mkdir(parents=True)

    class Finder:
        def find_distributions(self, context: object = None) -> list[object]:
            return []

    assert plugins_declared([str(archive)], FINDERS) is None
    assert plugins_declared([str(tmp_path / "eggs")], FINDERS) is None
    assert plugins_declared([str(tmp_path)], [*FINDERS, Finder()]) is None


def test_pydantic_is_told_there_are_none_only_when_none_is_declared(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PYDANTIC_DISABLE_PLUGINS", raising=False)
    monkeypatch.setattr(sys, "meta_path", FINDERS)
    monkeypatch.setitem(sys.modules, LOADER, PluginLookup())  # put back after the test
    loader = _pydantic_loader()  # pydantic's own, fresh: it has not looked yet
    assert sys.modules[LOADER] is loader and loader._plugins is None
    _distribution(tmp_path / "with", "plug", "[pydantic]\nplug = plug:p\n")
    monkeypatch.setattr(sys, "path", [str(tmp_path / "with")])
    settle_plugin_scan()
    assert loader._plugins is None  # pydantic looks, and loads the plugin itself

    (tmp_path / "without").mkdir()
    monkeypatch.setattr(sys, "path", [str(tmp_path / "without")])
    settle_plugin_scan()
    assert loader._plugins == {}


def test_the_stand_in_answers_none_until_a_plugin_is_declared_then_hands_over(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PYDANTIC_DISABLE_PLUGINS", raising=False)
    others = [f for f in sys.meta_path if not hasattr(f, "find_distributions")]
    monkeypatch.setattr(sys, "meta_path", [*others, *FINDERS])  # no other finder of metadata
    lookup = PluginLookup()
    monkeypatch.setitem(sys.modules, LOADER, lookup)
    (tmp_path / "without").mkdir()
    monkeypatch.setattr(sys, "path", [str(tmp_path / "without")])
    assert list(lookup.get_plugins()) == []
    assert sys.modules[LOADER] is lookup  # nothing declared: pydantic's loader never imported

    lookup = PluginLookup()
    sys.modules[LOADER] = lookup
    _distribution(tmp_path / "with", "plug", "[pydantic]\nplug = squad_test_plug:plugin\n")
    (tmp_path / "with" / "squad_test_plug.py").write_text("plugin = object()\n")
    monkeypatch.setattr(sys, "path", [str(tmp_path / "with"), *sys.path])
    monkeypatch.delitem(sys.modules, "squad_test_plug", raising=False)
    lookup.get_plugins()  # what pydantic's loader finds: the next test, in its own process
    handed = sys.modules[LOADER]
    assert handed is not lookup and Path(str(handed.__file__)).name == "_loader.py"


def test_an_installed_plugin_still_sees_squad_s_models(tmp_path: Path) -> None:
    """In a process of its own (no other test's threads toggling pydantic's switch): a
    plugin declared by an installed distribution is loaded and told of squad's models."""
    _distribution(tmp_path, "plug", "[pydantic]\nplug = squad_test_plug:plugin\n")
    (tmp_path / "squad_test_plug.py").write_text(
        "seen = []\n"
        "class Plugin:\n"
        "    def new_schema_validator(self, schema, schema_type, schema_type_path, *rest):\n"
        "        seen.append(schema_type_path.name)\n"
        "        return None, None, None\n"
        "plugin = Plugin()\n"
    )
    script = (
        "import sys; sys.path.insert(0, sys.argv[1])\n"
        "import squad.settings, squad_test_plug\n"
        "print(' '.join(squad_test_plug.seen))\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYDANTIC_DISABLE_PLUGINS"}
    done = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    assert "SettingsFile" in done.stdout.split(), done.stderr


def test_a_name_the_stand_in_does_not_know_is_pydantic_s_loader_s(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    lookup = PluginLookup()
    monkeypatch.setitem(sys.modules, LOADER, lookup)
    # a name a later pydantic might import from its loader besides get_plugins
    # (``from pydantic.plugin._loader import entry_points`` asks the module so)
    assert callable(getattr(sys.modules[LOADER], "entry_points"))  # noqa: B009
    assert sys.modules[LOADER] is not lookup  # pydantic's own loader answered, in its place
    with pytest.raises(AttributeError):
        lookup.__getattr__("__wrapped__")
