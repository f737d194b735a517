"""The API token file, and the session cookies and CSRF tokens derived from the token."""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

import pytest

from squad.errors import UsageError
from squad.web.tokens import TOKEN_FILE, Tokens, load_or_create_token, read_token

# -- the token file ------------------------------------------------------------------------------


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


def test_first_start_creates_the_home_and_a_token_file_only_its_owner_can_read(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    token = load_or_create_token(home)
    path = home / TOKEN_FILE
    assert _mode(path) == 0o600
    assert path.read_text(encoding="ascii") == f"{token}\n"
    assert len(token) >= 40  # 32 random bytes, url-safe base64


def test_first_start_leaves_no_temporary_file_beside_the_token(tmp_path: Path) -> None:
    load_or_create_token(tmp_path)
    assert [p.name for p in tmp_path.iterdir()] == [TOKEN_FILE]


def test_a_later_start_reads_the_token_the_first_one_made(tmp_path: Path) -> None:
    assert load_or_create_token(tmp_path) == load_or_create_token(tmp_path)


def test_two_homes_get_different_tokens(tmp_path: Path) -> None:
    assert load_or_create_token(tmp_path / "a") != load_or_create_token(tmp_path / "b")


def test_a_token_file_others_can_read_is_tightened_to_owner_only(tmp_path: Path) -> None:
    path = tmp_path / TOKEN_FILE
    path.write_text("my-old-token\n", encoding="ascii")
    path.chmod(0o644)
    assert load_or_create_token(tmp_path) == "my-old-token"
    assert _mode(path) == 0o600


def test_reading_a_group_readable_token_tightens_it_too(tmp_path: Path) -> None:
    path = tmp_path / TOKEN_FILE
    path.write_text("my-old-token\n", encoding="ascii")
    path.chmod(0o640)
    assert read_token(tmp_path) == "my-old-token"
    assert _mode(path) == 0o600


def test_reading_the_token_of_a_home_without_one_creates_nothing(tmp_path: Path) -> None:
    assert read_token(tmp_path) is None
    assert list(tmp_path.iterdir()) == []


def test_concurrent_first_starts_all_end_up_with_one_token(tmp_path: Path) -> None:
    home = tmp_path / "home"
    barrier = threading.Barrier(8)
    found: list[str] = []

    def start() -> None:
        barrier.wait()
        found.append(load_or_create_token(home))

    threads = [threading.Thread(target=start) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(found) == 8
    assert len(set(found)) == 1
    assert (home / TOKEN_FILE).read_text(encoding="ascii").strip() == found[0]
    assert [p.name for p in home.iterdir()] == [TOKEN_FILE]


def test_an_empty_token_file_is_refused_with_how_to_fix_it(tmp_path: Path) -> None:
    (tmp_path / TOKEN_FILE).write_text("\n", encoding="ascii")
    with pytest.raises(UsageError, match="delete it"):
        load_or_create_token(tmp_path)


def test_a_token_file_that_is_a_link_is_refused_and_its_target_left_alone(
    tmp_path: Path,
) -> None:
    target = tmp_path / "elsewhere"
    target.write_text("someone-elses-secret\n", encoding="ascii")
    target.chmod(0o644)
    home = tmp_path / "home"
    home.mkdir()
    os.symlink(target, home / TOKEN_FILE)
    with pytest.raises(UsageError, match="not a regular file"):
        load_or_create_token(home)
    assert _mode(target) == 0o644


# -- bearer checks -------------------------------------------------------------------------------

TOKEN = "s3cret-token-value"


@pytest.mark.parametrize("header", [f"Bearer {TOKEN}", f"bearer {TOKEN}", f"Bearer  {TOKEN} "])
def test_the_bearer_header_with_the_token_opens(header: str) -> None:
    assert Tokens(TOKEN).bearer_ok(header)


@pytest.mark.parametrize(
    "header",
    [
        None,
        "",
        "Bearer",
        "Bearer ",
        f"Bearer {TOKEN}x",
        f"Bearer {TOKEN[:-1]}",
        f"Basic {TOKEN}",
        TOKEN,
        f"Bearer {TOKEN.upper()}",
        "Bearer s3cret-token-välue",
    ],
)
def test_a_bearer_header_without_the_exact_token_does_not_open(header: str | None) -> None:
    assert not Tokens(TOKEN).bearer_ok(header)


@pytest.mark.parametrize("value", [None, "", TOKEN + " ", TOKEN[:-1], "x"])
def test_only_the_exact_token_is_a_login_token(value: str | None) -> None:
    assert Tokens(TOKEN).token_ok(TOKEN)
    assert not Tokens(TOKEN).token_ok(value)


# -- sessions and CSRF ---------------------------------------------------------------------------


def test_a_session_cookie_stands_for_the_session_it_was_made_for() -> None:
    tokens = Tokens(TOKEN)
    made = tokens.new_session()
    assert tokens.session(made.cookie) == made


def test_a_restart_with_the_same_token_keeps_the_session() -> None:
    made = Tokens(TOKEN).new_session()
    assert Tokens(TOKEN).session(made.cookie) == made


def test_every_login_gets_its_own_cookie_and_csrf_token() -> None:
    tokens = Tokens(TOKEN)
    first, second = tokens.new_session(), tokens.new_session()
    assert first.cookie != second.cookie
    assert first.csrf != second.csrf


def test_neither_the_cookie_nor_the_csrf_token_contains_the_api_token() -> None:
    made = Tokens(TOKEN).new_session()
    assert TOKEN not in made.cookie
    assert TOKEN not in made.csrf


def test_the_csrf_token_a_page_shows_is_not_the_cookies_signature() -> None:
    made = Tokens(TOKEN).new_session()
    assert made.csrf not in made.cookie


def test_replacing_the_token_logs_every_browser_out() -> None:
    made = Tokens(TOKEN).new_session()
    assert Tokens("a-new-token").session(made.cookie) is None


def _flip(text: str, index: int) -> str:
    return text[:index] + ("0" if text[index] != "0" else "1") + text[index + 1 :]


def test_a_tampered_cookie_is_no_session() -> None:
    tokens = Tokens(TOKEN)
    cookie = tokens.new_session().cookie
    nonce, _, signature = cookie.partition(".")
    forged = [
        _flip(cookie, 0),  # another nonce, same signature
        _flip(cookie, len(cookie) - 1),  # same nonce, another signature
        nonce,
        f"{nonce}.",
        f".{signature}",
        f"{nonce}{signature}",
        f"{nonce[:-2]}.{tokens._sign('session', nonce[:-2])}",  # a nonce of the wrong length
        f"{nonce}.{tokens._sign('csrf', nonce)}",  # the CSRF token passed off as a signature
        "",
    ]
    for value in forged:
        assert tokens.session(value) is None, value
    assert tokens.session(None) is None
