"""Session updates both ways: ``session_update_to_v2`` and ``session_update_to_v1`` (D46
(session-update mapping)).

Rules this module owns:

- v1 -> v2: ``tool_call``/``tool_call_update`` become a v2 ``tool_call_update`` (D46 (field
  mapping), a repeated ``tool_call`` merges); message chunks keep their variant but need a
  ``messageId`` v1 may lack; ``plan`` becomes the ``plan_update`` of one fixed plan id
  (``V1_PLAN_ID``); commands and config options are renamed into their v2 shapes; the other shared
  variants are copied; the unstable v1 updates map one to one (``_unstable``);
  ``current_mode_update`` and unknown updates are dropped.
- v2 -> v1: ``tool_call_update`` becomes a v1 ``tool_call_update``; message chunks,
  ``plan_update`` (as ``plan``; a cancelled entry is left out), commands, config options,
  session info and usage are mapped into their v1 shapes; ``notice`` and compaction updates
  only for a client that advertised them (D30); given a message id (a stateful caller's, as
  the bridge gives), a ``notice`` for any other client is agent message text of a message of
  its own, worded as codex-acp words its notices toward such clients (D30 as amended). The
  unstable updates both schemas have (``subagent_update``, session messages,
  ``plan_removed``) map one to one only for a client that advertised ``subagents`` / ``plan``
  (``_unstable``); for one that advertised ``plan``, ``plan_update`` is the unstable v1
  ``plan_update``, its id kept. ``tool_call_content_chunk`` and terminal updates need a
  stateful bridge; ``state_update``, message upserts and unknown updates have no v1 form: all
  dropped and reported, never forwarded raw.
- Only what the target cannot represent depends on ``strict`` (strict raises); the other drops
  are the mapping itself, the same in both modes.

Theory of operation: typed updates through ``_UPDATES`` (v2 -> v1) or the tool-call mapping;
opaque ones through the JSON rules of ``_OPAQUE_TO_V2``/``_OPAQUE_TO_V1`` (``_opaque``), with
the reasons of the updates that have no form in ``_NOT_TO_V2``/``_NOT_TO_V1``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from .. import v1, v2
from ._kernel import TO_V1_MISSING, Json, Losses, copy_keys, lookup, renamed
from ._loss import LossReport
from ._opaque import (
    OpaqueRule,
    ToV1,
    ToV2,
    block_chunk,
    block_to_v1,
    block_to_v2,
    compaction,
    copied,
    each_item,
    if_advertised,
    message_chunk_to_v1,
    message_chunk_to_v2,
    opaque,
    prepare_rules,
)
from ._tool_calls import closed_enum, fields_to_v1, fields_to_v2
from ._unstable import UNSTABLE_TO_V1, UNSTABLE_TO_V2

# --------------------------------------------------------------------------------------------
# v1 -> v2

V1_PLAN_ID = "plan"
"""The ``planId`` of the one plan a v1 session has, in its v2 ``plan_update``."""


def _plan_to_v2(data: Mapping[str, Any], losses: Losses, opts: ToV2) -> Json | None:
    out = copy_keys(data, ("entries", "_meta"), losses)
    plan = {"type": "items", "planId": V1_PLAN_ID, "entries": out.pop("entries", None)}
    return {"plan": plan, **out}


def _command_to_v2(command: Any, path: str, losses: Losses) -> Any:
    if not isinstance(command, dict):
        return command  # the schema check reports it
    out = {**command, "type": "command"}
    if isinstance(command.get("input"), dict):
        out["input"] = {**command["input"], "type": "text"}  # v1's only, unstructured, input
    return out


def config_option_to_v2(option: Any, path: str, losses: Losses) -> Any:
    option = renamed(option, "id", "configId")
    if isinstance(option, dict) and isinstance(option.get("options"), list):
        option = {**option, "options": [renamed(o, "group", "groupId") for o in option["options"]]}
    return option


_OPAQUE_TO_V2: dict[str, OpaqueRule] = {
    "user_message_chunk": OpaqueRule(message_chunk_to_v2, "user_message_chunk", None),
    "agent_message_chunk": OpaqueRule(message_chunk_to_v2, "agent_message_chunk", None),
    "agent_thought_chunk": OpaqueRule(message_chunk_to_v2, "agent_thought_chunk", None),
    "plan": OpaqueRule(_plan_to_v2, "plan_update", "PlanUpdate"),
    "available_commands_update": OpaqueRule(
        each_item("availableCommands", _command_to_v2),
        "available_commands_update",
        "AvailableCommandsUpdate",
    ),
    "config_option_update": OpaqueRule(
        each_item("configOptions", config_option_to_v2),
        "config_option_update",
        "ConfigOptionUpdate",
    ),
    "session_info_update": OpaqueRule(
        copied("title", "updatedAt"), "session_info_update", "SessionInfoUpdate"
    ),
    "usage_update": OpaqueRule(copied("used", "size", "cost"), "usage_update", "UsageUpdate"),
    "notice": OpaqueRule(copied("severity", "title", "description"), "notice", "Notice"),
    "compaction_update": OpaqueRule(
        compaction(block_to_v2), "compaction_update", "CompactionUpdate"
    ),
    "compaction_summary_chunk": OpaqueRule(
        block_chunk("compactionId", block_to_v2),
        "compaction_summary_chunk",
        "CompactionSummaryChunk",
    ),
    **UNSTABLE_TO_V2,
}

_NOT_TO_V2: dict[str, str] = {
    "current_mode_update": "v2 replaced modes with config options; mapping a mode change needs "
    "the session's option list",
}


def session_update_to_v2(
    update: v1.SessionUpdate,
    *,
    strict: bool = False,
    message_id: str | None = None,
    repeated: bool = False,
) -> tuple[v2.SessionUpdate | None, LossReport]:
    """A v1 ``session/update`` payload as a v2 one (``None``: nothing to send), and the losses.

    ``tool_call`` and ``tool_call_update`` become ``tool_call_update`` (D46 (field mapping)); a
    ``repeated`` ``tool_call`` (of an id the caller knows) merges (``tool_call_to_v2``). Message
    chunks keep their variant; v2 requires ``messageId``, so a chunk without one takes
    ``message_id`` (a stateful caller's choice) or is dropped. ``plan`` becomes a ``plan_update`` of
    the plan ``V1_PLAN_ID``. ``available_commands_update`` and ``config_option_update`` are renamed
    into their v2 shapes; the other shared variants are copied. ``current_mode_update`` and unknown
    updates are dropped. Every drop is reported; strict mode raises instead.
    """
    losses = Losses(strict)
    if isinstance(update, v1.ToolCall):
        values = fields_to_v2(update, repeated, "$", losses)
    elif isinstance(update, v1.ToolCallUpdate):
        values = fields_to_v2(update, False, "$", losses)
    else:
        out = opaque(update.data, _OPAQUE_TO_V2, _NOT_TO_V2, "v2", losses, ToV2(message_id))
        return (None if out is None else v2.OpaqueSessionUpdate(out)), losses.report()
    tc = v2.SessionToolCallUpdate(tool_call_id=update.tool_call_id, **values)
    return tc, losses.report()


# --------------------------------------------------------------------------------------------
# v2 -> v1


_PLAN_STATUSES: dict[str, tuple[str, str | None]] = {
    status: (status, None) for status in ("pending", "in_progress", "completed")
}
_PLAN_PRIORITIES: dict[str, tuple[str, str | None]] = {
    priority: (priority, None) for priority in ("high", "medium", "low")
}
_plan_priority = closed_enum(_PLAN_PRIORITIES, "medium", "neutral", "plan priority")
_plan_status = closed_enum(_PLAN_STATUSES, "pending", "not done", "plan entry status")


def _plan_entry(entry: Any, path: str, losses: Losses) -> Any:
    if not isinstance(entry, dict):
        return entry  # the schema check reports it
    if entry.get("status") == "cancelled":  # neither done nor still to do
        losses.instead(path, "v1 plan entries cannot be cancelled", "entry left out")
        return None
    out = dict(entry)
    for key, convert in (("status", _plan_status), ("priority", _plan_priority)):
        if isinstance(out.get(key), str):
            out[key] = convert(out[key], f"{path}.{key}", losses)
    return out


def _plan_to_v1(data: Mapping[str, Any], losses: Losses, opts: ToV1) -> Json | None:
    out = copy_keys(data, ("plan", "_meta"), losses)
    plan = out.pop("plan", None)
    if not isinstance(plan, dict) or plan.get("type") != "items":
        kind = plan.get("type") if isinstance(plan, dict) else None
        losses.instead("$", f"v1 has no plan of type {kind!r}", "dropped")
        return None
    losses.lost(
        "$.plan.planId",
        "a v1 session has one plan: dropped (plans with different ids replace each other)",
    )
    if plan.get("_meta") is not None:
        losses.lost("$.plan._meta", "v1 plans have one `_meta`, the update's; dropped")
    entries = plan.get("entries")
    if isinstance(entries, list):
        converted = (_plan_entry(e, f"$.plan.entries[{i}]", losses) for i, e in enumerate(entries))
        entries = [entry for entry in converted if entry is not None]
    return {"entries": entries, **out}


def _plan_update_to_v1(data: Mapping[str, Any], losses: Losses, opts: ToV1) -> Json | None:
    """For a client that advertised ``plan``: the unstable v1 ``plan_update``, its plan id kept
    (so that a ``plan_removed`` names a plan it has); items plans only, entries as ``plan``'s."""
    out = copy_keys(data, ("plan", "_meta"), losses)
    plan = out.pop("plan", None)
    if not isinstance(plan, dict) or plan.get("type") != "items":
        kind = plan.get("type") if isinstance(plan, dict) else None
        losses.instead("$", f"v1 has no plan of type {kind!r}", "dropped")
        return None
    plan = copy_keys(plan, ("type", "planId", "entries", "_meta"), losses)
    entries = plan.get("entries")
    if isinstance(entries, list):
        converted = (_plan_entry(e, f"$.plan.entries[{i}]", losses) for i, e in enumerate(entries))
        plan["entries"] = [entry for entry in converted if entry is not None]
    return {"plan": plan, **out}


_PLAN_UPDATE_TO_V1 = {
    "plan_update": OpaqueRule(_plan_update_to_v1, "plan_update", "PlanUpdate", unstable=True)
}
"""``plan_update`` for a client that advertised ``plan`` (the unstable v1 form)."""


def command_to_v1(command: Any, path: str, losses: Losses) -> Any:
    if not isinstance(command, dict):
        return command  # the schema check reports it
    if command.get("type") != "command":
        losses.instead(path, f"v1 has no command of type {command.get('type')!r}", "dropped")
        return None
    out = {key: value for key, value in command.items() if key != "type"}
    command_input = out.get("input")
    if isinstance(command_input, dict):
        if command_input.get("type") == "text":
            out["input"] = {key: value for key, value in command_input.items() if key != "type"}
        else:
            del out["input"]
            losses.instead(
                f"{path}.input",
                f"v1 has no command input of type {command_input.get('type')!r}",
                "dropped",
            )
    return out


def config_option_to_v1(option: Any, path: str, losses: Losses) -> Any:
    if not isinstance(option, dict):
        return option  # the schema check reports it
    if option.get("type") not in ("select", "boolean"):
        losses.instead(path, f"v1 has no config option of type {option.get('type')!r}", "dropped")
        return None
    option = dict(renamed(option, "configId", "id"))  # never change the input
    if isinstance(option.get("options"), list):
        option["options"] = [renamed(o, "groupId", "group") for o in option["options"]]
    return option


_OPAQUE_TO_V1: dict[str, OpaqueRule] = {
    "user_message_chunk": OpaqueRule(message_chunk_to_v1, "user_message_chunk", None),
    "agent_message_chunk": OpaqueRule(message_chunk_to_v1, "agent_message_chunk", None),
    "agent_thought_chunk": OpaqueRule(message_chunk_to_v1, "agent_thought_chunk", None),
    "plan_update": OpaqueRule(_plan_to_v1, "plan", "Plan"),
    "available_commands_update": OpaqueRule(
        each_item("availableCommands", command_to_v1),
        "available_commands_update",
        "AvailableCommandsUpdate",
    ),
    "config_option_update": OpaqueRule(
        each_item("configOptions", config_option_to_v1),
        "config_option_update",
        "ConfigOptionUpdate",
    ),
    "session_info_update": OpaqueRule(
        copied("title", "updatedAt"), "session_info_update", "SessionInfoUpdate"
    ),
    "usage_update": OpaqueRule(copied("used", "size", "cost"), "usage_update", "UsageUpdate"),
    "notice": OpaqueRule(
        if_advertised("notices", copied("severity", "title", "description")), "notice", "Notice"
    ),
    "compaction_update": OpaqueRule(
        if_advertised("compaction", compaction(block_to_v1)),
        "compaction_update",
        "CompactionUpdate",
    ),
    "compaction_summary_chunk": OpaqueRule(
        if_advertised("compaction", block_chunk("compactionId", block_to_v1)),
        "compaction_summary_chunk",
        "CompactionSummaryChunk",
    ),
    **UNSTABLE_TO_V1,
}

_MESSAGE_UPSERT = (
    "a message upsert replaces content a v1 client only appends to; only a stateful adapter "
    "that knows what the v1 side received can map it"
)
_NOT_TO_V1: dict[str, str] = {
    "state_update": "v1 has no `state_update`",
    "user_message": _MESSAGE_UPSERT,
    "agent_message": _MESSAGE_UPSERT,
    "agent_thought": _MESSAGE_UPSERT,
}


def _tool_call_update(update: Any, losses: Losses, opts: ToV1) -> v1.SessionUpdate | None:
    values = fields_to_v1(update, False, "$", losses)
    return v1.SessionToolCallUpdate(tool_call_id=update.tool_call_id, **values)


def _content_chunk(update: Any, losses: Losses, opts: ToV1) -> v1.SessionUpdate | None:
    losses.instead(
        "$",
        "`tool_call_content_chunk` cannot be represented by a stateless v2-to-v1 adapter: "
        "v1 content updates replace the whole array",
        "dropped",
    )
    return None


_TERMINAL_TAGS: dict[type[Any], str] = {
    v2.TerminalUpdate: "terminal_update",
    v2.TerminalOutputChunk: "terminal_output_chunk",
}


def _terminal_update(update: Any, losses: Losses, opts: ToV1) -> v1.SessionUpdate | None:
    losses.instead(
        "$",
        f"`{lookup(_TERMINAL_TAGS, update, TO_V1_MISSING)}` has no v1 form; rendering terminals "
        "into tool-call content needs the state a stateful bridge keeps",
        "dropped",
    )
    return None


def _opaque_update(update: Any, losses: Losses, opts: ToV1) -> v1.SessionUpdate | None:
    rules = _PLAN_UPDATE_TO_V1 if opts.plan and update.tag == "plan_update" else _OPAQUE_TO_V1
    out = opaque(update.data, rules, _NOT_TO_V1, "v1", losses, opts)
    return None if out is None else v1.OpaqueSessionUpdate(out)


_UPDATES: dict[type[Any], Callable[[Any, Losses, ToV1], v1.SessionUpdate | None]] = {
    v2.SessionToolCallUpdate: _tool_call_update,
    v2.ToolCallContentChunk: _content_chunk,
    v2.TerminalUpdate: _terminal_update,
    v2.TerminalOutputChunk: _terminal_update,
    v2.OpaqueSessionUpdate: _opaque_update,
}


_NOTICE_LABELS = {"info": "Info", "warning": "Warning", "error": "Error"}
"""How a notice's text opens, by severity (codex-acp's ``Warning: ...``); any other: Notice."""


def notice_as_text(data: Mapping[str, Any], message_id: str, losses: Losses) -> Json | None:
    """A v2 ``notice`` as the v1 ``agent_message_chunk`` of message ``message_id``, for a client
    that did not advertise ``session.notices`` (D30 as amended): ``<Severity>: <title>``, the
    description after a blank line, a blank line after (codex-acp's own wording toward such
    clients: ``Warning: <message>``); ``None`` for a notice that is not valid (reported)."""
    out = copy_keys(data, ("severity", "title", "description", "_meta"), losses)
    title, severity, description = out.get("title"), out.get("severity"), out.get("description")
    if not (
        isinstance(title, str)
        and title
        and isinstance(severity, str)
        and (description is None or isinstance(description, str))
    ):
        losses.instead("$", "not a valid v2 `Notice`", "dropped")
        return None
    label = _NOTICE_LABELS.get(severity, "Notice")
    text = f"{label}: {title}\n\n" + (f"{description}\n\n" if description else "")
    losses.instead(
        "$",
        "v1 agents send `notice` only to clients that advertised `session.notices`",
        f"shown as agent message text (message {message_id!r})",
    )
    chunk: Json = {
        "sessionUpdate": "agent_message_chunk",
        "messageId": message_id,
        "content": {"type": "text", "text": text},
    }
    if "_meta" in out:
        chunk["_meta"] = out["_meta"]
    return chunk


def session_update_to_v1(
    update: v2.SessionUpdate,
    *,
    strict: bool = False,
    notices: bool = False,
    compaction: bool = False,
    notice_id: str | None = None,
    subagents: bool = False,
    plan: bool = False,
) -> tuple[v1.SessionUpdate | None, LossReport]:
    """A v2 ``session/update`` payload as a v1 one (``None``: nothing to send), and the losses.

    ``tool_call_update`` becomes a v1 ``tool_call_update`` (D46 (field mapping); a caller that
    tracks which ids the client has seen sends ``tool_call_to_v1`` for a new one). Message chunks,
    ``plan_update`` (as ``plan``), commands, config options, session info and usage are mapped into
    their v1 shapes; ``notice`` and compaction updates only when the client advertised
    ``session.notices`` / ``session.compaction`` (``notices``/``compaction``, D30); given a
    ``notice_id``, a ``notice`` for a client without ``notices`` is agent message text of the
    message ``notice_id`` instead (``notice_as_text``, D30 as amended). The unstable updates go only
    to a client that advertised ``subagents`` / ``plan`` (``_unstable``). Everything else
    (``tool_call_content_chunk``, terminal updates, ``state_update``, message upserts, unknown
    updates) is dropped and reported, never forwarded raw. Strict mode raises ``ConversionError``
    instead of any drop or substitution.
    """
    losses = Losses(strict)
    if (
        notice_id is not None
        and not notices
        and isinstance(update, v2.OpaqueSessionUpdate)
        and update.tag == "notice"
    ):
        text = notice_as_text(update.data, notice_id, losses)
        return (None if text is None else v1.OpaqueSessionUpdate(text)), losses.report()
    opts = ToV1(notices=notices, compaction=compaction, subagents=subagents, plan=plan)
    return lookup(_UPDATES, update, TO_V1_MISSING)(update, losses, opts), losses.report()


def prepare_update_checks() -> None:
    """Build now the schema checks both directions' session updates ask (``_opaque``'s
    rules): ``acp-toolcalls bridge`` calls it as it starts, before the first line, so that
    the first ``plan``/``usage_update``/... of a session waits for no schema."""
    prepare_rules(_OPAQUE_TO_V2, "v2")
    prepare_rules(_OPAQUE_TO_V1, "v1")
    prepare_rules(_PLAN_UPDATE_TO_V1, "v1")
