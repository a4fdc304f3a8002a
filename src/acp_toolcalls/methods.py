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
- Auth methods of a type the target has no shape for are carried with every key (v2 keeps
  unknown types; v1 knows ``env_var``, codex-acp's, from its unstable surface); toward v1 any
  other type is dropped, reported.
- Session modes (v1 only) reach a v2 client as the config option ``mode`` (category ``mode``,
  ``MODE_CONFIG_ID``) added to the session's options, unless the agent's own options have one
  of that category (it stands for them) or that id. ``Modes`` keeps it for a session: a v2
  ``session/set_config_option`` on it is the v1 ``session/set_mode``, answered with the whole
  option list; ``current_mode_update`` and the agent's ``config_option_update`` become one
  ``config_option_update`` holding the agent's options and the mode option.
- ``session/prompt`` maps its params here; its result does not map (v1 answers at the end of
  the turn, v2 at once): the connection layer answers it (connection.py). The turn's end is
  mapped here: a v1 result (``prompt_result_to_v2``) or error (``prompt_error_to_v2``) is the
  v2 idle ``state_update`` that ends the turn; a v2 idle ``state_update`` with a stop reason is
  the v1 response (``prompt_end_to_v1``: ``error`` becomes a JSON-RPC error, a stop reason v1
  lacks ``end_turn``, reported). A v2 message upsert reaches v1 as chunks of its content, one
  per block, under its ``messageId`` (``message_chunks``).
- A v1 ``session/set_mode`` for modes shown as the config option ``MODE_CONFIG_ID`` is the v2
  ``session/set_config_option`` of that option (``MODES_TO_V2``; its result is
  ``Modes.selected``), the reverse of ``MODES_TO_V1``.
- Results that v1 cannot carry in place (a v2 response's ``availableCommands``) come back as
  session updates to send after the response (``Mapped.updates``).
- ``SENDERS``: every method of either version, who sends it and the versions that have it
  (the bundled schemas' ``x-method``/``x-side``, written out so that reading a log needs no
  schema; tests/test_convert_sessions.py checks it against both schemas).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from .loss import UNKNOWN_KEY, LossReport
from .v1_to_v2 import _block_to_v2, _config_option_to_v2, _Json, _Losses
from .v2_to_v1 import _block_to_v1, _command_to_v1, _config_option_to_v1

__all__ = [
    "MESSAGE_UPSERTS",
    "MODES_TO_V1",
    "MODES_TO_V2",
    "MODE_CONFIG_ID",
    "NO_V1",
    "NO_V2",
    "SENDERS",
    "TO_V1",
    "TO_V2",
    "V1_STOP_REASONS",
    "Mapped",
    "MethodMap",
    "MethodSender",
    "Modes",
    "map_params",
    "map_result",
    "message_chunks",
    "prompt_end_to_v1",
    "prompt_error_to_v2",
    "prompt_result_to_v2",
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


@dataclass(frozen=True)
class MethodSender:
    """Who sends a method (``either``: ``$/cancel_request``, the requester of what it names),
    and the protocol versions that have it."""

    sender: Literal["client", "agent", "either"]
    versions: frozenset[int]


_V1, _V2, _V12 = frozenset({1}), frozenset({2}), frozenset({1, 2})

SENDERS: Mapping[str, MethodSender] = {
    **{
        method: MethodSender("client", _V12)
        for method in (
            "initialize",
            "session/new",
            "session/resume",
            "session/list",
            "session/close",
            "session/delete",
            "session/set_config_option",
            "session/prompt",
            "session/cancel",
        )
    },
    **{
        method: MethodSender("client", _V1)
        for method in ("authenticate", "logout", "session/load", "session/set_mode")
    },
    **{
        method: MethodSender("client", _V2)
        for method in ("auth/login", "auth/logout", "tool_call/cancel", "terminal/cancel")
    },
    **{
        method: MethodSender("agent", _V12)
        for method in (
            "session/update",
            "session/request_permission",
            "elicitation/create",
            "elicitation/complete",
        )
    },
    **{
        method: MethodSender("agent", _V1)
        for method in (
            "fs/read_text_file",
            "fs/write_text_file",
            "terminal/create",
            "terminal/output",
            "terminal/wait_for_exit",
            "terminal/kill",
            "terminal/release",
        )
    },
    "$/cancel_request": MethodSender("either", _V12),
}
"""Every method of either version: who sends it, and which versions have it."""


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


_AUTH_KEYS: dict[str, tuple[str, ...] | None] = {
    "agent": ("name", "description", "_meta"),
    "terminal": ("name", "description", "_meta", "args", "env"),
    "env_var": None,  # codex-acp's; v1 has it in its unstable surface: every key carried
}
"""Auth method types both versions know, and their keys besides the id (``None``: all)."""


def _auth_method_to_v1(method: Any, path: str, losses: _Losses) -> _Json | None:
    if not isinstance(method, Mapping) or not isinstance(method.get("methodId"), str):
        losses.lost(path, "not a valid auth method: dropped")
        return None
    kind = method.get("type")
    if not isinstance(kind, str) or kind not in _AUTH_KEYS:
        losses.lost(path, f"v1 has no auth method of type {kind!r}: dropped")
        return None
    keys = _AUTH_KEYS[kind]
    body = {k: v for k, v in method.items() if k not in ("type", "methodId")}
    out: _Json = {"id": method["methodId"]}
    out.update(body if keys is None else _pick(body, keys, path, losses))
    if kind != "agent":  # v1's untyped form is an agent method
        out["type"] = kind
    env = out.get("env")
    if kind == "terminal" and isinstance(env, list):  # v2: [{name, value}], v1: {name: value}
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
    if not isinstance(kind, str):
        losses.lost(f"{path}.type", f"an auth method type is a string, not {kind!r}: dropped")
        return None
    keys = _AUTH_KEYS.get(kind)  # a type v2 has no shape for keeps every key (`other`)
    body = {k: v for k, v in method.items() if k not in ("type", "id")}
    out: _Json = {"methodId": method["id"]}
    out.update(body if keys is None else _pick(body, keys, path, losses))
    out["type"] = kind
    env = out.get("env")
    if kind == "terminal" and isinstance(env, Mapping):  # v1: {name: value}, v2: [{name, value}]
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


# --------------------------------------------------------------------------------------------
# Session modes (v1) as a config option (v2)

MODE_CONFIG_ID = "mode"
"""The ``configId`` under which a v1 agent's session modes are shown to a v2 client."""


def _modes_option(modes: Any, options: Any, path: str, losses: _Losses) -> _Json | None:
    """The config option shown to a v2 client for v1 ``modes`` beside the agent's ``options``
    (v2 shape), or ``None``: no modes, or the agent's own options already show them."""
    if modes is None:
        return None
    own = [o for o in options or () if isinstance(o, Mapping)]
    if any(o.get("category") == "mode" for o in own):
        return None  # the agent's own mode option stands for its modes
    if any(o.get("configId") == MODE_CONFIG_ID for o in own):
        losses.lost(
            path,
            f"the agent's config option {MODE_CONFIG_ID!r} has the id the modes would be shown "
            "under: the modes are not shown",
        )
        return None
    modes = _obj(modes)
    values: list[_Json] = []
    for index, mode in enumerate(_obj_list(modes.get("availableModes"))):
        where = f"{path}.availableModes[{index}]"
        if not (isinstance(mode, Mapping) and isinstance(mode.get("id"), str)):
            losses.lost(where, "not a session mode: dropped")
            continue
        value = _pick(mode, ("id", "name", "description", "_meta"), where, losses)
        value = {("value" if key == "id" else key): item for key, item in value.items()}
        if value.get("description") is None:
            value.pop("description", None)
        value.setdefault("name", value["value"])
        values.append(value)
    current = modes.get("currentModeId")
    if not values or not isinstance(current, str):
        losses.lost(path, "no mode to choose from or no current mode: the modes are not shown")
        return None
    option: _Json = {
        "configId": MODE_CONFIG_ID,
        "name": "Mode",
        "category": "mode",
        "type": "select",
        "currentValue": current,
        "options": values,
    }
    return _meta(modes, option)


def _obj_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _set_mode_params(params: Any, losses: _Losses) -> _Json:
    params = _obj(params)
    out = _pick(params, ("sessionId", "configId", "type", "value", "_meta"), "$", losses)
    return _meta(out, {"sessionId": out.get("sessionId"), "modeId": out.get("value")})


def _set_mode_to_config(params: Any, losses: _Losses) -> _Json:
    out = _pick(params, ("sessionId", "modeId", "_meta"), "$", losses)
    option: _Json = {
        "sessionId": out.get("sessionId"),
        "configId": MODE_CONFIG_ID,
        "type": "id",
        "value": out.get("modeId"),
    }
    return _meta(out, option)


MODES_TO_V1: dict[str, MethodMap] = {}  # filled below, beside the tables
MODES_TO_V2: dict[str, MethodMap] = {}


@dataclass
class Modes:
    """A v1 agent's session modes as a v2 client is shown them: the config option
    ``MODE_CONFIG_ID`` after the agent's own options (v2 shape, as last sent to the client).
    The connection keeps one per session whose modes are shown this way."""

    option: _Json
    agent_options: list[Any]

    @classmethod
    def shown(cls, result: Any, value: Any) -> Modes | None:
        """The modes a v1 ``session/new|load|resume`` ``result``, mapped to ``value``, shows
        as a config option of their own (``None``: it shows none)."""
        options = _obj(value).get("configOptions")
        if _obj(result).get("modes") is None or not isinstance(options, list) or not options:
            return None
        own = _obj_list(_obj(result).get("configOptions"))
        last = options[-1]
        if len(options) == len(own) or not isinstance(last, dict):
            return None
        return cls(last, options[:-1])

    def options(self) -> list[Any]:
        """Every option of the session, the agent's own and the mode option."""
        return [*self.agent_options, dict(self.option)]

    def targets(self, params: Any) -> bool:
        """Whether a v2 ``session/set_config_option`` sets the mode option."""
        return _obj(params).get("configId") == MODE_CONFIG_ID

    @staticmethod
    def invalid(params: Any) -> str | None:
        """Why a v2 ``session/set_config_option`` of the mode option cannot be a v1
        ``session/set_mode`` (``None``: it can)."""
        params = _obj(params)
        if params.get("type") != "id" or not isinstance(params.get("value"), str):
            return 'the mode option takes a value id (`type: "id"` and a string `value`)'
        return None

    def selected(self, value: Any, result: Any) -> _Json:
        """The v1 agent accepted mode ``value``: the v2 ``session/set_config_option`` result."""
        self.option["currentValue"] = value
        return _meta(_obj(result), {"configOptions": self.options()})

    def with_agent_options(self, value: Any) -> Any:
        """A mapped v2 result or update holding the agent's options: they are remembered and
        the mode option is added to them."""
        if isinstance(value, dict) and isinstance(value.get("configOptions"), list):
            self.agent_options = list(value["configOptions"])
            value = {**value, "configOptions": self.options()}
        return value

    def update(self, update: Any) -> Mapped:
        """A v1 ``current_mode_update`` or ``config_option_update`` as the v2
        ``config_option_update`` holding the agent's options and the mode option (``value``
        ``None``: dropped, reported)."""
        losses = _Losses(False)
        update = _obj(update)
        out: _Json | None = None
        if update.get("sessionUpdate") == "current_mode_update":
            current = update.get("currentModeId")
            if isinstance(current, str):
                self.option["currentValue"] = current
                out = {"sessionUpdate": "config_option_update", "configOptions": self.options()}
            else:
                losses.lost("$.currentModeId", "not a mode id: the update is dropped")
        else:
            own = _items(
                _obj_list(update.get("configOptions")),
                _config_option_to_v2,
                "$.configOptions",
                losses,
            )
            out = {"sessionUpdate": "config_option_update"}
            out.update(self.with_agent_options({"configOptions": own}))
        for key in sorted(
            update.keys() - {"sessionUpdate", "currentModeId", "configOptions", "_meta"}
        ):
            losses.lost(f"$.{key}", UNKNOWN_KEY)
        return Mapped(out if out is None else _meta(update, out), losses.report())


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


V1_STOP_REASONS = frozenset({"end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled"})
"""The stop reasons a v1 ``session/prompt`` result can carry."""

MESSAGE_UPSERTS: Mapping[str, str] = {
    "user_message": "user_message_chunk",
    "agent_message": "agent_message_chunk",
    "agent_thought": "agent_thought_chunk",
}
"""v2 message upserts and the v1 chunk each is sent to a v1 client as."""

_PROMPT_ERROR = -32603  # JSON-RPC internal error: what an error without a usable code becomes


def _error_parts(error: Any) -> tuple[int, str]:
    """An error object's code and message, made usable (an integer, a non-empty string)."""
    error = _obj(error)
    code, message = error.get("code"), error.get("message")
    return (
        code if isinstance(code, int) and not isinstance(code, bool) else _PROMPT_ERROR,
        message if isinstance(message, str) and message else "the agent reported an error",
    )


def prompt_result_to_v2(result: Any) -> Mapped:
    """A v1 ``session/prompt`` result as the v2 idle ``state_update`` that ends the turn (a v2
    prompt is answered at once; its end is this update). ``_meta`` is carried."""
    losses = _Losses(False)
    result = _obj(result)
    stop = result.get("stopReason")
    if not isinstance(stop, str):
        losses.lost("$.stopReason", f"not a stop reason ({stop!r}): the turn ends `end_turn`")
        stop = "end_turn"
    for key in sorted(result.keys() - {"stopReason", "_meta"}):
        losses.lost(f"$.{key}", UNKNOWN_KEY)
    idle: _Json = {"sessionUpdate": "state_update", "state": "idle", "stopReason": stop}
    return Mapped(_meta(result, idle), losses.report())


def prompt_error_to_v2(error: Any) -> _Json:
    """A v1 ``session/prompt`` error, for a turn a v2 client was told had started, as the idle
    ``state_update`` that ends it with stop reason ``error`` (the error's code, message and
    ``data``)."""
    code, message = _error_parts(error)
    body: _Json = {"code": code, "message": message}
    if isinstance(error, Mapping) and "data" in error:
        body["data"] = error["data"]
    return {"sessionUpdate": "state_update", "state": "idle", "stopReason": "error", "error": body}


def prompt_end_to_v1(state: Any) -> Mapped:
    """The v2 idle ``state_update`` that ends a turn as the v1 ``session/prompt`` response:
    ``{"result": {"stopReason": ...}}``, or for stop reason ``error`` ``{"error": {code,
    message, data}}``; a stop reason v1 lacks is ``end_turn`` (reported)."""
    state = _obj(state)
    stop = state.get("stopReason")
    if stop == "error":
        code, message = _error_parts(state.get("error"))
        error: _Json = {"code": code, "message": message}
        data = _obj(state.get("error")).get("data")
        if data is not None:
            error["data"] = data
        return Mapped({"error": error})
    losses = _Losses(False)
    if stop not in V1_STOP_REASONS:
        losses.lost("$.stopReason", f"stop reason {stop!r} has no v1 form: sent `end_turn`")
        stop = "end_turn"
    return Mapped({"result": {"stopReason": stop}}, losses.report())


def message_chunks(update: Any) -> list[_Json]:
    """A v2 message upsert (``MESSAGE_UPSERTS``) as the v1 chunks of its content, one per
    block, under its ``messageId`` (the v2 shape of each: the caller maps the blocks); none
    when it has no content list (a ``_meta`` patch, a clear of nothing)."""
    update = _obj(update)
    tag = MESSAGE_UPSERTS.get(update.get("sessionUpdate"))
    content = update.get("content")
    if tag is None or not isinstance(content, list):
        return []
    message_id = update.get("messageId")
    return [{"sessionUpdate": tag, "messageId": message_id, "content": block} for block in content]


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

MODES_TO_V1["session/set_config_option"] = MethodMap(
    _to("session/set_mode"), _set_mode_params, None
)
"""A v2 client's ``session/set_config_option`` of the mode option shown for a v1 agent's
modes (``Modes``): the v1 ``session/set_mode``; its result is ``Modes.selected``."""

MODES_TO_V2["session/set_mode"] = MethodMap(
    _to("session/set_config_option"), _set_mode_to_config, None
)
"""A v1 client's ``session/set_mode`` of modes shown as a config option (``Modes``): the v2
``session/set_config_option`` of ``MODE_CONFIG_ID``; its result is ``Modes.selected``."""


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
