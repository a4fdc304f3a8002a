"""Deprecated alias of acp_toolcalls.agent (issue 18); kept for one release."""

from .agent import (
    ALLOW_KINDS,
    DEFAULT_OPTIONS,
    AnswerOutcome,
    PermissionAnswer,
    SenderError,
    command_subject,
    parse_permission_answer,
    permission_options,
    permission_request,
)

__all__ = [
    "ALLOW_KINDS",
    "DEFAULT_OPTIONS",
    "AnswerOutcome",
    "PermissionAnswer",
    "SenderError",
    "command_subject",
    "parse_permission_answer",
    "permission_options",
    "permission_request",
]
