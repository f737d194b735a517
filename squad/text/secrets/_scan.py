"""Line ends found once per text: the finders ask for the end of a cue's line at each cue, and
on a long line (minified JSON, a log with no newlines, base64 on one line) asking
``text.find("\\n", pos)`` afresh each time reads the rest of the line each time: quadratic."""

from __future__ import annotations

__all__ = ["NextNewline"]


class NextNewline:
    """``text.find("\\n", pos)``, remembered: for positions asked in increasing order, each
    character of ``text`` is read at most once over all the calls."""

    def __init__(self, text: str) -> None:
        self._text = text
        self._from = 0
        self._at = text.find("\n")
        """No newline in ``text[_from:_at]``; ``_at`` is one, or -1: none after ``_from``."""

    def __call__(self, pos: int) -> int:
        if pos < self._from or (self._at >= 0 and pos > self._at):
            self._from, self._at = pos, self._text.find("\n", pos)
        return self._at
