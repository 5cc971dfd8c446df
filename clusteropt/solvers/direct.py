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

:func:`run_highs` is that hand-off (arrays -> ``Highs.passModel`` -> ``run``), shared with fast paths
that build a model's matrices themselves (:mod:`clusteropt.models.gadget.matrix`): the same arrays
give HiGHS the same input, whichever route built them.
"""

from __future__ import annotations

import logging
import math
import time

import highspy
import numpy as np
import pyomo.environ as pyo
import scipy.sparse as sp
from pyomo.repn.plugins.standard_form import LinearStandardFormCompiler

from clusteropt.solvers.highs import new_highs, run_live
from clusteropt.solvers.pyomo_backend import variable_index_names, variable_labels, variable_values
from clusteropt.solvers.result import NotOptimalError, SolveResult, Termination, settle

__all__ = ["WarmHighs", "highs_termination", "run_highs", "solve_highs_direct"]

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


def run_highs(cost, col_lower, col_upper, a, row_lower, row_upper, *, maximize: bool, offset: float = 0.0,
              integer=None, options=None, time_limit: float | None = None, mip_gap: float | None = None,
              threads: int | None = None, run: bool = True) -> tuple[highspy.Highs, float, float]:
    """Hand an LP / MILP given as arrays to a fresh, silent :class:`highspy.Highs` and run it.

    ``a`` is a scipy sparse matrix (rows x columns; passed column-wise, canonical); bounds use
    ``+-inf`` for none; ``integer`` flags integer columns; ``options`` maps HiGHS option names to
    values (e.g. ``{"simplex_strategy": 4}``: primal simplex).  The arrays go through
    ``Highs.passModel``'s array form, one copy each.

    Returns ``(highs, pass_seconds, run_seconds)``.  An option HiGHS rejects raises ``ValueError``.
    ``run=False`` only passes the model (``run_seconds`` 0), e.g. to set a starting basis first.
    """
    t0 = time.perf_counter()
    opts = dict(options or {})
    if time_limit is not None:
        opts["time_limit"] = float(time_limit)
    if mip_gap is not None:
        opts["mip_rel_gap"] = float(mip_gap)
    h = new_highs(threads=threads, options=opts)  # the thread pool readied, the banner silenced
    n, m = len(cost), len(row_lower)
    if a is None or not m:
        a = sp.csc_array((m, n))
    a = sp.csc_array(a)
    a.sum_duplicates()  # canonical: sorted row indices, no duplicates
    # highspy's array form always reads an integrality array (an empty one is read past its end);
    # all kContinuous is an LP (HiGHS only notes it in its log when logging is on)
    integrality = np.zeros(n, dtype=np.int32)
    if integer is not None:
        integrality[np.asarray(integer, dtype=bool)] = int(highspy.HighsVarType.kInteger)
    sense = highspy.ObjSense.kMaximize if maximize else highspy.ObjSense.kMinimize
    status = h.passModel(n, m, int(a.nnz), int(highspy.MatrixFormat.kColwise), int(sense), float(offset),
                         np.ascontiguousarray(cost, dtype=np.float64),
                         np.ascontiguousarray(col_lower, dtype=np.float64),
                         np.ascontiguousarray(col_upper, dtype=np.float64),
                         np.ascontiguousarray(row_lower, dtype=np.float64),
                         np.ascontiguousarray(row_upper, dtype=np.float64),
                         a.indptr.astype(np.int32), a.indices.astype(np.int32),
                         np.ascontiguousarray(a.data, dtype=np.float64), integrality)
    if status == highspy.HighsStatus.kError:
        raise ValueError(f"HiGHS rejected the model ({n} columns, {m} rows): passModel returned kError")
    t1 = time.perf_counter()
    if not run:
        return h, t1 - t0, 0.0
    h.run()
    t2 = time.perf_counter()
    return h, t1 - t0, t2 - t1


def mapped_basis(old: highspy.HighsBasis, old_cols, old_rows, new_cols, new_rows, col_lower) -> highspy.HighsBasis:
    """A starting basis for a new LP from the optimal basis of an old one, matched by key.

    A column or row whose key the old LP had keeps its old status; a new column starts nonbasic
    at its lower bound (``kZero`` when it has none), a new row with its slack basic.  The counts
    need not add up (a column or row left out removes its status), so the basis is marked
    *alien*: HiGHS completes it to a valid basis before its simplex starts.
    """
    col_at = {k: i for i, k in enumerate(old_cols)}
    row_at = {k: i for i, k in enumerate(old_rows)}
    lower_status = [highspy.HighsBasisStatus.kLower if math.isfinite(lo) else highspy.HighsBasisStatus.kZero
                    for lo in np.asarray(col_lower, dtype=float).tolist()]
    old_col, old_row = list(old.col_status), list(old.row_status)
    basis = highspy.HighsBasis()
    basis.col_status = [old_col[col_at[k]] if k in col_at else lower_status[j] for j, k in enumerate(new_cols)]
    basis.row_status = [old_row[row_at[k]] if k in row_at else highspy.HighsBasisStatus.kBasic for k in new_rows]
    basis.alien = True
    basis.valid = True
    return basis


def _listed(keys) -> list:
    """``keys`` as a list: called first when it is a function (:meth:`WarmHighs.solve`)."""
    return list(keys() if callable(keys) else keys)


class WarmHighs:
    """One live HiGHS model re-solved across a sequence of LPs (an online run's slots).

    :meth:`solve` compares the LP it is given with the one it holds: the same sense, options,
    shape and constraint matrix (pattern and values) make it a *warm* solve, which changes the
    costs and the column and row bounds that differ (``changeColsCost``, ``changeColsBounds``,
    ``changeRowsBounds``) and runs again from the previous basis; anything else goes into a fresh
    model (:func:`run_highs`), which is then kept: a *mapped* start from the previous basis when
    the caller names the columns and rows (``col_keys``, ``row_keys``), else a *cold* one.  All
    solve the same LP, so they reach the same optimal value; where the LP has several optima they
    may return different optimal points.  ``warm_solves`` / ``mapped_solves`` / ``cold_solves``
    count them.  LPs only (no integers).

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> w = WarmHighs()
    >>> a = sp.csc_array(np.array([[1.0, 1.0]]))
    >>> for cost in ([1.0, 2.0], [2.0, 1.0]):
    ...     h, _, _, warm = w.solve(np.array(cost), np.zeros(2), np.ones(2), a, np.array([-np.inf]),
    ...                             np.array([1.0]), maximize=True)
    ...     print(warm, h.getInfo().objective_function_value)
    False 2.0
    True 2.0
    """

    def __init__(self) -> None:
        self.highs: highspy.Highs | None = None
        self._key: tuple | None = None
        self._arrays: tuple[np.ndarray, ...] = ()
        self._labels: tuple[list, list] | None = None
        self.warm_solves = 0
        self.cold_solves = 0
        self.mapped_solves = 0
        #: How the last LP was solved: ``"warm"`` (same structure), ``"mapped"`` (a new structure
        #: started from the held basis matched by key) or ``"cold"``.
        self.last_kind = "cold"

    def solve(self, cost, col_lower, col_upper, a, row_lower, row_upper, *, maximize: bool, options=None,
              time_limit: float | None = None, col_keys=None,
              row_keys=None) -> tuple[highspy.Highs, float, float, bool]:
        """Solve the LP warm when its structure is the held one's, else start it from the held basis.

        A new structure (jobs arrived or left) is passed to a fresh model; with ``col_keys`` and
        ``row_keys`` (a hashable per column / row naming it across LPs, e.g. the Pyomo index, or a
        function returning them: it is called only when a mapped start needs them, so a warm
        re-solve never lists them) and an optimal basis held, that model starts from the held basis matched by key
        (:func:`mapped_basis`) instead of from scratch: kept columns and rows keep their
        statuses.  Returns ``(highs, change_seconds, run_seconds, warm)``: the hand-off
        (``passModel`` and the basis, or the changed costs and bounds) and HiGHS's run, ``warm``
        True for a warm or mapped start (:attr:`last_kind` says which).
        """
        cost = np.ascontiguousarray(cost, dtype=np.float64)
        lo, hi = (np.ascontiguousarray(v, dtype=np.float64) for v in (col_lower, col_upper))
        rlo, rhi = (np.ascontiguousarray(v, dtype=np.float64) for v in (row_lower, row_upper))
        n, m = cost.size, rlo.size
        mat = sp.csc_array((m, n)) if a is None or not m else sp.csc_array(a)
        mat.sum_duplicates()
        key = (bool(maximize), tuple(sorted((options or {}).items())), time_limit, n, m)
        same = (self.highs is not None and key == self._key
                and all(np.array_equal(x, y) for x, y in zip(self._arrays[:3], (mat.indptr, mat.indices, mat.data),
                                                              strict=True)))
        if not same:
            basis = None
            labels, prev = self._labels, self.highs
            if (col_keys is not None and row_keys is not None and labels is not None and prev is not None
                    and self._key is not None and key[:2] == self._key[:2]
                    and prev.getModelStatus() == highspy.HighsModelStatus.kOptimal):
                t0 = time.perf_counter()
                old_basis = prev.getBasis()
                if old_basis.valid:
                    basis = mapped_basis(old_basis, _listed(labels[0]), _listed(labels[1]), _listed(col_keys),
                                         _listed(row_keys), lo)
                map_s = time.perf_counter() - t0
            h, pass_s, _ = run_highs(cost, lo, hi, mat, rlo, rhi, maximize=maximize, options=options,
                                     time_limit=time_limit, run=False)
            if basis is not None:
                pass_s += map_s
            start = basis is not None
            if basis is not None:
                t0 = time.perf_counter()
                if h.setBasis(basis) != highspy.HighsStatus.kOk:
                    start = False  # HiGHS refused it: solve from scratch
                pass_s += time.perf_counter() - t0
            t1 = time.perf_counter()
            run_live(h)
            run_s = time.perf_counter() - t1
            self.highs, self._key = h, key
            self._arrays = (mat.indptr.copy(), mat.indices.copy(), mat.data.copy(), cost, lo, hi, rlo, rhi)
            self._labels = None if col_keys is None or row_keys is None else (col_keys, row_keys)
            if not start:
                self.cold_solves += 1
                self.last_kind = "cold"
                return h, pass_s, run_s, False
            self.mapped_solves += 1
            self.last_kind = "mapped"
            return h, pass_s, run_s, True
        held = self.highs
        assert held is not None  # same: a model is held
        t0 = time.perf_counter()
        old_cost, old_lo, old_hi, old_rlo, old_rhi = self._arrays[3:]
        idx = np.flatnonzero(cost != old_cost).astype(np.int32)
        if idx.size:
            held.changeColsCost(int(idx.size), idx, cost[idx])
        idx = np.flatnonzero((lo != old_lo) | (hi != old_hi)).astype(np.int32)
        if idx.size:
            held.changeColsBounds(int(idx.size), idx, lo[idx], hi[idx])
        idx = np.flatnonzero((rlo != old_rlo) | (rhi != old_rhi)).astype(np.int32)
        if idx.size:  # changeRowsBounds is in highspy but missing from its type stubs
            held.changeRowsBounds(int(idx.size), idx, rlo[idx], rhi[idx])  # type: ignore[attr-defined]
        self._arrays = (*self._arrays[:3], cost, lo, hi, rlo, rhi)
        t1 = time.perf_counter()
        run_live(held)
        t2 = time.perf_counter()
        self.warm_solves += 1
        self.last_kind = "warm"
        if col_keys is not None and row_keys is not None:
            self._labels = (col_keys, row_keys)
        return held, t1 - t0, t2 - t1, True


def highs_termination(h: highspy.Highs) -> tuple[Termination, str]:
    """HiGHS's model status as a :class:`Termination` and its own name."""
    status = h.getModelStatus()
    return _STATUS.get(status.name, Termination.ERROR), status.name


def solve_highs_direct(model: pyo.ConcreteModel, *, time_limit: float | None = None, mip_gap: float | None = None,
                       threads: int | None = None, raise_on_nonoptimal: bool = True,
                       options=None) -> SolveResult:
    """Solve a linear Pyomo model with HiGHS through its matrix (module docstring).

    ``options``: further HiGHS options (:func:`run_highs`), e.g. the algorithm.  Raises
    :class:`NotOptimalError` unless optimal (``raise_on_nonoptimal=False`` returns the result,
    with the incumbent loaded when there is one).

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
    a = repn.A if repn.A.shape[0] else None
    mult = np.array([r[1] for r in repn.rows], dtype=int)
    rhs = np.asarray(repn.rhs, dtype=float)
    row_lo = np.where(mult == 1, -highspy.kHighsInf, rhs)
    row_hi = np.where(mult == -1, highspy.kHighsInf, rhs)
    t_lp = time.perf_counter()
    h, pass_s, run_s = run_highs(c, lb, ub, a, row_lo, row_hi, maximize=obj.sense == pyo.maximize,
                                 offset=float(repn.c_offset[0]) if len(repn.c_offset) else 0.0, integer=integer,
                                 options=options, time_limit=time_limit, mip_gap=mip_gap, threads=threads)
    term, status = highs_termination(h)
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
                         backend="pyomo", build_seconds=t_lp - t0 + pass_s, solve_seconds=run_s,
                         raw={"status": status, "route": "direct"},
                         labels=variable_labels(model) if has_solution else {},
                         index_names=variable_index_names(model) if has_solution else {})
    if raise_on_nonoptimal and term is not Termination.OPTIMAL:
        raise NotOptimalError(f"HiGHS (direct) stopped with {term.name} ({status}) on model {model.name!r}",
                              result)
    return result
