"""Structure checks: whether a JSON value is valid against one ``$defs`` entry of a bundled
schema, answered without jsonschema, for the message path (the converters' rare updates).

Rules this module owns:

- The bundled schema files are read here, once per protocol and stable or unstable file
  (``document``), for this module and for ``_schemas`` alike, with the overlays applied
  (``_overlay``).
- A check answers the question the full validator answers (valid or not, by JSON Schema draft
  2020-12) for the keywords the bundled schemas use: ``type``, ``const``, ``enum``,
  ``properties``, ``required``, ``additionalProperties``, ``items``, ``minItems``,
  ``maxItems``, ``minLength``, ``maxLength``, ``minimum``, ``maximum``, ``anyOf``, ``oneOf``,
  ``allOf``, ``not`` and local ``$ref``; annotations (``description``, ``format``,
  ``discriminator``, ``x-...``) assert nothing, as in jsonschema without a format checker. A
  keyword it does not know fails when the check is built (``UnsupportedKeyword``), never with
  a wrong answer: tests/proxy/test_bridge_edges.py builds every check the converters use and
  compares the answers with jsonschema's.
- A check is built once per (version, entry) and kept; ``prepare_checks`` builds checks ahead, so
  that the first message needing one does not wait for a schema file to be read
  (``acp-toolcalls bridge`` calls it as it starts: docs/benchmarks.md, "First update").
- A check reports the first violation it finds, as ``(JSON path, one line)``; the full
  validator (``validate_payload``) explains every violation, for ``validate``.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterable, Mapping, Sized
from functools import cache
from typing import Any

import msgspec

from ..models import VersionName
from ._overlay import apply_overlays
from ._provenance import schema_file

_PROTOCOLS: tuple[VersionName, ...] = ("v1", "v2")
_SCHEMAS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "schemas")
_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_MAX_INSTANCE = 60

Violation = tuple[str, str]
"""``(JSON path, message)``: where a value is not valid, and why."""


class UnsupportedKeyword(ValueError):
    """A schema keyword the structure checks do not implement (found when a check is built)."""


@cache
def document(version: VersionName, unstable: bool = False) -> Mapping[str, Any]:
    """The bundled schema of ``version`` (its ``schema.unstable.json`` with ``unstable``),
    read once, with the overlays applied (``_overlay``)."""
    if version not in _PROTOCOLS:
        raise ValueError(f"unknown protocol {version!r}; expected 'v1' or 'v2'")
    bundled = schema_file(version, unstable)
    loaded = msgspec.json.decode(_read(bundled))
    if not isinstance(loaded, dict):
        raise ValueError(f"bundled {bundled} is not a JSON object")
    return apply_overlays(loaded, bundled)


def _read(bundled: str) -> bytes:
    """The file's bytes: beside this package (importlib.resources, which costs the bridge's
    start-up a dozen modules, only for a package that is not in a directory)."""
    try:
        with open(os.path.join(_SCHEMAS, *bundled.split("/")), "rb") as file:
            return file.read()
    except OSError:
        from importlib.resources import files

        return (files("acp_toolcalls") / "schemas" / bundled).read_bytes()


# --------------------------------------------------------------------------------------------
# Paths and short renderings (shared with ``_validate``)


def json_path(path: Iterable[str | int]) -> str:
    """``("a", 0, "b c")`` as ``$.a[0]["b c"]``."""
    out = ["$"]
    for part in path:
        if isinstance(part, int):
            out.append(f"[{part}]")
        elif _IDENTIFIER.match(part):
            out.append(f".{part}")
        else:
            out.append(f"[{json.dumps(part, ensure_ascii=False)}]")
    return "".join(out)


def json_type(value: object) -> str:
    """The JSON Schema type name of a decoded JSON value (``integer`` for an int)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def short(instance: object) -> str:
    """A short rendering of a JSON value: Python repr for strings and numbers, JSON otherwise."""
    if isinstance(instance, str) or (
        isinstance(instance, int | float) and not isinstance(instance, bool)
    ):
        text = repr(instance)
    else:
        try:
            text = json.dumps(instance, ensure_ascii=False, separators=(", ", ": "))
        except (TypeError, ValueError):
            text = repr(instance)
    if len(text) > _MAX_INSTANCE:
        closing = text[-1] if text[-1] in "]}'\"" else ""
        text = text[: _MAX_INSTANCE - 2] + "…" + closing
    return text


