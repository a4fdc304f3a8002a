"""Installing the package, as a new user and as CI do: over real builds and subprocesses.

- ``pip install .`` in a fresh virtual environment with no C compiler gives the pure-Python
  ``py3-none-any`` package, and it works.
- A wheel built with the compiled group (``HATCH_BUILD_HOOKS_ENABLE=1``: the codec's fast path,
  the bridges', mappings' and store's modules) runs it; ``acp_toolcalls._compiled`` decides
  freshness by content, for the whole group: a plain install (source newer than the extension)
  is not stale, an edited source is (one warning, then every source of the group runs), and so
  is a build with no stamp; an install without a source runs its extension.
- A compiled build from a checkout is made out of tree: it writes nothing into ``src/``.
- The sdist holds what its tests read; they collect and the ones on its data files pass.
- cibuildwheel builds the compiled wheels with the same hook, and its test passes on one.
"""

from __future__ import annotations

import ast
import os
import shlex
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import venv
import zipfile
from pathlib import Path

import pytest

from acp_toolcalls.schema import OVERLAYS, SCHEMA_FILES

pytestmark = pytest.mark.packaging

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "src" / "acp_toolcalls" / "data" / "demo-session.jsonl"
# Imported by a subprocess after `from acp_toolcalls import codec`: what it runs, and whether it
# printed anything else (a warning) on stderr.
REPORT = "import acp_toolcalls.codec as c; print(c.FAST_PATH, c.decode_message.__module__)"
# The same for the bridges' compiled modules: which build each runs, and V2ToV1Bridge's file.
BRIDGES = (
    "import acp_toolcalls.bridge._to_v1 as b, acp_toolcalls._compiled as c; "
    "print(c.BUILDS['bridge._to_v1'], c.BUILDS['convert._tool_calls'], "
    "b.__file__.rsplit('.', 1)[1])"
)


def _run(
    args: list[str], *, env: dict[str, str] | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        args, env=env, cwd=cwd, capture_output=True, text=True, timeout=600, check=False
    )


def _ok(done: subprocess.CompletedProcess[str]) -> subprocess.CompletedProcess[str]:
    assert done.returncode == 0, f"{shlex.join(done.args)}\n{done.stdout}\n{done.stderr}"
    return done


def _has_c_compiler() -> bool:
    compiler = shlex.split(os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc")
    return bool(compiler) and shutil.which(compiler[0]) is not None


def _clean_env(**extra: str) -> dict[str, str]:
    """The environment without this run's PYTHONPATH (a subprocess sees only what it installs)."""
    env = {
        k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "ACP_TOOLCALLS_FAST_PATH")
    }
    env.update(extra)
    return env


BUILDS = "ACP_TOOLCALLS_BUILDS"
"""A directory where the sdist and the compiled wheel are built once and then reused (CI sets
it: its second stage and the same tests in the sdist take them from there)."""


def _built(
    pattern: str, tmp_path_factory: pytest.TempPathFactory, name: str
) -> tuple[Path, Path | None]:
    """Where to build (``BUILDS`` or a fresh directory), and what is there already."""
    shared = os.environ.get(BUILDS)
    out = Path(shared) if shared else tmp_path_factory.mktemp(name)
    out.mkdir(parents=True, exist_ok=True)
    return out, next(iter(sorted(out.glob(pattern))), None)


@pytest.fixture(scope="session")
def sdist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sdist of the checkout, built as a release would be (`python -m build --sdist`)."""
    out, found = _built("acp_toolcalls-*.tar.gz", tmp_path_factory, "sdist")
    if found is not None:
        return found
    _ok(_run([sys.executable, "-m", "build", "--sdist", "--outdir", str(out), str(ROOT)]))
    (built,) = out.glob("acp_toolcalls-*.tar.gz")
    return built


_TREE_SRC: dict[str, set[str]] = {}
"""The files under ``src/`` of the tree the compiled wheel was built in, before and after."""


@pytest.fixture(scope="session")
def compiled_wheel(sdist: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A wheel with the mypyc fast path, built in a tree unpacked from the sdist (pip builds
    a directory where it is, as from a checkout), whose ``src/`` the build must not touch."""
    if not _has_c_compiler():
        pytest.skip("no C compiler: the compiled fast path cannot be built here")
    out, found = _built("acp_toolcalls-*.whl", tmp_path_factory, "compiled")
    if found is not None:
        return found
    tree = tmp_path_factory.mktemp("compiled-tree")
    with tarfile.open(sdist) as archive:
        archive.extractall(tree, filter="data")
    (root,) = tree.iterdir()
    _TREE_SRC["before"] = _files(root / "src")
    env = _clean_env(HATCH_BUILD_HOOKS_ENABLE="1")
    pip = [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(out), str(root)]
    _ok(_run(pip, env=env, cwd=tree))
    _TREE_SRC["after"] = _files(root / "src")
    (wheel,) = out.glob("acp_toolcalls-*.whl")
    return wheel


