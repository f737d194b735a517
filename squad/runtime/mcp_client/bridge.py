"""The async side of MCP tools: one event-loop thread owning every MCP connection of a run.

Agents are synchronous; the MCP SDK is async, and a ``Client`` must be entered and exited in
one task. So a run gets one thread running one event loop, with one task per server that
enters its ``Client``, lists its tools, waits for the run to end and exits it again. Tool
calls come from the agents' threads (several at once when tasks run in parallel) and are
submitted to the loop with :func:`asyncio.run_coroutine_threadsafe`, each in a task of its own
bounded by the server's ``timeout_s``, and waited for with a timeout on the caller's side too.

Whatever a server does (exits, hangs, answers with something that is no tool result) comes
back as a :class:`CallOutcome` carrying an error text for the model, never as an exception.

stdio servers are started through :mod:`squad.runtime.mcp_client.launch`, which makes the kernel
kill them if this thread (and so the process) dies without stopping them, and leaves a watchdog that
stops whatever children of their own they leave once they exit; they run in the
workspace folder with only the environment variables their definition passes through, and
write their stderr to ``logs/run-<run-id>.mcp-stderr.log``.

This module imports the SDK (about a second): import it only when a run has MCP servers.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import math
import os
import shutil
import sys
import threading
import time
from collections.abc import Mapping
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp_types as types
from mcp import Client, MCPError, StdioServerParameters
from mcp.client.stdio import get_default_environment
from mcp.client.streamable_http import streamable_http_client
from pydantic import ValidationError

from squad.runtime.mcp_client import launch
from squad.runtime.mcp_client.stdio import StdoutNoise, stdio_transport
from squad.runtime.mcp_client.tools import CallOutcome, RemoteTool
from squad.spec.models import McpServerSpec

__all__ = ["McpBridge", "render_result", "server_pids"]

LAUNCHER = Path(launch.__file__).resolve()
CLIENT_INFO = types.Implementation(name="squad", version="0.1.0")
MAX_PAGES = 100
"""Pages of a tools/list answer followed before the listing is cut (a server paging forever)."""
CLOSE_TIMEOUT_S = 15.0
"""The SDK stops a stdio server in at most about 6.5 s (stdin closed, SIGTERM, SIGKILL)."""
MARKER_ENV = "SQUAD_MCP_SERVER"
"""Set in every stdio server's environment to '<run-id>/<server>': which run started it."""


