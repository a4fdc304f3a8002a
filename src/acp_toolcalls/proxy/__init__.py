"""The proxy behind ``acp-toolcalls bridge``: a sans-I/O connection core and its asyncio edge.

One concept per module (all private; the public names are this package's):

- ``_core``: ``ConnectionBridge``, lines in from either side, lines out; its routing. Built in
  layers: ``_output`` (the outbox, notes, caps, sessions), ``_permissions`` (the bridges'
  output, request ids, permissions, cancels), ``_passthrough``, ``_refusals`` (reading lines,
  bad input), ``_negotiation`` (``initialize``), ``_updates`` (the agent's notifications).
- ``_state``: the negotiation state table (negotiating -> pass-through | converting ->
  closed); ``_policy``: what differs by the versions' pairing, chosen once.
- ``_methods``: the session-lifecycle method tables across versions (``TO_V1``, ``TO_V2``,
  ``SENDERS``, the turn's end, ``Modes``).
- ``_routing`` (exported as ``rpc``): the envelope read, the lines written, request ids.
- ``_traffic``: the ``--log`` records and their redaction.
- ``_stdio`` (with ``_writers``, ``_input``, ``_process``, ``_log``): the asyncio edge;
  ``ProxyConfig``, ``run_proxy`` and ``QUEUE_BYTES`` load it on first use (importing asyncio
  costs every command that does not run the proxy). ``_files``: ``DiskFiles``, the file reader
  the edge gives a v2 -> v1 bridge for diffs (D27 amended), loaded on first use too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import _routing as rpc
from ._core import ConnectionBridge, ConnectionNote, Outbox, Version, VersionOption
from ._methods import (
    CLIENT_OWNED,
    MESSAGE_CHUNKS,
    MESSAGE_UPSERTS,
    MODE_CONFIG_ID,
    MODE_UPDATES,
    MODES_TO_V1,
    MODES_TO_V2,
    NO_V1,
    NO_V2,
    SENDERS,
    TO_V1,
    TO_V2,
    USER_ECHOES,
    V1_STOP_REASONS,
    Mapped,
    MethodMap,
    MethodSender,
    Modes,
    map_params,
    map_result,
    message_chunks,
    prompt_accepted,
    prompt_end_to_v1,
    prompt_error_to_v2,
    prompt_result_to_v2,
    replays_history,
    upsert_as_chunks,
)
from ._traffic import (
    DIRECTIONS,
    REDACTED,
    SIDES,
    Direction,
    LogSide,
    Redactor,
    TrafficRecord,
    is_record,
    log_line,
    one_side,
    read_record,
    skipped_line,
)

if TYPE_CHECKING:
    from ._files import DEFAULT_DISK_DIFF_BYTES, DiskFiles
    from ._stdio import QUEUE_BYTES, ProxyConfig, run_proxy

__all__ = [
    "CLIENT_OWNED",
    "DEFAULT_DISK_DIFF_BYTES",
    "DIRECTIONS",
    "MESSAGE_CHUNKS",
    "MESSAGE_UPSERTS",
    "MODES_TO_V1",
    "MODES_TO_V2",
    "MODE_CONFIG_ID",
    "MODE_UPDATES",
    "NO_V1",
    "NO_V2",
    "QUEUE_BYTES",
    "REDACTED",
    "SENDERS",
    "SIDES",
    "TO_V1",
    "TO_V2",
    "USER_ECHOES",
    "V1_STOP_REASONS",
    "ConnectionBridge",
    "ConnectionNote",
    "Direction",
    "DiskFiles",
    "LogSide",
    "Mapped",
    "MethodMap",
    "MethodSender",
    "Modes",
    "Outbox",
    "ProxyConfig",
    "Redactor",
    "TrafficRecord",
    "Version",
    "VersionOption",
    "is_record",
    "log_line",
    "map_params",
    "map_result",
    "message_chunks",
    "one_side",
    "prompt_accepted",
    "prompt_end_to_v1",
    "prompt_error_to_v2",
    "prompt_result_to_v2",
    "read_record",
    "replays_history",
    "rpc",
    "run_proxy",
    "skipped_line",
    "upsert_as_chunks",
]

if not TYPE_CHECKING:  # type checkers read the import above
    from .._lazy import exports

    # The asyncio edge, loaded on first use: importing the package loads no asyncio.
    __getattr__, __dir__ = exports(
        __name__,
        {
            "_files": ("DEFAULT_DISK_DIFF_BYTES", "DiskFiles"),
            "_stdio": ("ProxyConfig", "QUEUE_BYTES", "run_proxy"),
        },
    )
