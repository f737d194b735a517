"""The door of the web front end, against the real server: who gets in (the API token, or the
session cookie the login link sets), what a browser must also show to change anything (the
CSRF token, an Origin of this server), which Host names it answers, the headers on every
response, and that no response ever gives the token or a key away."""

from __future__ import annotations

import base64
import json
import re
import stat
from collections import deque
from collections.abc import Iterator
from html import unescape
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest

from squad.spec.loader import squad_from_file
from squad.web.guard import COOKIE, SECURITY_HEADERS
from squad.web.tokens import TOKEN_FILE, Tokens
from tests.web.conftest import Served


def anonymous(served: Served) -> httpx.Client:
    return httpx.Client(base_url=served.url.rstrip("/"), timeout=30)


class Browser:
    """A client that logged in through the login link, as a person's browser does."""

    def __init__(self, served: Served) -> None:
        self.client = anonymous(served)
        response = self.client.get("/login", params={"token": served.token})
        assert response.status_code == 303, response.text
        self.cookie = self.client.cookies[COOKIE]
        page = self.client.get("/")
        assert page.status_code == 200
        self.csrf = csrf_of(page.text)

    def post(self, url: str, data: dict[str, str], **headers: str) -> httpx.Response:
        return self.client.post(url, data=data, headers=headers)


def csrf_of(html: str) -> str:
    found = re.search(r"<body hx-headers='([^']*)'", html)
    assert found, "the page should carry its CSRF token in <body hx-headers=...>"
    return str(json.loads(unescape(found.group(1)))["X-CSRF-Token"])


@pytest.fixture
def browser(served: Served) -> Iterator[Browser]:
    made = Browser(served)
    try:
        yield made
    finally:
        made.client.close()


def namespace_id(served: Served) -> int:
    rows = served.client.get("/api/v1/memory/namespaces").json()
    return int(next(r["id"] for r in rows if r["identity"] == "squad:docs-site/reviewer"))


def namespace_enabled(served: Served, ns: int) -> bool:
    rows = served.client.get("/api/v1/memory/namespaces").json()
    return bool(next(r["enabled"] for r in rows if r["id"] == ns))


@pytest.fixture
def namespace(served: Served) -> Iterator[int]:
    """A namespace a test may switch; switched off again afterwards."""
    ns = namespace_id(served)
    assert not namespace_enabled(served, ns)
    yield ns
    served.client.put(f"/api/v1/memory/namespaces/{ns}", json={"enabled": False})


# -- who gets in ---------------------------------------------------------------------------------


def test_the_api_without_a_token_is_401_saying_how_to_log_in(served: Served) -> None:
    with anonymous(served) as client:
        response = client.get("/api/v1/overview")
    assert response.status_code == 401
    assert response.headers["content-type"] == "application/json"
    assert "Authorization: Bearer" in response.json()["detail"]


def test_a_page_without_a_session_is_a_401_page(served: Served) -> None:
    with anonymous(served) as client:
        response = client.get("/", headers={"Accept": "text/html,*/*"})
    assert response.status_code == 401
    assert response.headers["content-type"].startswith("text/html")
    assert "not logged in" in response.text


@pytest.mark.parametrize(
    "authorization",
    ["Bearer wrong", "Bearer {token}x", "Bearer {short}", "Basic {token}", "{token}", "Bearer"],
)
def test_a_wrong_bearer_token_is_401(served: Served, authorization: str) -> None:
    header = authorization.format(token=served.token, short=served.token[:-1])
    with anonymous(served) as client:
        response = client.get("/api/v1/overview", headers={"Authorization": header})
    assert response.status_code == 401


def test_static_files_need_a_session_too(served: Served, browser: Browser) -> None:
    with anonymous(served) as client:
        assert client.get("/static/app.css").status_code == 401
    assert browser.client.get("/static/app.css").status_code == 200


@pytest.mark.parametrize(
    "host",
    [
        "evil.example",
        "evil.example:{port}",
        "127.0.0.1.evil.example:{port}",
        "127.0.0.1:{port}.evil.example",
        "localhost:{port}@evil.example",
        "[::1]:{port}.evil.example",
        "localhost.evil",
        "0",
    ],
)
def test_a_host_header_not_naming_this_server_is_400_even_with_the_token(
    served: Served, host: str
) -> None:
    port = urlsplit(served.url).port
    response = served.client.get("/api/v1/overview", headers={"Host": host.format(port=port)})
    assert response.status_code == 400
    assert "allowed_hosts" in response.json()["detail"]


