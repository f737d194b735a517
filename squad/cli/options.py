"""Options that several commands share, declared once."""

from __future__ import annotations

from typing import Annotated

import typer

__all__ = ["TimeoutOption"]

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
"""``--timeout`` of the search commands (None: squad.text.search.DEFAULT_TIMEOUT_S)."""
