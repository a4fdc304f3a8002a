"""Where the bundled schemas come from, and the overlays applied to them (D40).

Rules this module owns:

- ``SCHEMA_FILES`` records, per bundled file (``acp_toolcalls/schemas/{v1,v2}/schema.json`` and
  ``schema.unstable.json``), the npm package it is copied from unmodified (``SCHEMA_PACKAGE``
  at ``SCHEMA_PACKAGE_VERSION``, its ``schema/`` folder) and the SHA-256 of its bytes;
  tests/schema/test_schema_provenance.py checks each digest against the bundled bytes and, where the
  package is installed (tests/interop/node), the bytes against the package's.
- ``OVERLAYS`` lists the schema overlays (``acp_toolcalls/schemas/overlays/NAME.json``) that
  the loader (``_overlay``) applies to every bundled schema it reads, in this order: stable
  protocol additions that no SDK release's schema carries yet, each naming its source. An
  overlay is removed once the bundled package carries what it adds (docs/decisions.md).
- ``provenance_text()`` is the text ``acp-toolcalls --version`` prints, ``schema_record()``
  what ``validate`` reports about the file it checked against: they import nothing and read no
  file, so ``--version`` stays as fast as Python starts.
"""

from __future__ import annotations

from collections.abc import Mapping

TYPE_CHECKING = False  # not `typing`'s: `--version` imports nothing
if TYPE_CHECKING:
    from typing import Any

SCHEMA_PACKAGE = "@agentclientprotocol/sdk"
"""The npm package whose ``schema/`` folder the bundled files are."""

SCHEMA_PACKAGE_VERSION = "2.4.0"

SCHEMA_FILES: Mapping[str, str] = {
    "v1/schema.json": "0d0b1ca83c4872e5473f68926a894c7a8203b59b118e2a79bfe43dd76fbcbc1a",
    "v1/schema.unstable.json": "ce7881d10c854bcac4f0e7d3a9ce4fb0f612ec0a09e64b572940beec4668c189",
    "v2/schema.json": "b6c91055df549d6f1db1d76d692d0561dad433e03d8ed114ea9b5baed9da72c5",
    "v2/schema.unstable.json": "49e10f8c1935854363ed5b176cc6560d856642ba5020c97d264d34de4b6f1b31",
}
"""Bundled file (relative to ``acp_toolcalls/schemas``) -> SHA-256 of its bytes, as published
in ``SCHEMA_PACKAGE`` ``SCHEMA_PACKAGE_VERSION`` (``schema/<same path>``)."""

OVERLAYS: Mapping[str, str] = {
    "session-content": (
        "ACP v2 Preview (2026-11-20) and the Rust crate agent-client-protocol-schema 5.5.1 (v1): "
        "tool-call content `session`"
    ),
}
"""Overlay name (``schemas/overlays/NAME.json``) -> its source, as the file's ``source`` says
(a test holds them equal); applied in this order."""


def schema_file(version: str, unstable: bool = False) -> str:
    """The bundled file of ``version``, relative to ``acp_toolcalls/schemas``."""
    return f"{version}/schema{'.unstable' if unstable else ''}.json"


def schema_record(version: str, unstable: bool = False) -> dict[str, Any]:
    """The bundled file ``version`` is checked against, where it comes from, the overlays
    (``validate``'s ``schema`` record)."""
    bundled = schema_file(version, unstable)
    return {
        "package": SCHEMA_PACKAGE,
        "version": SCHEMA_PACKAGE_VERSION,
        "file": bundled,
        "sha256": SCHEMA_FILES[bundled],
        "overlays": list(OVERLAYS),
    }


def provenance_text() -> str:
    """The schema provenance in a few lines (``acp-toolcalls --version``)."""
    lines = [f"schemas: {SCHEMA_PACKAGE} {SCHEMA_PACKAGE_VERSION} (npm), unmodified:"]
    lines += [f"  {name} sha256:{digest}" for name, digest in SCHEMA_FILES.items()]
    lines += [f"overlay {name}: {source}" for name, source in OVERLAYS.items()]
    return "\n".join(lines)