@pytest.mark.parametrize(
    "host", ["127.0.0.1:{port}", "localhost:{port}", "LOCALHOST", "[::1]:{port}"]
)
def test_the_loopback_names_are_this_servers_names(served: Served, host: str) -> None:
    port = urlsplit(served.url).port
    response = served.client.get("/api/v1/overview", headers={"Host": host.format(port=port)})
    assert response.status_code == 200


@pytest.mark.parametrize("with_token", [False, True])
@pytest.mark.parametrize("host", ["127.0.0.1", "evil.example"])
def test_a_websocket_handshake_is_refused_not_failed(
    served: Served, with_token: bool, host: str
) -> None:
    headers = {
        "Host": host,
        "Connection": "Upgrade",
        "Upgrade": "websocket",
        "Sec-WebSocket-Key": base64.b64encode(b"0123456789abcdef").decode(),
        "Sec-WebSocket-Version": "13",
    }
    if with_token:
        headers["Authorization"] = f"Bearer {served.token}"
    with anonymous(served) as client:
        response = client.get("/api/v1/overview", headers=headers)
    assert response.status_code != 101  # never upgraded
    assert response.status_code < 500
    if not with_token or host != "127.0.0.1":
        assert response.status_code in (400, 401, 403)


@pytest.mark.parametrize("token", ["", "wrong", "{token}x", "{short}"])
def test_a_login_link_with_a_wrong_token_is_401_and_sets_no_cookie(
    served: Served, token: str
) -> None:
    value = token.format(token=served.token, short=served.token[:-1])
    with anonymous(served) as client:
        response = client.get("/login", params={"token": value})
        assert response.status_code == 401
        assert "set-cookie" not in response.headers
        assert client.get("/").status_code == 401


def test_the_login_link_redirects_home_with_a_strict_http_only_session_cookie(
    served: Served,
) -> None:
    with anonymous(served) as client:
        response = client.get("/login", params={"token": served.token})
    assert response.status_code == 303
    assert response.headers["location"] == "/"
    cookie = response.headers["set-cookie"]
    assert cookie.startswith(f"{COOKIE}=")
    attributes = {a.strip().lower() for a in cookie.split(";")[1:]}
    assert {"httponly", "samesite=strict", "path=/"} <= attributes
    assert served.token not in cookie


@pytest.mark.parametrize(
    "url",
    [
        "/",
        "/approvals",
        "/memory",
        "/spend",
        "/squads/docs-site",
        "/squads/docs-site/files",
        "/squads/docs-site/agents/planner",
        "/api/v1/overview",
    ],
)
def test_with_the_session_cookie_the_pages_and_the_api_open(browser: Browser, url: str) -> None:
    assert browser.client.get(url).status_code == 200


def test_with_the_session_cookie_the_paused_runs_page_opens(
    served: Served, browser: Browser
) -> None:
    response = browser.client.get(f"/runs/{served.paused_run()}")
    assert response.status_code == 200
    assert "publish" in response.text


def test_the_page_carries_the_csrf_token_of_its_own_session(
    served: Served, browser: Browser
) -> None:
    session = Tokens(served.token).session(browser.cookie)
    assert session is not None
    assert browser.csrf == session.csrf


def test_an_unknown_page_is_an_html_404_page_and_an_unknown_api_route_is_json(
    browser: Browser,
) -> None:
    page = browser.client.get("/no-such-page")
    assert page.status_code == 404
    assert page.headers["content-type"].startswith("text/html")
    assert browser.csrf in page.text  # the error page is a page of the session
    api = browser.client.get("/api/v1/no-such-route")
    assert api.status_code == 404
    assert api.json() == {"detail": "Not Found"}


def test_a_wrong_method_is_405_naming_the_methods_allowed(served: Served) -> None:
    response = served.client.delete("/api/v1/overview")
    assert response.status_code == 405
    assert response.headers["allow"] == "GET"


def test_a_tampered_session_cookie_is_401(served: Served, browser: Browser) -> None:
    nonce, _, signature = browser.cookie.partition(".")
    forged = f"{nonce}.{signature[:-1]}{'0' if signature[-1] != '0' else '1'}"
    with anonymous(served) as client:
        response = client.get("/api/v1/overview", headers={"Cookie": f"{COOKIE}={forged}"})
    assert response.status_code == 401


# -- what a browser must show to change anything --------------------------------------------


