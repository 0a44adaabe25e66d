"""The JSON-RPC stream of ``migrate server``, read in place of pygls's reader: LSP's header
framing with a bound on every part (64 KiB a header line, 32 headers, 64 MiB a body), so that a
client can never make the server allocate what a header claims, and every request answered,
with a JSON-RPC error when it cannot be handled (pygls leaves a request whose parameters do not
fit its type unanswered). The stream is read on the event loop's own thread: the server starts
worker processes by forking, which must not happen while another thread holds a lock."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
from typing import IO, Any, BinaryIO, Protocol

from pygls.exceptions import JsonRpcException
from pygls.io_ import StdoutWriter
from pygls.protocol import JsonRPCProtocol

#: The largest message body read, in bytes; a larger one ends the server (its framing is lost).
MAX_BODY = 64 * 1024 * 1024
#: The longest header line, in bytes (a real one is under 100).
MAX_HEADER_LINE = 64 * 1024
#: The most header lines one message may have (LSP defines two).
MAX_HEADERS = 32
#: Exit status when the stream's framing cannot be trusted: the client broke the protocol.
FRAMING_EXIT = 2

PARSE_ERROR, INVALID_REQUEST, INVALID_PARAMS = -32700, -32600, -32602
SERVER_NOT_INITIALIZED = -32002


class FramingError(Exception):
    """The stream's framing cannot be trusted any more: no later message can be found in it."""


class _Reader(Protocol):
    async def readline(self) -> bytes: ...

    async def readexactly(self, n: int) -> bytes: ...


def say(message: str) -> None:
    """One line on stderr, which editors keep as the server's log."""
    sys.stderr.write(f"migrate server: {message}\n")
    sys.stderr.flush()


def _shown(data: bytes) -> str:
    """Up to 40 bytes of what the client sent, as printable ASCII (no terminal control)."""
    return ascii(data[:40].decode("latin-1")) + ("..." if len(data) > 40 else "")


def _named(method: object) -> str:
    """A message's method for the log, in printable ASCII ("a response" for a response)."""
    if not isinstance(method, str):
        return "a response"
    return ascii(method[:60])[1:-1]


async def read_message(reader: _Reader) -> bytes | None:
    """The next message's body; None at the end of the stream. Raises FramingError when the
    headers cannot be read: a line that is no ``Name: value``, a ``Content-Length`` that is no
    number of bytes, is missing, repeated, or over ``MAX_BODY`` (never allocated)."""
    length: int | None = None
    count = 0
    while True:
        try:
            line = await reader.readline()
        except ValueError:  # asyncio's limit: the line is dropped, the stream desynchronised
            raise FramingError(f"a header line over {MAX_HEADER_LINE // 1024} KiB") from None
        if not line.endswith(b"\n"):
            return None  # the end of the stream (within a line, the client died mid-message)
        text = line.rstrip(b"\r\n")
        if not text:
            if count == 0:
                continue  # blank lines between messages
            if length is None:
                raise FramingError("a message without a Content-Length header")
            break
        count += 1
        if count > MAX_HEADERS:
            raise FramingError(f"more than {MAX_HEADERS} header lines in one message")
        name, colon, value = text.partition(b":")
        if not colon:
            raise FramingError(f"a header line that is not 'Name: value': {_shown(text)}")
        if name.strip().lower() != b"content-length":
            continue  # Content-Type, or a header of a later version: not needed
        if length is not None:
            raise FramingError("two Content-Length headers in one message")
        number = value.strip()
        if not number.isdigit() or len(number) > 20:
            raise FramingError(f"a Content-Length that is not a number of bytes: {_shown(number)}")
        length = int(number)
        if length > MAX_BODY:
            raise FramingError(
                f"a message of {length} bytes, over the bound of {MAX_BODY // 2**20} MiB"
            )
    try:
        return await reader.readexactly(length)
    except asyncio.IncompleteReadError:
        return None


def _send(protocol: JsonRPCProtocol, payload: dict[str, Any]) -> None:
    """Write one message to the client, framed by its length in bytes."""
    body = json.dumps({"jsonrpc": "2.0", **payload}).encode("utf-8")
    if protocol.writer is not None:
        protocol.writer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)


def _answer_error(
    protocol: JsonRPCProtocol, ident: int | str | None, code: int, message: str
) -> None:
    _send(protocol, {"id": ident, "error": {"code": code, "message": message}})


def _valid_id(value: object) -> bool:
    return isinstance(value, (int, str)) and not isinstance(value, bool)


class Session:
    """What ``dispatch`` remembers between messages: whether the client has initialized."""

    def __init__(self) -> None:
        self.initialized = False


#: What a client may send before ``initialize`` (LSP: a request gets -32002, a notification is
#: dropped).
_BEFORE_INITIALIZE = frozenset({"initialize", "exit"})


