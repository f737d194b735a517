"""Hostile definitions: each is refused with a located ConfigError, quickly, never a traceback.

Every probe runs twice: through ``squad_from_file`` and through the real ``squad validate``
in this process (the console script's ``main``, so the exit-code mapping is the user's).
"""

from __future__ import annotations

import errno
import os
import socket
import sys
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from squad.cli import main
from squad.errors import ConfigError, Problem
from squad.spec.loader import read_text_file, squad_from_file, squad_from_text
from squad.spec.yaml_source import MAX_DEPTH, MAX_NODES, MAX_PROBLEMS, parse_yaml

HEAD = "name: x\nprocess: hierarchical\nagents:\n  - {id: a, role: r}\n"
"""A valid squad; a probe appends to it, so a refusal is the probe's doing."""
HEAD_LINES = HEAD.count("\n")


@dataclass(frozen=True)
class Outcome:
    code: int
    stdout: str
    stderr: str


@pytest.fixture
def validate(monkeypatch: pytest.MonkeyPatch, capsys: Any) -> Callable[..., Outcome]:
    """``squad validate ARGS...`` in this process; a traceback shows as exit code 99."""

    def run(*args: str | Path) -> Outcome:
        capsys.readouterr()
        monkeypatch.setattr(sys, "argv", ["squad", "validate", *map(str, args)])
        code = 0
        try:
            main()
        except SystemExit as exit_:
            code = exit_.code if isinstance(exit_.code, int) else 1
        except BaseException:  # noqa: BLE001 - what a user would see as a traceback
            captured = capsys.readouterr()
            return Outcome(99, captured.out, captured.err + traceback.format_exc())
        captured = capsys.readouterr()
        return Outcome(code, captured.out, captured.err)

    return run


def refused(path: Path) -> tuple[Problem, ...]:
    with pytest.raises(ConfigError) as caught:
        squad_from_file(path)
    return caught.value.problems


def nest(kind: str, depth: int) -> str:
    """``x:`` holding ``depth`` nested lists or mappings, flow, JSON or block style."""
    if kind == "flow-list":
        return "x: " + "[" * depth + "]" * depth + "\n"
    if kind == "flow-map":
        return "x: " + "{a: " * depth + "1" + "}" * depth + "\n"
    if kind == "json":
        return "x: " + '{"a": ' * depth + "1" + "}" * depth + "\n"
    if kind == "block-map":
        lines = "".join(" " * i + "a:\n" for i in range(1, depth + 1))
        return "x:\n" + lines + " " * (depth + 1) + "b\n"
    if kind == "block-list":
        return "x:\n" + "".join(" " * i + "-\n" for i in range(1, depth + 1))
    raise AssertionError(kind)


