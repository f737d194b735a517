"""Paths a user hands squad that are not what they seem: a FIFO where a manifest or a squad
file should be (a read would block for ever), /dev/zero linked in (a read would never end),
a manifest padded past any size squad writes, or nested deeper than a parser's stack. Each
gets a message naming the file, exit code 2 and no traceback; the daemon reports the file
and goes on with the others."""

from __future__ import annotations

import json
import os
import subprocess
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from squad.app import App
from squad.daemon import catalog
from squad.daemon.definitions import file_digest, load_definition
from squad.daemon.service import Daemon
from squad.settings import Settings
from squad.spec.yaml_source import MAX_FILE_BYTES
from squad.store import Store
from squad.workspace.layout import MANIFEST_NAME
from squad.workspace.manifest import MAX_MANIFEST_BYTES
from tests.cli.test_cli import SQUAD, Cli
from tests.conftest import EXAMPLES
from tests.daemon.test_service import WAIT, events, squad_yaml, write_squad
from tests.support.waiting import wait_for

HANG_S = 30.0
"""Long enough for any honest command; a command still going after it is hung."""

DOCS = next(p for p in EXAMPLES if p.stem == "docs-site")

needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
needs_dev_zero = pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero")


@pytest.fixture
def cli(tmp_path: Path) -> Cli:
    return Cli(tmp_path)


def run(cli: Cli, *args: str | Path) -> subprocess.CompletedProcess[str]:
    """``squad ARGS`` in a subprocess; one that outlives :data:`HANG_S` fails the test."""
    try:
        return subprocess.run(
            [str(SQUAD), *map(str, args)],
            env=cli.env,
            cwd=cli.tmp,
            capture_output=True,
            text=True,
            timeout=HANG_S,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"`squad {' '.join(map(str, args))}` hung (still running after {HANG_S}s)")


def refused(result: subprocess.CompletedProcess[str], *needles: str) -> None:
    """Exit 2, each needle in the message, no traceback."""
    assert result.returncode == 2, result.stdout + result.stderr
    assert "Traceback" not in result.stdout + result.stderr, result.stderr
    for needle in needles:
        assert needle in result.stderr, result.stderr


def unblock(fifo: Path) -> None:
    """Give a reader stuck opening ``fifo`` its end of file (only a failing test needs it)."""
    try:
        fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
    except OSError:  # nobody is reading (the good case), or it is gone
        return
    os.close(fd)


# -- squad restore -----------------------------------------------------------------------


def created_workspace(cli: Cli) -> Path:
    result = run(cli, "create", DOCS)
    assert result.returncode == 0, result.stderr
    return cli.workspaces / "docs-site"


@pytest.mark.slow
@needs_fifo
def test_restore_of_a_workspace_whose_manifest_is_a_fifo_is_refused_not_hung(cli: Cli) -> None:
    workspace = cli.tmp / "ws"
    workspace.mkdir()
    fifo = workspace / MANIFEST_NAME
    os.mkfifo(fifo)
    try:
        result = run(cli, "restore", workspace)
    finally:
        unblock(fifo)
    refused(result, str(fifo), "manifest is a FIFO (named pipe), not a regular file")


@pytest.mark.slow
def test_restore_refuses_a_manifest_over_the_size_limit_unread(cli: Cli) -> None:
    workspace = created_workspace(cli)
    manifest = workspace / MANIFEST_NAME
    valid = manifest.read_bytes()
    manifest.write_bytes(valid + b" " * (MAX_MANIFEST_BYTES + 1 - len(valid)))  # still JSON
    refused(
        run(cli, "restore", workspace),
        str(manifest),
        f"over the {MAX_MANIFEST_BYTES:,}-byte limit",
    )


@pytest.mark.slow
def test_restore_of_a_manifest_nested_past_the_parsers_stack_is_a_config_error(
    cli: Cli,
) -> None:
    workspace = cli.tmp / "ws"
    workspace.mkdir()
    manifest = workspace / MANIFEST_NAME
    deep = 100_000
    manifest.write_text('{"format_version": 1, "squad": ' + "[" * deep + "]" * deep + "}")
    refused(run(cli, "restore", workspace), str(manifest), "nested too deeply")


@pytest.mark.slow
def test_restore_of_a_manifest_with_a_number_of_thousands_of_digits_is_a_config_error(
    cli: Cli,
) -> None:
    workspace = created_workspace(cli)
    manifest = workspace / MANIFEST_NAME
    data = json.loads(manifest.read_text())
    text = json.dumps(data).replace('"format_version": 1', '"format_version": ' + "1" * 5000)
    manifest.write_text(text)
    refused(run(cli, "restore", workspace), str(manifest), "manifest is not valid JSON")


# -- the daemon's squads folder ----------------------------------------------------------


def call_with_timeout(work: Callable[[], object], *, fifo: Path | None = None) -> object:
    """``work()`` in a thread; failing if it is still going after :data:`HANG_S`."""
    result: list[object] = []
    thread = threading.Thread(target=lambda: result.append(work()), daemon=True)
    thread.start()
    thread.join(HANG_S)
    if thread.is_alive():
        if fifo is not None:
            unblock(fifo)
        pytest.fail(f"still going after {HANG_S}s")
    return result[0]


