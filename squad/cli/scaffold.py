"""``squad init`` and ``squad new squad``: starter files for a new project, or one squad."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer

from squad.cli.output import Output

__all__ = ["new_app", "register"]

DEFAULT_TEMPLATE = "code-review"

new_app = typer.Typer(
    help="Add a starter file to this project (run from the folder holding configs/).",
    no_args_is_help=True,
)


def _shown(path: Path) -> str:
    """``path`` relative to the current folder when it is below it, else absolute."""
    try:
        return os.path.relpath(path)
    except ValueError:
        return str(path)


def init(
    folder: Annotated[
        Path, typer.Argument(help="The folder to set up (created if missing).", show_default=".")
    ] = Path(),
    template_name: Annotated[
        str,
        typer.Option("--template", "-t", help="The starter squad (see --list).", metavar="NAME"),
    ] = DEFAULT_TEMPLATE,
    list_templates: Annotated[
        bool, typer.Option("--list", help="List the templates and exit.")
    ] = False,
    force: Annotated[
        bool, typer.Option("--force", help="Overwrite files that already exist.")
    ] = False,
) -> None:
    """Set up a project: a starter squad, settings, their JSON schemas and a README.

    Writes configs/squads/NAME.yaml, configs/settings.yaml, configs/*.schema.json and
    README.md; refuses (writing nothing) if any exists, unless --force.
    """
    from squad.scaffold import init_files, templates, write_all

    out = Output()
    if list_templates:
        for item in templates():
            out.line(f"{item.name:<18} {item.description}")
        return
    files = init_files(template_name)
    written = write_all(folder, files, force=force)
    root = folder.resolve()
    out.line(f"set up {_shown(root)} from template {template_name!r}:", style="green")
    for path in written:
        out.line(f"  + {_shown(path)}")
    squad_file = f"configs/squads/{template_name}.yaml"
    out.line("next:")
    if root != Path.cwd().resolve():
        out.line(f"  cd {_shown(root)}")
    out.line(f"  squad validate {squad_file}")
    out.line(f"  squad run {squad_file}        # offline model: no key needed")
    out.line("  then read README.md to switch to a real model")


@new_app.command("squad")
def new_squad(
    name: Annotated[str, typer.Argument(help="The squad's name: lowercase letters, digits, '-'.")],
    folder: Annotated[
        Path | None,
        typer.Option(
            "--dir",
            help="The project folder holding configs/ (default: the current folder, or "
            "SQUAD_CONFIGS when set).",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Add configs/squads/NAME.yaml: a minimal squad to edit (never overwrites)."""
    from squad.errors import UsageError
    from squad.scaffold import SQUAD_SCHEMA, new_squad_file, write_all
    from squad.settings import configs_dir

    starter = new_squad_file(name)
    configs = (folder / "configs").resolve() if folder is not None else configs_dir()
    if not configs.is_dir():
        raise UsageError(
            f"no configs folder at {str(configs)!r}; run this from a project made by "
            "`squad init` (or pass --dir PROJECT), or start one with `squad init`"
        )
    (written,) = write_all(
        configs, [starter], hint="choose another name, or edit or delete that file"
    )
    out = Output()
    out.line(f"+ {_shown(written)}", style="green")
    schema = configs / Path(SQUAD_SCHEMA).name
    if not schema.is_file():
        out.line(
            f"  its header names {_shown(schema)} for editors; write it with: "
            f"squad schema -o {_shown(schema)}"
        )
    out.line(f"next: squad validate {_shown(written)} && squad run {_shown(written)}")


def register(app: typer.Typer) -> None:
    app.command()(init)
    app.add_typer(new_app, name="new")
