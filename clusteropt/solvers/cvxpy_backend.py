"""Solving CVXPY problems, classifying them, and reading them as linear programs for export.

Statuses are mapped through :data:`CVXPY_STATUS` (one table for the backend, ``UNKNOWN``
fallback).  CVXPY reports every user limit as ``user_limit`` and SCIP's time limit as
``optimal_inaccurate``, and in both cases it hands back whatever point the solver held, which
need not be feasible (HiGHS stopped mid-simplex, Clarabel or SCS mid-iteration).  Such a point
counts as a solution (``FEASIBLE``) only when it passes :func:`max_violation` at the solver's
feasibility tolerance (:data:`FEASIBILITY_TOL`); otherwise the result has no solution and says
``TIME_LIMIT`` (a time limit was set) or ``UNKNOWN``.  Every point is measured, a certified
optimal one too (a warning when it exceeds the tolerance): the result carries the measured
``max_violation`` and the ``feasibility_tol`` it was checked against, and its summary line says
``max violation 2.65e-05 (tolerance 1e-04)``.

SCIP goes through CVXPY's three documented steps with SCIP's own status read in between
(:func:`_solve_scip`), because CVXPY 1.9's SCIP interface mishandles its limits: the node and gap
limits without an incumbent raised ``KeyError: 'value'`` out of ``solve``, the solution and
stall-node limits dropped SCIP's incumbent as a solver error.  A SCIP limit without a point is
``TIME_LIMIT`` or ``ITERATION_LIMIT`` (:data:`SCIP_LIMITS`), with one it is checked like any
uncertified point.  One more correction: the "unbounded" of the conic solvers
(:data:`RAY_ONLY`) rests on a primal ray alone and is reported ``INFEASIBLE_OR_UNBOUNDED``.
Dual bounds of MILPs are read from the native solver statistics through :data:`BOUND_READERS`.
"""

from __future__ import annotations

import logging
import math
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import cvxpy as cp
import cvxpy.settings as cps
import numpy as np
import scipy.sparse as sp

from clusteropt.models.cvxpy_model import CvxpyModel
from clusteropt.solvers.registry import SolverSpec, library_errors
from clusteropt.solvers.result import (
    SolveResult,
    Termination,
    UnsuitableSolverError,
    settle,
)

log = logging.getLogger(__name__)

CVXPY_STATUS: dict[str, Termination] = {
    cp.OPTIMAL: Termination.OPTIMAL,
    cp.OPTIMAL_INACCURATE: Termination.FEASIBLE,
    cp.INFEASIBLE: Termination.INFEASIBLE,
    cp.INFEASIBLE_INACCURATE: Termination.INFEASIBLE,
    cp.UNBOUNDED: Termination.UNBOUNDED,
    cp.UNBOUNDED_INACCURATE: Termination.UNBOUNDED,
    cps.INFEASIBLE_OR_UNBOUNDED: Termination.INFEASIBLE_OR_UNBOUNDED,
    cp.USER_LIMIT: Termination.UNKNOWN,  # refined below: FEASIBLE / TIME_LIMIT
    cp.SOLVER_ERROR: Termination.ERROR,
}
"""CVXPY status string -> :class:`Termination`."""


FEASIBILITY_TOL: dict[str, float] = {"SCS": 1e-4}
"""Native name -> tolerance of :func:`max_violation` for a point the solver does not certify (and
the one every CVXPY result reports its measured violation against); ``DEFAULT_FEASIBILITY_TOL``
for the others.  HiGHS, SCIP and Gurobi accept a primal infeasibility of 1e-7 .. 1e-6 and
Clarabel stops at 1e-8 (on its scaled problem); SCS stops at ``eps_abs = eps_rel = 1e-4``."""

DEFAULT_FEASIBILITY_TOL = 1e-6

INTEGRALITY_TOL = 1e-5
"""Largest distance of an integer variable's value from an integer in an accepted point."""

