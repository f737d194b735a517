"""Redaction reads a long line a bounded number of times, whatever the number of candidates on
it: the finders' lookups of "the start (or end) of this line" and "the PEM block this is in"
are counted, not timed (``bench/redaction_scale.py`` times it), through a ``str`` that adds
up how many characters each ``find``/``rfind`` call may read."""

from __future__ import annotations

import base64
import random
from typing import Any, SupportsIndex

from squad.text.secrets import find_secrets
from squad.text.secrets._scan import NextNewline
from squad.text.secrets._tokens import _PUBLIC_BEGIN, _PemBlocks


class CountingText(str):
    """A text that counts the characters its ``find`` and ``rfind`` calls may read."""

    scanned = 0

    def _count(self, start: SupportsIndex | None, end: SupportsIndex | None) -> None:
        begin, stop, _ = slice(start, end).indices(len(self))
        CountingText.scanned += max(0, stop - begin)

    def find(self, sub: Any, start: Any = None, end: Any = None) -> int:
        self._count(start, end)
        return super().find(sub, start, end)

    def rfind(self, sub: Any, start: Any = None, end: Any = None) -> int:
        self._count(start, end)
        return super().rfind(sub, start, end)


def one_long_line(chunks: int) -> str:
    """A certificate, then ``chunks`` base64 blobs with cues of every line-looking finder
    (backup codes, login, diceware, mysql -p, "my password"), all on one line."""
    rnd = random.Random(3)
    cert = "-----BEGIN CERTIFICATE----- MIIBszCCAVmgAwIBAgIU -----END CERTIFICATE-----"
    cues = ("backup codes: 1234-5678", "login", "diceware", "mysql -pS3cret9x", "my password")
    parts = [cert]
    for i in range(chunks):
        parts.append(base64.b64encode(rnd.randbytes(31)).decode())
        parts.append(cues[i % len(cues)])
    return " ".join(parts)


def test_the_line_lookups_read_a_long_line_a_bounded_number_of_times() -> None:
    """Each candidate looked back to the line's start (and to the last PEM header) from where
    it was: on one line of 2,000 blobs that read the line ~1,000 times. Now the lookups read
    the text a bounded number of times (about 13: fixed windows after each cue), as many at
    500 blobs as at 2,000."""
    ratios = []
    for chunks in (500, 2_000):
        text = CountingText(one_long_line(chunks))
        CountingText.scanned = 0
        found = find_secrets(text)
        assert found, "the blobs are credentials"
        ratios.append(CountingText.scanned / len(text))
    assert ratios[1] <= 1.2 * ratios[0], ratios  # quadratic: 4x as many blobs, 4x the ratio
    assert ratios[1] <= 40, ratios  # scanning back from each blob: ~1,000


def scan_back(text: str, pos: int) -> bool:
    """The PEM half of ``in_public_block`` as it was: the last BEGIN before ``pos``, no END
    between them, and the BEGIN a public key's or certificate's."""
    begin = text.rfind("-----BEGIN ", 0, pos)
    if begin < 0 or text.find("-----END ", begin, pos) >= 0:
        return False
    return _PUBLIC_BEGIN.match(text, begin) is not None


def test_pem_blocks_answer_as_the_scan_back_does_at_every_position() -> None:
    body = "MIIBszCCAVmgAwIBAgIUdGhpcyBpcyBub3QgYSBrZXk"
    text = (
        f"a {body}\n-----BEGIN PUBLIC KEY-----\n{body}\n-----END PUBLIC KEY-----\n{body} "
        f"-----BEGIN CERTIFICATE-----\n{body}\n-----BEGIN PRIVATE KEY-----\n{body}\n"
        f"-----END PRIVATE KEY----- {body} ------BEGIN CERTIFICATE----- {body} -----END -----END"
    )
    blocks = _PemBlocks(text)
    answers = [blocks.public(pos) for pos in range(len(text) + 1)]
    assert answers == [scan_back(text, pos) for pos in range(len(text) + 1)]
    assert any(answers) and not all(answers)


def test_next_newline_is_find_for_any_order_of_positions() -> None:
    rnd = random.Random(5)
    text = "".join(rnd.choice("ab\n") for _ in range(300))
    ask = NextNewline(text)
    positions = sorted(rnd.randrange(len(text) + 1) for _ in range(200))
    positions += [rnd.randrange(len(text) + 1) for _ in range(200)]  # and out of order
    for pos in positions:
        assert ask(pos) == text.find("\n", pos), pos
