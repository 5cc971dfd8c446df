"""clusteropt: optimization models for scheduling and placing distributed-computing jobs.

The verbs, the same for every system (:mod:`clusteropt.verbs`): ``generate``, ``load``, ``save``,
``build``, ``solve``, ``write_model``, ``solve_file``, ``run``, ``check``, ``list_models``,
``list_policies``, ``list_solvers``.

Rooms: ``instances`` (problems as data), ``models`` (Pyomo / CVXPY builders), ``solvers``
(solve, export, persistent re-solve), ``rounding``, ``algorithms``, ``decisions`` (what each
system decides, as data), ``online``, ``verify``, ``experiments``; the ``clusteropt`` command
lives in ``clusteropt.cli``.  Inside a room a system with several files is a subpackage
(``clusteropt.models.gadget``); the module paths from before that keep importing
(:data:`clusteropt._moved.MOVED`).
"""

import logging

from clusteropt import _moved
from clusteropt._lazy import lazy_exports

__version__ = "0.1.0"

logging.getLogger(__name__).addHandler(logging.NullHandler())
_moved.install()

# The solver API is imported on first use (PEP 562), so ``import clusteropt`` and the light
# parts of the package (experiment cell processes, the CLI's listings) do not load Pyomo and
# CVXPY up front.
_LAZY = {name: "clusteropt.solvers" for name in (
    "PersistentSolver", "SolveResult", "Termination", "available_solvers", "solve", "solve_file",
    "write_model",
)}
_LAZY.update({name: "clusteropt.verbs" for name in (
    "build", "generate", "list_models", "list_solvers", "load", "save",
)})
_LAZY.update({name: "clusteropt.runs" for name in ("Run", "check", "list_policies", "run")})

__getattr__, __dir__ = lazy_exports(__name__, _LAZY)

__all__ = [
    "PersistentSolver",
    "Run",
    "SolveResult",
    "Termination",
    "__version__",
    "available_solvers",
    "build",
    "check",
    "generate",
    "list_models",
    "list_policies",
    "list_solvers",
    "load",
    "run",
    "save",
    "solve",
    "solve_file",
    "write_model",
]