SCIP_LIMITS: dict[str, Termination] = {
    "timelimit": Termination.TIME_LIMIT,
    **{status: Termination.ITERATION_LIMIT for status in (
        "nodelimit", "totalnodelimit", "stallnodelimit", "gaplimit", "sollimit", "bestsollimit", "restartlimit")},
}
"""SCIP's ``getStatus()`` for a user limit -> the termination of a stop there without a point (SCIP's
``SCIP_STATUS``: the time limit, and the work limits ``limits/nodes``, ``totalnodes``, ``stallnodes``,
``gap``, ``solutions``, ``bestsol``, ``restarts``); any other status without a point (``memlimit``,
``userinterrupt``, ``unknown``) is ``ERROR``, and so is a status CVXPY's SCIP interface cannot read
(the primal and dual limits, whose point it loses).  With a point, every limit is checked like any
uncertified point and is ``FEASIBLE`` when it passes."""

RAY_ONLY = frozenset({"SCS", "CLARABEL", "COPT"})
"""Solvers whose "unbounded" is a certificate of dual infeasibility (a primal ray) only: it proves
the problem infeasible *or* unbounded, not that a feasible point exists (COPT 8 reports
"unbounded" of an LP whose rows add up to ``0 >= 2``)."""


def max_violation(problem: cp.Problem, names: dict[int, str] | None = None) -> tuple[float, str]:
    """Largest scaled violation of ``problem``'s constraints at the variables' current values.

    Every constraint, every variable's domain (``nonneg``, ``bounds``, ...), integrality and
    ``boolean`` membership in {0, 1} are checked.  A constraint's violation is divided by
    ``1 + `` the largest magnitude among its sides, so the number is comparable with a solver's
    relative feasibility tolerance.  Returns ``(violation, what)`` where ``what`` names the worst
    constraint (by ``names``, constraint id -> name, where given; else its first 80 characters),
    or ``inf`` and the variable's name when a variable has no value.

    >>> x = cp.Variable(2, nonneg=True, name="x")
    >>> prob = cp.Problem(cp.Minimize(cp.sum(x)), [x[0] + x[1] >= 1])
    >>> x.value = np.array([0.25, 0.25])
    >>> max_violation(prob)
    (0.25, '1.0 <= x[0] + x[1]')
    >>> x.value = np.array([1.0, 0.0])
    >>> max_violation(prob)
    (0.0, '')
    """
    names = names or {}

    def label(con) -> str:
        if con.id in names:
            return names[con.id]
        text = str(con)
        return text if len(text) <= 80 else text[:77] + "..."

    worst, what = 0.0, ""
    for var in problem.variables():
        if var.value is None:
            return math.inf, var.name()
        value = np.asarray(var.value, dtype=float)
        if not np.isfinite(value).all():
            return math.inf, var.name()
        attrs = var.attributes
        if attrs.get("boolean") or attrs.get("integer"):
            frac = float(np.max(np.abs(value - np.round(value)), initial=0.0))
            if frac > INTEGRALITY_TOL:
                return math.inf, f"integrality of {var.name()}"
        if attrs.get("boolean"):
            out = float(np.max(np.maximum(-value, value - 1.0), initial=0.0))
            if out > worst:
                worst, what = out, f"{var.name()} in {{0, 1}}"
    for con in list(problem.constraints) + [c for v in problem.variables() for c in v.domain]:
        try:
            viol = np.asarray(con.violation(), dtype=float)
        except (ValueError, TypeError):  # no value for an argument, or a cone without a residual
            return math.inf, label(con)
        if viol.size == 0:
            continue
        sides = [np.abs(np.asarray(a.value, dtype=float)) for a in con.args if a.value is not None]
        scale = 1.0 + max((float(s.max(initial=0.0)) for s in sides), default=0.0)
        v = float(np.max(viol)) / scale
        if not math.isfinite(v):
            return math.inf, label(con)
        if v > worst:
            worst, what = v, label(con)
    return worst, what


def _highs_bound(stats: Any) -> tuple[float, float]:
    return float(stats.objective_function_value), float(stats.mip_dual_bound)


def _scip_bound(stats: Any) -> tuple[float, float]:
    model = stats["model"]
    return float(model.getObjVal()), float(model.getDualbound())


def _gurobi_bound(stats: Any) -> tuple[float, float]:
    return float(stats.ObjVal), float(stats.ObjBound)


