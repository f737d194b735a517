"""The web front end at scale, through a real uvicorn server on 127.0.0.1, as ratios to
baselines measured in the same run.

* overview: ``GET /api/v1/overview``, ``GET /`` and ``GET /api/v1/squads`` with 200 squads
  and 10,000 runs in a SQLite store, p95 of the request time (httpx, keep-alive) against the
  p95 of :func:`~squad.daemon.status.collect_status` in-process on the same store (what
  ``squad status --json`` computes). Each call costs most of a second (the status validates
  200 definition files), so 20 requests each, not more, keep the benchmark near 2 minutes;
* explorer: opening the root of a 10,000-file workspace (``/api/v1/squads/{s}/files`` and
  the ``/squads/{s}/files`` page) against ``os.scandir`` plus an ``lstat`` of each entry of
  that folder, and :func:`~squad.workspace.listing.list_folder` in-process against the
  same (a request has a fixed cost a scandir of five entries does not); a folder 8 levels
  deep against the root; ``list_folder`` of one folder of 10,000 entries against scandir
  plus lstat of it;
* live log: a run's time per turn (a sequential squad on the built-in offline model) with
  50 server-sent event subscribers following it, from a process of their own as browsers
  would be, against the same run with none.

Notes, not ratios: the HTTP floor (a request that does nothing), the squad lookup every
squad route does, ``list_folder`` 8 levels deep against the root in-process, and the idle
CPU of the process serving the app (a few milliseconds over several seconds: two near-zero
figures divide into noise, so it is no ratio).

Most runs are made through the store's API (``create_run``, ``update_run``, ``spend.record``);
to keep the set-up short, the rest are copies of those rows made in SQL.

Run alone with ``python -m bench.web_bench``; ``python -m bench`` includes it, in a process of
its own (a heap grown by the other benchmarks would make p95 a measure of their GC).
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import sqlite3
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bench.support import REPO, temp_settings

if TYPE_CHECKING:
    import httpx

    from bench.__main__ import Result
    from squad.app import App
    from squad.model.types import ChatModel
    from squad.settings import Settings
    from squad.spec.models import ModelSpec

SQUADS = 200
RUNS = 10_000
API_RUNS = 400
REQUESTS = 20
FILES = 10_000
DEPTH = 8
EXPLORER_ROUNDS = 8
SUBSCRIBERS = 50
TASKS = 30
REPEAT = 5
IDLE_S = 5.0
FLAT = "tasks/flat"
"""The folder of 10,000 entries, in the second squad's workspace."""

SQUAD_YAML = """\
name: squad-{i:03d}
agents: [{{id: writer, role: Writes}}, {{id: reviewer, role: Reviews}}]
tasks:
  - {{id: draft, description: Draft the page., agent: writer}}
  - {{id: review, description: Review the page., agent: reviewer, depends_on: [draft]}}
limits: {{max_cost_usd: {cap}}}
"""

LIVE = "live"
"""The squad whose runs the subscribers follow (sequential, one turn per task)."""


def live_yaml(tasks: int) -> str:
    lines = [f"name: {LIVE}", "agents:", "  - {id: worker, role: Does the work}", "tasks:"]
    for i in range(tasks):
        deps = f", depends_on: [t{i - 1}]" if i else ""
        lines.append(f"  - {{id: t{i}, description: Step {i} of the work., agent: worker{deps}}}")
    return "\n".join(lines) + "\n"


def p95(samples: list[float]) -> float:
    ordered = sorted(samples)
    return ordered[max(0, math.ceil(0.95 * len(ordered)) - 1)]


def take_turns(
    variants: dict[str, Callable[[], object]], rounds: int
) -> tuple[dict[str, list[float]], dict[str, object]]:
    """Seconds of each variant over ``rounds`` rounds in which they take turns (a noisy moment
    hits them all alike), after a warm-up round whose results are returned."""
    samples: dict[str, list[float]] = {name: [] for name in variants}
    first: dict[str, object] = {}
    for n in range(rounds + 1):
        for name, action in variants.items():
            start = time.perf_counter()
            result = action()
            elapsed = time.perf_counter() - start
            if n:
                samples[name].append(elapsed)
            else:
                first[name] = result
    return samples, first


# -- the home ----------------------------------------------------------------------------------


