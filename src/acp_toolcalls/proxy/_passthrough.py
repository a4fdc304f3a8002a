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
  reaches the agent as ``cancelled`` under its id, reported (D34 amended 2026-12-06); the
  note and its reasons are ``ambiguous_answer``'s, which converting uses too (``_permissions``).

``PassThroughLines`` is a component of the core: it holds the sessions whose turn runs
(``turns``) and reads the core's output and the ids of the client's requests to the agent.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import msgspec
from msgspec import UNSET

from ..codec import Diagnostic, duplicate_keys
from ..convert import answer_ambiguity
from ..lifecycle import jsonrpc
from ..models import CANCELLED_OUTCOME, request_key
from . import _routing as rpc
from ._output import Output
from ._policy import PassThrough, Policy

_PERMISSION_METHOD = b'"session/request_permission"'
_METHOD_FIRST = (b'{"jsonrpc":"2.0","method":', b'{"jsonrpc": "2.0", "method": ', b'{"method":')
"""How lines whose first top-level member (after ``jsonrpc``) is ``method`` open."""


class PassThroughLines:
    """What pass-through reads of the lines it forwards: the client's requests it waits for
    (``agent_requests``, the core's) and, for a v2 client, the sessions whose turn the agent
    acknowledged (``turns``: key -> session id). ``policy``: the core's, given per call."""

    def __init__(self, output: Output, agent_requests: rpc.RequestIds) -> None:
        self.turns: dict[Any, Any] = {}
        self._output = output
        self._agent_requests = agent_requests

    def forget_turns(self) -> list[Any]:
        """The sessions whose turn runs (the agent is gone: none will end), forgotten."""
        running = list(self.turns.values())
        self.turns.clear()
        return running

    def track(self, line: bytes, policy: Policy) -> bytes:
        """What the client's line makes the client wait for; the line to forward (itself, or
        an ambiguous permission answer as ``cancelled``: ``_checked_answers``)."""
        try:
            parsed = rpc.read_line.decode(line)
        except (msgspec.DecodeError, RecursionError):
            return line  # the agent answers it (-32700); nothing to wait for
        asked = _asked(policy)
        answers = False
        for item in parsed if isinstance(parsed, list) else (parsed,):
            envelope = _as_envelope(item)
            if envelope is None or envelope.id is UNSET:
                continue
            if envelope.method is not UNSET:
                session_id = _session_of(envelope) if envelope.method == "session/prompt" else None
                pending = rpc.Pending(envelope.id, envelope.method, session_id)
                self._agent_requests.keep(envelope.id, pending)
            elif asked and request_key(envelope.id) in asked:
                answers = True
        return self._checked_answers(line, parsed, asked) if answers else line

    def _checked_answers(self, line: bytes, parsed: Any, asked: dict[Any, frozenset[str]]) -> bytes:
        """The client's answers in ``line`` to the agent's permission requests (``asked``):
        one that is ambiguous (``ambiguous_answer``) is sent as ``cancelled`` under its id."""
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
            if ambiguous_answer(self._output, message, own, offered) is None:
                continue
            answer = jsonrpc.result(message["id"], CANCELLED_OUTCOME)
            if batch:
                value[index] = answer
            else:
                value = answer
            changed = True
        return msgspec.json.encode(value) if changed else line

    def unique_options(self, line: bytes, policy: Policy) -> bytes:
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
                        self._output.note(
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
                self._output.limit(
                    "max_pending_permissions",
                    f"{policy.max_asked} permission requests wait for the client: the "
                    "oldest one's answer will not be checked",
                )
        return msgspec.json.encode(value) if changed else line

    def agent_lines(self, lines: Sequence[bytes], policy: Policy) -> None:
        """The agent's lines of one read, to the client, kept to byte checks per line; a line
        whose handling raises (a bug) costs that line alone (noted with its index)."""
        output = self._output
        to_client = output.box.to_client
        for index, line in enumerate(lines):
            try:
                if self._agent_requests.pending or self.turns:
                    self.untrack(line, policy)
                if _PERMISSION_METHOD in line:
                    output.line = index
                    line = self.unique_options(line, policy)
            except Exception as exc:  # a bug must cost this line, not the others
                output.line = index
                output.bug("agent", exc)
            else:
                to_client.append(line)
            output.line = None

    def untrack(self, line: bytes, policy: Policy) -> None:
        """What the client waits for that an agent line settles: an answer, and (v2) the idle
        ``state_update`` that ends a turn the agent acknowledged."""
        ending = bool(self.turns) and b'"idle"' in line
        if not ending and (not self._agent_requests.pending or line.startswith(_METHOD_FIRST)):
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
                pending = self._agent_requests.pop(envelope.id)
                if (
                    pending is not None
                    and pending.method == "session/prompt"
                    and policy.tracks_turns
                    and envelope.error is UNSET
                ):
                    key = request_key(pending.session_id)
                    self.turns[key] = pending.session_id  # acknowledged: the turn runs
            elif ending and envelope.method == "session/update":
                params = _plain_or_none(envelope.params)
                body = params.get("update") if isinstance(params, dict) else None
                if isinstance(body, dict) and body.get("state") == "idle":
                    self.turns.pop(request_key(params.get("sessionId")), None)


def ambiguous_answer(
    output: Output, answer: Any, repeated: Sequence[Diagnostic], offered: frozenset[str]
) -> str | None:
    """Why the client's answer ``answer`` (``repeated``: the keys its text repeats) to a
    permission request that offered ``offered`` is no selection, noted; ``None``: it may be
    one. Only an exactly offered id in an unambiguous answer is a selection (D34 amended
    2026-12-06): a key the answer repeats (a reader that keeps the first value could mean the
    opposite of one that keeps the last), both ``result`` and ``error``, an id never offered."""
    if repeated:
        why = f"a repeated key at {repeated[0].path}"
    elif isinstance(answer, dict):
        found = answer_ambiguity(answer, offered)
        if found is None:
            return None
        why = found
    else:
        return None
    output.note(
        "client",
        f"an ambiguous answer to a permission request ({why}): the agent is answered `cancelled`",
        "error",
    )
    return why


def _asked(policy: Policy) -> dict[Any, frozenset[str]]:
    """The agent's permission requests the client has not answered, and their option ids."""
    return policy.asked if isinstance(policy, PassThrough) else {}


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
