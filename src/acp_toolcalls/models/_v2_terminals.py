"""v2 terminals: agent-owned display terminals and their output.

Rules this module owns (D46 (terminals)):

- ``terminal_update`` is an upsert keyed by ``terminalId``; its ``output`` replaces all stored
  bytes, ``terminal_output_chunk`` appends independently base64-encoded bytes. Its ``_meta``
  patches by top-level key.
- A terminal ``output`` whose ``data`` is not valid base64 is an invalid value (D22): read as
  omitted, with a diagnostic (``TerminalOutput`` checks it; ``InvalidValue``).
- An exit status marks the terminal exited, even as ``{}``; a ``null`` inside reads as omitted
  (T5). Sizes are 1..65535.
"""

from __future__ import annotations

from msgspec import UNSET

from ._fields import Int64, Lenient, MetaField, Struct, UInt16Min1, meta_field, null_is_omitted
from ._wire import InvalidValue, base64_bytes

__all__ = [
    "TerminalCancelCapabilities",
    "TerminalCapabilities",
    "TerminalExitStatus",
    "TerminalOutput",
    "TerminalOutputChunk",
    "TerminalSize",
    "TerminalUpdate",
]


class TerminalOutput(Struct, kw_only=True):
    """Replacement output bytes, base64 (checked: anything else is an invalid value, D22)."""

    data: str
    meta: MetaField = meta_field()

    def __post_init__(self) -> None:
        if base64_bytes(self.data) is None:
            raise InvalidValue("data", "not valid base64 (padded, no characters outside it)")


class TerminalExitStatus(Struct, kw_only=True):
    """Presence marks the terminal exited, even as ``{}``; a ``null`` inside reads as omitted
    (T5)."""

    exit_code: Lenient[Int64] = UNSET
    signal: Lenient[str] = UNSET
    meta: MetaField = meta_field()

    def __post_init__(self) -> None:
        null_is_omitted(self, ("exit_code", "signal", "meta"))


class TerminalSize(Struct, kw_only=True):
    """Columns and rows, each 1..65535."""

    cols: UInt16Min1
    rows: UInt16Min1
    meta: MetaField = meta_field()


class TerminalCancelCapabilities(Struct, kw_only=True):
    """Presence (even ``{}``) advertises ``terminal/cancel``."""

    meta: MetaField = meta_field()


class TerminalCapabilities(Struct, kw_only=True):
    """Client-initiated controls of a terminal."""

    cancel: Lenient[TerminalCancelCapabilities] = UNSET
    meta: MetaField = meta_field()


class TerminalUpdate(Struct, kw_only=True, tag_field="sessionUpdate", tag="terminal_update"):
    """Upsert of an agent-owned display terminal; ``output`` replaces all stored bytes."""

    terminal_id: str
    command: Lenient[str] = UNSET
    cwd: Lenient[str] = UNSET
    output: Lenient[TerminalOutput] = UNSET
    exit_status: Lenient[TerminalExitStatus] = UNSET
    size: Lenient[TerminalSize] = UNSET
    capabilities: Lenient[TerminalCapabilities] = UNSET
    meta: MetaField = meta_field()


class TerminalOutputChunk(
    Struct, kw_only=True, tag_field="sessionUpdate", tag="terminal_output_chunk"
):
    """Appends independently base64-encoded bytes to a terminal."""

    terminal_id: str
    data: str
    meta: MetaField = meta_field()
