"""The session-lifecycle methods across versions: initialize, auth, session setup, prompts.

Rules this module owns (the v2 migration guide's method table, ``docs/protocol/v2/migration.mdx``,
for what a proxy between a v1 and a v2 peer must map; tool calls and permissions are the
bridges' and converters' job, shared/spec/TOOL-CALLS.md 9):

- Every client -> agent method of one version maps to one method of the other, in the tables
  ``TO_V2`` (a v1 client's request for a v2 agent, and that agent's result back in v1) and
  ``TO_V1`` (the reverse). A method with no counterpart is in ``NO_V2``/``NO_V1`` with the
  reason a proxy answers it with; a method in no table (``_``-prefixed extensions, methods of a
  newer version) passes through unchanged.
- Params and results are mapped as JSON values: they are outside the typed tool-call surface.
  Mappings never change their input; every field they drop, invent or cannot carry is a
  ``Loss`` (``strict`` is not offered: a proxy cannot refuse a lifecycle message).
- Capabilities: v1 booleans become v2 presence objects (``{}``) and back; v2 nests the
  session-scoped groups under ``session``. Toward a v1 agent the client never advertises ``fs``
  or ``terminal`` (a v2 client cannot serve them, D38) and advertises what every v2 client
  handles (notices, compaction, boolean config options). Toward a v1 client a v2 agent with
  ``session`` is given ``loadSession`` and the list/resume/close markers: they are v2's
  baseline, and ``session/load`` maps to ``session/resume`` with replay from the start.
- Renames: ``authenticate`` <-> ``auth/login``, ``logout`` <-> ``auth/logout``, ``id`` <->
  ``methodId`` on auth methods, ``id`` <-> ``configId`` and ``group`` <-> ``groupId`` on config
  options; MCP servers gain (v2) or lose (v1) their ``type``; ``info`` is required in v2 and
  made up, reported, when a v1 peer sent none.
- ``session/prompt`` maps its params here; its result does not map (v1 answers at the end of
  the turn, v2 at once): the connection layer answers it (connection.py).
- Results that v1 cannot carry in place (a v2 response's ``availableCommands``) come back as
  session updates to send after the response (``Mapped.updates``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .loss import UNKNOWN_KEY, LossReport
from .v1_to_v2 import _block_to_v2, _config_option_to_v2, _Json, _Losses
from .v2_to_v1 import _block_to_v1, _command_to_v1, _config_option_to_v1

__all__ = [
    "NO_V1",
    "NO_V2",
    "TO_V1",
    "TO_V2",
    "Mapped",
    "MethodMap",
    "map_params",
    "map_result",
]

UNKNOWN_IMPLEMENTATION: _Json = {"name": "unknown", "version": "0"}
"""The ``info`` a v2 peer is given for a v1 peer that sent no ``clientInfo``/``agentInfo``."""


@dataclass(frozen=True)
class Mapped:
    """A mapped params or result value, what it lost, and session updates to send after it."""

    value: Any
    losses: LossReport = field(default_factory=LossReport)
    updates: tuple[_Json, ...] = ()
    """``session/update`` payloads (``update`` objects) to send to the client after the
    response, in the client's version."""


_Mapper = Callable[[Any, _Losses], Any]


@dataclass(frozen=True)
class MethodMap:
    """How one method of the client's version is sent to an agent of the other version."""

    target: Callable[[Any], str]
    """The agent-side method, from the params (``session/resume`` becomes ``session/load`` or
    ``session/resume`` by its ``replayFrom``)."""
    params: _Mapper
    """Client-version params -> agent-version params."""
    result: _Mapper | None
    """Agent-version result -> client-version result; ``None``: answered by the connection."""
    commands_key: str | None = None
    """A result key holding available commands that the client's version carries as an
    ``available_commands_update`` instead (v2 -> v1)."""


def _to(method: str) -> Callable[[Any], str]:
    return lambda params: method


# --------------------------------------------------------------------------------------------
# Small JSON helpers


