"""Subprocesses run the build under test (issue 30, item 8).

CI's second stage puts its compiled wheel first on ``PYTHONPATH``; a test that replaced
``PYTHONPATH`` with the checkout's ``src`` ran that stage's subprocesses interpreted.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from tests.builds import SRC, child_env

TESTS = Path(__file__).resolve().parents[1]
# Their own environments on purpose: the installs test_install makes, a module of its own.
OWN_PATHS = {"builds.py", "test_install.py", "test_field_registry.py", "test_builds.py"}


def test_no_test_sets_the_import_path_by_hand() -> None:
    found = [
        f"{path.relative_to(TESTS)}:{number}"
        for path in sorted(TESTS.rglob("*.py"))
        if path.name not in OWN_PATHS and "node_modules" not in path.parts
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if re.search(r"""["']PYTHONPATH["']\s*:""", line)
    ]
    assert found == [], "use builds.child_env(): " + ", ".join(found)


def test_the_build_under_test_comes_first(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONPATH", "/ci/compiled-site")
    env = child_env(COLUMNS="80")
    assert env["PYTHONPATH"].split(os.pathsep) == ["/ci/compiled-site", str(SRC)]
    assert env["COLUMNS"] == "80"
    monkeypatch.delenv("PYTHONPATH")
    assert child_env()["PYTHONPATH"] == str(SRC)