def _copt_bound(stats: Any) -> tuple[float, float]:
    return float(stats.getAttr("BestObj")), float(stats.getAttr("BestBnd"))


BOUND_READERS: dict[str, Callable[[Any], tuple[float, float]]] = {
    "HIGHS": _highs_bound,
    "SCIP": _scip_bound,
    "GUROBI": _gurobi_bound,
    "COPT": _copt_bound,
}
"""Native name -> reader of (solver objective, solver dual bound) from ``solver_stats.extra_stats``.
CVXPY 1.9 hands over no statistics for CPLEX and Xpress: their CVXPY routes report no bound at a
limit (``Route.reports_bound``), their file and Pyomo routes do."""

CONE_NAMES = {
    "SOC": "second-order cone",
    "ExpCone": "exponential cone",
    "PSD": "positive semidefinite cone",
    "PowCone3D": "power cone",
    "PowConeND": "power cone",
}


def unwrap(model: cp.Problem | CvxpyModel) -> tuple[cp.Problem, dict[str, cp.Variable]]:
    """The ``cp.Problem`` and a name -> variable dict (the wrapper's names, else ``var.name()``)."""
    named: dict[str, cp.Variable]
    if isinstance(model, CvxpyModel):
        named = dict(model.variables)
        seen = {id(v) for v in named.values()}
        for v in model.problem.variables():
            if id(v) not in seen:
                named[_unique(named, v.name())] = v
        return model.problem, named
    named = {}
    for v in model.variables():
        named[_unique(named, v.name())] = v
    return model, named


def _unique(names: dict, name: str) -> str:
    if name not in names:
        return name
    k = 1
    while f"{name}_{k}" in names:
        k += 1
    return f"{name}_{k}"


def cone_names(problem: cp.Problem) -> list[str]:
    """Names of the non-linear cones CVXPY's conic canonicalization introduces (sorted)."""
    from cvxpy.reductions.dcp2cone.dcp2cone import Dcp2Cone
    from cvxpy.reductions.flip_objective import FlipObjective

    prob = problem
    if isinstance(prob.objective, cp.Maximize):
        prob, _ = FlipObjective().apply(prob)
    canon, _ = Dcp2Cone(quad_obj=False).apply(prob)
    return sorted({CONE_NAMES[type(c).__name__] for c in canon.constraints
                   if type(c).__name__ in CONE_NAMES})


def problem_class(problem: cp.Problem) -> str:
    """Registry problem class of a CVXPY problem: MILP, LP, QP, SOC, EXP_CONE or PSD."""
    if not problem.is_dcp():
        raise UnsuitableSolverError(
            "the CVXPY problem is not DCP (disciplined convex); no registered solver takes it. "
            "Check the curvature of the objective and constraints with problem.is_dcp()."
        )
    if problem.is_mixed_integer():
        return "MILP"
    if problem.is_lp():
        return "LP"
    if problem.is_qp():
        return "QP"
    cones = cone_names(problem)
    if "positive semidefinite cone" in cones:
        return "PSD"
    if "exponential cone" in cones or "power cone" in cones:
        return "EXP_CONE"
    return "SOC"


#: Keywords of ``cvxpy.Problem.solve`` itself: a native option of the same name cannot go beside them.
_CVXPY_SOLVE_KEYWORDS = ("solver", "verbose", "gp", "qcp", "requires_grad", "enforce_dpp", "ignore_dpp", "method",
                         "warm_start")


def _unclash(native_options: dict[str, Any], solver: str, name: str) -> dict[str, Any]:
    """Native options whose names are also keywords of ``Problem.solve`` (HiGHS's ``solver``,
    ``{"solver": "ipm"}``) go through CVXPY's ``highs_options`` dict, its way around the clash; for
    another solver such an option is refused with a ``ValueError`` naming it.
    """
    clash = [k for k in native_options if k in _CVXPY_SOLVE_KEYWORDS and k != "warm_start"]
    if not clash:
        return native_options
    if solver != cp.HIGHS:
        raise ValueError(f"native option(s) {', '.join(map(repr, clash))} of {name} share a name with a keyword "
                         "of cvxpy.Problem.solve and cannot be passed through CVXPY")
    out = {k: v for k, v in native_options.items() if k not in clash}
    out["highs_options"] = {**dict(native_options.get("highs_options") or {}),
                            **{k: native_options[k] for k in clash}}
    return out


