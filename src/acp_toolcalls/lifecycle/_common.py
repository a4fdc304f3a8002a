"""What every lifecycle mapping shares: ``Mapped``, ``MethodMap`` and small JSON helpers.

Rules this module owns:

- A mapping takes JSON values and never changes its input; what it drops, invents or cannot
  carry is a ``Loss`` in ``Mapped.losses``; session updates to send after a result are in
  ``Mapped.updates``.
- ``_pick`` keeps a value's known keys and reports every other one as ``UNKNOWN_KEY`` (D19).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..convert import UNKNOWN_KEY, LossReport
from ..convert import Json as _Json
from ..convert import Losses as _Losses


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


def _obj_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _copy(keys: tuple[str, ...]) -> _Mapper:
    return lambda value, losses: _pick(value, keys, "$", losses)
