"""The tool-call field registry: the models are the one list of fields (issue 28).

Every module that handles a tool call's fields one by one declares which it handles, or derives
its list from the registry (``models.TOOL_CALL_FIELDS``, ``V1_TOOL_CALL_FIELDS``). Here:

- the registry is what the models say (names, wire names, positions, arrays);
- each hand-written consumer handles exactly today's fields, and its declaration is what its
  code does (the fast paths' declared reads are the attributes their source reads; the
  patchers are probed);
- a field added to ``v2.ToolCallUpdate`` alone (a subclass with one more field, built here)
  fails every consumer that has no line for it, each named; the derived lists follow the
  registry by construction;
- end to end: the same field added to the model's source makes the package's import fail,
  naming a consumer (a copy of the package in a temporary directory).
"""

from __future__ import annotations

import ast
import inspect
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec
import pytest
from msgspec import UNSET
from msgspec.structs import astuple

import acp_toolcalls
import tests.bridge.test_fast_paths as test_fast_paths
import tests.codec.test_codec as test_codec
from acp_toolcalls import v1, v2
from acp_toolcalls.agent import ToolCallEmitter, _senders
from acp_toolcalls.bridge import _to_v1_calls, _to_v2, _to_v2_state
from acp_toolcalls.convert import _plain, _tool_calls
from acp_toolcalls.models import (
    TOOL_CALL_FIELDS,
    V1_TOOL_CALL_FIELDS,
    PatchField,
    UnhandledFieldError,
    check_handled,
    patch_fields,
)
from acp_toolcalls.models._fields import Lenient
from acp_toolcalls.store import COLLECTION_FIELDS, _patch
from tests.fuzz.test_fuzz_emit import FIELDS as EMIT_FIELDS

# --------------------------------------------------------------------------------------------
# The registry


def test_registry_is_the_models_fields() -> None:
    model: Any
    for model, registry in (
        (v2.ToolCallUpdate, TOOL_CALL_FIELDS),
        (v1.ToolCallUpdate, V1_TOOL_CALL_FIELDS),
    ):
        info = msgspec.inspect.type_info(model)
        assert isinstance(info, msgspec.inspect.StructType)
        assert [(f.attr, f.key) for f in registry] == [
            (f.name, f.encode_name) for f in info.fields[1:]
        ]
        markers: dict[str, Any] = {f.attr: f"<{f.attr}>" for f in registry}
        sample = model(tool_call_id="c", **markers)
        values = astuple(sample)
        assert all(values[f.position] == f"<{f.attr}>" for f in registry)
        arrays = [
            f.name
            for f in info.fields[1:]
            if any(isinstance(t, msgspec.inspect.ListType) for t in _types(f.type))
        ]
        assert [f.attr for f in registry if f.collection] == arrays
    assert {f.attr for f in patch_fields(v1.ToolCall)} == {f.attr for f in V1_TOOL_CALL_FIELDS}


def _types(info: Any) -> list[Any]:
    return list(info.types) if isinstance(info, msgspec.inspect.UnionType) else [info]


def test_check_handled_names_the_consumer_and_the_fields() -> None:
    check_handled("x", [f.attr for f in TOOL_CALL_FIELDS])
    with pytest.raises(UnhandledFieldError) as raised:
        check_handled("some.consumer", ["title", "bogus"])
    assert raised.value.consumer == "some.consumer"
    assert "title" not in raised.value.missing and "name" in raised.value.missing
    assert raised.value.unknown == ["bogus"]
    assert "some.consumer does not handle the field(s) name" in str(raised.value)
    with pytest.raises(UnhandledFieldError, match="'raw_input' as the wire name of raw_input"):
        attrs = [f.attr for f in TOOL_CALL_FIELDS]
        check_handled("c", attrs, keys={"raw_input": "raw_input"})


# --------------------------------------------------------------------------------------------
# The consumers


def _declared(
    consumer: str, handled: Callable[[], Any]
) -> Callable[[tuple[PatchField, ...], type], None]:
    def check(fields: tuple[PatchField, ...], model: type) -> None:
        check_handled(consumer, handled(), fields)

    return check


def _signature(method: Callable[..., Any]) -> list[str]:
    return [
        name for name in inspect.signature(method).parameters if name not in ("self", "call_id")
    ]