# (id, text after HEAD, line, column or None, words the message and hint must hold)
PROBES: list[tuple[str, str, int, int | None, list[str]]] = [
    ("flow-list-500", nest("flow-list", 500), 5, 67, ["nested more than 64 levels"]),
    ("flow-map-500", nest("flow-map", 500), 5, 256, ["nested more than 64 levels"]),
    ("json-500", nest("json", 500), 5, 4 + 6 * 63, ["nested more than 64 levels"]),
    ("block-map-500", nest("block-map", 500), 69, 65, ["nested more than 64 levels"]),
    ("block-list-500", nest("block-list", 500), 69, 65, ["nested more than 64 levels"]),
    ("deep-key", "? " + "[" * 500 + "]" * 500 + "\n: 1\n", 5, 66, ["64 levels"]),
    ("self-alias", "x: &a [*a]\n", 5, 8, ["alias *a", "cycle"]),
    ("self-merge", "m: &m\n  <<: *m\n", 6, 7, ["alias *m", "cycle"]),
    (
        "merge-chain",
        "m0: &m0 {k: 1}\n" + "".join(f"m{i}: &m{i} {{<<: *m{i - 1}}}\n" for i in range(1, 80)),
        HEAD_LINES + 64,
        1,
        ["merge keys nest the data more than 64 levels"],
    ),
    (
        "alias-nesting",
        "a0: &a0 "
        + "[" * 40
        + "]" * 40
        + "\n"
        + "a1: &a1 [[[[*a0]]]]\n" * 1
        # a2 repeats a1 inside 30 more levels: 40 + 4 + 30 > 64 once expanded
        + "a2: "
        + "[" * 30
        + "*a1"
        + "]" * 30
        + "\n",
        7,
        1,
        ["aliases and merge keys nest the data more than 64 levels"],
    ),
    (
        "alias-bomb",
        "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
        + "".join(
            f"{n}: &{n} [" + ", ".join([f"*{p}"] * 10) + "]\n"
            for p, n in zip("abcdefg", "bcdefgh", strict=True)
        ),
        HEAD_LINES + 5,
        1,
        ["more than 20,000 values through aliases", "alias bomb"],
    ),
    ("hex-digits", "limits: {max_turns: 0x" + "f" * 5000 + "}\n", 5, 21, ["5,002 characters"]),
    ("octal-digits", "limits: {max_turns: 0o" + "7" * 5000 + "}\n", 5, 21, ["characters"]),
    ("decimal-digits", "limits: {max_turns: " + "9" * 100_000 + "}\n", 5, 21, ["100,000"]),
    ("float-overflow", "limits: {max_cost_usd: 1e999999}\n", 5, 24, ["too large", "infinity"]),
    ("escape-past-unicode", 'description: "\\UFFFFFFFF"\n', 5, 12, ["YAML syntax error"]),
    ("escape-not-a-char", 'description: "\\U00110000"\n', 5, 12, ["YAML syntax error"]),
    ("lone-surrogate", 'description: "\\ud800"\n', 5, 14, ["half of a UTF-16 pair"]),
    (
        "python-object",
        "description: !!python/object/apply:os.system ['echo pwned']\n",
        5,
        14,
        ["tag '!!python/object/apply:os.system' is not allowed"],
    ),
    ("python-name", "description: !!python/name:os.system\n", 5, 14, ["not allowed"]),
    ("binary", "description: !!binary aGk=\n", 5, 14, ["'!!binary' is not allowed"]),
    ("set", "description: !!set {a, b}\n", 5, 14, ["'!!set' is not allowed"]),
    ("custom-tag", "description: !shout hi\n", 5, 14, ["'!shout' is not allowed"]),
    ("long-tag", "description: !" + "t" * 300_000 + " hi\n", 5, 14, ["takes no tags"]),
    ("yaml-1.1", "%YAML 1.1\n---\n" + HEAD, 2, 1, ["YAML 1.1", "1.2 only"]),
    ("directive-digits", "%YAML 1." + "1" * 5000 + "\n---\n", 1, 1, ["YAML syntax error"]),
    ("control-character", "description: a\x00b\n", 5, 15, ["control character U+0000"]),
    ("second-document", "---\nname: y\n", 5, 1, ["single document"]),
    ("undefined-alias", "description: *nowhere\n", 5, 14, ["no anchor &nowhere"]),
    ("long-key", "? " + "k" * 200_000 + "\n: 1\n", 5, 3, ["key of 200,000 characters"]),
    (
        "interval-overflow",
        "schedule: {interval: 99999999999999999999d}\n",
        5,
        22,
        ["longer than a year"],
    ),
    (
        "cron-digits",
        "schedule: {cron: '" + "5" * 5000 + " * * * *'}\n",
        5,
        18,
        ["minute: 55555555555555555555… is out of range 0-59"],
    ),
]


def _text(probe: str) -> str:
    return probe if probe.startswith("%YAML") else HEAD + probe


@pytest.mark.parametrize(
    ("probe", "line", "column", "words"),
    [pytest.param(*case[1:], id=case[0]) for case in PROBES],
)
def test_hostile_file_is_refused_at_its_line(
    tmp_path: Path, probe: str, line: int, column: int | None, words: list[str]
) -> None:
    path = tmp_path / "hostile.yaml"
    path.write_text(_text(probe), encoding="utf-8")
    started = time.perf_counter()
    (problem, *_) = refused(path)
    assert time.perf_counter() - started < 10
    rendered = problem.render()
    assert (problem.line, problem.column) == (line, column), rendered
    assert problem.source == str(path)
    for word in words:
        assert word in rendered
    assert len(rendered) < 500, "a message quotes at most a short piece of the input"


