"""The README's commands are the ones CI and newcomers run."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _readme_commands() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = text.split("```sh\n")[1:]
    return [block.split("```", 1)[0].strip() for block in blocks]


def test_ci_runs_the_readme_test_command() -> None:
    test_command = _readme_commands()[1]
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").strip().splitlines()
    assert ci[-1] == test_command


def test_readme_main_command_replays_the_bundled_demo() -> None:
    # A bare `acp-toolcalls replay` on a terminal replays the example shipped in the package.
    main_command = _readme_commands()[0]
    assert main_command.endswith("pip install . && acp-toolcalls replay")
    assert (ROOT / "src" / "acp_toolcalls" / "data" / "demo-session.jsonl").is_file()


def test_the_built_wheel_imports_and_replays(tmp_path: Path) -> None:
    # `pip install .` (the README's main command) installs the wheel, not the checkout: the
    # compiled fast path and its runtime library must both be inside it.
    import subprocess
    import sys

    wheels = tmp_path / "wheels"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(wheels), str(ROOT)],
        check=True,
        capture_output=True,
    )
    (wheel,) = wheels.glob("acp_toolcalls-*.whl")
    target = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "-t", str(target), str(wheel)],
        check=True,
        capture_output=True,
    )
    demo = ROOT / "src" / "acp_toolcalls" / "data" / "demo-session.jsonl"
    script = (
        "import sys, acp_toolcalls._fastpath as f; "
        "assert f.__file__.startswith(sys.argv[2]) and not f.__file__.endswith('.py'), f.__file__; "
        "from acp_toolcalls.cli import main; sys.exit(main(['replay', '--json', sys.argv[1]]))"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(demo), str(target)],
        env={"PYTHONPATH": str(target), "PATH": "/usr/bin:/bin"},
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert '"toolCalls"' in done.stdout


def test_readme_python_examples_run() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = [block.split("```", 1)[0] for block in text.split("```python\n")[1:]]
    assert len(blocks) >= 2
    for block in blocks:
        exec(compile(block, "README.md", "exec"), {})
