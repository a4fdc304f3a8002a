"""v2 ``session/update``: the update union, its notification and message, background work.

Rules this module owns (D46 (schema markers to field leniency, v2 updates, state updates)):

- ``session/update`` updates other than the four tool-call and terminal ones are carried as
  ``OpaqueSessionUpdate``: untouched values, written back as received.
- ``background_work`` reads a ``state_update``'s ``background`` list (D46 (state updates)): one bad
  element makes the whole list "not reported".
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal, Union

from ._fields import MetaField, Struct, meta_field
from ._v2_terminals import TerminalOutputChunk, TerminalUpdate
from ._v2_tool_calls import SessionToolCallUpdate, ToolCallContentChunk
from ._wire import Open, UnknownVariant

__all__ = [
    "OpaqueSessionUpdate",
    "SessionUpdate",
    "SessionUpdateMessage",
    "UpdateSessionNotification",
    "background_work",
]


class OpaqueSessionUpdate(UnknownVariant):
    """Any other ``session/update`` (messages, plans, state, unknown ones), kept untouched."""

    tag_field: ClassVar[str] = "sessionUpdate"


if TYPE_CHECKING:
    SessionUpdate = Union[
        SessionToolCallUpdate,
        ToolCallContentChunk,
        TerminalUpdate,
        TerminalOutputChunk,
        OpaqueSessionUpdate,
    ]
else:
    SessionUpdate = Annotated[
        SessionToolCallUpdate | ToolCallContentChunk | TerminalUpdate | TerminalOutputChunk,
        Open(OpaqueSessionUpdate),
    ]


def background_work(update: Mapping[str, Any]) -> tuple[frozenset[str], frozenset[str]] | None:
    """The tool-call ids and terminal ids that a ``state_update`` (as received) lists as
    background work, or ``None`` when it reports none: ``background`` omitted, ``null`` or
    malformed (D46 (state updates): one bad element makes the whole list "not reported"). An item of
    an unknown type is well-formed work that names nothing here."""
    items = update.get("background")
    if not isinstance(items, list):
        return None
    calls: set[str] = set()
    terminals: set[str] = set()
    for item in items:
        kind = item.get("type") if isinstance(item, dict) else None
        if not isinstance(kind, str):
            return None
        held = _BACKGROUND_IDS.get(kind)
        if held is not None:
            value = item.get(held[0])
            if not isinstance(value, str):
                return None
            (calls if held[1] else terminals).add(value)
    return frozenset(calls), frozenset(terminals)


_BACKGROUND_IDS: Mapping[str, tuple[str, bool]] = {
    "tool_call": ("toolCallId", True),
    "terminal": ("terminalId", False),
}
"""Known background item types: the key of the id each carries, and whether it is a call's."""


class UpdateSessionNotification(Struct, kw_only=True):
    """Params of ``session/update``."""

    session_id: str
    update: SessionUpdate
    meta: MetaField = meta_field()


class SessionUpdateMessage(Struct, kw_only=True, tag_field="method", tag="session/update"):
    """A JSON-RPC ``session/update`` notification."""

    jsonrpc: Literal["2.0"] = "2.0"
    params: UpdateSessionNotification
