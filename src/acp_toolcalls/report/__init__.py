"""The data and the page of ``acp-toolcalls inspect``: a log's tool calls over time, as HTML.

Rules this package owns (issue 20):

- The history is computed here, in Python, from ``ToolCallStore``'s events, the ``validate``
  findings and the bridges' conversion losses; the page only renders and filters it (there is
  no second reducer in JavaScript).
- The core is sans-I/O: ``model.ReportBuilder`` is fed numbered lines and returns plain JSON
  values; ``page.render_page`` turns them into one self-contained HTML document (no network,
  scripts and styles inline). Only ``acp_toolcalls.cli.inspect`` reads and writes files.

- ``Replayer`` (``_replayer``) is the replay pipeline without I/O, shared with ``acp-toolcalls
  replay``: both read a log, and report its lines, the same way. This package never imports the
  cli package's command modules.

Modules: ``captures`` (the log formats read: plain, ``bridge --log``, wrapped captures; D43),
``_replayer`` (lines applied to a store, with diagnostics), ``_json`` (JSON kept as JSON),
``_wording`` (how a line's problems are said, shared with the commands), ``terminal_output``
(a terminal's text as it grows), ``history`` (one side's calls and terminals, entry by entry),
``asks`` (permission requests, their answers and their audit), ``latency`` (each
request's time to its response, per method and side), ``model`` (the whole log: sides, findings,
losses, summary), ``page`` (the HTML, with ``assets/``), ``live`` (the report of a log as it
grows, for ``inspect --serve``: the same fold, events of what changed, bounded in bytes).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._wording import overlong, printable, unreadable

if TYPE_CHECKING:
    from ._replayer import Replayer

__all__ = ["Replayer", "overlong", "printable", "unreadable"]


if not TYPE_CHECKING:  # type checkers read the import above
    from .._lazy import exports

    # `Replayer` on first use: the commands that only word lines do not load the store.
    __getattr__, __dir__ = exports(__name__, {"_replayer": ("Replayer",)})
