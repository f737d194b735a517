"""What the agent's ``memory_read`` tool shows: boot files and memory.md, bounded. Pure.

The targets are the source design's: ``soul`` (SOUL.md), ``user`` (USER.md), ``agents``
(AGENTS.md, the home's and the workspace's), ``memory`` (the agent's memory.md) and ``all``.
Each file is shown as the system prompt shows it: a boot file under its title, memory.md
inside the untrusted-memory frame with its warning, as hints, never instructions; every
text has any form of the frame's tag defused (:func:`squad.memory.untrusted.defuse`), so a
file cannot open or close a frame in the answer. Each file shows at most
:data:`READ_MAX_CHARS` characters, cut at a whole line, with a notice of what was left out.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, get_args

from squad.memory.assembly import CLOSE_MARK, OPEN_MARK, WARNING, BootFile
from squad.memory.untrusted import defuse

__all__ = ["READ_MAX_CHARS", "ReadTarget", "bounded", "read_targets", "render_read"]

ReadTarget = Literal["soul", "user", "agents", "memory", "all"]
READ_MAX_CHARS = 12_000
"""Characters shown of one file (about 3,000 tokens): a tool answer stays a reasonable size."""
MEMORY_TITLE = "Project memory (memory.md)"


def read_targets() -> tuple[str, ...]:
    return get_args(ReadTarget)


def bounded(text: str, limit: int = READ_MAX_CHARS, hint: str = "") -> str:
    """``text`` cut to whole lines within ``limit`` characters, saying how much was left out."""
    if len(text) <= limit:
        return text
    lines = text.splitlines()
    shown: list[str] = []
    used = 0
    for line in lines:
        if used + len(line) + 1 > limit:
            break
        shown.append(line)
        used += len(line) + 1
    left = len(lines) - len(shown)
    return "\n".join([*shown, f"[... {left} more lines not shown{hint}]"])


def render_read(boot: Sequence[BootFile], memory: str | None, limit: int = READ_MAX_CHARS) -> str:
    """The boot files under their titles, then memory.md (None: not asked for) framed."""
    parts = [f"## {b.title}\n{bounded(defuse(b.text.strip()), limit)}" for b in boot]
    if memory is not None:
        body = bounded(defuse(memory.strip()), limit, "; read one section at a time") or "(empty)"
        parts.append("\n".join([f"## {MEMORY_TITLE}", OPEN_MARK, WARNING, body, CLOSE_MARK]))
    return "\n\n".join(parts)
