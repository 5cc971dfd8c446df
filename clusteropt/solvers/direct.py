"""A fast hand-off of a linear Pyomo model to HiGHS, through its matrix.

:func:`solve` with HiGHS goes through Pyomo's persistent ``contrib.solver`` interface, which adds
variables and rows one by one (and sets every column's integrality separately).  That is right for
re-solves after small changes, and slow for a model solved once: on a 51k-column LP of the GADGET
slot pipeline it took longer than HiGHS itself.  :func:`solve_highs_direct` compiles the model
with Pyomo's own standard-form compiler (:class:`pyomo.repn.plugins.standard_form.
LinearStandardFormCompiler`, sparse matrices in one pass), passes them to ``highspy`` in one
call and loads the values back into the Pyomo variables, so the model stays the thing the user
inspects and exports.  Linear models only (LP or MILP); the result is a :class:`SolveResult` like
any other, with ``build_seconds`` the compile and hand-off and ``solve_seconds`` HiGHS's run.
"""

from __future__ import annotations

import logging
import math
import time

import highspy
import numpy as np
import pyomo.environ as pyo
from pyomo.repn.plugins.standard_form import LinearStandardFormCompiler

from clusteropt.solvers.pyomo_backend import variable_values
from clusteropt.solvers.result import NotOptimalError, SolveResult, Termination, settle

__all__ = ["solve_highs_direct"]

log = logging.getLogger(__name__)

_STATUS = {
    "kOptimal": Termination.OPTIMAL,
    "kInfeasible": Termination.INFEASIBLE,
    "kUnbounded": Termination.UNBOUNDED,
    "kUnboundedOrInfeasible": Termination.INFEASIBLE_OR_UNBOUNDED,
    "kTimeLimit": Termination.TIME_LIMIT,
    "kIterationLimit": Termination.ITERATION_LIMIT,
    "kSolutionLimit": Termination.FEASIBLE,
    "kObjectiveBound": Termination.FEASIBLE,
    "kObjectiveTarget": Termination.FEASIBLE,
}


def solve_highs_direct(model: pyo.ConcreteModel, *, time_limit: float | None = None, mip_gap: float | None = None,
                       threads: int | None = None, raise_on_nonoptimal: bool = True) -> SolveResult:
    """Solve a linear Pyomo model with HiGHS through its matrix (module docstring).

    Raises :class:`NotOptimalError` unless optimal (``raise_on_nonoptimal=False`` returns the
    result, with the incumbent loaded when there is one).

    >>> m = pyo.ConcreteModel()
    >>> m.x = pyo.Var(bounds=(0, 4)); m.y = pyo.Var(domain=pyo.Binary)
    >>> m.c = pyo.Constraint(expr=m.x + 3 * m.y <= 5)
    >>> m.obj = pyo.Objective(expr=m.x + 2 * m.y, sense=pyo.maximize)
    >>> r = solve_highs_direct(m)
    >>> r.termination.name, round(r.objective, 6), pyo.value(m.x), pyo.value(m.y)
    ('OPTIMAL', 4.0, 4.0, 0.0)
    """
    t0 = time.perf_counter()
    objs = list(model.component_data_objects(pyo.Objective, active=True))
    if len(objs) != 1:
        raise ValueError(f"model {model.name!r} has {len(objs)} active objectives; expected 1")
    obj = objs[0]
    repn = LinearStandardFormCompiler().write(model, mixed_form=True, set_sense=None)
    cols = repn.columns
    n = len(cols)
    lb = np.array([-highspy.kHighsInf if v.lb is None else v.lb for v in cols], dtype=float)
    ub = np.array([highspy.kHighsInf if v.ub is None else v.ub for v in cols], dtype=float)
    integer = np.array([v.is_integer() or v.is_binary() for v in cols], dtype=bool)
    c = np.asarray(repn.c.toarray()).ravel() if n else np.zeros(0)
    if c.size != n:
        c = np.zeros(n)
    a = repn.A.tocsr() if repn.A.shape[0] else None
    mult = np.array([r[1] for r in repn.rows], dtype=int)
    rhs = np.asarray(repn.rhs, dtype=float)
    row_lo = np.where(mult == 1, -highspy.kHighsInf, rhs)
    row_hi = np.where(mult == -1, highspy.kHighsInf, rhs)
    lp = highspy.HighsLp()
    lp.num_col_ = n
    lp.num_row_ = len(rhs)
    lp.col_cost_ = c
    lp.col_lower_ = lb
    lp.col_upper_ = ub
    lp.row_lower_ = row_lo
    lp.row_upper_ = row_hi
    lp.offset_ = float(repn.c_offset[0]) if len(repn.c_offset) else 0.0
    lp.sense_ = highspy.ObjSense.kMaximize if obj.sense == pyo.maximize else highspy.ObjSense.kMinimize
    if a is not None:
        lp.a_matrix_.format_ = highspy.MatrixFormat.kRowwise
        lp.a_matrix_.start_ = a.indptr
        lp.a_matrix_.index_ = a.indices
        lp.a_matrix_.value_ = a.data
    else:
        lp.a_matrix_.start_ = np.zeros(n + 1, dtype=np.int32)
    if integer.any():
        lp.integrality_ = [highspy.HighsVarType.kInteger if f else highspy.HighsVarType.kContinuous
                           for f in integer]
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    if time_limit is not None:
        h.setOptionValue("time_limit", float(time_limit))
    if mip_gap is not None:
        h.setOptionValue("mip_rel_gap", float(mip_gap))
    if threads is not None:
        h.setOptionValue("threads", int(threads))
    h.passModel(lp)
    t1 = time.perf_counter()
    h.run()
    t2 = time.perf_counter()
    status = h.getModelStatus()
    term = _STATUS.get(status.name, Termination.ERROR)
    info = h.getInfo()
    mip = bool(integer.any())
    has_solution = info.primal_solution_status == 2  # kSolutionStatusFeasible
    objective = bound = None
    if has_solution:
        x = np.asarray(h.getSolution().col_value)
        for v, val in zip(cols, x, strict=True):
            v.set_value(float(round(val)) if v.is_integer() or v.is_binary() else float(val), skip_validation=True)
        objective = float(info.objective_function_value)
        if mip:
            b = float(info.mip_dual_bound)
            bound = b if math.isfinite(b) else None
    term, bound, gap = settle(term, has_solution, objective, bound, mip=mip)
    result = SolveResult(termination=term, has_solution=has_solution, objective=objective, bound=bound, gap=gap,
                         values=variable_values(model) if has_solution else {}, solver="highs",
                         backend="pyomo", build_seconds=t1 - t0, solve_seconds=t2 - t1,
                         raw={"status": status.name, "route": "direct"})
    if raise_on_nonoptimal and term is not Termination.OPTIMAL:
        raise NotOptimalError(f"HiGHS (direct) stopped with {term.name} ({status.name}) on model {model.name!r}",
                              result)
    return result
