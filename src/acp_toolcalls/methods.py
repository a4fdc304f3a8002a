"""Deprecated alias of acp_toolcalls.proxy (issue 18); kept for one release."""

from __future__ import annotations

from .proxy import (
    MESSAGE_UPSERTS,
    MODE_CONFIG_ID,
    MODES_TO_V1,
    MODES_TO_V2,
    NO_V1,
    NO_V2,
    SENDERS,
    TO_V1,
    TO_V2,
    V1_STOP_REASONS,
    Mapped,
    MethodMap,
    MethodSender,
    Modes,
    map_params,
    map_result,
    message_chunks,
    prompt_end_to_v1,
    prompt_error_to_v2,
    prompt_result_to_v2,
)

__all__ = [
    "MESSAGE_UPSERTS",
    "MODES_TO_V1",
    "MODES_TO_V2",
    "MODE_CONFIG_ID",
    "NO_V1",
    "NO_V2",
    "SENDERS",
    "TO_V1",
    "TO_V2",
    "V1_STOP_REASONS",
    "Mapped",
    "MethodMap",
    "MethodSender",
    "Modes",
    "map_params",
    "map_result",
    "message_chunks",
    "prompt_end_to_v1",
    "prompt_error_to_v2",
    "prompt_result_to_v2",
]
