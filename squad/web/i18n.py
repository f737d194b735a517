"""The dashboard's languages: which one a request gets, its message catalogue, and numbers,
money, sizes and times written the way that language writes them.

A request's language is, in order: a ``?lang=`` in its address (which the answer also
remembers), the ``squad_lang`` cookie the header's switch set, the browser's
``Accept-Language`` (q-values honoured, ``ko-KR`` is ``ko``), else English. The catalogues
are ``locale/<lang>/LC_MESSAGES/messages.po`` next to this module, compiled in memory the
first time a process needs a language (no build step, no ``.mo`` files to keep in step);
English is the source text itself. The JSON API, MCP and the CLI stay English.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from datetime import datetime
from importlib.resources import files
from typing import TYPE_CHECKING, Any, TypeVar

from squad.web.svg import Words, duration_text

if TYPE_CHECKING:
    from collections.abc import Callable
    from gettext import NullTranslations

    from starlette.requests import Request
    from starlette.responses import Response

__all__ = [
    "COOKIE",
    "DEFAULT",
    "LOCALES",
    "N_",
    "Formats",
    "choose",
    "gettext_for",
    "negotiate",
    "ngettext_for",
    "remember",
    "request_locale",
    "translations",
]

AnyResponse = TypeVar("AnyResponse", bound="Response")

LOCALES = ("en", "ko")
"""The languages the dashboard speaks; the first is the source text and the fallback."""
DEFAULT = "en"
NAMES = {"en": "English", "ko": "한국어"}
"""Each language in itself, as the header's switch shows it."""
COOKIE = "squad_lang"
COOKIE_MAX_AGE = 400 * 24 * 3600
"""The longest a browser keeps a cookie (Chrome caps at 400 days)."""


def N_(message: str) -> str:
    """Marks ``message`` for the catalogue where it is only translated later (a status
    word shown through the ``label`` filter)."""
    return message


LABELS = (
    # run and task statuses (squad.store.records)
    N_("pending"),
    N_("running"),
    N_("succeeded"),
    N_("failed"),
    N_("stopped"),
    N_("interrupted"),
    N_("awaiting_approval"),
    N_("done"),
    N_("blocked"),
    # facts, and what a change did to one (squad.history.message.FactOp)
    N_("active"),
    N_("dormant"),
    N_("superseded"),
    N_("forgotten"),
    N_("added"),
    N_("revived"),
    N_("purged"),
    # cluster nodes (squad.web.cluster.NODE_STATES) and their roles
    N_("up"),
    N_("lost"),
    N_("daemon"),
    N_("worker"),
    N_("dashboard"),
    # what started a run
    N_("schedule"),
    N_("web"),
    N_("cli"),
    N_("api"),
    N_("mcp"),
    N_("manual"),
    N_("on_start"),
    N_("missed"),
    N_("resume"),
    N_("recover"),
    N_("approval"),
    N_("cluster"),
    N_("unknown"),
    # where a fact came from
    N_("extractor"),
    N_("agent"),
    N_("archive"),
    # review items
    N_("approved"),
    N_("rejected"),
    # the workspace explorer's kinds of entry and of file (squad.views.workspace)
    N_("dir"),
    N_("file"),
    N_("link"),
    N_("other"),
    N_("markdown"),
    N_("json"),
    N_("jsonl"),
    N_("yaml"),
    N_("text"),
    # a changed file's status in a run's diff
    N_("modified"),
    N_("deleted"),
    N_("renamed"),
    # the regions of a prompt, and where its window's size came from (squad.views.memory)
    N_("boot"),
    N_("memory"),
    N_("recall"),
    N_("supplementary"),
    N_("working"),
    N_("history"),
    N_("turn"),
    N_("reserve"),
    N_("option"),
    N_("spec"),
    N_("offline"),
    N_("litellm"),
    N_("default"),
    # the boot files' titles (squad.memory.boot)
    N_("Persona (SOUL.md)"),
    N_("User preferences (USER.md)"),
    N_("Work rules (AGENTS.md)"),
    N_("Workspace rules (AGENTS.md in this workspace)"),
    # extraction passes
    N_("skipped"),
    # how a squad works (squad.spec.models.ProcessType)
    N_("sequential"),
    N_("hierarchical"),
)
"""Words the pages show from data (a run's status, a node's state): the ``label`` filter
translates them, and their CSS class keeps the English value."""


# -- choosing the language -------------------------------------------------------------------------


def _supported(tag: str) -> str | None:
    """``ko-KR`` -> ``ko``; a language the dashboard does not speak -> None."""
    primary = tag.strip().replace("_", "-").split("-", 1)[0].lower()
    return primary if primary in LOCALES else None


def negotiate(accept_language: str | None) -> str | None:
    """The browser's most wanted language the dashboard speaks (RFC 9110 q-values; a
    ``q=0`` language is refused, ``*`` means the default), or None if it wants none."""
    if not accept_language:
        return None
    wanted: list[tuple[float, int, str]] = []
    for order, part in enumerate(accept_language.split(",")[:50]):
        tag, *params = (p.strip() for p in part.split(";"))
        quality = 1.0
        for param in params:
            name, _eq, value = param.partition("=")
            if name.strip().lower() == "q":
                try:
                    quality = float(value)
                except ValueError:
                    quality = 0.0
        if not tag or not 0 < quality <= 1:
            continue
        found = DEFAULT if tag == "*" else _supported(tag)
        if found is not None:
            wanted.append((-quality, order, found))
    return min(wanted)[2] if wanted else None


