"""Fuzz ``ToolCallEmitter``: random programs of its API calls with random arguments.

A program is up to 40 calls of every public method (start, update, append, grow_text,
end_text, poll, flush, finish, finish_open, end_turn, the terminal methods, both permission
requests, answer, abandon and the id queries), for v2 and for v1 clients. Ids come from small
pools (so calls collide, finish and restart) and arguments are of the declared types but
adversarial in value: empty or blank strings, lone surrogates, unknown or non-`_` enum
values, relative paths and ``file:`` URIs, ``line=0``, empty diffs and terminal ids, NaN and
integers JSON cannot carry, non-string ``_meta`` keys, out-of-range terminal sizes, prompt
text copied into the call, request ids reused while open.

Invariants:

- only ``SenderError`` (``ToolCallIdReused``, ``ToolCallNotOpen``) leaves the emitter, plus
  ``KeyError`` from ``answer`` for an answer to no open request (documented);
- a call that raises is a no-op: a second emitter running only the calls that succeeded on the
  first returns exactly the same messages at every step ("checked before anything is sent");
- every message it returns encodes, validates against the schema of the client's version, is
  read by the codec without any salvage, and (v1) follows the first-sight rule;
- (v2) the client's state, a ``ToolCallStore`` fed everything sent, equals at the end (after
  ``flush()``) what the program asked for: per call its status, title, name, kind, content
  (growing text included), locations, raw values, capabilities and ``_meta``; per terminal
  its command, cwd, output bytes and exit;
- ``answer`` approves only an offered option of an approving kind that the client selected.
"""

from __future__ import annotations

import json
from typing import Any, cast

from hypothesis import event, given, settings
from hypothesis import strategies as st
from msgspec import UNSET

from acp_toolcalls import decode_message, v2
from acp_toolcalls.agent import (
    ALLOW_KINDS,
    DEFAULT_OPTIONS,
    PermissionAnswer,
    PermissionAsk,
    SenderError,
    TextThrottle,
    ToolCallEmitter,
    command_subject,
    diff_content,
    text_content,
)
from acp_toolcalls.codec import canonical_json
from acp_toolcalls.models import TOOL_CALL_FIELDS, VersionName

from .invariants import Receiver
from .strategies import examples, weighted

SID = "s1"
NAN = float("nan")

S = st.SearchStrategy


def pick(good: tuple[Any, ...], bad: tuple[Any, ...] = ()) -> S[Any]:
    """A good value five times in six, else a bad one (so that programs reach deep states and
    still meet every refusal)."""
    if not bad:
        return st.sampled_from(good)
    return weighted((5, st.sampled_from(good)), (1, st.sampled_from(bad)))


def _items() -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    good = (
        text_content("hello"),
        text_content("Allow?"),  # the prompt's text: refused in a permission subject only
        diff_content("/src/a.py", "old\n", "new\n"),
        diff_content("/src/new.py", None, "fresh\n"),
        v2.Terminal(terminal_id="t1"),
        v2.UnknownToolCallContent({"type": "_chart", "points": [1, 2]}),
        v2.Content(content=v2.UnknownContentBlock({"type": "_blob", "x": 1})),
    )
    bad = (
        text_content("\ud800"),
        v2.Diff(changes=[]),
        v2.Diff(changes=[v2.ModifyDiffChange(path="src/rel.py", file_type="text")]),
        v2.Diff(changes=[v2.MoveDiffChange(path="/b", old_path="file:///a")]),
        v2.Terminal(terminal_id=""),
        v2.UnknownToolCallContent({"type": "chart"}),
        v2.UnknownToolCallContent({"type": "_nan", "v": NAN}),
        v2.Content(content=v2.UnknownContentBlock({"type": "blob"})),
    )
    return good, bad