def populate(app: App) -> None:
    """200 squads from definition files, 10,000 runs (a tenth failed, five awaiting approval),
    spend for a fifth of them, and the live squad."""
    from squad.spec.loader import squad_from_file
    from squad.store.records import RunStatus

    folder = app.settings.squads_dir
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(SQUADS):
        path = folder / f"squad-{i:03d}.yaml"
        path.write_text(SQUAD_YAML.format(i=i, cap=5 + i % 7))
        app.squads.create(squad_from_file(path), source=path)
    live = folder / f"{LIVE}.yaml"
    live.write_text(live_yaml(TASKS))
    app.squads.create(squad_from_file(live), source=live)
    store = app.store
    made = []
    for i in range(API_RUNS):
        run = store.create_run(f"squad-{i % SQUADS:03d}", trigger="schedule")
        if i < 5:
            status, error = RunStatus.AWAITING_APPROVAL, None
        elif i % 10 == 0:
            status, error = RunStatus.FAILED, "the model timed out"
        else:
            status, error = RunStatus.SUCCEEDED, None
        store.update_run(run.id, status=status, error=error, tokens_in=900, tokens_out=300)
        made.append(run)
    with store.batch("record the benchmark's spend"):
        for run in made[::5]:
            store.spend.record(
                run.squad,
                model="offline",
                prompt_tokens=900,
                completion_tokens=300,
                cost_usd=0.012,
                latency_s=1.5,
                run_id=run.id,
                agent="writer",
            )
    _copy_runs(app.settings, RUNS)


def _copy_runs(settings: Settings, total: int) -> None:
    """Copies of the finished runs (and their spend) until the store holds ``total`` runs."""
    prefix = "sqlite:///"
    if not settings.database_url.startswith(prefix):
        raise RuntimeError(f"the web benchmark wants a SQLite store, not {settings.database_url}")
    db = sqlite3.connect(settings.database_url.removeprefix(prefix))
    try:
        runs = ", ".join(f'"{r[1]}"' for r in db.execute("PRAGMA table_info(runs)") if r[1] != "id")
        spend = ", ".join(
            f'"{r[1]}"'
            for r in db.execute("PRAGMA table_info(spend_ledger)")
            if r[1] not in ("id", "run_id")
        )
        copy = 0
        while (have := db.execute("SELECT count(*) FROM runs").fetchone()[0]) < total:
            copy += 1
            with db:
                db.execute(
                    f"INSERT INTO runs (id, {runs}) SELECT id || '-{copy}', {runs} FROM runs "
                    "WHERE instr(id, '-') = 0 AND status != 'awaiting_approval' LIMIT ?",
                    (total - have,),
                )
                db.execute(
                    f"INSERT INTO spend_ledger (run_id, {spend}) "
                    f"SELECT run_id || '-{copy}', {spend} FROM spend_ledger "
                    f"WHERE instr(run_id, '-') = 0 AND run_id || '-{copy}' IN (SELECT id FROM runs)"
                )
    finally:
        db.close()


def nested_tree(workspace: Path) -> str:
    """10,000 files in 100 folders under ``tasks/``, along a spine 8 levels deep whose last
    folder holds as many entries as the workspace root. Returns that folder's path."""
    spine = ["tasks", *(f"s{level}" for level in range(1, DEPTH))]
    deep = "/".join(spine)
    root_entries = sum(1 for _ in workspace.iterdir())
    leaves = FILES // 100
    homes = [deep] * root_entries + [
        "/".join(spine[: 1 + i % (DEPTH - 1)]) for i in range(leaves - root_entries)
    ]
    body = "Done: the step is complete, with its notes and a short list.\n" * 3
    for n, home in enumerate(homes):
        leaf = workspace / home / f"leaf-{n:03d}"
        leaf.mkdir(parents=True)
        for i in range(100):
            (leaf / f"out-{i:03d}.md").write_text(body)
    return deep


def flat_folder(workspace: Path) -> None:
    folder = workspace / FLAT
    folder.mkdir(parents=True)
    for i in range(FILES):
        (folder / f"out-{i:05d}.md").write_text("Done.\n")


def scandir_stat(folder: Path) -> int:
    """The floor for listing one folder: its entries and an lstat of each."""
    count = 0
    with os.scandir(folder) as scan:
        for entry in scan:
            entry.stat(follow_symlinks=False)
            count += 1
    return count


# -- the server --------------------------------------------------------------------------------


@dataclass
class Served:
    app: App
    url: str
    token: str
    client: httpx.Client


@contextmanager
def serve(app: App) -> Iterator[Served]:
    import httpx

    from squad.web.control import LocalControl
    from squad.web.server import WebServer
    from squad.web.tokens import load_or_create_token

    control = LocalControl(app, workers=1)
    server = WebServer(app, control, host="127.0.0.1", port=0)
    bound = server.start()
    token = load_or_create_token(app.settings.home)
    try:
        with httpx.Client(
            base_url=bound.url.rstrip("/"),
            headers={"Authorization": f"Bearer {token}"},
            timeout=120,
        ) as client:
            yield Served(app, bound.url, token, client)
    finally:
        server.stop()
        control.close(10)


