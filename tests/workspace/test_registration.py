"""A squad registered in the store when its workspace is made: a record read just before
(a daemon starting over many squads reads them all at once) spares the write only when it
already says everything the write would."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from squad.app import App
from squad.spec.loader import squad_from_file
from tests.conftest import BASIC_YAML


def source_file(tmp_path: Path, text: str = BASIC_YAML) -> Path:
    path = tmp_path / "demo.yaml"
    path.write_text(text)
    return path


def test_a_stale_record_does_not_stop_the_new_definition_being_registered(
    app: App, tmp_path: Path
) -> None:
    path = source_file(tmp_path)
    app.squads.create(squad_from_file(path), source=path)
    stale = app.squads.registered_squads()["demo"]
    path.write_text(BASIC_YAML.replace("Ship it.", "Ship it again."))
    spec = squad_from_file(path)
    app.squads.create(spec, source=path, registered=stale)
    fresh = app.squads.registered_squads()["demo"]
    assert fresh.definition_sha256 != stale.definition_sha256
    assert fresh.definition is not None and fresh.definition["goal"] == "Ship it again."
    assert app.squads.registered("demo")[0] == spec


def test_a_record_from_another_file_or_without_a_definition_is_registered_again(
    app: App, tmp_path: Path
) -> None:
    path = source_file(tmp_path)
    spec = squad_from_file(path)
    app.squads.create(spec, source=path)
    record = app.squads.registered_squads()["demo"]
    moved = tmp_path / "moved.yaml"
    moved.write_text(BASIC_YAML)
    app.squads.create(spec, source=moved, registered=record)
    assert app.squads.registered_squads()["demo"].source == str(moved.resolve())
    old = dataclasses.replace(app.squads.registered_squads()["demo"], definition=None)
    app.squads.create(spec, source=moved, registered=old)
    assert app.squads.registered_squads()["demo"].definition is not None


def test_no_record_registers_the_squad(app: App, tmp_path: Path) -> None:
    path = source_file(tmp_path)
    assert app.squads.registered_squads() == {}
    app.squads.create(squad_from_file(path), source=path, registered=None)
    record = app.squads.registered_squads()["demo"]
    assert (record.source, record.workspace) == (
        str(path.resolve()),
        str(app.squads.workspaces.root / "demo"),
    )
