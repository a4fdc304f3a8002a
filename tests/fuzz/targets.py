"""The fuzz targets: one function per component that feeds it one input and asserts every
invariant (no hypothesis here). The hypothesis tests (``test_fuzz_*.py``) call them with
generated inputs; the atheris harness (``fuzz/run.py``) with coverage-guided ones.

- ``check_decode(data, protocol)``, ``check_payload(data, model)``: the codec.
- ``run_store(stream, protocol, limits)``: ``ToolCallStore.apply`` over a stream of lines.
- ``run_v2_to_v1(script, ...)``, ``run_v1_to_v2(script)``: the bridges over a script of
  ``("convert", line)``, ``("flush", session or None)`` and ``("close", session)`` steps.
- ``run_stateless(script, protocol)``: ``StatelessV2ToV1`` (v2 input) or ``StatelessV1ToV2``.

Each takes ``note``, a callback that receives a label for what happened (hypothesis's
``event``, for ``--hypothesis-show-statistics``).
"""

from __future__ import annotations

import base64
import copy
import json
from collections.abc import Callable
from typing import Any, Literal

import msgspec

from acp_toolcalls import (
    Batch,
    DecodeError,
    JsonRpcMessage,
    ToolCallStore,
    decode,
    decode_message,
    v1,
    v2,
)
from acp_toolcalls.bridge import V1ToV2Bridge, V2ToV1Bridge
from acp_toolcalls.codec import canonical_json
from acp_toolcalls.convert import (
    ConversionError,
    Converted,
    StatelessV1ToV2,
    StatelessV2ToV1,
    unknown_keys,
)
from acp_toolcalls.events import (
    ContentAppended,
    LimitReached,
    SessionEvicted,
    TerminalCleared,
    TerminalCreated,
    TerminalEvicted,
    TerminalOutputAppended,
    TerminalPatched,
    ToolCallCleared,
    ToolCallCreated,
    ToolCallEvicted,
    ToolCallPatched,
)
from acp_toolcalls.models import VersionName
from acp_toolcalls.store import Limits, size_of
from acp_toolcalls.store._sessions import MEASURED_BY

from .invariants import (
    TYPED,
    UNCAPPED,
    Receiver,
    changed,
    entities,
    flatten,
    named,
    order,
    path_resolves,
)

__all__ = [
    "Script",
    "check_decode",
    "check_payload",
    "run_stateless",
    "run_store",
    "run_v1_to_v2",
    "run_v2_to_v1",
]

Note = Callable[[str], None]
Script = list[tuple[str, Any]]
"""``("convert", line)``, ``("flush", session id or None)``, ``("close", session id)``."""


def _quiet(_: str) -> None:
    pass


# --------------------------------------------------------------------------------------------
# The codec


def _parsed(data: bytes) -> tuple[bool, Any]:
    try:
        return True, json.loads(data)
    except ValueError:
        return False, None


def _kept(reason: str) -> bool:
    """A diagnostic about a value kept as received (an unknown v1 enum value, say)."""
    return reason.endswith("; kept") or reason.endswith("; accepted")


def _check_fixpoint(value: Any, protocol: VersionName) -> bytes:
    out = canonical_json(value)
    again = decode_message(out, version=protocol)
    assert all(_kept(d.reason) for d in again.diagnostics), again.diagnostics
    assert canonical_json(again.value) == out, "decode(encode(x)) is not a fixpoint"
    return out