def test_a_cookie_post_without_the_csrf_token_is_403_and_changes_nothing(
    served: Served, browser: Browser, namespace: int
) -> None:
    response = browser.post(f"/memory/namespaces/{namespace}", {"enabled": "true"})
    assert response.status_code == 403
    assert "CSRF" in response.text
    assert not namespace_enabled(served, namespace)


def test_a_cookie_post_with_the_pages_csrf_token_goes_through(
    served: Served, browser: Browser, namespace: int
) -> None:
    response = browser.post(
        f"/memory/namespaces/{namespace}", {"enabled": "true"}, **{"X-CSRF-Token": browser.csrf}
    )
    assert response.status_code == 200, response.text
    assert namespace_enabled(served, namespace)


def test_the_csrf_token_of_another_session_is_refused(
    served: Served, browser: Browser, namespace: int
) -> None:
    other = Browser(served)
    try:
        response = browser.post(
            f"/memory/namespaces/{namespace}", {"enabled": "true"}, **{"X-CSRF-Token": other.csrf}
        )
    finally:
        other.client.close()
    assert response.status_code == 403
    assert not namespace_enabled(served, namespace)


@pytest.mark.parametrize(
    "origin",
    [
        "https://evil.example",
        "http://127.0.0.1.evil.example",
        "http://localhost.evil:80",
        "http://127.0.0.1:{port}.evil.example",  # the name a suffix away from this server's
        "http://127.0.0.1:{port}@evil.example",
        "http://[::1]:{port}.evil.example",
        "http://127.0.0.1:{other_port}",  # another server on this machine
        "http://localhost:{port}",  # another site than the page's 127.0.0.1 to a browser
        "null",  # a sandboxed frame, a file: page, a cross-site redirect
        "ftp://127.0.0.1:{port}",
        "127.0.0.1:{port}",
        "http://127.0.0.1:{port}/path",
        "http://127.0.0.1:",
        "http://",
        "",
    ],
)
def test_a_cross_site_origin_is_403_even_with_the_csrf_token(
    served: Served, browser: Browser, namespace: int, origin: str
) -> None:
    port = urlsplit(served.url).port
    assert port is not None
    origin = origin.format(port=port, other_port=port + 1 if port < 65535 else port - 1)
    response = browser.post(
        f"/memory/namespaces/{namespace}",
        {"enabled": "true"},
        **{"X-CSRF-Token": browser.csrf, "Origin": origin},
    )
    assert response.status_code == 403
    assert "cross-site" in response.text
    assert not namespace_enabled(served, namespace)


@pytest.mark.parametrize(
    ("host", "origin"),
    [
        ("127.0.0.1:{port}", "http://127.0.0.1:{port}"),
        ("localhost:{port}", "http://LocalHost:{port}"),
        ("[::1]:{port}", "http://[::1]:{port}"),
        ("localhost", "https://localhost"),  # a proxy passing on its Host, TLS on 443
    ],
)
def test_a_same_origin_post_with_the_csrf_token_goes_through(
    served: Served, browser: Browser, namespace: int, host: str, origin: str
) -> None:
    port = urlsplit(served.url).port
    response = browser.post(
        f"/memory/namespaces/{namespace}",
        {"enabled": "true"},
        **{
            "X-CSRF-Token": browser.csrf,
            "Host": host.format(port=port),
            "Origin": origin.format(port=port),
        },
    )
    assert response.status_code == 200
    assert namespace_enabled(served, namespace)


def test_a_cookie_api_call_that_changes_something_needs_the_csrf_token_too(
    served: Served, browser: Browser, namespace: int
) -> None:
    url = f"/api/v1/memory/namespaces/{namespace}"
    refused = browser.client.put(url, json={"enabled": True})
    assert refused.status_code == 403
    accepted = browser.client.put(
        url, json={"enabled": True}, headers={"X-CSRF-Token": browser.csrf}
    )
    assert accepted.status_code == 200
    assert namespace_enabled(served, namespace)


def test_a_bearer_request_needs_no_csrf_token(served: Served, namespace: int) -> None:
    response = served.client.put(f"/api/v1/memory/namespaces/{namespace}", json={"enabled": True})
    assert response.status_code == 200
    assert namespace_enabled(served, namespace)


