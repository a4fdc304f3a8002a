"""``state.size_of``: the generated measurers add up exactly what the definition (``_walk``) does.

The store's byte caps, and every ``size`` it keeps, are sums of ``size_of``; issue 19 replaced
the one iterative walk by measurers generated per model class (and for dicts and lists), which
must give the same number for every value: on every sub-value of fuzzed v1/v2 messages, on
models with unknown keys, on values nested deeper than the measurers recurse.
"""

from __future__ import annotations

from typing import Any

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

from acp_toolcalls import v2
from acp_toolcalls.codec import DecodeError, decode_message
from acp_toolcalls.models import with_extra_fields
from acp_toolcalls.store import size_of
from acp_toolcalls.store._sizes import _MAX_DEPTH, _walk

from .strategies import examples, line, traffic


def _values(root: Any) -> list[Any]:
    """``root`` and every value inside it (model fields, list items, dict keys and values)."""
    out: list[Any] = []
    stack = [root]
    while stack:
        value = stack.pop()
        out.append(value)
        if isinstance(value, msgspec.Struct):
            stack.extend(getattr(value, name) for name in value.__struct_fields__)
        elif isinstance(value, (list, tuple)):
            stack.extend(value)
        elif isinstance(value, dict):
            stack.extend(value)
            stack.extend(value.values())
    return out


def _same_as_walk(value: Any) -> None:
    # A lone text content item is measured by its own formula (the common chunk; the store's
    # figures since issue 15); inside anything else it is a model like any other.
    if not (type(value) is v2.Content and type(value.content) is v2.TextContent):
        assert size_of(value) == _walk(value), value
    assert size_of([value]) == _walk([value]), value
    assert size_of({"k": value}) == _walk({"k": value}), value


@settings(max_examples=examples(1.0))
@given(
    stream=st.lists(traffic("v2") | traffic("v1") | line("v2") | line("v1"), max_size=8),
    protocol=st.sampled_from(["v1", "v2"]),
)
def test_measurers_add_up_what_the_walk_does(stream: list[bytes], protocol: Any) -> None:
    for data in stream:
        try:
            decoded = decode_message(data, version=protocol)
        except DecodeError:
            continue
        for value in _values(decoded.value):
            _same_as_walk(value)


def test_text_content_item_formula() -> None:
    item = v2.Content(content=v2.TextContent(text="héllo"))
    assert size_of(item) == 160 + 76 + 4 * 5
    ascii_item = v2.Content(content=v2.TextContent(text="hello"), meta={"k": "v"})
    assert size_of(ascii_item) == 160 + 49 + 5  # the item's own `_meta` is not counted here


def test_models_with_unknown_keys() -> None:
    text = with_extra_fields(v2.TextContent, {"x-vendor": {"a": [1, 2.5, "é"]}}, text="hi")
    item = v2.Content(content=text)
    for value in (text, item, [item], {"a": item}):
        assert size_of(value) == _walk(value)


def test_values_deeper_than_the_recursion_are_walked() -> None:
    deep: Any = "leaf"
    for index in range(_MAX_DEPTH * 50):
        deep = [deep] if index % 2 else {"k": deep, "n": index}
    assert size_of(deep) == _walk(deep)
    model = v2.Content(content=v2.TextContent(text="x", meta={"deep": deep}))
    assert size_of(model) == _walk(model)


def test_other_values() -> None:
    for value in (
        b"abc",
        bytearray(b"abcd"),
        (1, 2.0, True, None),
        {1: "int key", None: [msgspec.UNSET]},
        object(),
        frozenset({1}),
        12345678901234567890,
    ):
        assert size_of(value) == _walk(value), value
        assert size_of([value]) == _walk([value]), value
