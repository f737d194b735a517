"""The message of a memory change's commit: what changed, line by line, and who did it (pure)."""

from __future__ import annotations

from difflib import SequenceMatcher

from squad.history.change import Change
from squad.history.message import MAX_BODY_LINES, Kind, compose, fact_trailer

__all__ = ["line_changes", "memory_message"]


def line_changes(before: bytes | None, after: bytes | None) -> tuple[list[str], list[str]]:
    """The lines ``after`` removed from ``before`` and the lines it added, in file order."""
    old = (before or b"").decode("utf-8", "replace").splitlines()
    new = (after or b"").decode("utf-8", "replace").splitlines()
    removed: list[str] = []
    added: list[str] = []
    for tag, i1, i2, j1, j2 in SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        if tag in ("replace", "delete"):
            removed += old[i1:i2]
        if tag in ("replace", "insert"):
            added += new[j1:j2]
    return removed, added


def _agents(change: Change, paths: list[str]) -> list[str]:
    found = [change.agent] if change.agent else []
    for path in paths:
        parts = path.split("/")
        if len(parts) > 2 and parts[0] == "agents":
            found.append(parts[1])
    found += [f.agent for f in change.facts]
    return list(dict.fromkeys(found))


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def memory_message(
    change: Change,
    before: dict[str, bytes | None],
    after: dict[str, bytes | None],
    mixed: list[str],
) -> str:
    """The commit message of ``change``: files as committed (``before`` -> ``after``)."""
    body: list[str] = []
    added_total = removed_total = 0
    for path in after:
        removed, added = line_changes(before.get(path), after[path])
        added_total += len(added)
        removed_total += len(removed)
        body.append(f"{path}:")
        if change.lines_hidden:
            if before.get(path) is None:
                body.append(f"  new to the history: {_plural(len(added), 'line')} (not shown)")
            else:
                body.append(f"  {_plural(len(removed), 'line')} rewritten (not shown)")
            continue
        shown = [f"  - {line}" for line in removed] + [f"  + {line}" for line in added]
        body += shown[:MAX_BODY_LINES]
        if len(shown) > MAX_BODY_LINES:
            body.append(f"  ... {len(shown) - MAX_BODY_LINES} more lines")
    for fact in change.facts:
        body.append(f"fact {fact.fact_id} {fact.op.value} ({fact.agent}): {fact.text}")
    for path in mixed:
        body.append(
            f"note: {path} also holds changes written beside this one (they could not be "
            "told apart)"
        )
    body += change.notes
    agents = _agents(change, list(after))
    counts = []
    if added_total:
        counts.append(f"+{_plural(added_total, 'line')}")
    if removed_total:
        counts.append(f"-{_plural(removed_total, 'line')}")
    for op in dict.fromkeys(f.op for f in change.facts):
        number = sum(f.op is op for f in change.facts)
        counts.append(f"{_plural(number, 'fact')} {op.value}")
    subject = change.subject or f"memory: {change.author}"
    if change.subject is None and agents:
        subject += f" for {', '.join(agents)}"
    if counts:
        subject += f" ({', '.join(counts)})"
    trailers = [("Squad-Kind", Kind.MEMORY.value), ("Squad-Actor", change.author)]
    trailers += [("Squad-Agent", agent) for agent in agents]
    trailers += change.trailers
    trailers += [fact_trailer(f) for f in change.facts]
    return compose(subject, body, trailers)