def solve_cvxpy(
    model: cp.Problem | CvxpyModel,
    spec: SolverSpec,
    native_options: dict[str, Any],
    *,
    tee: bool = False,
    time_limit: float | None = None,
    mip: bool = False,
) -> SolveResult:
    """Solve with ``spec``'s CVXPY route; options are already translated to native names."""
    problem, named = unwrap(model)
    route = spec.route("cvxpy")
    if "canon_backend" not in native_options and any(v.ndim > 2 for v in problem.variables()):
        # CVXPY would pick this backend itself (its C++ one takes at most 2-d expressions) and warn on
        # stderr at every solve; choosing it here is the same canonicalization without the noise
        native_options = {**native_options, "canon_backend": cp.SCIPY_CANON_BACKEND}
    native_options = _unclash(native_options, route.native, spec.name)
    start = time.perf_counter()
    scip: str | None = None  # SCIP's own status, read between CVXPY's steps
    failure = ""  # the text of a CVXPY SolverError
    try:
        with warnings.catch_warnings():
            # CVXPY's "Solution may be inaccurate": such points are checked below instead
            warnings.filterwarnings("ignore", message="Solution may be inaccurate")
            if route.native == cp.SCIP:
                status, scip = _solve_scip(problem, native_options, tee)
            else:
                problem.solve(solver=route.native, verbose=tee, **native_options)
                status = problem.status
    except library_errors(spec) as exc:  # Xpress's licence limit comes through CVXPY as it is
        log.warning("%s failed on the CVXPY problem: %s", spec.name, exc)
        status = cp.SOLVER_ERROR
        failure = " ".join(str(exc).split())
    except cp.SolverError as exc:
        if "cannot solve" in str(exc):
            raise UnsuitableSolverError(f"{spec.name} cannot take this problem: {exc}") from exc
        log.warning("%s failed on the CVXPY problem: %s", spec.name, exc)
        status = cp.SOLVER_ERROR
        failure = " ".join(str(exc).split())
    total = time.perf_counter() - start
    unpacked = status not in (cp.SOLVER_ERROR, _NO_POINT, _UNREADABLE)
    # a solve CVXPY did not unpack leaves the previous solve's statistics (and values) in the problem
    stats = problem.solver_stats if unpacked else None
    solve_s = stats.solve_time if stats is not None and stats.solve_time is not None else None
    build_s = problem.compilation_time or 0.0
    if solve_s is None:
        solve_s = max(total - build_s, 0.0)

    term = CVXPY_STATUS.get(status, Termination.UNKNOWN)
    raw: dict[str, Any] = {"status": f"{status} ({failure})" if failure else status, "native": stats}
    if stats is not None and isinstance(stats.extra_stats, dict) and "scip_status" in stats.extra_stats:
        raw["status"] = f"{status} (scip: {stats.extra_stats['scip_status']})"
    if status == cp.UNBOUNDED and route.native in RAY_ONLY:
        term = Termination.INFEASIBLE_OR_UNBOUNDED
    if status == _NO_POINT:
        term = SCIP_LIMITS.get(scip or "", Termination.ERROR)
        raw["status"] = f"{scip} (scip), without a point"
    elif status == _UNREADABLE:
        term = Termination.ERROR
        raw["status"] = (f"{scip} (scip): a status CVXPY's SCIP interface cannot read; its point, if any, is "
                         "lost (drop the limit that ends so)")
    if status == cp.SOLVER_ERROR and time_limit is not None and total >= time_limit:
        # a solver error after the whole time limit: the limit without a point (CVXPY raised it)
        term = Termination.TIME_LIMIT
        raw["status"] = f"{status} (after {total:.3g} s of a {time_limit:g} s time limit)"
    has_solution = unpacked and status in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE, cp.USER_LIMIT) and all(
        v.value is not None for v in named.values()
    )
    tol: float | None = None
    violation: float | None = None
    if has_solution:
        # every point is measured (the summary shows it); an uncertified one is a solution only if it
        # is feasible at the solver's tolerance
        tol = FEASIBILITY_TOL.get(route.native, DEFAULT_FEASIBILITY_TOL)
        names = ({c.id: name for name in model.constraints for c in model.constraint_list(name)}
                 if isinstance(model, CvxpyModel) else None)
        violation, where = max_violation(problem, names)
        raw["max_violation"] = violation
        if violation > tol and status == cp.OPTIMAL:
            log.warning("%s reports optimal at a point that violates %s by %.3g (scaled; tolerance %g)",
                        spec.name, where or "a constraint", violation, tol)
        elif violation > tol:
            log.warning("%s stopped (%s) at a point that violates %s by %.3g (scaled; tolerance %g): "
                        "not a solution", spec.name, status, where or "a constraint", violation, tol)
            has_solution = False
            term = SCIP_LIMITS.get(scip or "", Termination.TIME_LIMIT if time_limit is not None
                                   else Termination.UNKNOWN)
            raw["status"] = f"{raw['status']} (point rejected: violation {violation:.3g} > {tol:g})"
    objective = float(problem.value) if has_solution and problem.value is not None else None
    if objective is not None and not math.isfinite(objective):
        has_solution, objective = False, None
    if term is Termination.UNKNOWN and not has_solution and time_limit is not None:
        term = Termination.TIME_LIMIT  # CVXPY's user_limit; time is the only limit solve() sets
    bound = _dual_bound(problem, route.native, stats, objective, term) if mip else None
    term, bound, gap = settle(term, has_solution, objective, bound, mip=mip)
    values = (
        {k: np.asarray(v.value, dtype=float) for k, v in named.items()} if has_solution else {}
    )
    labels, index_names = cvxpy_labels(model) if has_solution else ({}, {})
    return SolveResult(
        termination=term,
        has_solution=has_solution,
        objective=objective,
        bound=bound,
        gap=gap,
        values=values,
        solver=spec.name,
        backend="cvxpy",
        build_seconds=float(build_s),
        solve_seconds=float(solve_s),
        raw=raw,
        labels=labels,
        index_names=index_names,
        max_violation=violation,
        feasibility_tol=tol,
    )


