"""The wheel a user installs (`pip install squad-*.whl`, pipx, uv tool) holds everything
squad init, validate and run need, and nothing of the repository's training data or tests.

Built offline from a copy of the tree (``--no-build-isolation``: the dev environment's
setuptools), installed with ``--no-deps`` into a fresh venv that borrows this environment's
dependencies through a ``.pth`` file, then used from a folder of its own as a user would."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]


def _run(*args: str | Path, cwd: Path, env: dict[str, str] | None = None) -> str:
    result = subprocess.run(
        [str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, f"{args}:\n{result.stdout}\n{result.stderr}"
    return result.stdout


def _build_wheel(tmp_path: Path) -> Path:
    source = tmp_path / "src"
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info")
    shutil.copytree(REPO / "squad", source / "squad", ignore=ignore)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(REPO / name, source / name)
    out = tmp_path / "dist"
    _run(
        sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
        "--quiet", "-w", out, source, cwd=tmp_path,
    )  # fmt: skip
    (wheel,) = out.glob("squad-*.whl")
    return wheel


def test_the_wheel_installs_and_inits_validates_and_runs_a_squad_offline(tmp_path: Path) -> None:
    wheel = _build_wheel(tmp_path)
    names = zipfile.ZipFile(wheel).namelist()
    for needed in (
        "squad/scaffold/templates/squads/code-review.yaml",
        "squad/scaffold/templates/squads/docs.yaml",
        "squad/scaffold/templates/squads/research-digest.yaml",
        "squad/scaffold/templates/settings.yaml",
        "squad/scaffold/templates/README.md",
        "squad/scaffold/templates/new-squad.yaml",
        "squad/spec/models.py",  # the schema's source: squad init writes it from these
        "squad/spec/json_schema.py",
        "squad/prompts/offline.yaml",
        "squad/prompts/SOUL.md",
        "squad/web/templates/base.html",
        "squad/web/static/app.css",
        "squad/web/locale/ko/LC_MESSAGES/messages.po",  # the Korean dashboard, compiled at start
        "squad/store/migrations/script.py.mako",
        "squad/__main__.py",
    ):
        assert needed in names, f"{needed} is missing from {wheel.name}"
    assert {n.split("/")[0] for n in names} == {"squad", wheel.name.split("-py3")[0] + ".dist-info"}
    assert not [n for n in names if "/tests/" in n or "training" in n or n.endswith(".pyc")]

    venv = tmp_path / "venv"
    _run(sys.executable, "-m", "venv", "--without-pip", venv, cwd=tmp_path)
    python = venv / "bin" / "python"
    purelib = _run(python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))",
                   cwd=tmp_path).strip()  # fmt: skip
    # This environment's dependencies, after the venv's own site-packages (so the wheel's
    # squad wins over any squad installed here); .pth lines are only added to sys.path.
    (Path(purelib) / "_deps.pth").write_text(sysconfig.get_path("purelib") + "\n")
    _run(
        sys.executable, "-m", "pip", "--python", python, "install", "--no-deps", "--no-index",
        "--quiet", wheel, cwd=tmp_path,
    )  # fmt: skip

    user = tmp_path / "user"
    user.mkdir()
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("SQUAD_", "PYTHON"))},
        "SQUAD_HOME": str(tmp_path / "home"),
    }
    squad = venv / "bin" / "squad"  # the console script the wheel installed
    assert _run(squad, "--version", cwd=user, env=env).strip() == "squad 0.1.0"
    imported = _run(python, "-c", "import squad; print(squad.__file__)", cwd=user, env=env)
    assert imported.strip().startswith(purelib), imported
    made = _run(squad, "init", "demo", "--template", "code-review", cwd=user, env=env)
    assert "configs/squads/code-review.yaml" in made
    demo = user / "demo"
    assert (demo / "configs" / "squad.schema.json").is_file()
    checked = _run(squad, "validate", "configs/squads/code-review.yaml", cwd=demo, env=env)
    assert checked.startswith("ok: configs/squads/code-review.yaml")
    ran = _run(squad, "run", "configs/squads/code-review.yaml", cwd=demo, env=env)
    assert ": succeeded" in ran
    tasks = demo / "workspaces" / "code-review" / "tasks"
    assert sorted(p.name for p in tasks.iterdir()) == ["findings", "read", "review", "tests"]
    assert "verdict first" in (tasks / "review" / "output.md").read_text()