ITEM = pick(*_items())
CALL = pick(("a", "a", "b", "c"), ("",))
TERMINAL = pick(("t1", "t2"), ("",))
REQUEST = pick((1, 2, "r"), (True, 1.5))
TITLE = pick(
    ("Read a.py", "Run tests", "Allow?", "Proceed with the edit?"), ("", "   ", "a\udc80b")
)
KIND = pick(("read", "execute", "other", "_lookup"), ("lookup", ""))
OPEN_STATUS = pick(("pending", "in_progress", "_paused"), ("running", "completed"))
FINAL_STATUS = pick(("completed", "failed", "cancelled"), ("pending", "running"))
TEXT = pick(("x", "12 passed", "", "Allow?", "é" * 40), ("\ud800",))
META = pick(
    ({"k": 1}, {"k": None}, {"j": [1, 2], "k": "v"}, {}),
    ({1: "x"}, {"n": NAN}, {"s": "\udc80"}, {"big": 2**70}),
)
RAW = pick(
    ({"cmd": "ls"}, [1, 2], "x", 0, True, 1, {"deep": [[[{}]]]}),
    ({"n": NAN}, 2**64, {"s": "\ud800"}),
)
LOCATION = pick(
    (v2.ToolCallLocation(path="/src/a.py", line=3), v2.ToolCallLocation(path="C:\\src\\a.py")),
    (
        v2.ToolCallLocation(path="src/a.py"),
        v2.ToolCallLocation(path="/a", line=0),
        v2.ToolCallLocation(path="/a", line=2**40),
        v2.ToolCallLocation(path="file:///a"),
    ),
)
CAPABILITIES = pick(
    (v2.ToolCallCapabilities(cancel=v2.ToolCallCancelCapabilities()), v2.ToolCallCapabilities())
)
OPTIONS = pick(
    (
        DEFAULT_OPTIONS,
        (("go", "Go", "allow_always"), ("no", "No", "reject_always")),
        (("allow", "Allow", "allow_once"), ("_maybe", "Maybe", "_later")),
    ),
    (
        (("x", "X", "allow_once"), ("x", "Again", "reject_once")),
        (("y", "", "allow_once"),),
        (("z", "Z", "approve"),),
        (),
        (("a\udc80", "A", "allow_once"),),
    ),
)
SIZE = pick(
    (v2.TerminalSize(cols=80, rows=24),),
    (v2.TerminalSize(cols=0, rows=24), v2.TerminalSize(cols=80, rows=70_000)),
)


def _maybe(values: S[Any], clear: bool = True) -> S[Any]:
    """An optional keyword argument's value: a value, or ``None`` (clear) if allowed."""
    return weighted((4, values), (1, st.none())) if clear else values


FIELDS: dict[str, S[Any]] = {
    "title": TITLE,
    "kind": KIND,
    "status": OPEN_STATUS,
    "name": pick(("read_file", "bash", "")),
    "content": st.lists(ITEM, max_size=3),
    "locations": st.lists(LOCATION, max_size=3),
    "raw_input": RAW,
    "raw_output": RAW,
    "capabilities": CAPABILITIES,
    "meta": META,
}
"""Per field of ``v2.ToolCallUpdate``: the values the emitter is asked to send (every field of
the registry, ``models.TOOL_CALL_FIELDS``; tests/models/test_field_registry.py holds it to that)."""


def _kwargs(names: tuple[str, ...], clear: bool = True) -> S[dict[str, Any]]:
    return st.fixed_dictionaries({}, optional={n: _maybe(FIELDS[n], clear) for n in names})


def _answer_data() -> S[Any]:
    option = st.sampled_from(("allow", "reject", "go", "no", "_maybe", "x", "nope"))
    result = st.one_of(
        st.fixed_dictionaries({"outcome": st.just("selected"), "optionId": option}),
        st.just({"outcome": "cancelled"}),
        st.just({"outcome": "_later"}),
        st.just({"outcome": "selected"}),
    ).map(lambda outcome: {"outcome": outcome})
    error = st.sampled_from([-32800, -32603]).map(lambda code: {"code": code, "message": "x"})
    return weighted(
        (4, st.fixed_dictionaries({"jsonrpc": st.just("2.0"), "id": REQUEST, "result": result})),
        (1, st.fixed_dictionaries({"jsonrpc": st.just("2.0"), "id": REQUEST, "error": error})),
        (1, st.just({"jsonrpc": "2.0", "id": 1, "result": "garbage"})),
    )


