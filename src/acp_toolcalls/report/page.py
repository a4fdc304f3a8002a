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
- The output is reproducible: the same log gives the same bytes (no time stamps).
"""

from __future__ import annotations

import base64
import gzip
import html
from collections.abc import Iterator
from importlib import resources
from typing import Any

import msgspec

__all__ = ["LINES_PER_PART", "PART_BYTES", "render_page"]

PART_BYTES = 256 * 1024
"""About this much JSON of call or terminal details goes into one part."""
LINES_PER_PART = 2_000
"""Lines of the log per part."""
SCRIPTS = ("report.js", "content.js", "list.js")
"""The page's scripts, inlined in this order."""

_encode = msgspec.json.Encoder()


def _asset(name: str) -> str:
    return (resources.files(__package__) / "assets" / name).read_text(encoding="utf-8")


def _packed(value: Any) -> str:
    return base64.b64encode(gzip.compress(_encode.encode(value), 6, mtime=0)).decode("ascii")


class _Parts:
    """The parts of the page, in order; ``add`` returns a part's id."""

    def __init__(self) -> None:
        self.parts: list[tuple[str, str]] = []

    def add(self, value: Any) -> str:
        name = f"p{len(self.parts)}"
        self.parts.append((name, _packed(value)))
        return name


def _split_details(holders: list[dict[str, Any]], parts: _Parts) -> None:
    """Move each holder's ``details`` into parts of about ``PART_BYTES``; the holder keeps
    ``part`` (the id) and ``at`` (its position in that part's list)."""
    batch: list[Any] = []
    waiting: list[dict[str, Any]] = []
    size = 0
    for holder in holders:
        details = holder.pop("details")
        holder["at"] = len(batch)
        batch.append(details)
        waiting.append(holder)
        size += len(_encode.encode(details))
        if size >= PART_BYTES:
            _flush(batch, waiting, parts)
            batch, waiting, size = [], [], 0
    if batch:
        _flush(batch, waiting, parts)


def _flush(batch: list[Any], waiting: list[dict[str, Any]], parts: _Parts) -> None:
    name = parts.add(batch)
    for holder in waiting:
        holder["part"] = name


def _line_parts(lines: list[str], parts: _Parts) -> Iterator[str]:
    for start in range(0, len(lines), LINES_PER_PART):
        yield parts.add(lines[start : start + LINES_PER_PART])


def render_page(report: dict[str, Any]) -> str:
    """The HTML document of ``model.ReportBuilder.finish()``'s data (which it takes apart)."""
    parts = _Parts()
    for calls in report["calls"]:
        _split_details(calls, parts)
    for side in report["sides"]:
        _split_details(side["terminals"], parts)
    lines = report.pop("lines")
    report["lineCount"] = len(lines)
    report["linesPerPart"] = LINES_PER_PART
    report["lineParts"] = list(_line_parts(lines, parts))
    blobs = "\n".join(
        f'<script type="application/x-acp-report" id="{name}">{data}</script>'
        for name, data in [("main", _packed(report)), *parts.parts]
    )
    page = _asset("report.html")
    page = page.replace("{{title}}", html.escape(f"inspect: {report['name']}"))
    page = page.replace("/*{{style}}*/", _asset("report.css"))
    page = page.replace("/*{{script}}*/", "\n".join(_asset(name) for name in SCRIPTS))
    return page.replace("<!--{{data}}-->", blobs)