@pytest.fixture
def compiled_site(compiled_wheel: Path, tmp_path: Path) -> Path:
    """The compiled wheel installed into a directory of its own (for PYTHONPATH)."""
    site = tmp_path / "site"
    _ok(
        _run(
            [
                sys.executable,
                "-m",
                "pip",
                "install",
                "-q",
                "--no-deps",
                "-t",
                str(site),
                str(compiled_wheel),
            ]
        )
    )
    return site


def _report(site: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return _ok(_run([sys.executable, "-c", REPORT], env=_clean_env(PYTHONPATH=str(site)), cwd=cwd))


BUNDLED_DATA = [
    *(f"schemas/{name}" for name in SCHEMA_FILES),
    *(f"schemas/overlays/{name}.json" for name in OVERLAYS),
    "data/demo-session.jsonl",
]
"""Data files every install must hold (under ``acp_toolcalls/``)."""

# --------------------------------------------------------------------------------------------
# No compiler: the pure-Python package


def test_pip_install_without_a_c_compiler_gives_a_working_pure_python_package(
    tmp_path: Path,
) -> None:
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    python = env_dir / "bin" / "python"
    no_compiler = _clean_env(
        CC="/nonexistent/cc", CXX="/nonexistent/c++", LDSHARED="/nonexistent/ld"
    )
    _ok(_run([str(python), "-m", "pip", "install", "-q", str(ROOT)], env=no_compiler, cwd=tmp_path))

    site = Path(
        _ok(
            _run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"])
        ).stdout.strip()
    )
    (dist_info,) = site.glob("acp_toolcalls-*.dist-info")
    wheel_tags = (dist_info / "WHEEL").read_text(encoding="utf-8")
    assert "Tag: py3-none-any" in wheel_tags and "Root-Is-Purelib: true" in wheel_tags
    assert (dist_info / "licenses" / "LICENSE").is_file()
    package = site / "acp_toolcalls"
    assert not [p.name for p in package.iterdir() if p.suffix in (".so", ".pyd")]
    for name in BUNDLED_DATA:  # the schemas --version names, their overlays
        assert (package / name).is_file(), name

    done = _ok(_run([str(python), "-c", REPORT], env=no_compiler, cwd=tmp_path))
    assert done.stdout.split() == ["interpreted", "acp_toolcalls._fastpath"]
    assert done.stderr == ""
    bridges = _ok(_run([str(python), "-c", BRIDGES], env=no_compiler, cwd=tmp_path))
    assert bridges.stdout.split() == ["interpreted", "interpreted", "py"]
    assert bridges.stderr == ""
    replayed = _ok(
        _run(
            [str(env_dir / "bin" / "acp-toolcalls"), "replay", "--json", str(DEMO)],
            env=no_compiler,
            cwd=tmp_path,
        )
    )
    assert '"toolCalls"' in replayed.stdout


# --------------------------------------------------------------------------------------------
# The compiled fast path and its freshness


def test_the_compiled_wheel_is_platform_specific_and_runs_the_extension(
    compiled_wheel: Path, compiled_site: Path, tmp_path: Path
) -> None:
    assert not compiled_wheel.name.endswith("-py3-none-any.whl")
    names = zipfile.ZipFile(compiled_wheel).namelist()
    assert not [name for name in BUNDLED_DATA if f"acp_toolcalls/{name}" not in names]
    for module in (
        "_fastpath",
        "bridge/_to_v1",
        "bridge/_to_v1_state",
        "convert/_tool_calls",
        "_compiled_digest",
    ):
        for stem in (module, f"{module}__mypyc"):
            assert any(
                n.startswith(f"acp_toolcalls/{stem}.") and n.endswith(".so") for n in names
            ), stem
    done = _report(compiled_site, tmp_path)
    assert done.stdout.split()[0] == "compiled"
    assert done.stderr == ""
    bridges = _ok(
        _run([sys.executable, "-c", BRIDGES], env=_clean_env(PYTHONPATH=str(compiled_site)))
    )
    assert bridges.stdout.split() == ["compiled", "compiled", "so"]
    assert bridges.stderr == ""
    replayed = _ok(
        _run(
            [sys.executable, "-m", "acp_toolcalls", "replay", "--json", str(DEMO)],
            env=_clean_env(PYTHONPATH=str(compiled_site)),
            cwd=tmp_path,
        )
    )
    assert '"toolCalls"' in replayed.stdout and replayed.stderr == ""


def _files(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if "__pycache__" not in p.parts}


def test_a_compiled_build_from_a_tree_writes_nothing_into_src(compiled_wheel: Path) -> None:
    # hatch-mypyc compiles in place: its extensions (and the hook's stamps) were left in src/,
    # git-ignored, and a checkout ran compiled from then on. The build is out of tree now.
    if not _TREE_SRC:
        pytest.skip(f"the compiled wheel was built before this run ({BUILDS}), and checked there")
    names = zipfile.ZipFile(compiled_wheel).namelist()
    assert any(n.startswith("acp_toolcalls/_fastpath.") and n.endswith(".so") for n in names)
    assert "acp_toolcalls/_compiled_digest.py" in names
    assert sorted(_TREE_SRC["after"] - _TREE_SRC["before"]) == []
    assert sorted(_TREE_SRC["before"] - _TREE_SRC["after"]) == []


def test_a_source_newer_than_its_extension_is_not_stale(
    compiled_site: Path, tmp_path: Path
) -> None:
    # A plain `pip install .` writes `_fastpath.py` after the extension: the times say nothing.
    package = compiled_site / "acp_toolcalls"
    source = package / "_fastpath.py"
    later = max(p.stat().st_mtime for p in package.glob("_fastpath*.so")) + 3600
    os.utime(source, (later, later))
    done = _report(compiled_site, tmp_path)
    assert done.stdout.split()[0] == "compiled"
    assert done.stderr == ""


def test_an_edited_source_is_used_after_one_warning(compiled_site: Path, tmp_path: Path) -> None:
    source = compiled_site / "acp_toolcalls" / "_fastpath.py"
    text = source.read_text(encoding="utf-8")
    # An edit that changes behaviour: every decode says it came from the edited source.
    source.write_text(
        text.replace(
            "    if type(data) is bytes", "    EDITS.append(1)\n    if type(data) is bytes"
        )
        + "\nEDITS: list[int] = []\n",
        encoding="utf-8",
    )
    script = (
        "import acp_toolcalls.codec as c; from acp_toolcalls import decode_message as d; "
        'd(b\'{"jsonrpc":"2.0","method":"x"}\'); '
        "print(c.FAST_PATH, len(d.__globals__['EDITS']))"
    )
    env = _clean_env(PYTHONPATH=str(compiled_site))
    done = _ok(_run([sys.executable, "-c", script], env=env, cwd=tmp_path))
    assert done.stdout.split() == ["interpreted", "1"]
    assert done.stderr.count("StaleBuildWarning") == 1
    assert "_fastpath.py" in done.stderr and "HATCH_BUILD_HOOKS_ENABLE=1" in done.stderr
    # One group, one rule: the bridges' modules run from their sources too, with no second word.
    bridges = _ok(_run([sys.executable, "-c", REPORT + "; " + BRIDGES], env=env, cwd=tmp_path))
    assert bridges.stdout.split() == [
        "interpreted",
        "acp_toolcalls._fastpath",
        "interpreted",
        "interpreted",
        "py",
    ]
    assert bridges.stderr.count("StaleBuildWarning") == 1
    # The command line too: the edited source runs, with the one warning.
    cli = _ok(
        _run(
            [sys.executable, "-m", "acp_toolcalls", "replay", "--json", str(DEMO)],
            env=env,
            cwd=tmp_path,
        )
    )
    assert '"toolCalls"' in cli.stdout
    assert cli.stderr.count("StaleBuildWarning") == 1
    source.unlink()  # no source beside the extension: it runs, and nothing is said
    done = _report(compiled_site, tmp_path)
    assert done.stdout.split()[0] == "compiled" and done.stderr == ""


def test_an_edited_bridge_source_is_used_after_one_warning(
    compiled_site: Path, tmp_path: Path
) -> None:
    # One edited module of the group: the whole group runs from its sources (a compiled class
    # on a base class run from source would crash the interpreter).
    source = compiled_site / "acp_toolcalls" / "bridge" / "_to_v1.py"
    source.write_text(source.read_text(encoding="utf-8") + "\nEDITED = True\n", encoding="utf-8")
    script = BRIDGES + "; print(b.EDITED)"
    env = _clean_env(PYTHONPATH=str(compiled_site))
    done = _ok(_run([sys.executable, "-c", script], env=env, cwd=tmp_path))
    assert done.stdout.split() == ["interpreted", "interpreted", "py", "True"]
    assert done.stderr.count("StaleBuildWarning") == 1
    assert "bridge/_to_v1.py" in done.stderr and "HATCH_BUILD_HOOKS_ENABLE=1" in done.stderr
    assert "_to_v1_state.py" not in done.stderr  # only the stale one is named
    # The edited source converts as the compiled module did.
    line = b'{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":'
    line += b'{"sessionUpdate":"tool_call_update","toolCallId":"c","title":"t"}}}'
    convert = (
        "from acp_toolcalls import V2ToV1Bridge, encode; "
        f"print(encode(V2ToV1Bridge().convert({line!r}).messages[0]).decode())"
    )
    outputs = [
        _ok(_run([sys.executable, "-W", "ignore", "-c", convert], env=env, cwd=tmp_path)).stdout
    ]
    source.unlink()  # no source beside the extension: it runs, and nothing is said
    outputs.append(_ok(_run([sys.executable, "-c", convert], env=env, cwd=tmp_path)).stdout)
    assert outputs[0] == outputs[1] and '"sessionUpdate":"tool_call"' in outputs[0]


def test_the_root_finder_names_the_compiled_modules() -> None:
    import acp_toolcalls
    from acp_toolcalls import _compiled

    finder = acp_toolcalls._FreshBuilds
    assert {f"acp_toolcalls.{name}" for name in _compiled.COMPILED} == finder.NAMES
    # Before the path finder, which would take an extension beside its source, stale or not.
    from importlib.machinery import PathFinder

    assert sys.meta_path.index(finder) < sys.meta_path.index(PathFinder)


def test_no_compiled_module_defines_a_msgspec_struct() -> None:
    """mypyc writes ``type`` for each annotation of a Struct it compiles (a class it does not
    compile as native), and msgspec then refuses every value of its fields: ``Limits`` failed
    to decode in the compiled build. Such classes live in modules left out of the group
    (``store._structs``)."""
    from acp_toolcalls import _compiled

    package = ROOT / "src" / "acp_toolcalls"
    found = []
    for name in _compiled.COMPILED:
        path = package / (name.replace(".", "/") + ".py")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef) and any(
                "Struct" in ast.unparse(base) for base in node.bases
            ):
                found.append(f"{name}.{node.name}")
    assert found == []


