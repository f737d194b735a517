"""A real web front end for the tests: the example squads run once (the docs-site run pauses
at its approval gate), then the app served by a real uvicorn server on 127.0.0.1."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from squad.app import App
from squad.settings import Settings
from squad.web.control import LocalControl
from squad.web.server import WebServer, login_url
from squad.web.tokens import load_or_create_token
from tests.daemon.test_daemon_cli import daemon  # noqa: F401 - the daemon subprocess fixture

REPO = Path(__file__).resolve().parents[2]


@dataclass
class Served:
    """A running server: its address, token, app and a client that sends the token."""

    url: str
    token: str
    app: App
    settings: Settings
    control: LocalControl
    client: httpx.Client

    @property
    def login(self) -> str:
        return login_url(self.url, self.token)

    def paused_run(self) -> str:
        """The id of the docs-site run waiting at its approval gate."""
        from squad.store.records import RunStatus

        runs = [
            r
            for r in self.app.store.list_runs("docs-site")
            if r.status is RunStatus.AWAITING_APPROVAL
        ]
        assert runs, "the docs-site run should be paused at its approval gate"
        return runs[0].id


def example_settings(root: Path) -> Settings:
    configs = root / "configs"
    shutil.copytree(REPO / "configs" / "squads", configs / "squads")
    return Settings.load(
        {
            "SQUAD_HOME": str(root / "home"),
            "SQUAD_WORKSPACES": str(root / "workspaces"),
            "SQUAD_CONFIGS": str(configs),
        },
        cwd=root,
    )


def run_examples(app: App) -> None:
    """Create and run every example squad once, without approving anything."""
    from squad.spec.loader import squad_from_file

    for path in sorted((app.settings.configs / "squads").glob("*.yaml")):
        spec = squad_from_file(path)
        workspace = app.squads.create(spec, source=path).path
        app.runner().run(spec, workspace)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """The example squads' home behind a real server (shared by a module's tests: they must
    leave it as they found it, or make what they change their own)."""
    root = tmp_path_factory.mktemp("web")
    settings = example_settings(root)
    with App.open(settings) as app:
        run_examples(app)
        control = LocalControl(app, workers=2)
        server = WebServer(app, control, host="127.0.0.1", port=0)
        bound = server.start()
        token = load_or_create_token(settings.home)
        with httpx.Client(
            base_url=bound.url.rstrip("/"),
            headers={"Authorization": f"Bearer {token}"},
            timeout=30,
        ) as client:
            try:
                yield Served(bound.url, token, app, settings, control, client)
            finally:
                server.stop()
                control.close(10)
