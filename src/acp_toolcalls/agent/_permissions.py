"""Permission requests as an agent builds them, and the client's answers as an agent reads them.

Rules this module owns (D46 (permissions; sender obligations, items 5 and 7); D5, D6, D25,
D34):

- A request cannot be built without a non-empty ``title`` and at least one option; option ids
  are unique; option kinds are the four known ones or ``_``-prefixed custom kinds.
- The prompt's ``title``/``description`` and the subject are separate arguments: nothing here
  copies prompt text into a tool call (the tool-call subject is a patch built by the emitter
  from tool-call fields only).
- A ``command`` subject needs a non-empty command and an absolute ``cwd`` in the agent
  machine's native syntax (POSIX ``/``, ``C:\\``, ``\\\\server``); ``file:`` URIs are refused.
- Approval exists only when the outcome is ``selected``, its ``optionId`` was offered, and the
  offered option's kind is one the agent reads as approval (``allow_once``/``allow_always`` by
  default). ``cancelled``, an unknown outcome, an unoffered id, an id that more than one
  offered option has (``ambiguous``: a request built elsewhere broke "MUST be unique"), a
  JSON-RPC error (``-32800`` included), a malformed answer and no answer at all are not
  approval.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

import msgspec
from msgspec import UNSET, UnsetType

from .. import v2
from ..check import KNOWN_V2_VALUES
from ..codec import DecodeError, decode
from ..models import REQUEST_CANCELLED, JsonRpcMessage
from ._senders import SenderError, check_absolute_path, check_encodable, check_open_value

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


# --------------------------------------------------------------------------------------------
# Options

_OPTION_KINDS: frozenset[str] = KNOWN_V2_VALUES["permission option kind"]

ALLOW_KINDS: frozenset[str] = v2.ALLOW_OPTION_KINDS
"""Option kinds read as approval unless the agent says otherwise (custom kinds never are)."""

DEFAULT_OPTIONS: tuple[v2.PermissionOption, ...] = (
    v2.PermissionOption(option_id="allow", name="Allow", kind="allow_once"),
    v2.PermissionOption(option_id="reject", name="Reject", kind="reject_once"),
)
"""Allow once / reject once: the options of a request that names none."""


def permission_options(
    options: Iterable[v2.PermissionOption | tuple[str, str, str]],
) -> list[v2.PermissionOption]:
    """Checked options: at least one, unique non-empty ids, names, known or ``_`` kinds.

    Each option is a ``PermissionOption`` or an ``(option_id, name, kind)`` tuple.
    """
    checked: list[v2.PermissionOption] = []
    seen: set[str] = set()
    for index, option in enumerate(options):
        where = f"options[{index}]"
        if isinstance(option, tuple):
            option_id, name, kind = option
            option = v2.PermissionOption(option_id=option_id, name=name, kind=kind)
        if not isinstance(option, v2.PermissionOption):
            raise SenderError(where, f"expected a PermissionOption, got {type(option).__name__}")
        if not isinstance(option.option_id, str) or not option.option_id:
            raise SenderError(f"{where}.optionId", "must be a non-empty string")
        if option.option_id in seen:
            raise SenderError(f"{where}.optionId", f"duplicate option id {option.option_id!r}")
        if not isinstance(option.name, str) or not option.name:
            raise SenderError(f"{where}.name", "must be a non-empty string")
        check_open_value(option.kind, _OPTION_KINDS, f"{where}.kind")
        check_encodable(option, where)
        seen.add(option.option_id)
        checked.append(option)
    if not checked:
        raise SenderError("options", "a permission request needs at least one option")
    return checked


def command_subject(
    command: str,
    cwd: str,
    *,
    tool_call_id: str | UnsetType = UNSET,
    terminal_id: str | UnsetType = UNSET,
    meta: dict[str, Any] | UnsetType = UNSET,
) -> v2.CommandPermissionSubject:
    """A ``command`` subject: what the agent wants to run, where (an absolute ``cwd``).

    The ids only associate the prompt with displayed state; they change nothing.
    """
    if not isinstance(command, str) or not command:
        raise SenderError("subject.command", "must be a non-empty string")
    check_absolute_path(cwd, "subject.cwd")
    for name, value in (("toolCallId", tool_call_id), ("terminalId", terminal_id)):
        if value is not UNSET and (not isinstance(value, str) or not value):
            raise SenderError(f"subject.{name}", "must be a non-empty string")
    subject = v2.CommandPermissionSubject(
        command=command, cwd=cwd, tool_call_id=tool_call_id, terminal_id=terminal_id, meta=meta
    )
    check_encodable(subject, "subject")
    return subject


_SUBJECT_TYPES: frozenset[str] = KNOWN_V2_VALUES["permission subject type"]


def _texts(item: Any) -> Iterable[str]:
    if isinstance(item, v2.Content) and isinstance(item.content, v2.TextContent):
        yield item.content.text


def check_subject(
    title: str, description: str | UnsetType | None, subject: v2.PermissionSubject | None
) -> None:
    """A subject may carry only what it is about: the prompt's own text is refused in a
    ``tool_call`` subject's ``title`` or text content (the codex-acp bug, D46 (evidence: prompt
    text))."""
    if subject is None:
        return
    if isinstance(subject, v2.ToolCallPermissionSubject):
        call = subject.tool_call
        if not isinstance(call.tool_call_id, str) or not call.tool_call_id:
            raise SenderError("subject.toolCall.toolCallId", "must be a non-empty string")
        prompt = {text.strip() for text in (title, description) if isinstance(text, str)}
        prompt.discard("")
        if isinstance(call.title, str) and call.title.strip() in prompt:
            raise SenderError(
                "subject.toolCall.title",
                "the prompt's text belongs in the request's title/description, not the call's",
            )
        for index, item in enumerate(call.content if isinstance(call.content, list) else ()):
            if any(text.strip() in prompt for text in _texts(item)):
                raise SenderError(
                    f"subject.toolCall.content[{index}]",
                    "the prompt's text would replace what the call shows: put it in the "
                    "request's title/description",
                )
    elif isinstance(subject, v2.CommandPermissionSubject):
        command_subject(
            subject.command,
            subject.cwd,
            tool_call_id=subject.tool_call_id if subject.tool_call_id is not None else UNSET,
            terminal_id=subject.terminal_id if subject.terminal_id is not None else UNSET,
        )
    elif isinstance(subject, v2.UnknownPermissionSubject):
        check_open_value(subject.tag, _SUBJECT_TYPES, "subject.type")
    else:
        raise SenderError("subject", f"expected a permission subject, got {type(subject).__name__}")
    check_encodable(subject, "subject")


def permission_request(
    session_id: str,
    *,
    title: str,
    options: Iterable[v2.PermissionOption | tuple[str, str, str]] = DEFAULT_OPTIONS,
    description: str | UnsetType = UNSET,
    subject: v2.PermissionSubject | None = None,
    meta: dict[str, Any] | UnsetType = UNSET,
) -> v2.RequestPermissionRequest:
    """A checked v2 ``session/request_permission`` params object.

    ``title`` (required, non-empty) and ``description`` are the prompt's text; ``subject`` says
    what it is about: a ``v2.ToolCallPermissionSubject`` whose ``tool_call`` is a patch of the
    call's own state, a ``command_subject(...)``, or ``None`` for a generic prompt.
    """
    if not isinstance(session_id, str) or not session_id:
        raise SenderError("sessionId", "must be a non-empty string")
    if not isinstance(title, str) or not title.strip():
        raise SenderError("title", "a permission request needs a non-empty title")
    if description is not UNSET and not isinstance(description, str):
        raise SenderError("description", "must be a string")
    check_encodable(title, "title")
    check_encodable(description, "description")
    check_encodable(meta, "_meta")
    checked = permission_options(options)
    check_subject(title, description, subject)
    return v2.RequestPermissionRequest(
        session_id=session_id,
        title=title,
        options=checked,
        description=description,
        subject=UNSET if subject is None else subject,
        meta=meta,
    )


# --------------------------------------------------------------------------------------------
# Answers

AnswerOutcome = Literal[
    "selected", "cancelled", "unoffered", "ambiguous", "unknown", "error", "malformed"
]
"""How a request ended: ``selected`` (an offered option), ``cancelled`` (the outcome, or a
``-32800`` error, or the agent stopped waiting), ``unoffered`` (``selected`` with an id that
was not offered), ``ambiguous`` (``selected`` with an id that several offered options share:
never approval), ``unknown`` (an outcome this library does not know), ``error`` (any other
JSON-RPC error) or ``malformed`` (an answer that does not parse)."""


class PermissionAnswer(msgspec.Struct, frozen=True, kw_only=True):
    """The agent's reading of a permission answer. Only ``approved`` may let work proceed."""

    outcome: AnswerOutcome
    option: v2.PermissionOption | None = None
    """The offered option the user picked (``selected`` only)."""
    approved: bool = False
    """``selected``, offered, and of an approving kind. Everything else is not approval."""
    raw: Any = None
    """The answer as received (a result object or a JSON-RPC error), for logs and proxies."""


