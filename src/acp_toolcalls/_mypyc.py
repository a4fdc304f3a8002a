"""``mypyc_attr`` for the modules of the compiled group (``_compiled.COMPILED``).

Rules this module owns: mypyc reads ``@mypyc_attr(...)`` when it compiles a class (it resolves
the name to ``mypy_extensions.mypyc_attr`` through the import below); at run time, compiled or
not, the decorator does nothing, so ``mypy_extensions`` is needed only to build.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mypy_extensions import mypyc_attr as mypyc_attr
else:

    def mypyc_attr(*_args: object, **_attrs: object) -> Callable[[type], type]:
        """Nothing at run time: what mypyc reads is the call in the source."""
        return lambda cls: cls


__all__ = ["mypyc_attr"]
