"""Minimal three-state patches: what the client holds for a call, and what changes it.

Rules this module owns (D46 (sender obligations, evidence: null as omitted); D3, D31):

- Each field of a patch is in one of three states: omitted (``UNSET``: unchanged), ``None``
  (clear: sent as ``null`` only if something is there to clear), or a value (sent only when it
  differs from what was sent). There is no way to send a literal JSON ``null`` value (D3).
- Values are compared by their canonical JSON: per item for ``content`` (replaced whole when
  any item differs), per top-level key for ``_meta`` (patched key by key).
- Every value is encoded before anything is recorded: one JSON cannot carry raises
  ``SenderError`` and the record is unchanged.
- A later change of ``name`` is sent, and logged (D31: names should be stable).
"""

from __future__ import annotations

import logging
from typing import Any

from msgspec import UNSET

from .. import v2
from ._senders import WIRE_NAMES, Fields, encoded
from ._throttle import GrowingText

# The logger keeps the name it had before issue 18: logging configurations name it.
logger = logging.getLogger("acp_toolcalls.emit")


class CallRecord:
    """What the client holds for one tool call, as the emitter sent it."""

    __slots__ = ("fields", "final", "items", "keys", "meta", "text", "tool_call_id")

    def __init__(self, tool_call_id: str) -> None:
        self.tool_call_id = tool_call_id
        self.fields: dict[str, bytes] = {}  # attribute -> canonical JSON of the value sent
        self.items: list[Any] = []  # content as the client holds it
        self.keys: list[bytes] = []  # canonical JSON of each item
        self.meta: dict[str, bytes] = {}  # `_meta` key -> canonical JSON
        self.text: GrowingText | None = None
        self.final = False


def fields_of(**values: Any) -> Fields:
    """The given fields: ``UNSET`` arguments are left out."""
    return {name: value for name, value in values.items() if value is not UNSET}


def _keys_of(attr: str, value: Any) -> Any:
    """What the minimal patch compares for one field: the canonical JSON of the value, per
    item of ``content``, per key of ``_meta``. ``SenderError`` names what JSON cannot carry."""
    if value is None:
        return None
    if attr == "content":
        return [encoded(item, f"content[{index}]") for index, item in enumerate(value)]
    if attr == "meta":
        return {k: encoded(item, f"_meta.{k}") for k, item in value.items() if item is not None}
    return encoded(value, WIRE_NAMES[attr])


def patch(call: CallRecord, fields: Fields) -> Fields:
    """The minimal patch turning what the client holds into ``fields``; records it sent.

    Every value is encoded before anything is recorded: one that JSON cannot carry (a lone
    surrogate, a NaN, an integer out of range) raises ``SenderError`` with nothing changed.
    """
    keys = {attr: _keys_of(attr, value) for attr, value in fields.items()}
    out: Fields = {}
    for attr, value in fields.items():
        key = keys[attr]
        if attr == "content":
            _patch_content(call, value, key, out)
        elif attr == "meta":
            _patch_meta(call, value, key, out)
        elif value is None:
            if call.fields.pop(attr, None) is not None:
                out[attr] = None
        else:
            if call.fields.get(attr) != key:
                if attr == "name" and "name" in call.fields:
                    logger.warning(
                        "tool call %r changed its name to %r (names should be stable: a "
                        "client may key its display on them)",
                        call.tool_call_id,
                        value,
                    )
                call.fields[attr] = key
                out[attr] = value
    return out


def _patch_content(call: CallRecord, value: Any, keys: Any, out: Fields) -> None:
    if value is None:
        if call.items:
            out["content"] = None
        call.items, call.keys = [], []
        return
    if keys != call.keys:
        out["content"] = list(value)
        call.items, call.keys = list(value), keys


def _patch_meta(call: CallRecord, value: Any, keys: Any, out: Fields) -> None:
    if value is None:
        if call.meta:
            out["meta"] = None
        call.meta = {}
        return
    changed: dict[str, Any] = {}
    for key, item in value.items():
        if item is None:
            if call.meta.pop(key, None) is not None:
                changed[key] = None
            continue
        value_key = keys[key]
        if call.meta.get(key) != value_key:
            call.meta[key] = value_key
            changed[key] = item
    if changed:
        out["meta"] = changed


def update_message(session_id: str, update: Any) -> v2.SessionUpdateMessage:
    """A v2 ``session/update`` notification carrying ``update``."""
    return v2.SessionUpdateMessage(
        params=v2.UpdateSessionNotification(session_id=session_id, update=update)
    )
