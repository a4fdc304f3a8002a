"""Validation of whole JSON-RPC messages and payloads against the bundled upstream schemas.

- ``_schemas``: the bundled upstream JSON Schemas (newest v2 draft), the two engines
  (jsonschema-rs "valid or not" where installed, ``ENGINE``), the method table;
- ``_validate``: validation of messages and payloads, and the explanation of a violation
  (always from jsonschema);
- ``_checks``: the bundled files read once, and the structure checks the converters ask on the
  message path (``first_violation``, built ahead by ``prepare_checks``): valid or not against
  one ``$defs`` entry, without jsonschema;
- ``_provenance``: the npm package, version and SHA-256 of each bundled file, and the overlays
  (``--version``); ``_overlay``: applying the overlays as a file is loaded;
- ``_tags``: the ``sessionUpdate`` values a bundled file defines (the lint's known values under
  ``validate --unstable``);
- ``_models_vs_schema``: the wire models held to the bundled schemas, field by field.

Importing this package costs nothing until a name is used (PEP 562): the names of
``_schemas`` and ``_validate`` load jsonschema, which ``acp-toolcalls bridge`` and
``convert`` never do; those of ``_checks`` load only the schema files.
"""

from __future__ import annotations

TYPE_CHECKING = False

if TYPE_CHECKING:
    from ._checks import first_violation, prepare_checks
    from ._provenance import (
        OVERLAYS,
        SCHEMA_FILES,
        SCHEMA_PACKAGE,
        SCHEMA_PACKAGE_VERSION,
        provenance_text,
        schema_record,
    )
    from ._schemas import ENGINE, MethodSpec, method_table
    from ._tags import session_update_tags, unstable_only_session_updates
    from ._validate import SchemaViolation, validate_message, validate_payload

    __all__ = [
        "ENGINE",
        "OVERLAYS",
        "SCHEMA_FILES",
        "SCHEMA_PACKAGE",
        "SCHEMA_PACKAGE_VERSION",
        "MethodSpec",
        "SchemaViolation",
        "first_violation",
        "method_table",
        "prepare_checks",
        "provenance_text",
        "schema_record",
        "session_update_tags",
        "unstable_only_session_updates",
        "validate_message",
        "validate_payload",
    ]

_EXPORTS: dict[str, tuple[str, ...]] = {
    "_checks": ("first_violation", "prepare_checks"),
    "_provenance": (
        "OVERLAYS",
        "SCHEMA_FILES",
        "SCHEMA_PACKAGE",
        "SCHEMA_PACKAGE_VERSION",
        "provenance_text",
        "schema_record",
    ),
    "_schemas": ("ENGINE", "MethodSpec", "method_table"),
    "_tags": ("session_update_tags", "unstable_only_session_updates"),
    "_validate": ("SchemaViolation", "validate_message", "validate_payload"),
}
"""Module -> the names this package exports from it."""

if not TYPE_CHECKING:  # type checkers read the imports above
    from .._lazy import exports

    __all__ = sorted(name for names in _EXPORTS.values() for name in names)
    __getattr__, __dir__ = exports(__name__, _EXPORTS)
