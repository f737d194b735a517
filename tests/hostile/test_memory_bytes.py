"""Hand-edited, odd or broken ``memory.md`` bytes: a write never changes bytes it did not mean to.

Decisions pinned here: a ``memory.md`` that is not valid UTF-8, is read-only, or is not a file
is refused (``MemoryFileError``, exit 2, the file byte-identical); reading it for display or a
prompt still works (U+FFFD for bad bytes). A byte-order mark, the line ending and the mode of
the file are kept. An unclosed code fence already in the file is blamed on the file, with its
line. Daily logs are appended to byte for byte.
"""

from __future__ import annotations

import os
import re
import stat
import tempfile
from datetime import date
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from squad.errors import MemoryError_, MemoryFileError, SquadError
from squad.memory.audit import AuditLog, sha256_text
from squad.memory.boot import load_boot_files, write_boot_file
from squad.memory.daily import DailyLog
from squad.memory.document import BOM, MemoryDocument
from squad.memory.files import MemoryFile

SEED = "# Project Context\n\n# Coding Rules\n\n# Decisions\n\n# Insights\n"
DAY = date(2025, 1, 2)


def make_file(root: Path, data: bytes | None = None) -> MemoryFile:
    (root / "agents" / "planner").mkdir(parents=True, exist_ok=True)
    file = MemoryFile(root, "planner")
    if data is not None:
        file.path.write_bytes(data)
    return file


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return tmp_path / "ws"


# --- explicit probes: each failed before the fix -------------------------------------------


def test_invalid_utf8_is_refused_naming_offset_and_line_and_the_file_is_untouched(
    workspace: Path,
) -> None:
    data = b"# Project Context\n- caf\xe9 au lait\n\n# Insights\n- a\n"
    file = make_file(workspace, data)
    with pytest.raises(MemoryFileError) as caught:
        file.append("Insights", "- b", actor="me")
    message = str(caught.value)
    assert "agents/planner/memory.md is not valid UTF-8" in message
    assert "byte offset 23 (line 2, column 6) holds 0xe9" in message
    assert "nothing was written" in message and "UTF-8" in message
    assert caught.value.exit_code == 2
    assert file.path.read_bytes() == data
    assert AuditLog(workspace).records() == []
    # Reading for display or a prompt still works, with a replacement character.
    assert file.read("Project Context") == "- caf\ufffd au lait\n\n"
    assert file.snapshot().version == sha256_text(data)


def test_replace_of_an_invalid_utf8_file_is_refused_too(workspace: Path) -> None:
    data = b"# Insights\n- a\n\xff\xfe\n"
    file = make_file(workspace, data)
    with pytest.raises(MemoryFileError, match=r"line 3, column 1\) holds 0xff"):
        file.replace("Insights", "- b", actor="me", automatic=True)
    assert file.path.read_bytes() == data


def test_a_byte_order_mark_does_not_hide_the_first_heading_and_is_kept(
    workspace: Path,
) -> None:
    data = (BOM + "# Project Context\n- React\n\n# Insights\n- a\n").encode()
    file = make_file(workspace, data)
    assert file.snapshot().document.names == ["Project Context", "Insights"]
    assert file.read("Project Context") == "- React\n\n"
    file.append("Project Context", "- TypeScript", actor="me")
    after = file.path.read_bytes()
    assert after == (BOM + "# Project Context\n- React\n- TypeScript\n\n# Insights\n- a\n").encode()
    assert not file.read().startswith(BOM)  # shown and injected without it


def test_a_crlf_file_gets_crlf_for_the_new_text(workspace: Path) -> None:
    data = SEED.replace("\n", "\r\n").encode()
    file = make_file(workspace, data)
    file.append("Decisions", "- JWT for auth\n- REST", actor="me")
    file.append("API Notes", "- uses REST", actor="me")
    after = file.path.read_bytes()
    assert re.search(rb"(?<!\r)\n", after) is None, after
    assert after.startswith(data.split(b"# Decisions")[0])
    assert b"# Decisions\r\n- JWT for auth\r\n- REST\r\n\r\n# Insights\r\n" in after
    assert after.endswith(b"# API Notes\r\n- uses REST\r\n")


def test_a_read_only_memory_file_is_refused_and_stays_read_only(workspace: Path) -> None:
    file = make_file(workspace, SEED.encode())
    file.path.chmod(0o444)
    with pytest.raises(MemoryFileError, match=r"is read-only \(mode 0444\).*chmod u\+w"):
        file.append("Insights", "- x", actor="me")
    assert stat.S_IMODE(file.path.stat().st_mode) == 0o444
    assert file.path.read_bytes() == SEED.encode()


