"""The detector's version: a digest of its sources and data, the same wherever it is installed."""

from __future__ import annotations

import shutil
from pathlib import Path

from squad.text.secrets import detector_version
from squad.text.secrets._version import digest_of


def test_the_detector_version_follows_its_sources_and_data_and_nothing_else(
    tmp_path: Path,
) -> None:
    package = Path(__file__).resolve().parents[2] / "squad" / "text" / "secrets"
    copy = tmp_path / "secrets"
    shutil.copytree(package, copy, ignore=shutil.ignore_patterns("__pycache__"))
    assert digest_of(copy) == detector_version()
    assert len(detector_version()) == 16 and int(detector_version(), 16) >= 0

    (copy / "__pycache__").mkdir(exist_ok=True)
    (copy / "__pycache__" / "x.pyc").write_bytes(b"cache")
    (copy / "NOTES.txt").write_text("not code")
    assert digest_of(copy) == detector_version()

    (copy / "data").mkdir(exist_ok=True)
    (copy / "data" / "weights.bin").write_bytes(b"\x00\x01")
    with_data = digest_of(copy)
    assert with_data != detector_version()
    (copy / "data" / "weights.bin").write_bytes(b"\x00\x02")
    assert digest_of(copy) not in (with_data, detector_version())

    shutil.rmtree(copy / "data")
    source = copy / "_named.py"
    source.write_bytes(source.read_bytes() + b"\n")
    assert digest_of(copy) != detector_version()