class McpBridge:
    """The MCP servers of one run, on their own event-loop thread."""

    def __init__(
        self,
        servers: Mapping[str, McpServerSpec],
        *,
        cwd: Path,
        run_id: str,
        errlog: Path,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self._servers = dict(servers)
        self._cwd = cwd
        self._run_id = run_id
        self._errlog = errlog
        self._environ = dict(os.environ if environ is None else environ)
        self._ready: dict[str, concurrent.futures.Future[list[RemoteTool]]] = {
            name: concurrent.futures.Future() for name in self._servers
        }
        self._clients: dict[str, Client] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._closing: anyio.Event | None = None
        self._calls: set[concurrent.futures.Future[CallOutcome]] = set()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, name=f"squad-mcp-{run_id}", daemon=True)
        self._loop_ready = threading.Event()
        self.close_errors: dict[str, str] = {}
        """Servers whose connection raised while being closed, and why."""
        self.noise: dict[str, StdoutNoise] = {}
        """What each stdio server wrote to stdout that was no message (counted, not logged)."""

    # -- the caller's side -----------------------------------------------------------------

    def start(self) -> dict[str, list[RemoteTool] | str]:
        """Start (or connect to) every server at once; each one's tools, or why it failed."""
        self._thread.start()
        self._loop_ready.wait()
        results: dict[str, list[RemoteTool] | str] = {}
        for name, ready in self._ready.items():
            # The server task enforces its own timeout; this one only guards against a bug.
            limit = self._servers[name].startup_timeout_s
            done, _ = concurrent.futures.wait([ready], timeout=limit + CLOSE_TIMEOUT_S)
            if not done:
                results[name] = f"did not start within {limit:g}s"
            elif (error := ready.exception()) is not None:
                results[name] = _describe(error)
            else:
                results[name] = ready.result()
        return results

    def call(self, server: str, tool: str, arguments: dict[str, Any]) -> CallOutcome:
        """Call ``tool`` on ``server`` and wait at most the server's ``timeout_s``."""
        timeout = self._servers[server].timeout_s
        started = time.monotonic()
        loop = self._loop
        if loop is None or loop.is_closed():
            return _failed(started, f"MCP server {server!r} is stopped")
        try:
            future = asyncio.run_coroutine_threadsafe(
                self._call(server, tool, arguments, timeout, started), loop
            )
        except RuntimeError:  # the loop is shutting down
            return _failed(started, f"MCP server {server!r} is stopped")
        with self._lock:
            self._calls.add(future)
        try:
            return future.result(timeout=timeout + 5)
        except concurrent.futures.TimeoutError:
            future.cancel()
            return _failed(started, _timeout_text(server, timeout))
        except concurrent.futures.CancelledError:
            return _failed(started, f"the call was cancelled: MCP server {server!r} is stopping")
        finally:
            with self._lock:
                self._calls.discard(future)

    def close(self) -> None:
        """Stop every server (stdio: stdin closed, then SIGTERM, then SIGKILL) and the loop."""
        loop, closing = self._loop, self._closing
        if loop is not None and closing is not None and not loop.is_closed():
            with self._lock:
                calls = list(self._calls)
            for future in calls:
                future.cancel()
            with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
                loop.call_soon_threadsafe(closing.set)
        if self._thread.is_alive():
            self._thread.join(CLOSE_TIMEOUT_S)

    # -- the loop's side -------------------------------------------------------------------

    def _run(self) -> None:
        try:
            asyncio.run(self._main())
        except BaseException as exc:  # noqa: BLE001 - a bug here must not kill the run
            for ready in self._ready.values():
                if not ready.done():
                    ready.set_exception(RuntimeError(f"MCP event loop failed: {_describe(exc)}"))
        finally:
            self._loop_ready.set()

    async def _main(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._closing = anyio.Event()
        self._loop_ready.set()
        with self._errlog.open("a", encoding="utf-8", errors="replace") as errlog:
            async with anyio.create_task_group() as group:
                for name, spec in self._servers.items():
                    group.start_soon(self._hold, name, spec, errlog)
            for noise in self.noise.values():
                noise.summary()

    async def _hold(self, name: str, spec: McpServerSpec, errlog: Any) -> None:
        """Connect, list the tools, keep the connection until the run ends, then close it."""
        ready = self._ready[name]
        assert self._closing is not None
        try:
            with anyio.CancelScope() as scope:
                scope.deadline = anyio.current_time() + spec.startup_timeout_s
                async with AsyncExitStack() as stack:
                    client = await self._connect(stack, name, spec, errlog)
                    tools = await _list_tools(client, name)
                    scope.deadline = math.inf
                    self._clients[name] = client
                    ready.set_result(tools)
                    await self._closing.wait()
                    self._clients.pop(name, None)
            if scope.cancelled_caught and not ready.done():
                ready.set_exception(
                    TimeoutError(
                        f"did not start and list its tools within {spec.startup_timeout_s:g}s"
                    )
                )
        except Exception as exc:  # noqa: BLE001 - reported per server
            self._clients.pop(name, None)
            if not ready.done():
                ready.set_exception(exc)
            else:
                self.close_errors[name] = _describe(exc)
        finally:
            if not ready.done():
                ready.set_exception(RuntimeError("stopped before it was ready"))

    async def _connect(
        self, stack: AsyncExitStack, name: str, spec: McpServerSpec, errlog: Any
    ) -> Client:
        if spec.url is not None:
            headers = {}
            for header, variable in spec.headers_env.items():
                value = self._environ.get(variable)
                if not value:
                    raise LookupError(
                        f"environment variable {variable!r} (for header {header!r}) is not set"
                    )
                headers[header] = value
            http = await stack.enter_async_context(
                httpx2.AsyncClient(
                    headers=headers,
                    timeout=httpx2.Timeout(spec.timeout_s, read=max(spec.timeout_s, 300.0)),
                )
            )
            transport = streamable_http_client(spec.url, http_client=http)
        else:
            env = get_default_environment() | {
                variable: self._environ[variable]
                for variable in spec.env
                if variable in self._environ
            }
            program = _resolve(spec.command or "", env.get("PATH"))
            marker = f"{MARKER_ENV}={self._run_id}/{name}"  # the server's alone, not its watchdog's
            params = StdioServerParameters(
                command=sys.executable,
                args=[
                    *("-I", "-S", str(LAUNCHER), str(os.getpid()), "--set", marker, "--"),
                    *(program, *spec.args),
                ],
                env=env,
                cwd=self._cwd,
            )
            noise = self.noise[name] = StdoutNoise(name, errlog)
            transport = stdio_transport(params, errlog, noise)
        return await stack.enter_async_context(Client(transport, client_info=CLIENT_INFO))

    async def _call(
        self, server: str, tool: str, arguments: dict[str, Any], timeout: float, started: float
    ) -> CallOutcome:
        client = self._clients.get(server)
        if client is None:
            return _failed(started, f"MCP server {server!r} is not running")
        try:
            with anyio.fail_after(timeout):
                result = await client.call_tool(tool, arguments)
        except TimeoutError:
            return _failed(started, _timeout_text(server, timeout))
        except MCPError as exc:
            if exc.code == types.CONNECTION_CLOSED:
                return _failed(started, f"MCP server {server!r} closed the connection (it exited?)")
            # A JSON-RPC error is an answer: the server refused the call (unknown tool, ...).
            return CallOutcome(
                f"error from MCP server {server!r}: {exc.message or exc.code}",
                is_error=True,
                duration_s=time.monotonic() - started,
            )
        except ValidationError as exc:
            return _failed(
                started, f"MCP server {server!r} answered with a malformed result: {_first(exc)}"
            )
        except Exception as exc:  # noqa: BLE001 - any failure of a server is the model's error
            return _failed(started, f"MCP server {server!r} failed: {_describe(exc)}")
        text = render_result(result)
        return CallOutcome(
            f"error: {text}" if result.is_error else text,
            result.is_error,
            duration_s=time.monotonic() - started,
        )


async def _list_tools(client: Client, server: str) -> list[RemoteTool]:
    tools: list[RemoteTool] = []
    cursor: str | None = None
    for _ in range(MAX_PAGES):
        page = await client.list_tools(cursor=cursor)
        tools += [
            RemoteTool(server, t.name, t.description or t.title or t.name, dict(t.input_schema))
            for t in page.tools
        ]
        cursor = page.next_cursor
        if cursor is None:
            break
    return tools


def render_result(result: types.CallToolResult) -> str:
    """A tool result as text for the model: its text blocks, others described."""
    parts: list[str] = []
    for block in result.content:
        if isinstance(block, types.TextContent):
            parts.append(block.text)
        elif isinstance(block, types.ImageContent | types.AudioContent):
            kind = "image" if isinstance(block, types.ImageContent) else "audio"
            parts.append(f"[{kind} {block.mime_type}, {len(block.data) * 3 // 4:,} bytes]")
        elif isinstance(block, types.EmbeddedResource):
            resource = block.resource
            if isinstance(resource, types.TextResourceContents):
                parts.append(resource.text)
            else:
                parts.append(f"[binary resource {resource.uri}]")
        elif isinstance(block, types.ResourceLink):
            parts.append(f"[resource {block.uri}: {block.name}]")
    if not parts and result.structured_content is not None:
        import json

        parts.append(json.dumps(result.structured_content, ensure_ascii=False))
    return "\n".join(parts)


def server_pids(run_id: str) -> dict[str, int]:
    """The live stdio servers a run started, by name (Linux: read from /proc; else empty).

    A server's own children inherit its marker; the server is the one leading their group.
    """
    found: dict[str, int] = {}
    proc = Path("/proc")
    if not proc.is_dir():
        return found
    prefix = f"{MARKER_ENV}={run_id}/".encode()
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes()
            state, _, group = (entry / "stat").read_text().rsplit(")", 1)[1].split()[:3]
        except (OSError, ValueError):
            continue
        if state == "Z" or group != entry.name:
            continue
        for item in environ.split(b"\0"):
            if item.startswith(prefix):
                found[item[len(prefix) :].decode(errors="replace")] = int(entry.name)
    return found


def _resolve(command: str, path: str | None) -> str:
    """The program to exec, checked here so a missing one is named plainly."""
    if Path(command).is_absolute():
        if not (Path(command).is_file() and os.access(command, os.X_OK)):
            raise FileNotFoundError(f"command {command!r} does not exist or is not executable")
        return command
    found = shutil.which(command, path=path)
    if found is None:
        raise FileNotFoundError(f"command {command!r} is not on PATH")
    return found


def _failed(started: float, text: str) -> CallOutcome:
    return CallOutcome(
        f"error: {text}", is_error=True, duration_s=time.monotonic() - started, failure=text
    )


def _timeout_text(server: str, timeout: float) -> str:
    return f"MCP server {server!r} did not answer within {timeout:g}s; the call was abandoned"


def _first(exc: ValidationError) -> str:
    errors = exc.errors(include_url=False)
    if not errors:
        return str(exc)
    first = errors[0]
    where = ".".join(str(p) for p in first.get("loc", ())) or "result"
    return f"{where}: {first.get('msg', '')}" + (
        f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    )


def _describe(exc: BaseException) -> str:
    """One line for an error, unwrapping the SDK's exception groups."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if isinstance(exc, MCPError):
        return f"MCP error {exc.code}: {exc.message}"
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return text or type(exc).__name__