NOW = st.floats(0, 3, allow_nan=False)
OPS: S[tuple[str, dict[str, Any]]] = weighted(
    (
        4,
        st.tuples(
            st.just("start"),
            st.fixed_dictionaries(
                {"call_id": CALL, "title": TITLE},
                optional={
                    "status": OPEN_STATUS,
                    **{
                        n: strategy
                        for n, strategy in FIELDS.items()
                        if n not in ("title", "status")  # (drawn above)
                    },
                },
            ),
        ),
    ),
    (
        4,
        st.tuples(
            st.just("update"),
            st.tuples(st.fixed_dictionaries({"call_id": CALL}), _kwargs(tuple(FIELDS))).map(
                lambda pair: {**pair[0], **pair[1]}
            ),
        ),
    ),
    (
        2,
        st.tuples(
            st.just("append"),
            st.fixed_dictionaries({"call_id": CALL, "item": ITEM}),
        ),
    ),
    (
        3,
        st.tuples(
            st.just("grow_text"),
            st.fixed_dictionaries({"call_id": CALL, "delta": TEXT, "now": NOW}),
        ),
    ),
    (1, st.tuples(st.just("end_text"), st.fixed_dictionaries({"call_id": CALL}))),
    (1, st.tuples(st.just("poll"), st.fixed_dictionaries({"now": NOW}))),
    (1, st.tuples(st.just("flush"), st.just({}))),
    (
        3,
        st.tuples(
            st.just("finish"),
            st.tuples(
                st.fixed_dictionaries({"call_id": CALL}, optional={"status": FINAL_STATUS}),
                _kwargs(("title", "content", "locations", "raw_output", "meta")),
            ).map(lambda pair: {**pair[0], **pair[1]}),
        ),
    ),
    (
        1,
        st.tuples(
            st.just("finish_open"),
            st.fixed_dictionaries(
                {"status": FINAL_STATUS},
                optional={"background": st.lists(CALL, max_size=2), "bug": st.booleans()},
            ),
        ),
    ),
    (
        1,
        st.tuples(
            st.just("end_turn"),
            st.fixed_dictionaries(
                {},
                optional={
                    "stop_reason": st.sampled_from(("end_turn", "cancelled", "max_tokens")),
                    "background": st.lists(CALL, max_size=2),
                    "background_terminals": st.lists(TERMINAL, max_size=2),
                },
            ),
        ),
    ),
    (
        2,
        st.tuples(
            st.just("start_terminal"),
            st.fixed_dictionaries(
                {"terminal_id": TERMINAL},
                optional={
                    "command": pick(("pytest -q", ""), ("\ud800",)),
                    "cwd": pick(("/home/u", "C:\\work"), ("rel/dir",)),
                    "size": SIZE,
                    "meta": META,
                },
            ),
        ),
    ),
    (
        2,
        st.tuples(
            st.just("terminal_output"),
            st.fixed_dictionaries({"terminal_id": TERMINAL, "data": st.binary(max_size=12)}),
        ),
    ),
    (
        1,
        st.tuples(
            st.just("exit_terminal"),
            st.fixed_dictionaries(
                {"terminal_id": TERMINAL},
                optional={
                    "exit_code": pick((0, 1, -1), (2**63, 2**70)),
                    "signal": pick(("SIGKILL", ""), ("\udc80",)),
                },
            ),
        ),
    ),
    (
        3,
        st.tuples(
            st.just("request_permission"),
            st.tuples(
                st.fixed_dictionaries(
                    {
                        "call_id": CALL,
                        "request_id": REQUEST,
                        "title": TITLE,
                    },
                    optional={
                        "description": TEXT,
                        "options": OPTIONS,
                        "subject_meta": META,
                    },
                ),
                _kwargs(("kind", "status", "content", "locations", "raw_input", "meta")),
            ).map(lambda pair: {**pair[0], **pair[1]}),
        ),
    ),
    (
        1,
        st.tuples(
            st.just("request_command_permission"),
            st.fixed_dictionaries(
                {
                    "request_id": REQUEST,
                    "title": TITLE,
                    "command": st.sampled_from(
                        (
                            ("ls -la", "/home/u", UNSET, UNSET),
                            ("rm -rf build", "/home/u", "a", "t1"),
                            ("ls", "/home/u", "a", UNSET, {"n": NAN}),
                        )
                    ),
                },
                optional={"options": OPTIONS},
            ),
        ),
    ),
    (3, st.tuples(st.just("answer"), st.fixed_dictionaries({"response": _answer_data()}))),
    (
        1,
        st.tuples(st.just("abandon"), st.fixed_dictionaries({"request_id": REQUEST})),
    ),
    (1, st.tuples(st.just("tool_call_id"), st.fixed_dictionaries({"call_id": CALL}))),
)
# Programs open a call or two first (most methods need an open call), then anything.
OPENING = st.tuples(
    st.just("start"),
    st.fixed_dictionaries(
        {"call_id": st.sampled_from(("a", "b")), "title": st.just("Run tests")},
        optional={"kind": st.just("execute"), "raw_input": st.just({"cmd": "pytest"})},
    ),
)
PROGRAM = st.tuples(
    st.lists(OPENING, min_size=1, max_size=2), st.lists(OPS, min_size=4, max_size=40)
).map(lambda parts: parts[0] + parts[1])