def choose(query: str | None, cookie: str | None, accept_language: str | None) -> str:
    """The language of a request: address, then cookie, then browser, then English."""
    for asked in (query, cookie):
        if asked and (found := _supported(asked)) is not None:
            return found
    return negotiate(accept_language) or DEFAULT


def request_locale(request: Request) -> str:
    """``request``'s language, worked out once per request."""
    state = request.state
    known = getattr(state, "locale", None)
    if known is None:
        known = choose(
            request.query_params.get("lang"),
            request.cookies.get(COOKIE),
            request.headers.get("accept-language"),
        )
        state.locale = known
    return str(known)


def remember(request: Request, response: AnyResponse) -> AnyResponse:
    """Keeps a ``?lang=`` choice in the cookie; says caches must tell languages apart."""
    asked = request.query_params.get("lang")
    if asked and (found := _supported(asked)) is not None:
        response.set_cookie(
            COOKIE, found, max_age=COOKIE_MAX_AGE, path="/", samesite="lax", httponly=True
        )
    response.headers["Vary"] = "Accept-Language, Cookie"
    return response


# -- catalogues ------------------------------------------------------------------------------------


@functools.cache
def translations(locale: str) -> NullTranslations:
    """``locale``'s catalogue, compiled from its ``.po`` once per process; fuzzy entries are
    left out (they show the English until a person checks them)."""
    from gettext import GNUTranslations, NullTranslations
    from io import BytesIO

    if locale not in LOCALES:
        raise ValueError(f"no catalogue for {locale!r}: the dashboard speaks {LOCALES}")
    source = files("squad.web") / "locale" / locale / "LC_MESSAGES" / "messages.po"
    if locale == DEFAULT or not source.is_file():
        return NullTranslations()
    from babel.messages.mofile import write_mo
    from babel.messages.pofile import read_po

    with source.open("rb") as handle:
        catalog = read_po(handle, locale=locale)
    compiled = BytesIO()
    write_mo(compiled, catalog, use_fuzzy=False)
    compiled.seek(0)
    return GNUTranslations(compiled)


def gettext_for(locale: str) -> Callable[..., str]:
    """``_(message, **values)`` in ``locale``: the translation with ``%(name)s`` filled in,
    as Jinja's newstyle gettext does in the templates."""
    catalogue = translations(locale)

    def gettext(message: str, **values: Any) -> str:
        text = catalogue.gettext(message)
        return text % values if values else text

    return gettext


def ngettext_for(locale: str) -> Callable[..., str]:
    """``ngettext(singular, plural, n, **values)`` in ``locale``, with ``%(num)s`` as ``n``."""
    catalogue = translations(locale)

    def ngettext(singular: str, plural: str, n: int, **values: Any) -> str:
        return catalogue.ngettext(singular, plural, n) % {"num": n, **values}

    return ngettext


# -- numbers, money, sizes and times ---------------------------------------------------------------


@dataclass(frozen=True)
class Formats:
    """The template filters of one language. English keeps the dashboard's compact,
    sortable forms (``2026-12-07 01:16:53``, ``$0.0123``); others use Babel's (CLDR)."""

    locale: str

    def when(self, text: str | None) -> str:
        """An ISO timestamp in the server's time zone."""
        if not text:
            return "-"
        try:
            moment = datetime.fromisoformat(text)
        except ValueError:
            return text
        local = moment.astimezone()
        if self.locale == DEFAULT:
            return local.strftime("%Y-%m-%d %H:%M:%S")
        from babel.dates import format_datetime

        return format_datetime(local, "medium", tzinfo=local.tzinfo, locale=self.locale)

    def number(self, value: float | None, digits: int = 0) -> str:
        """``1,234`` (or ``-`` for no value); ``digits`` decimals, at most."""
        if value is None:
            return "-"
        from babel.numbers import format_decimal

        pattern = "#,##0" + ("." + "#" * digits if digits else "")
        return format_decimal(value, pattern, locale=self.locale)

    def usd(self, value: float | None, digits: int | None = 4) -> str:
        """Dollars with ``digits`` decimals (None: as many as needed, at most two):
        ``$0.0123``, ``$2.5`` (``US$0.0123`` in Korean)."""
        from babel.numbers import format_currency

        decimals = ".##" if digits is None else ("." + "0" * digits if digits else "")
        return format_currency(
            value or 0.0, "USD", "¤#,##0" + decimals, locale=self.locale, currency_digits=False
        )

    def size(self, size: int | None) -> str:
        """Bytes as a person reads them: ``512 B``, ``1.5 KB``."""
        if size is None:
            return ""
        value = float(size)
        for unit in ("B", "KB", "MB", "GB"):
            if value < 1024 or unit == "GB":
                return f"{value:.0f} {unit}" if unit == "B" else f"{self.fixed(value, 1)} {unit}"
            value /= 1024
        return f"{size} B"

    def fixed(self, value: float, digits: int) -> str:
        """``value`` with exactly ``digits`` decimals in this language's separators."""
        from babel.numbers import format_decimal

        pattern = "#,##0" + ("." + "0" * digits if digits else "")
        return format_decimal(value, pattern, locale=self.locale)

    def duration(self, seconds: float | None) -> str:
        """A length of time, as precise in every language: ``0.15 s`` / ``0.15초``,
        ``3 min 5 s`` / ``3분 5초`` (:func:`squad.web.svg.duration_text`)."""
        if seconds is None:
            return "-"
        return duration_text(seconds, self.words())

    def words(self) -> Words:
        """How this language's pictures and phrases speak: its catalogue, its numbers."""
        return Words(text=translations(self.locale).gettext, number=self.fixed)
