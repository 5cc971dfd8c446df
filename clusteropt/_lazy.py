"""Names a package re-exports but imports on first use (PEP 562), so importing it stays light.

``import clusteropt`` must not load Pyomo and CVXPY, nor ``import clusteropt.models`` a system's
models or the solver hand-offs before they are asked for; a package lists such names
with the module each comes from and installs the two module hooks this returns.  Type checkers
see the same names through an ``if TYPE_CHECKING:`` import beside the table.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable

__all__ = ["lazy_exports"]


def lazy_exports(package: str, names: dict[str, str]) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package`` whose attribute ``name`` is ``names[name]``'s.

    The first access imports the module and keeps the value in the package's namespace, so later
    accesses are plain lookups.

    >>> import types
    >>> sys.modules["lazy_demo"] = types.ModuleType("lazy_demo")
    >>> getattr_, dir_ = lazy_exports("lazy_demo", {"sqrt": "math"})
    >>> getattr_("sqrt")(9.0), "sqrt" in dir_(), sys.modules["lazy_demo"].sqrt(4.0)
    (3.0, True, 2.0)
    >>> del sys.modules["lazy_demo"]
    """

    def __getattr__(name: str) -> object:
        if name in names:
            value = getattr(importlib.import_module(names[name]), name)
            setattr(sys.modules[package], name, value)
            return value
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[package]), *names})

    return __getattr__, __dir__