def test_the_page_refuses_a_rejection_without_a_reason(served: Served, browser: Browser) -> None:
    run_id = served.paused_run()
    response = browser.post(
        f"/runs/{run_id}/decide",
        {"task": "publish", "decision": "reject", "reason": "  "},
        **{"X-CSRF-Token": browser.csrf},
    )
    assert response.status_code == 422
    assert "say why the task is rejected" in response.text
    assert served.client.get(f"/api/v1/runs/{run_id}").json()["status"] == "awaiting_approval"


# -- headers, the token file, and secrets ----------------------------------------------------


def test_every_kind_of_response_carries_the_security_headers(
    served: Served, browser: Browser
) -> None:
    port = urlsplit(served.url).port
    finished = served.app.store.list_runs("code-review")[-1].id
    with anonymous(served) as client:
        responses = {
            "json": served.client.get("/api/v1/overview"),
            "page": browser.client.get("/"),
            "static": browser.client.get("/static/htmx.min.js"),
            "stream": served.client.get(f"/api/v1/runs/{finished}/events"),
            "login": client.get("/login", params={"token": served.token}),
            "bad login": client.get("/login", params={"token": "x"}),
            "401": client.get("/api/v1/overview"),
            "400 host": served.client.get("/", headers={"Host": f"evil.example:{port}"}),
            "403": browser.client.post("/squads/docs-site/run"),
            "404": served.client.get("/api/v1/runs/nosuchrun"),
            "404 route": served.client.get("/api/v1/nothing-here"),
            "422": served.client.get("/api/v1/spend?days=0"),
            "schema": served.client.get("/api/v1/openapi.json"),
        }
    for what, response in responses.items():
        for name, value in SECURITY_HEADERS:
            assert response.headers.get(name.decode()) == value.decode(), (what, name)
    csp = responses["page"].headers["content-security-policy"]
    assert "frame-ancestors 'none'" in csp
    assert "script-src 'self'" in csp
    assert responses["page"].headers["x-frame-options"] == "DENY"
    assert responses["page"].headers["referrer-policy"] == "no-referrer"


def test_the_served_homes_token_file_is_readable_by_its_owner_only(served: Served) -> None:
    path = served.settings.home / TOKEN_FILE
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert path.read_text(encoding="ascii").strip() == served.token


FAKE_OPENAI_KEY = "sk-proj-" + "Zq8Wm3Rt6Yp1Ls4Kd7Hf0Gj2Nb5Vc9Xa3Eu6Io1Pz4"
FAKE_SQUAD_KEY = "sk-ant-api03-" + "Fk2Lp9Qw4Er7Ty1Ui8Op3As6Df0Gh5Jk2Lz9Xc4Vb7Nm1Qa"
SQUAD_WITH_A_KEY = """\
name: keyed
goal: Summarise the changelog.
model: {name: offline, api_key_env: SQUAD_WEB_TEST_KEY}
agents:
  - {id: writer, role: Writes the summary}
tasks:
  - {id: summary, description: Summarise the changelog., agent: writer}
"""


@pytest.fixture
def keyed(served: Served, monkeypatch: pytest.MonkeyPatch) -> str:
    """Keys in the server's environment, and a squad whose model names one."""
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_OPENAI_KEY)
    monkeypatch.setenv("SQUAD_WEB_TEST_KEY", FAKE_SQUAD_KEY)
    path = served.settings.configs / "squads" / "keyed.yaml"
    if not path.exists():
        path.write_text(SQUAD_WITH_A_KEY, encoding="utf-8")
        served.app.squads.create(squad_from_file(path), source=path)
    return "keyed"


def _links(html: str) -> list[str]:
    found = re.findall(r'(?:href|hx-get|src)="(/[^"#]*)"', html)
    return [unescape(link) for link in found]


def _fetch(client: httpx.Client, url: str) -> httpx.Response:
    """The response to a GET of ``url``; of a live event stream, only its first chunk."""
    with client.stream("GET", url, headers={"Accept": "text/html,*/*"}) as response:
        if response.headers.get("content-type", "").startswith("text/event-stream"):
            first = next(response.iter_bytes(), b"")
            return httpx.Response(response.status_code, headers=response.headers, content=first)
        response.read()
        return response


def _crawl(client: httpx.Client, start: list[str], limit: int = 200) -> dict[str, httpx.Response]:
    """Every page reachable from ``start`` by its links (and htmx's), up to ``limit``."""
    seen: dict[str, httpx.Response] = {}
    queue = deque(start)
    while queue and len(seen) < limit:
        url = queue.popleft()
        if url in seen or url.startswith("/login"):
            continue
        response = _fetch(client, url)
        seen[url] = response
        if response.headers.get("content-type", "").startswith("text/html"):
            queue.extend(link for link in _links(response.text) if link not in seen)
    return seen


