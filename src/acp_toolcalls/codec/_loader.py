"""The fast path's glue: which ``acp_toolcalls._fastpath`` this process runs.

Rules this module owns:

- ``decode_message`` is ``_fastpath``'s, compiled by mypyc when the
  package was built so and the build's stamp (the SHA-256 of its source, compiled into
  ``_fastpath_digest`` by hatch_build.py) matches the ``_fastpath.py`` beside it; otherwise
  that source, interpreted, after one ``StaleBuildWarning``. ``FAST_PATH`` says which.
- An edited source is never shadowed by an old build, and a fresh install is never taken for a
  stale one, whatever the files' times say. An installation without sources uses its build.

``_fastpath`` stays at ``acp_toolcalls/_fastpath.py`` (the build stamps it by that path) and
imports only ``codec._decode``, never this package's ``__init__``: no import cycle.
"""

from __future__ import annotations

import importlib
import os
from types import ModuleType
from typing import Literal

__all__ = ["FAST_PATH", "StaleBuildWarning", "fast_path_module"]

_PACKAGE = __name__.rsplit(".", 2)[0]  # acp_toolcalls, where the build puts _fastpath


class StaleBuildWarning(RuntimeWarning):
    """The compiled fast path was not built from the ``_fastpath.py`` beside it (an edit since
    the build, or a build from before builds were stamped): the pure-Python source is used."""


FAST_PATH: Literal["compiled", "interpreted"] = "interpreted"
"""Which ``decode_message`` this process runs: the mypyc-compiled ``_fastpath`` or its source.
Both behave the same; the compiled one saves a few hundred nanoseconds a message."""


def _load_fast_path() -> ModuleType:
    """``_fastpath``: the extension only when it was built from the ``_fastpath.py`` beside it,
    else that source (after one ``StaleBuildWarning``)."""
    global FAST_PATH

    module = importlib.import_module("._fastpath", _PACKAGE)
    built = module.__file__ or ""
    if built.endswith(".py"):
        return module
    source = os.path.join(os.path.dirname(built), "_fastpath.py")
    try:
        with open(source, "rb") as file:
            text = file.read()
    except OSError:  # an installation without sources: nothing to be stale against
        FAST_PATH = "compiled"
        return module
    import hashlib

    try:
        stamp: object = importlib.import_module("._fastpath_digest", _PACKAGE).DIGEST
    except (ImportError, AttributeError):
        stamp = None
    if stamp == hashlib.sha256(text).hexdigest():
        FAST_PATH = "compiled"
        return module
    import warnings
    from importlib.util import module_from_spec, spec_from_file_location

    warnings.warn(
        f"acp_toolcalls: the compiled fast path {os.path.basename(built)} was not built from "
        f"the {source} beside it; using that source instead (same results, slower decoding). "
        "Rebuild with `HATCH_BUILD_HOOKS_ENABLE=1 pip install .` (add -e for a checkout), or "
        "delete the stale _fastpath*.so files.",
        StaleBuildWarning,
        stacklevel=2,
    )
    spec = spec_from_file_location(f"{_PACKAGE}._fastpath_source", source)
    if spec is None or spec.loader is None:  # pragma: no cover - a .py path always has a loader
        raise ImportError(source)
    interpreted = module_from_spec(spec)
    spec.loader.exec_module(interpreted)
    return interpreted


fast_path_module = _load_fast_path()
"""The ``_fastpath`` module this process runs (compiled, or its source)."""
