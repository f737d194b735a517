"""The stdio transport of MCP tools: the SDK's, with a reader that stays linear and quiet.

The SDK's ``stdio_client`` joins each chunk of stdout to the pending partial line and splits
the whole again, which is quadratic in a line's length: a 50 MB tool answer took about five
minutes to read. And it logs a traceback for every line that is no JSON-RPC message, which a
server printing its own logs to stdout turns into thousands of tracebacks on squad's stderr.
So the reader here scans only what each chunk adds, refuses a message longer than
:data:`MAX_MESSAGE_BYTES` (the call gets an error answer at once rather than a timeout), and
counts the lines that are no message into :class:`StdoutNoise`: a few samples and a total go
to the run's MCP stderr log, nothing to squad's own stderr.

The server's stderr is read through a pipe and copied to that log a line at a time with its
credentials redacted, like everything else a run keeps: a server may print its configuration
or the token it was given. A line longer than :data:`STDERR_LINE_CHARS` keeps its start and
says how much was cut.

Starting the server (its own session, so its own process group) and stopping it (stdin closed,
SIGTERM to the group, SIGKILL) are the SDK's, called as they are.
"""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import TextIO

import anyio
import anyio.lowlevel
import mcp_types as types
from anyio.abc import ByteReceiveStream, Process
from mcp.client._transport import TransportStreams
from mcp.client.stdio import (  # the SDK's shutdown sequence, reused as it is
    StdioServerParameters,
    _aclose_all,
    _drain_stdout,
    _stop_server_process,
)
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

__all__ = ["MAX_MESSAGE_BYTES", "StdoutNoise", "stdio_transport"]

MAX_MESSAGE_BYTES = 32 * 1024 * 1024
"""Longest message read from a server; an answer the model sees 20,000 characters of."""
SAMPLES = 5
"""Lines of noise copied to the stderr log, before they are only counted."""
SAMPLE_CHARS = 200
STDERR_LINE_CHARS = 4096
"""Longest line of a server's stderr copied to its log; the rest of the line is counted."""
_WRITER_FLUSH_TIMEOUT = 0.5
_STDERR_DRAIN_TIMEOUT = 2.0
_ID = re.compile(rb'"id"\s*:\s*(-?\d{1,18}|"[^"\\]{0,200}")')
_METHOD = re.compile(rb'"method"\s*:')


@dataclass
class StdoutNoise:
    """What one server wrote to stdout that was no JSON-RPC message."""

    server: str
    errlog: TextIO
    lines: int = 0
    """Lines that were no JSON-RPC message."""
    oversized: int = 0
    """Messages over :data:`MAX_MESSAGE_BYTES`, dropped."""

    def line(self, raw: bytes) -> None:
        self.lines += 1
        if self.lines <= SAMPLES:
            sample = raw[:SAMPLE_CHARS].decode("utf-8", "replace")
            more = f" (+{len(raw) - SAMPLE_CHARS:,} characters)" if len(raw) > SAMPLE_CHARS else ""
            self._say(f"stdout line {self.lines} is no JSON-RPC message: {sample!r}{more}")
            if self.lines == SAMPLES:
                self._say("further lines like these are counted, not copied")

    def too_long(self, head: bytes) -> None:
        self.oversized += 1
        self._say(
            f"a message over {MAX_MESSAGE_BYTES:,} bytes was dropped: "
            f"{head[:SAMPLE_CHARS].decode('utf-8', 'replace')!r}"
        )

    def summary(self) -> None:
        """The totals, written once when the server is stopped (if there were any)."""
        if self.lines:
            self._say(f"{self.lines:,} lines of its stdout were no JSON-RPC message, and ignored")

    def _say(self, text: str) -> None:
        _write_line(self.errlog, f"[squad] MCP server {self.server!r}: {text}")


def _write_line(errlog: TextIO, line: str) -> None:
    from squad.text.secrets import redact

    errlog.write(redact(line)[0] + "\n")
    errlog.flush()


async def _copy_stderr(stderr: ByteReceiveStream, errlog: TextIO) -> None:
    """The server's stderr to ``errlog``, line by line, redacted; linear in what it writes."""
    pending = bytearray()
    cut = 0  # characters of the current line beyond STDERR_LINE_CHARS, not kept

    def flush() -> None:
        nonlocal cut
        line = pending.decode("utf-8", "replace")
        if cut:
            line += f" [... {cut:,} more bytes of this line cut]"
        _write_line(errlog, line)
        pending.clear()
        cut = 0

    while True:
        try:
            chunk = await stderr.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            break
        start = 0
        while start < len(chunk):
            end = chunk.find(b"\n", start)
            piece = chunk[start:] if end < 0 else chunk[start:end]
            room = STDERR_LINE_CHARS - len(pending)
            pending += piece[:room]
            cut += max(0, len(piece) - room)
            if end < 0:
                break
            flush()
            start = end + 1
    if pending or cut:
        flush()


