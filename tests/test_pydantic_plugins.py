"""Pydantic's plugin look-up is answered only when no distribution declares a plugin."""

from __future__ import annotations

import importlib.machinery
import sys
import zipfile
from pathlib import Path

import pytest
from pydantic.plugin import _loader

from squad.pydantic_plugins import LOADER, PluginLookup, plugins_declared, settle_plugin_scan

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
    monkeypatch.setattr(_loader, "_plugins", None)
    _distribution(tmp_path / "with", "plug", "[pydantic]\nplug = plug:p\n")
    monkeypatch.setattr(sys, "path", [str(tmp_path / "with")])
    settle_plugin_scan()
    assert _loader._plugins is None  # pydantic looks, and loads the plugin itself

    (tmp_path / "without").mkdir()
    monkeypatch.setattr(sys, "path", [str(tmp_path / "without")])
    settle_plugin_scan()
    assert _loader._plugins == {}


def test_the_stand_in_answers_none_until_a_plugin_is_installed_then_pydantic_loads_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PYDANTIC_DISABLE_PLUGINS", raising=False)
    lookup = PluginLookup()
    monkeypatch.setitem(sys.modules, LOADER, lookup)
    (tmp_path / "without").mkdir()
    monkeypatch.setattr(sys, "path", [str(tmp_path / "without")])
    assert list(lookup.get_plugins()) == []
    assert sys.modules[LOADER] is lookup  # nothing declared: pydantic's loader never imported

    lookup = PluginLookup()
    sys.modules[LOADER] = lookup
    plugins = tmp_path / "with"
    _distribution(plugins, "plug", "[pydantic]\nplug = squad_test_plug:plugin\n")
    (plugins / "squad_test_plug.py").write_text("plugin = object()\n")
    monkeypatch.setattr(sys, "path", [str(plugins), *sys.path])
    monkeypatch.delitem(sys.modules, "squad_test_plug", raising=False)
    found = list(lookup.get_plugins())
    assert [type(p).__name__ for p in found] == ["object"]
    assert sys.modules[LOADER] is not lookup  # pydantic's own loader took its place
    assert list(sys.modules[LOADER].get_plugins()) == found
