"""The bundled schemas are the npm package's files, as recorded; the overlays are as declared.

- Each bundled file's SHA-256 is the one ``acp_toolcalls.schema._provenance`` records (a
  changed byte fails), and no schema file is bundled without a record.
- Where the package is installed (tests/interop/node, ``npm ci``), each bundled file is
  byte-equal to the package's ``schema/`` file and the package's version is the recorded one.
- ``acp-toolcalls --version`` (the real CLI) prints the package, version, digests and overlays.
- Each overlay file names itself, its source (as ``OVERLAYS`` says) and the note, and adds
  nothing the bundled upstream file already has (else it is to be removed: docs/decisions.md).
- The overlay is applied to the loaded document only; applying it twice changes nothing more.
"""

from __future__ import annotations

import copy
import hashlib
import json
import subprocess
import sys
from importlib.resources import files
from pathlib import Path
from typing import Any

import pytest

from acp_toolcalls.schema._checks import document
from acp_toolcalls.schema._overlay import OverlayError, apply_overlays, overlay
from acp_toolcalls.schema._provenance import (
    OVERLAYS,
    SCHEMA_FILES,
    SCHEMA_PACKAGE,
    SCHEMA_PACKAGE_VERSION,
    schema_file,
)
from tests.builds import child_env

ROOT = Path(__file__).resolve().parents[2]
BUNDLED = ROOT / "src" / "acp_toolcalls" / "schemas"
PACKAGE = ROOT / "tests" / "interop" / "node" / "node_modules" / SCHEMA_PACKAGE


def raw(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((BUNDLED / name).read_bytes())
    return loaded


@pytest.mark.parametrize("name", sorted(SCHEMA_FILES))
def test_the_recorded_digest_is_that_of_the_bundled_bytes(name: str) -> None:
    data = (files("acp_toolcalls") / "schemas" / name).read_bytes()
    assert hashlib.sha256(data).hexdigest() == SCHEMA_FILES[name]


def test_every_bundled_schema_file_is_recorded() -> None:
    found = {str(p.relative_to(BUNDLED)) for p in BUNDLED.glob("v*/*.json")}
    assert found == set(SCHEMA_FILES)
    assert {schema_file(v, u) for v in ("v1", "v2") for u in (False, True)} == set(SCHEMA_FILES)


def test_a_changed_byte_changes_the_digest(tmp_path: Path) -> None:
    data = bytearray((BUNDLED / "v2" / "schema.json").read_bytes())
    data[-2:-1] = b" "  # whitespace only: the same JSON, other bytes
    assert hashlib.sha256(bytes(data)).hexdigest() != SCHEMA_FILES["v2/schema.json"]


@pytest.mark.skipif(not PACKAGE.is_dir(), reason="the npm package is not installed (npm ci)")
def test_the_bundled_files_are_the_npm_packages() -> None:
    manifest = json.loads((PACKAGE / "package.json").read_text(encoding="utf-8"))
    assert (manifest["name"], manifest["version"]) == (SCHEMA_PACKAGE, SCHEMA_PACKAGE_VERSION)
    for name in SCHEMA_FILES:
        assert (PACKAGE / "schema" / name).read_bytes() == (BUNDLED / name).read_bytes(), name


def test_version_prints_the_schema_provenance() -> None:
    env = child_env()
    done = subprocess.run(
        [sys.executable, "-m", "acp_toolcalls", "--version"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert done.returncode == 0 and done.stderr == ""
    lines = done.stdout.splitlines()
    assert lines[0].startswith("acp-toolcalls ")
    assert lines[1] == f"schemas: {SCHEMA_PACKAGE} {SCHEMA_PACKAGE_VERSION} (npm), unmodified:"
    for name, digest in SCHEMA_FILES.items():
        assert f"  {name} sha256:{digest}" in lines
    for name, source in OVERLAYS.items():
        assert f"overlay {name}: {source}" in lines


@pytest.mark.parametrize("name", list(OVERLAYS))
def test_each_overlay_declares_itself(name: str) -> None:
    spec = overlay(name)
    assert spec["name"] == name
    assert spec["source"] == OVERLAYS[name]
    assert "until an SDK release carries it" in spec["note"]
    assert set(spec["schemas"]) <= set(SCHEMA_FILES) and spec["schemas"]


@pytest.mark.parametrize("name", list(OVERLAYS))
def test_no_overlay_adds_what_the_bundled_files_already_have(name: str) -> None:
    # When an SDK release carries the addition, the overlay is removed (docs/decisions.md).
    spec = overlay(name)
    for bundled in spec["schemas"]:
        defs = raw(bundled)["$defs"]
        assert not set(spec["defs"]) & set(defs), bundled
        for variant in spec["variants"]:
            union = defs[variant["union"]]
            consts = [
                b.get("properties", {}).get(variant["discriminator"], {}).get("const")
                for b in union.get("anyOf", union.get("oneOf", []))
            ]
            assert variant["value"] not in consts, bundled


VARIANTS = [("v1", False), ("v1", True), ("v2", False), ("v2", True)]


@pytest.mark.parametrize(("protocol", "unstable"), VARIANTS)
def test_the_loaded_document_has_the_session_branch_before_any_catch_all(
    protocol: Any, unstable: bool
) -> None:
    union = document(protocol, unstable)["$defs"]["ToolCallContent"]
    branches = union.get("anyOf", union.get("oneOf"))
    consts = [b.get("properties", {}).get("type", {}).get("const") for b in branches]
    assert consts[:4] == ["content", "diff", "terminal", "session"]
    if protocol == "v2":  # the open union's catch-all now excludes `session` too
        excluded = [b["properties"]["type"]["const"] for b in branches[4]["not"]["anyOf"]]
        assert excluded == ["content", "diff", "terminal", "session"]
    assert "SessionReference" in document(protocol, unstable)["$defs"]


def test_applying_the_overlays_twice_adds_nothing_more() -> None:
    once = apply_overlays(raw("v2/schema.json"), "v2/schema.json")
    twice = apply_overlays(copy.deepcopy(once), "v2/schema.json")
    assert twice == once
    untouched = apply_overlays(raw("v2/schema.json"), "v9/schema.json")  # names no such file
    assert untouched == raw("v2/schema.json")


def test_an_overlay_on_a_union_that_is_not_there_is_an_error() -> None:
    broken = raw("v1/schema.json")
    broken["$defs"]["ToolCallContent"] = {"type": "object"}
    with pytest.raises(OverlayError, match="ToolCallContent is not a union"):
        apply_overlays(broken, "v1/schema.json")