def test_a_write_keeps_the_mode_of_the_file(workspace: Path) -> None:
    file = make_file(workspace, SEED.encode())
    file.path.chmod(0o600)
    file.append("Insights", "- x", actor="me")
    assert stat.S_IMODE(file.path.stat().st_mode) == 0o600


def test_a_folder_named_memory_md_is_a_clear_error(workspace: Path) -> None:
    file = make_file(workspace)
    file.path.mkdir()
    for action in (
        file.snapshot,
        file.read,
        lambda: file.append("Insights", "- x", actor="me"),
    ):
        with pytest.raises(MemoryFileError, match=r"memory\.md is a folder, not a file"):
            action()
    assert file.path.is_dir()


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_a_pipe_named_memory_md_is_refused_without_waiting(workspace: Path) -> None:
    file = make_file(workspace)
    os.mkfifo(file.path)
    with pytest.raises(MemoryFileError, match=r"memory\.md is a named pipe, not a file"):
        file.snapshot()


def test_an_unclosed_fence_already_in_the_file_is_blamed_on_the_file(workspace: Path) -> None:
    data = b"# Decisions\n- a\n\n# Insights\n- b\n```python\nx = 1\n"
    file = make_file(workspace, data)
    for section in ("Insights", "New Section"):
        with pytest.raises(MemoryFileError) as caught:
            file.append(section, "- plain words", actor="me")
        message = str(caught.value)
        assert message.startswith("agents/planner/memory.md: line 6 opens a ``` code fence")
        assert "the new text is not the problem" in message
        assert "add a closing ``` line" in message
        assert file.path.read_bytes() == data
    # A section before the fence can still take text: its sections parse as before.
    file.append("Decisions", "- c", actor="me")
    assert file.path.read_bytes() == data.replace(b"- a\n", b"- a\n- c\n")
    # Replacing the section that holds the fence is an edit of the fence itself: allowed.
    file.replace("Insights", "- b", actor="me")
    assert file.read("Insights") == "- b\n"


def test_an_unclosed_fence_in_the_new_text_is_blamed_on_the_text(workspace: Path) -> None:
    file = make_file(workspace, SEED.encode())
    with pytest.raises(MemoryError_) as caught:  # even in the last section, where it hid nothing
        file.append("Insights", "- see\n```sh\nmake test", actor="me")
    assert not isinstance(caught.value, MemoryFileError)
    assert "the text would change the sections" in str(caught.value)
    assert "opens a ``` code fence on its line 2" in str(caught.value)
    assert file.path.read_bytes() == SEED.encode()


def test_text_that_is_not_unicode_is_refused_without_a_traceback(workspace: Path) -> None:
    file = make_file(workspace, SEED.encode())
    with pytest.raises(MemoryError_, match="not a Unicode character"):
        file.append("Insights", "- broken \ud800 surrogate", actor="me")
    with pytest.raises(MemoryError_, match="not a Unicode character"):
        DailyLog(workspace, "planner").append("broken \udfff", actor="me", day=DAY)
    assert file.path.read_bytes() == SEED.encode()


# --- siblings: daily logs and boot files ---------------------------------------------------


def test_a_daily_log_keeps_bytes_it_cannot_decode_and_its_crlf(workspace: Path) -> None:
    log = DailyLog(workspace, "planner")
    path = log.path_for(DAY)
    path.parent.mkdir(parents=True)
    data = b"# 2025-01-02\r\n\r\n## 09:00:00 me\r\n\r\nlatin-1 caf\xe9\r\n"
    path.write_bytes(data)
    log.append("two\nlines", actor="agent:planner", day=DAY)
    after = path.read_bytes()
    assert after.startswith(data)
    assert re.search(rb"(?<!\r)\n", after) is None
    assert after.endswith(b"\r\n\r\ntwo\r\nlines\r\n")
    assert "caf\ufffd" in log.read(DAY) and "\r" not in log.read(DAY)


def test_a_read_only_or_folder_daily_log_is_a_clear_error(workspace: Path) -> None:
    log = DailyLog(workspace, "planner")
    path = log.path_for(DAY)
    path.parent.mkdir(parents=True)
    path.write_bytes(b"# 2025-01-02\n")
    path.chmod(0o444)
    with pytest.raises(MemoryFileError, match="read-only"):
        log.append("x", actor="me", day=DAY)
    assert path.read_bytes() == b"# 2025-01-02\n"
    path.unlink()
    path.mkdir()
    with pytest.raises(MemoryFileError, match="is a folder"):
        log.append("x", actor="me", day=DAY)
    with pytest.raises(MemoryFileError, match="is a folder"):
        log.read(DAY)


