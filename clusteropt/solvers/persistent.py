"""Re-solving one model many times without rebuilding it: :class:`PersistentSolver`.

Online policies solve a model of the same shape every slot with new data.  Rebuilding the Pyomo
model and handing it to the solver each slot costs far more than the change itself.  A
``PersistentSolver`` keeps Pyomo's persistent ``contrib.solver`` object (HiGHS, SCIP, Gurobi)
alive across solves: after the first hand-off, changes to mutable ``Param`` values, variable
bounds and fixings, added or removed constraints are detected and passed on as updates.

For CVXPY the equivalent is a problem written with ``cp.Parameter`` (DPP): CVXPY caches the
canonicalization, so changing ``parameter.value`` and solving again skips it.  A
``PersistentSolver`` over a CVXPY problem therefore just re-solves the same problem object.
"""

from __future__ import annotations

import logging
from typing import Any

from clusteropt.solvers.core import (
    check_optimal,
    native_options,
    notices_to_stderr,
    resolve_solver,
)
from clusteropt.solvers.options import backend_of, check_numbers
from clusteropt.solvers.result import SolveResult, UnsuitableSolverError

log = logging.getLogger(__name__)

__all__ = ["PersistentSolver"]


class PersistentSolver:
    """A solver kept alive for one model; call :meth:`solve` after each change.

    Parameters
    ----------
    model : pyomo ConcreteModel, cvxpy.Problem or CvxpyModel
        The model to keep.  Change its mutable parameters / bounds in place between solves.
    solver : str, optional
        Registry name; must have a persistent Pyomo interface for Pyomo models (highs, scip,
        gurobi).  Default as in :func:`clusteropt.solvers.solve`.
    time_limit, mip_gap, threads, options :
        Defaults for every :meth:`solve` call (each call may override them).

    Attributes
    ----------
    solver_ : object
        The native persistent solver object (Pyomo models), created by the first solve.
    n_solves_ : int
        Number of solves so far.

    Examples
    --------
    >>> import pyomo.environ as pyo
    >>> m = pyo.ConcreteModel()
    >>> m.cap = pyo.Param(mutable=True, initialize=2.0)
    >>> m.x = pyo.Var(bounds=(0, None))
    >>> m.c = pyo.Constraint(expr=m.x <= m.cap)
    >>> m.obj = pyo.Objective(expr=m.x, sense=pyo.maximize)
    >>> ps = PersistentSolver(m, "highs")
    >>> ps.solve().objective
    2.0
    >>> m.cap = 5.0
    >>> ps.solve().objective
    5.0
    """

    def __init__(
        self,
        model: Any,
        solver: str | None = None,
        *,
        time_limit: float | None = None,
        mip_gap: float | None = None,
        threads: int | None = None,
        options: dict[str, Any] | None = None,
    ):
        self.model = model
        self.backend = backend_of(model)
        check_numbers(time_limit, mip_gap, threads)
        self.spec, self.problem_class = resolve_solver(model, solver, self.backend)
        if self.backend == "pyomo" and self.spec.route("pyomo").persistent is None:
            from clusteropt.solvers.registry import SOLVERS

            have = [n for n, s in SOLVERS.items() if "pyomo" in s.routes and s.routes["pyomo"].persistent]
            raise UnsuitableSolverError(
                f"solver '{self.spec.name}' has no persistent Pyomo interface; use one of "
                f"{', '.join(have)}, or call clusteropt.solvers.solve() to rebuild each time"
            )
        self.defaults = {
            "time_limit": time_limit,
            "mip_gap": mip_gap,
            "threads": threads,
            "options": options,
        }
        self.solver_ = None
        self.n_solves_ = 0

    def solve(self, *, tee: bool = False, raise_on_nonoptimal: bool = True, **overrides) -> SolveResult:
        """Solve the model in its current state; ``overrides`` replace the default options.

        Returns the :class:`SolveResult` (values are also loaded into the model).  Raises
        :class:`NotOptimalError` as :func:`clusteropt.solvers.solve` does.
        """
        unknown = set(overrides) - set(self.defaults)
        if unknown:
            raise TypeError(
                f"unexpected option(s) {sorted(unknown)}; expected {sorted(self.defaults)}"
            )
        opts = {**self.defaults, **overrides}
        check_numbers(opts["time_limit"], opts["mip_gap"], opts["threads"])
        native = native_options(self.spec, self.backend, **opts)
        with notices_to_stderr(self.spec):
            result = self._solve(native, tee, opts["time_limit"])
        self.n_solves_ += 1
        log.debug("persistent solve %d: %s", self.n_solves_, result.summary())
        return check_optimal(result, raise_on_nonoptimal)

    def _solve(self, native: dict[str, Any], tee: bool, time_limit: float | None) -> SolveResult:
        if self.backend == "pyomo":
            from clusteropt.solvers.pyomo_backend import make_contrib_solver, solve_pyomo

            if self.solver_ is None:
                persistent = self.spec.route("pyomo").persistent
                assert persistent is not None  # __init__ rejects a Pyomo route without one
                self.solver_ = make_contrib_solver(persistent)
            result, self.solver_ = solve_pyomo(
                self.model, self.spec, native, tee=tee, time_limit=time_limit, solver_object=self.solver_,
            )
            return result
        from clusteropt.solvers.cvxpy_backend import solve_cvxpy

        return solve_cvxpy(
            self.model, self.spec, native, tee=tee, time_limit=time_limit, mip=self.problem_class == "MILP",
        )
