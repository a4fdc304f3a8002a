"""The report's data as one self-contained HTML page.

Rules this module owns:

- One file that needs nothing else: the page's style and scripts (``assets/``, shipped as
  package data; the scripts ``SCRIPTS`` in order, as one script) are inlined; nothing is
  fetched, there is no server.
- The data is split into parts so that a big log opens at once: ``main`` holds everything
  the first screen needs (summary, findings, the cards' index), and the heavy parts (each
  call's and terminal's history, about ``PART_BYTES`` of JSON per part, and the lines,
  ``LINES_PER_PART`` per part) are parts of their own, which the page reads only when it
  shows them.
- Each part is JSON, gzip-compressed and base64-encoded in a ``<script type="application/
  x-acp-report">`` element: the page inflates it with the browser's ``DecompressionStream``.
  Nothing from the log reaches the HTML as markup (base64 holds no ``<``), and the page puts
  log text into the document as text, never as HTML.
- The lines are packed as they are read (``LinePacker``, used by the model), so a big log
  is held compressed, never as text; the details are packed part by part, each call's
  dropped once packed. The page is a list of pieces to write one after the other
  (``page_chunks``, all made before the first is written): no copy of the whole document is
  built.
- Parts are compressed at ``COMPRESS_LEVEL``: at 6 the compression was a quarter of the
  command's time for 15% less output.
- The output is reproducible: the same log gives the same bytes (no time stamps).
"""

from __future__ import annotations

import base64
import gzip
import html
from collections.abc import Callable
from importlib import resources
from typing import Any

import msgspec

__all__ = [
    "COMPRESS_LEVEL",
    "LINES_PER_PART",
    "PART_BYTES",
    "Compress",
    "LinePacker",
    "compress_each",
    "compress_part",
    "page_chunks",
    "render_page",
]

PART_BYTES = 256 * 1024
"""About this much JSON of call or terminal details goes into one part."""
LINES_PER_PART = 2_000
"""Lines of the log per part."""
COMPRESS_LEVEL = 3
"""gzip level of the parts."""
SCRIPTS = ("report.js", "content.js", "list.js")
"""The page's scripts, inlined in this order."""

_encode = msgspec.json.Encoder()


def _asset(name: str) -> str:
    return (resources.files(__package__) / "assets" / name).read_text(encoding="utf-8")


Compress = Callable[[list[bytes]], list[bytes]]
"""Compresses several parts' JSON (``compress_each`` in order, or the same at once)."""
COMPRESS_AT_ONCE = 8
"""Parts handed to a ``Compress`` at a time."""


def compress_part(data: bytes) -> bytes:
    """One part's JSON, compressed as the page inflates it."""
    return gzip.compress(data, COMPRESS_LEVEL, mtime=0)


def compress_each(parts: list[bytes]) -> list[bytes]:
    """The parts' JSON compressed, one after the other."""
    return [compress_part(data) for data in parts]


def _base64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _packed(value: Any) -> str:
    return _base64(compress_part(_encode.encode(value)))


class LinePacker:
    """The log's lines, packed ``LINES_PER_PART`` at a time as they come."""

    __slots__ = ("_parts", "_waiting", "count")

    def __init__(self) -> None:
        self.count = 0
        self._parts: list[str] = []
        self._waiting: list[str] = []

    def add(self, text: str) -> None:
        """The next line's text."""
        self._waiting.append(text)
        self.count += 1
        if len(self._waiting) == LINES_PER_PART:
            self._parts.append(_packed(self._waiting))
            self._waiting = []

    def parts(self) -> list[str]:
        """Every line, packed: ``LINES_PER_PART`` per part, the last one with the rest."""
        if self._waiting:
            self._parts.append(_packed(self._waiting))
            self._waiting = []
        return self._parts


class _Parts:
    """The parts of the page, in order; ``add`` returns a part's id. Parts are compressed
    ``COMPRESS_AT_ONCE`` at a time by ``compress`` (so a caller may compress them at once)."""

    def __init__(self, compress: Compress) -> None:
        self.parts: list[tuple[str, str]] = []
        self._compress = compress
        self._names: list[str] = []  # of the last parts, whose JSON is not compressed yet
        self._waiting: list[bytes] = []

    def add(self, value: Any) -> str:
        name = f"p{len(self.parts) + len(self._names)}"
        self._names.append(name)
        self._waiting.append(_encode.encode(value))
        if len(self._waiting) == COMPRESS_AT_ONCE:
            self.flush()
        return name

    def add_packed(self, packed: str) -> str:
        self.flush()
        name = f"p{len(self.parts)}"
        self.parts.append((name, packed))
        return name

    def flush(self) -> None:
        """Compress the parts waiting."""
        if self._waiting:
            packed = zip(self._names, self._compress(self._waiting), strict=True)
            self.parts += [(name, _base64(data)) for name, data in packed]
            self._names, self._waiting = [], []


def _split_details(holders: list[dict[str, Any]], parts: _Parts) -> None:
    """Move each holder's ``details`` into parts of about ``PART_BYTES``; the holder keeps
    ``part`` (the id) and ``at`` (its position in that part's list)."""
    batch: list[Any] = []
    waiting: list[dict[str, Any]] = []
    size = 0
    for holder in holders:
        details = holder.pop("details").take_details()  # msgspec.Raw
        holder["at"] = len(batch)
        batch.append(details)
        waiting.append(holder)
        size += len(details)  # ``msgspec.Raw``: its JSON's length
        if size >= PART_BYTES:
            _flush(batch, waiting, parts)
            batch, waiting, size = [], [], 0
    if batch:
        _flush(batch, waiting, parts)


def _flush(batch: list[Any], waiting: list[dict[str, Any]], parts: _Parts) -> None:
    name = parts.add(batch)
    for holder in waiting:
        holder["part"] = name


def page_chunks(report: dict[str, Any], compress: Compress = compress_each) -> list[str]:
    """The HTML document of ``model.ReportBuilder.finish()``'s data (which it takes apart),
    in pieces to write one after the other (all made before the first is written).
    ``report["lines"]``: ``LinePacker.parts()``. ``compress``: how the parts' JSON is
    compressed (the command compresses several at once in threads)."""
    parts = _Parts(compress)
    for calls in report["calls"]:
        _split_details(calls, parts)
    for side in report["sides"]:
        _split_details(side["terminals"], parts)
    report["linesPerPart"] = LINES_PER_PART
    parts.flush()
    report["lineParts"] = [parts.add_packed(packed) for packed in report.pop("lines")]
    page = _asset("report.html")
    page = page.replace("{{title}}", html.escape(f"inspect: {report['name']}"))
    page = page.replace("/*{{style}}*/", _asset("report.css"))
    page = page.replace("/*{{script}}*/", "\n".join(_asset(name) for name in SCRIPTS))
    head, tail = page.split("<!--{{data}}-->")
    chunks = [head]
    for number, (name, data) in enumerate([("main", _packed(report)), *parts.parts]):
        chunks.append(
            ("\n" if number else "") + f'<script type="application/x-acp-report" id="{name}">'
        )
        chunks += [data, "</script>"]
    chunks.append(tail)
    return chunks


def render_page(report: dict[str, Any]) -> str:
    """The whole HTML document of ``page_chunks``, as one string."""
    return "".join(page_chunks(report))
