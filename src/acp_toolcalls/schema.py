"""Deprecated alias of acp_toolcalls.check (issue 18); kept for one release.

The schema validation API (``validate_message``, ``validate_payload``, ``method_table``) lives
in ``acp_toolcalls.check`` now; ``Protocol`` is ``acp_toolcalls.models.VersionName`` (renamed:
it shadowed ``typing.Protocol``).
"""

from .check import (
    ENGINE,
    MethodSpec,
    SchemaViolation,
    method_table,
    validate_message,
    validate_payload,
)
from .models import VersionName as Protocol

__all__ = [
    "ENGINE",
    "MethodSpec",
    "Protocol",
    "SchemaViolation",
    "method_table",
    "validate_message",
    "validate_payload",
]