def dispatch(protocol: JsonRPCProtocol, body: bytes, session: Session | None = None) -> None:
    """Hand one message to pygls's protocol; answer a request it cannot take with an error."""
    session = session or Session()
    try:
        raw = json.loads(body)
    except (ValueError, RecursionError):  # not JSON, not UTF-8, or nested past the parser
        say("a message that is not JSON; answered with a parse error")
        _answer_error(protocol, None, PARSE_ERROR, "Parse error: the message is not JSON")
        return
    if not isinstance(raw, dict) or raw.get("jsonrpc") != "2.0":
        ident = raw.get("id") if isinstance(raw, dict) else None
        say("a message that is not a JSON-RPC 2.0 object; answered with an error")
        _answer_error(
            protocol,
            ident if _valid_id(ident) else None,
            INVALID_REQUEST,
            "Invalid Request: not a JSON-RPC 2.0 message object",
        )
        return
    method = raw.get("method")
    request = "id" in raw and "method" in raw
    if ("method" in raw and not isinstance(method, str)) or (request and not _valid_id(raw["id"])):
        say("a message whose method or id is of the wrong type; answered with an error")
        ident = raw["id"] if request and _valid_id(raw["id"]) else None
        _answer_error(protocol, ident, INVALID_REQUEST, "Invalid Request: method or id")
        return
    if request and getattr(protocol, "_shutdown", False) and method != "exit":
        _answer_error(protocol, raw["id"], INVALID_REQUEST, "the server is shutting down")
        return
    if isinstance(method, str) and not session.initialized and method not in _BEFORE_INITIALIZE:
        say(
            f"{_named(method)} before initialize; {'answered with an error' if request else 'dropped'}"
        )
        if request:
            _answer_error(
                protocol, raw["id"], SERVER_NOT_INITIALIZED, "the server is not initialized"
            )
        return
    try:
        message = protocol.structure_message(raw)
    except JsonRpcException:
        if request:
            say(f"{_named(method)}: parameters of the wrong shape; answered with an error")
            _answer_error(protocol, raw["id"], INVALID_PARAMS, f"Invalid params for {method}"[:200])
        else:
            say(f"{_named(method)}: parameters of the wrong shape; ignored")
        return
    try:
        protocol.handle_message(message)
    except Exception as error:  # a bug of pygls or ours: the message is lost, not the server
        say(f"{_named(method)}: {type(error).__name__}; ignored")
    else:
        session.initialized = session.initialized or (request and method == "initialize")


class _BlockingReader:
    """Reads a regular file given as stdin (the event loop cannot watch one; it never blocks)."""

    def __init__(self, stream: IO[bytes]) -> None:
        self.stream = stream

    async def readline(self) -> bytes:
        line = self.stream.readline(MAX_HEADER_LINE + 1)
        if len(line) > MAX_HEADER_LINE:
            raise ValueError("line too long")
        return line

    async def readexactly(self, n: int) -> bytes:
        data = self.stream.read(n)
        if len(data) < n:
            raise asyncio.IncompleteReadError(data, n)
        return data


async def _reader(stream: IO[bytes]) -> _Reader:
    reader = asyncio.StreamReader(limit=MAX_HEADER_LINE)
    loop = asyncio.get_running_loop()
    try:
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), stream)
    except ValueError:  # not a pipe, socket or terminal
        return _BlockingReader(stream)
    return reader


async def _serve(protocol: JsonRPCProtocol, stream: IO[bytes]) -> None:
    reader = await _reader(stream)
    session = Session()
    while (body := await read_message(reader)) is not None:
        dispatch(protocol, body, session)


class _OneLine(logging.Filter):
    """pygls's log, one printable line a record (its tracebacks only with ``MIGRATE_DEBUG``),
    without its report of a message it could not structure (``dispatch`` says that)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if str(record.msg).startswith("Unable to deserialize message"):
            return False
        if not os.environ.get("MIGRATE_DEBUG"):
            lines = record.getMessage().splitlines()
            line = lines[0] if lines else ""
            record.msg = "".join(c if c.isprintable() else "?" for c in line[:300])
            record.args = None
            record.exc_info = record.exc_text = record.stack_info = None
        return True


def _log_pygls() -> None:
    """Send pygls's warnings and errors to stderr as ``migrate server: pygls: ...`` lines."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("migrate server: pygls: %(message)s"))
    handler.addFilter(_OneLine())
    logger = logging.getLogger("pygls")
    logger.addHandler(handler)
    logger.setLevel(logging.WARNING)
    logger.propagate = False


def _claim_stdio() -> tuple[BinaryIO, BinaryIO]:
    """The protocol's own copies of stdin and stdout; descriptors 0 and 1 then read
    ``/dev/null`` and write to stderr, so that nothing else in the process, nor a process it
    starts, can read from the client's stream or write into it."""
    into = os.fdopen(os.dup(0), "rb", buffering=0)
    out = os.fdopen(os.dup(1), "wb")
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    return into, out


def serve_stdio(protocol: JsonRPCProtocol) -> None:
    """Serve the client on stdin and stdout until it exits or the stream ends; exit with
    status 2 (one line on stderr) when the stream's framing is lost."""
    _log_pygls()
    into, out = _claim_stdio()
    protocol.set_writer(StdoutWriter(out))
    try:
        asyncio.run(_serve(protocol, into))
    except FramingError as error:
        say(f"{error}; the connection is closed")
        raise SystemExit(FRAMING_EXIT) from None
    except BrokenPipeError:
        say("the client closed the connection")
