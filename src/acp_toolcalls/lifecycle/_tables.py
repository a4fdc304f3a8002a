"""The method tables: how each client request of one version is sent to an agent of the other.

Rules this module owns:

- Every client -> agent method of one version maps to one method of the other, in the tables
  ``TO_V2`` (a v1 client's request for a v2 agent, and that agent's result back in v1) and
  ``TO_V1`` (the reverse). A method with no counterpart is in ``NO_V2``/``NO_V1`` with the
  reason a proxy answers it with; a method in no table (``_``-prefixed extensions, methods of a
  newer version) passes through unchanged.
- Renames: ``authenticate`` <-> ``auth/login``, ``logout`` <-> ``auth/logout``.
- A v1 ``session/set_mode`` for modes shown as the config option ``MODE_CONFIG_ID`` is the v2
  ``session/set_config_option`` of that option (``MODES_TO_V2``; its result is
  ``Modes.selected``), the reverse of ``MODES_TO_V1``. For a v2 agent whose own mode option a
  v1 client is shown as session modes, it is that option's (``MODE_OPTION_TO_V2``, the option
  named by ``AgentModes.request``), answered ``{}``.
- Results that v1 cannot carry in place (a v2 response's ``availableCommands``) come back as
  session updates to send after the response (``Mapped.updates``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..convert import Json as _Json
from ..convert import Losses as _Losses
from ..convert import block_to_v1 as _block_to_v1
from ..convert import block_to_v2 as _block_to_v2
from ..convert import command_to_v1 as _command_to_v1
from ._common import Mapped, MethodMap, _copy, _items, _to
from ._initialize import (
    _initialize_params_to_v1,
    _initialize_params_to_v2,
    _initialize_result_to_v1,
    _initialize_result_to_v2,
)
from ._modes import (
    _config_result_to_v1,
    _config_result_to_v2,
    _set_config_to_v1,
    _set_config_to_v2,
    _set_mode_params,
    _set_mode_result_to_v1,
    _set_mode_to_config,
)
from ._sessions import (
    _resume_target,
    _resume_to_v1,
    _session_result_to_v1,
    _session_result_to_v2,
    _setup_to_v1,
    _setup_to_v2,
)
from ._turns import _prompt_to

_SESSION_ID = _copy(("sessionId", "_meta"))
_META = _copy(("_meta",))
_LIST_PARAMS = _copy(("cwd", "cursor", "_meta"))
_LIST_RESULT = _copy(("sessions", "nextCursor", "_meta"))
_AUTH_PARAMS = _copy(("methodId", "_meta"))


TO_V2: dict[str, MethodMap] = {
    "initialize": MethodMap(_to("initialize"), _initialize_params_to_v2, _initialize_result_to_v1),
    "authenticate": MethodMap(_to("auth/login"), _AUTH_PARAMS, _META),
    "logout": MethodMap(_to("auth/logout"), _META, _META),
    "session/new": MethodMap(
        _to("session/new"), _setup_to_v2, _session_result_to_v1, "availableCommands"
    ),
    "session/load": MethodMap(
        _to("session/resume"),
        lambda params, losses: _setup_to_v2(params, losses, replay=True),
        _session_result_to_v1,
        "availableCommands",
    ),
    "session/resume": MethodMap(
        _to("session/resume"), _setup_to_v2, _session_result_to_v1, "availableCommands"
    ),
    "session/list": MethodMap(_to("session/list"), _LIST_PARAMS, _LIST_RESULT),
    "session/close": MethodMap(_to("session/close"), _SESSION_ID, _META),
    "session/delete": MethodMap(_to("session/delete"), _SESSION_ID, _META),
    "session/set_config_option": MethodMap(
        _to("session/set_config_option"), _set_config_to_v2, _config_result_to_v1
    ),
    "session/prompt": MethodMap(_to("session/prompt"), _prompt_to(_block_to_v2), None),
}
"""A v1 client's requests to a v2 agent: by v1 method."""

