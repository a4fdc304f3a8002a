"""The compiled build (optional): the hot modules from mypyc extensions, when fresh.

Rules this module owns: ``COMPILED`` names the modules a compiled build compiles: the codec's
fast path ``_fastpath`` (``decode_message``), ``V2ToV1Bridge``, the v1/v2 mappings and
``ToolCallStore`` (issue 19), by their dotted name under the package
(``"convert._tool_calls"``: ``acp_toolcalls/convert/_tool_calls.py``). They are one group:
all of them come from their extensions, or all from their sources. The extensions are taken
only when the build's one stamp (``_compiled_digest.DIGESTS``: the SHA-256 of each source it
compiled, by name, written by hatch_build.py) matches every ``.py`` beside them; otherwise
every module of the group runs from its source, after one ``StaleBuildWarning`` naming the
stale ones: an edit takes effect at once, a build without a stamp is stale, and an
installation without sources runs its extensions. The group is all or nothing because mypyc
compiles it together: compiled code takes an object of a class it compiled where its
annotations name one (``V2ToV1Bridge``'s and ``ToolCallStore``'s state and parts are native
classes in several modules, each typed by the others), and handed one run from source, it
fails. The public classes allow interpreted subclasses (``_mypyc.mypyc_attr``), so a subclass
of one works in both builds. ``BUILDS`` says which each module that was imported
runs (``acp_toolcalls.codec.FAST_PATH`` is its ``_fastpath``). Both behave the same.

Theory of operation: an extension module sits next to its source and Python's path finder
prefers it, so the choice is made before that finder runs: the package root puts a finder
first on ``sys.meta_path`` that hands the names of ``COMPILED`` to ``find_spec`` (importing
this module then: the codec's import of ``_fastpath`` is the first), which answers with the
extension's spec when the group is fresh, else with one for the source. This module imports
nothing of the package but the stamp, so the codec can import it while it is being imported.
A plain ``pip install .`` compiles nothing: the sources are found, and run.
"""

from __future__ import annotations

import os
from importlib.machinery import EXTENSION_SUFFIXES, ModuleSpec, PathFinder

TYPE_CHECKING = False  # not `from typing import ...`: the package's start-up stays light
if TYPE_CHECKING:
    from collections.abc import Sequence
    from types import ModuleType

__all__ = ["BUILDS", "COMPILED", "StaleBuildWarning", "find_spec"]

COMPILED = (
    "_fastpath",  # the codec's decode_message (codec/__init__.py imports it first)
    "bridge._to_v1_state",
    "bridge._to_v1_terminals",
    "bridge._to_v1_projection",
    "bridge._to_v1_calls",
    "bridge._to_v1_permissions",
    "bridge._to_v1",
    "convert._kernel",
    "convert._content",
    "convert._plain",
    "convert._tool_calls",
    "store._sizes",
    "store._limits",
    "store._state",
    "store._patch",
    "store._sessions",
    "store._budgets",
    "store._terminals",
    "store._tool_calls",
    "store._v1",
    "store._view",
    "store._reducer",
)
"""The modules (dotted names under this package) a compiled build compiles; the package
root's finder (``acp_toolcalls._FreshBuilds``) asks ``find_spec`` for them, and hatch_build.py
compiles and stamps them."""

if TYPE_CHECKING:
    from typing import Literal

    Build = Literal["compiled", "interpreted"]

BUILDS: dict[str, Build] = {}
"""Name (as in ``COMPILED``) -> ``"compiled"`` or ``"interpreted"``, for each one imported."""


class StaleBuildWarning(RuntimeWarning):
    """The compiled modules were not built from the sources beside them (an edit since the
    build, or a build without a stamp): their sources run instead, with the same results."""


_PACKAGE = __name__.rpartition(".")[0]


def find_spec(
    fullname: str, path: Sequence[str] | None = None, target: ModuleType | None = None
) -> ModuleSpec | None:
    """The spec of ``acp_toolcalls.<name>`` for a ``name`` of ``COMPILED``: its extension when
    the group is fresh, else its source; ``None`` for any other module."""
    package, _, name = fullname.partition(".")
    if package != _PACKAGE or name not in COMPILED:
        return None
    spec = PathFinder.find_spec(fullname, path, target)
    origin = spec.origin if spec is not None else None
    if spec is None or origin is None or not origin.endswith(tuple(EXTENSION_SUFFIXES)):
        BUILDS[name] = "interpreted"
        return spec
    source = os.path.join(os.path.dirname(origin), f"{name.rpartition('.')[2]}.py")
    if _group_fresh():
        BUILDS[name] = "compiled"
        return spec
    from importlib.util import spec_from_file_location

    BUILDS[name] = "interpreted"
    return spec_from_file_location(fullname, source)


_FRESH: list[bool] = []  # the group's verdict, once decided


def _group_fresh() -> bool:
    """Whether every module of ``COMPILED`` that has a source beside its extension was built
    from that source (decided once; one warning when not)."""
    if _FRESH:
        return _FRESH[0]
    import hashlib

    base = os.path.dirname(os.path.abspath(__file__))
    stamps = _stamps()
    stale: list[str] = []
    for name in COMPILED:
        source = os.path.join(base, *name.split(".")) + ".py"
        try:
            with open(source, "rb") as file:
                text = file.read()
        except OSError:  # an installation without sources: nothing to be stale against
            continue
        if stamps.get(name) != hashlib.sha256(text).hexdigest():
            stale.append(name)
    _FRESH.append(not stale)
    if stale:
        import warnings

        names = ", ".join(f"{n.replace('.', '/')}.py" for n in stale)
        warnings.warn(
            f"acp_toolcalls: the compiled modules were not built from the sources "
            f"beside them ({names}); using the sources instead (same results, slower). "
            "Rebuild with `HATCH_BUILD_HOOKS_ENABLE=1 pip install .` (add -e for a "
            "checkout), or delete the stale *.so files beside them.",
            StaleBuildWarning,
            stacklevel=3,
        )
    return not stale


def _stamps() -> dict[str, str]:
    """The build's SHA-256 of each source it compiled (none: a build without a stamp)."""
    try:
        from ._compiled_digest import DIGESTS  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        return {}
    return dict(DIGESTS)
