"""What the tests import, and from where (issue 30, item 8).

Rules this module owns: the tests import the benchmarks' generators as ``benchmarks.<module>``
(the repository is on the path through pytest's ``pythonpath``, pyproject.toml), and no test
module changes ``sys.path`` or loads a module from a path into ``benchmarks/``: five tests put
``benchmarks/`` first on ``sys.path`` by hand, so its bare module names (``messages``,
``floods``) could shadow or be shadowed by any other module of those names. ``tests/data``
holds recording scripts, run on their own, not tests.
"""

from __future__ import annotations

import re
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
ROOT = TESTS.parent

# sys.path changed (a call on it, an item or slice assigned, `+=`), or a path into benchmarks/
# built (to put on sys.path, or to load a module from: the tests import them instead).
_BY_HAND = re.compile(
    r"sys\.path\s*(\.\s*(insert|append|extend)\s*\(|\[[^\]]*\]\s*=|\+=|=[^=])"
    r"|/\s*[\"']benchmarks\b"
)


def _test_modules() -> list[Path]:
    return [
        path
        for path in sorted(TESTS.rglob("*.py"))
        if not {"node_modules", "data"} & set(path.relative_to(TESTS).parts)
        and path.name != "test_layout.py"  # (its examples below)
    ]


def _by_hand(text: str) -> list[int]:
    return [n for n, line in enumerate(text.splitlines(), 1) if _BY_HAND.search(line)]


def test_no_test_changes_the_import_path() -> None:
    found = [
        f"{path.relative_to(ROOT)}:{number}"
        for path in _test_modules()
        for number in _by_hand(path.read_text(encoding="utf-8"))
    ]
    assert found == [], "import `benchmarks.<module>` instead: " + ", ".join(found)


def test_the_check_sees_each_way_of_changing_it() -> None:
    for line in (
        'sys.path.insert(0, str(ROOT / "benchmarks"))',
        "sys.path.append(HERE)",
        "sys.path[:0] = [str(HERE)]",
        "sys.path += [str(HERE)]",
        'path = REPO / "benchmarks/messages.py"',
        'sys.path.insert(0, str(ROOT / "benchmarks"))',
    ):
        assert _by_hand(line) == [1], line
    assert _by_hand("for entry in sys.path:\n    pass\nif x in sys.path: pass") == []


def test_the_benchmarks_are_a_package_on_pytests_path() -> None:
    assert (ROOT / "benchmarks" / "__init__.py").is_file()
    assert '\npythonpath = ["."]\n' in (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    from benchmarks import floods, messages, v1_messages

    for module in (floods, messages, v1_messages):
        assert Path(module.__file__ or "").parent == ROOT / "benchmarks"
