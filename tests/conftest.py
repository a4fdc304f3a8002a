"""Shared pytest fixtures."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, cast

import pytest

from acp_toolcalls.schema import Protocol, validate_message

# --- schema_valid ---------------------------------------------------------------------------
# Every test that encodes a message asserts through this fixture that the bytes validate
# against the bundled upstream schema of the protocol version they claim to speak.

SchemaCheck = Callable[..., None]


def _check_schema_valid(
    message: bytes | str | dict[str, Any],
    protocol: str,
    response_method: str | None = None,
) -> None:
    decoded: object = json.loads(message) if isinstance(message, bytes | str) else message
    violations = validate_message(
        decoded, cast(Protocol, protocol), response_method=response_method
    )
    if violations:
        listed = "\n".join(f"  {violation}" for violation in violations)
        pytest.fail(
            f"message does not validate against the {protocol} schema:\n{listed}\n"
            f"message: {json.dumps(decoded)[:2000]}",
            pytrace=False,
        )


@pytest.fixture
def schema_valid() -> SchemaCheck:
    """``check(message, protocol, response_method=None)``: assert the message is schema-valid."""
    return _check_schema_valid


# --- hypothesis profiles --------------------------------------------------------------------
# "ci" (the default) keeps the property tests fast; HYPOTHESIS_PROFILE=long runs 20,000 examples
# per property. Tests scale their own example counts from the loaded profile's max_examples.

import os  # noqa: E402

from hypothesis import HealthCheck, settings  # noqa: E402

settings.register_profile(
    "ci",
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "long",
    max_examples=20_000,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
