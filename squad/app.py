"""The composition root: one squad home opened with its settings, and every service built once.

Every front end (the CLI, the daemon, the benchmarks; the HTTP API and the MCP server next)
asks an :class:`App` for what it needs instead of assembling it::

    with App.open(Settings.load()) as app:
        spec, workspace = app.squads.definition("docs-site")
        result = app.runner().run(spec, workspace)

Nothing below this module builds a manager, a store, a memory service or a checkpointer of
its own. Services are made on first use, so a command that only reads never creates a
database, and ``squad --help`` pays for none of them. Closing the app lets queued extraction
passes finish, then closes checkpoints and the store.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from squad.clock import Clock, utc_now

if TYPE_CHECKING:
    from types import TracebackType

    from squad.checkpoints import Checkpoints
    from squad.extraction.background import BackgroundExtractor
    from squad.extraction.review import ReviewQueue
    from squad.history.history import History
    from squad.jobqueue.client import ClusterClient
    from squad.manager import SquadManager
    from squad.memory.agent import AgentContext
    from squad.memory.decisions.log import DecisionLog
    from squad.memory.embeddings import Embedder
    from squad.memory.service import MemoryService
    from squad.model.factory import ModelFactory
    from squad.run_history import Runs
    from squad.runtime.runner import SquadRunner
    from squad.settings import Settings
    from squad.store import Store
    from squad.store.sqlite_reader import StoreReader
    from squad.telemetry import Telemetry

__all__ = ["App"]

TELEMETRY_FLUSH_S = 5.0
"""How long closing the app waits at most for queued spans to reach the OTLP receiver."""
ExtractionErrors = Callable[["AgentContext", BaseException], None]
HistoryEvents = Callable[[str, dict[str, Any]], None]


class App:
    """The services of one squad home; thread-safe, each made once, on first use."""

    def __init__(
        self,
        settings: Settings,
        *,
        store: Store | None = None,
        clock: Clock = utc_now,
        model_factory: ModelFactory | None = None,
        telemetry: Telemetry | None = None,
        reading: bool = False,
    ) -> None:
        """Prefer :meth:`open`. A ``store`` or ``telemetry`` passed in stays the caller's to
        close. ``reading``: a reading command's app, whose memory service reads a current
        SQLite store through plain sqlite3 (:mod:`squad.store.sqlite_reader`)."""
        self.settings = settings
        self.clock = clock
        self._model_factory = model_factory
        self._store: Store | None = store
        self._owns_store = store is None
        self._reading = reading
        self._reader: StoreReader | None = None
        self._extraction_errors: list[ExtractionErrors] = []
        self._history_handlers: list[HistoryEvents] = []
        self._histories: dict[tuple[Path, str], History] = {}
        self._lock = threading.RLock()
        self._squads: SquadManager | None = None
        self._memory: MemoryService | None = None
        self._decisions: DecisionLog | None = None
        self._checkpoints: Checkpoints | None = None
        self._extraction: BackgroundExtractor | None = None
        self._cluster: ClusterClient | None = None
        self._given_telemetry = telemetry
        self._telemetry: Telemetry | None = telemetry
        self.task_slots = threading.BoundedSemaphore(settings.daemon.max_parallel_tasks)
        """Tasks working at once across every runner of this app (``daemon.max_parallel_tasks``)."""
        self._closed = False

    @classmethod
    def open(
        cls,
        settings: Settings,
        *,
        store: Store | None = None,
        clock: Clock = utc_now,
        model_factory: ModelFactory | None = None,
        telemetry: Telemetry | None = None,
        reading: bool = False,
    ) -> App:
        """The app for ``settings``; nothing is opened until a service is first asked for.
        ``reading``: for a command that only reads (see :meth:`__init__`)."""
        return cls(
            settings,
            store=store,
            clock=clock,
            model_factory=model_factory,
            telemetry=telemetry,
            reading=reading,
        )

    # -- services ----------------------------------------------------------------------------

    @property
    def model_factory(self) -> ModelFactory:
        """Builds each agent's model from its spec (offline in-process, else litellm:
        :func:`~squad.model.factory.model_for` unless another was given)."""
        if self._model_factory is None:
            from squad.model.factory import model_for

            self._model_factory = model_for
        return self._model_factory

    @property
    def squads(self) -> SquadManager:
        """Squad definitions, their workspaces and their registration in the store."""
        with self._lock:
            if self._squads is None:
                from squad.manager import SquadManager

                self._squads = SquadManager(
                    self.settings,
                    store=self._store if self._store is not None else self._open_store,
                    clock=self.clock,
                    histories=self.history,
                )
            return self._squads

    @property
    def store(self) -> Store:
        """The state database, opened (and migrated) on first use; :meth:`close` closes it."""
        return self._open_store()

    def _open_store(self) -> Store:
        with self._lock:
            if self._store is None:
                from squad.store import Store

                self._store = Store.open(self.settings.database_url, clock=self.clock)
            return self._store

    @property
    def reads(self) -> Store:
        """Where a reading app's reads go: the store if it is open, else a sqlite3 reader of a
        current SQLite database (handing on to the store what it does not answer), else the
        store. An app that is not ``reading`` reads from :attr:`store`."""
        with self._lock:
            if self._store is not None or not self._reading:
                return self._open_store()
            if self._reader is None:
                from squad.store.sqlite_reader import open_reader

                self._reader = open_reader(
                    self.settings.database_url, clock=self.clock, full=self._open_store
                )
                if self._reader is None:
                    self._reading = False  # only the full store can answer: ask no more
                    return self._open_store()
            # The reader speaks the store's reading API and hands it the rest (its docstring).
            return cast("Store", self._reader)

    def database_exists(self) -> bool:
        """Whether the store is open or its database is there already (reading commands
        create none)."""
        if self._store is not None or self._reader is not None:
            return True
        from squad.store.sqlite_reader import sqlite_path

        path = sqlite_path(self.settings.database_url)  # no SQLAlchemy for a plain file URL
        if path is not None:
            return path.is_file()
        from squad.store.engine import database_exists

        return database_exists(self.settings.database_url)

    @property
    def memory(self) -> MemoryService:
        """Agents' layered memory, ranked as ``memory.ranking`` in the settings asks."""
        with self._lock:
            if self._memory is None:
                from squad.memory.service import MemoryService

                self._memory = MemoryService(
                    self.settings,
                    self.reads,
                    clock=self.clock,
                    embedder=self._embedder(),
                    histories=self.history,
                    same_as=known_to_the_extractor,
                    chatter=_is_chatter,
                )
            return self._memory

    def history(self, workspace: Path, squad: str) -> History:
        """The history of ``squad``'s workspace (a git repository in its ``.git``), as
        ``history:`` in settings.yaml asks; ``history_paused`` and other events go to the
        handlers of :meth:`on_history_event`."""
        key = (workspace, squad)
        with self._lock:
            found = self._histories.get(key)
            if found is None:
                from squad.history.history import History
                from squad.history.staging import StagingPolicy

                found = History(
                    workspace,
                    squad,
                    clock=self.clock,
                    enabled=self.settings.history.enabled,
                    committer=self._committer(),
                    report=self._history_event,
                    staging=StagingPolicy(self.settings.history.max_file_mb * 1024 * 1024),
                )
                self._histories[key] = found
            return found

    @property
    def runs(self) -> Runs:
        """Runs as the workspaces' histories record them (``squad runs``); the store is
        read only for squads whose history is off or paused."""
        from squad.run_history import Runs

        return Runs(
            self.settings,
            self.history,
            store=lambda: self.store if self.database_exists() else None,
        )

    def _committer(self) -> str:
        if not self.settings.clustered:
            return "squad"
        import socket

        return f"squad on {self.settings.cluster.node or socket.gethostname()}"

    def on_history_event(self, handler: HistoryEvents) -> None:
        """Also tell ``handler`` of history events (``history_paused``: a workspace whose
        history cannot be written; its work goes on)."""
        with self._lock:
            self._history_handlers.append(handler)

    def _history_event(self, event: str, fields: dict[str, Any]) -> None:
        with self._lock:
            handlers = list(self._history_handlers)
        for handler in handlers:
            handler(event, fields)

    @property
    def decisions(self) -> DecisionLog:
        """Squads' decisions with their reasons, mirrored to each workspace's decisions.md."""
        with self._lock:
            if self._decisions is None:
                from squad.memory.decisions.log import DecisionLog

                self._decisions = DecisionLog(self.store, clock=self.clock, histories=self.history)
            return self._decisions

    @property
    def review(self) -> ReviewQueue:
        """The memory review queue: a person's approve, edit and reject of proposed facts."""
        from squad.extraction.review import ReviewQueue

        return ReviewQueue(self.memory, self.decisions, clock=self.clock)

    def _embedder(self) -> Embedder | None:
        from squad.memory.embeddings import load_embedder

        return load_embedder(self.settings.memory_ranking)

    @property
    def telemetry(self) -> Telemetry:
        """Where spans of runs, turns, model and tool calls go: OpenTelemetry when an OTLP
        endpoint is configured (``telemetry:`` in settings.yaml, ``OTEL_EXPORTER_OTLP_*``),
        else nowhere, with nothing of OpenTelemetry imported."""
        with self._lock:
            if self._telemetry is None:
                from squad.telemetry import open_telemetry

                wanted = self.settings.telemetry
                self._telemetry = open_telemetry(
                    wanted.traces_url,
                    capture_content=wanted.capture_content,
                    service_name=wanted.service_name,
                )
            return self._telemetry

    @property
    def checkpoints(self) -> Checkpoints:
        """Run checkpoints: beside a SQLite store, or in the Postgres store's database."""
        with self._lock:
            if self._checkpoints is None:
                from squad.checkpoints import open_checkpoints

                self._checkpoints = open_checkpoints(self.settings)
            return self._checkpoints

    @property
    def cluster(self) -> ClusterClient:
        """The cluster's queue (procrastinate on the store's Postgres), opened on first use;
        only in cluster mode (``cluster.enabled``)."""
        from squad.errors import UsageError

        with self._lock:
            if not self.settings.clustered:
                raise UsageError(
                    "this home is not part of a cluster; set cluster: {enabled: true} in "
                    "settings.yaml (with a PostgreSQL database_url) to run one"
                )
            if self._cluster is None:
                from squad.jobqueue.client import ClusterClient

                self._cluster = ClusterClient(
                    self.settings, pool_size=self.settings.daemon.max_concurrent_runs + 2
                )
            return self._cluster

    @property
    def extraction(self) -> BackgroundExtractor:
        """The background fact extractor every runner and chat of this app shares (one
        worker thread per process, as it expects)."""
        with self._lock:
            if self._extraction is None:
                from squad.extraction.background import BackgroundExtractor
                from squad.extraction.job import AgentExtractor
                from squad.extraction.models import ExtractionModels

                extractor = AgentExtractor(
                    self.memory,
                    ExtractionModels(self.model_factory),
                    clock=self.clock,
                    decisions=self.decisions,
                    telemetry=self.telemetry,
                )
                if self.settings.clustered:
                    from squad.jobqueue.extraction import ClusterExtraction

                    cluster = self.cluster
                    self._extraction = ClusterExtraction(
                        extractor, cluster.defer_extraction, on_error=self._extraction_failed
                    )
                else:
                    self._extraction = BackgroundExtractor(
                        extractor, on_error=self._extraction_failed
                    )
            return self._extraction

    def on_extraction_error(self, handler: ExtractionErrors) -> None:
        """Also tell ``handler`` when a background extraction pass raises (the daemon logs
        it); the pass's messages stay unread for the next one."""
        with self._lock:
            self._extraction_errors.append(handler)

    def _extraction_failed(self, ctx: AgentContext, exc: BaseException) -> None:
        with self._lock:
            handlers = list(self._extraction_errors)
        for handler in handlers:
            handler(ctx, exc)

    def agent(self, squad: str, agent: str) -> AgentContext:
        """One agent of a squad, as its workspace manifest defines it (NotFound for an
        unknown squad or agent)."""
        from squad.memory.agent import AgentContext

        spec, workspace = self.squads.definition(squad)
        return AgentContext.of(spec, agent, workspace)

    def runner(
        self,
        *,
        progress: Callable[[str], None] | None = None,
        model_factory: ModelFactory | None = None,
    ) -> SquadRunner:
        """A runner for runs, resumes and approvals (one per concurrent run: its ``stop``
        event is its own), on this app's services; ``model_factory`` overrides the app's for
        this runner's agents (extraction keeps the app's)."""
        from squad.runtime.runner import SquadRunner

        return SquadRunner(
            self.settings,
            self.store,
            memory=self.memory,
            checkpoints=self.checkpoints,
            extraction=self.extraction,
            # A cluster worker may never have seen the YAML file: the store has the squad.
            find_squad=(
                self.squads.registered if self.settings.clustered else self.squads.definition
            ),
            model_factory=model_factory or self.model_factory,
            progress=progress,
            clock=self.clock,
            decisions=self.decisions,
            task_slots=self.task_slots,
            telemetry=self.telemetry,
            history=self.history,
        )

    # -- the end -----------------------------------------------------------------------------

    def drain_extraction(self, timeout: float = 30.0) -> bool:
        """Let queued extraction passes finish (up to ``timeout``); True if they all did.
        Messages not read yet stay past the extractor's watermark for the next pass."""
        with self._lock:
            extraction, self._extraction = self._extraction, None
        return True if extraction is None else extraction.close(timeout)

    def close(self, timeout: float = 30.0) -> None:
        """Drain extraction (up to ``timeout``), send the spans still queued, then close
        checkpoints and the store."""
        if self._closed:
            return
        self._closed = True
        try:
            self.drain_extraction(timeout)
        finally:
            from squad.telemetry import NO_TELEMETRY

            with self._lock:
                telemetry, self._telemetry = self._telemetry, NO_TELEMETRY
                checkpoints, self._checkpoints = self._checkpoints, None
                self._squads = None
                store = self._store if self._owns_store else None  # one given stays open
                if self._owns_store:
                    self._store = None
                cluster, self._cluster = self._cluster, None
                reader, self._reader = self._reader, None
            if reader is not None:
                reader.close()
            if telemetry is not None and telemetry is not self._given_telemetry:
                telemetry.shutdown(min(timeout, TELEMETRY_FLUSH_S))
            if cluster is not None:
                cluster.close()
            if checkpoints is not None:
                checkpoints.close()
            if store is not None:
                store.close()

    def __enter__(self) -> App:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def _is_chatter(text: str, role: str) -> bool:
    """:func:`squad.text.chatter.is_chatter_message`, its cue tables and the classifier's
    subjects imported by the first message recall asks about, not by every reading command."""
    from squad.text.chatter import is_chatter_message

    return is_chatter_message(text, role)