def test_a_build_without_a_stamp_is_stale(compiled_site: Path, tmp_path: Path) -> None:
    # What builds from before the stamp left in src/: the extensions alone. One stamp for the
    # group: without it, the codec's fast path and the bridges' modules all run from source.
    for stamp in (compiled_site / "acp_toolcalls").glob("_compiled_digest*"):
        stamp.unlink()
    env = _clean_env(PYTHONPATH=str(compiled_site))
    done = _ok(_run([sys.executable, "-c", REPORT + "; " + BRIDGES], env=env, cwd=tmp_path))
    assert done.stdout.split() == [
        "interpreted",
        "acp_toolcalls._fastpath",
        "interpreted",
        "interpreted",
        "py",
    ]
    assert done.stderr.count("the compiled modules were not built") == 1  # one for the group
    for name in ("_fastpath.py", "bridge/_to_v1.py", "convert/_tool_calls.py"):
        assert name in done.stderr, name


# --------------------------------------------------------------------------------------------
# The sdist


def _members(sdist: Path) -> list[str]:
    with tarfile.open(sdist) as archive:
        return [name.split("/", 1)[1] for name in archive.getnames() if "/" in name]


def test_the_sdist_holds_what_its_tests_read(sdist: Path) -> None:
    members = set(_members(sdist))
    for needed in (
        "LICENSE",
        "README.md",
        "CONTRIBUTING.md",
        "pyproject.toml",
        "hatch_build.py",
        ".ci/run",
        "examples/session-v2.jsonl",
        "examples/buggy-v2.jsonl",
        "examples/agent.py",
        "benchmarks/__init__.py",  # the tests import the generators as `benchmarks.*`
        "benchmarks/messages.py",
        "benchmarks/v1_messages.py",
        "benchmarks/floods.py",
        "fuzz/run.py",
        "fuzz/acp.dict",
        "tests/conftest.py",
        "tests/interop/node/package-lock.json",
        "tests/interop/node/client.mjs",
        "tests/interop/agents/package.json",
        "tests/interop/agents/package-lock.json",
        "tests/conformance/reducers/reducer.ts",  # compiled by the conformance tests
        "tests/conformance/reducers/tsconfig.json",
        "src/acp_toolcalls/conformance/vectors/null-clears-title.json",  # the bundled suite
        "src/acp_toolcalls/data/demo-session.jsonl",
        "src/acp_toolcalls/schemas/v2/schema.json",
    ):
        assert needed in members, needed
    assert not [m for m in members if "node_modules" in m or m.endswith((".so", ".pyc"))]
    assert "src/acp_toolcalls/_compiled_digest.py" not in members  # written by a build only