def get(
    client: httpx.Client, url: str, *, status: int = 200, headers: dict[str, str] | None = None
) -> Callable[[], bytes]:
    def request() -> bytes:
        response = client.get(url, headers=headers)
        if response.status_code != status:
            raise RuntimeError(f"GET {url}: {response.status_code}, not {status}")
        return response.content

    return request


def measure_overview(served: Served) -> dict[str, float]:
    """p95 of each overview request against p95 of collect_status."""
    from squad.daemon.status import collect_status

    app, client = served.app, served.client
    samples, first = take_turns(
        {
            "status_s": lambda: collect_status(app, now=app.clock()),
            "api_overview_s": get(client, "/api/v1/overview"),
            "page_overview_s": get(client, "/", headers={"accept": "text/html"}),
            "api_squads_s": get(client, "/api/v1/squads"),
        },
        REQUESTS,
    )
    listed = json.loads(first["api_squads_s"])  # type: ignore[arg-type]
    if len(listed) != SQUADS + 1:
        raise RuntimeError(f"the API lists {len(listed)} squads, not {SQUADS + 1}")
    return {name: p95(values) for name, values in samples.items()}


def measure_explorer(served: Served, nested: str, deep: str, flat: str) -> dict[str, float]:
    """Medians of listing requests and in-process listings, and of scandir plus lstat."""
    from squad.workspace.listing import list_folder

    app, client = served.app, served.client
    tree = app.squads.locate(nested).path
    many = app.squads.locate(flat).path
    api = f"/api/v1/squads/{nested}/files"
    # Two groups: the listings that allocate a lot (10,000 entries; the page walks the whole
    # workspace for its health line) trigger full collections that would otherwise land in
    # the small requests next to them.
    small, first = take_turns(
        {
            "scandir_root_s": lambda: scandir_stat(tree),
            "list_root_s": lambda: list_folder(tree, ""),
            "api_root_s": get(client, f"{api}?path="),
            "fragment_root_s": get(
                client, f"/squads/{nested}/files", headers={"hx-request": "true"}
            ),
            "api_deep_s": get(client, f"{api}?path={deep}"),
            "list_deep_s": lambda: list_folder(tree, deep),
            "locate_s": lambda: app.squads.locate(nested),
            "http_floor_s": get(client, "/api/v1/no-such-route", status=404),
        },
        EXPLORER_ROUNDS,
    )
    large, more = take_turns(
        {
            "page_root_s": get(client, f"/squads/{nested}/files", headers={"accept": "text/html"}),
            "scandir_flat_s": lambda: scandir_stat(many / FLAT),
            "list_flat_s": lambda: list_folder(many, FLAT),
            "api_flat_s": get(client, f"/api/v1/squads/{flat}/files?path={FLAT}"),
        },
        EXPLORER_ROUNDS,
    )
    first.update(more)
    figures = {name: statistics.median(values) for name, values in {**small, **large}.items()}
    figures["root_entries"] = len(list_folder(tree, "").entries)
    figures["deep_entries"] = len(json.loads(first["api_deep_s"])["entries"])  # type: ignore[arg-type]
    figures["flat_entries"] = len(json.loads(first["api_flat_s"])["entries"])  # type: ignore[arg-type]
    if figures["flat_entries"] != FILES:
        raise RuntimeError(f"the API lists {figures['flat_entries']} entries, not {FILES}")
    return figures


# -- the live log ------------------------------------------------------------------------------


class Gate:
    """Models that wait for ``released`` before each answer: the subscribers connect while
    the run is held at its first turn, and the run is timed from the release."""

    def __init__(self) -> None:
        self.released = threading.Event()
        self.released.set()

    def factory(self, spec: ModelSpec, on_event: Callable[[Any], None]) -> ChatModel:
        from squad.model.factory import model_for

        return _Held(model_for(spec, on_event), self.released)


class _Held:
    def __init__(self, model: ChatModel, released: threading.Event) -> None:
        self._model = model
        self._released = released

    def complete(self, *args: Any, **kwargs: Any) -> Any:
        self._released.wait()
        return self._model.complete(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._model, name)