def _call(emitter: ToolCallEmitter, name: str, kwargs: dict[str, Any]) -> Any:
    kwargs = dict(kwargs)
    if name == "request_command_permission":
        command, cwd, tool_call_id, terminal_id, *meta = kwargs["command"]
        kwargs["command"] = command_subject(
            command,
            cwd,
            tool_call_id=tool_call_id,
            terminal_id=terminal_id,
            meta=meta[0] if meta else UNSET,
        )
    return getattr(emitter, name)(**kwargs)


def _messages(result: Any) -> list[Any]:
    if isinstance(result, PermissionAsk):
        return list(result.messages)
    return list(result) if isinstance(result, list) else []


def _fingerprint(result: Any) -> Any:
    if isinstance(result, PermissionAsk):
        settled = result.settled
        return (
            [canonical_json(m) for m in result.messages],
            result.request_id,
            canonical_json(list(result.options)),
            None if settled is None else (settled.outcome, settled.approved),
        )
    if isinstance(result, PermissionAnswer):
        option = None if result.option is None else result.option.option_id
        return (result.outcome, option, result.approved)
    if isinstance(result, list):
        return [canonical_json(m) for m in result]
    return result


# --------------------------------------------------------------------------------------------
# The model: what the program asked the client to show


class _Model:
    """Per ``toolCallId``: the fields, content and ``_meta`` the program set; per terminal
    id: command, cwd, output bytes, exited."""

    def __init__(self) -> None:
        self.calls: dict[str, dict[str, Any]] = {}
        self.text: dict[str, int] = {}  # open growing text: toolCallId -> index in content
        self.terminals: dict[str, dict[str, Any]] = {}

    def set(self, tool_call_id: str, fields: dict[str, Any]) -> None:
        call = self.calls.setdefault(tool_call_id, {"meta": {}, "content": []})
        for attr, value in fields.items():
            if attr == "meta":
                if value is None:
                    call["meta"] = {}
                else:
                    for key, item in value.items():
                        if item is None:
                            call["meta"].pop(key, None)
                        else:
                            call["meta"][key] = item
            elif attr == "content":
                call["content"] = list(value) if value is not None else []
                self.text.pop(tool_call_id, None)
            else:
                call[attr] = value

    def grow(self, tool_call_id: str, delta: str) -> None:
        content = self.calls[tool_call_id]["content"]
        index = self.text.get(tool_call_id)
        if index is None:
            if delta:
                self.text[tool_call_id] = len(content)
                content.append(text_content(delta))
            return
        content[index] = text_content(content[index].content.text + delta)


