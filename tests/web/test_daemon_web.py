"""The dashboard through the real commands: ``squad daemon`` serves it beside its scheduler,
``squad dashboard`` serves it alone, ``squad status`` shows where, and the token stays out of
every log and every status."""

from __future__ import annotations

import re
import signal
import socket
import subprocess
import time
from pathlib import Path

import httpx
import pytest

from tests.cli.test_cli import SQUAD, Cli
from tests.daemon.test_daemon_cli import WAIT, Daemon

pytestmark = pytest.mark.slow

SQUAD_YAML = """\
name: notes
agents: [{id: writer, role: Writes}]
tasks: [{id: draft, description: Draft the notes., agent: writer}]
"""


@pytest.fixture
def cli(tmp_path: Path) -> Cli:
    squads = tmp_path / "configs" / "squads"
    squads.mkdir(parents=True)
    (squads / "notes.yaml").write_text(SQUAD_YAML)
    return Cli(tmp_path)


def _token(cli: Cli) -> str:
    return (cli.home / "api-token").read_text().strip()


def _wait_run_end(client: httpx.Client, squad: str, before: int) -> dict[str, object]:
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        runs = client.get(f"/api/v1/squads/{squad}").json()["runs"]
        if len(runs) > before and runs[0]["status"] not in ("pending", "running"):
            return dict(runs[0])
        time.sleep(0.2)
    pytest.fail("the run asked for over HTTP did not end")


def test_the_daemon_serves_the_dashboard_and_status_shows_where(cli: Cli, daemon: Daemon) -> None:
    daemon.start()
    ready = daemon.wait_event("http_ready")
    url = str(ready["url"])
    assert re.fullmatch(r"http://127\.0\.0\.1:\d+/", url) and ready["port"] != 0
    token = _token(cli)
    assert (cli.home / "api-token").stat().st_mode & 0o777 == 0o600
    daemon.wait_for(lambda: daemon.status()["http"], "the dashboard in the heartbeat")
    with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}) as client:
        overview = client.get("/api/v1/overview").json()
        assert overview["server"]["mode"] == "daemon"
        assert overview["daemon"]["state"] == "up"
        assert [s["name"] for s in overview["squads"]] == ["notes"]
        answer = client.post("/api/v1/squads/notes/runs", json={"goal": "Notes for Monday"})
        assert answer.status_code == 202 and answer.json()["accepted"] is True
        run = _wait_run_end(client, "notes", 0)
        assert run["status"] == "succeeded" and run["trigger"] == "web"
        assert run["goal"] == "Notes for Monday"
    daemon.wait_event("run_requested", squad="notes", trigger="web")
    text = cli("status")
    assert f"dashboard: {url}" in text.stdout
    assert f"log in: {url}login?token={token}" in text.stdout
    status = cli("status", "--json")
    assert f'"url": "{url}"' in status.stdout and token not in status.stdout
    assert daemon.stop() == 0
    # The login link is the command's output (stdout); its logs (stderr) never hold it.
    printed = (cli.tmp / "daemon.out").read_text()
    assert printed.splitlines()[:2] == [f"dashboard: {url}", f"  log in:  {url}login?token={token}"]
    err = (cli.tmp / "daemon.err").read_text()
    assert "http_ready" in err and token not in err
    assert token not in (cli.home / "daemon.jsonl").read_text()
    assert cli.json("status")["http"] is None  # type: ignore[index]


def test_a_daemon_whose_port_is_taken_schedules_on_without_a_dashboard(
    cli: Cli, daemon: Daemon
) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        daemon.start("--port", str(port))
        failed = daemon.wait_event("http_failed")
        assert f"127.0.0.1:{port}" in str(failed["error"]) and "another port" in str(
            failed["error"]
        )
        daemon.wait_for(lambda: daemon.status()["daemon"]["state"] == "up", "the daemon up")
        assert daemon.stop() == 0


def test_a_daemon_once_serves_no_dashboard(cli: Cli, daemon: Daemon) -> None:
    daemon.start("--once")
    assert daemon.process is not None
    assert daemon.process.wait(timeout=WAIT) == 0
    assert daemon.events("http_ready") == [] and daemon.events("http_failed") == []


def _dashboard(cli: Cli) -> tuple[subprocess.Popen[str], list[str]]:
    """``squad dashboard --port 0`` and what it printed on stdout up to its login link (its
    stderr goes to ``dashboard.err``)."""
    with (cli.tmp / "dashboard.err").open("a") as stderr:
        process = subprocess.Popen(
            [str(SQUAD), "dashboard", "--port", "0"],
            env=cli.env,
            cwd=cli.tmp,
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
        )
    assert process.stdout is not None
    lines: list[str] = []
    while not any("log in:" in line for line in lines):
        line = process.stdout.readline()
        if not line:
            process.wait(timeout=WAIT)
            process.stdout.close()
            err = (cli.tmp / "dashboard.err").read_text()
            pytest.fail(f"squad dashboard ended early: {''.join(lines)}{err}")
        lines.append(line)
    return process, lines


def _stop(process: subprocess.Popen[str]) -> None:
    if process.poll() is None:
        process.kill()
        process.wait()
    if process.stdout is not None:
        process.stdout.close()


def test_a_dashboard_bound_beyond_loopback_warns_and_still_needs_the_token(cli: Cli) -> None:
    (cli.tmp / "configs" / "settings.yaml").write_text("daemon: {http: {host: 0.0.0.0}}\n")
    process, lines = _dashboard(cli)
    try:
        warned = (cli.tmp / "dashboard.err").read_text()
        assert "warning: the dashboard listens on 0.0.0.0, not only on this machine" in warned
        url = next(line for line in lines if line.startswith("dashboard:")).split()[-1]
        assert url.startswith("http://127.0.0.1:")  # a wildcard bind is reached by loopback
        assert httpx.get(f"{url}api/v1/overview").status_code == 401
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=WAIT) == 0
    finally:
        _stop(process)


def test_squad_dashboard_serves_alone_and_runs_now_in_its_own_process(cli: Cli) -> None:
    assert cli("create", cli.tmp / "configs" / "squads" / "notes.yaml").returncode == 0
    process, lines = _dashboard(cli)
    try:
        link = next(line for line in lines if "log in:" in line).split()[-1]
        url = link.split("login?")[0]
        with httpx.Client(base_url=url, follow_redirects=True) as browser:
            assert browser.get("/").status_code == 401
            login = browser.get(link)  # follows the redirect to the overview
            assert login.status_code == 200 and "notes" in login.text
            assert "squad_session" in browser.cookies
        token = _token(cli)
        assert link == f"{url}login?token={token}"  # on stdout; stderr never has it
        assert token not in (cli.tmp / "dashboard.err").read_text()
        with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}) as api:
            assert api.get("/api/v1/overview").json()["server"]["mode"] == "dashboard"
            assert api.post("/api/v1/squads/notes/runs").status_code == 202
            run = _wait_run_end(api, "notes", 0)
            assert run["status"] == "succeeded" and run["trigger"] == "web"
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=WAIT) == 0
    finally:
        _stop(process)


def test_squad_dashboard_on_a_taken_port_is_bad_usage(cli: Cli) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = cli("dashboard", "--port", str(port))
    assert result.returncode == 2
    assert f"cannot serve on 127.0.0.1:{port}" in result.stderr
    assert "Traceback" not in result.stderr
