"""A v2 agent's mode config option, shown to a v1 client as session modes (``ToV1Client``).

Rules this module owns (the mapping itself is ``lifecycle.AgentModes``):

- A session whose setup result showed the agent's mode option as modes keeps an
  ``AgentModes`` (``_Session.agent_modes``); any other session has no modes for a v1 client.
- The client's ``session/set_mode`` is that option's ``session/set_config_option``, under an id
  of ours, answered once: ``{}`` (``MODE_OPTION_TO_V2``), then the agent's options as a
  ``config_option_update`` and, when the agent chose another mode than asked, a
  ``current_mode_update``; the agent's error is the client's. A session with no modes shown
  is answered ``-32601`` (``NO_V2``), a ``modeId`` that is no string ``-32602``.
- Whenever the agent's options show another mode than the client was told (its
  ``config_option_update``, a ``session/set_config_option`` result), the client is sent a
  ``current_mode_update`` after them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..lifecycle import NO_V2, AgentModes, jsonrpc
from ..models import INVALID_PARAMS, METHOD_NOT_FOUND
from . import _routing as rpc

if TYPE_CHECKING:
    from ._sessions import Core, _Session

_SET_MODE = "session/set_mode"


def _modes(core: Core, session_id: Any) -> AgentModes | None:
    session = core.sessions.get(session_id)
    return session.agent_modes if session is not None else None


def set_mode(core: Core, request_id: Any, params: Any) -> None:
    """The client's ``session/set_mode``: sent as the mode option's, or refused."""
    session_id = params.get("sessionId") if isinstance(params, dict) else None
    modes = _modes(core, session_id)
    invalid = AgentModes.invalid(params)
    if modes is None or invalid is not None:
        code, why = (
            (METHOD_NOT_FOUND, NO_V2[_SET_MODE]) if modes is None else (INVALID_PARAMS, invalid)
        )
        core.output.client(jsonrpc.error(request_id, code, str(why)))
        core.output.note("client", f"{_SET_MODE}: {why}")
        return
    mapped = modes.request(params)
    core.output.losses("client", _SET_MODE, mapped.losses)
    pending = rpc.Pending(request_id, _SET_MODE, session_id, ("mode", params.get("modeId")))
    target = "session/set_config_option"
    core.output.agent(jsonrpc.request(core.agent_requests.allocate(pending), target, mapped.value))


def answered(core: Core, pending: rpc.Pending, result: Any) -> None:
    """After the answer to a client request: what the client is told of the modes."""
    modes = _modes(core, pending.session_id)
    if modes is None:
        return
    if pending.method == _SET_MODE and isinstance(pending.params, tuple):
        mapped = modes.selected(pending.params[1], result)
        core.output.losses("agent", "session/set_config_option result", mapped.losses)
        updates: tuple[Any, ...] = mapped.updates
    else:
        options = result.get("configOptions") if isinstance(result, dict) else None
        updates = (modes.observe(options),)
    for update in updates:
        if update is not None:
            core.output.client(jsonrpc.update(pending.session_id, update))


def options_changed(core: Core, session: _Session, session_id: Any, update: Any) -> None:
    """The agent's ``config_option_update`` (v2 shape) went to the client: the mode too."""
    modes = session.agent_modes
    if modes is not None and isinstance(update, dict):
        changed = modes.observe(update.get("configOptions"))
        if changed is not None:
            core.output.client(jsonrpc.update(session_id, changed))
