"""Session updates as JSON: the frame of the opaque updates and the shared rule builders.

Rules this module owns (D46 (session-update mapping); D19, D30):

- Session updates other than tool calls are opaque JSON values in the models; each one is
  mapped by the rule (``OpaqueRule``) its ``sessionUpdate`` names in a direction's table, or
  dropped and reported, never forwarded raw (``opaque``). Keys the target does not define are
  dropped and reported (D19).
- A rule's result is checked against the target schema's ``$defs`` entry and dropped, reported,
  if it is not valid (the input was not); message chunks, the common case, are valid by
  construction (their one content block goes through the typed models: ``block_to_v2``,
  ``block_to_v1``), and so is no schema loaded for them. The check is a structure check
  (``schema.first_violation``: the same answer as jsonschema's, without it), built ahead by
  ``prepare_rules`` (``acp-toolcalls bridge`` does as it starts): nothing on the message path
  reads a schema or builds a validator mid-stream. An unstable update's rule is checked
  against the target's unstable schema (``OpaqueRule.unstable``).
- The rule builders: ``copied`` (known keys copied), ``each_item`` (a list converted item by
  item), ``compaction`` and ``block_chunk`` (content blocks inside), ``if_advertised`` (v2 ->
  v1 only for a client that advertised the capability, D30).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, cast

from .. import v1, v2
from ..codec import DecodeError, VersionName, decode, to_builtins
from ..schema import first_violation, prepare_checks
from ._content import struct_to_v1, struct_to_v2
from ._kernel import Fix, Json, Losses, copy_keys, salvaged

# --------------------------------------------------------------------------------------------
# The frame, and v1 -> v2 content


@dataclass(frozen=True)
class ToV2:
    """What the v1 -> v2 rules are told: the ``messageId`` a chunk without one takes
    (``None``: a stateless caller, which cannot assign one)."""

    message_id: str | None


def block_to_v2(value: Any, path: str, losses: Losses, dropped: str) -> Any:
    """A v1 content block (JSON) at ``path`` as a v2 one (JSON); ``None`` when it is not a
    valid block, and then ``dropped`` (the block, or the update holding it) is reported."""
    try:
        decoded = decode(value, cast(Any, v1.ContentBlock))
    except DecodeError as exc:
        where = path + exc.path[1:]
        losses.instead(dropped, f"not a valid v1 content block ({where}: {exc.reason})", "dropped")
        return None
    salvaged(path, decoded.diagnostics, losses)
    return to_builtins(struct_to_v2(decoded.value, path, losses))


def _schema_valid(value: Json, rule: OpaqueRule, version: VersionName, losses: Losses) -> bool:
    """Whether ``value`` validates against the rule's ``$defs`` entry (of the unstable schema
    for an unstable rule); reported (strict: raises) if not. A structure check, built ahead
    (``prepare_rules``): no validator is loaded mid-stream."""
    def_name = rule.schema_def
    assert def_name is not None
    violation = first_violation(value, def_name, version, unstable=rule.unstable)
    if violation is not None:
        path, message = violation
        schema = f"{version} (unstable)" if rule.unstable else version
        losses.instead("$", f"not a valid {schema} `{def_name}` ({path}: {message})", "dropped")
    return violation is None


def message_chunk_to_v2(data: Mapping[str, Any], losses: Losses, opts: ToV2) -> Json | None:
    out = copy_keys(data, ("content", "messageId", "_meta"), losses)
    block = block_to_v2(data.get("content"), "$.content", losses, "$")
    if block is None:
        return None
    out["content"] = block
    if not isinstance(out.get("messageId"), str):
        if opts.message_id is None:
            losses.instead(
                "$", "v2 requires `messageId`, which a stateless converter cannot assign", "dropped"
            )
            return None
        out["messageId"] = opts.message_id
    return out


OpaqueConvert = Callable[[Mapping[str, Any], Losses, Any], Json | None]
"""Maps the payload of an opaque update (JSON) into the target's; ``None``: dropped, reported."""


def each_item(key: str, convert: Fix) -> OpaqueConvert:
    """The rule of an update that holds one list, ``key``, converted item by item with
    ``convert(item, path, losses)``; an item it returns ``None`` for is left out."""

    def rule(data: Mapping[str, Any], losses: Losses, opts: Any) -> Json | None:
        out = copy_keys(data, (key, "_meta"), losses)
        items = out.get(key)
        if isinstance(items, list):
            converted = (convert(item, f"$.{key}[{i}]", losses) for i, item in enumerate(items))
            out[key] = [item for item in converted if item is not None]
        return out

    return rule


_BlockConverter = Callable[[Any, str, Losses, str], Any]


def convert_blocks(out: Json, key: str, convert: _BlockConverter, losses: Losses) -> None:
    """``out[key]``, when it is a list of content blocks, converted block by block (a block
    that cannot be converted is left out)."""
    items = out.get(key)
    if isinstance(items, list):
        blocks = (convert(b, f"$.{key}[{i}]", losses, f"$.{key}[{i}]") for i, b in enumerate(items))
        out[key] = [block for block in blocks if block is not None]