def cvxpy_labels(model: cp.Problem | CvxpyModel) -> tuple[dict[str, list[tuple]], dict[str, tuple[str, ...]]]:
    """The keys and index-set names of the variables a :class:`CvxpyModel` indexes
    (``CvxpyModel.index``), for :class:`SolveResult`'s ``labels`` and ``index_names``; a bare problem
    has none (its values are labelled by position).
    """
    if not isinstance(model, CvxpyModel):
        return {}, {}
    labels: dict[str, list[tuple]] = {}
    names: dict[str, tuple[str, ...]] = {}
    for name in model.index:
        keys = model.index_keys(name)
        index_names = model.index_names(name)
        if keys is not None and index_names is not None:
            labels[name], names[name] = keys, index_names
    return labels, names


#: ``status`` of a SCIP solve that stopped without a point, not unpacked into the problem.
_NO_POINT = "no_point"
#: ``status`` of a SCIP solve whose status CVXPY's SCIP interface has no entry for (nothing unpacked).
_UNREADABLE = "unreadable_status"


def _solve_scip(problem: cp.Problem, options: dict[str, Any], tee: bool) -> tuple[str, str | None]:
    """``problem.solve(solver="SCIP", **options)`` as CVXPY's three documented steps
    (``get_problem_data``, ``SolvingChain.solve_via_data``, ``unpack_results``), with SCIP's own
    status read between the second and the third.  Returns ``(status, scip_status)``: CVXPY's
    status after unpacking, or :data:`_NO_POINT` when SCIP stopped without a point, or
    :data:`_UNREADABLE` (then nothing is unpacked: the problem keeps its earlier status and values,
    as after a CVXPY solver error); ``scip_status`` is None when SCIP was not called (a problem
    without variables).

    Why: CVXPY 1.9's SCIP interface (``scip_conif``) maps SCIP's node, total-node and gap limits to
    ``optimal_inaccurate`` whether or not SCIP holds a point, then reads the missing point's
    objective (``KeyError: 'value'`` out of ``solve``); it maps the solution, stall-node and restart
    limits to a solver error even when SCIP holds an incumbent (``Problem.solve`` then raises and
    drops it); and it has no entry for SCIP's primal and dual limits (``KeyError: 'primallimit'``
    from its status table, with the model and any point lost).  Here a point SCIP holds is
    unpacked under ``user_limit`` (and checked like every uncertified point), a stop without one
    is :data:`_NO_POINT`, and the KeyError of a status CVXPY's table lacks is caught only when it
    is raised inside that interface.
    """
    for param in problem.parameters():
        if param.value is None:  # as Problem.solve refuses it
            raise cp.error.ParameterError(f"parameter {param.name()!r} has no value; give every Parameter a value "
                                          "before solving")
    opts = dict(options)
    canon_backend = opts.pop("canon_backend", None)
    warm_start = bool(opts.pop("warm_start", True))  # Problem.solve's default
    data, chain, inverse = problem.get_problem_data(cp.SCIP, verbose=tee, canon_backend=canon_backend,
                                                    solver_opts=dict(opts))
    try:
        solution = chain.solve_via_data(problem, data, warm_start, tee, dict(opts))
    except KeyError as exc:
        if not (exc.args and isinstance(exc.args[0], str) and _raised_in_scip_interface(exc)):
            raise
        return _UNREADABLE, exc.args[0]  # a SCIP status CVXPY's table lacks
    if not isinstance(solution, dict):  # a chain that never reached SCIP (no variables: CVXPY evaluates it)
        problem.unpack_results(solution, chain, inverse)
        return problem.status, None
    scip = str(solution.get("scip_status", "unknown"))
    point = "primal" in solution
    if not point and solution["status"] in (*cps.SOLUTION_PRESENT, *cps.ERROR):
        return _NO_POINT, scip
    if point and solution["status"] in cps.ERROR:
        solution["status"] = cp.USER_LIMIT  # a limit that stopped SCIP at an incumbent
    problem.unpack_results(solution, chain, inverse)
    return problem.status, scip