def check_decode(data: bytes, protocol: VersionName, note: Note = _quiet) -> None:
    """``decode_message`` of one line as ``protocol``: only ``DecodeError``, whose path names a
    place in the input; bytes, text and the parsed value read alike; ``encode`` then decode
    is a fixpoint; the message keeps what it is about; diagnostics name places in the input;
    ``strict`` raises exactly when something was salvaged."""
    readable, parsed = _parsed(data)
    text = data.decode("utf-8", "surrogateescape")
    try:
        decoded = decode_message(data, version=protocol)
    except DecodeError as exc:
        note("DecodeError")
        assert exc.path == "$" or (readable and path_resolves(exc.path, parsed)), exc.path
        refused = False
        try:
            decode_message(text, version=protocol)
        except DecodeError:
            refused = True
        assert refused, "the text of a refused line was read"
        return
    note(f"read as {type(decoded.value).__name__}, salvaged: {bool(decoded.diagnostics)}")
    out = _check_fixpoint(decoded.value, protocol)
    as_text = decode_message(text, version=protocol)
    assert canonical_json(as_text.value) == out
    assert as_text.diagnostics == decoded.diagnostics
    assert readable, "the codec read a line that is not JSON"
    as_value = decode_message(parsed, version=protocol)
    assert canonical_json(as_value.value) == out
    assert as_value.diagnostics == decoded.diagnostics
    for diagnostic in decoded.diagnostics:
        assert path_resolves(diagnostic.path, parsed), diagnostic
    # What the message is about survives salvage; other methods come back verbatim.
    assert named(out) == named(parsed)
    value = decoded.value
    items = value.items if isinstance(value, Batch) else (value,)
    messages = parsed if isinstance(value, Batch) else [parsed]
    for item, original in zip(items, messages, strict=True):
        if isinstance(item, JsonRpcMessage):
            assert item.data == original
            assert original.get("method") not in ("session/update", "session/request_permission")
        elif isinstance(item, TYPED[protocol]):
            assert json.loads(canonical_json(item))["method"] == original["method"]
    # Strict mode raises exactly when the lenient read salvaged something.
    try:
        strict = decode_message(data, version=protocol, strict=True)
    except DecodeError as exc:
        assert decoded.diagnostics or isinstance(value, Batch), "strict raised on a clean read"
        if not isinstance(value, Batch):
            assert exc.path == decoded.diagnostics[0].path
    else:
        if not isinstance(value, Batch):
            assert decoded.diagnostics == ()
        assert canonical_json(strict.value) == out or isinstance(value, Batch)


def check_payload(data: bytes, model: type[Any], note: Note = _quiet) -> None:
    """``decode(data, model)`` of a bare payload: only ``DecodeError`` (path in the input); the
    parsed value reads alike; ``encode`` then decode is a fixpoint."""
    readable, parsed = _parsed(data)
    try:
        decoded = decode(data, model)
    except DecodeError as exc:
        note("DecodeError")
        assert exc.path == "$" or (readable and path_resolves(exc.path, parsed)), exc.path
        return
    note(f"read, salvaged: {bool(decoded.diagnostics)}")
    assert readable, "the codec read a payload that is not JSON"
    assert isinstance(decoded.value, model)
    out = canonical_json(decoded.value)
    again = decode(out, model)
    assert all(_kept(d.reason) for d in again.diagnostics), again.diagnostics
    assert canonical_json(again.value) == out, "decode(encode(x)) is not a fixpoint"
    as_value = decode(parsed, model)
    assert canonical_json(as_value.value) == out
    assert as_value.diagnostics == decoded.diagnostics
    for diagnostic in decoded.diagnostics:
        assert path_resolves(diagnostic.path, parsed), diagnostic


# --------------------------------------------------------------------------------------------
# The store


def _reported(events: list[Any]) -> dict[tuple[str, str, str], set[str]]:
    """Per entity, the keys the events say changed (``*``: created)."""
    out: dict[tuple[str, str, str], set[str]] = {}

    def add(key: tuple[str, str, str], *names: str) -> None:
        out.setdefault(key, set()).update(names)

    for e in events:
        if isinstance(e, ToolCallCreated):
            add((e.session_id, "call", e.tool_call_id), "*")
        elif isinstance(e, ToolCallPatched | ToolCallCleared):
            add((e.session_id, "call", e.tool_call_id), *e.fields)
        elif isinstance(e, ContentAppended):
            add((e.session_id, "call", e.tool_call_id), "content")
        elif isinstance(e, TerminalCreated):
            add((e.session_id, "terminal", e.terminal_id), "*")
        elif isinstance(e, TerminalPatched | TerminalCleared):
            add((e.session_id, "terminal", e.terminal_id), *e.fields)
        elif isinstance(e, TerminalOutputAppended):
            add((e.session_id, "terminal", e.terminal_id), "output")
        elif isinstance(e, LimitReached):  # a cap cut what it names (any of its keys)
            add((e.session_id, "call", e.subject), "*cut")
            add((e.session_id, "terminal", e.subject), "*cut")
    return out