def _api_urls(served: Served, squad: str) -> list[str]:
    run = served.paused_run()
    return [
        "/api/v1/openapi.json",
        "/api/v1/overview",
        "/api/v1/squads",
        f"/api/v1/squads/{squad}",
        "/api/v1/squads/docs-site",
        f"/api/v1/runs/{run}",
        "/api/v1/approvals",
        "/api/v1/squads/docs-site/files",
        "/api/v1/squads/docs-site/file?path=.squad-config.json",
        f"/api/v1/squads/{squad}/file?path=.squad-config.json",
        f"/api/v1/squads/{squad}/search?q=key",
        "/api/v1/squads/docs-site/search?q=a",
        "/api/v1/squads/docs-site/health",
        f"/api/v1/squads/{squad}/agents/writer/memory",
        f"/api/v1/squads/{squad}/agents/writer/context?message=key",
        "/api/v1/memory/namespaces",
        "/api/v1/memory/boot/soul",
        "/api/v1/memory/boot/user",
        "/api/v1/memory/boot/agents",
        "/api/v1/memory/search?q=a",
        "/api/v1/memory/extraction",
        "/api/v1/spend",
        f"/api/v1/runs/{run}/events",
    ]


def test_no_response_of_a_crawl_holds_the_token_or_a_key(
    served: Served, browser: Browser, keyed: str
) -> None:
    start = ["/", f"/squads/{keyed}", f"/runs/{served.paused_run()}", "/api/v1/openapi.json"]
    crawled = _crawl(browser.client, start)
    urls = _api_urls(served, keyed)
    crawled |= {f"bearer {url}": _fetch(served.client, url) for url in urls}
    assert len(crawled) > 40
    assert all(r.status_code == 200 for r in crawled.values()), [
        (u, r.status_code) for u, r in crawled.items() if r.status_code != 200
    ]
    for url, response in crawled.items():
        for secret in (served.token, FAKE_OPENAI_KEY, FAKE_SQUAD_KEY):
            assert secret not in response.text, url
            assert all(secret not in v for v in response.headers.values()), url
    definition = served.client.get(f"/api/v1/squads/{keyed}").json()["definition"]
    assert "SQUAD_WEB_TEST_KEY" in definition["text"]  # the variable's name, never its value


def test_no_refusal_echoes_the_token_it_was_sent_near(served: Served) -> None:
    with anonymous(served) as client:
        answers = [
            client.get("/api/v1/overview", headers={"Authorization": f"Bearer {served.token}x"}),
            client.get("/login", params={"token": served.token + "x"}),
            client.get("/", headers={"Cookie": f"{COOKIE}={served.token}"}),
            client.get("/", headers={"Host": "evil.example"}),
            client.get(f"/login?token={served.token}", headers={"Host": "evil.example"}),
        ]
    for response in answers:
        assert response.status_code >= 400
        assert served.token not in response.text


def test_the_token_file_of_the_served_home_is_the_only_file_holding_the_token(
    served: Served,
) -> None:
    home: Path = served.settings.home
    holders = [
        p.relative_to(home).as_posix()
        for p in home.rglob("*")
        if p.is_file() and served.token.encode() in p.read_bytes()
    ]
    assert holders == [TOKEN_FILE]


def test_a_bad_form_value_is_a_422_naming_the_field_and_nothing_is_done(
    served: Served, browser: Browser
) -> None:
    run = served.paused_run()
    csrf = {"X-CSRF-Token": browser.csrf}
    bad_task = browser.post(
        f"/runs/{run}/decide", {"task": "Not A Task", "decision": "approve"}, **csrf
    )
    assert bad_task.status_code == 422 and "task" in bad_task.text
    runs_before = served.app.store.count_runs("docs-site")
    long_goal = browser.post("/squads/docs-site/run", {"goal": "x" * 20_001}, **csrf)
    assert long_goal.status_code == 422 and "goal" in long_goal.text
    bad_filter = browser.client.get("/memory/find", params={"q": "x", "agent": "../writer"})
    assert bad_filter.status_code == 422 and "agent" in bad_filter.text
    assert served.paused_run() == run  # still waiting: no answer was given
    assert served.app.store.count_runs("docs-site") == runs_before
