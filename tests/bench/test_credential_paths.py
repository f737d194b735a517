"""The credential-paths instrument on five lines written here, through the real command line.

One credential is phrased so that no detector sees it: the instrument must then find its
value stored raw on every path, which proves the search, not the detector, decides "stored".
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from bench.credential_lab import measure
from bench.credential_paths import main, render, summary
from bench.credential_samples import load
from bench.credential_search import Needle
from squad.classifier.cues import has_secret
from squad.text.secrets import find_secrets
from tests.text.secrets_corpus import URLSAFE, fake

KEY = "sk-" + "proj-" + fake(URLSAFE, 40)
UNSEEN = "The team decided the mascot is zebra-moon-orbit."
CREDENTIALS: list[dict[str, Any]] = [
    {
        "text": "The database is postgresql://app:S3cretPassw0rd@db.internal/app for the docs.",
        "lang": "en",
        "values": ["S3cretPassw0rd"],
        "form": "password in a URL",
    },
    {
        "text": "wifi pw for the new office: Hornet-Lounge-47",
        "lang": "en",
        "values": ["Hornet-Lounge-47"],
        "form": "wifi password in prose",
    },
    {"text": UNSEEN, "lang": "en", "values": ["zebra-moon-orbit"], "form": "unseen phrasing"},
]
LOOKALIKES: list[dict[str, Any]] = [
    {"text": "We decided to rotate the password every 90 days.", "lang": "en", "form": "policy"},
    # Labelled a look-alike on purpose: the detector flags it on every path, so the count of
    # false alarms is seen to move.
    {"text": f"We use the key {KEY} for the eval runs.", "lang": "en", "form": "key shape"},
]


def write(path: Path, rows: Sequence[Mapping[str, object]]) -> Path:
    with gzip.open(path, "wt", encoding="utf-8") as f:
        f.writelines(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
    return path


def test_counts_kept_out_stored_raw_and_false_alarms_per_path(tmp_path: Path) -> None:
    assert not find_secrets(UNSEEN) and not has_secret(UNSEEN)  # no detector sees it
    credentials = load(write(tmp_path / "c.jsonl.gz", CREDENTIALS), credentials=True)
    lookalikes = load(write(tmp_path / "l.jsonl.gz", LOOKALIKES), credentials=False)

    report = summary(measure(credentials, lookalikes), ("remember", "extract", "chat"))

    for path, row in report.items():
        assert (row["credentials"], row["kept_out"], row["stored_raw"]) == (3, 2, 1), path
        assert [m["index"] for m in row["misses"]] == [3], path
        assert (row["lookalikes"], row["false_alarms"]) == (2, 1), path
        assert [a["index"] for a in row["alarms"]] == [2], path
        assert row["errors"] == 0, path
    remember, extract, chat = report["remember"], report["extract"], report["chat"]
    assert remember["statuses"] == {"refused": 2, "stored": 1}
    assert remember["alarms"][0]["status"] == "refused"
    assert {"ws/probe/agents/keeper/memory.md", "ws/probe/.git (git objects)"} <= set(
        remember["misses"][0]["places"]
    )
    assert extract["misses"][0]["status"] == "written"
    assert "ws/probe/agents/keeper/memory.md" in extract["misses"][0]["places"]
    assert extract["alarms"][0]["status"] == "dropped-secret"
    assert chat["noticed"] == 2 and chat["statuses"] == {"replied": 3}
    assert "home/squad.db conversation_messages.content" in chat["misses"][0]["places"]
    assert chat["alarms"][0]["redacted"] is True
    shown = render(report, "five lines") + json.dumps(report)
    for row in CREDENTIALS + LOOKALIKES:  # the report names lines, never their text or values
        assert str(row["text"]) not in shown
        assert not any(value in shown for value in row.get("values", ()))
    assert KEY not in shown


def test_a_value_is_found_in_its_stored_forms_and_not_inside_other_tokens() -> None:
    pin = Needle.for_value("8023", "택배함 비번 8023 이에요")
    assert pin.count(b"pin 8023.") == 1
    assert pin.count(b"a8023f 2026-12-06 15:08:02.380234") == 0  # a digest, a timestamp
    korean = Needle.for_value("한강다리2024", "비번은 한강다리2024 입니다")
    assert korean.count(json.dumps({"t": "비번은 한강다리2024"}).encode()) == 1  # \\uXXXX form
    assert korean.count("비번은 한강다리2024".encode()) == 1
    glued = Needle.for_value("R00t!Mysql#1", "mysql -pR00t!Mysql#1 -h db")
    assert glued.count(b"mysql -pR00t!Mysql#1 -h db") == 1  # glued to -p in the message too
    key = "-----BEGIN KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEF\n-----END KEY-----"
    multi = Needle.for_value(key, f"here: {key}")
    collapsed = b"- here: -----BEGIN KEY----- MIIEvQIBADANBgkqhkiG9w0BAQEF -----END KEY----- (x)"
    assert multi.count(collapsed) == 2  # as `memory remember` writes it; and its key line
    assert multi.count(b"only MIIEvQIBADANBgkqhkiG9w0BAQEF survived") == 1  # one line leaks
    assert multi.count(b"-----BEGIN KEY-----\n[REDACTED:private_key]\n-----END KEY-----") == 0


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        ([{"text": "pw is x", "lang": "en", "form": "f"}], "'values' must be a non-empty list"),
        (
            [{"text": "pw is abc", "lang": "en", "form": "f", "values": ["abd"]}],
            "1 of its values are not in its text",
        ),
        ([{"text": "", "lang": "en", "form": "f", "values": ["x"]}], "'text' must be"),
    ],
    ids=["no-values", "value-not-in-text", "empty-text"],
)
def test_bad_input_exits_2_naming_the_line_and_never_the_value(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], rows: list[dict[str, object]], message: str
) -> None:
    credentials = write(tmp_path / "c.jsonl.gz", rows)
    lookalikes = write(tmp_path / "l.jsonl.gz", LOOKALIKES[:1])

    code = main(["--credentials", str(credentials), "--lookalikes", str(lookalikes)])

    err = capsys.readouterr().err
    assert code == 2 and f"{credentials}:1: " in err and message in err
    assert "abd" not in err and "Traceback" not in err


def test_a_missing_file_or_unknown_path_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--credentials", str(tmp_path / "none.jsonl")]) == 2
    assert "no such file" in capsys.readouterr().err
    assert main(["--paths", "remember,cache"]) == 2
    assert "choose from remember, extract, chat, chat-quiet" in capsys.readouterr().err
