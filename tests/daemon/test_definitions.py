"""The squads folder: which files load, which squad each defines, what changed."""

from __future__ import annotations

import os
from pathlib import Path

from squad.daemon.definitions import (
    assign_squads,
    is_definition_file,
    list_definition_files,
    load_definition,
    plan_changes,
)

GOOD = """\
name: {name}
agents: [{{id: a, role: Does}}]
tasks: [{{id: t, description: Do it., agent: a}}]
"""


def write(folder: Path, file: str, text: str) -> Path:
    path = folder / file
    path.write_text(text)
    return path


def test_only_visible_yaml_files_are_definitions(tmp_path: Path) -> None:
    for name in ("a.yaml", "b.yml", ".hidden.yaml", "#a.yaml#", "notes.md", "a.yaml~"):
        write(tmp_path, name, "x")
    (tmp_path / "dir.yaml").mkdir()
    os.mkfifo(tmp_path / "pipe.yaml")
    (tmp_path / "gone.yaml").symlink_to(tmp_path / "nowhere.yaml")
    listed = [p.name for p in list_definition_files(tmp_path)]
    assert listed == ["a.yaml", "b.yml", "gone.yaml", "pipe.yaml"]  # reported, not skipped
    assert "FIFO" in load_definition(tmp_path / "pipe.yaml").error
    assert "broken" in load_definition(tmp_path / "gone.yaml").error
    assert not is_definition_file(Path(".#a.yaml"))
    assert list_definition_files(tmp_path / "missing") == []


def test_a_bad_file_is_loaded_as_its_problems_not_raised(tmp_path: Path) -> None:
    good = load_definition(write(tmp_path, "a.yaml", GOOD.format(name="alpha")))
    assert good.spec is not None and good.spec.name == "alpha" and good.error is None
    bad = load_definition(write(tmp_path, "b.yaml", "name: beta\nagents: [\n"))
    assert bad.spec is None and bad.error is not None and "b.yaml:" in bad.error
    assert bad.to_dict()["problems"][0]["source"].endswith("b.yaml")
    assert load_definition(tmp_path / "gone.yaml").error is not None


def test_changed_bytes_change_the_digest(tmp_path: Path) -> None:
    path = write(tmp_path, "a.yaml", GOOD.format(name="alpha"))
    before = load_definition(path).digest
    path.write_text(GOOD.format(name="alpha") + "# a comment\n")
    assert load_definition(path).digest != before


def test_a_squad_named_twice_stays_with_the_file_that_had_it(tmp_path: Path) -> None:
    a = load_definition(write(tmp_path, "a.yaml", GOOD.format(name="same")))
    b = load_definition(write(tmp_path, "b.yaml", GOOD.format(name="same")))
    squads, refused = assign_squads({a.path: a, b.path: b}, {})
    assert squads["same"].path == a.path and list(refused) == [b.path]
    assert "already defined by a.yaml" in str(refused[b.path].error)
    squads, refused = assign_squads({a.path: a, b.path: b}, {"same": b.path})
    assert squads["same"].path == b.path and list(refused) == [a.path]
    squads, refused = assign_squads({b.path: b}, {"same": a.path})  # the owner went away
    assert squads["same"].path == b.path and not refused


def test_plan_adds_changes_and_removes_by_file_content(tmp_path: Path) -> None:
    a = load_definition(write(tmp_path, "a.yaml", GOOD.format(name="a")))
    b = load_definition(write(tmp_path, "b.yaml", GOOD.format(name="b")))
    c = load_definition(write(tmp_path, "c.yaml", GOOD.format(name="c")))
    b.path.write_text(GOOD.format(name="b") + "description: changed\n")
    b2 = load_definition(b.path)
    plan = plan_changes({"a": a, "b": b, "c": c}, {"a": a, "b": b2, "d": c})
    assert (plan.add, plan.change, plan.remove) == (["d"], ["b"], ["c"])


WARNED = GOOD + "schedule: {{interval: 2h, timezone: UTC}}\n"
"""A valid squad with one warning: a time zone an interval schedule ignores (line 4)."""


def test_a_valid_file_carries_its_warnings_located_in_it(tmp_path: Path) -> None:
    path = write(tmp_path, "a.yaml", WARNED.format(name="alpha"))
    loaded = load_definition(path)
    assert loaded.spec is not None and loaded.error is None
    [warning] = loaded.warnings
    assert (warning.source, warning.line, warning.path) == (str(path), 4, ("schedule", "timezone"))
    assert loaded.warning_text == warning.render()
    assert "timezone has no effect on an interval schedule" in str(loaded.warning_text)
    clean = load_definition(write(tmp_path, "b.yaml", GOOD.format(name="beta")))
    assert clean.warnings == () and clean.warning_text is None


def test_a_file_that_cannot_be_read_has_a_stable_digest_until_it_changes(tmp_path: Path) -> None:
    gone = tmp_path / "gone.yaml"
    assert load_definition(gone).digest == load_definition(gone).digest  # logged once
    path = write(tmp_path, "a.yaml", GOOD.format(name="alpha"))
    assert load_definition(path).digest != load_definition(gone).digest
