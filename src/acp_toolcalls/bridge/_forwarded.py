"""Permission requests a bridge forwarded to the client, each until its one answer.

Rules this module owns (both bridges keep their forwarded requests here):

- A request is pending under its JSON-RPC id until the client answers it or the bridge gives
  it up. A request that cannot be told apart from a pending one (its id is the id of a pending
  request, or ``null``) is refused: the agent is answered ``-32600``, nothing is forwarded.
- Giving a request up answers the agent ``cancelled`` and withdraws the request from the
  client with ``$/cancel_request``. The ids of as many given-up requests as the cap of
  pending ones are remembered, so that the client's late answer is dropped (reported), never
  passed on as a second answer.
- Past ``cap`` pending requests, the oldest is to be given up.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from ..convert import Loss
from ..models import (
    CANCELLED_OUTCOME,
    INVALID_REQUEST,
    JsonRpcMessage,
    error_response,
    request_key,
    response,
)

T = TypeVar("T")


@dataclass(frozen=True)
class GivenUp(Generic[T]):
    """A request the bridge answered itself: what it kept, the answer for the agent and the
    withdrawal for the client."""

    value: T
    reply: JsonRpcMessage
    cancel: JsonRpcMessage


class Forwarded(Generic[T]):
    """The forwarded requests of one bridge and what it keeps for each (``T``)."""

    def __init__(self, cap: int | None) -> None:
        self.cap = cap
        self._pending: dict[Any, tuple[Any, T]] = {}  # request_key -> (request id, value)
        self._given_up: dict[Any, None] = {}

    def __contains__(self, request_id: Any) -> bool:
        return request_key(request_id) in self._pending

    def __len__(self) -> int:
        return len(self._pending)

    def refusal(self, request_id: Any) -> tuple[JsonRpcMessage, Loss] | None:
        """The answer (and the loss to report) for a request that must not be forwarded
        under ``request_id``; ``None`` when it may be."""
        if request_id is None:
            why = "null: a request the client answers needs an id"
        elif request_id in self:
            why = "the id of a request still waiting for its answer"
        else:
            return None
        detail = {"details": f"request id {request_id!r} is {why}"}
        reply = error_response(request_id, INVALID_REQUEST, "Invalid Request", detail)
        return reply, Loss("$.id", f"request id {request_id!r} is {why}: refused (-32600)")

    def add(self, request_id: Any, value: T) -> tuple[Any, Loss] | None:
        """Remember a forwarded request; past the cap, the id of the oldest one, which the
        caller gives up, and the loss to report."""
        key = request_key(request_id)
        self._pending[key] = (request_id, value)
        self._given_up.pop(key, None)  # a new request under an old id
        if self.cap is None or len(self._pending) <= self.cap:
            return None
        oldest = next(iter(self._pending.values()))[0]
        return oldest, Loss(
            "$.max_pending_permissions",
            f"request {oldest!r} still unanswered after {self.cap} later requests: given up, "
            "answered the agent `cancelled`, withdrawn from the client",
        )

    def answered(self, request_id: Any) -> tuple[bool, T | None, Loss | None]:
        """The client answered ``request_id``: ``(True, value, None)`` for a pending request
        (no longer pending); ``(True, None, loss)`` for one given up, whose late answer is
        dropped; ``(False, None, None)`` for an answer to anything else."""
        key = request_key(request_id)
        found = self._pending.pop(key, None)
        if found is not None:
            return True, found[1], None
        if key in self._given_up:
            del self._given_up[key]
            reason = f"an answer to request {request_id!r}, answered `cancelled` already: dropped"
            return True, None, Loss("$.id", reason)
        return False, None, None

    def give_up(self, request_id: Any) -> GivenUp[T] | None:
        """Answer a pending request ``cancelled`` on the client's behalf (``None``: it is not
        pending)."""
        key = request_key(request_id)
        found = self._pending.pop(key, None)
        if found is None:
            return None
        self._given_up[key] = None
        if self.cap is not None and len(self._given_up) > self.cap:
            del self._given_up[next(iter(self._given_up))]
        cancel = {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": found[0]}}
        return GivenUp(found[1], response(found[0], CANCELLED_OUTCOME), JsonRpcMessage(cancel))

    def forget(self, drop: Callable[[T], bool]) -> None:
        """Forget the pending requests whose value ``drop`` selects (a closed session's)."""
        self._pending = {k: kept for k, kept in self._pending.items() if not drop(kept[1])}
