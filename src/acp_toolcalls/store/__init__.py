"""The client-side tool-call store (``ToolCallStore``), its stored state and its limits.

Rules this package owns (D46 (tool-call update, upsert to terminals, client store and v1 store);
decisions D1-D4, D9-D11, D13-D18, D20, D22, D23, D32, D33, D35): everything that changes stored
tool-call or terminal state, and what a UI reads of it. Each rule lives in one private module:

- ``_reducer``: ``ToolCallStore``, how each message reaches the rules below (dispatch tables,
  batches, the ``initialize`` negotiation), and the inline hot path of a content chunk.
- ``_version``: ``version=`` (``"v1"``, ``"v2"``, ``"auto"``, 1, 2).
- ``_sessions``: ``StoreState``, the one state every part works on (sessions, the current
  one, byte counts, titles, limits); eviction by count.
- ``_tool_calls``: ``ToolCalls``: upsert, patches and chunks of tool calls; the client's own
  conclusions.
- ``_terminals``: ``Terminals``: terminal updates and output chunks.
- ``_v1``: ``V1Input``: v1 input mapped to v2 patches; v1 strings kept to be sent on.
- ``_budgets``: ``Budgets``: every value measured as stored; the byte and count caps and
  their cuts.
- ``_patch``: the patch rules of one update's fields and of ``_meta``.
- ``_state``: the stored state of calls, terminals and sessions; the view of a call.
- ``_view``: reading (functions of the sessions): snapshots, views, the ``replay --json``
  document.
- ``_limits``: how a cap cuts; ``_sizes``: ``size_of``.
- ``_structs``: ``Limits`` and ``ToolCallView``, not compiled (mypyc's annotations of a
  Struct are not msgspec's).

``ToolCallStore`` holds one ``StoreState`` and its parts, each holding that state (and the
parts it calls): composition, not a chain of base classes.

``ToolCallStore`` is imported on first use (it needs the codec and the v1 mapping); the state,
limits and sizes are light. ``trim_block`` and ``COLLECTION_FIELDS`` are shared with the
bridges, the proxy and the report.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..models import KIND_LABELS
from ._limits import omitted, trim_block
from ._patch import patch_meta
from ._sizes import size_of
from ._state import (
    COLLECTION_FIELDS,
    SessionState,
    TerminalState,
    ToolCallState,
    view_of,
)
from ._structs import Limits, ToolCallView

if TYPE_CHECKING:
    from ._reducer import ToolCallStore

__all__ = [
    "COLLECTION_FIELDS",
    "KIND_LABELS",
    "Limits",
    "SessionState",
    "TerminalState",
    "ToolCallState",
    "ToolCallStore",
    "ToolCallView",
    "omitted",
    "patch_meta",
    "size_of",
    "trim_block",
    "view_of",
]


if not TYPE_CHECKING:  # type checkers read the import above
    from .._lazy import exports

    __getattr__, __dir__ = exports(__name__, {"_reducer": ("ToolCallStore",)})