def _check_step(
    raw: bytes, before: dict[str, Any], after: dict[str, Any], events: list[Any], limits: Limits
) -> None:
    _, touched = named(raw)
    evicted = {
        (e.session_id, "call", e.tool_call_id) for e in events if isinstance(e, ToolCallEvicted)
    } | {
        (e.session_id, "terminal", e.terminal_id) for e in events if isinstance(e, TerminalEvicted)
    }
    gone_sessions = {e.session_id for e in events if isinstance(e, SessionEvicted)}
    evicted |= {key for key in entities(before) if key[0] in gone_sessions}
    cut = {key for key, said in _reported(events).items() if "*cut" in said}
    diff = changed(before, after)
    allowed = touched | evicted | cut
    assert diff <= allowed, f"changed {sorted(diff - allowed)} of {raw[:300]!r}"
    old, new = entities(before), entities(after)
    assert old.keys() - new.keys() <= evicted, "an entry went away without an eviction event"
    gone: set[tuple[str, str, str]] = set()  # evicted and not created again since
    for e in events:
        if isinstance(e, ToolCallEvicted):
            gone.add((e.session_id, "call", e.tool_call_id))
        elif isinstance(e, ToolCallCreated):
            gone.discard((e.session_id, "call", e.tool_call_id))
    assert not gone & new.keys(), "an evicted call is still in the document"
    reported = _reported(events)
    for key in diff - evicted:
        said = reported.get(key, set())
        if "*cut" in said:
            continue  # a cap cut it: any of its keys may have changed
        if key not in old:
            assert "*" in said, f"{key} appeared without a created event"
        entry, previous = new[key], old.get(key, {})
        keys = {k for k in entry.keys() | previous.keys() if entry.get(k) != previous.get(k)}
        keys -= {"toolCallId", "terminalId"}
        assert keys <= said, f"{key}: {sorted(keys - said)} changed unreported ({events})"
    # First-seen order: the calls that stay keep their order, new ones come last.
    old_order, new_order = order(before), order(after)
    for sid, ids in new_order.items():
        kept = [i for i in old_order.get(sid, []) if (sid, "call", i) not in evicted]
        assert ids[: len(kept)] == kept, f"session {sid}: order {kept} became {ids}"
    # Caps.
    for (_, kind, _), entry in new.items():
        if kind == "call" and limits.max_content_items is not None:
            assert len(entry.get("content") or []) <= limits.max_content_items
        output = entry.get("output")
        if kind == "terminal" and limits.max_terminal_bytes is not None and output:
            assert len(base64.b64decode(output["data"])) <= limits.max_terminal_bytes
    if limits.max_tool_calls is not None:
        for ids in new_order.values():
            assert len(ids) <= limits.max_tool_calls


def _check_sizes(store: ToolCallStore) -> None:
    """The bytes the store counted as it went equal a count from scratch, and the byte caps
    hold (a single call may stay over its session's cap only by what a cut cannot shrink). A
    store that caps no byte does not count its calls' values: given a cap that changes nothing
    (and then its own limits back), it counts what it holds, which must be as exact."""
    limits = store.limits
    if all(getattr(limits, name) is None for name in MEASURED_BY):
        store.limits = msgspec.structs.replace(limits, max_store_bytes=1 << 62)
        try:
            _check_counted(store)
        finally:
            store.limits = limits
        return
    _check_counted(store)


def _check_counted(store: ToolCallStore) -> None:
    total = 0
    for sid, session in store.sessions.items():
        session_size = size_of(sid) + 400
        for tc in session.tool_calls.values():
            size = size_of(tc.tool_call_id) + 200
            for name, value in {**tc.fields, **(tc.extra or {})}.items():
                if name == "content":
                    size += sum(size_of(item) for item in value) if isinstance(value, list) else 0
                else:
                    size += size_of(value)
            if isinstance(tc.meta, dict):
                size += 64 + sum(size_of(k) + size_of(v) + 24 for k, v in tc.meta.items())
            size += sum(size_of(value) for value in (tc.raw or {}).values())  # v1 strings, D32
            assert size == tc.size, f"call {tc.tool_call_id}: counted {tc.size}, holds {size}"
            session_size += size
        for terminal in session.terminals.values():
            size = size_of(terminal.terminal_id) + 200
            size += sum(size_of(value) for value in terminal.fields.values())
            if isinstance(terminal.output, bytearray):
                size += len(terminal.output)
            if isinstance(terminal.meta, dict):
                size += 64 + sum(size_of(k) + size_of(v) + 24 for k, v in terminal.meta.items())
            assert size == terminal.size, f"terminal {terminal.terminal_id}: {terminal.size}"
            session_size += size
        assert session_size == session.size, f"session {sid}: counted {session.size}"
        total += session_size
    assert total == store.size, f"store: counted {store.size}, holds {total}"
    cap = store.limits.max_call_bytes
    if cap is not None:  # a cut leaves values of at most 256 bytes and markers
        for session in store.sessions.values():
            for tc in session.tool_calls.values():
                assert tc.size <= max(cap, 4_000), f"call {tc.tool_call_id}: {tc.size} bytes"