def _raised_in_scip_interface(exc: BaseException) -> bool:
    """Whether ``exc`` was raised in CVXPY's SCIP interface module (``scip_conif.py``) itself."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    return tb is not None and tb.tb_frame.f_code.co_filename.endswith("scip_conif.py")


def _dual_bound(problem, native, stats, objective, term) -> float | None:
    """Dual bound of a MILP in the model's own sense, from the native solver statistics."""
    if objective is None:
        return None
    reader = BOUND_READERS.get(native)
    if reader is None or stats is None or stats.extra_stats is None:
        return objective if term is Termination.OPTIMAL else None
    try:
        solver_obj, solver_bound = reader(stats.extra_stats)
    except Exception:
        log.debug("could not read the dual bound of %s", native, exc_info=True)
        return objective if term is Termination.OPTIMAL else None
    if not math.isfinite(solver_bound):
        return None
    # the solver minimizes c'x; the model's objective is sign * (c'x + offset)
    sign = -1.0 if isinstance(problem.objective, cp.Maximize) else 1.0
    offset = sign * objective - solver_obj
    return sign * (solver_bound + offset)


# ---------------------------------------------------------------------------------------------
# linear CVXPY problems as matrices (for LP / MPS export)


@dataclass(frozen=True)
class LinearForm:
    """``sense * (c'x + offset)`` subject to ``row_lower <= A x <= row_upper``, bounds on x."""

    maximize: bool
    c: np.ndarray
    offset: float
    A: sp.csc_array
    row_lower: np.ndarray
    row_upper: np.ndarray
    col_lower: np.ndarray
    col_upper: np.ndarray
    integer: np.ndarray
    col_names: list[str]
    row_names: list[str]


