"""Session setup across versions: MCP servers, ``session/new``, ``load`` and ``resume``.

Rules this module owns:

- MCP servers gain (v2) or lose (v1) their ``type``; v2 has no SSE transport (dropped,
  reported); v1 requires ``args``/``env`` of a stdio server and ``headers`` of an http one.
- A v1 ``session/load`` is the v2 ``session/resume`` with replay from the start; a v2 resume
  with ``replayFrom`` is the v1 load (replaying all), one without it the v1 resume.
- ``replays_history``: whether a request has the agent send the session's history again
  (``REPLAYS``): a v1 ``session/load`` always, a v2 ``session/resume`` when its ``replayFrom``
  is an object (omitted and ``null`` mean no replay, as the v2 schema says).
- Config options are converted both ways; a v1 agent's modes are shown as one more option
  (``_modes._modes_option``), a v2 agent's mode option as session modes as well
  (``_modes._option_modes``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..convert import Json as _Json
from ..convert import Losses as _Losses
from ..convert import config_option_to_v1 as _config_option_to_v1
from ..convert import config_option_to_v2 as _config_option_to_v2
from ._common import _items, _obj, _pick
from ._modes import _modes_option, _option_modes

# --------------------------------------------------------------------------------------------
# Session setup: MCP servers, config options, new / load / resume


def _mcp_server_to_v2(server: Any, path: str, losses: _Losses) -> _Json | None:
    if not isinstance(server, Mapping):
        losses.lost(path, "not an MCP server: dropped")
        return None
    kind = server.get("type", "stdio")
    if kind == "sse":
        losses.lost(path, "v2 has no SSE MCP transport: server dropped")
        return None
    keys = {
        "stdio": ("name", "command", "args", "env", "_meta"),
        "http": ("name", "url", "headers", "_meta"),
    }
    if kind not in keys:
        losses.lost(path, f"v1 has no MCP server of type {kind!r}: dropped")
        return None
    out = _pick({k: v for k, v in server.items() if k != "type"}, keys[kind], path, losses)
    return {"type": kind, **out}


def _mcp_server_to_v1(server: Any, path: str, losses: _Losses) -> _Json | None:
    if not isinstance(server, Mapping):
        losses.lost(path, "not an MCP server: dropped")
        return None
    kind = server.get("type")
    body = {k: v for k, v in server.items() if k != "type"}
    if kind == "stdio":  # v1's untyped form; `args` and `env` are required in v1
        out = _pick(body, ("name", "command", "args", "env", "_meta"), path, losses)
        out.setdefault("args", [])
        out.setdefault("env", [])
        return out
    if kind == "http":
        out = _pick(body, ("name", "url", "headers", "_meta"), path, losses)
        out.setdefault("headers", [])
        return {"type": "http", **out}
    losses.lost(path, f"v1 has no MCP server of type {kind!r}: dropped")
    return None


_SETUP_KEYS = ("sessionId", "cwd", "additionalDirectories", "mcpServers", "_meta")


def _setup_to_v2(params: Any, losses: _Losses, *, replay: bool = False) -> _Json:
    out = _pick(params, _SETUP_KEYS, "$", losses)
    if "mcpServers" in out:
        out["mcpServers"] = _items(out["mcpServers"], _mcp_server_to_v2, "$.mcpServers", losses)
    if replay:
        out["replayFrom"] = {"type": "start"}
    return out


def _setup_to_v1(params: Any, losses: _Losses) -> _Json:
    out = _pick(params, (*_SETUP_KEYS, "replayFrom"), "$", losses)
    out.pop("replayFrom", None)
    out["mcpServers"] = _items(
        out.get("mcpServers") or [], _mcp_server_to_v1, "$.mcpServers", losses
    )
    return out


REPLAYS: Mapping[str, Callable[[Mapping[str, Any]], bool]] = {
    "session/load": lambda params: True,  # v1: the whole history, always
    "session/resume": lambda params: isinstance(params.get("replayFrom"), Mapping),  # v2
}
"""Per method: whether a request with these params has the agent replay the history."""


def replays_history(method: str, params: Any) -> bool:
    """Whether the request ``method`` with ``params`` has the agent send the history again."""
    replays = REPLAYS.get(method)
    return replays is not None and replays(_obj(params))


def _resume_target(params: Any) -> str:
    return "session/load" if replays_history("session/resume", params) else "session/resume"


def _resume_to_v1(params: Any, losses: _Losses) -> _Json:
    replay = _obj(params).get("replayFrom")
    if isinstance(replay, Mapping) and replay.get("type") != "start":
        losses.lost(
            "$.replayFrom",
            f"v1 replays from the start only, not from {replay.get('type')!r}: replaying all",
        )
    return _setup_to_v1(params, losses)


def _session_result_to_v1(result: Any, losses: _Losses) -> _Json:
    out = _pick(result, ("sessionId", "configOptions", "availableCommands", "_meta"), "$", losses)
    options = out.get("configOptions")
    if "configOptions" in out:
        out["configOptions"] = _items(options, _config_option_to_v1, "$.configOptions", losses)
    modes = _option_modes(options, "$.configOptions", losses)
    if modes is not None:
        out["modes"] = modes
    return out


def _session_result_to_v2(result: Any, losses: _Losses) -> _Json:
    out = _pick(result, ("sessionId", "configOptions", "modes", "_meta"), "$", losses)
    modes = out.pop("modes", None)
    options = out.get("configOptions")
    if isinstance(options, list):
        options = out["configOptions"] = _items(
            options, _config_option_to_v2, "$.configOptions", losses
        )
    else:
        options = None
        out.pop("configOptions", None)  # v1 allows `null`; v2 does not
    option = _modes_option(modes, options, "$.modes", losses)
    if option is not None:
        out["configOptions"] = [*(options or []), option]
    return out
