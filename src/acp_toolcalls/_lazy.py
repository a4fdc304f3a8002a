"""Names a package exports, imported from its modules on first use (PEP 562).

Rules this module owns: a package lists its exports as ``{module: (name, ...)}`` (a module
relative to the package: ``"_to_v1"``, or ``"..schema"``); ``exports`` gives it the module
``__getattr__`` and ``__dir__`` that import a name's module on its first use and keep the
value in the package's namespace, so importing a package costs only what its users touch
(``acp-toolcalls bridge`` never loads jsonschema, ``convert`` never loads asyncio). Any other
name is an ``AttributeError``. Type checkers read the package's ``TYPE_CHECKING`` imports.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # not `from typing import ...`: this runs at every package's import
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any


def exports(
    package: str, table: Mapping[str, tuple[str, ...]]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package`` (its ``__name__``) and its export ``table``."""
    origin = {name: module for module, names in table.items() for name in names}
    namespace = sys.modules[package].__dict__

    def __getattr__(name: str) -> Any:
        module = origin.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        import importlib

        relative = module if module.startswith(".") else f".{module}"
        value = getattr(importlib.import_module(relative, package), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *origin})

    return __getattr__, __dir__
