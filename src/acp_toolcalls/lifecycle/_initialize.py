"""``initialize`` and auth across versions: capabilities, implementation info, auth methods.

Rules this module owns:

- Capabilities: v1 booleans become v2 presence objects (``{}``) and back; v2 nests the
  session-scoped groups under ``session``. Toward a v1 agent the client never advertises ``fs``
  or ``terminal`` (a v2 client cannot serve them, D38) and advertises what every v2 client
  handles (notices, compaction, boolean config options), and the ``_meta`` terminal extension
  (``_meta.terminal_output`` and ``terminal_output_delta``: a v2 client shows display
  terminals, which the bridge makes of it; D38 amended), beside the client's own ``_meta``.
  Toward a v1 client a v2 agent with ``session`` is given ``loadSession`` and the
  list/resume/close markers: they are v2's baseline, and ``session/load`` maps to
  ``session/resume`` with replay from the start.
- ``info`` is required in v2 and made up (``UNKNOWN_IMPLEMENTATION``), reported, when a v1 peer
  sent none.
- Auth methods: ``id`` <-> ``methodId``; a type the target has no shape for is carried with
  every key (v2 keeps unknown types; v1 knows ``env_var``, codex-acp's, from its unstable
  surface); toward v1 any other type is dropped, reported.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..convert import Json as _Json
from ..convert import Losses as _Losses
from ..convert import extension_offer as _extension_offer
from ._common import _items, _marker, _meta, _obj, _pick, _present, _without_none

UNKNOWN_IMPLEMENTATION: _Json = {"name": "unknown", "version": "0"}
"""The ``info`` a v2 peer is given for a v1 peer that sent no ``clientInfo``/``agentInfo``."""


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
    meta = caps.get("_meta")
    out["_meta"] = _extension_offer(meta if isinstance(meta, Mapping) else None)
    return out


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
