"""clusteropt: optimization models for scheduling and placing distributed-computing jobs.

Rooms: ``instances`` (problems as data), ``models`` (Pyomo / CVXPY builders), ``solvers``
(solve, export, persistent re-solve), ``rounding``, ``algorithms``, ``online``, ``verify``,
``experiments``; the ``clusteropt`` command lives in ``clusteropt.cli``.
"""

import importlib
import logging

__version__ = "0.1.0"

logging.getLogger(__name__).addHandler(logging.NullHandler())

# The solver API is imported on first use (PEP 562), so ``import clusteropt`` and the light
# parts of the package (experiment cell processes, the CLI's listings) do not load Pyomo and
# CVXPY up front.
_LAZY = {name: "clusteropt.solvers" for name in (
    "PersistentSolver", "SolveResult", "Termination", "available_solvers", "solve", "solve_file",
    "write_model",
)}


def __getattr__(name: str):
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'clusteropt' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *_LAZY])

__all__ = [
    "PersistentSolver",
    "SolveResult",
    "Termination",
    "__version__",
    "available_solvers",
    "solve",
    "solve_file",
    "write_model",
]