_FIELD_KEYS = {
    f.attr: f.key for f in TOOL_CALL_FIELDS if f.attr not in ("status", "content", "meta")
}
"""Attribute -> wire name of the fields compared as they are (``status``, ``content`` and
``_meta`` are compared on their own): every other field of the registry (issue 28)."""


def _plain(value: Any) -> Any:
    return None if value is None or value is UNSET else json.loads(canonical_json(value))


def _empty_is_none(value: Any) -> Any:
    return None if value in (None, [], {}) else value


def _check_client_state(model: _Model, client: Receiver) -> None:
    store = client.view
    for tool_call_id, wanted in model.calls.items():
        tc = store.tool_call(SID, tool_call_id)
        assert tc is not None, f"the client never heard of {tool_call_id}"
        status = wanted.get("status")
        assert tc.status == (status if isinstance(status, str) else "pending"), tool_call_id
        for attr, key in _FIELD_KEYS.items():
            shown = _empty_is_none(_plain(tc.fields.get(key)))
            asked = _empty_is_none(_plain(wanted.get(attr)))
            assert shown == asked, f"{tool_call_id}.{key}: client shows {shown!r}, asked {asked!r}"
        assert _plain(tc.content) == _plain(wanted["content"]), f"{tool_call_id}: content"
        meta = tc.meta if isinstance(tc.meta, dict) else {}
        assert _plain(meta) == _plain(wanted["meta"]), f"{tool_call_id}: _meta"
    session = store.sessions.get(SID)
    for terminal_id, wanted in model.terminals.items():
        terminal = session.terminals.get(terminal_id) if session is not None else None
        assert terminal is not None, f"the client never heard of terminal {terminal_id}"
        assert terminal.output_bytes == wanted["output"], terminal_id
        assert terminal.exited == wanted["exited"], terminal_id
        assert terminal.command == wanted.get("command"), terminal_id
        assert terminal.cwd == wanted.get("cwd"), terminal_id


def _track(model: _Model, emitter: ToolCallEmitter, name: str, kwargs: dict[str, Any]) -> None:
    """Update the model after a call that succeeded."""
    call_id = cast(str, kwargs.get("call_id"))  # None only for the calls that do not use it
    fields = {k: v for k, v in kwargs.items() if k in FIELDS}
    if name == "request_permission":
        fields.pop("title", None)  # the prompt's title, not the call's
    if name == "start":
        tool_call_id = emitter.tool_call_id(call_id)
        fields.setdefault("status", "pending")
        model.calls.pop(tool_call_id, None)
        model.set(tool_call_id, fields)
    elif name in ("update", "request_permission"):
        model.set(emitter.tool_call_id(call_id), fields)
    elif name == "append":
        model.calls[emitter.tool_call_id(call_id)]["content"].append(kwargs["item"])
    elif name == "grow_text":
        model.grow(emitter.tool_call_id(call_id), kwargs["delta"])
    elif name == "end_text":
        model.text.pop(emitter.tool_call_id(call_id), None)
    elif name == "finish":
        tool_call_id = emitter.tool_call_id(call_id)
        fields["status"] = kwargs.get("status", "completed")
        if model.calls[tool_call_id].get("capabilities") is not None:
            fields["capabilities"] = None
        model.set(tool_call_id, fields)
        model.text.pop(tool_call_id, None)
    elif name == "start_terminal":
        model.terminals[kwargs["terminal_id"]] = {
            "output": b"",
            "exited": False,
            "command": kwargs.get("command"),
            "cwd": kwargs.get("cwd"),
        }
    elif name == "terminal_output":
        model.terminals[kwargs["terminal_id"]]["output"] += kwargs["data"]
    elif name == "exit_terminal":
        model.terminals[kwargs["terminal_id"]]["exited"] = True