def linear_form(model: cp.Problem | CvxpyModel) -> LinearForm:
    """Read a linear / mixed-integer-linear CVXPY problem as matrices with readable names.

    Columns are named ``x(i_j)`` after the variable and its index (auxiliary columns that
    CVXPY introduces are ``aux_k``); rows are named after the wrapper's constraint names
    (``cap(0)``) or ``c<k>(i)`` for unnamed constraints, ``aux_r<k>`` for CVXPY's own rows.

    Raises
    ------
    UnsuitableSolverError
        If the problem needs a non-linear cone (named in the message) or a quadratic objective.
    """
    problem, named = unwrap(model)
    cls = problem_class(problem)
    if cls not in ("LP", "MILP"):
        cones = cone_names(problem) if cls != "QP" else []
        what = ", ".join(cones) if cones else "a quadratic objective"
        raise UnsuitableSolverError(
            f"cannot write this CVXPY problem as LP/MPS: it needs {what}; only linear and "
            "mixed-integer linear problems can be exported (solve it with clarabel or scs)"
        )
    data, _chain, inverse = problem.get_problem_data(cp.HIGHS)
    pp = data["param_prob"]
    c, d, A, b = pp.apply_parameters()
    stuffing = inverse[-2]
    n = int(stuffing.x_length)
    # ConeMatrixStuffing gives A x + b in K (K = zero cone, then nonnegative orthant), that is
    # (-A) x = b on the first dims.zero rows and (-A) x <= b on the rest
    A = -sp.csc_array(A)
    maximize = isinstance(problem.objective, cp.Maximize)
    sign = -1.0 if maximize else 1.0
    n_eq = int(data["dims"].zero)
    m = A.shape[0]
    row_lower = np.full(m, -np.inf)
    row_upper = np.asarray(b, dtype=float).copy()
    row_lower[:n_eq] = row_upper[:n_eq]
    lb = data.get("lower_bounds")
    ub = data.get("upper_bounds")
    col_lower = np.full(n, -np.inf) if lb is None else np.asarray(lb, dtype=float)
    col_upper = np.full(n, np.inf) if ub is None else np.asarray(ub, dtype=float)
    integer = np.zeros(n, dtype=bool)
    for key in ("int_vars_idx", "bool_vars_idx"):
        integer[list(data.get(key, []))] = True
    for i in data.get("bool_vars_idx", []):
        col_lower[i] = max(col_lower[i], 0.0)
        col_upper[i] = min(col_upper[i], 1.0)

    col_names = [f"aux_col{k}" for k in range(n)]
    by_id = {v.id: name for name, v in named.items()}
    for vid, offset in stuffing.var_offsets.items():
        shape = stuffing.var_shapes[vid]
        base = by_id.get(vid, f"aux_{vid}")
        for k in range(math.prod(shape)):
            col_names[offset + k] = _label(base, k, shape)

    row_names = _row_names(model, problem, pp, inverse)
    return LinearForm(
        maximize=maximize,
        c=sign * np.asarray(c, dtype=float)[:n],
        offset=float(sign * d),
        A=A,
        row_lower=row_lower,
        row_upper=row_upper,
        col_lower=col_lower,
        col_upper=col_upper,
        integer=integer,
        col_names=col_names,
        row_names=row_names,
    )


def _label(base: str, flat: int, shape: tuple) -> str:
    # CVXPY stacks a variable's entries in column-major (Fortran) order
    if not shape:
        return base
    idx = np.unravel_index(flat, shape, order="F")
    return f"{base}({'_'.join(str(int(i)) for i in idx)})"


def _row_names(model, problem, pp, inverse) -> list[str]:
    given: dict[int, str] = {}
    if isinstance(model, CvxpyModel):
        for name in model.constraints:
            for k, con in enumerate(model.constraint_list(name)):
                multi = len(model.constraint_list(name)) > 1
                given[con.id] = f"{name}_{k}" if multi else name
    for k, con in enumerate(problem.constraints):
        given.setdefault(con.id, f"c{k}")
    # ids survive the chain except where a reduction maps them: follow cons_id_map
    forward: dict[int, int] = {}
    for inv in inverse:
        cmap = getattr(inv, "cons_id_map", None)
        if cmap:
            for old, new in cmap.items():
                forward[old] = new
    final_name = {forward.get(cid, cid): name for cid, name in given.items()}
    names: list[str] = []
    for con in pp.constraints:
        base = final_name.get(con.id, f"aux_r{con.id}")
        size = int(np.prod(con.shape)) if con.shape else 1
        names.extend(base if size == 1 else f"{base}({i})" for i in range(size))
    return names