# --------------------------------------------------------------------------------------------
# Failures, built only when a value is not valid


class _Failure:
    """A violation found: its message, the keyword that failed, and its path, built in
    reverse as the checks return (a valid value builds nothing)."""

    __slots__ = ("keyword", "message", "reversed_path")

    def __init__(self, keyword: str, message: str) -> None:
        self.keyword = keyword
        self.message = message
        self.reversed_path: list[str | int] = []

    def at(self, part: str | int) -> _Failure:
        self.reversed_path.append(part)
        return self

    @property
    def depth(self) -> int:
        return len(self.reversed_path)

    def violation(self) -> Violation:
        return json_path(reversed(self.reversed_path)), self.message


_Check = Callable[[Any], "_Failure | None"]

_TYPES: dict[str, Callable[[object], bool]] = {
    "null": lambda v: v is None,
    "boolean": lambda v: isinstance(v, bool),
    "string": lambda v: isinstance(v, str),
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "integer": lambda v: (
        (isinstance(v, int) and not isinstance(v, bool))
        or (isinstance(v, float) and v.is_integer())
    ),
}
_ANNOTATIONS = frozenset(
    {
        "$schema",
        "$comment",
        "title",
        "description",
        "default",
        "examples",
        "deprecated",
        "readOnly",
        "writeOnly",
        "format",
        "contentEncoding",
        "contentMediaType",
        "discriminator",
    }
)
_OBJECT_KEYWORDS = frozenset({"properties", "required", "additionalProperties"})
_UNION_MISMATCH = frozenset({"type", "const", "enum", "not"})


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _equal(one: Any, two: Any) -> bool:
    """JSON equality, as jsonschema's: ``true`` is not ``1``, ``1`` is ``1.0``."""
    if isinstance(one, str) or isinstance(two, str):
        return bool(one == two)
    if isinstance(one, list) and isinstance(two, list):
        return len(one) == len(two) and all(_equal(a, b) for a, b in zip(one, two, strict=True))
    if isinstance(one, dict) and isinstance(two, dict):
        return one.keys() == two.keys() and all(_equal(one[k], two[k]) for k in one)
    if isinstance(one, bool) or isinstance(two, bool):
        return type(one) is type(two) and one == two
    if isinstance(one, list | dict) or isinstance(two, list | dict):
        return False
    return bool(one == two)