class Subscribers:
    """A process of its own that opens ``count`` event streams of a run when asked, says
    ``ready`` once each has its first bytes, and reports what each received at the end."""

    def __init__(self, served: Served, count: int) -> None:
        self.served = served
        self.count = count
        self.process = subprocess.Popen(
            [sys.executable, "-m", "bench.web_bench", "--subscribe"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            cwd=REPO,
            text=True,
        )

    def follow(self, run_id: str) -> None:
        assert self.process.stdin is not None
        request = {"url": self.served.url, "token": self.served.token, "run": run_id}
        self.process.stdin.write(json.dumps({**request, "n": self.count}) + "\n")
        self.process.stdin.flush()
        if (said := self._line()) != "ready":
            raise RuntimeError(f"the subscribers did not connect: {said!r}")

    def report(self) -> dict[str, list[int]]:
        report: dict[str, list[int]] = json.loads(self._line())
        return report

    def _line(self) -> str:
        assert self.process.stdout is not None
        return self.process.stdout.readline().strip()

    def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        try:
            self.process.wait(30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def live_turn(app: App, gate: Gate, subscribers: Subscribers | None) -> float:
    """Seconds per turn of one run of the live squad, with ``subscribers`` following its log."""
    app.drain_extraction()  # the last run's extraction must not run into this one
    spec, workspace = app.squads.definition(LIVE)
    known = {r.id for r in app.store.list_runs(LIVE, limit=100)}
    gate.released.clear()
    ended: list[float] = []

    def go() -> None:
        result = app.runner().run(spec, workspace)
        ended.append(time.perf_counter())
        if not result.succeeded:
            raise RuntimeError(f"the live run did not succeed: {result}")

    runner = threading.Thread(target=go, name="bench-live-run")
    runner.start()
    try:
        run_id = _new_run(app, known)
        if subscribers is not None:
            subscribers.follow(run_id)
        start = time.perf_counter()
        gate.released.set()
        runner.join()
        if subscribers is not None:
            report = subscribers.report()
            if min(report["events"]) < TASKS or min(report["ended"]) < 1:
                raise RuntimeError(f"a subscriber missed events or the run's end: {report}")
    finally:
        gate.released.set()
        runner.join()
    if not ended:
        raise RuntimeError("the live run failed")
    return (ended[0] - start) / TASKS


def _new_run(app: App, known: set[str]) -> str:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        fresh = [r for r in app.store.list_runs(LIVE, limit=5) if r.id not in known]
        if fresh:
            return fresh[0].id
        time.sleep(0.005)
    raise RuntimeError("the live run did not start within 60 s")


async def subscribe(url: str, token: str, run_id: str, count: int) -> dict[str, list[int]]:
    """Open ``count`` event streams of the run; print ``ready`` once each has its first
    bytes, then read every stream to its end."""
    import httpx

    limits = httpx.Limits(max_connections=count + 1, max_keepalive_connections=count + 1)
    connected = 0
    all_connected = asyncio.Event()

    async def follow(client: httpx.AsyncClient) -> tuple[int, int]:
        nonlocal connected
        received = bytearray()
        async with client.stream("GET", f"/api/v1/runs/{run_id}/events") as response:
            response.raise_for_status()
            async for chunk in response.aiter_raw():
                if not received:
                    connected += 1
                    if connected == count:
                        all_connected.set()
                received += chunk
        lines = bytes(received).split(b"\n")
        return sum(line.startswith(b"id: ") for line in lines), lines.count(b"event: end")

    async with httpx.AsyncClient(
        base_url=url.rstrip("/"),
        headers={"Authorization": f"Bearer {token}"},
        timeout=httpx.Timeout(120),
        limits=limits,
    ) as client:
        streams = [asyncio.create_task(follow(client)) for _ in range(count)]
        waiting = asyncio.create_task(all_connected.wait())
        await asyncio.wait([waiting, *streams], return_when=asyncio.FIRST_COMPLETED, timeout=60)
        if not all_connected.is_set():
            for stream in streams:
                stream.cancel()
            raise RuntimeError(f"only {connected} of {count} streams connected")
        print("ready", flush=True)
        results = await asyncio.gather(*streams)
    return {"events": [e for e, _ in results], "ended": [d for _, d in results]}


def measure_live(served: Served, gate: Gate) -> dict[str, float]:
    """Median seconds per turn without subscribers and with them, taking turns."""
    app = served.app
    live_turn(app, gate, None)  # warm: tokenizer, imports, the checkpointer's schema
    alone: list[float] = []
    watched: list[float] = []
    subscribers = Subscribers(served, SUBSCRIBERS)
    try:
        for _ in range(REPEAT):
            alone.append(live_turn(app, gate, None))
            watched.append(live_turn(app, gate, subscribers))
    finally:
        subscribers.close()
    return {"turn_alone_s": statistics.median(alone), "turn_watched_s": statistics.median(watched)}


def _cpu_s() -> float:
    """CPU seconds of every thread of this process (schedstat, in nanoseconds)."""
    try:
        return sum(
            int((task / "schedstat").read_text().split()[0]) / 1e9
            for task in Path("/proc/self/task").iterdir()
        )
    except (FileNotFoundError, ValueError, IndexError):
        usage = os.times()
        return usage.user + usage.system


def measure_idle() -> float:
    """CPU seconds per wall second of this process serving the app with no requests."""
    time.sleep(1.0)  # let the last requests' work settle
    cpu, wall = _cpu_s(), time.monotonic()
    time.sleep(IDLE_S)
    return (_cpu_s() - cpu) / (time.monotonic() - wall)


# -- all of it ---------------------------------------------------------------------------------


def measure() -> dict[str, float]:
    from squad.app import App

    gate = Gate()
    with temp_settings() as settings, App.open(settings, model_factory=gate.factory) as app:
        begin = time.perf_counter()
        populate(app)
        nested, flat = "squad-000", "squad-001"
        deep = nested_tree(app.squads.locate(nested).path)
        flat_folder(app.squads.locate(flat).path)
        figures: dict[str, float] = {"setup_s": time.perf_counter() - begin}
        with serve(app) as served:
            figures.update(measure_overview(served))
            figures.update(measure_explorer(served, nested, deep, flat))
            figures.update(measure_live(served, gate))
            figures["idle_cpu"] = measure_idle()
    return figures


def results(figures: dict[str, float]) -> list[Result]:
    from bench.__main__ import Result

    f = figures
    status, scandir_root = f["status_s"], f["scandir_root_s"]
    return [
        Result("web overview API p95", f["api_overview_s"], "collect_status p95", status, 2.0),
        Result("web overview page p95", f["page_overview_s"], "collect_status p95", status, 2.0),
        Result("web squads API p95", f["api_squads_s"], "collect_status p95", status, 2.0),
        Result("explorer root, API", f["api_root_s"], "scandir+lstat root", scandir_root, 3.0),
        Result("explorer root, page", f["page_root_s"], "scandir+lstat root", scandir_root, 3.0),
        Result("list_folder root", f["list_root_s"], "scandir+lstat root", scandir_root, 3.0),
        Result("explorer API, depth 8", f["api_deep_s"], "API, root", f["api_root_s"], 1.5),
        Result(
            "list_folder, 10k entries",
            f["list_flat_s"],
            "scandir+lstat 10k",
            f["scandir_flat_s"],
            3.0,
        ),
        Result(
            f"run turn, {SUBSCRIBERS} SSE followers",
            f["turn_watched_s"],
            "no followers",
            f["turn_alone_s"],
            1.1,
        ),
    ]


def notes(figures: dict[str, float]) -> list[str]:
    ms = {k: v * 1000 for k, v in figures.items() if k.endswith("_s")}
    return [
        f"web set-up ({SQUADS} squads, {RUNS:,} runs, 2 x {FILES:,} files): "
        f"{figures['setup_s']:.1f}s",
        f"web HTTP floor (a 404 through guard and router): {ms['http_floor_s']:.2f} ms; "
        f"squads.locate() with {SQUADS} squads: {ms['locate_s']:.2f} ms",
        f"explorer root: API {ms['api_root_s']:.2f} ms, tree fragment (hx) "
        f"{ms['fragment_root_s']:.2f} ms, page {ms['page_root_s']:.2f} ms; "
        f"10k-entry folder: API {ms['api_flat_s']:.1f} ms",
        f"list_folder depth 8 vs root in-process: {ms['list_deep_s']:.3f} ms vs "
        f"{ms['list_root_s']:.3f} ms ({figures['deep_entries']:.0f} and "
        f"{figures['root_entries']:.0f} entries)",
        f"web server idle CPU over {IDLE_S:.0f}s: {figures['idle_cpu'] * 100:.3f}% of a core "
        "(informational: no ratio)",
    ]


def bench_web(notes_out: list[str] | None = None) -> list[Result]:
    """This benchmark in a fresh process; notes go to ``notes_out`` (else are printed)."""
    from bench.support import in_fresh_process

    return in_fresh_process("bench.web_bench", results, notes, notes_out)


def main() -> int:
    if "--subscribe" in sys.argv:
        for line in sys.stdin:
            request = json.loads(line)
            answer = asyncio.run(
                subscribe(request["url"], request["token"], request["run"], request["n"])
            )
            print(json.dumps(answer), flush=True)
        return 0
    from bench.support import report

    return report(measure(), results, notes)


if __name__ == "__main__":
    sys.exit(main())
