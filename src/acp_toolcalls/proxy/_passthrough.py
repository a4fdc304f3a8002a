"""Pass-through: the same version on both sides, every line forwarded byte for byte.

Rules this module owns:

- Only what the client waits for is read: the ids of its pending requests (to answer them if
  the agent goes away) and, for a v2 client, the sessions whose turn the agent acknowledged
  (ended by an idle ``state_update``). An agent line is looked at with byte checks only,
  unless a request of the client waits for an answer and the line does not open with a
  ``method`` (``_METHOD_FIRST``).
- A permission request whose option ids repeat is the one exception: the repeats are dropped
  (the first is the one shown, D5) so that an answer names one option.
- The option ids of the agent's permission requests are kept until the client answers: an
  answer that repeats a key, has both ``result`` and ``error``, or selects an id never offered
  reaches the agent as ``cancelled`` under its id, reported (D34 amended 2026-12-06).
"""

from __future__ import annotations

from typing import Any

import msgspec
from msgspec import UNSET

from ..codec import duplicate_keys
from ..lifecycle import jsonrpc
from ..models import CANCELLED_OUTCOME, request_key
from . import _routing as rpc
from ._permissions import _Bridged
from ._policy import PassThrough

_PERMISSION_METHOD = b'"session/request_permission"'
_METHOD_FIRST = (b'{"jsonrpc":"2.0","method":', b'{"jsonrpc": "2.0", "method": ', b'{"method":')
"""How lines whose first top-level member (after ``jsonrpc``) is ``method`` open."""


class _PassThroughLines(_Bridged):
    """What pass-through reads of the lines it forwards. (A base class: it reads the request
    ids, turns and policy the layers share, and checks answers as ``_permissions`` does.)"""

    def _track_passthrough(self, line: bytes) -> bytes:
        """What the client's line makes the client wait for; the line to forward (itself, or
        an ambiguous permission answer as ``cancelled``: ``_checked_answers``)."""
        try:
            parsed = rpc.read_line.decode(line)
        except (msgspec.DecodeError, RecursionError):
            return line  # the agent answers it (-32700); nothing to wait for
        asked = self._asked()
        answers = False
        for item in parsed if isinstance(parsed, list) else (parsed,):
            envelope = _as_envelope(item)
            if envelope is None or envelope.id is UNSET:
                continue
            if envelope.method is not UNSET:
                session_id = _session_of(envelope) if envelope.method == "session/prompt" else None
                pending = rpc.Pending(envelope.id, envelope.method, session_id)
                self.agent_requests.keep(envelope.id, pending)
            elif asked and request_key(envelope.id) in asked:
                answers = True
        return self._checked_answers(line, parsed) if answers else line

    def _checked_answers(self, line: bytes, parsed: Any) -> bytes:
        """The client's answers in ``line`` to the agent's permission requests: one that is
        ambiguous (``_ambiguous_answer``) is sent as ``cancelled`` under its id."""
        asked = self._asked()
        try:
            value = rpc.whole(line)
        except rpc.Unreadable:
            return line
        batch = isinstance(parsed, list) and isinstance(value, list)
        repeated = duplicate_keys(line)
        changed = False
        for index, message in enumerate(value if batch else [value]):
            if not isinstance(message, dict) or "method" in message or "id" not in message:
                continue
            offered = asked.pop(request_key(message["id"]), None)
            if offered is None:
                continue
            prefix = f"$[{index}]" if batch else "$"
            own = [d for d in repeated if d.path.startswith((prefix + ".", prefix + "["))]
            if self._ambiguous_answer(message, own, offered) is None:
                continue
            answer = jsonrpc.result(message["id"], CANCELLED_OUTCOME)
            if batch:
                value[index] = answer
            else:
                value = answer
            changed = True
        return msgspec.json.encode(value) if changed else line

    def _asked(self) -> dict[Any, frozenset[str]]:
        """The agent's permission requests the client has not answered, and their option ids."""
        policy = self._policy
        return policy.asked if isinstance(policy, PassThrough) else {}

    def _unique_options(self, line: bytes) -> bytes:
        """An agent's permission request whose option ids repeat, with the repeats dropped
        (the first is the one shown, D5) so that an answer names one option; any other line
        as it is."""
        try:
            value = rpc.whole(line)
        except rpc.Unreadable:
            return line
        changed = False
        policy = self._policy
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
                        self.output.note(
                            "agent", f"duplicate permission option id {option_id!r}: dropped"
                        )
                        continue
                    offered.add(option_id)
                kept.append(option)
            if len(kept) != len(options):
                params["options"] = kept
                changed = True
            request_id = message.get("id")
            if (
                isinstance(request_id, (str, int))
                and isinstance(policy, PassThrough)
                and not policy.permission_forwarded(request_id, frozenset(offered))
            ):
                self.output.limit(
                    "max_pending_permissions",
                    f"{policy.max_asked} permission requests wait for the client: the "
                    "oldest one's answer will not be checked",
                )
        return msgspec.json.encode(value) if changed else line

    def _untrack_passthrough(self, line: bytes) -> None:
        """What the client waits for that an agent line settles: an answer, and (v2) the idle
        ``state_update`` that ends a turn the agent acknowledged."""
        ending = bool(self._turns) and b'"idle"' in line
        if not ending and (not self.agent_requests.pending or line.startswith(_METHOD_FIRST)):
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
                pending = self.agent_requests.pop(envelope.id)
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