def known_to_the_extractor(fact: str, known: Sequence[str]) -> int | None:
    """The extractor's duplicate check (exact, normalised, near-duplicate merge), as the
    memory service's :data:`~squad.memory.dedupe.SameAs`: the index of the fact of ``known``
    that ``fact`` repeats, None when the extractor would write it as new. The memory layer
    sits below the extractor, so the App is where the two meet.

    Only the facts the extractor's own measures put close (same normal form, or similarity
    at the near-duplicate threshold) go to its decision, so a check costs one pass of cheap
    comparisons over a full memory.md rather than its whole decision per line."""
    from squad.extraction.candidates import Candidate, Existing
    from squad.extraction.quality import NEAR_DUPLICATE, decide, similarity

    key = _normalised(fact)
    close = [
        number
        for number, text in enumerate(known)
        if _normalised(text) == key or similarity(fact, text) >= NEAR_DUPLICATE
    ]
    if not close:
        return None
    existing = [Existing(n, "project", known[n], None, ref=f"line:{n}") for n in close]
    (verdict,) = decide([Candidate(fact, "project")], existing)
    if verdict.reason in ("duplicate", "near-duplicate") and verdict.target is not None:
        return verdict.target.number
    return None


@lru_cache(maxsize=16_384)
def _normalised(text: str) -> str:
    from squad.extraction.quality import normalise

    return normalise(text)