class _Builder:
    """Builds the checks of one schema document; a ``$ref`` is built once (and may recur)."""

    def __init__(self, doc: Mapping[str, Any]) -> None:
        self.defs: Mapping[str, Any] = doc.get("$defs", {})
        self.refs: dict[str, _Check] = {}

    def ref(self, ref: str) -> _Check:
        if not ref.startswith("#/$defs/") or "/" in ref[len("#/$defs/") :]:
            raise UnsupportedKeyword(f"$ref {ref!r}: only local `#/$defs/...` references")
        name = ref[len("#/$defs/") :].replace("~1", "/").replace("~0", "~")
        built = self.refs.get(name)
        if built is None:
            cell: list[_Check] = []
            self.refs[name] = lambda value: cell[0](value)  # while it is being built
            built = self.node(self.defs[name])
            cell.append(built)
            self.refs[name] = built
        return built

    def node(self, schema: Any) -> _Check:
        if schema is True or schema == {}:
            return _valid
        if schema is False:
            return lambda value: _Failure("false", f"{short(value)} is never valid here")
        if not isinstance(schema, dict):
            raise UnsupportedKeyword(f"a schema that is not an object: {short(schema)}")
        checks: list[_Check] = []
        if not _OBJECT_KEYWORDS.isdisjoint(schema):
            checks.append(self.object(schema))
        for keyword, argument in schema.items():
            if keyword in _ANNOTATIONS or keyword in _OBJECT_KEYWORDS or keyword[:2] == "x-":
                continue
            make = getattr(self, "kw_" + keyword.lstrip("$"), None)
            if make is None:
                raise UnsupportedKeyword(f"keyword {keyword!r}")
            checks.append(make(argument))
        return _all(checks)

    # -- keywords

    def kw_ref(self, ref: str) -> _Check:
        return self.ref(ref)

    def kw_type(self, argument: Any) -> _Check:
        names = [argument] if isinstance(argument, str) else list(argument)
        tests = tuple(_TYPES[name] for name in names)
        shown = ", ".join(repr(name) for name in names)

        def check(value: Any) -> _Failure | None:
            for test in tests:
                if test(value):
                    return None
            return _Failure("type", f"{short(value)} is not of type {shown}")

        return check

    def kw_const(self, expected: Any) -> _Check:
        def check(value: Any) -> _Failure | None:
            if _equal(value, expected):
                return None
            return _Failure("const", f"{short(expected)} was expected")

        return check

    def kw_enum(self, allowed: list[Any]) -> _Check:
        shown = "[" + ", ".join(short(item) for item in allowed) + "]"

        def check(value: Any) -> _Failure | None:
            if any(_equal(value, item) for item in allowed):
                return None
            return _Failure("enum", f"{short(value)} is not one of {shown}")

        return check

    def object(self, schema: Mapping[str, Any]) -> _Check:
        properties = {
            name: self.node(sub) for name, sub in (schema.get("properties") or {}).items()
        }
        required = tuple(schema.get("required") or ())
        extra_schema = schema.get("additionalProperties", True)
        extra = None if extra_schema is True else self.node(extra_schema)

        def check(value: Any) -> _Failure | None:
            if not isinstance(value, dict):
                return None
            for name in required:
                if name not in value:
                    return _Failure("required", f"{name!r} is a required property")
            for name, item in value.items():
                sub = properties.get(name)
                if sub is None:
                    if extra is None:
                        continue
                    sub = extra
                failure = sub(item)
                if failure is not None:
                    return failure.at(name)
            return None

        return check

    def kw_items(self, argument: Any) -> _Check:
        if not isinstance(argument, dict | bool):
            raise UnsupportedKeyword("`items` as a list (draft 2020-12 has `prefixItems`)")
        sub = self.node(argument)

        def check(value: Any) -> _Failure | None:
            if isinstance(value, list):
                for index, item in enumerate(value):
                    failure = sub(item)
                    if failure is not None:
                        return failure.at(index)
            return None

        return check

    def kw_minItems(self, least: int) -> _Check:
        return _bound(
            list, least, "minItems", "should be non-empty" if least == 1 else "is too short"
        )

    def kw_maxItems(self, most: int) -> _Check:
        return _bound(list, -most, "maxItems", "is too long")

    def kw_minLength(self, least: int) -> _Check:
        return _bound(
            str, least, "minLength", "should be non-empty" if least == 1 else "is too short"
        )

    def kw_maxLength(self, most: int) -> _Check:
        return _bound(str, -most, "maxLength", "is too long")

    def kw_minimum(self, least: float) -> _Check:
        def check(value: Any) -> _Failure | None:
            if _is_number(value) and value < least:
                return _Failure("minimum", f"{short(value)} is less than the minimum of {least!r}")
            return None

        return check

    def kw_maximum(self, most: float) -> _Check:
        def check(value: Any) -> _Failure | None:
            if _is_number(value) and value > most:
                return _Failure(
                    "maximum", f"{short(value)} is greater than the maximum of {most!r}"
                )
            return None

        return check

    def kw_allOf(self, branches: list[Any]) -> _Check:
        return _all([self.node(branch) for branch in branches])

    def kw_anyOf(self, branches: list[Any]) -> _Check:
        checks = tuple(self.node(branch) for branch in branches)

        def check(value: Any) -> _Failure | None:
            failures = []
            for sub in checks:
                failure = sub(value)
                if failure is None:
                    return None
                failures.append(failure)
            return _union_failure("anyOf", value, failures)

        return check

    def kw_oneOf(self, branches: list[Any]) -> _Check:
        checks = tuple(self.node(branch) for branch in branches)

        def check(value: Any) -> _Failure | None:
            failures = []
            for sub in checks:
                failure = sub(value)
                if failure is not None:
                    failures.append(failure)
            valid = len(checks) - len(failures)
            if valid == 1:
                return None
            if valid > 1:
                return _Failure(
                    "oneOf", f"{short(value)} is valid under more than one of the given schemas"
                )
            return _union_failure("oneOf", value, failures)

        return check

    def kw_not(self, argument: Any) -> _Check:
        sub = self.node(argument)

        def check(value: Any) -> _Failure | None:
            if sub(value) is None:
                return _Failure(
                    "not", f"{short(value)} should not be valid under {short(argument)}"
                )
            return None

        return check


