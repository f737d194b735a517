"""Carry one write's change over to another version of the file (pure).

A memory change made outside a run (an extraction pass, ``squad memory remember``, a revert)
is committed on its own, while a run may be writing the same ``memory.md``: the working file
then holds the run's lines, not committed yet, beside the change. The change's commit must
hold the change and nothing else, so its blob is the committed version with the write's own
edit applied: :func:`carry_over` replays the edit from ``before`` to ``after`` onto ``head``,
line by line, anchored on the lines around each edit. An edit whose anchors ``head`` lacks
cannot be placed; the caller then commits ``after`` as it is (and says so).
"""

from __future__ import annotations

from difflib import SequenceMatcher

__all__ = ["carry_over", "split_lines"]


def split_lines(data: bytes) -> list[bytes]:
    """``data`` as lines that keep their endings (``b"".join`` gives ``data`` back)."""
    return data.splitlines(keepends=True)


def carry_over(before: bytes, after: bytes, head: bytes) -> bytes | None:
    """``head`` with the edit ``before -> after`` applied; None when it cannot be placed.

    When ``head`` is ``before`` (nothing else changed the file) the answer is ``after``.
    """
    if head == before:
        return after
    old, new, base = split_lines(before), split_lines(after), split_lines(head)
    position = _positions(old, base)
    edits: list[tuple[int, int, list[bytes]]] = []
    for tag, i1, i2, j1, j2 in SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        placed = _place(i1, i2, position, len(old), len(base))
        if placed is None:
            return None
        edits.append((*placed, new[j1:j2]))
    result = list(base)
    for start, end, lines in sorted(edits, key=lambda e: (e[0], e[1]), reverse=True):
        result[start:end] = lines
    return _joined(result)


def _positions(old: list[bytes], base: list[bytes]) -> dict[int, int]:
    """Where each line of ``old`` that ``base`` kept sits in ``base``."""
    found: dict[int, int] = {}
    matcher = SequenceMatcher(None, old, base, autojunk=False)
    for a, b, size in matcher.get_matching_blocks():
        for k in range(size):
            found[a + k] = b + k
    return found


def _place(
    i1: int, i2: int, position: dict[int, int], old_len: int, base_len: int
) -> tuple[int, int] | None:
    """The span of ``base`` that the edit of ``old[i1:i2]`` replaces, or None."""
    if i2 > i1:  # lines replaced or deleted: each must be in base, one after another
        spots = [position.get(i) for i in range(i1, i2)]
        if any(s is None for s in spots):
            return None
        first = spots[0]
        assert first is not None
        if spots != list(range(first, first + len(spots))):
            return None
        return first, first + len(spots)
    # An insertion: after the line before it, else before the line after it.
    if i1 == 0:
        return 0, 0
    if i1 - 1 in position:
        at = position[i1 - 1] + 1
        return at, at
    if i1 < old_len and i1 in position:
        at = position[i1]
        return at, at
    if i1 == old_len:  # appended at the end, after lines head does not have
        return base_len, base_len
    return None


def _joined(lines: list[bytes]) -> bytes:
    """Join lines, giving a line that lost its ending (it was last) one before another."""
    out = bytearray()
    for index, line in enumerate(lines):
        out += line
        if index < len(lines) - 1 and not line.endswith((b"\n", b"\r")):
            out += b"\n"
    return bytes(out)
