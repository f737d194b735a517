"""Starter files: ``squad init`` (a project: a squad, settings, schemas, a README) and
``squad new squad`` (one squad file), from templates shipped as package data.

Files are rendered in memory first, then written all or nothing: every target is checked
before the first write, and a failure while moving them into place undoes the moves made.
"""

from __future__ import annotations

import difflib
import re
import shutil
import tempfile
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from squad.errors import UsageError

__all__ = [
    "SETTINGS_SCHEMA",
    "SQUAD_SCHEMA",
    "StarterFile",
    "Template",
    "init_files",
    "new_squad_file",
    "template",
    "templates",
    "write_all",
]

SQUAD_SCHEMA = "configs/squad.schema.json"
"""Where ``squad init`` puts the squad schema; each squad file's header points at it."""
SETTINGS_SCHEMA = "configs/settings.schema.json"
"""Where ``squad init`` puts the settings schema; settings.yaml's header points at it."""

_DESCRIPTION = re.compile(r"^description: *(.+?) *$", re.MULTILINE)


@dataclass(frozen=True)
class Template:
    """A starter squad of ``squad/scaffold/templates/squads/``."""

    name: str
    description: str
    text: str


@dataclass(frozen=True)
class StarterFile:
    """One file to write: its path relative to the target folder, and its content."""

    path: str
    text: str


def _data(name: str) -> str:
    return resources.files(__name__).joinpath("templates", name).read_text(encoding="utf-8")


def templates() -> list[Template]:
    """Every starter squad, by name."""
    folder = resources.files(__name__).joinpath("templates", "squads")
    found = []
    for entry in folder.iterdir():
        if entry.name.endswith(".yaml"):
            text = entry.read_text(encoding="utf-8")
            match = _DESCRIPTION.search(text)
            found.append(Template(entry.name[:-5], match.group(1) if match else "", text))
    return sorted(found, key=lambda t: t.name)


def template(name: str) -> Template:
    """The starter squad ``name``; an unknown name is a usage error listing them all."""
    known = templates()
    for candidate in known:
        if candidate.name == name:
            return candidate
    close = difflib.get_close_matches(name, [t.name for t in known], n=1)
    message = f"no template named {name!r}"
    if close:
        message += f"; did you mean {close[0]!r}?"
    listing = "\n".join(f"  {t.name:<18} {t.description}" for t in known)
    raise UsageError(f"{message}\ntemplates (squad init --list):\n{listing}")


def init_files(name: str) -> list[StarterFile]:
    """What ``squad init --template name`` writes: the squad, settings, both JSON schemas the
    headers point at (editors validate offline) and the README."""
    from squad.settings import SettingsFile
    from squad.spec.json_schema import schema_text

    chosen = template(name)
    return [
        StarterFile(f"configs/squads/{chosen.name}.yaml", chosen.text),
        StarterFile("configs/settings.yaml", _data("settings.yaml")),
        StarterFile(SQUAD_SCHEMA, schema_text()),
        StarterFile(SETTINGS_SCHEMA, schema_text(SettingsFile)),
        StarterFile("README.md", _data("README.md").replace("{{template}}", chosen.name)),
    ]


def new_squad_file(name: str) -> StarterFile:
    """A minimal valid squad named ``name`` (a slug), as ``configs/squads/<name>.yaml``."""
    from squad.paths import SLUG_PATTERN

    if not re.match(SLUG_PATTERN, name):
        raise UsageError(
            f"{name!r} is not a squad name: use 1-63 lowercase letters, digits and '-', "
            "starting with a letter or digit (for example 'weekly-report')"
        )
    return StarterFile(f"squads/{name}.yaml", _data("new-squad.yaml").replace("{{name}}", name))


def write_all(
    root: Path,
    files: list[StarterFile],
    *,
    force: bool = False,
    hint: str = "pass --force to overwrite them, or choose another folder",
) -> list[Path]:
    """Write ``files`` under ``root`` (created if missing), all or none; the paths written.

    Without ``force`` an existing target is refused before anything is written (``hint``
    says what to do instead); with it, targets are replaced (and put back if a later move
    fails)."""
    targets = [(root / f.path, f) for f in files]
    _check_targets(root, [t for t, _ in targets], force=force, hint=hint)
    created_root = not root.exists()
    try:
        root.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=".squad-init-", dir=root))
    except OSError as exc:
        raise UsageError(
            f"cannot write in {str(root)!r}: {exc.strerror or exc}; nothing was written"
        ) from None
    done: list[tuple[Path, Path | None]] = []  # (target, its backup in staging, if replaced)
    made_dirs: list[Path] = []
    try:
        for number, (target, starter) in enumerate(targets):
            staged = staging / f"new-{number}"
            staged.write_text(starter.text, encoding="utf-8")
            made_dirs += _make_parents(target.parent, root)
            backup = None
            if target.exists():
                backup = staging / f"old-{number}"
                _move(target, backup)
            done.append((target, backup))
            _move(staged, target)
    except OSError as exc:
        _undo(done, made_dirs)
        shutil.rmtree(staging, ignore_errors=True)
        if created_root:
            shutil.rmtree(root, ignore_errors=True)
        raise UsageError(
            f"cannot write {str(exc.filename or root)!r}: {exc.strerror or exc}; nothing was "
            "written"
        ) from None
    shutil.rmtree(staging, ignore_errors=True)
    return [target for target, _ in targets]


def _check_targets(root: Path, targets: list[Path], *, force: bool, hint: str) -> None:
    if root.exists() and not root.is_dir():
        raise UsageError(f"{str(root)!r} is a file, not a folder; name a folder to write into")
    for target in targets:
        for parent in reversed(target.relative_to(root).parents[:-1]):
            if (root / parent).exists() and not (root / parent).is_dir():
                raise UsageError(
                    f"{str(root / parent)!r} is a file where a folder is needed; nothing "
                    "was written"
                )
        if target.is_dir():
            raise UsageError(f"{str(target)!r} is a folder; nothing was written")
    existing = [t for t in targets if t.exists() or t.is_symlink()]
    if existing and not force:
        names = ", ".join(repr(str(t)) for t in existing)
        raise UsageError(
            f"{names} already exist{'s' if len(existing) == 1 else ''}; nothing was written: {hint}"
        )


def _make_parents(folder: Path, root: Path) -> list[Path]:
    """Create ``folder`` and its missing parents up to ``root``; the ones created, deepest
    last."""
    missing = []
    while folder != root and not folder.exists():
        missing.append(folder)
        folder = folder.parent
    for path in reversed(missing):
        path.mkdir()
    return list(reversed(missing))


def _move(source: Path, target: Path) -> None:
    source.replace(target)


def _undo(done: list[tuple[Path, Path | None]], made_dirs: list[Path]) -> None:
    """Put back what :func:`write_all` changed before it failed: new files removed, replaced
    ones restored, folders it made removed (deepest first)."""
    for target, backup in reversed(done):
        try:
            if backup is not None and backup.exists():
                backup.replace(target)
            elif backup is None:
                target.unlink(missing_ok=True)
        except OSError:
            continue
    for folder in reversed(made_dirs):
        try:
            folder.rmdir()
        except OSError:
            continue
