"""Solving models: :func:`solve`, :class:`SolveResult`, the solver registry, LP/MPS export,
solving files and persistent re-solves.

>>> from clusteropt.solvers import available_solvers
>>> "highs" in available_solvers()
True
"""

from clusteropt.solvers.core import solve, solve_file
from clusteropt.solvers.files import write_model
from clusteropt.solvers.options import THREADS_ENV, backend_of, default_threads
from clusteropt.solvers.persistent import PersistentSolver
from clusteropt.solvers.registry import (
    SOLVERS,
    Capability,
    SolverSpec,
    available_solvers,
    get_spec,
    solver_table,
)
from clusteropt.solvers.result import (
    NotOptimalError,
    SolverError,
    SolveResult,
    SolverUnavailableError,
    Termination,
    UnknownSolverError,
    UnsuitableSolverError,
)

__all__ = [
    "SOLVERS",
    "THREADS_ENV",
    "Capability",
    "NotOptimalError",
    "PersistentSolver",
    "SolveResult",
    "SolverError",
    "SolverSpec",
    "SolverUnavailableError",
    "Termination",
    "UnknownSolverError",
    "UnsuitableSolverError",
    "available_solvers",
    "backend_of",
    "default_threads",
    "get_spec",
    "solve",
    "solve_file",
    "solver_table",
    "write_model",
]