def _finished_by(model: _Model, before: set[str], emitter: ToolCallEmitter, status: str) -> None:
    """``finish_open``/``end_turn``: the calls open before and closed now got ``status``."""
    for call_id in before - set(emitter.open_calls()):
        tool_call_id = emitter.tool_call_id(call_id)
        _track(model, emitter, "finish", {"call_id": call_id, "status": status})
        assert model.calls[tool_call_id]["status"] == status


# --------------------------------------------------------------------------------------------


def _check_sent(messages: list[Any], client: Receiver, protocol: VersionName) -> None:
    client.receive(messages, sessions={SID})
    for message in messages:
        decoded = decode_message(canonical_json(message), version=protocol)
        assert decoded.diagnostics == (), (
            f"a reader must salvage what was sent: {decoded.diagnostics}"
        )


def _check_answer(answer: PermissionAnswer, response: Any, offered: tuple[Any, ...]) -> None:
    if not answer.approved:
        return
    assert answer.option is not None and answer.option in offered, answer
    assert answer.option.kind in ALLOW_KINDS
    outcome = response["result"]["outcome"]
    assert outcome == {"outcome": "selected", "optionId": answer.option.option_id}, (
        answer,
        response,
    )


@settings(max_examples=examples(1.0))
@given(
    version=st.sampled_from([2, 1]), reuse=st.sampled_from(["namespace", "refuse"]), program=PROGRAM
)
def test_emitter_programs(
    version: int, reuse: Any, program: list[tuple[str, dict[str, Any]]]
) -> None:
    protocol: VersionName = "v2" if version == 2 else "v1"
    throttle = TextThrottle(min_interval=0.5, min_growth=4, max_delay=1.0)
    emitter = ToolCallEmitter(SID, version=version, throttle=throttle, reuse=reuse)
    shadow = ToolCallEmitter(SID, version=version, throttle=throttle, reuse=reuse)
    client = Receiver(protocol, first_sight=version == 1)
    model = _Model()
    offered: dict[Any, tuple[Any, ...]] = {}
    for name, kwargs in program:
        open_before = set(emitter.open_calls())
        try:
            result = _call(emitter, name, kwargs)
        except SenderError as exc:
            event(f"{name}: SenderError ({exc.path})")
            assert exc.path, exc
            continue
        except KeyError:
            assert name == "answer", f"{name} raised KeyError"
            event("answer: KeyError (no open request)")
            continue
        event(f"{name}: ok")
        assert _fingerprint(_call(shadow, name, kwargs)) == _fingerprint(result), (
            f"{name} behaves differently after an earlier call that raised"
        )
        messages = _messages(result)
        _check_sent(messages, client, protocol)
        if isinstance(result, PermissionAsk) and result.settled is None:
            offered[result.request_id] = result.options
        if name == "abandon":
            offered.pop(kwargs["request_id"], None)
        elif name == "answer":
            _check_answer(result, kwargs["response"], offered.pop(kwargs["response"]["id"], ()))
        elif name in ("finish_open", "end_turn"):
            status = kwargs.get("status") or (
                "cancelled" if kwargs.get("stop_reason") == "cancelled" else "failed"
            )
            _finished_by(model, open_before, emitter, status)
        else:
            _track(model, emitter, name, kwargs)
    final = emitter.flush()
    assert _fingerprint(shadow.flush()) == _fingerprint(final)
    _check_sent(final, client, protocol)
    if version == 2:
        _check_client_state(model, client)
