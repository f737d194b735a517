"""The daemon's cache of validated definitions: an unchanged file is not parsed again at
start-up, and nothing wrong with the cache ever changes what a file means.

Real files and a real cache file in a temporary home; the YAML parser is counted by wrapping
the loader the catalog calls.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

import squad.daemon.catalog as catalog_module
import squad.daemon.definition_cache as definition_cache
from squad.app import App
from squad.daemon.catalog import SquadCatalog
from squad.daemon.definition_cache import CACHE_FILE, DefinitionCache
from squad.daemon.definitions import Definition, file_digest, load_definition
from squad.daemon.eventlog import DaemonLog, read_daemon_log
from squad.settings import Settings

CONFIGS = Path(__file__).resolve().parents[2] / "configs" / "squads"

GOOD = """\
name: {name}
goal: Ship it.
agents:
  - {{id: writer, role: Writes}}
tasks:
  - {{id: draft, description: Write it., agent: writer}}
"""
WARNED = GOOD + "schedule: {{interval: 2h, timezone: UTC}}\n"
"""One warning, at line 7: a time zone an interval schedule ignores."""


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text)
    return path


def cached_copy(tmp_path: Path, loaded: Definition) -> Definition | None:
    """``loaded`` saved to a fresh cache and looked up through another instance (a restart)."""
    file = tmp_path / "home" / CACHE_FILE
    file.parent.mkdir(exist_ok=True)
    DefinitionCache(file).save({loaded.path: loaded})
    return DefinitionCache(file).lookup(loaded.path, loaded.digest)


@pytest.mark.parametrize("example", sorted(p.name for p in CONFIGS.glob("*.yaml")))
def test_an_example_squad_from_the_cache_is_the_squad_its_file_defines(
    tmp_path: Path, example: str
) -> None:
    loaded = load_definition(CONFIGS / example)
    again = cached_copy(tmp_path, loaded)
    assert again is not None
    assert again.spec == loaded.spec and again.spec is not None
    assert (again.digest, again.warnings) == (loaded.digest, loaded.warnings)


def test_warnings_from_the_cache_are_checked_again_and_located_at_their_line(
    tmp_path: Path,
) -> None:
    loaded = load_definition(write(tmp_path, "a.yaml", WARNED.format(name="alpha")))
    again = cached_copy(tmp_path, loaded)
    assert again is not None
    [warning] = again.warnings
    assert (warning.line, warning.path) == (7, ("schedule", "timezone"))
    assert again.warning_text == loaded.warning_text


def test_an_mcp_command_installed_since_the_cache_was_written_is_no_longer_reported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = GOOD.format(name="alpha") + "mcp_servers:\n  time: {command: squad-test-mcp-time}\n"
    loaded = load_definition(write(tmp_path, "a.yaml", text))
    assert any("squad-test-mcp-time" in w.message for w in loaded.warnings)
    DefinitionCache(tmp_path / CACHE_FILE).save({loaded.path: loaded})
    tool = tmp_path / "bin" / "squad-test-mcp-time"
    tool.parent.mkdir()
    tool.write_text("#!/bin/sh\n")
    tool.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tool.parent}{os.pathsep}{os.environ['PATH']}")
    again = DefinitionCache(tmp_path / CACHE_FILE).lookup(loaded.path, loaded.digest)
    assert again is not None and again.spec == loaded.spec
    assert not any("squad-test-mcp-time" in w.message for w in again.warnings)


def test_a_file_whose_bytes_changed_is_not_served_from_the_cache(tmp_path: Path) -> None:
    path = write(tmp_path, "a.yaml", GOOD.format(name="alpha"))
    cache = DefinitionCache(tmp_path / CACHE_FILE)
    cache.save({path: load_definition(path)})
    path.write_text(GOOD.format(name="alpha").replace("Ship it.", "Ship it twice."))
    assert DefinitionCache(tmp_path / CACHE_FILE).lookup(path, file_digest(path)) is None


def test_a_cache_written_by_other_validation_code_is_ignored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write(tmp_path, "a.yaml", GOOD.format(name="alpha"))
    loaded = load_definition(path)
    DefinitionCache(tmp_path / CACHE_FILE).save({path: loaded})
    assert DefinitionCache(tmp_path / CACHE_FILE).lookup(path, loaded.digest) is not None
    monkeypatch.setattr(definition_cache, "code_fingerprint", lambda: "an upgrade")
    assert DefinitionCache(tmp_path / CACHE_FILE).lookup(path, loaded.digest) is None


@pytest.mark.parametrize(
    "damage",
    [
        lambda body: "{not json",
        lambda body: json.dumps([1, 2]),
        lambda body: json.dumps({**body, "files": "none"}),
        lambda body: json.dumps(
            {
                **body,
                "files": {k: {**v, "definition": {"name": 7}} for k, v in body["files"].items()},
            }
        ),
        lambda body: json.dumps(
            {
                **body,
                "files": {k: {**v, "positions": {"keys": [[1]]}} for k, v in body["files"].items()},
            }
        ),
    ],
    ids=["not-json", "not-an-object", "files-not-a-table", "invalid-definition", "bad-positions"],
)
def test_a_damaged_cache_only_means_the_file_is_parsed(tmp_path: Path, damage) -> None:  # type: ignore[no-untyped-def]
    path = write(tmp_path, "a.yaml", GOOD.format(name="alpha"))
    loaded = load_definition(path)
    file = tmp_path / CACHE_FILE
    DefinitionCache(file).save({path: loaded})
    file.write_text(damage(json.loads(file.read_text())))
    cache = DefinitionCache(file)
    assert cache.lookup(path, loaded.digest) is None
    cache.save({path: loaded})  # the next save repairs it
    assert DefinitionCache(file).lookup(path, loaded.digest) is not None


def test_the_cache_is_private_and_rewritten_only_when_a_file_changed(tmp_path: Path) -> None:
    path = write(tmp_path, "a.yaml", GOOD.format(name="alpha"))
    loaded = load_definition(path)
    file = tmp_path / CACHE_FILE
    cache = DefinitionCache(file)
    cache.save({path: loaded})
    assert stat.S_IMODE(file.stat().st_mode) == 0o600
    before = file.stat().st_mtime_ns, file.stat().st_ino
    cache.save({path: loaded})
    DefinitionCache(file).save({path: loaded})
    assert (file.stat().st_mtime_ns, file.stat().st_ino) == before
    path.write_text(GOOD.format(name="alpha") + "description: changed\n")
    cache.save({path: load_definition(path)})
    assert file.stat().st_ino != before[1]


def test_invalid_files_are_not_cached(tmp_path: Path) -> None:
    path = write(tmp_path, "a.yaml", "name: [unclosed\n")
    broken = load_definition(path)
    assert broken.spec is None
    DefinitionCache(tmp_path / CACHE_FILE).save({path: broken})
    assert DefinitionCache(tmp_path / CACHE_FILE).lookup(path, broken.digest) is None


def test_a_restarted_catalog_parses_only_the_files_changed_while_it_was_down(
    settings: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = settings.squads_dir
    folder.mkdir(parents=True)
    settings.home.mkdir(parents=True, exist_ok=True)  # the daemon's log made it
    for name in ("alpha", "beta", "gamma"):
        write(folder, f"{name}.yaml", WARNED.format(name=name))
    parsed: list[str] = []

    def counted(path: Path) -> Definition:
        parsed.append(path.name)
        return load_definition(path)

    monkeypatch.setattr(catalog_module, "load_definition", counted)
    log = DaemonLog(tmp_path / "daemon.jsonl")

    def start() -> SquadCatalog:
        with App.open(settings) as app:
            catalog = SquadCatalog(
                folder,
                app.squads,
                log,
                scheduler=None,
                fire=lambda _: None,
                cache=DefinitionCache(settings.home / CACHE_FILE),
            )
            catalog.reconcile(starting=True)
            return catalog

    first = start()
    assert sorted(parsed) == ["alpha.yaml", "beta.yaml", "gamma.yaml"]
    write(folder, "beta.yaml", WARNED.format(name="beta").replace("Ship it.", "Ship more."))
    parsed.clear()
    second = start()
    assert parsed == ["beta.yaml"]
    assert sorted(second.squads()) == ["alpha", "beta", "gamma"]
    assert second.squads()["beta"].spec.goal == "Ship more."
    assert {n: s.spec for n, s in second.squads().items() if n != "beta"} == {
        n: s.spec for n, s in first.squads().items() if n != "beta"
    }
    warned = [e for e in read_daemon_log(log.path) if e["event"] == "load_warning"]
    assert len(warned) == 6 and all(":7:" in e["warnings"] for e in warned)
