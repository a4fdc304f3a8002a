"""The command's entry points, and what its start-up imports.

Rules this module owns: ``python -m acp_toolcalls`` is the console script (same output, same
exit status, same usage error), and starting a command imports only what that command uses
(``--version`` none of the heavy modules; ``bridge`` no jsonschema or rich; ``replay``,
``validate`` and ``convert`` no asyncio). Subprocesses of the build under test (its
``PYTHONPATH`` kept).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "src" / "acp_toolcalls" / "data" / "demo-session.jsonl"


def _run(args: list[str], *, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=600, check=False)


def test_python_dash_m_is_the_console_script(tmp_path: Path) -> None:
    script = shutil.which("acp-toolcalls", path=str(Path(sys.executable).parent))
    assert script is not None
    for args in (["--version"], ["replay", "--json", str(DEMO)], ["validate", "--json", str(DEMO)]):
        by_module = _run([sys.executable, "-m", "acp_toolcalls", *args], cwd=tmp_path)
        by_script = _run([script, *args], cwd=tmp_path)
        assert (by_module.returncode, by_module.stdout) == (by_script.returncode, by_script.stdout)
        assert by_module.stdout
    usage = _run([sys.executable, "-m", "acp_toolcalls", "nonsense"], cwd=tmp_path)
    assert usage.returncode == 2 and "invalid choice: 'nonsense'" in usage.stderr


_HEAVY = ("argparse", "asyncio", "jsonschema", "msgspec", "rich", "typing")


def _imported(args: list[str], tmp_path: Path) -> set[str]:
    script = (
        "import sys\nfrom acp_toolcalls.cli import main\n"
        f"code = main({args!r})\n"
        f"print(sorted({{m.split('.')[0] for m in sys.modules}} & {set(_HEAVY)!r}))"
    )
    done = _run([sys.executable, "-c", script], cwd=tmp_path)
    return set(eval(done.stdout.strip().splitlines()[-1]))


def test_start_up_imports_only_what_the_command_uses(tmp_path: Path) -> None:
    assert _imported(["--version"], tmp_path) == set()
    # The agent cannot be started (exit 2): the proxy got as far as trying.
    assert _imported(["bridge", "--", str(tmp_path / "no-such-agent")], tmp_path) == {
        "argparse",
        "asyncio",
        "msgspec",
        "typing",
    }
    assert not {"jsonschema", "asyncio"} & _imported(["replay", "--json", str(DEMO)], tmp_path)
    assert "asyncio" not in _imported(["validate", str(DEMO)], tmp_path)
    converting = _imported(["convert", "--to", "v1", str(DEMO)], tmp_path)
    assert not {"jsonschema", "rich", "asyncio"} & converting
