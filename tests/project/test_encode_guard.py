"""The conftest guard fails a test that encodes a schema-invalid message, unless marked."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

_TESTS = """
import pytest
from acp_toolcalls import encode, v2

def _bad() -> bytes:
    # `options` must be non-empty in the v2 schema.
    params = v2.RequestPermissionRequest(session_id="s", title="Allow?", options=[])
    return encode(v2.PermissionRequestMessage(id=1, params=params))

def test_unmarked():
    _bad()

@pytest.mark.encodes_invalid
def test_marked():
    _bad()

def test_valid():
    encode(v2.ToolCallUpdate(tool_call_id="a", title="Read"))

def test_unmarked_through_the_library():
    # Not through `encode`: the codec's writer itself is hooked, so what the library writes
    # (here `encode_decoded`, as `replay` uses it) is checked too.
    from acp_toolcalls.codec import encode_decoded

    params = v2.RequestPermissionRequest(session_id="s", title="Allow?", options=[])
    encode_decoded(v2.PermissionRequestMessage(id=2, params=params))
"""


def test_guard_fails_unmarked_invalid_encodes(pytester: pytest.Pytester) -> None:
    conftest = Path(__file__).parents[1].joinpath("conftest.py").read_text()
    pytester.makeconftest(conftest)
    pytester.makepyfile(test_guarded=_TESTS)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=4, errors=2)
    result.stdout.fnmatch_lines(
        [
            "*encode guard: * written messages and models schema-checked in *",
            "*ERROR*test_unmarked*",
            "*ERROR*test_unmarked_through_the_library*",
        ]
    )
    assert "options" in result.stdout.str() and "non-empty" in result.stdout.str()
