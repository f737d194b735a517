"""Credentials never travel: what an export writes, and what an import reads, is scanned.

Every text file of the workspace, every fact, decision, boot file and the squad's YAML goes
through :func:`squad.text.secrets.find_secrets`. In the history, the changes of every commit
squad did not make itself (a person's ``git commit`` in the workspace) are scanned too; those
squad made were checked when they were made, by the same detector (files when staged, memory
when written), so they are not read again: an export of 10,000 runs stays quick. A find names
where it is and the kind of credential, never the value.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from squad.history.engine import blob_bytes
from squad.history.log import commits
from squad.history.staging import added_text

__all__ = ["Finding", "scan_history", "scan_text", "scan_tree", "squad_made"]

MAX_SCAN_BYTES = 2 * 1024 * 1024
"""Larger text files are scanned in their first part only (credentials sit near cues)."""
_BINARY_PROBE = 8192


@dataclass(frozen=True)
class Finding:
    where: str
    kinds: tuple[str, ...]

    def __str__(self) -> str:
        return f"{self.where}: {', '.join(self.kinds)}"


def scan_text(where: str, text: str) -> Finding | None:
    from squad.text.secrets import find_secrets

    found = find_secrets(text)
    if not found:
        return None
    first = found[0]
    line = text.count("\n", 0, first.start) + 1
    return Finding(f"{where} line {line}", tuple(dict.fromkeys(m.kind for m in found)))


def _text_of(data: bytes) -> str | None:
    if b"\0" in data[:_BINARY_PROBE]:
        return None
    return data[:MAX_SCAN_BYTES].decode("utf-8", "replace")


def scan_tree(root: Path, prefix: str, *, skip: Iterable[str] = (".git",)) -> list[Finding]:
    """Findings in the text files under ``root`` (named ``prefix/<path>``), ``skip`` (names
    of folders at its top) left out."""
    skipped = set(skip)
    found: list[Finding] = []
    for folder, folders, files in os.walk(root):
        here = Path(folder)
        if here == root:
            folders[:] = [f for f in folders if f not in skipped]
        for name in files:
            path = here / name
            if path.is_symlink() or not path.is_file():
                continue
            text = _text_of(path.read_bytes())
            if text is None:
                continue
            finding = scan_text(f"{prefix}/{path.relative_to(root).as_posix()}", text)
            if finding is not None:
                found.append(finding)
    return found


def squad_made(commit: Any) -> bool:
    """Whether squad made ``commit`` (its committer is ``squad`` or ``squad on <node>``)."""
    name = str(commit.committer.name)
    return name == "squad" or name.startswith("squad on ")


def scan_history(repo: Any) -> list[Finding]:
    """Findings in what commits squad did not make added to the history."""
    found: list[Finding] = []
    for commit in commits(repo):
        if squad_made(commit):
            continue
        for path, before, after in _changes(repo, commit):
            text = _text_of(after)
            if text is None:
                continue
            added = added_text(before, after) if before is not None else text
            finding = scan_text(f"history {str(commit.id)[:10]} {path}", added)
            if finding is not None:
                found.append(finding)
    return found


def _changes(repo: Any, commit: Any) -> Iterator[tuple[str, bytes | None, bytes]]:
    parent = commit.parents[0].tree if commit.parents else None
    diff = commit.tree.diff_to_tree(swap=True) if parent is None else repo.diff(parent, commit.tree)
    for delta in diff.deltas:
        if delta.status_char() == "D":
            continue
        after = blob_bytes(repo, delta.new_file.id)
        if after is None:
            continue
        before = None
        if parent is not None and delta.status_char() != "A":
            before = blob_bytes(repo, delta.old_file.id)
        yield delta.new_file.path, before, after
