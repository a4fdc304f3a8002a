"""Reading a side's input: whole lines, with a limit, in the reads they came in.

Rules this module owns: lines are read with a limit: a longer line is reported and skipped,
never held in memory whole; it is not fatal. Its top-level ``id`` and whether it has a
``method`` are read as its bytes stream by (``_Head``, a few counters and at most
``_MAX_ID`` bytes of the id), so that the core can answer it (a request waits for one). A
reader holds at most ``2 * _READ_AHEAD`` bytes it was not asked for yet, so a side that is not
read costs that, not twice the line limit. A stdin that cannot be polled (a file,
``/dev/null``) is read in chunks (``_FileFeed``); a closed stdin is read as an empty one.
"""

from __future__ import annotations

import asyncio
import os
import re
import stat
from collections.abc import AsyncIterator
from typing import Any

import msgspec
from msgspec import UNSET

_READ_CHUNK = 1 << 16
_READ_AHEAD = 1 << 18  # a reader pauses its pipe past twice this, whatever the line limit


def _pattern(possessive: bytes, plain: bytes) -> re.Pattern[bytes]:
    """``possessive`` where ``re`` has possessive quantifiers (Python 3.11): one match keeps
    no backtracking state per repetition; else ``plain`` (the same matches)."""
    try:
        return re.compile(possessive, re.DOTALL)
    except re.error:  # pragma: no cover - Python 3.10
        return re.compile(plain, re.DOTALL)


_OUTSIDE = re.compile(rb'["{}\[\],:]')  # at the top level: what changes the scanner's state
# In a string: up to its closing quote (or a lone backslash, the last byte read).
_STRING_REST_PATTERNS = (rb'[^"\\]*+(?:\\.[^"\\]*+)*+', rb'[^"\\]*(?:\\.[^"\\]*)*')
_STRING_REST = _pattern(*_STRING_REST_PATTERNS)
# Deeper than the top level: everything but brackets, whole strings included, in one match.
_NESTED_PATTERNS = (
    rb'[^"\[\]{}]*+(?:"[^"\\]*+(?:\\.[^"\\]*+)*+"[^"\[\]{}]*+)*+',
    rb'[^"\[\]{}]*(?:"[^"\\]*(?:\\.[^"\\]*)*"[^"\[\]{}]*)*',
)
_NESTED = _pattern(*_NESTED_PATTERNS)
_MAX_KEY = 8  # a top-level key longer than this is none the scanner looks for
_MAX_ID = 1024  # an id longer than this (as JSON) is not read: the line cannot be answered
_WANTED = (b"method", b"result", b"error")


class Oversized:
    """A line over the limit, skipped: its size, its top-level ``id`` (``UNSET``: none, or
    none that could be read) and whether it has a top-level ``method``."""

    __slots__ = ("has_method", "request_id", "size")

    def __init__(self, size: int, request_id: Any = UNSET, has_method: bool = False) -> None:
        self.size = size
        self.request_id = request_id
        self.has_method = has_method

    def __repr__(self) -> str:
        return f"Oversized({self.size}, {self.request_id!r}, {self.has_method})"


class _Head:
    """Reads a JSON-RPC line's top-level ``id`` and keys as its bytes stream by, holding no
    more than ``_MAX_KEY`` bytes of a key and ``_MAX_ID`` of the id: strings are skipped to
    their closing quote (``bytes.find``), nested values by counting brackets. It stops
    reading once it knows the id and whether the line is a request or an answer."""

    def __init__(self) -> None:
        self.depth = 0
        self.in_string = False
        self.escaped = False  # the last byte read, in a string, was an unpaired backslash
        self.kept: bytearray | None = None  # the top-level key or id being read
        self.kept_is_id = False
        self.expect_key = False
        self.key: bytes | None = None  # the last top-level key read
        self.id_value: bytearray | None = None  # after `"id":`, until its end
        self.id_token: bytes | None = None
        self.seen: set[bytes] = set()
        self.done = False

    def result(self, size: int) -> Oversized:
        request_id: Any = UNSET
        if self.id_token is not None:
            try:
                request_id = msgspec.json.decode(self.id_token)
            except msgspec.DecodeError:
                request_id = UNSET
        return Oversized(size, request_id, b"method" in self.seen)

    def feed(self, data: bytes) -> None:
        position, end = 0, len(data)
        while position < end and not self.done:
            if self.in_string:
                position = self._string(data, position)
            elif self.depth > 1:  # nested: brackets counted, strings skipped, at C speed
                position = _NESTED.match(data, position).end()  # type: ignore[union-attr]
                if position < end:
                    mark = data[position]
                    position += 1
                    if mark == 34:  # a string the read ends in
                        self.in_string = True
                    else:
                        self.depth += 1 if mark in (123, 91) else -1
            else:
                found = _OUTSIDE.search(data, position)
                stop = end if found is None else found.start()
                if self.id_value is not None:  # a scalar id, or what comes before the id's value
                    self._keep_id(data[position:stop])
                if found is None:
                    return
                position = stop + 1
                self._mark(data[stop])

    def _mark(self, mark: int) -> None:
        depth = self.depth
        if mark == 34:  # '"'
            self.in_string = True
            if depth == 1 and self.expect_key:
                self.kept, self.kept_is_id = bytearray(), False
            elif self.id_value is not None and not self.id_value.strip():
                self.kept, self.kept_is_id, self.id_value = bytearray(b'"'), True, None
            return
        if mark in (123, 91):  # '{' '['
            if self.id_value is not None:  # an id that is an object or an array
                self.id_value = None
            self.depth = depth + 1
            if depth == 0:
                self.expect_key = mark == 123
                self.done = mark != 123  # a batch: nothing to answer here
            return
        if depth != 1:
            if mark in (125, 93):  # '}' ']'
                self.depth = depth - 1
            return
        if self.id_value is not None:  # the end of a scalar id
            token = bytes(self.id_value).strip()
            self.id_value = None
            if token:
                self.id_token = token
                self._check_done()
        if mark in (125, 93):
            self.depth = 0
            self.done = True
        elif mark == 44:  # ','
            self.expect_key = True
        elif mark == 58:  # ':'
            key, self.key = self.key, None
            if key == b"id":
                self.id_value = bytearray()
            elif key in _WANTED:
                self.seen.add(key)
                self._check_done()

    def _keep_id(self, data: bytes) -> None:
        assert self.id_value is not None
        if len(self.id_value) + len(data) > _MAX_ID:
            self.id_value = None  # too long to answer with
        else:
            self.id_value += data

    def _string(self, data: bytes, position: int) -> int:
        """Read on in a string from ``position``: where it ends (past its quote), or the end of
        ``data``."""
        start = position
        if self.escaped:  # the byte here is escaped
            self.escaped = False
            position += 1
        stop = _STRING_REST.match(data, position).end()  # type: ignore[union-attr]
        if stop < len(data) and data[stop] == 34:  # the closing quote
            if self.kept is not None:
                self._keep(data[start:stop])
            self._string_done()
            return stop + 1
        self.escaped = stop < len(data)  # the read ends in a lone backslash
        if self.kept is not None:
            self._keep(data[start:])
        return len(data)

    def _keep(self, data: bytes) -> None:
        kept = self.kept
        if kept is None:
            return
        if len(kept) + len(data) > (_MAX_ID if self.kept_is_id else _MAX_KEY):
            self.kept = None
            if not self.kept_is_id:
                self.expect_key = False  # a long key, none of ours
            return
        kept += data

    def _string_done(self) -> None:
        self.in_string = False
        kept, self.kept = self.kept, None
        if self.depth == 1 and self.expect_key:
            self.key = bytes(kept) if kept is not None else None
            self.expect_key = False
        elif kept is not None and self.kept_is_id:
            self.id_token = bytes(kept) + b'"'
            self._check_done()

    def _check_done(self) -> None:
        if self.id_token is not None and self.seen:
            self.done = True


