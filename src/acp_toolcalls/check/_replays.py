"""History replays, as the tool-call lint must know them (D44).

Rules this module owns:

- A client's ``session/load`` (v1), or ``session/resume`` with a non-null ``replayFrom`` (v2),
  asks the agent to send the session's history again before it answers: the client starts
  over, and the tool calls replayed are new to it (the bridges do the same). Which requests
  do is ``lifecycle.replays_history``, the one rule the bridges use too.
- The session starts over at its first tool-call report after such a request, while the
  request is unanswered: a request the agent refuses (``-32602`` for an unknown cursor)
  replays nothing and changes nothing. Starting over bumps the session's *epoch*; the lint
  treats a call seen in an older epoch as unseen.
- A request is unanswered from the request to a response with its id (a result or an error);
  at most ``MAX_PENDING`` are remembered, the oldest forgotten past that.

Sans-I/O: fed the JSON objects of requests and responses (``JsonRpcMessage.data``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..lifecycle import replays_history

__all__ = ["MAX_PENDING", "Replays"]

MAX_PENDING = 64
"""Replay requests remembered while unanswered."""


def _id_key(value: object) -> tuple[bool, object] | None:
    # JSON-RPC ids are strings or numbers; 1 and "1" differ.
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        return None
    return (isinstance(value, str), value)


class Replays:
    """Which sessions start over: ``message`` each request or response, ``report`` each report."""

    __slots__ = ("_epochs", "_pending", "_waiting")

    def __init__(self) -> None:
        self._epochs: dict[str, int] = {}  # sessions started over at least once
        self._pending: dict[tuple[bool, object], str] = {}  # unanswered request -> session
        self._waiting: dict[str, int] = {}  # session -> its requests not yet started over

    def message(self, data: Mapping[str, Any]) -> None:
        """A request or response the lint does not otherwise read."""
        key = _id_key(data.get("id"))
        if key is None:
            return
        method = data.get("method")
        if method is None:
            session = self._pending.pop(key, None)
            if session is not None:
                self._unwait(session)
            return
        params = data.get("params")
        if not isinstance(method, str) or not isinstance(params, dict):
            return
        if not replays_history(method, params):
            return
        session = params.get("sessionId")
        if not isinstance(session, str):
            return
        if key in self._pending:  # a reused id: the earlier request is taken as answered
            self._unwait(self._pending.pop(key))
        self._pending[key] = session
        self._waiting[session] = self._waiting.get(session, 0) + 1
        if len(self._pending) > MAX_PENDING:
            self._unwait(self._pending.pop(next(iter(self._pending))))

    def report(self, session: str) -> int:
        """A tool-call report of ``session``: its epoch, a waiting session started over first."""
        if self._waiting and self._waiting.pop(session, None) is not None:
            self._epochs[session] = self._epochs.get(session, 0) + 1
            for key in [k for k, s in self._pending.items() if s == session]:
                del self._pending[key]  # started: its answer changes nothing more
        return self._epochs.get(session, 0)

    def epoch(self, session: str) -> int:
        """The session's epoch as it stands (0 until it first starts over)."""
        return self._epochs.get(session, 0)

    def _unwait(self, session: str) -> None:
        left = self._waiting.get(session, 0) - 1
        if left > 0:
            self._waiting[session] = left
        else:
            self._waiting.pop(session, None)