V2_CONSUMERS: dict[str, Callable[[tuple[PatchField, ...], type], None]] = {
    "convert._tool_calls._FIELDS_TO_V1": _declared(
        "convert._tool_calls._FIELDS_TO_V1", lambda: [f.attr for f in _tool_calls._FIELDS_TO_V1]
    ),
    "convert._plain.plain_fields": _declared(
        "convert._plain.plain_fields", lambda: _plain.PLAIN_FIELDS_READS
    ),
    "store._patch.patch_call": lambda fields, model: _patch.check_patcher(
        "store._patch.patch_call", _patch.patch_call, model, frozenset({"toolCallId", "_meta"})
    ),
    "bridge._to_v1_calls._hold_fields": lambda fields, model: _to_v1_calls.check_hold_fields(model),
    "agent._senders.FIELD_CHECKS": _declared(
        "agent._senders.FIELD_CHECKS", lambda: _senders.FIELD_CHECKS
    ),
    "agent.ToolCallEmitter.start": _declared(
        "agent.ToolCallEmitter.start", lambda: _signature(ToolCallEmitter.start)
    ),
    "agent.ToolCallEmitter.update": _declared(
        "agent.ToolCallEmitter.update", lambda: _signature(ToolCallEmitter.update)
    ),
    "tests.test_fast_paths.V2_FIELD_STRATEGIES": _declared(
        "tests.test_fast_paths.V2_FIELD_STRATEGIES", lambda: test_fast_paths.V2_FIELD_STRATEGIES
    ),
    "tests.test_codec.SAMPLE_VALUE": _declared(
        "tests.test_codec.SAMPLE_VALUE", lambda: test_codec.SAMPLE_VALUE
    ),
    "tests.fuzz.test_fuzz_emit.FIELDS": _declared(
        "tests.fuzz.test_fuzz_emit.FIELDS", lambda: EMIT_FIELDS
    ),
}
"""Each consumer of ``v2.ToolCallUpdate``'s fields that lists them by hand (a table, a
written-out path, a public signature, a test's per-field values): its check against a registry
(``fields``, of ``model``), which raises ``UnhandledFieldError`` naming it."""

V1_CONSUMERS: dict[str, Callable[[tuple[PatchField, ...], type], None]] = {
    "convert._tool_calls._FIELDS_TO_V2": _declared(
        "convert._tool_calls._FIELDS_TO_V2", lambda: [f.attr for f in _tool_calls._FIELDS_TO_V2]
    ),
    "convert._plain.plain_tool_call_fields": _declared(
        "convert._plain.plain_tool_call_fields", lambda: _plain.PLAIN_TOOL_CALL_FIELDS_READS
    ),
    "tests.test_fast_paths.V1_FIELD_STRATEGIES": _declared(
        "tests.test_fast_paths.V1_FIELD_STRATEGIES", lambda: test_fast_paths.V1_FIELD_STRATEGIES
    ),
}
"""The same for v1's tool-call fields (the v1 -> v2 direction)."""


def _unhandled(
    consumers: dict[str, Callable[[tuple[PatchField, ...], type], None]], model: type
) -> dict[str, list[str]]:
    """Consumer -> the fields of ``model`` it misses, for each consumer that misses one."""
    fields = patch_fields(model)
    found = {}
    for name, check in consumers.items():
        try:
            check(fields, model)
        except UnhandledFieldError as exc:
            assert exc.consumer == name
            found[name] = exc.missing + exc.unknown
    return found


def test_every_consumer_handles_every_field_today() -> None:
    assert _unhandled(V2_CONSUMERS, v2.ToolCallUpdate) == {}
    assert _unhandled(V1_CONSUMERS, v1.ToolCallUpdate) == {}
    assert _unhandled(V1_CONSUMERS, v1.ToolCall) == {}


class _V2WithProgress(v2.ToolCallUpdate, kw_only=True):
    """``v2.ToolCallUpdate`` with one more patch field, as a future schema might add."""

    progress: Lenient[int] = UNSET


class _V1WithProgress(v1.ToolCallUpdate, kw_only=True):
    progress: Lenient[int] = UNSET


def test_a_new_v2_field_fails_every_consumer_that_misses_it_by_name() -> None:
    assert [f.attr for f in patch_fields(_V2WithProgress)][-1] == "progress"
    assert _unhandled(V2_CONSUMERS, _V2WithProgress) == {
        name: ["progress"] for name in V2_CONSUMERS
    }


