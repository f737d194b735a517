"""The ``squad`` command line. Heavy libraries load inside commands, never at import."""

from __future__ import annotations

import sys

from squad.cli.app import app
from squad.errors import SquadError

__all__ = ["app", "main"]


def main() -> None:
    """Console-script entry point: exit codes 0 ok, 1 failed, 2 bad usage or input."""
    from squad.cli.help import command
    from squad.pydantic_plugins import answer_plugin_lookup

    answer_plugin_lookup()  # before typer coerces the first parameter with pydantic
    try:
        command(app)(prog_name="squad")
    except SquadError as error:
        from squad.cli.output import report_error

        report_error(error)
        sys.exit(error.exit_code)
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        sys.exit(130)
