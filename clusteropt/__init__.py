"""clusteropt: optimization models for scheduling and placing distributed-computing jobs.

Rooms: ``instances`` (problems as data), ``models`` (Pyomo / CVXPY builders), ``solvers``
(solve, export, persistent re-solve), ``rounding``, ``algorithms``, ``online``, ``verify``,
``experiments``; the ``clusteropt`` command lives in ``clusteropt.cli``.
"""

import logging

from clusteropt.solvers import (
    PersistentSolver,
    SolveResult,
    Termination,
    available_solvers,
    solve,
    solve_file,
    write_model,
)

__version__ = "0.1.0"

logging.getLogger(__name__).addHandler(logging.NullHandler())

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