def _message(session_id: str, update: dict[str, Any]) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {"sessionId": session_id, "update": update},
    }


def _check_replay(store: ToolCallStore) -> None:
    document = store.document()
    fresh = ToolCallStore(version="v2", limits=UNCAPPED)
    for sid, session in document["sessions"].items():
        for terminal in session["terminals"]:
            fresh.apply(_message(sid, {"sessionUpdate": "terminal_update", **terminal}))
        for call in session["toolCalls"]:
            fresh.apply(_message(sid, {"sessionUpdate": "tool_call_update", **call}))
    assert fresh.document() == document, "replaying the snapshots does not give the state back"
    for sid in document["sessions"]:
        for view in store.views(sid):
            assert view.title, f"call {view.tool_call_id} shows an empty title"


def run_store(
    stream: list[bytes],
    protocol: Literal["v1", "v2", "auto"],
    limits: Limits | None,
    note: Note = _quiet,
) -> None:
    """Apply each line to a ``ToolCallStore`` (and its parsed value to a second one) and check
    every step (``_check_step``), then the replay of the final document (``_check_replay``)."""
    store = ToolCallStore(version=protocol, limits=limits)
    slow = ToolCallStore(version=protocol, limits=limits)  # fed parsed values
    caps = limits or Limits()
    for index, raw in enumerate(stream):
        before = store.document()
        try:
            events = store.apply(raw, now=float(index))
        except DecodeError:
            note("line refused (DecodeError)")
            assert store.document() == before, "a refused line changed the store"
            continue
        note(f"line applied, {len(events)} events" if len(events) < 3 else "line applied, 3+")
        after = store.document()
        _check_step(raw, before, after, events, caps)
        _check_sizes(store)
        assert slow.apply(json.loads(raw), now=float(index)) == events
        assert slow.document() == after, "bytes and parsed values of a line apply differently"
    _check_replay(store)


# --------------------------------------------------------------------------------------------
# The bridges


def _same(a: Converted, b: Converted) -> bool:
    def plain(c: Converted) -> Any:
        return (
            [canonical_json(m) for m in c.messages],
            [canonical_json(r) for r in c.replies],
            [(loss.path, loss.reason) for loss in c.losses],
        )

    return plain(a) == plain(b)


def _receive(peer: Receiver, out: Converted, sessions: set[str] | None, raw: Any = None) -> None:
    """Check a step's output: ``messages`` go on in the direction of the input; ``replies``
    go back, as answers to the agent or, for a client's answer, as the call it restored."""
    answers = [r for r in out.replies if isinstance(r, JsonRpcMessage) and r.is_response]
    restored = [r for r in out.replies if not (isinstance(r, JsonRpcMessage) and r.is_response)]
    if any(loss.path in _EVICTING for loss in out.losses):
        sessions = None  # a session the store dropped: what was held back about it goes out
    peer.receive(out.messages, sessions=sessions, raw=raw, replies=answers, losses=out.losses)
    peer.receive(restored, sessions=None)


_EVICTING = frozenset({"$.max_sessions", "$.max_store_bytes"})


def _unknown(value: Any) -> set[str]:
    """The paths of the unknown keys kept anywhere in a decoded message (D19)."""
    return {loss.path for loss in unknown_keys(value, "$", nested=True)}


def _owe_unknown_keys(raw: Any, protocol: VersionName, owed: set[str]) -> None:
    """Add the unknown keys of an input line to what the bridge owes a carry or a report."""
    decoded = decode_message(raw, version=protocol).value
    items = decoded.items if isinstance(decoded, Batch) else (decoded,)
    for index, item in enumerate(items):
        root = f"$[{index}]" if isinstance(decoded, Batch) else "$"
        owed |= {root + path[1:] for path in _unknown(item)}


def _unbatched(path: str) -> str:
    """``$[2].params.x`` as ``$.params.x`` (the bridges root batch elements' losses at ``$``)."""
    return "$" + path.split("]", 1)[1] if path.startswith("$[") else path