def parse_permission_answer(
    answer: Any,
    options: Sequence[v2.PermissionOption],
    *,
    allow_kinds: Iterable[str] = ALLOW_KINDS,
) -> PermissionAnswer:
    """Read a v2 answer to a request that offered ``options``.

    ``answer`` is a whole JSON-RPC response (a mapping or ``JsonRpcMessage`` with ``result`` or
    ``error``), a bare result mapping, or a ``v2.RequestPermissionResponse``. Never raises for
    bad input: a malformed answer is ``malformed`` and not approved.
    """
    if isinstance(answer, JsonRpcMessage):
        answer = answer.data
    if isinstance(answer, Mapping) and ("error" in answer or "result" in answer):
        error = answer.get("error")
        if error is not None:
            cancelled = isinstance(error, Mapping) and error.get("code") == REQUEST_CANCELLED
            return PermissionAnswer(outcome="cancelled" if cancelled else "error", raw=error)
        answer = answer.get("result")
    raw = answer
    if not isinstance(answer, v2.RequestPermissionResponse):
        try:
            answer = decode(answer, v2.RequestPermissionResponse).value
        except DecodeError:
            return PermissionAnswer(outcome="malformed", raw=raw)
    outcome = answer.outcome
    if isinstance(outcome, v2.CancelledPermissionOutcome):
        return PermissionAnswer(outcome="cancelled", raw=raw)
    if not isinstance(outcome, v2.SelectedPermissionOutcome):
        return PermissionAnswer(outcome="unknown", raw=raw)
    option = answer.selected_option(list(options))
    if option is None:
        return PermissionAnswer(outcome="unoffered", raw=raw)
    if sum(offered.option_id == option.option_id for offered in options) > 1:
        return PermissionAnswer(outcome="ambiguous", option=option, raw=raw)
    approved = option.kind in frozenset(allow_kinds)
    return PermissionAnswer(outcome="selected", option=option, approved=approved, raw=raw)