async def _batches(
    reader: asyncio.StreamReader, max_bytes: int
) -> AsyncIterator[list[bytes | Oversized]]:
    """The lines of each read, in order, without their newline (blank lines left out); an
    ``Oversized`` is a line over ``max_bytes``, skipped (its bytes are discarded as they
    arrive, once ``_Head`` has read what it reads of them). A line is put together here from
    as many reads as it takes, so the reader never holds more than twice its limit of what
    was not asked for yet. A read error ends the stream."""
    pieces: list[bytes] = []  # the start of a line whose end has not been read yet
    held = 0  # their bytes
    skipping = 0  # the bytes so far of a line over max_bytes
    head = _Head()  # what is read of the line being skipped
    while True:
        try:
            data = await reader.read(_READ_CHUNK)
        except OSError:
            return
        if not data:  # EOF: the last line may have no newline
            if skipping or held > max_bytes:
                for piece in pieces:
                    head.feed(piece)
                yield [head.result(skipping + held)]
            elif held:
                whole = b"".join(pieces)
                if not whole.isspace():
                    yield [whole.rstrip(b"\r")]
            return
        lines: list[bytes | Oversized] = []
        parts = data.split(b"\n")
        rest = parts.pop()  # after the last newline: the start of the next line
        if parts and (held or skipping):  # the first part ends the line read so far
            size = skipping + held + len(parts[0]) + 1
            if skipping or size - 1 > max_bytes:
                for piece in pieces:
                    head.feed(piece)
                head.feed(parts[0])
                lines.append(head.result(size))
                head = _Head()
                parts[0] = b""
            else:
                pieces.append(parts[0])
                parts[0] = b"".join(pieces)
            pieces, held, skipping = [], 0, 0
        for line in parts:
            if len(line) > max_bytes:
                whole_line = _Head()
                whole_line.feed(line)
                lines.append(whole_line.result(len(line) + 1))
            elif line and not line.isspace():
                lines.append(line.rstrip(b"\r") if line[-1] == 13 else line)
        if rest:
            if skipping:
                head.feed(rest)
                skipping += len(rest)
            elif held + len(rest) > max_bytes:
                for piece in pieces:
                    head.feed(piece)
                head.feed(rest)
                skipping, pieces, held = held + len(rest), [], 0
            else:
                pieces.append(rest)
                held += len(rest)
        if lines:
            yield lines


class _FileFeed:
    """Reads a descriptor that cannot be polled (a regular file, ``/dev/null``) into a
    ``StreamReader`` in chunks, pausing when the reader asks (its transport)."""

    def __init__(self, reader: asyncio.StreamReader, fd: int) -> None:
        self.reader = reader
        self.fd = fd
        self.go = asyncio.Event()
        self.go.set()
        reader.set_transport(self)  # type: ignore[arg-type]

    def pause_reading(self) -> None:
        self.go.clear()

    def resume_reading(self) -> None:
        self.go.set()

    async def run(self) -> None:
        try:
            while True:
                await self.go.wait()
                data = os.read(self.fd, _READ_CHUNK)
                if not data:
                    break
                self.reader.feed_data(data)
                await asyncio.sleep(0)
        except OSError:
            pass
        self.reader.feed_eof()


def _pollable(fd: int) -> bool:
    mode = os.fstat(fd).st_mode
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or os.isatty(fd)