@asynccontextmanager
async def stdio_transport(
    server: StdioServerParameters, errlog: TextIO, noise: StdoutNoise
) -> AsyncIterator[TransportStreams]:
    """Start ``server`` and exchange newline-delimited JSON-RPC with it, as the SDK does."""
    process = await anyio.open_process(
        [server.command, *server.args],
        env=server.env,
        stderr=subprocess.PIPE,
        cwd=server.cwd,
        start_new_session=True,
    )
    read_writer, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, write_reader = anyio.create_memory_object_stream[SessionMessage](0)
    writer_done = anyio.Event()
    stderr_done = anyio.Event()

    async def stderr_copier() -> None:
        assert process.stderr is not None
        try:
            await _copy_stderr(process.stderr, errlog)
        finally:
            stderr_done.set()

    async def stdout_reader() -> None:
        assert process.stdout is not None
        try:
            async with read_writer:
                try:
                    async for message in _messages(process.stdout, noise):
                        try:
                            await read_writer.send(message)
                        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                            return
                finally:
                    await _drain_stdout(process)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, ConnectionError):
            pass  # our own shutdown, or the server gone: the session sees the stream close

    async def stdin_writer() -> None:
        assert process.stdin is not None
        try:
            async with write_reader:
                async for outgoing in write_reader:
                    data = outgoing.message.model_dump_json(by_alias=True, exclude_unset=True)
                    await process.stdin.send((data + "\n").encode())
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            await read_writer.aclose()  # the session sees the connection end
        finally:
            writer_done.set()

    async def shutdown(process: Process) -> None:
        read_stream.close()
        write_stream.close()
        with anyio.move_on_after(_WRITER_FLUSH_TIMEOUT):
            await writer_done.wait()
        await _stop_server_process(process)
        with anyio.move_on_after(_STDERR_DRAIN_TIMEOUT):  # its last words, up to the pipe's end
            await stderr_done.wait()
        await _aclose_all(read_stream, write_stream, read_writer, write_reader)
        await anyio.lowlevel.checkpoint()

    async with anyio.create_task_group() as group:
        group.start_soon(stdout_reader)
        group.start_soon(stdin_writer)
        group.start_soon(stderr_copier)
        try:
            yield read_stream, write_stream
        finally:
            with anyio.CancelScope(shield=True):  # the server must be stopped, cancelled or not
                await shutdown(process)
            group.cancel_scope.cancel()
    await anyio.lowlevel.cancel_shielded_checkpoint()


async def _messages(stdout: ByteReceiveStream, noise: StdoutNoise) -> AsyncIterator[SessionMessage]:
    """The messages on ``stdout``; lines that are none go to ``noise``."""
    pending = bytearray()
    skipping = False  # inside a line over the limit, already answered for
    while True:
        try:
            chunk = await stdout.receive()
        except anyio.EndOfStream:
            return
        start = 0
        while (end := chunk.find(b"\n", start)) >= 0:
            if skipping:
                skipping = False
            else:
                pending += chunk[start:end]
                message = _parse(bytes(pending), noise)
                pending.clear()
                if message is not None:
                    yield message
            start = end + 1
        if not skipping:
            pending += chunk[start:]
            if len(pending) > MAX_MESSAGE_BYTES:
                noise.too_long(bytes(pending[:SAMPLE_CHARS]))
                refusal = _refusal(bytes(pending[:4096]))
                pending.clear()
                skipping = True
                if refusal is not None:
                    yield refusal


def _parse(line: bytes, noise: StdoutNoise) -> SessionMessage | None:
    if not line.strip():
        return None
    try:
        return SessionMessage(types.jsonrpc_message_adapter.validate_json(line, by_name=False))
    except (ValidationError, ValueError):
        noise.line(line)
        return None


def _refusal(head: bytes) -> SessionMessage | None:
    """An error answer to the request a message too long to read answers, if it names one."""
    found = _ID.search(head)
    if found is None or head[: found.start()].count(b"{") != 1 or _METHOD.search(head):
        return None  # no id, one inside the result (not the message's), or a request
    error = {
        "code": types.INTERNAL_ERROR,
        "message": f"the server's answer is over {MAX_MESSAGE_BYTES:,} bytes, squad's limit; "
        "it was not read",
    }
    reply = {"jsonrpc": "2.0", "id": json.loads(found.group(1)), "error": error}
    return SessionMessage(types.jsonrpc_message_adapter.validate_python(reply, by_name=False))
