"""Validation of whole JSON-RPC messages and payloads against the bundled upstream schemas.

- ``_schemas``: the bundled upstream JSON Schemas (newest v2 draft), the two engines
  (jsonschema-rs "valid or not" where installed, ``ENGINE``), the method table;
- ``_validate``: validation of messages and payloads, and the explanation of a violation
  (always from jsonschema).

Importing this package costs nothing until a name is used (PEP 562): the names load
jsonschema, which ``acp-toolcalls bridge`` and ``convert`` never do. ``Protocol`` is a
deprecated alias of ``acp_toolcalls.models.VersionName`` (it shadowed ``typing.Protocol``).
"""

from __future__ import annotations

TYPE_CHECKING = False

if TYPE_CHECKING:
    from typing import Any

    from ..models import VersionName as Protocol
    from ._schemas import ENGINE, MethodSpec, method_table
    from ._validate import SchemaViolation, validate_message, validate_payload

    __all__ = [
        "ENGINE",
        "MethodSpec",
        "Protocol",
        "SchemaViolation",
        "method_table",
        "validate_message",
        "validate_payload",
    ]

_EXPORTS: dict[str, tuple[str, ...]] = {
    "_schemas": ("ENGINE", "MethodSpec", "method_table"),
    "_validate": ("SchemaViolation", "validate_message", "validate_payload"),
}
"""Module -> the names this package exports from it."""

_ORIGIN = {name: module for module, names in _EXPORTS.items() for name in names}

if not TYPE_CHECKING:  # type checkers read the imports above
    __all__ = sorted([*_ORIGIN, "Protocol"])

    def __getattr__(name: str) -> Any:
        import importlib

        if name == "Protocol":
            value = importlib.import_module("..models", __name__).VersionName
        else:
            module = _ORIGIN.get(name)
            if module is None:
                raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
            value = getattr(importlib.import_module(f".{module}", __name__), name)
        globals()[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*globals(), *__all__})
