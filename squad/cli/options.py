"""Options that several commands share, declared once."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

__all__ = ["ConfigsOption", "TimeoutOption"]

TimeoutOption = Annotated[
    float | None,
    typer.Option(
        "--timeout",
        min=0.001,
        max=3600,
        help="Seconds one line (or fact) may take to match before the search stops with an "
        "error (a pattern that backtracks); default 2.",
        show_default=False,
    ),
]
"""``--timeout`` of the search commands (None: squad.text.grep.DEFAULT_TIMEOUT_S)."""

ConfigsOption = Annotated[
    Path | None,
    typer.Option(
        "--configs",
        help="The folder of squad YAML files (default: configs/squads, or SQUAD_CONFIGS/squads).",
        show_default=False,
    ),
]
"""``--configs`` of ``squad daemon``, ``squad dashboard`` and ``squad status``."""
