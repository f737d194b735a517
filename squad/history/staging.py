"""What may enter a workspace's history: nothing holding a credential, nothing too large.

Memory files reach a commit only through squad's guarded writes, which refuse credentials;
task outputs, plans and files agents write with their file tool do not, and neither do a
person's edits. So every file a run's or a hand edit's commit stages is checked: what it
adds to the committed version (the changed lines, with a few lines before each for the
cues the detector reads, or the whole file when it is new) goes through
:func:`squad.text.secrets.find_secrets`. A file that holds a credential, or is larger than
the cap, stays out of the commit (the commit says so, naming the file and the kind of
credential, never the value), and stays as it is on disk.
"""

from __future__ import annotations

from dataclasses import dataclass
from difflib import SequenceMatcher

__all__ = ["DEFAULT_MAX_FILE_BYTES", "StagingPolicy", "added_text"]

DEFAULT_MAX_FILE_BYTES = 20 * 1024 * 1024
CONTEXT_LINES = 3
"""Unchanged lines kept before each changed part: where a credential's cue may be."""
_BINARY_PROBE = 8192


@dataclass(frozen=True)
class StagingPolicy:
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES

    def refusal(self, path: str, before: bytes | None, after: bytes) -> str | None:
        """Why ``path`` (committed as ``before``, now ``after``) stays out, or None."""
        if len(after) > self.max_file_bytes:
            return (
                f"{len(after):,} bytes, over the history's {self.max_file_bytes:,}-byte cap "
                "(history.max_file_mb)"
            )
        if b"\0" in after[:_BINARY_PROBE] or _squads_own(path):
            return None  # binary (the detector reads text), or written by squad from its data
        text = added_text(before, after)
        if not text.strip():
            return None
        from squad.text.secrets import find_secrets

        found = find_secrets(text)
        if found:
            kinds = ", ".join(dict.fromkeys(m.kind for m in found))
            return f"holds a credential: {kinds}"
        return None


def _squads_own(path: str) -> bool:
    """Files squad writes from its own records (a task's state, the manifest, the ignore
    rules): no model and no person wrote their text."""
    name = path.rsplit("/", 1)[-1]
    if path in (".squad-config.json", ".gitignore"):
        return True
    return name == "status.json" and (path.startswith(("tasks/", "runs/")))


def added_text(before: bytes | None, after: bytes) -> str:
    """What ``after`` adds to ``before``: changed lines with the lines just before them."""
    new = after.decode("utf-8", "replace").splitlines()
    if before is None:
        return "\n".join(new)
    old = before.decode("utf-8", "replace").splitlines()
    keep: set[int] = set()
    for tag, _, _, j1, j2 in SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        if tag in ("replace", "insert"):
            keep.update(range(max(0, j1 - CONTEXT_LINES), j2))
    out: list[str] = []
    last = -2
    for index in sorted(keep):
        if index != last + 1 and out:
            out.append("")
        out.append(new[index])
        last = index
    return "\n".join(out)
