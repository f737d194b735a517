"""The dashboard in Korean and English: which language a request gets, the catalogue covering
every string of the sources, no English left in a Korean page, and numbers and dates written
the Korean way."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from importlib.resources import files
from typing import Any

import pytest

from squad.web.catalog import extract, untranslated
from squad.web.i18n import COOKIE, Formats, choose, negotiate, translations
from squad.web.render import environment
from tests.web.conftest import Served

KO = {"Accept-Language": "ko-KR,ko;q=0.9,en-US;q=0.8,en;q=0.7"}
WORD = re.compile(r"[A-Za-z][A-Za-z']+")
ALLOWED_ENGLISH = frozenset(
    {
        "squad",  # the product's name, in the header and every title
        "English",  # the language switch names each language in itself
        # file, setting and command names, units and initialisms kept as they are
        *("md", "AGENTS", "SOUL", "USER", "memory", "review", "low_confidence", "all"),
        *("KB", "MB", "GB", "US", "PID", "API", "CLI", "MCP", "JSON", "JSONL", "YAML"),
        *("diff", "litellm"),
    }
)
"""English a Korean page may show outside the data it displays and outside ``<code>``:
``memory`` and ``review`` only in ``memory.review`` and ``memory.md``."""


# -- choosing the language -----------------------------------------------------------------------


def test_accept_language_is_ranked_by_q_value_then_order() -> None:
    assert negotiate("ko-KR,ko;q=0.9,en-US;q=0.8,en;q=0.7") == "ko"
    assert negotiate("en-US,en;q=0.9,ko;q=0.8") == "en"
    assert negotiate("fr-FR, ko;q=0.5, en;q=0.4") == "ko"  # French is not spoken: next best
    assert negotiate("en;q=0.2, ko_KR;q=0.8") == "ko"
    assert negotiate("ko;q=0, en;q=0.1") == "en"  # q=0 refuses a language
    assert negotiate("de, *;q=0.1") == "en"  # anything: the default
    assert negotiate("ko;q=abc, en;q=0.5") == "en"  # an unreadable q counts as refused
    assert negotiate("de-DE, fr") is None
    assert negotiate("") is None
    assert negotiate(None) is None


def test_address_beats_cookie_beats_browser_beats_english() -> None:
    assert choose("ko", "en", "en") == "ko"
    assert choose(None, "ko", "en") == "ko"
    assert choose("xx", "ko-KR", "en") == "ko"  # an unknown ?lang= is ignored
    assert choose(None, None, "ko-KR") == "ko"
    assert choose(None, "jp", "de") == "en"


# -- the catalogue -------------------------------------------------------------------------------


def test_every_message_of_the_sources_has_a_checked_korean_translation() -> None:
    """A string wrapped in ``_()`` but not translated (or only fuzzily) fails here, with where
    it is used; ``make messages`` adds it to the .po for a translator."""
    assert len(extract()) > 200  # the extraction reads the templates and the modules
    assert untranslated("ko") == []


CALLED_WITH_TEXT = re.compile(
    r"""(?<![\w.])(?:_|N_|words)\(\s*(["'])((?:(?!\1)[^\\\n])+)\1(?=\s*[,)])"""
)
"""A ``_("...")``, ``N_("...")`` or ``words("...")`` call with its text written in place, in
one literal (one split over lines is not in an f-string)."""


def test_the_extraction_finds_every_message_written_in_the_modules() -> None:
    """Babel's extractor does not look inside f-strings: a ``words("...")`` written in one
    would never reach the catalogue and show English on a Korean page. Every call a plain
    reading of the modules finds must be in the extraction."""
    extracted = {m.id for m in extract() if isinstance(m.id, str)}
    written = {
        (entry.name, text)
        for entry in (files("squad.web")).iterdir()
        if entry.name.endswith(".py")
        for _quote, text in CALLED_WITH_TEXT.findall(entry.read_text(encoding="utf-8"))
    }
    assert len(written) > 50
    assert {(name, text) for name, text in written if text not in extracted} == set()


def test_each_korean_translation_fills_in_the_same_values_as_its_english() -> None:
    from babel.messages.pofile import read_po

    source = files("squad.web") / "locale" / "ko" / "LC_MESSAGES" / "messages.po"
    with source.open("rb") as handle:
        catalog = read_po(handle, locale="ko")
    names = re.compile(r"%\((\w+)\)[sd]|\{(\w+)\}")  # gettext's, and the pictures' Words

    def fields(text: str) -> set[str]:
        return {a or b for a, b in names.findall(text)}

    mismatched = []
    for message in catalog:
        if not message.id:
            continue
        english = message.id if isinstance(message.id, str) else message.id[-1]
        korean = message.string if isinstance(message.string, str) else message.string[0]
        may_use = fields(english) | ({"num"} if isinstance(message.id, tuple) else set())
        if fields(korean) - may_use or fields(english) - fields(korean):
            mismatched.append((english, korean))
        if english.count("<") != korean.count("<"):  # the same markup around the values
            mismatched.append((english, korean))
    assert mismatched == []


def test_a_language_is_compiled_once_per_process() -> None:
    assert translations("ko") is translations("ko")
    assert environment("ko") is environment("ko")
    assert translations("ko").gettext("Approvals") == "승인"
    assert translations("en").gettext("Approvals") == "Approvals"


class _Visible(HTMLParser):
    """The text a person reads: text nodes and the attributes shown (placeholder, title,
    aria-label, hx-confirm), leaving out code, preformatted text and what ``skip`` matches."""

    SHOWN = ("placeholder", "title", "aria-label", "hx-confirm", "alt")
    QUIET = ("code", "pre", "textarea", "script", "style", "svg", "title")

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.quiet: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if not self.quiet:
            self.parts += [value or "" for name, value in attrs if name in self.SHOWN]
        if tag in self.QUIET:
            self.quiet.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if self.quiet and self.quiet[-1] == tag:
            self.quiet.pop()

    def handle_data(self, data: str) -> None:
        if not self.quiet:
            self.parts.append(data)


def _english_words(html: str) -> set[str]:
    parser = _Visible()
    parser.feed(html)
    parser.close()
    return set(WORD.findall(" ".join(parser.parts)))


def test_no_template_has_english_outside_the_catalogue() -> None:
    """Every template's own text (what is not a ``{{ value }}`` or a ``{% trans %}`` block)
    carries no English word a person would read: it is all in ``_()``."""
    env = environment("en")
    templates = files("squad.web") / "templates"
    found: dict[str, set[str]] = {}
    for entry in sorted(templates.iterdir(), key=lambda e: e.name):
        if not entry.name.endswith(".html"):
            continue
        literal: list[str] = []
        in_trans, last_name_at_block_start = False, True
        for _line, kind, value in env.lex(entry.read_text(encoding="utf-8")):
            if kind == "whitespace":
                continue
            if kind == "block_begin":
                literal.append(" \x00 ")
                last_name_at_block_start = True
                continue
            if kind == "name" and last_name_at_block_start:
                if value in ("trans", "pluralize"):
                    in_trans = True
                elif value == "endtrans":
                    in_trans = False
            last_name_at_block_start = False
            if kind == "data" and not in_trans:
                literal.append(value)
            elif kind == "variable_begin":
                literal.append(" \x00 ")
        words = _english_words("".join(literal)) - ALLOWED_ENGLISH
        if words:
            found[entry.name] = words
    assert found == {}


# -- the pages in Korean -------------------------------------------------------------------------


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for item in value.values() for s in _strings(item)] + list(value)
    if isinstance(value, list):
        return [s for item in value for s in _strings(item)]
    return []


def _data_words(served: Served, run_id: str) -> set[str]:
    """Every word the pages may show as data: the JSON API's answers about the same home,
    which the pages render (the same views)."""
    client = served.client
    answers: list[Any] = []
    for squad in ("docs-site", "code-review"):
        detail = client.get(f"/api/v1/squads/{squad}").json()
        answers.append(detail)
        for agent in detail["agents"]:
            base = f"/api/v1/squads/{squad}/agents/{agent['id']}"
            answers += [client.get(f"{base}/{part}").json() for part in ("memory", "context")]
            answers += [client.get(f"{base}/memory/{part}").json() for part in ("history",)]
    for path in (
        "/api/v1/overview",
        "/api/v1/approvals",
        "/api/v1/runs",
        f"/api/v1/runs/{run_id}",
        f"/api/v1/runs/{run_id}/changes",
        "/api/v1/memory/extraction",
        "/api/v1/memory/namespaces",
    ):
        answers.append(client.get(path).json())
    return {word for text in _strings(answers) for word in WORD.findall(text)}


PAGES: tuple[tuple[str, tuple[str, ...], bool], ...] = (
    ("/", ("overview.html", "overview_body.html", "cluster.html"), False),
    ("/?part=body", ("overview_body.html", "cluster.html"), True),
    ("/approvals", ("approvals.html",), False),
    ("/squads/docs-site?part=runs", ("squad_runs.html",), True),
    ("/squads/docs-site/files", ("explorer.html", "tree_level.html"), False),
    ("/squads/docs-site/files?path=tasks", ("tree_level.html",), True),
    ("/squads/docs-site/health", ("health_line.html",), True),
    ("/squads/docs-site/find?q=the", ("search_results.html",), True),
    ("/squads/docs-site/agents/writer/history", ("memory_history.html",), True),
    ("/squads/docs-site/agents/writer/context", ("context_block.html",), True),
    ("/runs/{run}/changes", ("run_changes.html",), True),
    ("/squads/docs-site/agents/writer", ("agent.html", "memory_parts.html"), False),
    ("/squads/docs-site", ("squad.html",), False),
    ("/runs/{run}", ("run.html",), False),
    ("/memory", ("memory.html",), False),
    ("/spend", ("spend.html",), False),
    ("/no/such/page", ("error.html",), False),
)
"""Every page and fragment, the templates it is built from, and whether htmx asks for it."""


def test_every_korean_page_shows_only_korean_around_its_data(served: Served) -> None:
    run_id = served.paused_run()
    data = _data_words(served, run_id)
    leftovers: dict[str, set[str]] = {}
    checked = 0
    for path, _templates, fragment in PAGES:
        headers = {**KO, "HX-Request": "true"} if fragment else KO
        answer = served.client.get(path.format(run=run_id), headers=headers)
        assert answer.status_code == (404 if path == "/no/such/page" else 200), path
        if not fragment:
            assert re.search(r"[가-힣]", answer.text), f"{path} has no Korean at all"
            assert '<html lang="ko">' in answer.text
        words = _english_words(answer.text) - data - ALLOWED_ENGLISH
        if words:
            leftovers[path] = words
        checked += 1
    assert checked == len(PAGES)
    assert leftovers == {}


def _cells(html: str, table: str, column: int) -> dict[str, str]:
    """``table``'s body rows as first cell -> the text of cell ``column`` (tags dropped)."""
    from html import unescape

    body = re.search(rf'<table class="grid" id="{table}">.*?<tbody>(.*?)</tbody>', html, re.DOTALL)
    assert body is not None, table
    cells = {}
    for row in re.findall(r"<tr>(.*?)</tr>", body.group(1), re.DOTALL):
        texts = [
            unescape(re.sub(r"<[^>]+>", "", cell)).strip()
            for cell in re.findall(r"<td[^>]*>(.*?)</td>", row, re.DOTALL)
        ]
        cells[texts[0].split()[0]] = texts[column]
    return cells


def test_a_korean_page_words_schedules_the_daemon_and_short_durations_in_korean(
    served: Served,
) -> None:
    """What the test above lets through because the JSON API says it in English: the
    overview's schedule column and the daemon's state are Korean (a cron expression and its
    time zone stay as written), and a task under a second keeps its digits (not ``1초``)."""
    overview = served.client.get("/", headers=KO).text
    schedules = _cells(overview, "squads", 1)
    assert set(schedules) == {"code-review", "docs-site"}
    for squad, said in schedules.items():
        outside_cron = re.sub(r"cron '[^']*' \([^)]*\)", "", said)
        assert re.search(r"[가-힣]", said) and not WORD.search(outside_cron), (squad, said)
    assert "시작 시 실행" in schedules["code-review"]
    daemon = re.search(r'<p class="(?:ok|warn)">(.*?)</p>', overview, re.DOTALL)
    assert daemon is not None and not WORD.search(re.sub(r"\bPID\b|\bpid\b", "", daemon[1]))

    run_id = served.paused_run()
    tasks = {
        t["id"]: t["duration_s"]
        for t in served.client.get(f"/api/v1/runs/{run_id}").json()["tasks"]
    }
    shown = _cells(served.client.get(f"/runs/{run_id}", headers=KO).text, "tasks", 3)
    quick = {
        task: seconds for task, seconds in tasks.items() if seconds is not None and seconds < 1
    }
    assert quick, "the example run's tasks take under a second each"
    for task, seconds in quick.items():
        assert shown[task].endswith("초") and shown[task] != "1초", (task, seconds, shown[task])
        assert abs(float(shown[task].removesuffix("초")) - seconds) <= max(0.0005, seconds * 0.05)


def test_the_pictures_of_a_korean_page_speak_korean_around_their_data(served: Served) -> None:
    """The timeline, task graph and spend charts (left out above with every ``<svg>``): their
    labels, legend, axis titles and tooltips are Korean; a bar's tooltip names its task's
    status as the tables do."""
    from html import unescape

    run_id = served.paused_run()
    data = _data_words(served, run_id)
    leftovers: dict[str, set[str]] = {}
    said: dict[str, str] = {}
    for path in (f"/runs/{run_id}", "/squads/docs-site", "/squads/code-review", "/spend"):
        html = served.client.get(path, headers=KO).text
        pictures = re.findall(r"<svg\b.*?</svg>", html, re.DOTALL)
        assert pictures, f"{path} has no picture"
        said[path] = text = unescape(re.sub(r"<[^>]+>", " ", " ".join(pictures)))
        assert re.search(r"[가-힣]", text), path
        words = set(WORD.findall(text)) - data - ALLOWED_ENGLISH
        if words:
            leftovers[path] = words
    assert leftovers == {}
    timeline = said[f"/runs/{run_id}"]
    assert "outline (planner): " in timeline and "완료 · 임계 경로" in timeline
    assert "실행 시작 후 경과 시간 (분:초)" in timeline
    assert "먼저 사람의 승인을 받습니다" in said["/squads/docs-site"]


def test_the_same_page_in_english_has_no_korean(served: Served) -> None:
    answer = served.client.get("/", headers={"Accept-Language": "en-US,en;q=0.9"})
    assert '<html lang="en">' in answer.text
    assert ">Approvals</a>" in answer.text
    assert not re.search(r"[가-힣]", answer.text.replace("한국어", ""))


@pytest.fixture
def cookie_jar_left_empty(served: Served) -> Any:
    """The shared client keeps the language cookies a test's answers set: empty it after."""
    yield
    served.client.cookies.clear()


@pytest.mark.usefixtures("cookie_jar_left_empty")
def test_lang_in_the_address_is_remembered_and_fragments_follow_it(served: Served) -> None:
    english_browser = {"Accept-Language": "en"}
    switched = served.client.get("/approvals?lang=ko", headers=english_browser)
    assert '<html lang="ko">' in switched.text
    cookie = switched.cookies.get(COOKIE)
    assert cookie == "ko"
    set_cookie = switched.headers["set-cookie"].lower()
    assert "samesite=lax" in set_cookie
    assert "max-age=" in set_cookie
    assert "accept-language" in switched.headers["vary"].lower()
    later = {**english_browser, "Cookie": f"{COOKIE}=ko"}
    page = served.client.get("/", headers=later)
    fragment = served.client.get("/?part=body", headers={**later, "HX-Request": "true"})
    assert '<html lang="ko">' in page.text
    assert "<h2>스쿼드</h2>" in fragment.text
    back = served.client.get("/?lang=en", headers=later)
    assert '<html lang="en">' in back.text
    assert back.cookies.get(COOKIE) == "en"


@pytest.mark.usefixtures("cookie_jar_left_empty")
def test_the_switch_links_keep_the_list_page_but_never_a_token(served: Served) -> None:
    answer = served.client.get(
        "/squads/docs-site/files?path=tasks&token=secret", headers={"Accept-Language": "en"}
    )
    switch = re.search(r'<span class="lang-switch".*?</span>', answer.text, re.DOTALL)
    assert switch is not None
    assert 'href="/squads/docs-site/files?path=tasks&amp;lang=ko"' in switch.group(0)
    assert "secret" not in switch.group(0)


# -- numbers, money and times --------------------------------------------------------------------


def test_korean_writes_dates_money_and_durations_its_own_way() -> None:
    korean, english = Formats("ko"), Formats("en")
    moment = "2026-03-04T15:06:07+00:00"
    assert re.fullmatch(r"2026\. 3\. \d+\. (오전|오후) \d+:\d\d:07", korean.when(moment))
    assert re.fullmatch(r"2026-03-0\d \d\d:\d\d:07", english.when(moment))
    assert korean.when(None) == english.when("") == "-"
    assert korean.usd(0.0123) == "US$0.0123"
    assert english.usd(0.0123) == "$0.0123"
    assert english.usd(2.5, None) == "$2.5"
    assert english.number(1234567) == korean.number(1234567) == "1,234,567"
    assert korean.duration(0.15) == "0.15초"  # the thresholds: tests/web/test_phrases.py
    assert korean.duration(185) == "3분 5초"
    assert english.duration(185) == "3 min 5 s"
    assert korean.size(1536) == "1.5 KB"


@pytest.mark.parametrize("locale", ["xx", "ko-KR"])
def test_an_unknown_language_is_refused_by_name(locale: str) -> None:
    with pytest.raises(ValueError, match=repr(locale)):
        environment(locale)


def test_a_message_a_route_writes_comes_in_the_page_language(served: Served) -> None:
    """A refusal the dashboard itself words (not a core error) is translated; the run is
    not touched."""
    run_id = served.paused_run()
    answer = served.client.post(
        f"/runs/{run_id}/decide",
        content="task=publish&decision=reject&reason=",
        headers={
            **KO,
            "HX-Request": "true",
            "Content-Type": "application/x-www-form-urlencoded",
        },
    )
    assert answer.status_code == 422
    assert "거부 사유를 적어 주세요" in answer.text
    assert served.paused_run() == run_id


def test_the_not_logged_in_page_speaks_the_browsers_language(served: Served) -> None:
    import httpx

    with httpx.Client(base_url=served.url.rstrip("/"), timeout=30) as stranger:
        html = {"Accept": "text/html"}
        korean = stranger.get("/approvals", headers={**html, **KO})
        english = stranger.get("/approvals", headers={**html, "Accept-Language": "en"})
        api = stranger.get("/api/v1/overview", headers=KO)
    assert korean.status_code == english.status_code == api.status_code == 401
    assert "<html lang=ko>" in korean.text
    assert "로그인하지 않았습니다" in korean.text
    assert "not logged in" in english.text
    assert api.json()["detail"].startswith("not logged in")  # the API stays English
