"""Conformance vectors: what one is, reading a suite of them, and comparing states.

Rules this module owns (issue 32; the contract is docs/conformance.md's):

- A vector is one JSON file ``<id>.json``, an object: ``id`` (kebab-case, the file's name),
  ``rule`` (the sentence quoted), ``source`` (where from), ``tags`` (a non-empty list from
  ``TAGS``), ``protocol`` (1 or 2), ``messages`` (a non-empty list of JSON-RPC messages or
  batches) and ``expected`` (the ``replay --json`` document after each message, as many as the
  messages); ``valid: false`` says a message of it breaks the schema on purpose.
- A suite is a folder of such files, read in name order; a file that is no vector is a
  ``VectorError`` naming the file and what is wrong, never a partial suite.
- Two states are equal as JSON values: object keys in any order, arrays in order, numbers by
  value (``1`` equals ``1.0``; a boolean is never a number). ``first_difference`` gives the
  first place they differ, depth first in the expected document's key order, as a JSONPath-like
  path (``$.sessions.s1.toolCalls[0].title``; a key that is no identifier is quoted,
  ``$.sessions["a b"]``), with both values; ``MISSING`` stands for a value that is absent.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

__all__ = [
    "MISSING",
    "TAGS",
    "VECTORS",
    "Difference",
    "Vector",
    "VectorError",
    "first_difference",
    "load_vectors",
    "parse_vector",
]

VECTORS: Final = Path(__file__).resolve().parent / "vectors"
"""The bundled suite."""

TAGS: Final = (
    "three-state",
    "arrays-replace",
    "chunks-append",
    "meta-patch",
    "first-sight",
    "permission-subject",
    "terminals",
    "v1-upsert",
    "unknown",
    "ordering",
    "cancellation",
)
"""The tags a vector may carry, in the order reports list them."""

_ID = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*\Z")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


class _Missing:
    """An absent value (``MISSING``)."""

    def __repr__(self) -> str:
        return "missing"


MISSING: Final = _Missing()


class VectorError(Exception):
    """A file of a suite that is not a vector (or a suite with none): ``str`` says which and
    why, in one line."""


@dataclass(frozen=True)
class Vector:
    """One case of the suite."""

    id: str
    rule: str
    source: str
    tags: tuple[str, ...]
    protocol: int
    messages: tuple[Any, ...]
    expected: tuple[Any, ...]
    valid: bool = True


@dataclass(frozen=True)
class Difference:
    """Where an expected state and the state got first differ."""

    path: str
    expected: Any
    got: Any


def parse_vector(value: object, name: str) -> Vector:
    """The vector ``value`` read from the file ``name``; ``VectorError`` if it is none."""

    def wrong(why: str) -> VectorError:
        return VectorError(f"{name}: {why}")

    if not isinstance(value, dict):
        raise wrong("not a JSON object")
    for key, kind in _FIELDS.items():
        if key not in value:
            raise wrong(f"no {key!r}")
        if not isinstance(value[key], kind) or isinstance(value[key], bool):
            raise wrong(f"{key!r} is not {_KIND_NAMES[kind]}")
    if not _ID.match(value["id"]):
        raise wrong(f"'id' {value['id']!r} is not kebab-case")
    if name.endswith(".json") and name.rsplit("/", 1)[-1] != f"{value['id']}.json":
        raise wrong(f"'id' {value['id']!r} is not the file's name")
    tags = value["tags"]
    unknown = [t for t in tags if t not in TAGS]
    if not tags or unknown:
        raise wrong(
            f"'tags' must be some of {', '.join(TAGS)}" + (f"; not {unknown}" if unknown else "")
        )
    if value["protocol"] not in (1, 2):
        raise wrong(f"'protocol' is {value['protocol']!r}, not 1 or 2")
    messages, expected = value["messages"], value["expected"]
    if not messages:
        raise wrong("'messages' is empty")
    if len(expected) != len(messages):
        raise wrong(f"{len(expected)} expected states for {len(messages)} messages")
    valid = value.get("valid", True)
    if not isinstance(valid, bool):
        raise wrong("'valid' is not true or false")
    return Vector(
        id=value["id"],
        rule=value["rule"],
        source=value["source"],
        tags=tuple(tags),
        protocol=value["protocol"],
        messages=tuple(messages),
        expected=tuple(expected),
        valid=valid,
    )


_FIELDS: Final[dict[str, type]] = {
    "id": str,
    "rule": str,
    "source": str,
    "tags": list,
    "protocol": int,
    "messages": list,
    "expected": list,
}
_KIND_NAMES: Final[dict[type, str]] = {str: "a string", list: "a list", int: "an integer"}


def load_vectors(folder: Path = VECTORS) -> list[Vector]:
    """Every vector of the suite in ``folder`` (its ``*.json`` files), in name order.

    ``VectorError`` for a folder that cannot be read or holds no vector, a file that is not
    one, or an id used twice."""
    try:
        paths = sorted(p for p in folder.iterdir() if p.suffix == ".json" and p.is_file())
    except OSError as exc:
        raise VectorError(f"{folder}: cannot read the folder: {exc.strerror or exc}") from None
    if not paths:
        raise VectorError(f"{folder}: no vectors (*.json files) in it")
    vectors = []
    for path in paths:
        try:
            value = json.loads(path.read_bytes())
        except OSError as exc:
            raise VectorError(f"{path}: cannot read it: {exc.strerror or exc}") from None
        except ValueError as exc:
            raise VectorError(f"{path}: not JSON ({exc})") from None
        vectors.append(parse_vector(value, str(path)))
    return vectors


def first_difference(expected: Any, got: Any, path: str = "$") -> Difference | None:
    """The first place ``got`` differs from ``expected`` (see the module), or ``None``."""
    for where, want, have in _walk(expected, got, path):
        if not _same_leaf(want, have):
            return Difference(where, want, have)
    return None


def _walk(expected: Any, got: Any, path: str) -> Iterator[tuple[str, Any, Any]]:
    """Pairs of values to compare as leaves, depth first; containers of one kind descend."""
    if isinstance(expected, dict) and isinstance(got, dict):
        for key, want in expected.items():
            yield from _walk(want, got.get(key, MISSING), _child(path, key))
        for key in got:
            if key not in expected:
                yield _child(path, key), MISSING, got[key]
        return
    if isinstance(expected, list) and isinstance(got, list):
        for index, want in enumerate(expected):
            have = got[index] if index < len(got) else MISSING
            yield from _walk(want, have, f"{path}[{index}]")
        for index in range(len(expected), len(got)):
            yield f"{path}[{index}]", MISSING, got[index]
        return
    yield path, expected, got


def _same_leaf(expected: Any, got: Any) -> bool:
    if isinstance(expected, bool) or isinstance(got, bool):
        return type(expected) is type(got) and expected == got
    if isinstance(expected, (int, float)) and isinstance(got, (int, float)):
        return expected == got
    if isinstance(expected, (dict, list)) or isinstance(got, (dict, list)):
        return False  # containers of different kinds (equal ones were walked into)
    return type(expected) is type(got) and expected == got


def _child(path: str, key: str) -> str:
    return f"{path}.{key}" if _IDENTIFIER.match(key) else f"{path}[{json.dumps(key)}]"