def _pay_unknown_keys(out: Converted, owed: set[str]) -> None:
    """Strike the keys an output carries (a key of a message) or reports (a loss at the key's
    path or at one holding it, like a dropped ``capabilities``). A bridge may report them
    later than the line (a held-back chunk's items are mapped when they go out); at the end
    of a script nothing may be owed (D19)."""
    if not owed:
        return
    sent = json.dumps([json.loads(canonical_json(m)) for m in (*out.messages, *out.replies)])
    reported = {loss.path for loss in out.losses}

    def paid(path: str) -> bool:
        key = path.rsplit(".", 1)[-1].rsplit("[", 1)[-1].strip('[]"')
        if json.dumps(key) + ":" in sent:
            return True
        bare = _unbatched(path)
        for where in reported:
            base = _unbatched(where)
            if bare == base or bare.startswith((base + ".", base + "[")):
                return True
        return False

    owed -= {path for path in owed if paid(path)}


def _withdraw_all(bridge: V2ToV1Bridge, peer: Receiver) -> None:
    """Settle every prompt still open, so that each call the v1 client shows is its own."""
    for request_id in sorted(peer.asked, key=repr):
        out = bridge.withdraw(request_id)
        peer.receive(out.messages, sessions=None)


def _shown(view: ToolCallStore, sid: str, tool_call_id: str) -> Any:
    shown = view.view(sid, tool_call_id)
    return (
        shown.status,
        shown.kind,
        json.loads(canonical_json(shown.content)),
        json.loads(canonical_json(shown.locations)),
    )


def _check_against_fresh(bridge: V2ToV1Bridge, peer: Receiver, note: Note) -> None:
    document = bridge.store.document()
    fresh = V2ToV1Bridge(terminal_profile=bridge.terminal_profile, tail_chars=bridge.tail_chars)
    fresh_peer = Receiver("v1", first_sight=True)
    for sid, session in document["sessions"].items():
        for terminal in session["terminals"]:
            update = {"sessionUpdate": "terminal_update", **terminal}
            _receive(fresh_peer, fresh.convert(_message(sid, update)), {sid})
        for call in session["toolCalls"]:
            update = {"sessionUpdate": "tool_call_update", **call}
            _receive(fresh_peer, fresh.convert(_message(sid, update)), {sid})
    _receive(fresh_peer, fresh.flush(), None)
    compared = 0
    for sid, session in document["sessions"].items():
        for call in session["toolCalls"]:
            tool_call_id = call["toolCallId"]
            assert tool_call_id in peer.known.get(sid, ()), f"{tool_call_id} never sent to v1"
            assert _shown(peer.view, sid, tool_call_id) == _shown(
                fresh_peer.view, sid, tool_call_id
            ), f"{sid}/{tool_call_id}: the v1 client shows another state than the v2 one"
            compared += 1
    note(
        f"calls compared with a fresh projection: {min(compared, 5)}{'+' if compared >= 5 else ''}"
    )


def run_v2_to_v1(
    script: Script,
    *,
    coalesce: bool = False,
    profile: Any = "text",
    limits: Limits | None = None,
    note: Note = _quiet,
) -> None:
    """A ``V2ToV1Bridge`` (and a shadow fed only what the first accepted) over the script; with
    default caps, the v1 view is then compared with a fresh projection of the final state."""
    options: dict[str, Any] = {"coalesce": coalesce, "terminal_profile": profile, "limits": limits}
    bridge, shadow = V2ToV1Bridge(**options), V2ToV1Bridge(**options)
    peer = Receiver("v1", first_sight=True)
    owed: set[str] = set()
    for action, argument in script:
        if action == "convert":
            before = bridge.store.document()
            try:
                out = bridge.convert(argument)
            except DecodeError:
                note("line refused (DecodeError)")
                assert bridge.store.document() == before, "a refused line changed the state"
                continue
            assert _same(out, shadow.convert(argument)), "a refused line changed later output"
            _receive(peer, out, named(argument)[0], argument)
            _owe_unknown_keys(argument, "v2", owed)
        elif action == "flush":
            out = bridge.flush(argument)
            assert _same(out, shadow.flush(argument))
            _receive(peer, out, None if argument is None else {argument})
        else:
            out = bridge.close_session(argument)
            assert _same(out, shadow.close_session(argument))
            _receive(peer, out, {argument})
            assert argument not in bridge.store.sessions
            peer.close(argument)
        _pay_unknown_keys(out, owed)
    out = bridge.flush()
    _receive(peer, out, None)
    _pay_unknown_keys(out, owed)
    _withdraw_all(bridge, peer)
    if limits is None:  # (a cap may drop what carried a key before it went out: reported)
        assert not owed, f"unknown keys lost without a report: {sorted(owed)}"
    if limits is None:
        _check_against_fresh(bridge, peer, note)


