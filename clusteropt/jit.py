"""When the package's compiled kernels (numba) run: the ``CLUSTEROPT_JIT`` switch every system shares.

A compiled kernel transcribes a pure-Python reference operation for operation, and a test checks
that both give the same result bit for bit, so the switch changes speed only.  Importing numba and
loading the cached kernels costs about half a second, so by default (``"auto"``) a system runs its
kernels only on work large enough to repay that, or once they are loaded anyway.

``CLUSTEROPT_JIT``: ``0`` / ``off`` / ``no`` / ``false`` = the reference everywhere; ``1`` / ``on`` /
``yes`` / ``true`` = compiled however small; unset or anything else = ``"auto"``.

>>> import os
>>> os.environ.get("CLUSTEROPT_JIT") is None and mode() == "auto"
True
"""

from __future__ import annotations

import os
import sys

__all__ = ["enabled", "mode", "use_compiled"]


def mode() -> str:
    """``"off"``, ``"on"`` or ``"auto"``, from ``CLUSTEROPT_JIT`` (module docstring)."""
    value = os.environ.get("CLUSTEROPT_JIT", "auto").strip().lower()
    if value in ("0", "off", "no", "false"):
        return "off"
    return "on" if value in ("1", "on", "yes", "true") else "auto"


def enabled() -> bool:
    """Whether the fast paths run at all (every mode but ``"off"``)."""
    return mode() != "off"


def use_compiled(size: int, threshold: int, kernels: str) -> bool:
    """Whether work of ``size`` runs compiled: mode ``"on"``, or ``"auto"`` with ``size >= threshold`` or
    the kernels module ``kernels`` loaded already (then they cost nothing more).

    >>> import os
    >>> use_compiled(10, 100, "clusteropt.no_such_module") == (mode() == "on")
    True
    """
    m = mode()
    if m != "auto":
        return m == "on"
    return size >= threshold or kernels in sys.modules
