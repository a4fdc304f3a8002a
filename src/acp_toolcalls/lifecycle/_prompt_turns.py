"""Prompt turns across versions: when a turn is acknowledged, ends, or ends in an error.

Rules this module owns (one state machine, which the proxy's core, ``proxy``, and the
converter of whole logs, ``sessions``, both follow; the messages each effect stands for are
mapped by ``_turns``):

- Toward a v1 client (a v2 agent): the agent's ``session/prompt`` result only acknowledges
  the prompt (it has no v1 form); the turn ends at the agent's idle ``state_update`` with a
  stop reason, which ends the oldest open prompt of the session (``End``: the v1 response,
  ``prompt_end_to_v1``). An idle seen before the acknowledgement is kept (``stop``) and ends
  the prompt when the acknowledgement comes. The agent speaking acknowledges nothing.
- Toward a v2 client (a v1 agent): a prompt is acknowledged (``Acknowledge``: ``messageId``,
  the ``user_message`` echo, ``running``: ``prompt_accepted``) as soon as the agent says
  anything about the session (``agent_spoke``, a permission request), or when it is sent if
  the caller says the agent accepts it at once (``prompt_sent(accepted=True)``: a session the
  agent set up); the v1 result ends the turn (``End``: the idle ``state_update`` of
  ``prompt_result_to_v2``), acknowledging it first if it was not. A v1 agent has no idle
  ``state_update``: ``idle`` is refused.
- A turn that ends in an error (the agent's error answer, or the turn aborted: the agent gone,
  given up on) ends as an idle ``state_update`` with stop reason ``error`` when the v2 client
  was told it had started (``EndInError(as_update=True)``), else as a JSON-RPC error
  (``as_update=False``: toward a v1 client always). An answer to a prompt the session does
  not hold is the ``unfollowed`` state's: toward v1 a result is ``NotFollowed``.
- Permission requests (toward a v2 client): while a prompt is open, the first one waiting
  sends ``RequiresAction`` and the answer that leaves none waiting sends ``Running``; one a
  bridge settled itself (withdrawn) sends nothing. ``busy``: a prompt or a permission request
  of the session waits.

Theory of operation: a caller keeps one ``Turns`` per session, made for the version of the
client (``to``), and tells it each event as it sees it; each call returns the effects, in
order, which the caller writes as messages of its own (a connection's lines, a log's
messages). Each prompt has a state (``OPEN``, ``ACKNOWLEDGED``, ``STOPPED``; ``ENDED`` ones
are dropped); a prompt event looks up ``(state, event)`` in the table of the direction
(``TRANSITIONS``), which gives the prompt's next state and its effects; a pair the table lacks
is a caller's bug (``TurnError``). Permission requests move the session between
``NO_PERMISSION`` and ``WAITING`` by ``PERMISSIONS``; their framing goes out only while a
prompt is open. Sans-I/O: no clock, no I/O; no message is built here but the framing's
``state_update`` bodies.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal, TypeAlias

from ..models import VersionName

State = Literal["open", "acknowledged", "stopped", "ended", "unfollowed"]
OPEN: Final = "open"  # sent; toward v2, the client not told it started yet
ACKNOWLEDGED: Final = "acknowledged"  # v1 client: the agent answered; v2: the client was told
STOPPED: Final = "stopped"  # v1 client: the idle that ends it came before the agent's answer
ENDED: Final = "ended"  # its turn ended: the session no longer holds it
UNFOLLOWED: Final = "unfollowed"  # an answer to a prompt the session does not hold

Event = Literal["spoke", "result", "error", "idle", "abort"]
SPOKE: Final = "spoke"  # the agent said something about the session (or took the prompt in)
RESULT: Final = "result"  # the agent's result for the prompt
ERROR: Final = "error"  # the agent's error for the prompt
IDLE: Final = "idle"  # the agent's idle ``state_update`` with a stop reason
ABORT: Final = "abort"  # the turn will not end by the agent: the agent gone, given up on

Phase = Literal["no_permission", "waiting"]
NO_PERMISSION: Final = "no_permission"
WAITING: Final = "waiting"  # permission requests of the session wait for the client

PermissionEvent = Literal[
    "asked", "answered", "answered_last", "withdrawn", "withdrawn_last"
]  # ``_last``: none waits after it


class TurnError(ValueError):
    """An event the machine has no transition for in the state it finds (a caller's bug)."""


@dataclass(frozen=True)
class Acknowledge:
    """Tell the v2 client its prompt started (``prompt_accepted``)."""

    prompt_id: Any
    content: Any


@dataclass(frozen=True)
class End:
    """The turn ends normally. Toward v1, ``stop`` is the idle ``state_update`` whose stop
    reason is the prompt's response (``prompt_end_to_v1``); toward v2 ``stop`` is ``None``:
    the agent's result is the idle update (``prompt_result_to_v2``)."""

    prompt_id: Any
    stop: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class EndInError:
    """The turn ends in an error: as the idle ``state_update`` with stop reason ``error``
    (``as_update``: the v2 client was told it started), else as a JSON-RPC error answer."""

    prompt_id: Any
    as_update: bool


@dataclass(frozen=True)
class NotFollowed:
    """Toward v1: the agent's result for a prompt the session does not hold."""

    prompt_id: Any


@dataclass(frozen=True)
class RequiresAction:
    """The session waits for the client's answer to a permission request (``update``)."""

    @property
    def update(self) -> dict[str, Any]:
        """The v2 ``session/update`` body that says so."""
        return {"sessionUpdate": "state_update", "state": "requires_action"}


@dataclass(frozen=True)
class Running:
    """The client answered the last permission request waiting: the turn runs again
    (``update``)."""

    @property
    def update(self) -> dict[str, Any]:
        """The v2 ``session/update`` body that says so."""
        return {"sessionUpdate": "state_update", "state": "running"}


TurnEffect: TypeAlias = Acknowledge | End | EndInError | NotFollowed | RequiresAction | Running


class _Prompt:
    __slots__ = ("content", "id", "state", "stop")

    def __init__(self, prompt_id: Any, content: Any, state: State = OPEN) -> None:
        self.id = prompt_id
        self.content = content  # toward v2: echoed when it is acknowledged
        self.state: State = state
        self.stop: Mapping[str, Any] | None = None  # toward v1: the idle that ends it


_Make = Callable[[_Prompt], TurnEffect]


def _acknowledge(prompt: _Prompt) -> TurnEffect:
    return Acknowledge(prompt.id, prompt.content)


def _end(prompt: _Prompt) -> TurnEffect:
    return End(prompt.id, prompt.stop)


def _error_update(prompt: _Prompt) -> TurnEffect:
    return EndInError(prompt.id, as_update=True)


def _error_answer(prompt: _Prompt) -> TurnEffect:
    return EndInError(prompt.id, as_update=False)


def _not_followed(prompt: _Prompt) -> TurnEffect:
    return NotFollowed(prompt.id)


Transitions: TypeAlias = Mapping[tuple[State, Event], tuple[State, tuple[_Make, ...]]]

_TO_V1: Transitions = {
    (OPEN, SPOKE): (OPEN, ()),  # a v2 agent's prompt is acknowledged by its result only
    (ACKNOWLEDGED, SPOKE): (ACKNOWLEDGED, ()),
    (STOPPED, SPOKE): (STOPPED, ()),
    (OPEN, RESULT): (ACKNOWLEDGED, ()),  # the v2 acknowledgement has no v1 form
    (ACKNOWLEDGED, RESULT): (ACKNOWLEDGED, ()),  # (a reused id: the first prompt of it)
    (STOPPED, RESULT): (ENDED, (_end,)),  # the idle kept ends it now
    (UNFOLLOWED, RESULT): (UNFOLLOWED, (_not_followed,)),
    (OPEN, IDLE): (STOPPED, ()),  # kept until the agent answers the prompt
    (STOPPED, IDLE): (STOPPED, ()),  # the later idle is kept
    (ACKNOWLEDGED, IDLE): (ENDED, (_end,)),
    (OPEN, ERROR): (ENDED, (_error_answer,)),
    (ACKNOWLEDGED, ERROR): (ENDED, (_error_answer,)),
    (STOPPED, ERROR): (ENDED, (_error_answer,)),
    (UNFOLLOWED, ERROR): (ENDED, (_error_answer,)),
    (OPEN, ABORT): (ENDED, (_error_answer,)),
    (ACKNOWLEDGED, ABORT): (ENDED, (_error_answer,)),
    (STOPPED, ABORT): (ENDED, (_error_answer,)),
    (UNFOLLOWED, ABORT): (ENDED, (_error_answer,)),
}
_TO_V2: Transitions = {
    (OPEN, SPOKE): (ACKNOWLEDGED, (_acknowledge,)),
    (ACKNOWLEDGED, SPOKE): (ACKNOWLEDGED, ()),
    (OPEN, RESULT): (ENDED, (_acknowledge, _end)),
    (ACKNOWLEDGED, RESULT): (ENDED, (_end,)),
    (UNFOLLOWED, RESULT): (ENDED, (_end,)),  # the v1 response still ends the client's turn
    (OPEN, ERROR): (ENDED, (_error_answer,)),  # refused before it was acknowledged
    (ACKNOWLEDGED, ERROR): (ENDED, (_error_update,)),
    (UNFOLLOWED, ERROR): (ENDED, (_error_answer,)),
    (OPEN, ABORT): (ENDED, (_error_answer,)),
    (ACKNOWLEDGED, ABORT): (ENDED, (_error_update,)),
    (UNFOLLOWED, ABORT): (ENDED, (_error_answer,)),
}
TRANSITIONS: Mapping[VersionName, Transitions] = {"v1": _TO_V1, "v2": _TO_V2}
"""By the client's version: ``(state, event)`` of a prompt -> its next state, its effects."""

_FRAMED: Mapping[VersionName, bool] = {"v1": False, "v2": True}
PERMISSIONS: Mapping[tuple[Phase, PermissionEvent], tuple[Phase, TurnEffect | None]] = {
    (NO_PERMISSION, "asked"): (WAITING, RequiresAction()),
    (WAITING, "asked"): (WAITING, None),
    (WAITING, "answered"): (WAITING, None),
    (WAITING, "answered_last"): (NO_PERMISSION, Running()),
    (NO_PERMISSION, "answered_last"): (NO_PERMISSION, Running()),  # (its session was forgotten)
    (WAITING, "withdrawn"): (WAITING, None),
    (WAITING, "withdrawn_last"): (NO_PERMISSION, None),  # a bridge settled it: no framing
    (NO_PERMISSION, "withdrawn_last"): (NO_PERMISSION, None),
}
"""A session's permission requests: ``(phase, event)`` -> its next phase, and the framing sent
toward a v2 client while a prompt of it is open."""


def transition(to: VersionName, state: State, event: Event) -> tuple[State, tuple[_Make, ...]]:
    """The prompt's next state and its effects' makers, by the table of the client's version
    ``to``; raises ``TurnError`` for a pair the table lacks."""
    found = TRANSITIONS[to].get((state, event))
    if found is None:
        raise TurnError(
            f"toward a {to} client, a prompt in state {state!r} has no transition for the "
            f"event {event!r}"
        )
    return found


class Turns:
    """One session's prompt turns and permission requests, converted for a client of version
    ``to``. Each event method returns the effects, in order (see the module)."""

    __slots__ = ("_phase", "_prompts", "permissions", "to")

    def __init__(self, to: VersionName) -> None:
        if to not in TRANSITIONS:
            raise ValueError(f"unknown version {to!r}: expected 'v1' or 'v2'")
        self.to: VersionName = to
        self._prompts: list[_Prompt] = []  # open, oldest first
        self.permissions = 0  # permission requests waiting for the client's answer
        self._phase: Phase = NO_PERMISSION

    @property
    def open(self) -> bool:
        """A prompt of the session waits for its turn's end."""
        return bool(self._prompts)

    @property
    def busy(self) -> bool:
        """A prompt or a permission request of the session waits."""
        return bool(self._prompts or self.permissions)

    @property
    def unacknowledged(self) -> bool:
        """A prompt of the session was not acknowledged yet."""
        return any(prompt.state != ACKNOWLEDGED for prompt in self._prompts)

    def prompt_ids(self) -> list[Any]:
        """The ids of the open prompts, oldest first."""
        return [prompt.id for prompt in self._prompts]

    def state_of(self, prompt_id: Any) -> State:
        """The state of the first open prompt of ``prompt_id`` (``unfollowed``: none)."""
        prompt = self._find(prompt_id)
        return prompt.state if prompt is not None else UNFOLLOWED

    # ----------------------------------------------------------------------------------------
    # Prompt events

    def prompt_sent(
        self, prompt_id: Any, content: Any, *, accepted: bool = False
    ) -> list[TurnEffect]:
        """The client's prompt goes to the agent (``content``: the prompt, in v2).
        ``accepted``: the agent takes it in at once (``spoke``, for this prompt only)."""
        prompt = _Prompt(prompt_id, content)
        self._prompts.append(prompt)
        return self._step(prompt, SPOKE) if accepted else []

    def agent_spoke(self) -> list[TurnEffect]:
        """The agent said something about the session: every open prompt hears ``spoke``."""
        effects: list[TurnEffect] = []
        for prompt in list(self._prompts):
            effects += self._step(prompt, SPOKE)
        return effects

    def answered(self, prompt_id: Any, *, error: bool) -> list[TurnEffect]:
        """The agent's result (or ``error``) for the prompt ``prompt_id``."""
        return self._step(self._find_or_unfollowed(prompt_id), ERROR if error else RESULT)

    def idle(self, stop: Mapping[str, Any]) -> list[TurnEffect]:
        """The agent's idle ``state_update`` with a stop reason (``stop``): the oldest open
        prompt hears it (none open: nothing)."""
        if not self._prompts:
            transition(self.to, OPEN, IDLE)  # refused where a prompt would refuse it
            return []
        prompt = self._prompts[0]
        transition(self.to, prompt.state, IDLE)  # (refused before anything changes)
        prompt.stop = dict(stop)
        return self._step(prompt, IDLE)

    def abort(self, prompt_id: Any) -> list[TurnEffect]:
        """The turn of ``prompt_id`` will not end by the agent."""
        return self._step(self._find_or_unfollowed(prompt_id), ABORT)

    def abort_all(self) -> list[TurnEffect]:
        """No turn of the session will end by the agent (it is gone)."""
        effects: list[TurnEffect] = []
        for prompt in list(self._prompts):
            effects += self._step(prompt, ABORT)
        return effects

    # ----------------------------------------------------------------------------------------
    # Permission events

    def permission_asked(self) -> list[TurnEffect]:
        """A permission request of the agent goes to the client (the agent spoke, too)."""
        effects = self.agent_spoke()
        self.permissions += 1
        return effects + self._permission("asked")

    def permission_answered(self) -> list[TurnEffect]:
        """The client answered a permission request of the session."""
        self.permissions = max(0, self.permissions - 1)
        return self._permission("answered" if self.permissions else "answered_last")

    def permission_withdrawn(self) -> list[TurnEffect]:
        """A permission request was settled without the client (a bridge answered it)."""
        self.permissions = max(0, self.permissions - 1)
        return self._permission("withdrawn" if self.permissions else "withdrawn_last")

    # ----------------------------------------------------------------------------------------

    def _find(self, prompt_id: Any) -> _Prompt | None:
        return next((p for p in self._prompts if p.id == prompt_id), None)

    def _find_or_unfollowed(self, prompt_id: Any) -> _Prompt:
        found = self._find(prompt_id)
        return found if found is not None else _Prompt(prompt_id, None, UNFOLLOWED)

    def _step(self, prompt: _Prompt, event: Event) -> list[TurnEffect]:
        state, makers = transition(self.to, prompt.state, event)
        prompt.state = state
        if state == ENDED and prompt in self._prompts:
            self._prompts.remove(prompt)
        return [make(prompt) for make in makers]

    def _permission(self, event: PermissionEvent) -> list[TurnEffect]:
        self._phase, framing = PERMISSIONS[(self._phase, event)]
        return [framing] if framing is not None and self._prompts and _FRAMED[self.to] else []
