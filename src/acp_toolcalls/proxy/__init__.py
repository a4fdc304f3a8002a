"""The proxy behind ``acp-toolcalls bridge``: a sans-I/O connection core and its asyncio edge.

One concept per module (all private; the public names are this package's):

- ``_core``: ``ConnectionCore``, lines in from either side, lines out, and its routing; no
  base class. Its components: ``_negotiation.Negotiation`` (``initialize``, the state and
  policy it decides; ``_held.HeldLines``), ``_refusals.LineReader`` (reading lines, bad
  input), ``_output.Output`` (the outbox, notes, caps' notes; ``FlushDeadline``),
  ``_sessions``, ``_passthrough.PassThroughLines``, ``_permissions.BridgeOutput`` (the
  bridges' output, request ids, permissions, cancels); ``_updates``: the agent's
  notifications, functions over the core and its policy.
- ``_state``: the negotiation state table (negotiating -> pass-through | converting ->
  closed); ``_policy``: what differs by the versions' pairing, chosen once; ``_sessions``:
  the sessions the core keeps, and what a policy asks of the core (``Core``).
- ``_routing`` (exported as ``rpc``): the envelope read, request ids.
- ``_stdio`` (with ``_writers``, ``_input``, ``_process``, ``_log``): the asyncio edge;
  ``run_proxy`` and ``QUEUE_BYTES`` load it on first use (importing asyncio costs every
  command that does not run the proxy); ``_config``: ``ProxyConfig``, what the command asked
  for. ``_files``: ``DiskFiles``, the file reader the edge gives a v2 -> v1 bridge for diffs
  (D27 amended), loaded on first use too.

What the proxy shares with the rest lives below it: the session-lifecycle method tables
across versions and the lines it writes itself in ``acp_toolcalls.lifecycle``, the ``--log``
records and their redaction in ``acp_toolcalls.records``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import _routing as rpc
from ._core import ConnectionCore, ConnectionNote, Outbox, Version, VersionOption

if TYPE_CHECKING:
    from ._config import ProxyConfig
    from ._files import DEFAULT_DISK_DIFF_BYTES, DiskFiles
    from ._stdio import QUEUE_BYTES, run_proxy

__all__ = [
    "DEFAULT_DISK_DIFF_BYTES",
    "QUEUE_BYTES",
    "ConnectionCore",
    "ConnectionNote",
    "DiskFiles",
    "Outbox",
    "ProxyConfig",
    "Version",
    "VersionOption",
    "rpc",
    "run_proxy",
]

if not TYPE_CHECKING:  # type checkers read the import above
    from .._lazy import exports

    # The asyncio edge, loaded on first use: importing the package loads no asyncio.
    __getattr__, __dir__ = exports(
        __name__,
        {
            "_config": ("ProxyConfig",),
            "_files": ("DEFAULT_DISK_DIFF_BYTES", "DiskFiles"),
            "_stdio": ("QUEUE_BYTES", "run_proxy"),
        },
    )
