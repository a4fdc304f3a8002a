"""Permission requests and their answers, both ways (D46 (permission mapping); D5, D28, D29, D37).

Rules this module owns:

- An option id repeated in a request is dropped, the first kept (both versions say "MUST be
  unique"; D5).
- v1 -> v2: the request is about its tool call (``toolCall`` mapped as a v1 update, D46 (field
  mapping)); its prompt ``title`` is the call's title, else a title the caller remembers, else
  ``"Permission required"`` (D37). With no options it cannot be sent (v2 needs one): the v1 agent is
  answered ``cancelled`` (D5).
- v2 -> v1: a v1 client renders the prompt from ``toolCall``, so the prompt goes there: a
  ``tool_call`` subject is the v1 ``toolCall`` titled with the prompt, its content led by the
  description and command; subject-less, ``command`` and unknown subjects the client does not
  show get a synthetic tool call (``synthetic_tool_call_id``, D28). Option kinds v1 lacks are
  dropped; with no reject or no option left the request is not sent and the v2 agent is
  answered ``cancelled`` (D29).
- Answers: ``selected`` and ``cancelled`` map one to one; an unknown v2 outcome is
  ``cancelled``, never approval, in every mode (``permission_response_to_v1`` never raises: an
  answer must reach the agent).
- An answer is a selection only when it is unambiguous and names exactly an offered id
  (``answer_ambiguity``; D34 as amended 2026-12-06): an answer with both ``result`` and
  ``error``, or a ``selected`` outcome whose ``optionId`` was never offered (``"Allow"`` is not
  ``"allow"``), reaches the agent as ``cancelled``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from msgspec import UNSET, UnsetType

from .. import v1, v2
from ..codec import to_builtins
from ..models import replace
from ._fence import fenced
from ._kernel import TO_V1_MISSING, Losses, copy_meta, lookup, report_extra
from ._loss import LossReport
from ._tool_calls import fields_to_v1, fields_to_v2

DEFAULT_PERMISSION_TITLE = "Permission required"
"""The prompt title of a v1 permission request whose tool call has no title (D37)."""

SYNTHETIC_ID_PREFIX = "_acp_permission_"
"""Prefix of the ids of tool calls synthesised for permission requests (D28)."""


def _first_of_each_id(options: Iterable[Any], losses: Losses) -> Iterator[tuple[str, Any]]:
    """(path, option) of each option whose id no earlier one has; the others are dropped and
    reported ("MUST be unique": the first one is the one shown, D5)."""
    offered: set[str] = set()
    for index, option in enumerate(options):
        path = f"$.options[{index}]"
        if option.option_id in offered:
            losses.lost(path, f"duplicate option id {option.option_id!r}: dropped, the first kept")
            continue
        offered.add(option.option_id)
        yield path, option


# --------------------------------------------------------------------------------------------
# v1 -> v2


def permission_request_to_v2(
    req: v1.RequestPermissionRequest,
    *,
    strict: bool = False,
    stored_title: str | None = None,
) -> tuple[v2.RequestPermissionRequest | None, LossReport]:
    """A v1 ``session/request_permission`` as a v2 one, and the losses.

    The subject is the tool call (``toolCall`` mapped as a v1 update, D46 (field mapping)). The
    prompt ``title`` is the tool call's non-empty title, else ``stored_title`` (the title a caller
    that tracks the session last saw for that call), else ``"Permission required"`` (D37; reported;
    strict raises). Prompt text a v1 agent put in ``toolCall.content`` stays there. A repeated
    ``optionId`` is dropped, the first kept (D5). ``None`` when the request has no options: v2 needs
    at least one, so it must not be sent and the v1 agent gets ``{"outcome": "cancelled"}`` (D5;
    strict raises).
    """
    losses = Losses(strict)
    report_extra(req, "$", losses)
    call = req.tool_call
    values = fields_to_v2(call, False, "$.toolCall", losses)
    title = call.title
    if not (isinstance(title, str) and title):
        title = stored_title or DEFAULT_PERMISSION_TITLE
        losses.instead(
            "$.toolCall.title",
            "a v2 permission request needs a title and the v1 tool call has none",
            f"the prompt title is {title!r}",
        )
    options = []
    for path, option in _first_of_each_id(req.options, losses):
        report_extra(option, path, losses)
        options.append(  # v1 kinds are a subset of v2's; unknown strings go verbatim (D32)
            v2.PermissionOption(
                option_id=option.option_id,
                name=option.name,
                kind=option.kind,
                meta=copy_meta(option.meta),
            )
        )
    if not options:
        losses.instead(
            "$.options",
            "a v2 permission request needs at least one option",
            "not sent: answer the v1 agent `cancelled`",
        )
        return None, losses.report()
    subject = v2.ToolCallPermissionSubject(
        tool_call=v2.ToolCallUpdate(tool_call_id=call.tool_call_id, **values)
    )
    request = v2.RequestPermissionRequest(
        session_id=req.session_id,
        title=title,
        options=options,
        subject=subject,
        meta=copy_meta(req.meta),
    )
    return request, losses.report()


# --------------------------------------------------------------------------------------------
# v2 -> v1


@dataclass(frozen=True)
class _Prompt:
    req: v2.RequestPermissionRequest
    request_id: int | str | None
    shown: list[Any] | None
    """The v1 content the client holds for the subject's call, for a caller that tracks it (a
    bridge); ``None`` when the call is not known to be shown."""


def synthetic_tool_call_id(
    req: v2.RequestPermissionRequest, request_id: int | str | None = None
) -> str:
    """The id of the tool call synthesised for a permission request with no usable subject.

    ``_acp_permission_<request id>`` when the JSON-RPC id of the request is known (D28);
    otherwise ``_acp_permission_`` and the first 16 hex digits of the SHA-256 of the request's
    canonical JSON (keys sorted, no spaces, UTF-8), so equal requests get equal ids.
    """
    if request_id is not None:
        return f"{SYNTHETIC_ID_PREFIX}{request_id}"
    canonical = json.dumps(to_builtins(req), sort_keys=True, separators=(",", ":"))
    return f"{SYNTHETIC_ID_PREFIX}{hashlib.sha256(canonical.encode()).hexdigest()[:16]}"


def _text(text: str) -> v1.Content:
    return v1.Content(content=v1.TextContent(text=text))


def prompt_items(req: v2.RequestPermissionRequest) -> list[Any]:
    """What a v1 client must show of a prompt besides its title (D28, amended): the request's
    description, then for a ``command`` subject the command and its working directory."""
    items: list[Any] = []
    if isinstance(req.description, str) and req.description:
        items.append(_text(req.description))
    subject = req.subject
    if isinstance(subject, v2.CommandPermissionSubject):
        items.append(_text(fenced(f"$ {subject.command}") + f"\nWorking directory: {subject.cwd}"))
    return items


def _drop_subject_meta(subject: Any, losses: Losses) -> None:
    report_extra(subject, "$.subject", losses)
    if subject.meta is not UNSET and subject.meta is not None:
        losses.instead("$.subject._meta", "a v1 request has no subject `_meta`", "dropped")


def _prompt_shown(prompt: _Prompt, losses: Losses, what: str) -> None:
    """Report that the prompt is shown in a known call's ``toolCall`` (strict raises)."""
    after = (
        "the bridge restores the call's own title and content after the answer"
        if prompt.shown is not None
        else "a stateless converter cannot restore the call's own title and content afterwards"
    )
    losses.instead("$.title", f"v1 has no prompt apart from {what}", f"shown there; {after}")


