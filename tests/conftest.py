"""Shared pytest fixtures."""

from __future__ import annotations

import json
import os
import signal
import time
from collections.abc import Callable
from typing import Any, cast

import pytest

import acp_toolcalls
from acp_toolcalls import v1, v2
from acp_toolcalls.check import validate_message, validate_payload
from acp_toolcalls.codec import _encode as _encode_module
from acp_toolcalls.models import VersionName as Protocol

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


# --- the build the run is meant to test ----------------------------------------------------
# The hot modules (acp_toolcalls._compiled.COMPILED: the codec's `_fastpath`, the bridges', the
# mappings' and the store's) run compiled only when built from the sources beside them (else
# their sources, after a StaleBuildWarning). `.ci/run` runs the suite once on the pure-Python
# package and once on a compiled wheel, naming the one it means in ACP_TOOLCALLS_FAST_PATH; a
# run that silently tested the other would prove nothing.


def _check_build() -> None:
    wanted = os.environ.get("ACP_TOOLCALLS_FAST_PATH")
    from acp_toolcalls import _compiled
    from acp_toolcalls.bridge import V2ToV1Bridge  # noqa: F401 - imported to be chosen

    other = {name: build for name, build in _compiled.BUILDS.items() if build != wanted}
    if wanted and other:
        pytest.exit(
            f"ACP_TOOLCALLS_FAST_PATH={wanted} but these run another build: {other} "
            f"({acp_toolcalls.__file__})",
            returncode=2,
        )


_check_build()


# --- every encode is schema-checked ---------------------------------------------------------
# The codec's one writer (`codec._encode.written`, behind `encode`, `encode_decoded` and every
# encode the library does itself: the bridges, the proxy's core, the emitter, `replay`) is
# wrapped before any test module imports the package's modules: each model or message written
# during a test is validated against the schema of the protocol its type belongs to
# (`acp_toolcalls.v1` -> v1, `acp_toolcalls.v2` -> v2) when the test ends. A JSON-RPC message
# is checked whole; a model whose class name is a schema `$defs` entry is checked against it.
# A test that makes the library write something invalid on purpose says so with
# `@pytest.mark.encodes_invalid`. The checks' time is said in the terminal summary.

_encoded: list[tuple[Protocol, str | None, bytes]] = []
# Schema validation costs about 0.3 ms per message: a test that encodes thousands (a stream
# through a bridge, say) has its first few hundred distinct ones checked.
_MAX_CHECKED_PER_TEST = 300
_real_written = _encode_module.written
_guard = {"checked": 0, "seconds": 0.0}
_MESSAGE_TYPES = (
    v1.SessionUpdateMessage,
    v1.PermissionRequestMessage,
    v2.SessionUpdateMessage,
    v2.PermissionRequestMessage,
)


# The modules that define the models `acp_toolcalls.v1` and `v2` export (issue 18: they live in
# `acp_toolcalls.models`, one module per concept), and the version of each.
_VERSION_OF_MODULE: dict[str, Protocol] = {
    getattr(module, name).__module__: cast(Protocol, version)
    for module, version in ((v2, "v2"), (v1, "v1"))
    for name in module.__all__
    if isinstance(getattr(module, name), type)
}


def _target(obj: object) -> tuple[Protocol, str | None] | None:
    cls = type(obj)
    protocol = _VERSION_OF_MODULE.get(cls.__module__)
    if protocol is None:
        return None
    if isinstance(obj, _MESSAGE_TYPES):
        return protocol, None
    return protocol, cls.__name__


def _recording_written(obj: Any) -> bytes:
    out = _real_written(obj)
    target = _target(obj)
    if target is not None:
        _encoded.append((target[0], target[1], out))
    return out


_encode_module.written = _recording_written


@pytest.fixture(autouse=True)
def _encodes_are_schema_valid(request: pytest.FixtureRequest) -> Any:
    _encoded.clear()
    yield
    if request.node.get_closest_marker("encodes_invalid"):
        return
    started = time.perf_counter()
    try:
        _check_encoded()
    finally:
        _guard["seconds"] += time.perf_counter() - started
    _encoded.clear()


def _check_encoded() -> None:
    seen: set[tuple[str, str | None, bytes]] = set()
    for protocol, def_name, raw in _encoded:
        if (protocol, def_name, raw) in seen:
            continue
        seen.add((protocol, def_name, raw))
        if len(seen) > _MAX_CHECKED_PER_TEST:
            break
        _guard["checked"] += 1
        value = json.loads(raw)
        if def_name is None:
            violations = validate_message(value, protocol)
        else:
            try:
                violations = validate_payload(value, def_name, protocol)
            except KeyError:
                continue  # a model with no schema definition of its own (e.g. an envelope)
        if violations:
            listed = "\n".join(f"  {violation}" for violation in violations)
            pytest.fail(
                f"the test encoded a {protocol} {def_name or 'message'} that does not validate:"
                f"\n{listed}\nvalue: {json.dumps(value)[:2000]}",
                pytrace=False,
            )


def pytest_terminal_summary(terminalreporter: Any) -> None:
    terminalreporter.write_line(
        f"encode guard: {_guard['checked']} written messages and models schema-checked in "
        f"{_guard['seconds']:.1f} s (in the tests' teardown)"
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "encodes_invalid: the test encodes schema-invalid values on purpose"
    )
    # A run started in the background by a shell without job control (`.ci/run ... &`) has
    # SIGINT ignored, and every subprocess inherits that: the tests' Ctrl-C would not reach
    # the commands they start. Ctrl-C as a terminal gives it, in every worker (issue 30).
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


# --- hypothesis profiles --------------------------------------------------------------------
# "ci" (the default) keeps the property tests fast; HYPOTHESIS_PROFILE=long runs 20,000 examples
# per property. Tests scale their own example counts from the loaded profile's max_examples.

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
