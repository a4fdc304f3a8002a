"""The adversarial inputs of the robustness issue (part 2) as v2 JSON Lines, shared by
``test_adversarial.py`` (codec, store, bridges) and ``test_cli_robustness.py`` (the commands).

Every stream is framed the same way: ``BEFORE`` reports tool call ``before`` and ``AFTER``
reports ``after`` (both titled, completed), so a reader that survives the bad part shows both.
Big inputs are generated lazily (``Iterator[bytes]`` of lines) and kept out of memory where
the reader allows it. ``benchmarks/adversarial.py`` streams the same shapes at full size for
the figures of docs/robustness.md.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterable, Iterator
from typing import Any

SID = "s1"
MiB = 1024 * 1024


def message(update: dict[str, Any], session_id: str = SID) -> bytes:
    body = {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {"sessionId": session_id, "update": update},
    }
    return json.dumps(body, separators=(",", ":")).encode()


def update(tool_call_id: str, session_id: str = SID, **fields: Any) -> bytes:
    body = {"sessionUpdate": "tool_call_update", "toolCallId": tool_call_id, **fields}
    return message(body, session_id)


BEFORE = update("before", title="before", status="completed")
AFTER = update("after", title="after", status="completed")

_TITLED = update("bad", title="TITLE")


def with_title(raw: bytes) -> bytes:
    """A ``tool_call_update`` of ``bad`` whose title is the raw JSON ``raw`` (bytes as given)."""
    return _TITLED.replace(b'"TITLE"', raw)


def long_line(size: int) -> bytes:
    """A valid message of ``size`` bytes: a title of ``x`` filling it."""
    empty = with_title(b'""')
    return with_title(b'"' + b"x" * (size - len(empty)) + b'"')


def deep(depth: int) -> bytes:
    """``rawInput`` nested ``depth`` arrays deep."""
    return update("deep", title="deep", rawInput=0).replace(
        b'"rawInput":0', b'"rawInput":' + b"[" * depth + b"]" * depth
    )


INVALID_UTF8 = with_title(b'"bad \xff byte"')
RAW_SURROGATE = with_title(b'"raw \xed\xa0\x80 surrogate"')  # UTF-8 of U+D800: invalid UTF-8
ESCAPED_SURROGATE = with_title(b'"lone \\ud800 surrogate"')
NAN = update("bad", rawInput=0).replace(b'"rawInput":0', b'"rawInput":NaN')
INFINITY = update("bad", rawInput=0).replace(b'"rawInput":0', b'"rawInput":-Infinity')
DUPLICATE = update("dup", title="first", status="completed").replace(
    b'"title":"first"', b'"title":"first","title":"second"'
)


def location_line(line: int) -> bytes:
    """A call ``loc`` whose first location has ``line`` (the second one has line 2)."""
    where = [{"path": "/big", "line": line}, {"path": "/ok", "line": 2}]
    return update("loc", title="loc", status="completed", locations=where)


TERMINAL_CALL = update(
    "run", title="run", status="completed", content=[{"type": "terminal", "terminalId": "t"}]
)


def output_chunk(data: str, terminal_id: str = "t", session_id: str = SID) -> bytes:
    chunk = {"sessionUpdate": "terminal_output_chunk", "terminalId": terminal_id, "data": data}
    return message(chunk, session_id)


BASE64_LINES = [  # "abc", then "a" without its padding, then "def"
    TERMINAL_CALL,
    output_chunk("YWJj"),
    output_chunk("YQ"),
    output_chunk("ZGVm"),
]

_CALL = update("call_IDX", title="call IDX", kind="read", status="completed").replace(b"IDX", b"%d")


def ids(count: int) -> Iterator[bytes]:
    """``count`` distinct tool-call ids in one session, every tenth left open."""
    for i in range(count):
        line = _CALL % (i, i)
        yield line.replace(b'"completed"', b'"in_progress"') if i % 10 == 0 else line


STREAM_START = update("stream", title="stream", status="in_progress")
STREAM_END = update("stream", status="completed")
_CHUNK = message(
    {
        "sessionUpdate": "tool_call_content_chunk",
        "toolCallId": "stream",
        "content": {"type": "content", "content": {"type": "text", "text": "NUMBER"}},
    }
).replace(b"NUMBER", b"%d")


def chunks(count: int) -> Iterator[bytes]:
    """One call ``stream``: opened, ``count`` text chunks ("0", "1", ...), completed."""
    yield STREAM_START
    for i in range(count):
        yield _CHUNK % i
    yield STREAM_END


def permission(options: int, request_id: int = 1, tool_call_id: str = "edit") -> bytes:
    """A permission request with ``options`` allow options about call ``tool_call_id``."""
    body = {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "session/request_permission",
        "params": {
            "sessionId": SID,
            "title": "Allow?",
            "subject": {
                "type": "tool_call",
                "toolCall": {"toolCallId": tool_call_id, "title": "Edit a file", "kind": "edit"},
            },
            "options": [
                {"optionId": f"o{i}", "name": f"option {i}", "kind": "allow_once"}
                for i in range(options)
            ],
        },
    }
    return json.dumps(body, separators=(",", ":")).encode()


def framed(lines: Iterable[bytes]) -> Iterator[bytes]:
    yield BEFORE
    yield from lines
    yield AFTER


class LazyStream(io.RawIOBase):
    """A read-only binary stream of ``pieces`` (bytes), produced as they are read: a log of
    any size costs the test what one piece costs. ``produced`` counts the bytes handed out."""

    def __init__(self, pieces: Iterable[bytes]) -> None:
        self._pieces = iter(pieces)
        self._rest = memoryview(b"")
        self.produced = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if not self._rest:
            self._rest = memoryview(next(self._pieces, b""))
        size = min(len(buffer), len(self._rest))
        buffer[:size] = self._rest[:size]
        self._rest = self._rest[size:]
        self.produced += size
        return size


def jsonl(lines: Iterable[bytes]) -> Iterator[bytes]:
    """Lines as JSON Lines pieces, grouped into blocks of about 1 MiB."""
    block = bytearray()
    for line in lines:
        block += line + b"\n"
        if len(block) >= MiB:
            yield bytes(block)
            block.clear()
    if block:
        yield bytes(block)


def lazy_log(lines: Iterable[bytes]) -> io.BufferedReader:
    """``lines`` as a buffered binary stream of JSON Lines, generated while it is read."""
    return io.BufferedReader(LazyStream(jsonl(lines)), buffer_size=64 * 1024)


def endless_line(total: int, piece: int = MiB) -> Iterator[bytes]:
    """``total`` bytes of one line without a newline (``total=0``: never ends)."""
    block = b"x" * piece
    sent = 0
    while total == 0 or sent < total:
        yield block
        sent += len(block)
