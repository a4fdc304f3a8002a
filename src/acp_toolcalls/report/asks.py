"""Permission requests of one side of a log, and their answers.

Rules this module owns:

- A request is a ``session/request_permission`` message with an id. What it asks is kept as
  the user saw it: v2 ``title``, ``description`` and the ``subject`` (a tool call, or a
  command with its ``cwd``); v1 has no prompt of its own, so its ``toolCall.title`` is the
  title. Each option as ``[optionId, name, kind]``. What the user was shown of the call is
  kept too, as the request sent it: the ``content`` of the v1 ``toolCall`` or of the v2
  ``tool_call`` subject's ``toolCall`` (a diff, a command; ``None`` when it sent none).
- The call it is about: the v2 ``tool_call`` subject's ``toolCallId``, a ``command`` subject's
  ``toolCallId`` if it names one, the v1 ``toolCall.toolCallId``; otherwise none (the page
  lists it with its session).
- The answer is the first later response with the request's id whose ``result`` has an
  ``outcome``, or that is an error (a response to another request that reuses the id has
  neither). It is read as ``selected`` (with the option's name and kind when it was offered),
  ``cancelled``, ``error`` or ``unknown``. Who answered: the client in a plain log; in a
  ``bridge --log`` file the direction says (the model decides between the editor and the
  proxy for the agent's requests).
- How long it waited comes from the records' times; a plain log has none (the page then
  says on which line it was answered).
- The audit (issue 31): each answer's ``verdict`` (``VERDICTS``, by the chosen option's kind:
  ``allowed`` or ``rejected``; ``cancelled``; ``error``; ``other``: an option of no known
  kind, or an outcome of no known shape). A request is about an ``edit`` when the tool call
  it carries has the kind ``edit``, or its call has that kind in the side's history (read
  when the request comes, and again when its answer does), or what it shows holds a diff;
  ``diff`` says whether what it showed the user holds a ``diff`` item: the ``content`` it
  carried, or, when it carried none (a v2 subject or a v1 ``toolCall`` is an update: the call
  is shown as it is), the call's own content once the request is read (``call_has_diff``). An edit
  asked without its diff is a warning of the audit. ``Asks.totals`` counts the verdicts,
  the requests not answered (yet), the edits and the edits asked without their diff, kept as
  the requests and answers come (the live page sends them with each change).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import msgspec

from ..codec import DecodeError, check_depth
from .history import CallHistory
from .latency import request_key

__all__ = ["VERDICTS", "Asks"]

_parse = msgspec.json.Decoder()
_ANSWERED_BY = {"client->proxy": "the editor", "proxy->agent": "the proxy"}
VERDICTS = {
    "allow_once": "allowed",
    "allow_always": "allowed",
    "reject_once": "rejected",
    "reject_always": "rejected",
}
"""The audit's verdict of a selected option, by its kind (any other kind: ``other``)."""
_TOTALS = ("allowed", "rejected", "cancelled", "error", "other", "unanswered", "edits")


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _has_diff(content: Any) -> bool:
    return isinstance(content, list) and any(
        isinstance(item, dict) and item.get("type") == "diff" for item in content
    )


class Asks:
    """Every permission request of one side, in log order, each with its answer."""

    def __init__(
        self,
        calls: Mapping[tuple[str, str], CallHistory] | None = None,
        call_has_diff: Callable[[str, str], bool] | None = None,
    ) -> None:
        """``calls``: the side's calls, whose kind says whether a request is about an edit;
        ``call_has_diff(session, call)``: whether the call's content holds a diff now."""
        self.requests: list[dict[str, Any]] = []
        self._pending: dict[bytes, dict[str, Any]] = {}
        self._calls = calls if calls is not None else {}
        self._call_has_diff = call_has_diff
        self.totals: dict[str, int] = dict.fromkeys(_TOTALS, 0)
        self.totals["editsWithoutDiff"] = 0

    def feed(self, line: int, data: bytes | int, when: float | None, direction: str | None) -> None:
        """Look at one line (the side's message); lines without a request or an awaited
        answer are not parsed."""
        if not isinstance(data, bytes):
            return
        asks = b"session/request_permission" in data
        if not asks and not (self._pending and (b'"outcome"' in data or b'"error"' in data)):
            return
        try:
            check_depth(data)  # the codec's limit (issue 27): the replay reports the line
            value = _parse.decode(data)
        except (msgspec.DecodeError, RecursionError, DecodeError):
            return  # reported by the replay and the validation
        for message in value if isinstance(value, list) else [value]:
            if isinstance(message, dict):
                self._message(line, message, when, direction)

    def _message(
        self, line: int, message: dict[str, Any], when: float | None, direction: str | None
    ) -> None:
        key = request_key(message.get("id"))
        if key is None:
            return
        method = message.get("method")
        if method == "session/request_permission":
            params = message.get("params")
            if isinstance(params, dict):
                request, carried = _request(line, message["id"], params, when, direction)
                if not carried and self._call_has_diff is not None:
                    session, call = request["session"], request["call"]
                    request["diff"] = bool(session and call and self._call_has_diff(session, call))
                self.requests.append(request)
                self._pending[key] = request
                self.totals["unanswered"] += 1
                self._audit_edit(request)
            return
        if method is not None or key not in self._pending:
            return
        result = message.get("result")
        if "error" in message or (isinstance(result, dict) and "outcome" in result):
            request = self._pending.pop(key)
            answer = _answer(line, message, request["options"], when, direction)
            request["answer"] = answer
            self.totals["unanswered"] -= 1
            self.totals[answer["verdict"]] += 1
            self._audit_edit(request)

    def _audit_edit(self, request: dict[str, Any]) -> None:
        """Whether ``request`` is about an edit, now that more may be known of its call."""
        if request["edit"]:
            return
        call = self._calls.get((request["session"], request["call"]))
        kind = call.kinds[-1][1] if call is not None and call.kinds else None
        if "edit" in (request["kind"], kind) or request["diff"]:
            request["edit"] = True
            self.totals["edits"] += 1
            self.totals["editsWithoutDiff"] += not request["diff"]