@needs_fifo
def test_a_fifo_in_the_squads_folder_is_reported_without_being_read(tmp_path: Path) -> None:
    fifo = tmp_path / "a.yaml"
    os.mkfifo(fifo)
    digest = call_with_timeout(lambda: file_digest(fifo), fifo=fifo)
    assert isinstance(digest, str) and digest
    loaded = load_definition(fifo)
    assert loaded.spec is None
    assert loaded.error == (
        f"{fifo}: path is a FIFO (named pipe), not a regular file; pass the path of a .yaml "
        "file; squad reads definitions from regular files; save the YAML to a file first"
    )


@needs_dev_zero
def test_dev_zero_linked_into_the_squads_folder_is_never_read(tmp_path: Path) -> None:
    link = tmp_path / "zero.yaml"
    link.symlink_to("/dev/zero")
    digest = call_with_timeout(lambda: file_digest(link))
    assert isinstance(digest, str) and digest
    assert "path is a device (character special file)" in str(load_definition(link).error)


def test_a_squad_file_over_the_size_limit_is_refused_unread(tmp_path: Path) -> None:
    huge = tmp_path / "huge.yaml"
    huge.touch()
    os.truncate(huge, 64 * 1024**3)  # sparse: 64 GiB of nothing, which a read would fill memory
    digest = call_with_timeout(lambda: file_digest(huge))
    assert isinstance(digest, str) and digest
    os.truncate(huge, MAX_FILE_BYTES + 1)
    assert file_digest(huge) != digest  # a change of size is a change of the file
    error = str(load_definition(huge).error)
    assert f"over the {MAX_FILE_BYTES:,}-byte limit for a definition" in error


def replace_after_listing(
    monkeypatch: pytest.MonkeyPatch, name: str, make: Callable[[Path], None]
) -> None:
    """Replace the file ``name`` by what ``make`` puts there just after the daemon first
    lists its folder: the race between listing a folder and reading its files, made certain
    (no test can time it), and the only thing here that is not the daemon's own code."""
    real = catalog.list_definition_files
    done: list[Path] = []

    def listing(folder: Path) -> list[Path]:
        files = real(folder)
        for path in files:
            if path.name == name and not done:
                path.unlink()
                make(path)
                done.append(path)
        return files

    monkeypatch.setattr(catalog, "list_definition_files", listing)


@contextmanager
def daemon_running(settings: Settings, store: Store, *, fifo: Path | None) -> Iterator[Daemon]:
    """A real daemon in a thread; one that hangs fails the test instead of the whole run."""
    daemon = Daemon(App.open(settings, store=store), heartbeat_s=0.1, debounce_s=0.05)
    codes: list[int] = []
    thread = threading.Thread(target=lambda: codes.append(daemon.run()), daemon=True)
    thread.start()
    try:
        # Its log, not daemon.state(): a daemon stuck mid-reload holds the lock state() takes.
        wait_for(lambda: bool(events(settings, "ready")), "the daemon ready")
        yield daemon
    finally:
        daemon.request_stop("test")
        thread.join(WAIT)
        if thread.is_alive() and fifo is not None:  # stuck reading it: free it to stop
            unblock(fifo)
            thread.join(WAIT)
    assert codes == [0]


def scheduled(daemon: Daemon) -> set[str]:
    return {s["name"] for s in daemon.state()["squads"]}


@pytest.mark.parametrize(
    ("make", "message"),
    [
        pytest.param(
            os.mkfifo,
            "path is a FIFO (named pipe), not a regular file",
            id="fifo",
            marks=needs_fifo,
        ),
        pytest.param(
            lambda path: path.symlink_to("/dev/zero"),
            "path is a device (character special file), not a regular file",
            id="dev-zero",
            marks=needs_dev_zero,
        ),
    ],
)
def test_a_squad_file_swapped_for_a_special_file_never_hangs_the_daemon(
    settings: Settings,
    monkeypatch: pytest.MonkeyPatch,
    make: Callable[[Path], None],
    message: str,
) -> None:
    write_squad(settings, "a.yaml", squad_yaml("alpha", "{interval: 1d}"))  # listed first
    write_squad(settings, "b.yaml", squad_yaml("beta", "{interval: 1d}"))
    replace_after_listing(monkeypatch, "a.yaml", make)
    fifo = settings.squads_dir / "a.yaml"
    with (
        Store.open(settings.database_url) as store,
        daemon_running(settings, store, fifo=fifo) as daemon,
    ):
        assert scheduled(daemon) == {"beta"}
        [error] = [e for e in events(settings, "load_error") if Path(e["file"]).name == "a.yaml"]
        assert message in error["error"]
        write_squad(settings, "c.yaml", squad_yaml("gamma", "{interval: 1d}"))
        wait_for(lambda: scheduled(daemon) == {"beta", "gamma"}, "a later file still loads")
