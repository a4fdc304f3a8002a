"""The optional build step: compile the hot modules with mypyc, stamped with their sources.

Enabled only on request (``HATCH_BUILD_HOOKS_ENABLE=1``; the cibuildwheel configuration in
pyproject.toml sets it): a plain ``pip install .`` builds the pure-Python ``py3-none-any``
wheel and needs no C compiler.

The modules compiled are ``acp_toolcalls._compiled.COMPILED`` (dotted names under the package,
such as ``_fastpath`` or ``convert._tool_calls``; read from that file, not imported): the hook
adds their files to hatch-mypyc's ``include``. Before mypyc compiles, it writes the one stamp,
``acp_toolcalls/_compiled_digest.py``: ``DIGESTS``, the SHA-256 of each of those sources by
name, compiled along, so the build carries the digests of the exact sources it was built from.
``acp_toolcalls._compiled`` compares them with the sources beside the extensions when the first
of them is imported, and runs every one from its source, with one warning, when any differs.

A wheel is compiled out of tree, in a copy of ``src/`` in a temporary directory (removed once
the wheel is built): nothing is written into the checkout. An editable install alone compiles
in ``src/``, in place, and the hook removes its stamp's source again afterwards.
"""

from __future__ import annotations

import ast
import hashlib
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from hatch_mypyc.plugin import MypycBuildHook
from hatch_mypyc.utils import construct_setup_file

PACKAGE = Path("src") / "acp_toolcalls"
COMPILED_DIGESTS = "_compiled_digest.py"


def source_digest(path: Path) -> str:
    """What ``acp_toolcalls._compiled`` computes of each source it finds: the same bytes."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def module_path(package: Path, name: str) -> Path:
    """The source of the module ``name`` of ``COMPILED`` (``convert._tool_calls``)."""
    return package.joinpath(*name.split(".")).with_suffix(".py")


def compiled_modules(package: Path) -> tuple[str, ...]:
    """``acp_toolcalls._compiled.COMPILED``, read from its source (not imported here)."""
    tree = ast.parse((package / "_compiled.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == [
            "COMPILED"
        ]:
            names = ast.literal_eval(node.value)
            assert isinstance(names, tuple) and all(isinstance(n, str) for n in names)
            return names
    raise LookupError("COMPILED is not assigned in _compiled.py")


def write_stamp(package: Path) -> tuple[str, ...]:
    """Write the stamp into ``package``; the names of ``COMPILED``."""
    names = compiled_modules(package)
    digests = {name: source_digest(module_path(package, name)) for name in names}
    (package / COMPILED_DIGESTS).write_text(
        '"""Written by the build (hatch_build.py): the SHA-256 of each module of '
        '_compiled.COMPILED that was compiled with this module."""\n\n'
        f"DIGESTS = {digests!r}\n",
        encoding="utf-8",
    )
    return names


class CompiledBuildHook(MypycBuildHook):
    """hatch-mypyc's hook, after writing the stamp it compiles along.

    A wheel (``pip install .``, ``pip wheel .``) is compiled out of tree: in a copy of ``src/``
    in a temporary directory, where the stamp is written too, and the extensions and the stamp
    go into the wheel from there; nothing is written into the checkout. hatch-mypyc itself
    builds in place (``build_ext --inplace``), which left the extensions in ``src/``,
    git-ignored, and the checkout ran compiled from then on. Only an editable install
    (``pip install -e .``) still builds in place: it imports the package from ``src/``, so its
    extensions must sit beside their sources.
    """

    PLUGIN_NAME = "custom"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._out_of_tree: Path | None = None

    def _include(self, names: tuple[str, ...]) -> None:
        # hatch-mypyc compiles the files its `include` matches: these modules too.
        sources = [module_path(PACKAGE, name).as_posix() for name in names]
        self.config["include"] = [*self.config.get("include", []), *sources]

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name != "wheel":
            return
        if version == "editable":
            self._include(write_stamp(Path(self.root) / PACKAGE))
            super().initialize(version, build_data)
            return
        self._out_of_tree = Path(tempfile.mkdtemp(prefix="acp-toolcalls-mypyc-"))
        copy = self._out_of_tree / "project"
        shutil.copytree(
            Path(self.root) / "src",
            copy / "src",
            ignore=shutil.ignore_patterns("__pycache__", "*.so", "*.pyd", "*.c"),
        )
        self._include(write_stamp(copy / PACKAGE))
        files = sorted(
            path.relative_to(copy).as_posix()
            for path in (copy / PACKAGE).rglob("*.py")
            if self.include_path(path.relative_to(copy).as_posix())
        )
        options = {**self.config_options, "target_dir": str(self._out_of_tree / "build")}
        options.pop("build-dir", None)
        setup = self._out_of_tree / "setup.py"
        setup.write_text(
            construct_setup_file("src", *self.config_mypy_args, *files, **options),
            encoding="utf-8",
        )
        command = [sys.executable, str(setup), "build_ext", "--inplace"]
        command += ["--build-temp", str(self._out_of_tree / "tmp")]
        done = subprocess.run(
            command, cwd=copy, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, check=False
        )
        if done.returncode:
            raise RuntimeError(f"Error while invoking mypyc:\n{done.stdout.decode('utf-8')}")
        # What the wheel takes from the copy: the extensions and the stamp, by their place in
        # the package (the stamp's source beside its extension, as for every module).
        built = [
            path
            for path in (copy / PACKAGE).rglob(f"*{self.compiled_extension}")
            if "__pycache__" not in path.parts
        ]
        built.append(copy / PACKAGE / COMPILED_DIGESTS)
        for path in built:
            build_data["force_include"][str(path)] = path.relative_to(copy / "src").as_posix()
        build_data["infer_tag"] = True
        build_data["pure_python"] = False

    def finalize(self, version: str, build_data: dict[str, Any], artifact_path: str) -> None:
        if self._out_of_tree is not None:
            shutil.rmtree(self._out_of_tree, ignore_errors=True)
            self._out_of_tree = None
        else:  # the editable build's stamp, in src/
            (Path(self.root) / PACKAGE / COMPILED_DIGESTS).unlink(missing_ok=True)
        super().finalize(version, build_data, artifact_path)


def get_build_hook() -> type[MypycBuildHook]:
    """The hook class (named, because hatch-mypyc's own class is imported here too)."""
    return CompiledBuildHook
