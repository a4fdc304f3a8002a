"""Session modes (v1) as a config option (v2) and back, and ``session/set_config_option``.

Rules this module owns:

- Session modes (v1 only) reach a v2 client as the config option ``mode`` (category ``mode``,
  ``MODE_CONFIG_ID``) added to the session's options, unless the agent's own options have one
  of that category (it stands for them) or that id. ``Modes`` keeps it for a session: a v2
  ``session/set_config_option`` on it is the v1 ``session/set_mode``, answered with the whole
  option list; ``current_mode_update`` and the agent's ``config_option_update`` become one
  ``config_option_update`` holding the agent's options and the mode option.
- The other way, a v2 agent's mode option (its first ``select`` of category ``mode``) reaches a
  v1 client as session modes too (``modes`` beside the options, ``_option_modes``: its values,
  groups flattened). ``AgentModes`` keeps the option's id and the mode the client was told: a
  v1 ``session/set_mode`` is that option's ``session/set_config_option`` (answered ``{}``, then
  the agent's options as a ``config_option_update``); whenever the agent's options show another
  mode than the client was told, a ``current_mode_update`` follows.
- Config options: ``id`` <-> ``configId`` and ``group`` <-> ``groupId``; v1 writes a value id
  without a ``type``; a type v1 lacks is reported.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..convert import UNKNOWN_KEY
from ..convert import Json as _Json
from ..convert import Losses as _Losses
from ..convert import config_option_to_v1 as _config_option_to_v1
from ..convert import config_option_to_v2 as _config_option_to_v2
from ._common import Mapped, _items, _meta, _obj, _obj_list, _pick

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


def _set_mode_params(params: Any, losses: _Losses) -> _Json:
    params = _obj(params)
    out = _pick(params, ("sessionId", "configId", "type", "value", "_meta"), "$", losses)
    return _meta(out, {"sessionId": out.get("sessionId"), "modeId": out.get("value")})


def _set_mode_to_config(params: Any, losses: _Losses, config_id: str = MODE_CONFIG_ID) -> _Json:
    out = _pick(params, ("sessionId", "modeId", "_meta"), "$", losses)
    option: _Json = {
        "sessionId": out.get("sessionId"),
        "configId": config_id,
        "type": "id",
        "value": out.get("modeId"),
    }
    return _meta(out, option)


def _set_mode_result_to_v1(result: Any, losses: _Losses) -> _Json:
    """A v2 ``session/set_config_option`` result as the v1 ``session/set_mode`` one: ``_meta``
    only (the options follow as a ``config_option_update``, ``AgentModes.selected``)."""
    return _meta(_obj(result), {})


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
# A v2 agent's mode config option, shown to a v1 client as session modes


def _mode_option(options: Any) -> tuple[int, Mapping[str, Any]] | None:
    """The v2 agent's option that stands for its modes, and its index: the first ``select``
    of category ``mode`` (``None``: it has none)."""
    for index, option in enumerate(_obj_list(options)):
        if (
            isinstance(option, Mapping)
            and option.get("category") == "mode"
            and option.get("type") == "select"
        ):
            return index, option
    return None


def _option_modes(options: Any, path: str, losses: _Losses) -> _Json | None:
    """The v1 session modes a v2 agent's ``options`` (v2 shape, at ``path``) show: the values
    of its mode option, groups flattened (``None``: it has no mode option)."""
    found = _mode_option(options)
    if found is None:
        return None
    index, option = found
    path = f"{path}[{index}]"
    modes: list[_Json] = []
    items = _obj_list(option.get("options"))
    if any(isinstance(item, Mapping) and "groupId" in item for item in items):
        losses.lost(f"{path}.options", "v1 session modes have no groups: listed without them")
    for item in items:
        values = item.get("options") if isinstance(item, Mapping) and "groupId" in item else [item]
        for value in _obj_list(values):
            if not (isinstance(value, Mapping) and isinstance(value.get("value"), str)):
                losses.lost(f"{path}.options", "a value that is no mode: left out of the modes")
                continue
            name = value.get("name")
            mode: _Json = {"id": value["value"], "name": name if isinstance(name, str) else None}
            if mode["name"] is None:
                mode["name"] = value["value"]
            if isinstance(value.get("description"), str):
                mode["description"] = value["description"]
            modes.append(_meta(value, mode))
    current = option.get("currentValue")
    if not modes or not isinstance(current, str):
        losses.lost(path, "no mode to choose from or no current mode: no session modes shown")
        return None
    return {"currentModeId": current, "availableModes": modes}


@dataclass
class AgentModes:
    """A v2 agent's mode option as a v1 client is shown it: session modes. The connection
    keeps one per session whose setup result showed them."""

    config_id: str
    current: str
    """The mode the v1 client was last told (or asked for itself)."""

    @classmethod
    def shown(cls, result: Any, value: Any) -> AgentModes | None:
        """The modes a v2 ``session/new|resume`` ``result``, mapped to the v1 ``value``, shows
        (``None``: none)."""
        modes = _obj(value).get("modes")
        found = _mode_option(_obj(result).get("configOptions"))
        if not isinstance(modes, Mapping) or found is None:
            return None
        config_id = found[1].get("configId")
        current = modes.get("currentModeId")
        if not (isinstance(config_id, str) and isinstance(current, str)):
            return None
        return cls(config_id, current)

    @staticmethod
    def invalid(params: Any) -> str | None:
        """Why a v1 ``session/set_mode`` cannot be a v2 ``session/set_config_option``
        (``None``: it can)."""
        if not isinstance(_obj(params).get("modeId"), str):
            return "`modeId` must be a string"
        return None

    def request(self, params: Any) -> Mapped:
        """A v1 ``session/set_mode``'s params as the v2 ``session/set_config_option`` of the
        mode option."""
        losses = _Losses(False)
        return Mapped(_set_mode_to_config(params, losses, self.config_id), losses.report())

    def observe(self, options: Any) -> _Json | None:
        """The agent's options (v2 shape) as they are now: the v1 ``current_mode_update`` when
        its mode option shows another mode than the client was told (``None``: the same, or no
        mode option)."""
        for option in _obj_list(options):
            if isinstance(option, Mapping) and option.get("configId") == self.config_id:
                current = option.get("currentValue")
                if not isinstance(current, str) or current == self.current:
                    return None
                self.current = current
                return {"sessionUpdate": "current_mode_update", "currentModeId": current}
        return None

    def selected(self, mode_id: Any, result: Any) -> Mapped:
        """The v2 agent accepted the v1 client's ``session/set_mode`` of ``mode_id`` with
        ``result``: the session updates to send after the answer (the agent's options, and the
        mode when it is not the one asked for)."""
        if isinstance(mode_id, str):
            self.current = mode_id
        losses = _Losses(False)
        options = _obj(result).get("configOptions")
        updates: list[_Json] = []
        if isinstance(options, list):
            mapped = _items(options, _config_option_to_v1, "$.configOptions", losses)
            updates.append({"sessionUpdate": "config_option_update", "configOptions": mapped})
            changed = self.observe(options)
            if changed is not None:
                updates.append(changed)
        return Mapped(None, losses.report(), tuple(updates))