def _requests(messages: Any, cls: type) -> int:
    return sum(isinstance(message, cls) for message in flatten(messages))


def run_v1_to_v2(script: Script, note: Note = _quiet) -> None:
    """A ``V1ToV2Bridge`` (and a shadow) over the script; while every permission request
    reached the v2 side, the v2 view of the output equals a v1 view of the input."""
    bridge, shadow = V1ToV2Bridge(), V1ToV2Bridge()
    peer = Receiver("v2", from_v1=True)
    owed: set[str] = set()
    direct = ToolCallStore(version="v1", limits=UNCAPPED)  # a v1 client reading the input
    comparable = True
    for action, argument in script:
        if action == "convert":
            try:
                out = bridge.convert(argument)
            except DecodeError:
                note("line refused (DecodeError)")
                continue
            assert _same(out, shadow.convert(argument)), "a refused line changed later output"
            _receive(peer, out, named(argument)[0], argument)
            _owe_unknown_keys(argument, "v1", owed)
            _pay_unknown_keys(out, owed)
            assert not owed, f"unknown keys lost without a report: {sorted(owed)}"
            direct.apply(argument)
            # A request a v2 client cannot be shown (no options, no id) still patches a v1
            # client's call: from there on the two views may differ.
            asked = _requests(
                [decode_message(argument, version="v1").value], v1.PermissionRequestMessage
            )
            if _requests(out.messages, v2.PermissionRequestMessage) < asked:
                comparable = False
        elif action == "flush":
            out = bridge.flush(argument)
            assert _same(out, shadow.flush(argument))
            assert not out.messages and not out.replies
        else:
            out = bridge.close_session(argument)
            assert _same(out, shadow.close_session(argument))
            assert not out.messages and not out.replies
            peer.close(argument)
            direct.sessions.pop(argument, None)
    note(f"views comparable: {comparable}")
    if comparable:
        assert peer.view.document() == direct.document(), "the v2 client shows another state"


# --------------------------------------------------------------------------------------------
# The stateless converters


def _plain(c: Converted) -> Any:
    return (
        [canonical_json(m) for m in c.messages],
        [canonical_json(r) for r in c.replies],
        [(loss.path, loss.reason) for loss in c.losses],
    )


def _run(make: Callable[[bool], Any], peer: Receiver, script: Script, note: Note) -> None:
    converter = make(False)
    for action, argument in script:
        if action == "close":
            assert _plain(converter.close_session(argument)) == _plain(Converted())
            peer.close(argument)
            continue
        if action == "flush":
            assert _plain(converter.flush()) == _plain(Converted())
            continue
        state = copy.deepcopy(getattr(converter, "seen", None))
        try:
            out = converter.convert(argument)
        except DecodeError:
            note("line refused (DecodeError)")
            assert getattr(converter, "seen", None) == state, "a refused line changed `seen`"
            continue
        peer.receive(
            out.messages,
            sessions=named(argument)[0],
            raw=argument,
            replies=out.replies,
            losses=out.losses,
        )
        strict = make(True)
        if state is not None:
            strict.seen = copy.deepcopy(state)
        try:
            strict_out = strict.convert(argument)
        except ConversionError as exc:
            note("strict: ConversionError")
            assert exc.path in {loss.path for loss in out.losses}, (exc, out.losses)
        else:
            assert _plain(strict_out) == _plain(out), "strict mode changed the result"
        assert _plain(converter.flush()) == _plain(Converted())


def run_stateless(script: Script, protocol: VersionName, note: Note = _quiet) -> None:
    """``StatelessV2ToV1`` over v2 input (``version="v2"``) or ``StatelessV1ToV2`` over v1,
    each line also converted in strict mode from the same state."""
    if protocol == "v2":
        _run(
            lambda strict: StatelessV2ToV1(strict=strict),
            Receiver("v1", first_sight=True),
            script,
            note,
        )
    else:
        _run(
            lambda strict: StatelessV1ToV2(strict=strict),
            Receiver("v2", from_v1=True),
            script,
            note,
        )
