"""Pass-through: the same version on both sides, every line forwarded byte for byte.

Rules this module owns:

- Only what the client waits for is read: the ids of its pending requests (to answer them if
  the agent goes away) and, for a v2 client, the sessions whose turn the agent acknowledged
  (ended by an idle ``state_update``). An agent line is looked at with byte checks only,
  unless a request of the client waits for an answer and the line does not open with a
  ``method`` (``_METHOD_FIRST``).
- A permission request whose option ids repeat is the one exception: the repeats are dropped
  (the first is the one shown, D5) so that an answer names one option.
"""

from __future__ import annotations

from typing import Any

import msgspec
from msgspec import UNSET

from ..models import request_key
from . import _routing as rpc
from ._permissions import _Bridged

_PERMISSION_METHOD = b'"session/request_permission"'
_METHOD_FIRST = (b'{"jsonrpc":"2.0","method":', b'{"jsonrpc": "2.0", "method": ', b'{"method":')
"""How lines whose first top-level member (after ``jsonrpc``) is ``method`` open."""


class _PassThroughLines(_Bridged):
    """What pass-through reads of the lines it forwards."""

    def _track_passthrough(self, line: bytes) -> None:
        try:
            parsed = rpc.read_line.decode(line)
        except (msgspec.DecodeError, RecursionError):
            return  # the agent answers it (-32700); nothing to wait for
        for item in parsed if isinstance(parsed, list) else (parsed,):
            envelope = _as_envelope(item)
            if envelope is not None and envelope.method is not UNSET and envelope.id is not UNSET:
                session_id = _session_of(envelope) if envelope.method == "session/prompt" else None
                pending = rpc.Pending(envelope.id, envelope.method, session_id)
                self._to_agent.keep(envelope.id, pending)

    def _unique_options(self, line: bytes) -> bytes:
        """An agent's permission request whose option ids repeat, with the repeats dropped
        (the first is the one shown, D5) so that an answer names one option; any other line
        as it is."""
        try:
            value = rpc.whole(line)
        except rpc.Unreadable:
            return line
        changed = False
        for message in value if isinstance(value, list) else [value]:
            if (
                not isinstance(message, dict)
                or message.get("method") != "session/request_permission"
            ):
                continue
            params = message.get("params")
            options = params.get("options") if isinstance(params, dict) else None
            if not isinstance(params, dict) or not isinstance(options, list):
                continue
            kept: list[Any] = []
            offered: set[str] = set()
            for option in options:
                option_id = option.get("optionId") if isinstance(option, dict) else None
                if isinstance(option_id, str):  # another id is passed on: the client says
                    if option_id in offered:
                        self._note(
                            "agent", f"duplicate permission option id {option_id!r}: dropped"
                        )
                        continue
                    offered.add(option_id)
                kept.append(option)
            if len(kept) != len(options):
                params["options"] = kept
                changed = True
        return msgspec.json.encode(value) if changed else line

    def _untrack_passthrough(self, line: bytes) -> None:
        """What the client waits for that an agent line settles: an answer, and (v2) the idle
        ``state_update`` that ends a turn the agent acknowledged."""
        ending = bool(self._turns) and b'"idle"' in line
        if not ending and (not self._to_agent.pending or line.startswith(_METHOD_FIRST)):
            return  # no answer: a line that opens with a method is a request or notification
        try:
            parsed = rpc.read_line.decode(line)
        except (msgspec.DecodeError, RecursionError):
            return
        for item in parsed if isinstance(parsed, list) else (parsed,):
            envelope = _as_envelope(item)
            if envelope is None:
                continue
            if envelope.method is UNSET and envelope.id is not UNSET:
                pending = self._to_agent.pop(envelope.id)
                if (
                    pending is not None
                    and pending.method == "session/prompt"
                    and self._policy.tracks_turns
                    and envelope.error is UNSET
                ):
                    key = request_key(pending.session_id)
                    self._turns[key] = pending.session_id  # acknowledged: the turn runs
            elif ending and envelope.method == "session/update":
                params = _plain_or_none(envelope.params)
                body = params.get("update") if isinstance(params, dict) else None
                if isinstance(body, dict) and body.get("state") == "idle":
                    self._turns.pop(request_key(params.get("sessionId")), None)


def _session_of(envelope: rpc.Envelope) -> Any:
    params = _plain_or_none(envelope.params)
    return params.get("sessionId") if isinstance(params, dict) else None


def _plain_or_none(raw: Any) -> Any:
    """A raw payload as JSON values, or ``None`` when it cannot be read (pass-through only
    looks: the peer says what is wrong with it)."""
    try:
        return rpc.plain(raw)
    except rpc.Unreadable:
        return None


def _as_envelope(item: Any) -> rpc.Envelope | None:
    if isinstance(item, rpc.Envelope):
        return item
    if isinstance(item, dict):
        try:
            return rpc.read_envelope.decode(msgspec.json.encode(item))
        except msgspec.DecodeError:
            return None
    return None
