"""``squad ws search`` with its index on a 10,000-file, ~100 MB workspace, against ripgrep.

``python -m bench.workspace_search`` generates the workspace (English and Korean text in
nested folders, deterministic), builds the index once, then measures against ``rg -n -i``
over the same tree, each the median of several runs taken in turn with ripgrep's:

* a repeated query, index warm, nothing changed (in this process): target at most 1x rg;
* the first query of a fresh process (interpreter, imports, a cold SQLite connection), the
  index file built before: target at most 3x rg;
* the first build of the index, for information.
"""

from __future__ import annotations

import json
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bench.__main__ import Result


FILES = 10_000
TOTAL_BYTES = 100_000_000
QUERY = "needle"
KOREAN_QUERY = "바늘을"
REPEAT = 9
WARM_TARGET = 1.0
COLD_TARGET = 3.0

_ENGLISH = """the a of and to in is for on with that this by from as at be are was it or an
not service deploy release cluster worker queue cache retry timeout config setting database
migration schema table index query report agent planner writer reviewer memory workspace
folder file path markdown json yaml budget cost latency throughput error warning metric
Alpha Beta Gamma Delta Kubernetes Postgres Redis Python Rust Docker Monday Friday"""
_KOREAN = """의 에 는 을 를 이 가 와 과 도 로 에서 한다 했다 있다 없다 서비스 배포 릴리스
클러스터 작업자 대기열 캐시 재시도 시간초과 설정 데이터베이스 마이그레이션 스키마 테이블
색인 질의 보고서 에이전트 계획 작성자 검토자 기억 작업공간 폴더 파일 경로 예산 비용 지연
처리량 오류 경고 지표 한국어 텍스트 검색 결과 문서 회의 일정 월요일 금요일"""

_COLD = """
import sys
from pathlib import Path
from squad.workspace.search import search
search(Path(sys.argv[1]), sys.argv[2], index_dir=Path(sys.argv[3]))
"""


def generate(root: Path, files: int = FILES, total_bytes: int = TOTAL_BYTES) -> int:
    """Write the workspace (the same bytes on every run) and return its size in bytes.

    Lines are drawn from a pool of 4,000 (a third Korean), so that writing 100 MB takes a
    second; ``needle`` (one file in 97) and ``바늘을`` (one in 89) are rare, as real queries are.
    """
    rng = random.Random(20261201)
    english, korean = _ENGLISH.split(), _KOREAN.split()
    pool = [
        " ".join(rng.choices(korean if i % 3 == 0 else english, k=rng.randrange(4, 16)))
        for i in range(4_000)
    ]
    mean_line = sum(len(line.encode()) + 1 for line in pool) / len(pool)
    per_file = int(total_bytes / files / mean_line)
    written = 0
    for i in range(files):
        folder = root / f"area{i % 10}" / f"team{i // 10 % 20}" / f"week{i // 200 % 5}"
        folder.mkdir(parents=True, exist_ok=True)
        lines = rng.choices(pool, k=rng.randrange(per_file // 2, per_file * 3 // 2))
        if i % 97 == 0:
            lines[len(lines) // 2] = f"found the Needle in file {i}"
        if i % 89 == 0:
            lines[len(lines) // 3] = f"바늘을 찾았다 {i}"
        data = ("\n".join(lines) + "\n").encode()
        (folder / f"note-{i:05d}.md").write_bytes(data)
        written += len(data)
    return written


def _in_turn(
    action: Callable[[], object], baseline: Callable[[], object], repeat: int
) -> tuple[float, float]:
    """Medians of ``action`` and ``baseline``, run alternately so that a busy spell of a
    shared machine weighs on both alike."""
    ours: list[float] = []
    theirs: list[float] = []
    for _ in range(repeat):
        for samples, run in ((theirs, baseline), (ours, action)):
            start = time.perf_counter()
            run()
            samples.append(time.perf_counter() - start)
    return statistics.median(ours), statistics.median(theirs)


def _command(*cmd: str) -> Callable[[], object]:
    return lambda: subprocess.run(cmd, check=True, capture_output=True)


def measure(tmp: Path, notes: list[str]) -> list[Result]:
    """The two ratios to ripgrep as Results; build time, index size and a Korean query go to
    ``notes``. Empty when ripgrep is not installed."""
    rg = shutil.which("rg")
    if rg is None:
        notes.append("ws search index: skipped, ripgrep (rg) is not installed")
        return []
    from bench.__main__ import Result
    from squad.workspace.search import search

    root, index = tmp / "big-ws", tmp / "index"
    size = generate(root)
    start = time.perf_counter()
    built = search(root, QUERY, index_dir=index)
    build_s = time.perf_counter() - start
    if built.to_dict() != search(root, QUERY).to_dict():
        raise AssertionError("the indexed search and the scan disagree")
    index_bytes = sum(p.stat().st_size for p in index.iterdir())

    def rg_of(query: str) -> Callable[[], object]:
        return _command(rg, "-n", "-i", query, str(root))

    warm, rg_s = _in_turn(lambda: search(root, QUERY, index_dir=index), rg_of(QUERY), REPEAT)
    korean, rg_korean = _in_turn(
        lambda: search(root, KOREAN_QUERY, index_dir=index), rg_of(KOREAN_QUERY), REPEAT
    )
    cold, rg_cold = _in_turn(
        _command(sys.executable, "-c", _COLD, str(root), QUERY, str(index)), rg_of(QUERY), REPEAT
    )
    notes.append(
        f"ws search index: first build {build_s:.1f} s for {FILES:,} files, {size / 1e6:.0f} MB "
        f"(index {index_bytes / 1e6:.0f} MB); Korean query warm {korean * 1000:.1f} ms, "
        f"rg {rg_korean * 1000:.1f} ms ({korean / rg_korean:.2f}x)"
    )
    return [
        Result(f"ws search {FILES:,} files, warm", warm, "rg -n -i", rg_s, WARM_TARGET),
        Result("ws search, fresh process", cold, "rg -n -i", rg_cold, COLD_TARGET),
    ]


def main() -> int:
    notes: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        results = measure(Path(tmp), notes)
    for result in results:
        print(
            f"{result.name:32} {result.measured_s * 1000:8.1f} ms  {result.baseline_name} "
            f"{result.baseline_s * 1000:6.1f} ms  {result.ratio:5.2f}x (target "
            f"{result.target_ratio:.1f}x) {'ok' if result.ok else 'OVER'}"
        )
    for note in notes:
        print(note)
    if "--json" in sys.argv:
        print(json.dumps({r.name: [r.measured_s, r.baseline_s, r.ratio] for r in results}))
    return 0 if all(r.ok for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
