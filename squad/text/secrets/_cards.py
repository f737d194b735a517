"""Payment cards: a card number (by its issuer's leading digits and its Luhn check digit) and a
card's security code after its name. Pure.

A card number is 13 to 19 digits, grouped by spaces or dashes or not, starting as issuers'
numbers start (``2``-``6``), whose last digit is the Luhn check of the others: a random number
of that length passes one time in ten, an order or tracking number seldom starts and checks
out both. The numbers card networks publish for testing (``4242 4242 4242 4242``...) are not
credentials. A security code (``CVV``, ``CVC``, ``CID``, ``CSC``, ``보안코드``) counts as 3-4
digits right after its name.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from squad.text.secrets._scan import Rules, Scan
from squad.text.secrets._values import Candidate, word_set

__all__ = ["KINDS", "RULES", "candidates", "luhn"]

KINDS = ("card_number", "card_security_code")

_CARD = re.compile(r"(?<![\w.-])[2-6]\d{3}(?:[ -]?\d{2,6}){1,4}(?![\w-]|\.\d)")
_SECURITY_CODE = re.compile(
    r"(?i:(?<![\w-])(?:cvv2?|cvc2?|cid|csc|security[ \t]code|card[ \t]verification"
    r"(?:[ \t](?:code|value))?|보안[ \t]?(?:코드|번호)))[ \t]*(?:[:=]|is|은|는|번호는)?[ \t]*"
    r"(?P<v>\d{3,4})(?!\d)"
)
_PUBLISHED = word_set(
    "4242424242424242 4000056655665556 5555555555554444 2223003122003222 5200828282828210"
    " 378282246310005 371449635398431 6011111111111117 3056930009020004 3566002020360505"
    " 6200000000000005 4111111111111111 4012888888881881 5105105105105100 4000000000000002"
    " 4000000000009995 4000002500003155 4000000000003220 4000002760003184"
)
"""Card networks' and payment providers' documented test numbers."""


def luhn(digits: str) -> bool:
    """Whether ``digits`` end in their Luhn check digit."""
    total = 0
    for i, c in enumerate(reversed(digits)):
        d = int(c)
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def _card(value: str) -> bool:
    digits = value.replace(" ", "").replace("-", "")
    separators = {c for c in value if c in " -"}
    return (
        13 <= len(digits) <= 19
        and len(separators) <= 1
        and len(set(digits)) > 2
        and digits not in _PUBLISHED
        and luhn(digits)
    )


RULES = Rules(_CARD, _SECURITY_CODE)
"""Every pattern :func:`candidates` runs over the whole text."""


def candidates(text: str, scan: Scan | None = None) -> Iterator[Candidate]:
    """Card numbers and security codes in ``text``."""
    scan = Scan(text) if scan is None else scan
    if not scan.admits(RULES):
        return
    for m in scan.finditer(_CARD):
        if _card(m[0]):
            yield 2, *m.span(), "card_number"
    for m in scan.finditer(_SECURITY_CODE):
        yield 2, *m.span("v"), "card_security_code"
