"""How the CLI speaks: rich on a terminal, plain lines otherwise, JSON when asked.

Results go to stdout, problems to stderr. Nothing here imports rich until a terminal needs it.
"""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any, TextIO

from squad.errors import ConfigError, SquadError

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["Output", "report_error"]


class Output:
    """One command's output channel."""

    def __init__(self, *, json_mode: bool = False, stream: TextIO | None = None) -> None:
        self.json_mode = json_mode
        self.stream = stream or sys.stdout
        self.rich = not json_mode and self.stream.isatty()
        self._console: Console | None = None

    @property
    def console(self) -> Console:
        if self._console is None:
            from rich.console import Console

            self._console = Console(file=self.stream, highlight=False, soft_wrap=True)
        return self._console

    def json(self, data: Any) -> None:
        self.stream.write(json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n")

    def line(self, text: str = "", *, style: str | None = None) -> None:
        if self.rich:
            from rich.text import Text

            self.console.print(Text(text, style=style or ""))
        else:
            self.stream.write(text + "\n")

    def render(self, renderable: Any) -> None:
        self.console.print(renderable)


def report_error(error: SquadError, stream: TextIO | None = None) -> None:
    """Print an error for a person: each problem on its own line, no traceback."""
    out = stream or sys.stderr
    if isinstance(error, ConfigError):
        for problem in error.problems:
            out.write(f"error: {problem.render()}\n")
    else:
        out.write(f"error: {error}\n")