def compaction(convert: _BlockConverter) -> OpaqueConvert:
    def compaction(data: Mapping[str, Any], losses: Losses, opts: Any) -> Json | None:
        out = copy_keys(data, ("compactionId", "status", "summary", "error", "_meta"), losses)
        convert_blocks(out, "summary", convert, losses)
        return out

    return compaction


def block_chunk(id_key: str, convert: _BlockConverter) -> OpaqueConvert:
    """A chunk of one content block under ``id_key`` (a compaction summary's, a session
    message's): the block converted, the chunk dropped when it cannot be."""

    def chunk(data: Mapping[str, Any], losses: Losses, opts: Any) -> Json | None:
        out = copy_keys(data, (id_key, "content", "_meta"), losses)
        block = convert(data.get("content"), "$.content", losses, "$")
        if block is None:
            return None
        out["content"] = block
        return out

    return chunk


def copied(*keys: str) -> OpaqueConvert:
    return lambda data, losses, opts: copy_keys(data, (*keys, "_meta"), losses)


@dataclass(frozen=True)
class OpaqueRule:
    convert: OpaqueConvert
    tag: str
    """The ``sessionUpdate`` of the result."""
    schema_def: str | None
    """The target ``$defs`` entry the result is checked against; ``None``: valid by construction."""
    unstable: bool = False
    """Whether ``schema_def`` is an entry of the target's unstable schema (``_unstable``)."""


def prepare_rules(rules: Mapping[str, OpaqueRule], version: VersionName) -> None:
    """Build the schema checks ``rules`` ask now (reading the schema file), so that the first
    update that needs one does not wait for it (``acp-toolcalls bridge``: as it starts)."""
    for unstable in (False, True):
        names = {r.schema_def for r in rules.values() if r.schema_def and r.unstable is unstable}
        prepare_checks(version, names, unstable=unstable)


def opaque(
    data: Mapping[str, Any],
    rules: Mapping[str, OpaqueRule],
    not_mapped: Mapping[str, str],
    version: VersionName,
    losses: Losses,
    opts: Any,
) -> Json | None:
    """An opaque update as the target's JSON value, or ``None`` (dropped and reported)."""
    tag = data["sessionUpdate"]
    rule = rules.get(tag)
    if rule is None:
        reason = not_mapped.get(tag) or f"`{tag}` has no {version} form; never forwarded raw"
        losses.instead("$", reason, "dropped")
        return None
    out = rule.convert(data, losses, opts)
    if out is None:
        return None
    out = {"sessionUpdate": rule.tag, **out}
    if rule.schema_def is not None and not _schema_valid(out, rule, version, losses):
        return None
    return out


# --------------------------------------------------------------------------------------------
# v2 -> v1 content and capabilities


@dataclass(frozen=True)
class ToV1:
    """What the v2 -> v1 rules are told: which optional updates the v1 client advertised
    (``session.notices``, ``session.compaction``; D30; the unstable ``subagents`` and ``plan``:
    ``_unstable``)."""

    notices: bool
    compaction: bool
    subagents: bool = False
    plan: bool = False


def block_to_v1(value: Any, path: str, losses: Losses, dropped: str) -> Any:
    """A v2 content block (JSON) at ``path`` as a v1 one (JSON); ``None`` when v1 cannot have
    it, and then ``dropped`` (the block, or the update holding it) is reported."""
    try:
        decoded = decode(value, cast(Any, v2.ContentBlock))
    except DecodeError as exc:
        where = path + exc.path[1:]
        losses.instead(dropped, f"not a valid v2 content block ({where}: {exc.reason})", "dropped")
        return None
    salvaged(path, decoded.diagnostics, losses)
    block = decoded.value
    if isinstance(block, v2.UnknownContentBlock):
        losses.instead(
            dropped, f"content block at {path} has unknown type {block.tag!r}", "dropped"
        )
        return None
    return to_builtins(struct_to_v1(block, path, losses))


def message_chunk_to_v1(data: Mapping[str, Any], losses: Losses, opts: ToV1) -> Json | None:
    out = copy_keys(data, ("content", "messageId", "_meta"), losses)
    block = block_to_v1(data.get("content"), "$.content", losses, "$")
    if block is None:
        return None
    out["content"] = block
    if "messageId" in out and not isinstance(out["messageId"], str):  # optional in v1
        del out["messageId"]
        losses.lost("$.messageId", "not a string; dropped")
    return out


def if_advertised(capability: str, convert: OpaqueConvert) -> OpaqueConvert:
    def guarded(data: Mapping[str, Any], losses: Losses, opts: ToV1) -> Json | None:
        if not getattr(opts, capability):
            losses.instead(
                "$",
                f"v1 agents send `{data['sessionUpdate']}` only to clients that advertised "
                f"`session.{capability}`",
                "dropped",
            )
            return None
        return convert(data, losses, opts)

    return guarded
