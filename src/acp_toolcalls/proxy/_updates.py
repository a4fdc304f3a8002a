"""The agent's notifications while converting, and the fast paths of its session updates.

Rules this module owns:

- ``session/update`` goes to the policy (``_policy``), read once: a compact tool-call or
  terminal update by the strict decoder its bridge would read it with (the policy's
  ``typed_update``), any other compact update whole (``plain_update``), anything else as an
  envelope (``agent_notification``); each
  falls back to the next when it is not what it expects, so every path routes a line alike.
- The agent's ``$/cancel_request`` goes through the bridge, which settles what it forwarded
  (ids mapped); a request method sent without an id is never forwarded raw (dropped and
  reported); other notifications (extensions, unknown ones) pass as they are.

Functions over the core (``Core``, public members only) and the policy it has chosen: no
state of their own, no layer of the core.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import msgspec
from msgspec import UNSET

from ..lifecycle import CLIENT_OWNED as _CLIENT_OWNED
from ..lifecycle import jsonrpc
from . import _routing as rpc

if TYPE_CHECKING:
    from ._policy import Policy
    from ._sessions import Core

_TAG_KEY = b'"sessionUpdate":"'  # compact JSON; other spellings take the general path
_TYPED_TAGS = (b"tool_call", b"terminal_")  # how the tags the typed decoders read begin
_UPDATE_FIRST = b'{"jsonrpc":"2.0","method":"session/update","params":{'


def agent_notification(
    core: Core, policy: Policy, method: str, envelope: rpc.Envelope, line: bytes, now: float
) -> None:
    """A notification of the agent (``envelope``, read from ``line``), converted."""
    if method == "$/cancel_request":  # the bridge settles what it forwarded; ids mapped
        bridge = policy.bridge
        assert bridge is not None
        core.bridge_output.bridge_update(
            bridge, jsonrpc.notification(method, rpc.plain(envelope.params))
        )
        return
    if method == "session/request_permission" or method.startswith(_CLIENT_OWNED):
        core.output.note(
            "agent",
            f"{method} is a request but came without an id: not forwarded (the client's "
            "answer could not reach the agent)",
            "error",
        )
        return
    if method != "session/update":
        core.output.box.to_client.append(line)
        return
    try:
        params = rpc.read_update.decode(envelope.params) if envelope.params is not UNSET else None
    except msgspec.DecodeError:
        params = None
    update = params.update if params is not None else None
    tag = update.sessionUpdate if update is not None else None
    if type(tag) is not str:  # (an object or array: no tag; the bridge says what it is)
        tag = None
    session_id = params.sessionId if params is not None else None
    policy.update(core, session_id, tag, line, now, None)


def compact_update(core: Core, policy: Policy, line: bytes, now: float) -> bool:
    """A compact ``session/update`` read once, told apart by the first ``"sessionUpdate":"``
    of the line (one scan, which stops there; a nested one that misleads it only sends the
    line to the general path): a tool-call or terminal update by the policy's
    ``typed_update`` (the strict decoder its bridge would read it with,
    ``codec.fast_message_decoder``), any other by ``plain_update``. ``False`` for anything
    else (an id, an unknown key, a size over the codec's limit, bad JSON): the general path
    (``agent_notification``) reads it."""
    at = line.find(_TAG_KEY)
    if at < 0:
        return False
    if line.startswith(_TYPED_TAGS, at + len(_TAG_KEY)):
        return policy.typed_update(core, line, now)
    return plain_update(core, policy, line, now)


def plain_update(core: Core, policy: Policy, line: bytes, now: float) -> bool:
    """A compact ``session/update`` notification of any other kind (message chunks, plans,
    state, ...): read once, whole, instead of as an envelope, then its update's tag, then
    whole; routed as ``agent_notification`` routes it. ``False`` for anything else (an
    id or another member, a tool-call tag, bad JSON): the general path reads it."""
    if not line.startswith(_UPDATE_FIRST):
        return False
    try:
        message = rpc.whole(line)
    except rpc.Unreadable:
        return False
    if not (
        type(message) is dict
        and message.keys() <= rpc.ENVELOPE_KEYS
        and message.get("method") == "session/update"
    ):
        return False
    params = message.get("params")
    update = params.get("update") if type(params) is dict else None
    tag = update.get("sessionUpdate") if type(update) is dict else None
    if type(tag) is not str or tag in policy.typed_tags:
        return False
    assert type(params) is dict
    policy.update(core, params.get("sessionId"), tag, line, now, message)
    return True
