"""Content both ways: tool-call content items, content blocks, locations.

Rules this module owns (D46 (content mapping); D7, D19, D38, D41):

- A content block, its annotations and resources, and a location are copied field by field
  into the other version's class (``_STRUCTS_TO_V2``/``_STRUCTS_TO_V1``: class -> (target
  class, {field: fix})); fields not listed are copied as they are, item ``_meta`` is copied,
  unknown keys are reported and left behind (D19).
- v1 -> v2: a value v2 constrains and v1 does not (``annotations.priority`` outside [0, 1], a
  negative ``size``) is dropped; a location ``line: 0`` means "no line" and is dropped (D7); a
  v1 terminal names a client-owned resource v2 has no equivalent for (D38): strict mode
  raises, lossy mode drops the item, unless a reader of the ``_meta`` terminal extension
  marked it a display terminal (``_terminal_meta.DisplayTerminal``, D38 amended): a v2
  ``terminal`` item. A nested ``null`` means "none" in v2 too: copied.
- v2 -> v1: ``ResourceLink.icons``, unknown audience roles and a ``size`` past int64 are
  removed; content blocks and items of unknown types are dropped; a terminal reference is a
  text item naming the terminal (its output is state only a stateful bridge has, D46 (terminal
  conversion)). Fixes see ``null`` too (``icons: null`` must go: v1 has no such field).
- A ``session`` item (a reference to another session, a subagent's) is copied one to one
  v1 -> v2; toward v1 it is a text item naming the session, and its title when the caller
  knows it (``session_reference_to_v1``), reported: v1 editors on today's SDKs reject a
  content type they do not know. The id is a code span and the title has every ASCII
  punctuation escaped: agent text never becomes markup in an editor that renders CommonMark.
- Diff items are ``_diffs``'s; every item is mapped through ``_ITEMS_TO_V2``/``_ITEMS_TO_V1``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from msgspec import UNSET

from .. import v1, v2
from ..models import WireStruct
from ._diffs import diff_item_to_v1, diff_item_to_v2
from ._kernel import (
    TO_V1_MISSING,
    TO_V2_MISSING,
    Fix,
    Losses,
    copy_fields,
    copy_meta,
    lookup,
    meta_fix,
    report_extra,
)
from ._loss import NO_LOSSES, LossReport
from ._terminal_meta import DisplayTerminal, display_terminal_to_v2

# --------------------------------------------------------------------------------------------
# v1 -> v2


def struct_to_v2(obj: WireStruct, path: str, losses: Losses) -> Any:
    """``obj`` copied into its v2 class (``_STRUCTS_TO_V2``), field by field."""
    target, fixes = lookup(_STRUCTS_TO_V2, obj, TO_V2_MISSING)
    # A nested `null` means "none" in v2 too: copied, never fixed.
    return copy_fields(obj, target, fixes, path, losses, fix_nulls=False)


def _priority(value: float, path: str, losses: Losses) -> Any:
    if 0.0 <= value <= 1.0:
        return value
    losses.lost(path, f"priority {value!r} is outside [0, 1], which v2 requires; dropped")
    return UNSET


def _size_to_v2(value: Any, path: str, losses: Losses) -> Any:  # Any: compiled, see _line
    if value >= 0:
        return value
    losses.lost(path, f"negative size {value} is invalid in v2; dropped")
    return UNSET


def _line(value: Any, path: str, losses: Losses) -> Any:
    # `Any`, not `int`: a model built in code may hold a float here, which the compiled build
    # (mypyc checks annotated argument types) must read as the interpreted one does.
    if value >= 1:
        return value
    losses.lost(path, f"line {value} is not a 1-based line number, read as no line; dropped")
    return UNSET


_STRUCTS_TO_V2: dict[type[Any], tuple[type[WireStruct], dict[str, Fix]]] = {
    # v1 class: (v2 class, {field: conversion}); fields not listed are copied as they are.
    v1.Content: (v2.Content, {"content": struct_to_v2, "meta": meta_fix}),
    v1.TextContent: (v2.TextContent, {"annotations": struct_to_v2, "meta": meta_fix}),
    v1.ImageContent: (v2.ImageContent, {"annotations": struct_to_v2, "meta": meta_fix}),
    v1.AudioContent: (v2.AudioContent, {"annotations": struct_to_v2, "meta": meta_fix}),
    v1.ResourceLink: (
        v2.ResourceLink,
        {"annotations": struct_to_v2, "size": _size_to_v2, "meta": meta_fix},
    ),
    v1.EmbeddedResource: (
        v2.EmbeddedResource,
        {"resource": struct_to_v2, "annotations": struct_to_v2, "meta": meta_fix},
    ),
    # v1 embeds the same resource classes; rebuilt only to leave unknown keys behind.
    v2.TextResourceContents: (v2.TextResourceContents, {"meta": meta_fix}),
    v2.BlobResourceContents: (v2.BlobResourceContents, {"meta": meta_fix}),
    v1.Annotations: (
        v2.Annotations,
        {"audience": lambda roles, _p, _l: list(roles), "priority": _priority, "meta": meta_fix},
    ),
    v1.ToolCallLocation: (v2.ToolCallLocation, {"line": _line, "meta": meta_fix}),
    v1.SessionReference: (v2.SessionReference, {"meta": meta_fix}),
}


def _terminal_to_v2(item: v1.Terminal, path: str, losses: Losses) -> v2.ToolCallContent | None:
    losses.unrepresentable(
        path,
        f"terminal {item.terminal_id!r} is a client-owned v1 terminal with no v2 equivalent",
    )
    return None


def _display_terminal_to_v2(item: DisplayTerminal, path: str, losses: Losses) -> v2.Terminal:
    report_extra(item, path, losses)
    return display_terminal_to_v2(item)


_ITEMS_TO_V2: dict[type[Any], Callable[[Any, str, Losses], v2.ToolCallContent | None]] = {
    v1.Content: struct_to_v2,
    v1.Diff: diff_item_to_v2,
    DisplayTerminal: _display_terminal_to_v2,  # before its base: `lookup` reads the MRO
    v1.Terminal: _terminal_to_v2,
    v1.SessionReference: struct_to_v2,
}


def content_to_v2(
    item: v1.ToolCallContent, *, path: str = "$", strict: bool = False
) -> tuple[v2.ToolCallContent | None, LossReport]:
    """One v1 tool-call content item as a v2 item (``None`` if it was dropped), and the losses.

    ``path`` is where the item sits in the message, for the loss paths (``$.content[2]``).
    Raises ``ConversionError`` in strict mode for a terminal item (D38).
    """
    losses = Losses(strict)
    converted = lookup(_ITEMS_TO_V2, item, TO_V2_MISSING)(item, path, losses)
    return converted, losses.report()


def contents_to_v2(items: list[v1.ToolCallContent], path: str, losses: Losses) -> Any:
    out: list[v2.ToolCallContent] = []
    for index, item in enumerate(items):
        converted = lookup(_ITEMS_TO_V2, item, TO_V2_MISSING)(item, f"{path}[{index}]", losses)
        if converted is not None:
            out.append(converted)
    return out  # may be [] when every item was dropped: it still replaces (D46 (field mapping))


def locations_to_v2(items: list[v1.ToolCallLocation], path: str, losses: Losses) -> Any:
    return [struct_to_v2(item, f"{path}[{index}]", losses) for index, item in enumerate(items)]


# --------------------------------------------------------------------------------------------
# v2 -> v1


def struct_to_v1(obj: WireStruct, path: str, losses: Losses) -> Any:
    """``obj`` copied into its v1 class (``_STRUCTS_TO_V1``), field by field."""
    target, fixes = lookup(_STRUCTS_TO_V1, obj, TO_V1_MISSING)
    # Fixes see `null` too: `icons: null` must go, as v1 has no such field.
    return copy_fields(obj, target, fixes, path, losses, fix_nulls=True)


def _nested(value: Any, path: str, losses: Losses) -> Any:
    return None if value is None else struct_to_v1(value, path, losses)


_ROLES = {"user": "user", "assistant": "assistant"}


def _audience(roles: Any, path: str, losses: Losses) -> Any:
    if roles is None:
        return None
    kept: list[str] = []
    for index, role in enumerate(roles):
        known = _ROLES.get(role)
        if known is None:
            losses.instead(f"{path}[{index}]", f"v1 has no audience role {role!r}", "removed")
        else:
            kept.append(known)
    return kept


def _icons(icons: Any, path: str, losses: Losses) -> Any:
    if icons:  # `null` and `[]` carry nothing
        losses.instead(path, "v1 resource links have no `icons`", "dropped")
    return UNSET


_INT64_MAX = 2**63 - 1


def _size_to_v1(size: Any, path: str, losses: Losses) -> Any:
    if size is not None and size > _INT64_MAX:
        losses.instead(path, f"size {size} does not fit v1's int64", "dropped")
        return UNSET
    return size


_STRUCTS_TO_V1: dict[type[Any], tuple[type[WireStruct], dict[str, Fix]]] = {
    # v2 class: (v1 class, {field: conversion}); fields not listed are copied as they are.
    v2.Content: (v1.Content, {"content": _nested, "meta": meta_fix}),
    v2.TextContent: (v1.TextContent, {"annotations": _nested, "meta": meta_fix}),
    v2.ImageContent: (v1.ImageContent, {"annotations": _nested, "meta": meta_fix}),
    v2.AudioContent: (v1.AudioContent, {"annotations": _nested, "meta": meta_fix}),
    v2.ResourceLink: (
        v1.ResourceLink,
        {"icons": _icons, "size": _size_to_v1, "annotations": _nested, "meta": meta_fix},
    ),
    v2.EmbeddedResource: (
        v1.EmbeddedResource,
        {"resource": _nested, "annotations": _nested, "meta": meta_fix},
    ),
    # v1 embeds the same resource classes; rebuilt only to leave unknown keys behind.
    v2.TextResourceContents: (v2.TextResourceContents, {"meta": meta_fix}),
    v2.BlobResourceContents: (v2.BlobResourceContents, {"meta": meta_fix}),
    v2.Annotations: (v1.Annotations, {"audience": _audience, "meta": meta_fix}),
    v2.ToolCallLocation: (v1.ToolCallLocation, {"meta": meta_fix}),
}

# Content items (D46 (content mapping))


def _content_item(item: v2.Content, path: str, losses: Losses) -> list[Any]:
    block = item.content
    if isinstance(block, v2.UnknownContentBlock):
        losses.instead(path, f"its content block has unknown type {block.tag!r}", "dropped")
        return []
    return [struct_to_v1(item, path, losses)]


def _terminal_to_v1(item: v2.Terminal, path: str, losses: Losses) -> list[Any]:
    losses.instead(
        path,
        "a v2 terminal is an agent-owned display stream with no v1 form; its output is "
        "terminal state only a stateful bridge has",
        "sent as a text item naming the terminal",
    )
    text = f"[terminal {item.terminal_id}: output not available]"
    return [v1.Content(content=v1.TextContent(text=text), meta=copy_meta(item.meta))]


_PUNCTUATION = re.compile(r"[!-/:-@\[-`{-~]")
_LINE_BREAKS = re.compile(r"[\r\n]+")
_BACKTICK_RUNS = re.compile(r"`+")


def _code_span(text: str) -> str:
    """``text`` as a CommonMark code span (literal: no markup inside), on one line."""
    text = _LINE_BREAKS.sub(" ", text)
    longest = max((len(run) for run in _BACKTICK_RUNS.findall(text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith(("`", " ")) or text.endswith(("`", " ")) else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _literal(text: str) -> str:
    """``text`` on one line with every ASCII punctuation backslash-escaped: plain text in
    CommonMark (no emphasis, link, HTML or entity)."""
    return _PUNCTUATION.sub(lambda match: "\\" + match.group(), _LINE_BREAKS.sub(" ", text))


def session_reference_text(session_id: str, title: str | None = None) -> str:
    """The v1 text of a ``session`` item: ``Session `ID```, or ``Session “TITLE” (`ID`)``."""
    if title:
        return f"Session \u201c{_literal(title)}\u201d ({_code_span(session_id)})"
    return f"Session {_code_span(session_id)}"


def session_reference_to_v1(
    item: v2.SessionReference, title: str | None, path: str, losses: Losses
) -> v1.Content:
    """A ``session`` item as the v1 text item naming the session (and ``title``, that
    session's title when the caller knows it), reported."""
    report_extra(item, path, losses)
    losses.lost(
        path,
        "v1 editors on today's SDKs reject a `session` content item (a reference to another "
        "session, such as a subagent's); sent as a text item naming the session",
    )
    text = session_reference_text(item.session_id, title)
    return v1.Content(content=v1.TextContent(text=text), meta=copy_meta(item.meta))


def _session_to_v1(item: v2.SessionReference, path: str, losses: Losses) -> list[Any]:
    return [session_reference_to_v1(item, None, path, losses)]


def _unknown_item(item: v2.UnknownToolCallContent, path: str, losses: Losses) -> list[Any]:
    losses.instead(path, f"unknown content type {item.tag!r} has no v1 form", "dropped")
    return []


_ITEMS_TO_V1: dict[type[Any], Callable[[Any, str, Losses], list[Any]]] = {
    v2.Content: _content_item,
    v2.Diff: diff_item_to_v1,
    v2.Terminal: _terminal_to_v1,
    v2.SessionReference: _session_to_v1,
    v2.UnknownToolCallContent: _unknown_item,
}


def content_to_v1(
    item: v2.ToolCallContent, *, path: str = "$", strict: bool = False
) -> tuple[list[v1.ToolCallContent], LossReport]:
    """One v2 tool-call content item as v1 items (none or one), and the losses.

    ``path`` is where the item sits in its message, for the loss paths (``$.content[2]``).
    Content blocks are copied (``icons`` and unknown audience roles removed); a diff is a v1
    diff when it adds one text file whose whole text is in its Git patch, otherwise a text
    item (D46 (diff conversion)); a terminal or a session reference is a text item naming it;
    unknown blocks and items are dropped. Strict mode raises ``ConversionError`` for anything but an
    exact mapping.
    """
    plain = plain_text_to_v1(item)
    if plain is not None:  # the fast path
        return [plain], NO_LOSSES
    losses = Losses(strict)
    converted = lookup(_ITEMS_TO_V1, item, TO_V1_MISSING)(item, path, losses)
    return converted, losses.report()


# --------------------------------------------------------------------------------------------
# Tool calls (D46 (field mapping))


def plain_text_to_v1(item: Any) -> v1.Content | None:
    """The v1 item of a plain text item (no annotations, no ``_meta``: the bulk of streamed
    output), which converts with no loss; ``None`` for any other item."""
    if type(item) is v2.Content:
        block = item.content
        if (
            type(block) is v2.TextContent
            and block.annotations is UNSET
            and block.meta is UNSET
            and item.meta is UNSET
        ):
            return v1.Content(content=v1.TextContent(text=block.text))
    return None


def contents_to_v1(items: list[Any], path: str, losses: Losses) -> Any:
    out: list[Any] = []
    for index, item in enumerate(items):
        out += lookup(_ITEMS_TO_V1, item, TO_V1_MISSING)(item, f"{path}[{index}]", losses)
    return out


def locations_to_v1(items: list[Any], path: str, losses: Losses) -> Any:
    return [struct_to_v1(item, f"{path}[{index}]", losses) for index, item in enumerate(items)]
