"""The ``--log`` records of ``acp-toolcalls bridge``: written by the proxy, read back by the rest.

Below the proxy: the proxy's edge writes a record of every line (``log_line``, ``skipped_line``,
``Redactor``), and ``report``, ``replay``, ``validate``, ``convert`` and ``inspect`` read a log
back (``is_record``, ``read_record``, one side of it with ``one_side``, the directions of each
side, ``SIDES``). The format and its redaction rules are ``_traffic``'s (one module).
"""

from __future__ import annotations

from ._traffic import (
    DIRECTIONS,
    REDACTED,
    SIDES,
    Direction,
    Redactor,
    Side,
    TrafficRecord,
    is_record,
    log_line,
    one_side,
    read_record,
    skipped_line,
)

__all__ = [
    "DIRECTIONS",
    "REDACTED",
    "SIDES",
    "Direction",
    "Redactor",
    "Side",
    "TrafficRecord",
    "is_record",
    "log_line",
    "one_side",
    "read_record",
    "skipped_line",
]