@pytest.fixture(scope="session")
def unpacked_sdist(sdist: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("unpacked")
    with tarfile.open(sdist) as archive:
        archive.extractall(target, filter="data")
    (root,) = target.iterdir()
    return root


def _collected(root: Path, env: dict[str, str]) -> int:
    """How many tests pytest finds under ``root`` (``-qq``: one "file: count" line a file)."""
    done = _ok(
        _run(
            [
                sys.executable,
                "-m",
                "pytest",
                "--collect-only",
                "-q",
                "-q",
                "-p",
                "no:cacheprovider",
            ],
            env=env,
            cwd=root,
        )
    )
    counts = [line.rsplit(": ", 1) for line in done.stdout.splitlines() if ".py: " in line]
    return sum(int(count) for _, count in counts)


def test_the_sdist_tests_collect_and_those_on_its_data_pass(unpacked_sdist: Path) -> None:
    # The sdist's own source, not the checkout's: its `src` comes first.
    env = _clean_env(PYTHONPATH=str(unpacked_sdist / "src"))
    assert _collected(unpacked_sdist, env) == _collected(ROOT, _clean_env())
    done = _run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-o",
            "addopts=",
            "-q",
            "-p",
            "no:cacheprovider",
            "tests/project/test_readme.py",
            "tests/cli/test_cli_robustness.py",
            "-k",
            "readme or cannot_be_written",
        ],
        env=env,
        cwd=unpacked_sdist,
    )
    assert done.returncode == 0, done.stdout[-3000:]
    summary = done.stdout.strip().splitlines()[-1]
    assert " passed" in summary and "failed" not in summary and "skipped" not in summary


# --------------------------------------------------------------------------------------------
# The release wheels


def test_the_cibuildwheel_configuration_builds_and_checks_the_compiled_wheel(
    compiled_site: Path, tmp_path: Path
) -> None:
    # Release wheels come from cibuildwheel (not runnable here: it needs its build containers);
    # it must enable the same hook as CI's compiled run, and its test must pass on such a wheel.
    tomllib = pytest.importorskip("tomllib")
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    cibuildwheel = config["tool"]["cibuildwheel"]
    assert cibuildwheel["environment"] == {"HATCH_BUILD_HOOKS_ENABLE": "1"}
    command = cibuildwheel["test-command"].replace("{project}", str(ROOT))
    env = _clean_env(PYTHONPATH=str(compiled_site))
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    done = _run(["sh", "-c", command], env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert '"toolCalls"' in done.stdout
