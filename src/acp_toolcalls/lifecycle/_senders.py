"""Who sends each method of either version (``SENDERS``).

Rules this module owns: every method of either version, who sends it and the versions that have
it (the bundled schemas' ``x-method``/``x-side``, written out so that reading a log needs no
schema; tests/sessions/test_convert_sessions.py checks it against both schemas).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True)
class MethodSender:
    """Who sends a method (``either``: ``$/cancel_request``, the requester of what it names),
    and the protocol versions that have it."""

    sender: Literal["client", "agent", "either"]
    versions: frozenset[int]


_V1, _V2, _V12 = frozenset({1}), frozenset({2}), frozenset({1, 2})

SENDERS: Mapping[str, MethodSender] = {
    **{
        method: MethodSender("client", _V12)
        for method in (
            "initialize",
            "session/new",
            "session/resume",
            "session/list",
            "session/close",
            "session/delete",
            "session/set_config_option",
            "session/prompt",
            "session/cancel",
        )
    },
    **{
        method: MethodSender("client", _V1)
        for method in ("authenticate", "logout", "session/load", "session/set_mode")
    },
    **{
        method: MethodSender("client", _V2)
        for method in ("auth/login", "auth/logout", "tool_call/cancel", "terminal/cancel")
    },
    **{
        method: MethodSender("agent", _V12)
        for method in (
            "session/update",
            "session/request_permission",
            "elicitation/create",
            "elicitation/complete",
        )
    },
    **{
        method: MethodSender("agent", _V1)
        for method in (
            "fs/read_text_file",
            "fs/write_text_file",
            "terminal/create",
            "terminal/output",
            "terminal/wait_for_exit",
            "terminal/kill",
            "terminal/release",
        )
    },
    "$/cancel_request": MethodSender("either", _V12),
}
"""Every method of either version: who sends it, and which versions have it."""
