"""Adapters to the official Python SDK (``agent-client-protocol``, package ``acp``).

Optional: install the ``sdk`` extra. Importing ``acp_toolcalls`` never imports ``acp``; only
this module does.

Rules this module owns (D46 (tool-call update, patch semantics, meta patches, evidence: null as
omitted)):

- Sending keeps ``null``. The SDK's v1 ``AgentSideConnection`` serializes with
  ``exclude_none``, so a clear (``"title": null``) can never reach the wire through its
  ``session_update``. ``send`` and ``request`` write our message's ``method`` and ``params``,
  turned into plain JSON values by ``to_builtins`` (``None`` -> ``null``, ``UNSET`` left out),
  through the SDK's raw JSON-RPC ``acp.connection.Connection``, which writes them as they are.
  That connection is the SDK's *private* ``_conn`` attribute of its connection objects: the
  SDK has no public raw path that keeps ``null`` (v1 ``ext_notification`` forces a ``_``
  method prefix; v2 ``send_extension_notification`` refuses a method without one).
- The SDK's private attributes (``_PRIVATE_CONNECTION``, ``_PRIVATE_GATE``) are read in one
  function, ``_sdk_private``, and nowhere else; ``tests/sdk/test_sdk.py`` pins each of them against
  the installed SDK, so an SDK release that renames one fails CI with its version named.
- Our params are not re-validated by the SDK's models (the SDK's own ``session_update`` does
  that): send only what this library built or checked. What the SDK still does on this path:
  a v2 ``AgentSideConnection``'s initialization gate (``_state.require(method)``) is awaited
  before each message, as its own methods do. A bare ``Connection`` or the v1 connection has
  no such gate: nothing then checks that ``initialize`` happened, so send only after it.
- A request goes out under the JSON-RPC id the SDK assigns (the SDK matches the answer by it);
  ``request`` returns the answer re-keyed to *our* message's id, so it can be handed to the
  code that chose that id (``ToolCallEmitter.answer``). Every failure is an error response,
  never an exception that could be mistaken for an answer: the peer's error keeps its
  ``code``/``message``/``data``; a connection closed or lost before the answer becomes
  ``CONNECTION_LOST`` (``-32603``, Internal error). Cancelling the awaiting task makes the SDK
  send ``$/cancel_request`` with its own id.
- Reading SDK models: ``model_fields_set`` decides omitted (``UNSET``) vs set. The SDK's v2
  models *salvage* an invalid value to ``None`` and keep the field in ``model_fields_set``
  (D46 (evidence: null as omitted)), which makes ``None`` ambiguous for ``name``, ``title``,
  ``kind``, ``status`` and ``_meta``: an invalid value must read as omitted (D11), never as a clear.
  With the raw wire object (``raw=``, which ``store_observer``'s connection observer sees) the raw
  object is authoritative; without it an ambiguous ``None`` reads as ``UNSET`` unless the caller
  says the model holds no salvage (``ambiguous_none="clear"``).
- The lossless client path is ``store_observer``: a connection observer sees every raw
  incoming message before the SDK's models drop nulls, unknown keys and unknown variants.

How the SDK (1.0.0rc3, ``acp._deserialize``) salvages, per field of the v2 ``ToolCallUpdate``:

- ``name``, ``title``, ``kind``, ``status``, ``rawInput``, ``rawOutput`` and ``_meta`` are wrapped
  by ``use_default_on_error``: a ``ValidationError`` becomes ``PydanticUseDefault``, so the field
  gets its default ``None`` *and stays in* ``model_fields_set``. No raw value is kept anywhere
  (no ``model_extra``, no private attribute). ``rawInput``/``rawOutput`` accept any JSON, so
  their ``None`` is always a real ``null``; ``kind``/``status`` accept any string, so only a
  non-string (``"kind": 42``) is salvaged.
- ``content``/``locations`` use ``skip_invalid_items`` without default-on-error: bad items are
  dropped, but a non-array value fails the whole model (the SDK then drops the notification,
  where the spec reads the field as omitted). Their ``None`` is always a real ``null``.
- Dropped by the models: ``capabilities`` (not modelled at all), unknown keys of the update and
  of known nested objects. Kept: unknown content and content-block variants (``Other*``
  models), unknown enum strings. Pydantic's lax mode coerces some invalid values instead of
  salvaging them (``"line": "3"`` becomes ``3``; the spec reads it as omitted). Nested
  salvaged fields (e.g. a content item's ``"_meta": false``) come out as ``null``, which for
  those scoped fields means the same as absent.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Literal

import msgspec
from acp.connection import Connection, StreamDirection, StreamEvent
from acp.exceptions import RequestError
from acp.experimental.v2 import schema as sdk_v2

from . import v2
from .codec import DecodeError, decode, to_builtins
from .events import Event
from .models import INTERNAL_ERROR, JsonRpcMessage
from .store import ToolCallStore

__all__ = [
    "CONNECTION_LOST",
    "raw_connection",
    "request",
    "send",
    "store_observer",
    "tool_call_update_from_sdk",
    "tool_call_update_to_sdk",
]

logger = logging.getLogger("acp_toolcalls.sdk")

CONNECTION_LOST = INTERNAL_ERROR
"""JSON-RPC error code ``request`` answers with when the connection closed before the answer
(JSON-RPC "Internal error", the code the SDK itself uses for transport failures)."""

_AMBIGUOUS = {
    "name": "name",
    "title": "title",
    "kind": "kind",
    "status": "status",
    "field_meta": "_meta",
}
"""SDK attribute -> wire key of the fields whose ``None`` may be a salvaged invalid value."""

_PRIVATE_CONNECTION = ("_conn", "_connection")
"""Private attributes holding an SDK connection object's raw ``Connection``: ``_conn`` on the
v1 and experimental v2 ``AgentSideConnection``/``ClientSideConnection``, ``_connection`` on the
experimental ``AgentProtocolConnection``."""
_PRIVATE_GATE = "_state"
"""Private attribute of the experimental v2 connections holding their initialization gate, an
object with ``async require(method)``."""


# --------------------------------------------------------------------------------------------
# Sending


def _sdk_private(
    connection: object,
) -> tuple[Connection | None, Callable[[str], Awaitable[None]] | None]:
    """The raw ``Connection`` an SDK connection object holds and its initialization gate's
    ``require``, each ``None`` when it has none. The one place this module reads the SDK's
    private attributes, for which the SDK has no public accessor (pinned by tests/sdk/test_sdk.py).
    """
    inner: Connection | None = None
    for attribute in _PRIVATE_CONNECTION:
        found = getattr(connection, attribute, None)
        if isinstance(found, Connection):
            inner = found
            break
    require = getattr(getattr(connection, _PRIVATE_GATE, None), "require", None)
    return inner, require if callable(require) else None


def raw_connection(connection: object) -> Connection:
    """The SDK's raw JSON-RPC ``Connection`` of an SDK connection object.

    Accepts a ``Connection`` itself, or any SDK object holding one: v1 and experimental v2
    ``AgentSideConnection``/``ClientSideConnection`` (private attribute ``_conn``) and the
    experimental ``AgentProtocolConnection`` (private attribute ``_connection``). Raises
    ``TypeError`` for anything else.
    """
    if isinstance(connection, Connection):
        return connection
    inner, _ = _sdk_private(connection)
    if inner is not None:
        return inner
    raise TypeError(
        f"expected an acp AgentSideConnection, ClientSideConnection or acp.connection."
        f"Connection, got {type(connection).__name__}"
    )


def _peer(connection: object, method: str) -> Any:
    """What to call ``method`` (``send_notification``/``send_request``) on."""
    try:
        return raw_connection(connection)
    except TypeError:
        if callable(getattr(connection, method, None)):
            return connection  # a Connection look-alike (another transport, a test double)
        raise TypeError(
            f"cannot send through {type(connection).__name__!r}: expected an acp "
            f"AgentSideConnection (v1 or experimental v2), an acp.connection.Connection or an "
            f"object with `{method}`"
        ) from None


async def _initialized(connection: object, method: str) -> None:
    # The v2 connections gate every method on the `initialize` exchange; keep that gate.
    _, require = _sdk_private(connection)
    if require is not None:
        await require(method)


def _plain(message: object) -> dict[str, Any]:
    """A JSON-RPC message of ours as plain JSON values (``null`` kept, ``UNSET`` left out)."""
    if isinstance(message, JsonRpcMessage):
        message = message.data
    if not isinstance(message, (Mapping, msgspec.Struct)):
        raise TypeError(
            f"expected a JSON-RPC message (a v1/v2 message model, JsonRpcMessage or dict), "
            f"got {type(message).__name__}"
        )
    # Also copies: the SDK serializes later, from its send queue.
    data = to_builtins(message)
    if not isinstance(data.get("method"), str):
        raise TypeError(f"not a request or notification (no `method`): {data!r:.200}")
    return dict(data)


async def send(connection: object, *messages: object) -> None:
    """Send notifications (e.g. ``session/update``) with every ``null`` kept, in order.

    ``connection``: a v1 ``acp.AgentSideConnection``, an experimental v2
    ``acp.experimental.v2.AgentSideConnection``, an ``acp.connection.Connection``, or an object
    with ``send_notification(method, params)``. ``messages``: v1/v2 message models,
    ``JsonRpcMessage`` or plain dicts. Only ``method`` and ``params`` are sent (a missing
    ``params`` is written as ``null``).

    All messages are checked before any is sent: a request (it has an ``id``; send it with
    ``request``) or a response raises ``TypeError``. Errors of the SDK (``ConnectionError``
    when closed; the v2 ``RequestError`` before ``initialize``) propagate; messages before the
    failing one were sent.
    """
    peer = _peer(connection, "send_notification")
    notifications: list[tuple[str, Any]] = []
    for message in messages:
        data = _plain(message)
        if "id" in data:
            raise TypeError(
                f"{data['method']} with id {data['id']!r} is a request: send it with `request`"
            )
        notifications.append((data["method"], data.get("params")))
    for method, params in notifications:
        await _initialized(connection, method)
        await peer.send_notification(method, params)


def _error(request_id: Any, code: int, message: str, data: Any = None) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": request_id, "error": error}


async def request(connection: object, message: object) -> dict[str, Any]:
    """Send one request (e.g. ``session/request_permission``) and return its answer as a
    JSON-RPC response keyed to ``message``'s own id.

    ``connection`` as for ``send`` (a look-alike needs ``send_request``); ``message`` a v1/v2
    ``PermissionRequestMessage``, ``JsonRpcMessage`` or dict with an ``id``. The SDK sends it
    under an id of its own. Returns ``{"jsonrpc": "2.0", "id": <our id>, "result": ...}``, or
    ``{..., "error": {"code", "message", "data"?}}`` when the peer answered with an error, the
    v2 connection is not initialized, or the connection closed first (``CONNECTION_LOST``).
    Raises ``TypeError`` for a message without an ``id`` (use ``send``) or an unknown
    connection; cancellation propagates (the SDK then sends ``$/cancel_request``).
    """
    peer = _peer(connection, "send_request")
    data = _plain(message)
    if "id" not in data:
        raise TypeError(f"{data['method']} has no id: it is a notification, use `send`")
    our_id = data["id"]
    method: str = data["method"]
    try:
        await _initialized(connection, method)
        result = await peer.send_request(method, data.get("params"))
    except RequestError as exc:  # the peer's error answer, as the SDK raises it
        return _error(our_id, exc.code, str(exc), exc.data)
    except (OSError, EOFError) as exc:  # ConnectionError("Connection closed") is an OSError
        details = f"connection lost before an answer: {exc or type(exc).__name__}"
        return _error(our_id, CONNECTION_LOST, "Internal error", {"details": details})
    return {"jsonrpc": "2.0", "id": our_id, "result": result}


# --------------------------------------------------------------------------------------------
# SDK models


def _raw_update(raw: Mapping[str, Any]) -> dict[str, Any]:
    """The tool-call update inside a raw message, its params, or the update itself."""
    found: Any = raw
    if isinstance(found.get("params"), Mapping):
        found = found["params"]
    if isinstance(found.get("update"), Mapping):
        found = found["update"]
    subject = found.get("subject")
    if isinstance(subject, Mapping) and isinstance(subject.get("toolCall"), Mapping):
        found = subject["toolCall"]
    plain = dict(found)
    tag = plain.pop("sessionUpdate", "tool_call_update")
    if tag != "tool_call_update":
        raise ValueError(f"raw update is a {tag!r}, not a 'tool_call_update'")
    return plain


def tool_call_update_from_sdk(
    model: sdk_v2.ToolCallUpdate,
    raw: Mapping[str, Any] | None = None,
    *,
    ambiguous_none: Literal["unset", "clear"] = "unset",
) -> v2.ToolCallUpdate:
    """Our three-state ``v2.ToolCallUpdate`` from the SDK's experimental v2 ``ToolCallUpdate``
    (or its ``SessionToolCallUpdate`` session-update variant, or a permission subject's
    ``tool_call``).

    With ``raw`` (the JSON object the SDK parsed ``model`` from: the update itself, or the
    ``session/update`` message or params holding it, or ``session/request_permission``
    params with a ``tool_call`` subject) the raw object is authoritative: it is read by
    ``acp_toolcalls.codec.decode`` (an invalid value reads as omitted; ``capabilities`` and
    unknown keys are kept). Raises ``ValueError`` if its ``toolCallId`` is not the model's, and
    ``DecodeError`` if it cannot be read.

    Without ``raw``: a field not in ``model_fields_set`` is ``UNSET``; a value is converted via
    the model's JSON dump. ``None`` is a clear for ``content``, ``locations``, ``rawInput``
    and ``rawOutput`` (the SDK never salvages those to ``None``). For ``name``, ``title``,
    ``kind``, ``status`` and ``_meta`` a ``None`` is either a ``null`` or an invalid value the
    SDK salvaged, and the model cannot tell which: ``ambiguous_none="unset"`` (default, safe
    for models parsed from the wire) reads it as omitted, so a real clear of those fields is
    lost; ``"clear"`` reads it as a clear, right only for models built in code. This path never
    sees ``capabilities`` or unknown keys (the SDK drops them).
    """
    if not isinstance(model, sdk_v2.ToolCallUpdate):
        raise TypeError(
            "expected an acp.experimental.v2.schema.ToolCallUpdate (or SessionToolCallUpdate), "
            f"got {type(model).__name__}"
        )
    if ambiguous_none not in ("unset", "clear"):
        raise ValueError(f"ambiguous_none must be 'unset' or 'clear', not {ambiguous_none!r}")
    if raw is not None:
        update = decode(_raw_update(raw), v2.ToolCallUpdate).value
        if update.tool_call_id != model.tool_call_id:
            raise ValueError(
                f"raw update is about {update.tool_call_id!r}, the model about "
                f"{model.tool_call_id!r}"
            )
        return update
    # `exclude_unset` keeps exactly the fields in `model_fields_set` (nested models too), so
    # omitted stays omitted and a set `None` becomes `null`.
    plain = model.model_dump(mode="json", by_alias=True, exclude_unset=True)
    plain.pop("sessionUpdate", None)  # the variant's tag, always written by the SDK
    if ambiguous_none == "unset":
        for attribute, key in _AMBIGUOUS.items():
            if attribute in model.model_fields_set and getattr(model, attribute) is None:
                del plain[key]  # maybe salvaged: never a clear (D11)
    return decode(plain, v2.ToolCallUpdate).value


def tool_call_update_to_sdk(update: v2.ToolCallUpdate) -> sdk_v2.ToolCallUpdate:
    """The SDK's experimental v2 model of ``update``: ``SessionToolCallUpdate`` for a
    ``v2.SessionToolCallUpdate``, else ``ToolCallUpdate``.

    ``model_fields_set`` holds exactly the fields that are not ``UNSET``; a ``None`` field is
    set to ``None`` (a clear). Lost, because the SDK models have no place for them:
    ``capabilities`` and unknown keys (``extra``) at every level. Send the result through the
    v2 connection's own methods (which keep ``null``), or better send ours with ``send``.
    """
    if not isinstance(update, v2.ToolCallUpdate):
        raise TypeError(f"expected an acp_toolcalls.v2.ToolCallUpdate, got {type(update).__name__}")
    cls = (
        sdk_v2.SessionToolCallUpdate
        if isinstance(update, v2.SessionToolCallUpdate)
        else sdk_v2.ToolCallUpdate
    )
    # Validation from the wire shape sets exactly the keys present; our values are valid, so
    # nothing is salvaged into an accidental clear.
    return cls.model_validate(to_builtins(update))


# --------------------------------------------------------------------------------------------
# Client side: the store fed from the raw stream


def store_observer(
    store: ToolCallStore,
    clock: Callable[[], float] = time.monotonic,
    *,
    on_events: Callable[[list[Event]], None] | None = None,
) -> Callable[[StreamEvent], None]:
    """A stream observer that applies every raw incoming message to ``store``.

    ``store.apply(message, now=clock())`` sees the dict the SDK parsed from the wire, before
    its models drop ``null`` clears, unknown keys and unknown variants: the lossless way for
    a client built on the SDK to keep tool-call state. Outgoing ``initialize`` requests are
    applied too, so that a ``ToolCallStore(version="auto")`` can match the response that
    negotiates the version; nothing else outgoing is. ``on_events`` receives each non-empty
    list of store events. A message the store cannot read is logged (``acp_toolcalls.sdk``)
    and skipped; the SDK goes on with it as usual.

    The observer is synchronous: the SDK calls it in its receive loop before it dispatches
    the message, so the store is up to date when the client's ``session_update`` handler
    runs. (The SDK's transport drops JSON-RPC batches before observers see them.)

    Attach it when the client connection is made (public; the keyword reaches the
    ``Connection``): ``acp.connect_to_agent(client, writer, reader, observers=[obs])``,
    ``acp.experimental.v2.connect_to_agent(..., observers=[obs])`` or
    ``acp.spawn_agent_process(..., observers=[obs])``. On an existing v1 or v2
    ``ClientSideConnection``, the ``Connection`` is its private ``_conn`` attribute:
    ``raw_connection(client_connection).add_observer(obs)``.
    """

    def observe(event: StreamEvent) -> None:
        message = event.message
        incoming = event.direction is StreamDirection.INCOMING
        if not incoming and message.get("method") != "initialize":
            return
        try:
            events = store.apply(message, now=clock())
        except DecodeError as exc:
            logger.warning("message not applied to the tool-call store: %s", exc)
            return
        if events and on_events is not None:
            on_events(events)

    return observe
