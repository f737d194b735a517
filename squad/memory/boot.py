"""Boot memory: ``SOUL.md`` (persona), ``USER.md`` (user preferences), ``AGENTS.md`` (work
rules) in the squad home, plus an optional ``AGENTS.md`` at a workspace's root.

Files are read from disk at every prompt build, so a hand edit applies to the next turn.
Empty or missing files are left out of prompts entirely. A default ``SOUL.md`` is written
when the home has none (an emptied one is respected).

A write replaces the whole file with the given text, in the file's own style: a byte-order
mark and CRLF (or CR) line endings it had are kept when the text comes without them (text
read by the CLI or through an editor arrives with ``\n`` endings). A read-only boot file, or
a folder in its place, is refused with nothing written.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from squad.clock import Clock, utc_now
from squad.errors import MemoryError_, MemoryFullError, StaleWriteError, UsageError
from squad.fsutil import atomic_write, create_new, private_dir
from squad.history.hooks import NO_HISTORY, WriteHook
from squad.memory.assembly import BootFile
from squad.memory.audit import AuditLog, AuditRecord, sha256_text
from squad.memory.document import BOM, line_ending
from squad.memory.file_io import locked, read_file_bytes, refuse_read_only, refuse_unencodable
from squad.paths import contained

__all__ = [
    "BOOT_FILES",
    "BootName",
    "boot_path",
    "boot_version",
    "ensure_default_soul",
    "load_boot_files",
    "read_boot_file",
    "write_boot_file",
]

BootName = Literal["soul", "user", "agents"]
BOOT_FILES: dict[str, tuple[str, str]] = {
    "soul": ("SOUL.md", "Persona (SOUL.md)"),
    "user": ("USER.md", "User preferences (USER.md)"),
    "agents": ("AGENTS.md", "Work rules (AGENTS.md)"),
}
WORKSPACE_RULES_TITLE = "Workspace rules (AGENTS.md in this workspace)"


def boot_path(home: Path, name: str, workspace: Path | None = None) -> Path:
    if name not in BOOT_FILES:
        raise UsageError(f"unknown boot file {name!r}; use one of: soul, user, agents")
    if workspace is not None:
        if name != "agents":
            raise UsageError("only AGENTS.md can be set per workspace (--squad)")
        return contained(workspace, "AGENTS.md")
    return home / BOOT_FILES[name][0]


def ensure_default_soul(home: Path) -> bool:
    """Write the default persona when the home has no SOUL.md; True if it was written."""
    from squad.prompts import load

    if (home / "SOUL.md").exists():  # every prompt build asks: answer from a stat
        return False
    private_dir(home)
    return create_new(home / "SOUL.md", load("SOUL.md").encode())


def _read(path: Path) -> str:
    """The file's text for a prompt ('' when missing or not a file; U+FFFD for bytes that
    are not UTF-8; without a byte-order mark)."""
    if not path.is_file():  # a folder or pipe is no boot file; never wait on a pipe
        return ""
    raw = read_file_bytes(path, str(path)) or b""
    return raw.decode("utf-8", errors="replace").removeprefix(BOM)


def _in_style_of(old: bytes, text: str) -> str:
    """``text`` with the byte-order mark and line ending ``old`` has, when it lacks them."""
    if old.startswith(BOM.encode()) and not text.startswith(BOM):
        text = BOM + text
    newline = line_ending(old.decode("latin-1"))  # one character per byte: any bytes decode
    if newline != "\n" and "\r" not in text:
        text = text.replace("\n", newline)
    return text


def load_boot_files(home: Path, workspace: Path | None = None) -> list[BootFile]:
    """The non-empty boot files in prompt order: SOUL, USER, global AGENTS, workspace AGENTS."""
    files = [BootFile(title, _read(home / name)) for name, title in BOOT_FILES.values()]
    if workspace is not None:
        files.append(BootFile(WORKSPACE_RULES_TITLE, _read(contained(workspace, "AGENTS.md"))))
    return [f for f in files if f.text.strip()]


def write_boot_file(
    home: Path,
    name: str,
    text: str,
    *,
    cap_bytes: int,
    actor: str = "cli",
    workspace: Path | None = None,
    clock: Clock = utc_now,
    expected_version: str | None = None,
    history: WriteHook = NO_HISTORY,
) -> Path:
    """Replace a boot file atomically, refusing credentials and anything over ``cap_bytes``;
    a workspace's ``AGENTS.md`` change is committed to its ``history``.

    With ``expected_version`` (:func:`boot_version` of what the writer read), a file changed
    since is a :class:`StaleWriteError` and nothing is written: an editor never overwrites an
    edit it did not see. Writers hold the file's lock from the check to the audit record."""
    path = boot_path(home, name, workspace)
    refuse_unencodable(text, what=f"text for {path.name}")
    path.parent.mkdir(parents=True, exist_ok=True)
    with history.writing(actor) as wrote, locked(path):
        old = read_file_bytes(path, str(path))
        written = _write_locked(
            path, text, cap_bytes, actor, workspace or home, clock, expected_version
        )
        if workspace is not None:
            wrote(path.relative_to(workspace).as_posix(), old, path.read_bytes())
        return written


def boot_version(data: bytes | None) -> str:
    """The version of a boot file's bytes (sha256; '' for a missing or empty file)."""
    return sha256_text(data) if data else ""


def read_boot_file(home: Path, name: str, workspace: Path | None = None) -> tuple[str, str]:
    """A boot file's text (U+FFFD for bytes that are not UTF-8) and its version."""
    path = boot_path(home, name, workspace)
    data = read_file_bytes(path, str(path))
    return (data or b"").decode("utf-8", errors="replace"), boot_version(data)


def _write_locked(
    path: Path,
    text: str,
    cap_bytes: int,
    actor: str,
    audit_root: Path,
    clock: Clock,
    expected_version: str | None,
) -> Path:
    from squad.text.secrets import refuse_secrets  # the credential scanner: only for a write

    old = read_file_bytes(path, str(path))
    if expected_version is not None and boot_version(old) != expected_version:
        raise StaleWriteError(
            f"{path.name} changed since it was read; nothing was written. Read it again "
            "and redo the edit"
        )
    if old is not None:
        refuse_read_only(path, str(path))
        text = _in_style_of(old, text)
    data = text.encode("utf-8")
    if len(data) > cap_bytes:
        raise MemoryFullError(
            f"{path.name} would be {len(data):,} bytes, over the {cap_bytes:,}-byte cap; "
            "nothing was written. Shorten it"
        )
    refuse_secrets(text, what=path.name)
    try:
        atomic_write(path, data)
    except OSError as exc:
        raise MemoryError_(f"cannot write {path}: {exc.strerror}") from None
    AuditLog(audit_root).append(
        AuditRecord(
            time=clock().isoformat(),
            actor=actor,
            operation="write",
            file=path.name,
            section=None,
            old_sha256=sha256_text(old) if old else None,
            new_sha256=sha256_text(data),
            bytes=len(data),
        )
    )
    return path
