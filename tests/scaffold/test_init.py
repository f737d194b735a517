"""``squad init`` and ``squad new squad``: starter projects that validate and run offline."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.scaffold.conftest import Project

TEMPLATES = ["code-review", "docs", "research-digest"]
HEADER = re.compile(r"\A# yaml-language-server: \$schema=(\S+)\n")


def test_init_list_shows_every_template_with_its_squads_description(project: Project) -> None:
    from squad.spec.loader import squad_from_text

    result = project("init", "--list")
    assert result.returncode == 0, result.stderr
    listed = dict(line.split(None, 1) for line in result.stdout.splitlines())
    assert set(TEMPLATES) <= set(listed)
    from squad.scaffold import templates

    for template in templates():
        spec = squad_from_text(template.text, source=template.name)
        assert spec.name == template.name
        assert listed[template.name] == spec.description != ""
    assert not project.root.exists() or not any(project.root.iterdir())


@pytest.mark.parametrize("name", TEMPLATES)
def test_template_inits_validates_and_runs_offline_to_completion(
    project: Project, name: str
) -> None:
    made = project("init", "proj", "--template", name, cwd=project.root.parent)
    assert made.returncode == 0, made.stderr
    squad_file = f"configs/squads/{name}.yaml"
    files = project.files()
    assert set(files) == {
        squad_file,
        "configs/settings.yaml",
        "configs/squad.schema.json",
        "configs/settings.schema.json",
        "README.md",
    }
    assert sorted(p.name for p in project.root.iterdir()) == ["README.md", "configs"]
    assert f"squad run {squad_file}" in made.stdout
    for yaml_file in (squad_file, "configs/settings.yaml"):
        header = HEADER.match(files[yaml_file])
        assert header, f"{yaml_file} lacks the yaml-language-server header"
        schema = (project.root / yaml_file).parent / header.group(1)
        document = json.loads(schema.read_text())
        assert document["$schema"].endswith("2020-12/schema")
        assert document["additionalProperties"] is False
    assert project("schema").stdout == files["configs/squad.schema.json"]
    assert project("schema", "--settings").stdout == files["configs/settings.schema.json"]
    text = files[squad_file]
    assert "model: offline" in text
    assert "OPENAI_API_KEY" in text and "api_base" in text and "cost_per_1k_input" in text
    readme = files["README.md"]
    for words in ("squad validate", f"squad run {squad_file}", "squad daemon", "OPENAI_API_KEY"):
        assert words in readme, words

    checked = project("validate", squad_file)
    assert checked.returncode == 0 and checked.stdout.startswith(f"ok: {squad_file}"), (
        checked.stderr
    )
    ran = project("run", squad_file, "--json")
    assert ran.returncode == 0, ran.stderr
    result = json.loads(ran.stdout)
    assert result["status"] == "succeeded"
    workspace = project.root / "workspaces" / name  # settings.yaml's workspaces: ../workspaces
    assert Path(result["workspace"]) == workspace.resolve()
    from squad.spec.loader import squad_from_file

    spec = squad_from_file(project.root / squad_file)
    assert result["tasks"] == {task.id: "done" for task in spec.tasks}
    for task in spec.tasks:
        assert (workspace / "tasks" / task.id / "output.md").read_text().strip()
    if name == "research-digest":
        assert spec.schedule is not None and spec.schedule.cron == "0 8 * * 1"


def test_settings_defaults_shown_commented_are_valid_settings(project: Project) -> None:
    """Every ``#key: value`` line of the starter settings, turned on, still loads: the
    commented defaults are real keys with valid values."""
    from squad.settings import Settings

    assert project("init").returncode == 0
    path = project.root / "configs" / "settings.yaml"
    text = path.read_text()
    toggles = [line for line in text.splitlines() if re.match(r"#([a-z]|  )", line)]
    assert len(toggles) >= 8
    path.write_text(re.sub(r"(?m)^#(?=[a-z]|  )", "", text))
    settings = Settings.load({"SQUAD_HOME": str(project.home)}, cwd=project.root)
    assert settings.settings_file == path
    assert settings.workspaces == (project.root / "workspaces").resolve()
    assert settings.daemon.http.port == 8765
    assert settings.database_url.startswith("postgresql+psycopg://")


def test_init_refuses_existing_files_and_writes_nothing_unless_forced(project: Project) -> None:
    project.root.mkdir()
    (project.root / "README.md").write_text("mine\n")
    refused = project("init", "--template", "docs")
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    assert "README.md' already exists; nothing was written" in refused.stderr
    assert "--force" in refused.stderr
    assert project.files() == {"README.md": "mine\n"}
    forced = project("init", "--template", "docs", "--force")
    assert forced.returncode == 0, forced.stderr
    files = project.files()
    assert files["README.md"].startswith("# My squads") and "configs/squads/docs.yaml" in files


def test_a_failed_write_midway_puts_the_folder_back(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    import squad.scaffold as scaffold
    from squad.errors import UsageError

    project.root.mkdir()
    (project.root / "README.md").write_text("mine\n")
    real_move = scaffold._move
    moves = []

    def failing_move(source: Path, target: Path) -> None:
        moves.append(target)
        if len(moves) == 4:
            raise OSError(28, "No space left on device", str(target))
        real_move(source, target)

    monkeypatch.setattr(scaffold, "_move", failing_move)
    with pytest.raises(UsageError, match=r"No space left on device.*nothing was written"):
        scaffold.write_all(project.root, scaffold.init_files("docs")[::-1], force=True)
    assert len(moves) == 4  # README moved aside and replaced, then a schema failed
    assert project.files() == {"README.md": "mine\n"}
    assert sorted(p.name for p in project.root.iterdir()) == ["README.md"]


def test_init_into_a_new_folder_that_fails_removes_the_folder(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    import squad.scaffold as scaffold
    from squad.errors import UsageError

    def failing_move(source: Path, target: Path) -> None:
        raise OSError(5, "Input/output error", str(target))

    monkeypatch.setattr(scaffold, "_move", failing_move)
    with pytest.raises(UsageError):
        scaffold.write_all(project.root / "new", scaffold.init_files("docs"))
    assert not (project.root / "new").exists()


def test_unknown_template_is_a_usage_error_with_did_you_mean_and_the_list(
    project: Project,
) -> None:
    result = project("init", "--template", "research")
    assert result.returncode == 2
    assert "no template named 'research'; did you mean 'research-digest'?" in result.stderr
    for name in TEMPLATES:
        assert name in result.stderr
    assert not any(project.root.iterdir())


def test_init_into_a_file_or_over_a_folder_is_refused(project: Project) -> None:
    project.root.mkdir()
    (project.root / "file").write_text("x")
    assert "is a file, not a folder" in project("init", "file").stderr
    (project.root / "README.md").mkdir()
    over = project("init", "--force")
    assert over.returncode == 2 and "README.md' is a folder" in over.stderr
    assert not (project.root / "configs").exists()


def test_new_squad_adds_one_valid_file_that_runs(project: Project) -> None:
    assert project("init").returncode == 0
    before = project.files()
    added = project("new", "squad", "weekly-report")
    assert added.returncode == 0, added.stderr
    path = "configs/squads/weekly-report.yaml"
    assert set(project.files()) - set(before) == {path}
    assert HEADER.match(project.files()[path])
    assert project("validate", path).returncode == 0
    ran = project("run", path, "--json")
    assert ran.returncode == 0, ran.stderr
    assert json.loads(ran.stdout)["tasks"] == {"first": "done"}
    again = project("new", "squad", "weekly-report")
    assert again.returncode == 2 and "weekly-report.yaml' already exists" in again.stderr


def test_new_squad_checks_the_name_and_finds_configs_from_dir_or_cwd(project: Project) -> None:
    bad = project("new", "squad", "Weekly_Report")
    assert bad.returncode == 2 and "'Weekly_Report' is not a squad name" in bad.stderr
    lost = project("new", "squad", "ok")
    assert (
        lost.returncode == 2
        and "no configs folder" in lost.stderr
        and "squad init" in (lost.stderr)
    )
    assert project("init", "inner").returncode == 0
    by_dir = project("new", "squad", "ok", "--dir", "inner")
    assert by_dir.returncode == 0, by_dir.stderr
    assert (project.root / "inner" / "configs" / "squads" / "ok.yaml").is_file()
    project.env["SQUAD_CONFIGS"] = str(project.root / "inner" / "configs")
    by_env = project("new", "squad", "other")
    assert by_env.returncode == 0, by_env.stderr
    assert (project.root / "inner" / "configs" / "squads" / "other.yaml").is_file()
