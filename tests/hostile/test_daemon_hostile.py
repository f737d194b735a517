"""The daemon under abuse: its squads folder deleted and made again, two files naming one
squad across restarts, a file that breaks the loader among good ones."""

from __future__ import annotations

import shutil
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from squad.app import App
from squad.daemon.service import Daemon
from squad.daemon.status import collect_status
from squad.settings import Settings
from squad.store import Store
from tests.daemon.test_service import WAIT, events, squad_yaml, write_squad
from tests.support.waiting import wait_for


@contextmanager
def running(settings: Settings, store: Store) -> Iterator[Daemon]:
    daemon = Daemon(App.open(settings, store=store), heartbeat_s=0.1, debounce_s=0.05)
    codes: list[int] = []
    thread = threading.Thread(target=lambda: codes.append(daemon.run()))
    thread.start()
    try:
        wait_for(lambda: daemon.state().get("phase") == "running", "the daemon ready")
        yield daemon
    finally:
        daemon.request_stop("test")
        thread.join(WAIT)
    assert codes == [0]


def scheduled(daemon: Daemon) -> set[str]:
    return {s["name"] for s in daemon.state()["squads"]}


def test_a_deleted_and_recreated_squads_folder_is_watched_again(settings: Settings) -> None:
    write_squad(settings, "a.yaml", squad_yaml("alpha", "{interval: 1d}"))
    with Store.open(settings.database_url) as store, running(settings, store) as daemon:
        assert scheduled(daemon) == {"alpha"}
        shutil.rmtree(settings.squads_dir)
        wait_for(lambda: daemon.state()["configs_missing"], "the folder reported missing")
        assert scheduled(daemon) == set()
        # the heartbeat in the store follows the daemon's state at its next beat
        wait_for(
            lambda: collect_status(daemon.app).daemon.configs_missing is True,
            "the missing folder in squad status",
        )

        write_squad(settings, "b.yaml", squad_yaml("beta", "{interval: 1d}"))
        wait_for(lambda: scheduled(daemon) == {"beta"}, "the new folder's squad scheduled")
        assert daemon.state()["configs_missing"] is False
        write_squad(settings, "c.yaml", squad_yaml("gamma", "{interval: 1d}"))
        wait_for(lambda: scheduled(daemon) == {"beta", "gamma"}, "a later file seen too")
    assert [e["folder"] for e in events(settings, "configs_missing")] == [
        str(settings.squads_dir.resolve())
    ]
    assert len(events(settings, "configs_restored")) == 1


def test_a_squads_folder_replaced_between_two_ticks_is_watched_again(
    settings: Settings, tmp_path: Path
) -> None:
    write_squad(settings, "a.yaml", squad_yaml("alpha", "{interval: 1d}"))
    with Store.open(settings.database_url) as store, running(settings, store) as daemon:
        spare = tmp_path / "spare"
        spare.mkdir()
        (spare / "b.yaml").write_text(squad_yaml("beta", "{interval: 1d}"))
        old = tmp_path / "old"
        settings.squads_dir.rename(old)
        spare.rename(settings.squads_dir)  # a new folder (a new inode) under the old name
        wait_for(lambda: scheduled(daemon) == {"beta"}, "the replacement's squad scheduled")
        write_squad(settings, "c.yaml", squad_yaml("gamma", "{interval: 1d}"))
        wait_for(lambda: scheduled(daemon) == {"beta", "gamma"}, "later files seen")


def test_with_two_files_naming_one_squad_the_owner_keeps_it_across_restarts(
    settings: Settings,
) -> None:
    # b.yaml has the squad first; a.yaml (sorted first) names it later.
    write_squad(settings, "b.yaml", squad_yaml("alpha", "{interval: 1d}"))
    with Store.open(settings.database_url) as store:
        with running(settings, store) as daemon:
            write_squad(settings, "a.yaml", squad_yaml("alpha", "{interval: 2d}"))
            wait_for(lambda: bool(daemon.state()["failed_files"]), "the second file refused")
            [failed] = daemon.state()["failed_files"]
            assert Path(failed["file"]).name == "a.yaml"
        for _ in range(2):  # restarts
            with running(settings, store) as daemon:
                [squad] = daemon.state()["squads"]
                assert Path(squad["file"]).name == "b.yaml"
                [failed] = daemon.state()["failed_files"]
                assert Path(failed["file"]).name == "a.yaml"
        # With the daemon down, status says the same.
        status = collect_status(App.open(settings, store=store), now=daemon.app.clock())
        [squad] = status.squads
        assert Path(str(squad.file)).name == "b.yaml"


def test_a_squad_file_that_makes_the_loader_fail_never_stops_the_others(
    settings: Settings,
) -> None:
    write_squad(settings, "a.yaml", squad_yaml("alpha", "{interval: 1d}"))
    deep = "x: " + "[" * 5000 + "]" * 5000 + "\n"
    write_squad(settings, "deep.yaml", deep)
    with Store.open(settings.database_url) as store, running(settings, store) as daemon:
        assert scheduled(daemon) == {"alpha"}
        [failed] = daemon.state()["failed_files"]
        assert Path(failed["file"]).name == "deep.yaml"
        write_squad(settings, "b.yaml", squad_yaml("beta", "{interval: 1d}"))
        wait_for(lambda: scheduled(daemon) == {"alpha", "beta"}, "a later file still loads")


def test_the_terminal_echo_indents_multi_line_warnings_and_survives_a_closed_terminal() -> None:
    import io

    from squad.cli.daemon import _echo
    from squad.cli.output import Output

    stream = io.StringIO()
    show = _echo(Output(stream=stream))
    show(
        {
            "time": "2026-12-01T10:00:00+00:00",
            "event": "load_warning",
            "file": "a.yaml",
            "warnings": "a.yaml:3:5: warning: one\na.yaml:9:1: warning: two",
        }
    )
    assert stream.getvalue().splitlines() == [
        "10:00:00  load_warning  file=a.yaml",
        "    a.yaml:3:5: warning: one",
        "    a.yaml:9:1: warning: two",
    ]

    class Gone(io.StringIO):
        def write(self, text: str) -> int:
            raise OSError(5, "Input/output error")  # what a hung-up terminal answers

    _echo(Output(stream=Gone()))({"time": "", "event": "reload", "reason": "SIGHUP"})