def _tool_call_subject(subject: Any, prompt: _Prompt, losses: Losses) -> v1.ToolCallUpdate:
    req = prompt.req
    _drop_subject_meta(subject, losses)
    call: v2.ToolCallUpdate = subject.tool_call
    fields = call
    if prompt.shown is not None and call.content is not UNSET:  # shown as the call shows it
        fields = replace(call, content=UNSET)  # its unknown keys kept, to be reported
    values = fields_to_v1(fields, False, "$.subject.toolCall", losses)
    items = prompt_items(req)
    own_title = values.get("title")
    if items or not (isinstance(own_title, str) and own_title == req.title):
        # A v1 client renders the prompt from `toolCall`: the prompt goes there (D28, amended).
        _prompt_shown(prompt, losses, "the tool call's title and content")
    values["title"] = req.title
    # What is approved is shown whether or not there is a description (D28, amended
    # 2026-12-06): the call's content as the client shows it (a tracking caller's projection,
    # terminals and diffs rendered), else the subject's own content.
    own = prompt.shown if prompt.shown is not None else values.get("content") or []
    if items or own:
        values["content"] = [*items, *own]
    return v1.ToolCallUpdate(tool_call_id=call.tool_call_id, **values)


def _command_subject(subject: Any, prompt: _Prompt, losses: Losses) -> v1.ToolCallUpdate:
    req = prompt.req
    known = subject.tool_call_id if isinstance(subject.tool_call_id, str) else None
    _drop_subject_meta(subject, losses)
    if isinstance(subject.terminal_id, str):
        losses.lost("$.subject.terminalId", "v1 cannot tie a prompt to a v2 terminal; dropped")
    items = prompt_items(req)
    if known is not None and prompt.shown is not None:
        # A call the v1 client shows: the prompt and the command go into it for the prompt.
        losses.instead(
            "$.subject", "v1 has no command permission subject", "shown in the named tool call"
        )
        _prompt_shown(prompt, losses, "the tool call's title and content")
        return v1.ToolCallUpdate(
            tool_call_id=known, title=req.title, content=[*items, *prompt.shown]
        )
    losses.instead(
        "$.subject", "v1 has no command permission subject", "sent as a synthetic tool call"
    )
    return v1.ToolCallUpdate(
        tool_call_id=known or synthetic_tool_call_id(req, prompt.request_id),
        title=req.title or DEFAULT_PERMISSION_TITLE,
        kind="execute",
        status="pending",
        content=items,
        raw_input={"command": subject.command, "cwd": subject.cwd},
    )