def _valid(value: Any) -> _Failure | None:
    return None


def _all(checks: list[_Check]) -> _Check:
    if not checks:
        return _valid
    if len(checks) == 1:
        return checks[0]
    every = tuple(checks)

    def check(value: Any) -> _Failure | None:
        for sub in every:
            failure = sub(value)
            if failure is not None:
                return failure
        return None

    return check


def _bound(kind: type[Sized], bound: int, keyword: str, says: str) -> _Check:
    """``minItems``/``minLength`` (``bound`` >= 0) or their ``max`` (``-bound``) on ``kind``."""

    def check(value: Any) -> _Failure | None:
        if isinstance(value, kind):
            size = len(value)
            if (size < bound) if bound >= 0 else (size > -bound):
                return _Failure(keyword, f"{short(value)} {says}")
        return None

    return check


def _union_failure(keyword: str, value: Any, failures: list[_Failure]) -> _Failure:
    """Why no branch of a union took ``value``: the one branch that was meant (it failed
    deeper than on its type or discriminator) when there is one, else all of them in one."""
    meant = [
        f
        for f in failures
        if not (f.depth == 0 and f.keyword in _UNION_MISMATCH)
        and not (f.depth == 1 and f.keyword in ("const", "enum"))
    ]
    if len(meant) == 1:
        return meant[0]
    return _Failure(keyword, f"{short(value)} is not valid under any of the given schemas")


# --------------------------------------------------------------------------------------------
# Public API


@cache
def _builder(version: VersionName, unstable: bool = False) -> _Builder:
    return _Builder(document(version, unstable))


@cache
def _check(version: VersionName, def_name: str, unstable: bool = False) -> _Check:
    builder = _builder(version, unstable)
    if def_name not in builder.defs:
        raise KeyError(f"{def_name!r} is not in $defs of the {version} schema")
    return builder.ref("#/$defs/" + def_name.replace("~", "~0").replace("/", "~1"))


def first_violation(
    value: object, def_name: str, version: VersionName, *, unstable: bool = False
) -> Violation | None:
    """``None`` when ``value`` is valid against ``$defs[def_name]`` of the bundled
    ``version`` schema (the unstable one with ``unstable``), else the first violation found
    (its path is relative to ``value``). An unknown ``def_name`` raises ``KeyError``."""
    try:
        failure = _check(version, def_name, unstable)(value)
    except RecursionError:
        return "$", "nested too deeply to check"
    return None if failure is None else failure.violation()


def prepare_checks(
    version: VersionName, def_names: Iterable[str], *, unstable: bool = False
) -> None:
    """Build the checks of ``def_names`` now (reading the schema file if need be), so that
    ``first_violation`` never waits for them."""
    for name in def_names:
        _check(version, name, unstable)  # the cache key ``first_violation`` uses
