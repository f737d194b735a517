"""The dashboard's message catalogue, kept in step with its sources: ``extract()`` reads every
template and every ``squad/web`` module for ``_()``/``ngettext()``/``N_()``/``{% trans %}``;
``update()`` merges that into each language's ``messages.po`` (new strings arrive empty,
strings no longer used go away, a changed English text keeps its old translation marked
fuzzy). ``make messages`` runs it; a test fails on any message without a checked translation.

    python -m squad.web.catalog          # update the .po files
    python -m squad.web.catalog --check  # exit 1 and list what is untranslated
"""

from __future__ import annotations

import sys
from io import BytesIO
from pathlib import Path
from typing import TYPE_CHECKING

from squad.web.i18n import DEFAULT, LOCALES

if TYPE_CHECKING:
    from babel.messages.catalog import Catalog

__all__ = ["LOCALE_DIR", "WEB_DIR", "extract", "po_path", "untranslated", "update"]

WEB_DIR = Path(__file__).resolve().parent
LOCALE_DIR = WEB_DIR / "locale"
HEADER = """\
# The dashboard's messages in {lang}, merged from its sources by `make messages`.
# Translate each msgstr; a message left empty or fuzzy fails tests/web/test_i18n.py.
#"""
KEYWORDS = {"_": None, "gettext": None, "ngettext": (1, 2), "N_": None, "words": None}
"""``words(...)`` is how the server-drawn pictures say things (:class:`squad.web.svg.Words`)."""
JINJA_OPTIONS = {
    "extensions": "jinja2.ext.i18n",
    "trimmed": "true",
    "newstyle_gettext": "true",
    "trim_blocks": "true",
    "lstrip_blocks": "true",
    "silent": "false",  # a template that does not parse fails the extraction
}


def po_path(locale: str) -> Path:
    return LOCALE_DIR / locale / "LC_MESSAGES" / "messages.po"


def extract() -> Catalog:
    """Every message the dashboard shows, from the sources as they are now."""
    from babel.messages.catalog import Catalog
    from babel.messages.extract import extract_from_dir

    catalog = Catalog(project="squad", charset="utf-8")
    method_map = [("templates/*.html", "jinja2"), ("*.py", "python")]
    options = {"templates/*.html": JINJA_OPTIONS}
    for filename, lineno, message, comments, context in extract_from_dir(
        str(WEB_DIR),
        method_map,
        options,
        keywords=KEYWORDS,
        comment_tags=("Translators:",),
        strip_comment_tags=True,
    ):
        catalog.add(message, None, [(filename, lineno)], auto_comments=comments, context=context)
    return catalog


def update() -> list[Path]:
    """Merge the sources' messages into each translated language's ``messages.po``."""
    from babel.messages.catalog import Catalog
    from babel.messages.pofile import read_po, write_po

    template = extract()
    written = []
    for locale in LOCALES:
        if locale == DEFAULT:
            continue
        path = po_path(locale)
        if path.exists():
            with path.open("rb") as handle:
                catalog = read_po(handle, locale=locale)
        else:
            catalog = Catalog(locale=locale, project="squad", charset="utf-8")
        template.creation_date = catalog.creation_date  # no churn in the header per run
        catalog.update(template, update_header_comment=False)
        catalog.fuzzy = False
        catalog.project = "squad"
        catalog.version = ""
        catalog.msgid_bugs_address = ""
        catalog.last_translator = "squad maintainers"
        catalog.language_team = f"{locale} (the squad project)"
        catalog.header_comment = HEADER.replace("{lang}", locale)
        text = BytesIO()  # a failure leaves the old file whole
        write_po(text, catalog, width=100, omit_header=False, ignore_obsolete=True)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.getvalue())
        written.append(path)
    return written


def untranslated(locale: str) -> list[str]:
    """The messages of the sources that ``locale``'s catalogue does not translate (missing,
    empty, or fuzzy), each with where it is used."""
    from babel.messages.pofile import read_po

    path = po_path(locale)
    with path.open("rb") as handle:
        catalog = read_po(handle, locale=locale)
    problems = []
    for message in extract():
        if not message.id:
            continue
        found = catalog.get(message.id, message.context)
        strings = found.string if found is not None else None
        texts = list(strings) if isinstance(strings, (list, tuple)) else [strings]
        if found is None or found.fuzzy or not all(texts):
            where = ", ".join(f"{file}:{line}" for file, line in message.locations)
            why = "fuzzy" if found is not None and found.fuzzy else "no translation"
            problems.append(f"{message.id!r} ({where}): {why}")
    return problems


def main(argv: list[str]) -> int:
    if argv[:1] == ["--check"]:
        problems = [
            f"{locale}: {p}"
            for locale in LOCALES
            if locale != DEFAULT
            for p in untranslated(locale)
        ]
        print("\n".join(problems) or "every message is translated")
        return 1 if problems else 0
    for path in update():
        print(f"updated {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