def test_a_new_v1_field_fails_every_consumer_that_misses_it_by_name() -> None:
    assert _unhandled(V1_CONSUMERS, _V1WithProgress) == {
        name: ["progress"] for name in V1_CONSUMERS
    }


def test_the_derived_lists_are_the_registry() -> None:
    """The consumers without a hand list read the registry: a new field is theirs at once."""
    attrs = [f.attr for f in TOOL_CALL_FIELDS]
    assert list(_to_v2._UPDATE_FIELDS) == attrs
    assert list(_to_v2_state.HELD_FIELDS) == [a for a in attrs if a != "meta"]
    collections = {name for f in TOOL_CALL_FIELDS if f.collection for name in (f.attr, f.key)}
    assert COLLECTION_FIELDS == collections == {"content", "locations"}


def test_the_patchers_fail_on_a_field_read_from_another_place() -> None:
    def swapped(
        update: Any, fields: dict[str, Any], patched: list[str], cleared: list[str]
    ) -> None:
        _patch.patch_call(replace_values(update), fields, patched, cleared)

    def replace_values(update: Any) -> Any:
        return msgspec.structs.replace(update, name=update.title, title=update.name)

    with pytest.raises(RuntimeError, match="reads a field from another's place"):
        _patch.check_patcher("p", swapped, v2.ToolCallUpdate, frozenset({"toolCallId", "_meta"}))


@pytest.mark.parametrize(
    ("function", "variable", "declared"),
    [
        (_plain.plain_fields, "u", _plain.PLAIN_FIELDS_READS),
        (_plain.plain_tool_call_fields, "tc", _plain.PLAIN_TOOL_CALL_FIELDS_READS),
    ],
)
def test_the_fast_paths_read_what_they_declare(
    function: Callable[..., Any], variable: str, declared: tuple[str, ...]
) -> None:
    """A fast path's declaration (checked at import) is the attributes its source reads of the
    call, in order: a field read without being declared, or declared without being read, fails."""
    path = Path(_plain.__file__ or "").parent / "_plain.py"  # (compiled: beside the extension)
    if not path.exists():
        pytest.skip("an installation without sources")
    source = path.read_text(encoding="utf-8")
    tree = next(
        node
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.FunctionDef) and node.name == function.__name__
    )
    read = [
        node.attr
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id == variable
    ]
    in_order = list(dict.fromkeys(sorted(read, key=_line_of(tree, variable))))
    assert in_order == list(declared), f"convert._plain.{function.__name__} reads {in_order}"


def _line_of(tree: ast.AST, variable: str) -> Callable[[str], int]:
    first: dict[str, int] = {}
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id == variable
        ):
            first[node.attr] = min(first.get(node.attr, node.lineno), node.lineno)
    return lambda attr: first[attr]


# --------------------------------------------------------------------------------------------
# End to end: the field added to the model's source


def test_a_field_added_to_the_model_source_fails_the_import_naming_a_consumer(
    tmp_path: Path,
) -> None:
    package = Path(acp_toolcalls.__file__ or "").parent
    model = package / "models" / "_v2_tool_calls.py"
    if not model.exists():
        pytest.skip("an installation without sources")
    copy = tmp_path / "acp_toolcalls"
    shutil.copytree(package, copy, ignore=shutil.ignore_patterns("__pycache__"))
    source = (copy / "models" / "_v2_tool_calls.py").read_text(encoding="utf-8")
    anchor = "    capabilities: Lenient[ToolCallCapabilities] = UNSET\n"
    assert source.count(anchor) == 1
    edited = source.replace(anchor, anchor + "    progress: Lenient[int] = UNSET\n")
    (copy / "models" / "_v2_tool_calls.py").write_text(edited, encoding="utf-8")
    script = textwrap.dedent(
        """
        import importlib
        try:
            for name in ("convert", "store", "bridge", "agent"):  # (lazy packages)
                module = importlib.import_module(f"acp_toolcalls.{name}")
                for attr in getattr(module, "__all__", ()):
                    getattr(module, attr)
        except Exception as exc:
            print(type(exc).__name__, exc)
        else:
            print("imported")
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=tmp_path,
        env={"PYTHONPATH": str(tmp_path), "PYTHONDONTWRITEBYTECODE": "1"},
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    out = done.stdout
    assert out.startswith("UnhandledFieldError "), out + done.stderr
    assert "does not handle the field(s) progress" in out
    assert any(out.startswith(f"UnhandledFieldError {name} ") for name in V2_CONSUMERS), out