def _no_subject(subject: Any, prompt: _Prompt, losses: Losses) -> v1.ToolCallUpdate:
    req = prompt.req
    if isinstance(subject, v2.UnknownPermissionSubject):
        reason = f"v1 has no permission subject of type {subject.tag!r}"
    else:
        reason = "a v1 request needs a tool call and this one has no subject"
    losses.instead("$.subject", reason, "a synthetic tool call carries the prompt")
    items = prompt_items(req)  # the bridge owns a synthetic card: the prompt may go into it
    return v1.ToolCallUpdate(
        tool_call_id=synthetic_tool_call_id(req, prompt.request_id),
        title=req.title or DEFAULT_PERMISSION_TITLE,
        kind="other",
        status="pending",
        content=items or UNSET,
    )


_SUBJECTS: dict[type[Any], Callable[[Any, _Prompt, Losses], v1.ToolCallUpdate]] = {
    v2.ToolCallPermissionSubject: _tool_call_subject,
    v2.CommandPermissionSubject: _command_subject,
    v2.UnknownPermissionSubject: _no_subject,
    type(None): _no_subject,
    UnsetType: _no_subject,
}

_OPTION_KINDS = {kind: kind for kind in v1.KNOWN_OPTION_KINDS}


def _options(options: list[v2.PermissionOption], losses: Losses) -> list[v1.PermissionOption]:
    out: list[v1.PermissionOption] = []
    unknown = False
    for path, option in _first_of_each_id(options, losses):
        kind = _OPTION_KINDS.get(option.kind)
        if kind is None:  # guessing allow or reject could mislead into approving (D29)
            losses.instead(path, f"v1 has no option kind {option.kind!r}", "option dropped")
            unknown = True
            continue
        report_extra(option, path, losses)
        out.append(
            v1.PermissionOption(
                option_id=option.option_id,
                name=option.name,
                kind=kind,
                meta=copy_meta(option.meta),
            )
        )
    if unknown and out and not any(option.kind in v2.REJECT_OPTION_KINDS for option in out):
        # A dropped option may have been the way to say no: never leave the user only yes.
        losses.lost(
            "$.options",
            "no reject option is left once the kinds v1 lacks are dropped: request not sent",
        )
        return []
    return out


def permission_request_to_v1(
    req: v2.RequestPermissionRequest,
    *,
    strict: bool = False,
    request_id: int | str | None = None,
    shown: list[Any] | None = None,
) -> tuple[v1.RequestPermissionRequest | None, LossReport]:
    """A v2 ``session/request_permission`` as a v1 one, and the losses (D46 (permission mapping),
    D28 amended).

    A v1 client renders a permission from its ``toolCall``, so that is where the prompt goes:
    ``toolCall.title`` is the request's ``title``, and when the request has a description or
    a ``command`` subject, ``toolCall.content`` starts with the description and the command
    (with its cwd), followed by the call's own content: ``shown``, the v1 content the client
    holds for the call when the caller tracks it (a bridge, which restores the call's own
    title and content after the answer), else the subject's own content. A ``tool_call``
    subject is otherwise the 9.3 update mapping of ``subject.toolCall``.

    Subject-less, unknown and ``command`` subjects the client does not show (``shown`` is
    ``None`` or the subject names no call) get a synthetic ``toolCall`` (D28): id
    ``subject.toolCallId`` for a command that names one, else
    ``synthetic_tool_call_id(req, request_id)``; title the prompt title; kind ``execute`` with
    ``rawInput`` ``{command, cwd}`` for a command, else ``other``; the prompt as content.

    Options: a repeated ``optionId`` is dropped (the first is kept, D5); kinds v1 lacks are
    dropped (D29), and when that leaves no reject option, or no option at all, the result is
    ``None``: do not send the request, answer the v2 agent ``{"outcome": "cancelled"}``.
    Strict mode raises ``ConversionError`` instead of any substitution.
    """
    losses = Losses(strict)
    report_extra(req, "$", losses)
    prompt = _Prompt(req, request_id, shown)
    subject = req.subject
    tool_call = lookup(_SUBJECTS, subject, TO_V1_MISSING)(subject, prompt, losses)
    options = _options(req.options, losses)
    if not options:
        losses.instead(
            "$.options",
            "no option a v1 client can show is left",
            "request not sent: answer the v2 agent `cancelled`",
        )
        return None, losses.report()
    request = v1.RequestPermissionRequest(
        session_id=req.session_id,
        tool_call=tool_call,
        options=options,
        meta=copy_meta(req.meta),
    )
    return request, losses.report()