@pytest.mark.parametrize("probe", [pytest.param(case[1], id=case[0]) for case in PROBES])
def test_hostile_file_exits_2_from_the_cli_without_traceback(
    tmp_path: Path, validate: Callable[..., Outcome], probe: str
) -> None:
    path = tmp_path / "hostile.yaml"
    path.write_text(_text(probe), encoding="utf-8")
    result = validate(path)
    assert result.code == 2, result.stderr
    assert "Traceback" not in result.stderr
    assert result.stderr.startswith(f"error: {path}:"), result.stderr
    line, column = result.stderr.removeprefix(f"error: {path}:").split(":")[:2]
    assert line.isdigit() and column.isdigit(), result.stderr


def test_python_tags_build_nothing(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    text = HEAD + f"description: !!python/object/apply:os.system ['touch {marker}']\n"
    with pytest.raises(ConfigError):
        squad_from_text(text)
    assert not marker.exists()


@pytest.mark.parametrize("kind", ["flow-list", "flow-map", "json", "block-map", "block-list"])
def test_nesting_is_allowed_up_to_the_limit_and_refused_one_past_it(kind: str) -> None:
    assert parse_yaml(nest(kind, MAX_DEPTH - 1), source="s").data is not None  # x: is 1 level
    with pytest.raises(ConfigError, match="nested more than 64 levels"):
        parse_yaml(nest(kind, MAX_DEPTH), source="s")


def test_deep_nesting_fails_fast_even_when_the_stack_is_already_deep() -> None:
    """The limit is checked without recursion, so a caller deep in its own stack is safe."""
    text = HEAD + nest("flow-list", 100_000)

    def descend(levels: int) -> None:
        if levels:
            descend(levels - 1)
            return
        with pytest.raises(ConfigError, match="nested more than"):
            squad_from_text(text)

    descend(sys.getrecursionlimit() - 200)


def test_a_file_with_too_many_values_is_refused_while_parsing() -> None:
    text = HEAD + "x: [" + "1, " * 300_000 + "]\n"  # under 1 MiB, 300,000 values
    started = time.perf_counter()
    with pytest.raises(ConfigError) as caught:
        squad_from_text(text, source="many.yaml")
    assert time.perf_counter() - started < 10
    (problem,) = caught.value.problems
    assert f"more than {MAX_NODES:,} keys and values" in problem.message
    assert problem.line == 5


def test_many_problems_are_capped_with_a_count() -> None:
    text = HEAD + "".join(f"unknown{i}: 1\n" for i in range(MAX_PROBLEMS + 50))
    with pytest.raises(ConfigError) as caught:
        squad_from_text(text)
    problems = caught.value.problems
    assert len(problems) == MAX_PROBLEMS + 1
    assert problems[-1].message == "50 more problems not shown"


def test_a_huge_value_is_quoted_short() -> None:
    with pytest.raises(ConfigError) as caught:
        squad_from_text("name: " + "A" * 500_000 + "\n" + HEAD.split("\n", 1)[1])
    (problem,) = caught.value.problems
    assert "not a valid id" in problem.message and len(problem.message) < 500
    assert "500,000 characters" in problem.message


def test_a_one_mib_single_line_file_parses_in_bounded_time(tmp_path: Path) -> None:
    path = tmp_path / "wide.yaml"
    path.write_text(HEAD + "description: " + "w" * (1024 * 1024 - 200) + "\n")
    started = time.perf_counter()
    assert squad_from_file(path).description.startswith("www")
    assert time.perf_counter() - started < 10


def test_redefined_anchors_follow_yaml_and_do_not_warn() -> None:
    data = parse_yaml("a: &x 1\nb: &x 2\nc: *x\n", source="s").data
    assert data == {"a": 1, "b": 2, "c": 2}


def test_plain_text_that_looks_like_a_merge_key_stays_text() -> None:
    assert parse_yaml("a: <<\nb: =\nc: 2001-13-45\n", source="s").data == {
        "a": "<<",
        "b": "=",
        "c": "2001-13-45",
    }


# -- what the path is, said exactly ---------------------------------------------------------


def _fifo(tmp: Path) -> Path:
    path = tmp / "pipe.yaml"
    os.mkfifo(path)
    return path


def _socket(tmp: Path) -> Path:
    path = tmp / "sock.yaml"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    server.close()
    return path


def _broken_link(tmp: Path) -> Path:
    path = tmp / "link.yaml"
    path.symlink_to(tmp / "gone.yaml")
    return path


def _loop(tmp: Path) -> Path:
    (tmp / "a.yaml").symlink_to(tmp / "b.yaml")
    (tmp / "b.yaml").symlink_to(tmp / "a.yaml")
    return tmp / "a.yaml"


def _under_a_file(tmp: Path) -> Path:
    (tmp / "file.yaml").write_text(HEAD)
    return tmp / "file.yaml" / "inner.yaml"


PATHS: list[tuple[str, Callable[[Path], Path], list[str]]] = [
    ("missing", lambda t: t / "missing.yaml", ["file does not exist"]),
    ("directory", lambda t: t, ["is a directory", "*.yaml"]),
    ("fifo", _fifo, ["FIFO (named pipe)"]),
    ("dev-null", lambda t: Path("/dev/null"), ["device (character special file)"]),
    ("dev-zero", lambda t: Path("/dev/zero"), ["device"]),
    ("socket", _socket, ["socket"]),
    ("broken-symlink", _broken_link, ["broken symbolic link", "gone.yaml"]),
    ("symlink-loop", _loop, ["loop of symbolic links"]),
    ("under-a-file", _under_a_file, ["does not exist", "a part of the path is a file"]),
    ("nul-in-name", lambda t: t / "a\x00b.yaml", ["NUL character"]),
]


@pytest.mark.parametrize(("make", "words"), [pytest.param(*case[1:], id=case[0]) for case in PATHS])
def test_a_path_that_is_not_a_file_is_named_exactly(
    tmp_path: Path, make: Callable[[Path], Path], words: list[str]
) -> None:
    path = make(tmp_path)
    outcome: list[BaseException | str] = []

    def load() -> None:
        try:
            outcome.append(read_text_file(path))
        except BaseException as exc:  # noqa: BLE001 - handed to the test thread
            outcome.append(exc)

    reader = threading.Thread(target=load, daemon=True)
    reader.start()
    reader.join(timeout=10)
    assert not reader.is_alive(), f"reading {path} blocked"
    (error,) = outcome
    assert isinstance(error, ConfigError)
    (problem,) = error.problems
    rendered = problem.render()
    assert problem.source == str(path) and problem.hint
    for word in words:
        assert word in rendered


@pytest.mark.parametrize(
    ("make", "word"), [(_fifo, "FIFO"), (lambda t: Path("/dev/zero"), "device")]
)
def test_the_cli_names_a_fifo_or_device_and_exits_2(
    tmp_path: Path, validate: Callable[..., Outcome], make: Callable[[Path], Path], word: str
) -> None:
    result = validate(make(tmp_path))
    assert result.code == 2 and word in result.stderr and "Traceback" not in result.stderr


def test_a_symlink_to_a_file_is_read(tmp_path: Path) -> None:
    (tmp_path / "real.yaml").write_text(HEAD)
    (tmp_path / "link.yaml").symlink_to(tmp_path / "real.yaml")
    assert squad_from_file(tmp_path / "link.yaml").name == "x"


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file")
def test_an_unreadable_file_says_permission_denied(tmp_path: Path) -> None:
    path = tmp_path / "secret.yaml"
    path.write_text(HEAD)
    path.chmod(0)
    (problem,) = refused(path)
    assert "permission denied" in problem.message


def test_permission_denied_on_open_is_reported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same refusal as above, where tests run as root: open() itself says EACCES."""
    path = tmp_path / "secret.yaml"
    path.write_text(HEAD)
    real_open = os.open

    def denying_open(target: Any, *args: Any, **kwargs: Any) -> int:
        if Path(target) == path:
            raise PermissionError(errno.EACCES, "Permission denied", str(target))
        return real_open(target, *args, **kwargs)

    monkeypatch.setattr(os, "open", denying_open)
    (problem,) = refused(path)
    assert "permission denied" in problem.message and "chmod" in (problem.hint or "")


@pytest.mark.parametrize("zone", ["Etc", "x" * 5000])
def test_a_time_zone_that_names_no_file_is_a_config_error(zone: str) -> None:
    with pytest.raises(ConfigError, match="unknown time zone"):
        squad_from_text(HEAD + f"schedule: {{cron: '@daily', timezone: {zone}}}\n")