def test_a_boot_file_write_keeps_its_bom_crlf_and_mode(tmp_path: Path) -> None:
    soul = tmp_path / "SOUL.md"
    soul.write_bytes((BOM + "Be candid.\r\nBe brief.\r\n").encode())
    soul.chmod(0o600)
    assert load_boot_files(tmp_path)[0].text == "Be candid.\r\nBe brief.\r\n"  # no BOM in prompts
    write_boot_file(tmp_path, "soul", "Be candid.\nBe kind.\n", cap_bytes=1000)
    assert soul.read_bytes() == (BOM + "Be candid.\r\nBe kind.\r\n").encode()
    assert stat.S_IMODE(soul.stat().st_mode) == 0o600


def test_a_read_only_boot_file_is_refused(tmp_path: Path) -> None:
    user = tmp_path / "USER.md"
    user.write_bytes(b"Prefers tables.\n")
    user.chmod(0o444)
    with pytest.raises(MemoryFileError, match="read-only"):
        write_boot_file(tmp_path, "user", "Prefers lists.", cap_bytes=1000)
    assert user.read_bytes() == b"Prefers tables.\n"


def test_a_boot_file_that_is_not_utf8_is_readable_and_audited_by_its_bytes(
    tmp_path: Path,
) -> None:
    old = b"Prefers caf\xe9.\n"
    (tmp_path / "USER.md").write_bytes(old)
    assert load_boot_files(tmp_path)[0].text == "Prefers caf\ufffd.\n"
    write_boot_file(tmp_path, "user", "Prefers tea.\n", cap_bytes=1000)
    (record,) = AuditLog(tmp_path).records()
    assert record.old_sha256 == sha256_text(old)


def test_a_folder_where_a_boot_file_goes_is_left_out_of_prompts_and_refused_on_write(
    tmp_path: Path,
) -> None:
    (tmp_path / "AGENTS.md").mkdir()
    assert load_boot_files(tmp_path) == []
    with pytest.raises(MemoryFileError, match="is a folder"):
        write_boot_file(tmp_path, "agents", "Run the tests.", cap_bytes=1000)


def not_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return True
    return False


def pure_insertion(old: bytes, new: bytes) -> bytes | None:
    """What was inserted, if ``new`` is ``old`` with one run of bytes inserted somewhere."""
    grown = len(new) - len(old)
    if grown < 0:
        return None
    start = 0
    while start < len(old) and old[start] == new[start]:
        start += 1
    return new[start : start + grown] if new[start + grown :] == old[start:] else None


# --- properties ----------------------------------------------------------------------------

FRAGMENTS = [
    "# Insights",
    "# Decisions",
    "# ",
    "## sub",
    "- item",
    "> quote",
    "    indented",
    "```",
    "~~~",
    "<!--",
    "-->",
    "<pre>",
    "===",
    "text",
    "",
    " ",
]
BAD = [b"\xff", b"\xe9", b"\xc3", b"\xed\xa0\x80", b"\xf8\x88\x80\x80\x80", b"\x80", b"\xef\xbb"]

any_bytes = st.one_of(
    st.binary(max_size=300),
    st.lists(
        st.one_of(
            st.sampled_from(FRAGMENTS).map(str.encode),
            st.sampled_from([b"\n", b"\r\n", b"\r", BOM.encode()]),
            st.sampled_from(BAD),
        ),
        max_size=40,
    ).map(b"".join),
)

SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(any_bytes)
def test_any_bytes_read_or_raise_a_squad_error_and_a_write_keeps_them(data: bytes) -> None:
    with tempfile.TemporaryDirectory() as folder:
        file = make_file(Path(folder), data)
        snapshot = file.snapshot()  # reading a regular file never raises
        assert snapshot.size == len(data)
        if not not_utf8(data):
            assert snapshot.document.render().encode() == data
        try:
            file.append("Insights", "- a fact", actor="me")
        except SquadError:
            assert file.path.read_bytes() == data
        else:
            assert pure_insertion(data, file.path.read_bytes()) is not None