TO_V1: dict[str, MethodMap] = {
    "initialize": MethodMap(_to("initialize"), _initialize_params_to_v1, _initialize_result_to_v2),
    "auth/login": MethodMap(_to("authenticate"), _AUTH_PARAMS, _META),
    "auth/logout": MethodMap(_to("logout"), _META, _META),
    "session/new": MethodMap(_to("session/new"), _setup_to_v1, _session_result_to_v2),
    "session/resume": MethodMap(_resume_target, _resume_to_v1, _session_result_to_v2),
    "session/list": MethodMap(_to("session/list"), _LIST_PARAMS, _LIST_RESULT),
    "session/close": MethodMap(_to("session/close"), _SESSION_ID, _META),
    "session/delete": MethodMap(_to("session/delete"), _SESSION_ID, _META),
    "session/set_config_option": MethodMap(
        _to("session/set_config_option"), _set_config_to_v1, _config_result_to_v2
    ),
    "session/prompt": MethodMap(_to("session/prompt"), _prompt_to(_block_to_v1), None),
}
"""A v2 client's requests to a v1 agent: by v2 method."""

NO_V2: dict[str, str] = {
    "session/set_mode": "the agent speaks ACP v2, which has no session modes (its modes are "
    "config options: use session/set_config_option)",
}
"""v1 client methods a v2 agent has no counterpart for, and why (the proxy answers -32601)."""

NO_V1: dict[str, str] = {
    "tool_call/cancel": "the agent speaks ACP v1, which cannot cancel one tool call (it never "
    "advertised `capabilities.cancel`)",
    "terminal/cancel": "the agent speaks ACP v1, which has no agent-owned terminals to cancel",
}
"""v2 client methods a v1 agent has no counterpart for, and why (the proxy answers -32602:
the spec's answer to a cancel of something not cancellable)."""

MODES_TO_V1: dict[str, MethodMap] = {
    "session/set_config_option": MethodMap(_to("session/set_mode"), _set_mode_params, None)
}
"""A v2 client's ``session/set_config_option`` of the mode option shown for a v1 agent's
modes (``Modes``): the v1 ``session/set_mode``; its result is ``Modes.selected``."""

MODES_TO_V2: dict[str, MethodMap] = {
    "session/set_mode": MethodMap(_to("session/set_config_option"), _set_mode_to_config, None)
}
"""A v1 client's ``session/set_mode`` of modes shown as a config option (``Modes``): the v2
``session/set_config_option`` of ``MODE_CONFIG_ID``; its result is ``Modes.selected``."""

MODE_OPTION_TO_V2: dict[str, MethodMap] = {
    "session/set_mode": MethodMap(
        _to("session/set_config_option"), _set_mode_to_config, _set_mode_result_to_v1
    )
}
"""A v1 client's ``session/set_mode`` for a v2 agent whose mode config option it is shown as
session modes (``AgentModes``): that option's ``session/set_config_option`` (``AgentModes.request``
names it), answered ``{}``; the agent's options follow as a ``config_option_update``
(``AgentModes.selected``)."""


def map_params(table: Mapping[str, MethodMap], method: str, params: Any) -> tuple[str, Mapped]:
    """The agent-side method and params for a client request ``method`` (in ``table``)."""
    entry = table[method]
    losses = _Losses(False)
    return entry.target(params), Mapped(entry.params(params, losses), losses.report())


def map_result(table: Mapping[str, MethodMap], method: str, result: Any) -> Mapped:
    """The client-side result of the agent's answer to a client request ``method``."""
    entry = table[method]
    if entry.result is None:
        raise ValueError(f"{method} results are answered by the connection, not mapped")
    losses = _Losses(False)
    value = entry.result(result, losses)
    updates: tuple[_Json, ...] = ()
    if entry.commands_key is not None and isinstance(value, dict):
        commands = value.pop(entry.commands_key, None)
        if isinstance(commands, list):
            mapped = _items(commands, _command_to_v1, f"$.{entry.commands_key}", losses)
            updates = ({"sessionUpdate": "available_commands_update", "availableCommands": mapped},)
    return Mapped(value, losses.report(), updates)
