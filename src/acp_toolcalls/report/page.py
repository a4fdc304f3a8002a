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
  dropped once packed. The page is pieces to write one after the other (``page_chunks``),
  each made when the one before is taken: no copy of the whole document is built, nor held
  in pieces (``main``, which names the other parts, comes last).
- Parts are compressed at ``COMPRESS_LEVEL``: at 6 the compression was a quarter of the
  command's time for 15% less output.
- The output is reproducible: the same log gives the same bytes (no time stamps).
- ``live_page``: the same page in live mode (``inspect --serve``, issue 31): no data parts;
  ``live.js`` (after the other scripts) reads the snapshot and the events from the page's own
  server, with the token of the page's URL; the policy lets it connect to that server only
  (``connect-src 'self'``), and nothing else changes: the static page stays byte for byte.
"""

from __future__ import annotations

import base64
import gzip
import html
from collections.abc import Callable, Iterable, Iterator
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
    "live_page",
    "page_chunks",
    "render_page",
]

PART_BYTES = 256 * 1024
"""About this much JSON of call or terminal details goes into one part."""
LINES_PER_PART = 2_000
"""Lines of the log per part."""
COMPRESS_LEVEL = 3
"""gzip level of the parts."""
SCRIPTS = ("report.js", "content.js", "list.js", "views.js")
"""The page's scripts, inlined in this order."""
_STATIC_POLICY = "default-src 'none';"
_LIVE_POLICY = "default-src 'none'; connect-src 'self';"

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
    """Names the parts of the page in order (``p0``, ``p1``, ...); the JSON ``add``ed is
    compressed ``COMPRESS_AT_ONCE`` parts at a time by ``compress`` (so a caller may compress
    them at once), and handed back compressed, to be written and dropped."""

    def __init__(self, compress: Compress) -> None:
        self.count = 0
        self._compress = compress
        self._names: list[str] = []  # of the last parts, whose JSON is not compressed yet
        self._waiting: list[bytes] = []

    def name(self) -> str:
        """The next part's name."""
        self.count += 1
        return f"p{self.count - 1}"

    def add(self, value: Any) -> tuple[str, list[tuple[str, str]]]:
        """The part's name, and the parts compressed now (``flush``)."""
        name = self.name()
        self._names.append(name)
        self._waiting.append(_encode.encode(value))
        return name, self.flush() if len(self._waiting) == COMPRESS_AT_ONCE else []

    def flush(self) -> list[tuple[str, str]]:
        """The parts waiting, compressed: ``(name, base64)``."""
        if not self._waiting:
            return []
        packed = zip(self._names, self._compress(self._waiting), strict=True)
        done = [(name, _base64(data)) for name, data in packed]
        self._names, self._waiting = [], []
        return done


def _split_details(holders: list[dict[str, Any]], parts: _Parts) -> Iterator[tuple[str, str]]:
    """Move each holder's ``details`` into parts of about ``PART_BYTES``; the holder keeps
    ``part`` (the id) and ``at`` (its position in that part's list). Yields the parts
    compressed meanwhile."""
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
            yield from _flush(batch, waiting, parts)
            batch, waiting, size = [], [], 0
    if batch:
        yield from _flush(batch, waiting, parts)


def _flush(batch: list[Any], waiting: list[dict[str, Any]], parts: _Parts) -> list[tuple[str, str]]:
    name, done = parts.add(batch)
    for holder in waiting:
        holder["part"] = name
    return done


def page_chunks(report: dict[str, Any], compress: Compress = compress_each) -> Iterator[str]:
    """The HTML document of ``model.ReportBuilder.finish()``'s data (which it takes apart),
    in pieces to write one after the other, each made when the one before is taken: the
    details' parts, the lines' parts, then ``main``, which names them (the page finds a part
    by its name, wherever it is). ``report["lines"]``: ``LinePacker.parts()``. ``compress``:
    how the parts' JSON is compressed (the command compresses several at once in threads)."""
    page = _asset("report.html")
    page = page.replace("{{title}}", html.escape(f"inspect: {report['name']}"))
    page = page.replace("/*{{style}}*/", _asset("report.css"))
    page = page.replace("/*{{script}}*/", "\n".join(_asset(name) for name in SCRIPTS))
    head, tail = page.split("<!--{{data}}-->")
    yield head
    parts = _Parts(compress)
    for holders in [*report["calls"], *(side["terminals"] for side in report["sides"])]:
        yield from _elements(_split_details(holders, parts))
    yield from _elements(parts.flush())
    report["linesPerPart"] = LINES_PER_PART
    line_parts: list[tuple[str, str]] = []
    for packed in report.pop("lines"):
        line_parts.append((parts.name(), packed))
    report["lineParts"] = [name for name, _ in line_parts]
    yield from _elements(line_parts)
    yield from _elements([("main", _packed(report))])
    yield tail


def _elements(done: Iterable[tuple[str, str]]) -> Iterator[str]:
    """Each part's ``<script>`` element, in pieces, each on a line of its own."""
    for name, data in done:
        yield f'\n<script type="application/x-acp-report" id="{name}">'
        yield data
        yield "</script>"


def live_page(name: str) -> str:
    """The page of a live report (``inspect --serve``): its data comes from its server."""
    page = _asset("report.html")
    assert _STATIC_POLICY in page
    page = page.replace(_STATIC_POLICY, _LIVE_POLICY)
    page = page.replace("{{title}}", html.escape(f"inspect (live): {name}"))
    page = page.replace("/*{{style}}*/", _asset("report.css") + _asset("live.css"))
    scripts = [_asset(script) for script in (*SCRIPTS, "live.js")]
    page = page.replace("/*{{script}}*/", "\n".join(scripts))
    return page.replace("<!--{{data}}-->", "")


def render_page(report: dict[str, Any]) -> str:
    """The whole HTML document of ``page_chunks``, as one string."""
    return "".join(page_chunks(report))
