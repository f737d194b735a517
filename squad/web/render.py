"""HTML for the pages: the Jinja2 environment (autoescaped), markdown rendered without raw
HTML, code highlighted by Pygments, and search matches marked. Everything a workspace or a
model wrote is escaped before it reaches a page."""

from __future__ import annotations

import functools
from html import escape
from typing import Any

from jinja2 import Environment, PackageLoader, select_autoescape
from markupsafe import Markup

from squad.web.i18n import DEFAULT, LOCALES, NAMES, Formats, translations
from squad.web.phrases import daemon_reason, schedule_text

__all__ = ["environment", "highlight", "human_size", "markdown", "marked"]

MAX_HIGHLIGHT_CHARS = 200_000
"""Past this a preview is shown as plain text: highlighting is slow and a person pages anyway."""


@functools.lru_cache(maxsize=1)
def _markdown_parser() -> Any:
    from markdown_it import MarkdownIt

    # "commonmark" with html off: raw HTML in a file is shown as text, never run; markdown-it
    # refuses javascript:, vbscript: and data: links itself.
    return MarkdownIt("commonmark", {"html": False, "linkify": False}).enable("table")


def markdown(text: str) -> Markup:
    return Markup(_markdown_parser().render(text))


def highlight(text: str, language: str) -> Markup:
    if len(text) > MAX_HIGHLIGHT_CHARS or language in ("", "text"):
        return Markup(f"<pre class=code>{escape(text)}</pre>")
    from pygments import highlight as pygmentize
    from pygments.formatters import HtmlFormatter
    from pygments.lexers import get_lexer_by_name
    from pygments.util import ClassNotFound

    try:
        lexer = get_lexer_by_name(language)
    except ClassNotFound:
        return Markup(f"<pre class=code>{escape(text)}</pre>")
    html = pygmentize(text, lexer, HtmlFormatter(noclasses=True, nowrap=False, cssclass="code"))
    return Markup(html)


def marked(line: str, spans: list[list[int]] | list[tuple[int, int]]) -> Markup:
    """``line`` with each match span in ``<mark>``, everything escaped."""
    out: list[str] = []
    at = 0
    for start, end in spans:
        out.append(escape(line[at:start]))
        out.append(f"<mark>{escape(line[start:end])}</mark>")
        at = end
    out.append(escape(line[at:]))
    return Markup("".join(out))


def human_size(size: int | None) -> str:
    """Bytes as an English reader reads them (for a page in another language, the
    environment's ``size`` filter is that language's)."""
    return Formats(DEFAULT).size(size)


def when(text: str | None) -> str:
    return Formats(DEFAULT).when(text)


@functools.cache
def environment(locale: str = DEFAULT) -> Environment:
    """The templates in ``locale``: its catalogue installed for ``_()``/``{% trans %}``
    (newstyle: values are escaped and filled in after translating) and its filters for
    numbers, money, sizes and times. One per language per process."""
    if locale not in LOCALES:
        raise ValueError(f"the dashboard does not speak {locale!r}: one of {LOCALES}")
    env = Environment(
        loader=PackageLoader("squad.web", "templates"),
        autoescape=select_autoescape(["html"], default=True),
        trim_blocks=True,
        lstrip_blocks=True,
        extensions=["jinja2.ext.i18n"],
    )
    env.policies["ext.i18n.trimmed"] = True
    env.install_gettext_translations(translations(locale), newstyle=True)  # type: ignore[attr-defined]
    formats = Formats(locale)
    gettext = translations(locale).gettext
    env.globals["locale"] = locale
    env.globals["languages"] = NAMES
    env.filters["markdown"] = markdown
    env.filters["highlight"] = highlight
    env.filters["marked"] = marked
    env.filters["size"] = formats.size
    env.filters["when"] = formats.when
    env.filters["number"] = formats.number
    env.filters["fixed"] = formats.fixed
    env.filters["usd"] = formats.usd
    env.filters["duration"] = formats.duration
    env.filters["label"] = lambda word: gettext(str(word)) if word else word
    words = formats.words()
    env.filters["schedule"] = lambda fields: schedule_text(fields, words)
    env.filters["reason"] = lambda reason: daemon_reason(reason, words)
    return env
