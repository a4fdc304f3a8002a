"""The optional build step: compile the codec's fast path with mypyc, stamped with its source.

Enabled only on request (``HATCH_BUILD_HOOKS_ENABLE=1``; the cibuildwheel configuration in
pyproject.toml sets it): a plain ``pip install .`` builds the pure-Python ``py3-none-any``
wheel and needs no C compiler.

Before hatch-mypyc compiles, the hook writes ``src/acp_toolcalls/_fastpath_digest.py`` holding
the SHA-256 of ``_fastpath.py``; both are compiled, so the extension carries the digest of the
exact source it was built from. ``acp_toolcalls.codec`` compares it with the ``_fastpath.py``
beside the extension at import and falls back to that source, with one warning, when they
differ. The bridges' hot modules (``acp_toolcalls._compiled.COMPILED``, issue 19: dotted
names under the package, such as ``convert._tool_calls``) are compiled too, the hook adding
their files to hatch-mypyc's ``include``, and stamped the same way, in ``_compiled_digest.py``
(one SHA-256 per module, by that name), which ``acp_toolcalls._compiled`` checks when they are
imported. The generated files are removed again once the wheel is built.
"""

from __future__ import annotations

import ast
import hashlib
from pathlib import Path
from typing import Any

from hatch_mypyc.plugin import MypycBuildHook

PACKAGE = Path("src") / "acp_toolcalls"
SOURCE = "_fastpath.py"
DIGEST_MODULE = "_fastpath_digest.py"
COMPILED_DIGESTS = "_compiled_digest.py"


def source_digest(path: Path) -> str:
    """What ``acp_toolcalls.codec`` computes of the ``_fastpath.py`` it finds: the same bytes."""
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


class FastPathBuildHook(MypycBuildHook):
    """hatch-mypyc's hook, after writing the digest module it compiles along."""

    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name == "wheel":
            package = Path(self.root) / PACKAGE
            digest = source_digest(package / SOURCE)
            (package / DIGEST_MODULE).write_text(
                '"""Written by the build (hatch_build.py): the SHA-256 of the _fastpath.py that '
                'was compiled with this module."""\n\n'
                f"DIGEST = {digest!r}\n",
                encoding="utf-8",
            )
            names = compiled_modules(package)
            digests = {name: source_digest(module_path(package, name)) for name in names}
            (package / COMPILED_DIGESTS).write_text(
                '"""Written by the build (hatch_build.py): the SHA-256 of each module of '
                '_compiled.COMPILED that was compiled with this module."""\n\n'
                f"DIGESTS = {digests!r}\n",
                encoding="utf-8",
            )
            # hatch-mypyc compiles the files its `include` matches: these modules too.
            sources = [module_path(PACKAGE, name).as_posix() for name in names]
            self.config["include"] = [*self.config.get("include", []), *sources]
        super().initialize(version, build_data)

    def finalize(self, version: str, build_data: dict[str, Any], artifact_path: str) -> None:
        (Path(self.root) / PACKAGE / DIGEST_MODULE).unlink(missing_ok=True)
        (Path(self.root) / PACKAGE / COMPILED_DIGESTS).unlink(missing_ok=True)
        super().finalize(version, build_data, artifact_path)


def get_build_hook() -> type[MypycBuildHook]:
    """The hook class (named, because hatch-mypyc's own class is imported here too)."""
    return FastPathBuildHook