def _obj(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _pick(value: Any, keys: tuple[str, ...], path: str, losses: _Losses) -> _Json:
    """``value``'s keys among ``keys``; any other key dropped and reported (D19)."""
    out: _Json = {}
    for key, item in _obj(value).items():
        if key in keys:
            out[key] = item
        else:
            losses.lost(f"{path}.{key}", UNKNOWN_KEY)
    return out


def _present(value: Any, *keys: str) -> bool:
    """Whether the v2 support marker at ``value.keys[0].keys[1]...`` is there (an object)."""
    for key in keys:
        value = _obj(value).get(key)
    return isinstance(value, Mapping)


def _marker(flag: Any) -> _Json | None:
    """A v1 boolean as a v2 support marker."""
    return {} if flag is True else None


def _without_none(values: _Json) -> _Json:
    return {key: value for key, value in values.items() if value is not None}


def _items(
    value: Any, convert: Callable[[Any, str, _Losses], Any], path: str, losses: _Losses
) -> Any:
    if not isinstance(value, list):
        return value
    converted = (convert(item, f"{path}[{i}]", losses) for i, item in enumerate(value))
    return [item for item in converted if item is not None]


def _meta(source: Mapping[str, Any], out: _Json) -> _Json:
    if isinstance(source.get("_meta"), Mapping):
        out["_meta"] = source["_meta"]
    return out


_IMPLEMENTATION_KEYS = ("name", "title", "version", "_meta")


def _implementation(value: Any, path: str, losses: _Losses, *, required: bool) -> _Json | None:
    if isinstance(value, Mapping) and isinstance(value.get("name"), str):
        info = _pick(value, _IMPLEMENTATION_KEYS, path, losses)
        info.setdefault("version", "0")
        return info
    if required:
        losses.lost(
            path, f"v2 requires `info`; the v1 peer sent none: sent {UNKNOWN_IMPLEMENTATION}"
        )
        return dict(UNKNOWN_IMPLEMENTATION)
    return None


# --------------------------------------------------------------------------------------------
# initialize


def _client_capabilities_to_v2(caps: Mapping[str, Any], losses: _Losses) -> _Json:
    fs = _obj(caps.get("fs"))
    if fs.get("readTextFile") is True or fs.get("writeTextFile") is True:
        losses.lost(
            "$.clientCapabilities.fs",
            "v2 has no client file system: the agent reads and writes files itself",
        )
    if caps.get("terminal") is True:
        losses.lost(
            "$.clientCapabilities.terminal",
            "v2 has no client terminals: the agent runs commands itself",
        )
    auth = _obj(caps.get("auth"))
    out = _without_none(
        {
            "auth": {"terminal": {}} if auth.get("terminal") is True else None,
            "elicitation": caps.get("elicitation")
            if isinstance(caps.get("elicitation"), Mapping)
            else None,
        }
    )
    return _meta(caps, out)


def _initialize_params_to_v2(params: Any, losses: _Losses) -> _Json:
    params = _obj(params)
    return _meta(
        params,
        {
            "protocolVersion": 2,
            "info": _implementation(
                params.get("clientInfo"), "$.clientInfo", losses, required=True
            ),
            "capabilities": _client_capabilities_to_v2(
                _obj(params.get("clientCapabilities")), losses
            ),
        },
    )


def _client_capabilities_to_v1(caps: Mapping[str, Any]) -> _Json:
    out: _Json = {
        "fs": {"readTextFile": False, "writeTextFile": False},  # never served by a v2 client (D38)
        "terminal": False,
        "auth": {"terminal": _present(caps, "auth", "terminal")},
        # What every v2 client handles: notices and compaction are v2 baseline updates.
        "session": {"notices": {}, "compaction": {}, "configOptions": {"boolean": {}}},
    }
    if isinstance(caps.get("elicitation"), Mapping):
        out["elicitation"] = caps["elicitation"]
    return _meta(caps, out)


def _initialize_params_to_v1(params: Any, losses: _Losses) -> _Json:
    params = _obj(params)
    out: _Json = {
        "protocolVersion": 1,
        "clientCapabilities": _client_capabilities_to_v1(_obj(params.get("capabilities"))),
    }
    info = _implementation(params.get("info"), "$.info", losses, required=False)
    if info is not None:
        out["clientInfo"] = info
    return _meta(params, out)


def _agent_capabilities_to_v1(caps: Mapping[str, Any], losses: _Losses) -> _Json:
    session = caps.get("session")
    out: _Json = {
        "loadSession": isinstance(session, Mapping),
        "promptCapabilities": {
            key: _present(session, "prompt", key) for key in ("image", "audio", "embeddedContext")
        },
        "mcpCapabilities": {"http": _present(session, "mcp", "http"), "sse": False},
        "sessionCapabilities": {},
        "auth": {"logout": {}},  # v2 agents must support `auth/logout`
    }
    if isinstance(session, Mapping):
        markers: _Json = {"list": {}, "resume": {}, "close": {}}  # v2 baseline
        for key in ("delete", "additionalDirectories"):
            if isinstance(session.get(key), Mapping):
                markers[key] = session[key]
        out["sessionCapabilities"] = markers
        if not _present(session, "mcp", "stdio"):
            losses.lost(
                "$.capabilities.session.mcp.stdio",
                "the agent cannot launch stdio MCP servers, which v1 cannot say",
            )
    return _meta(caps, out)


def _auth_method_to_v1(method: Any, path: str, losses: _Losses) -> _Json | None:
    if not isinstance(method, Mapping) or not isinstance(method.get("methodId"), str):
        losses.lost(path, "not a valid auth method: dropped")
        return None
    kind = method.get("type")
    keys: tuple[str, ...] = ("methodId", "name", "description", "_meta")
    if kind == "terminal":
        keys += ("args", "env")
    elif kind != "agent":
        losses.lost(path, f"v1 has no auth method of type {kind!r}: dropped")
        return None
    out = _pick({k: v for k, v in method.items() if k != "type"}, keys, path, losses)
    out = {("id" if key == "methodId" else key): value for key, value in out.items()}
    if kind == "terminal":
        out["type"] = "terminal"
        env = out.get("env")
        if isinstance(env, list):  # v2: [{name, value}], v1: {name: value}
            out["env"] = {
                e["name"]: e["value"]
                for e in env
                if isinstance(e, Mapping) and isinstance(e.get("name"), str)
            }
    return out


def _auth_method_to_v2(method: Any, path: str, losses: _Losses) -> _Json | None:
    if not isinstance(method, Mapping) or not isinstance(method.get("id"), str):
        losses.lost(path, "not a valid auth method: dropped")
        return None
    kind = method.get("type", "agent")
    keys: tuple[str, ...] = ("id", "name", "description", "_meta")
    if kind == "terminal":
        keys += ("args", "env")
    elif kind != "agent":
        losses.lost(path, f"v2 has no auth method of type {kind!r}: dropped")
        return None
    out = _pick({k: v for k, v in method.items() if k != "type"}, keys, path, losses)
    out = {("methodId" if key == "id" else key): value for key, value in out.items()}
    out["type"] = kind
    env = out.get("env")
    if isinstance(env, Mapping):  # v1: {name: value}, v2: [{name, value}]
        out["env"] = [{"name": name, "value": value} for name, value in env.items()]
    return out


def _initialize_result_to_v1(result: Any, losses: _Losses) -> _Json:
    result = _obj(result)
    out: _Json = {
        "protocolVersion": 1,
        "agentCapabilities": _agent_capabilities_to_v1(_obj(result.get("capabilities")), losses),
        "authMethods": _items(
            result.get("authMethods") or [], _auth_method_to_v1, "$.authMethods", losses
        ),
    }
    info = _implementation(result.get("info"), "$.info", losses, required=False)
    if info is not None:
        out["agentInfo"] = info
    return _meta(result, out)


def _agent_capabilities_to_v2(caps: Mapping[str, Any], losses: _Losses) -> _Json:
    prompt = _obj(caps.get("promptCapabilities"))
    mcp = _obj(caps.get("mcpCapabilities"))
    if mcp.get("sse") is True:
        losses.lost("$.agentCapabilities.mcpCapabilities.sse", "v2 has no SSE MCP transport")
    markers = _obj(caps.get("sessionCapabilities"))
    session = _without_none(
        {
            "prompt": _without_none(
                {key: _marker(prompt.get(key)) for key in ("image", "audio", "embeddedContext")}
            ),
            # Every v1 agent launches stdio MCP servers (v1 has no marker for it).
            "mcp": _without_none({"stdio": {}, "http": _marker(mcp.get("http"))}),
            "delete": markers.get("delete") if isinstance(markers.get("delete"), Mapping) else None,
            "additionalDirectories": markers.get("additionalDirectories")
            if isinstance(markers.get("additionalDirectories"), Mapping)
            else None,
        }
    )
    return _meta(caps, {"session": session, "auth": {}})


def _initialize_result_to_v2(result: Any, losses: _Losses) -> _Json:
    result = _obj(result)
    out: _Json = {
        "protocolVersion": 2,
        "info": _implementation(result.get("agentInfo"), "$.agentInfo", losses, required=True),
        "capabilities": _agent_capabilities_to_v2(_obj(result.get("agentCapabilities")), losses),
    }
    methods = result.get("authMethods")
    if isinstance(methods, list) and methods:
        out["authMethods"] = _items(methods, _auth_method_to_v2, "$.authMethods", losses)
    return _meta(result, out)


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


def _resume_target(params: Any) -> str:
    replay = _obj(params).get("replayFrom")
    return "session/load" if isinstance(replay, Mapping) else "session/resume"


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
    if "configOptions" in out:
        out["configOptions"] = _items(
            out["configOptions"], _config_option_to_v1, "$.configOptions", losses
        )
    return out


def _session_result_to_v2(result: Any, losses: _Losses) -> _Json:
    out = _pick(result, ("sessionId", "configOptions", "modes", "_meta"), "$", losses)
    if out.pop("modes", None) is not None:
        losses.lost(
            "$.modes", "v2 has no session modes (only config options): the mode list is not shown"
        )
    if isinstance(out.get("configOptions"), list):
        out["configOptions"] = _items(
            out["configOptions"], _config_option_to_v2, "$.configOptions", losses
        )
    else:
        out.pop("configOptions", None)  # v1 allows `null`; v2 does not
    return out


def _set_config_to_v2(params: Any, losses: _Losses) -> _Json:
    out = _pick(params, ("sessionId", "configId", "type", "value", "_meta"), "$", losses)
    out.setdefault("type", "id")  # v1's untyped form is a value id
    return out


def _set_config_to_v1(params: Any, losses: _Losses) -> _Json:
    out = _pick(params, ("sessionId", "configId", "type", "value", "_meta"), "$", losses)
    if out.get("type") == "id":
        del out["type"]  # v1 writes a value id without a type
    elif out.get("type") != "boolean":
        losses.lost("$.type", f"v1 has no config value of type {out.get('type')!r}")
    return out


def _config_result_to_v1(result: Any, losses: _Losses) -> _Json:
    out = _pick(result, ("configOptions", "_meta"), "$", losses)
    out["configOptions"] = _items(
        out.get("configOptions") or [], _config_option_to_v1, "$.configOptions", losses
    )
    return out


def _config_result_to_v2(result: Any, losses: _Losses) -> _Json:
    out = _pick(result, ("configOptions", "_meta"), "$", losses)
    out["configOptions"] = _items(
        out.get("configOptions") or [], _config_option_to_v2, "$.configOptions", losses
    )
    return out


# --------------------------------------------------------------------------------------------
# Prompts


def _prompt_to(block: Callable[[Any, str, _Losses, str], Any]) -> _Mapper:
    def prompt(params: Any, losses: _Losses) -> _Json:
        out = _pick(params, ("sessionId", "prompt", "messageId", "_meta"), "$", losses)
        blocks = out.get("prompt")
        if isinstance(blocks, list):
            converted = (
                block(b, f"$.prompt[{i}]", losses, f"$.prompt[{i}]") for i, b in enumerate(blocks)
            )
            out["prompt"] = [b for b in converted if b is not None]
        return out

    return prompt


def _copy(keys: tuple[str, ...]) -> _Mapper:
    return lambda value, losses: _pick(value, keys, "$", losses)


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