@SETTINGS
@given(any_bytes.filter(not_utf8), st.sampled_from(["Insights", "Decisions", "New"]))
def test_an_append_to_a_file_that_is_not_utf8_refuses_and_keeps_every_byte(
    data: bytes, section: str
) -> None:
    # The property allows "refuse" or "preserve every byte"; squad refuses, always.
    with tempfile.TemporaryDirectory() as folder:
        file = make_file(Path(folder), data)
        with pytest.raises(MemoryFileError, match="not valid UTF-8"):
            file.append(section, "- a fact", actor="me")
        assert file.path.read_bytes() == data


BODY_LINES = ["- item", "text", "## sub", "> quote", "```", "code", "<!-- c -->", "", "  "]


@st.composite
def documents(draw: st.DrawFn) -> tuple[bytes, str]:
    """A valid memory.md (optional BOM, one line ending throughout) and that line ending."""
    newline = draw(st.sampled_from(["\n", "\r\n", "\r"]))
    names = draw(st.lists(st.sampled_from(["Insights", "Decisions", "Notes", "Rules"]), max_size=4))
    parts = draw(st.lists(st.sampled_from(BODY_LINES), max_size=3))
    for name in names:
        parts.append(f"# {name}")
        parts += draw(st.lists(st.sampled_from(BODY_LINES), max_size=5))
    text = newline.join(parts) + draw(st.sampled_from([newline, ""]))
    if newline not in text:
        newline = "\n"  # a file without line endings gets the usual one
    return ((BOM if draw(st.booleans()) else "") + text).encode(), newline


new_text = st.lists(
    st.sampled_from(["- fact", "more words", "```", "# Heading", "x", "", "<!--"]), max_size=4
).map(lambda lines: "\n".join(lines))


@SETTINGS
@given(
    documents(),
    st.sampled_from(["Insights", "Decisions", "Notes", "Brand New"]),
    new_text,
)
def test_an_append_changes_only_the_target_section(
    doc: tuple[bytes, str], section: str, text: str
) -> None:
    data, newline = doc
    before = MemoryDocument.parse(data.decode())
    with tempfile.TemporaryDirectory() as folder:
        file = make_file(Path(folder), data)
        try:
            file.append(section, text, actor="me")
        except MemoryError_:
            assert file.path.read_bytes() == data
            return
        after_bytes = file.path.read_bytes()
    inserted = pure_insertion(data, after_bytes)
    assert inserted is not None, (data, after_bytes)
    assert after_bytes.startswith(BOM.encode()) == data.startswith(BOM.encode())
    other_endings = {"\n", "\r\n", "\r"} - {newline}
    assert not any(re.search(_alone(ending), inserted.decode()) for ending in other_endings), (
        inserted
    )
    after = MemoryDocument.parse(after_bytes.decode())
    target = before.find(section)
    kept = [s for s in before.sections if s is not target]
    if target is None and kept and not data.decode().endswith(("\n", "\r")):
        kept = kept[:-1]  # it gained the line ending the new section starts after
    assert all(s in after.sections for s in kept)
    assert after.find(section) is not None
    assert after.names == [*before.names, *([] if target else [section])]


def _alone(ending: str) -> str:
    """A regex for ``ending`` not part of a longer line ending."""
    return {"\n": r"(?<!\r)\n", "\r": r"\r(?!\n)", "\r\n": r"\r\n"}[ending]


# --- the command line ----------------------------------------------------------------------


@pytest.mark.slow
def test_the_cli_refuses_a_broken_memory_md_with_exit_2_and_no_traceback(tmp_path: Path) -> None:
    from tests.cli.test_cli import Cli
    from tests.conftest import EXAMPLES

    cli = Cli(tmp_path)
    assert cli("create", next(p for p in EXAMPLES if p.stem == "docs-site")).returncode == 0
    memory = cli.workspaces / "docs-site" / "agents" / "writer" / "memory.md"
    data = memory.read_bytes() + b"- caf\xe9\n"
    memory.write_bytes(data)
    remember = cli("memory", "remember", "docs-site", "writer", "A fact", "--layer", "project")
    assert remember.returncode == 2, remember.stderr
    assert "is not valid UTF-8: byte offset" in remember.stderr
    assert "Traceback" not in remember.stderr
    assert memory.read_bytes() == data
    shown = cli("memory", "show", "docs-site", "writer")
    assert shown.returncode == 0 and "caf\ufffd" in shown.stdout
    memory.unlink()
    memory.mkdir()
    for args in (("show",), ("remember", "--layer", "project")):
        command, *options = args
        extra = ["A fact"] if command == "remember" else []
        result = cli("memory", command, "docs-site", "writer", *extra, *options)
        assert result.returncode == 2, result.stderr
        assert "memory.md is a folder, not a file" in result.stderr
        assert "Traceback" not in result.stderr
