"""How the CLI speaks: rich on a terminal, plain lines otherwise, JSON when asked.

Results go to stdout, problems to stderr. Nothing here imports rich until a terminal needs it.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, TextIO

from squad.errors import ConfigError, SquadError

if TYPE_CHECKING:
    from rich.console import Console

    from squad.text.grep import Skipped

__all__ = ["Output", "human_size", "report_error", "skip_notes", "visible"]


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
        """``data`` as JSON; a view (a pydantic model, or a list of them) as its
        ``model_dump(mode="json")``, as the HTTP API and MCP send it."""
        from pydantic import BaseModel

        if isinstance(data, BaseModel):
            data = data.model_dump(mode="json")
        elif isinstance(data, list) and data and isinstance(data[0], BaseModel):
            data = [item.model_dump(mode="json") for item in data]
        self.stream.write(json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n")

    def line(self, text: str = "", *, style: str | None = None) -> None:
        """One line for a person; control characters (escape sequences from model output or
        a file) are shown as ``\\xNN``, never sent to the terminal."""
        text = visible(text)
        if self.rich:
            from rich.text import Text

            self.console.print(Text(text, style=style or ""))
        else:
            self.stream.write(text + "\n")

    def render(self, renderable: Any) -> None:
        self.console.print(renderable)


_CONTROLS = {
    code: f"\\x{code:02x}"
    for code in [*range(0x00, 0x20), *range(0x7F, 0xA0)]
    if chr(code) not in "\n\t"
}


def visible(text: str) -> str:
    """``text`` with every control character but newline and tab written as ``\\xNN`` (a
    CR before a newline is dropped), so it cannot move the cursor or recolour the terminal."""
    return text.replace("\r\n", "\n").translate(_CONTROLS)


def report_error(error: SquadError, stream: TextIO | None = None) -> None:
    """Print an error for a person: each problem on its own line, no traceback."""
    out = stream or sys.stderr
    if isinstance(error, ConfigError):
        for problem in error.problems:
            out.write(f"error: {visible(problem.render())}\n")
    else:
        out.write(f"error: {visible(str(error))}\n")


def human_size(n: int) -> str:
    """``512 B``, ``4.8 MiB``: sizes as a person reads them."""
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    raise AssertionError("unreachable")


_NAMED = 5
"""Paths named per reason in a skip note; ``--json`` lists them all."""


def skip_notes(skipped: Iterable[Skipped], *, max_file_bytes: int, noun: str = "file") -> list[str]:
    """One line per reason a search skipped files, naming the first few:
    ``skipped 1 file over 4.8 MiB: big.log``."""
    by_reason: dict[str, list[str]] = {}
    for item in skipped:
        by_reason.setdefault(item.reason, []).append(item.path)
    notes = []
    for reason, paths in sorted(by_reason.items()):
        count = len(paths)
        nouns = noun if count == 1 else f"{noun}s"
        what = {
            "too_large": f"{nouns} over {human_size(max_file_bytes)}",
            "binary": f"binary or non-UTF-8 {nouns}",
            "link": "symbolic link (not followed)"
            if count == 1
            else "symbolic links (not followed)",
            "special": f"special {nouns} (FIFO, socket or device)",
            "unreadable": f"unreadable {nouns} (no permission or an I/O error)",
            "vanished": f"{nouns} removed while searching",
        }.get(reason, f"{nouns} ({reason})")
        named = ", ".join(paths[:_NAMED])
        if count > _NAMED:
            named += f" and {count - _NAMED} more (--json lists them all)"
        notes.append(f"skipped {count} {what}: {named}")
    return notes