def permission_response_to_v2(resp: v1.RequestPermissionResponse) -> v2.RequestPermissionResponse:
    """A v1 client's answer as the v2 answer (D46 (permission mapping)): ``selected`` and
    ``cancelled`` map one to one, ``_meta`` is copied. Nothing else exists in v1 (unknown keys are
    not carried, D19)."""
    outcome: v2.PermissionOutcome
    if isinstance(resp.outcome, v1.SelectedPermissionOutcome):
        outcome = v2.SelectedPermissionOutcome(
            option_id=resp.outcome.option_id, meta=copy_meta(resp.outcome.meta)
        )
    else:
        outcome = v2.CancelledPermissionOutcome()
    return v2.RequestPermissionResponse(outcome=outcome, meta=copy_meta(resp.meta))


def permission_response_to_v1(
    resp: v2.RequestPermissionResponse, *, strict: bool = False
) -> tuple[v1.RequestPermissionResponse, LossReport]:
    """A v2 client's answer as the v1 answer, and the losses (D46 (permission mapping)).

    ``selected`` keeps its ``optionId`` and ``_meta``; ``cancelled`` loses its ``_meta``; an
    unknown outcome is ``cancelled``, never approval. This never raises, ``strict`` or not: an
    answer must reach the agent, and the spec maps an unknown outcome the same way in every mode.
    """
    losses = Losses(strict=False)
    report_extra(resp, "$", losses)
    found = resp.outcome
    outcome: v1.PermissionOutcome
    if isinstance(found, v2.SelectedPermissionOutcome):
        report_extra(found, "$.outcome", losses)
        outcome = v1.SelectedPermissionOutcome(
            option_id=found.option_id, meta=copy_meta(found.meta)
        )
    else:
        outcome = v1.CancelledPermissionOutcome()
        if isinstance(found, v2.UnknownPermissionOutcome):
            losses.lost("$.outcome", f"unknown outcome {found.tag!r}: sent as `cancelled`")
        else:
            report_extra(found, "$.outcome", losses)
            if found.meta is not UNSET and found.meta is not None:
                losses.lost("$.outcome._meta", "v1's `cancelled` outcome has no `_meta`; dropped")
    response = v1.RequestPermissionResponse(outcome=outcome, meta=copy_meta(resp.meta))
    return response, losses.report()


_SHOWN_ID_CHARS = 80  # how much of an option id a reason quotes


def answer_ambiguity(answer: Mapping[str, Any], offered: Collection[str]) -> str | None:
    """Why a client's answer (the whole JSON-RPC response, as JSON values) to a permission
    request that offered the option ids ``offered`` selects nothing, though it could be read
    as a selection: both ``result`` and ``error``, or a ``selected`` outcome whose ``optionId``
    is not exactly one of ``offered``. Such an answer reaches the agent as ``cancelled`` (D34
    as amended 2026-12-06). ``None``: the answer says one thing (an offered option, a
    cancel, an error; an outcome no version knows is ``cancelled`` anyway)."""
    if "result" in answer and "error" in answer:
        return "an answer with both `result` and `error`"
    result = answer.get("result")
    outcome = result.get("outcome") if isinstance(result, Mapping) else None
    if isinstance(outcome, Mapping) and outcome.get("outcome") == "selected":
        option = outcome.get("optionId")
        if not isinstance(option, str) or option not in offered:
            shown = repr(option)
            if len(shown) > _SHOWN_ID_CHARS:
                shown = shown[:_SHOWN_ID_CHARS] + "..."
            return f"option {shown} was never offered"
    return None