def _request(
    line: int, request_id: Any, params: dict[str, Any], when: float | None, direction: str | None
) -> tuple[dict[str, Any], bool]:
    """The request as the audit keeps it, and whether it carried a ``content`` of its own."""
    subject = params.get("subject")
    v1_call = params.get("toolCall")
    call_id: str | None = None
    shown_subject: dict[str, Any] | None = None
    content: Any = None
    carried = False
    call_kind: str | None = None
    if isinstance(subject, dict):
        kind = subject.get("type")
        shown_subject = {"type": kind}
        if kind == "tool_call" and isinstance(subject.get("toolCall"), dict):
            call_id = _text(subject["toolCall"].get("toolCallId"))
            content = subject["toolCall"].get("content")
            carried = "content" in subject["toolCall"]
            call_kind = _text(subject["toolCall"].get("kind"))
        elif kind == "command":
            shown_subject["command"] = _text(subject.get("command"))
            shown_subject["cwd"] = _text(subject.get("cwd"))
            call_id = _text(subject.get("toolCallId"))
    title = _text(params.get("title"))
    if isinstance(v1_call, dict):
        call_id = _text(v1_call.get("toolCallId"))
        title = title or _text(v1_call.get("title"))
        content = v1_call.get("content")
        carried = "content" in v1_call
        call_kind = _text(v1_call.get("kind"))
    options = [
        [_text(o.get("optionId")), _text(o.get("name")), _text(o.get("kind"))]
        for o in params.get("options") or ()
        if isinstance(o, dict)
    ]
    request = {
        "l": line,
        "t": when,
        "id": request_id,
        "session": _text(params.get("sessionId")),
        "call": call_id,
        "title": title,
        "description": _text(params.get("description")),
        "subject": shown_subject,
        "content": content if isinstance(content, list) else None,
        "options": options,
        "direction": direction,
        "kind": call_kind,
        "edit": False,
        "diff": _has_diff(content),
        "answer": None,
    }
    return request, carried


def _answer(
    line: int,
    message: dict[str, Any],
    options: list[list[str | None]],
    when: float | None,
    direction: str | None,
) -> dict[str, Any]:
    answer: dict[str, Any] = {
        "l": line,
        "t": when,
        "by": _ANSWERED_BY.get(direction or "", "the client"),
        "direction": direction,
    }
    error = message.get("error")
    if error is not None:
        answer["outcome"] = answer["verdict"] = "error"
        answer["error"] = _text(error.get("message")) if isinstance(error, dict) else None
        return answer
    outcome = message["result"]["outcome"]
    kind = outcome.get("outcome") if isinstance(outcome, dict) else None
    if kind == "selected":
        chosen = _text(outcome.get("optionId"))
        answer.update(outcome="selected", option=chosen, verdict="other")
        for option_id, name, option_kind in options:
            if option_id == chosen:
                answer.update(name=name, kind=option_kind)
                answer["verdict"] = VERDICTS.get(option_kind or "", "other")
                break
    else:
        answer["outcome"] = kind if kind == "cancelled" else "unknown"
        answer["verdict"] = "cancelled" if kind == "cancelled" else "other"
    return answer
