"""Schema overlays: stable protocol additions applied to the bundled upstream schemas.

Rules this module owns (D40):

- An overlay is a JSON file ``acp_toolcalls/schemas/overlays/NAME.json``, listed in
  ``_provenance.OVERLAYS``, with ``name``, ``source`` (where the addition is specified),
  ``note``, ``schemas`` (the bundled files it applies to, ``v1/schema.json``...), ``defs`` (new
  ``$defs`` entries) and ``variants`` (new branches of a tagged union: ``union``,
  ``discriminator``, ``value``, ``branch``).
- Applying one adds each ``defs`` entry the document lacks, and each variant whose ``value``
  no branch of the union carries yet: the branch goes before the union's catch-all branch (the
  one with a ``not``: v2's open unions), and the catch-all's ``not.anyOf`` is told the new
  value, so that the catch-all no longer takes a malformed item of the new variant. What the
  document already has is left alone (an upstream definition wins); a union that is missing,
  or has neither ``anyOf`` nor ``oneOf``, is an error (``OverlayError``), never a silent skip.
- Overlays change only the decoded document, never the bundled files, whose SHA-256 stays
  that of the upstream package (``_provenance``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from functools import cache
from typing import Any

import msgspec

from ._provenance import OVERLAYS

_SCHEMAS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "schemas")


class OverlayError(ValueError):
    """An overlay that cannot be applied to a bundled schema as it says."""


@cache
def overlay(name: str) -> Mapping[str, Any]:
    """The overlay file ``name`` (``schemas/overlays/NAME.json``), read once."""
    try:
        with open(os.path.join(_SCHEMAS, "overlays", name + ".json"), "rb") as file:
            data = file.read()
    except OSError:
        from importlib.resources import files

        data = (files("acp_toolcalls") / "schemas" / "overlays" / (name + ".json")).read_bytes()
    loaded = msgspec.json.decode(data)
    if not isinstance(loaded, dict) or loaded.get("name") != name:
        raise OverlayError(f"overlay {name!r}: not an object named {name!r}")
    return loaded


def _tag_test(discriminator: str, value: object) -> dict[str, Any]:
    """What the catch-all branch's ``not.anyOf`` lists per known variant."""
    return {
        "type": "object",
        "properties": {discriminator: {"type": "string", "const": value}},
        "required": [discriminator],
    }


def _add_variant(defs: dict[str, Any], variant: Mapping[str, Any], name: str) -> None:
    union_name = str(variant["union"])
    union = defs.get(union_name)
    key = "anyOf" if isinstance(union, dict) and "anyOf" in union else "oneOf"
    branches = union.get(key) if isinstance(union, dict) else None
    if not isinstance(branches, list):
        raise OverlayError(f"overlay {name!r}: $defs.{union_name} is not a union")
    tag, value = str(variant["discriminator"]), variant["value"]
    for branch in branches:
        if branch.get("properties", {}).get(tag, {}).get("const") == value:
            return  # the upstream schema has it: it wins
    catch_all = next((i for i, b in enumerate(branches) if "not" in b), len(branches))
    branches.insert(catch_all, variant["branch"])
    for branch in branches[catch_all + 1 :]:
        excluded = branch["not"].get("anyOf")
        if not isinstance(excluded, list):
            raise OverlayError(f"overlay {name!r}: $defs.{union_name}'s catch-all lists no anyOf")
        excluded.append(_tag_test(tag, value))


def apply_overlays(document: dict[str, Any], bundled: str) -> dict[str, Any]:
    """``document`` (the decoded bundled file ``bundled``, ``v2/schema.json``), changed in
    place by every overlay of ``OVERLAYS`` that names that file; returns it."""
    defs = document.get("$defs")
    if not isinstance(defs, dict):
        raise OverlayError(f"bundled {bundled} has no $defs")
    for name in OVERLAYS:
        spec = overlay(name)
        if bundled not in spec.get("schemas", ()):
            continue
        for def_name, definition in spec.get("defs", {}).items():
            defs.setdefault(def_name, msgspec.json.decode(msgspec.json.encode(definition)))
        for variant in spec.get("variants", ()):
            copied = msgspec.json.decode(msgspec.json.encode(variant))
            _add_variant(defs, copied, name)
    return document
