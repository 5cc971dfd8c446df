"""Solving Pyomo ``ConcreteModel`` objects: the new ``contrib.solver`` interfaces and legacy shells.

HiGHS, SCIP and Gurobi go through Pyomo's newest (``pyomo.contrib.solver``) interfaces, which are
persistent: the same solver object re-solves a model after parameters or bounds change, handing
over only the changes (used by :class:`clusteropt.solvers.PersistentSolver`).  CPLEX and Xpress go
through Pyomo's classic direct interfaces (``cplex_direct``, ``xpress_direct``: their Python APIs,
no persistent re-solves), CBC and GLPK through its classic executable shells.  Native statuses are
mapped through one table per interface family (:data:`CONTRIB_STATUS`, :data:`LEGACY_STATUS`) with
``UNKNOWN`` as the fallback.
"""

from __future__ import annotations

import logging
import math
import re
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import pyomo.environ as pyo
from pyomo.common.timing import HierarchicalTimer
from pyomo.contrib.solver.common.factory import SolverFactory as ContribFactory
from pyomo.contrib.solver.common.results import SolutionStatus
from pyomo.contrib.solver.common.results import TerminationCondition as TC
from pyomo.opt import TerminationCondition as LTC

from clusteropt.solvers.registry import SolverSpec, library_errors
from clusteropt.solvers.result import NO_SOLUTION, SolveResult, Termination, settle

log = logging.getLogger(__name__)

CONTRIB_STATUS: dict[Any, Termination] = {
    TC.convergenceCriteriaSatisfied: Termination.OPTIMAL,
    TC.maxTimeLimit: Termination.TIME_LIMIT,
    TC.iterationLimit: Termination.ITERATION_LIMIT,
    TC.objectiveLimit: Termination.FEASIBLE,
    TC.unbounded: Termination.UNBOUNDED,
    TC.provenInfeasible: Termination.INFEASIBLE,
    TC.locallyInfeasible: Termination.INFEASIBLE,
    TC.infeasibleOrUnbounded: Termination.INFEASIBLE_OR_UNBOUNDED,
    TC.error: Termination.ERROR,
    TC.licensingProblems: Termination.ERROR,
    TC.interrupted: Termination.ERROR,
}
"""``pyomo.contrib.solver`` termination condition -> :class:`Termination`."""

LEGACY_STATUS: dict[Any, Termination] = {
    LTC.optimal: Termination.OPTIMAL,
    LTC.globallyOptimal: Termination.OPTIMAL,
    LTC.locallyOptimal: Termination.OPTIMAL,
    LTC.feasible: Termination.FEASIBLE,
    LTC.maxTimeLimit: Termination.TIME_LIMIT,
    LTC.maxIterations: Termination.ITERATION_LIMIT,
    LTC.maxEvaluations: Termination.ITERATION_LIMIT,
    LTC.infeasible: Termination.INFEASIBLE,
    LTC.unbounded: Termination.UNBOUNDED,
    LTC.infeasibleOrUnbounded: Termination.INFEASIBLE_OR_UNBOUNDED,
    LTC.error: Termination.ERROR,
    LTC.solverFailure: Termination.ERROR,
    LTC.internalSolverError: Termination.ERROR,
}
"""Classic ``pyomo.opt`` termination condition (CBC, GLPK shells) -> :class:`Termination`."""


def is_mip(model: pyo.ConcreteModel) -> bool:
    """Whether an active, unfixed variable of ``model`` is integer or binary."""
    return any(
        (v.is_integer() or v.is_binary()) and not v.fixed
        for v in model.component_data_objects(pyo.Var, active=True, descend_into=True)
    )


def _objective(model: pyo.ConcreteModel) -> pyo.Objective:
    objs = list(model.component_data_objects(pyo.Objective, active=True, descend_into=True))
    if len(objs) != 1:
        raise ValueError(f"model has {len(objs)} active objectives; expected exactly 1")
    return objs[0]


def variable_values(model: pyo.ConcreteModel) -> dict[str, np.ndarray]:
    """Current values of every variable component as numpy arrays (NaN where unset).

    Indexed variables over a dense product of sets get one axis per set (in the sets' order);
    anything else gets one axis in the component's index order.
    """
    out: dict[str, np.ndarray] = {}
    for comp in model.component_objects(pyo.Var, active=True, descend_into=True):
        vals = np.array(
            # + 0.0: a solver's -0.0 (CPLEX) reads as 0.0
            [np.nan if v.value is None else float(v.value) + 0.0 for v in comp.values()], dtype=float
        )
        if not comp.is_indexed():
            out[comp.name] = vals.reshape(())
            continue
        shape = _dense_shape(comp)
        out[comp.name] = vals.reshape(shape) if shape else vals
    return out


def variable_labels(model: pyo.ConcreteModel) -> dict[str, list[tuple]]:
    """Each indexed variable's index keys (tuples), in the order of its flattened
    :func:`variable_values` (the component's own order, which the dense reshape keeps).
    """
    return {comp.name: [k if isinstance(k, tuple) else (k,) for k in comp.keys()]
            for comp in model.component_objects(pyo.Var, active=True, descend_into=True) if comp.is_indexed()}


def variable_index_names(model: pyo.ConcreteModel) -> dict[str, tuple[str, ...]]:
    """Each indexed variable's index-set names, one per part of its keys (:func:`variable_labels`):
    ``y`` over ``m.I * m.S`` gives ``("I", "S")``; a set of pairs ``P`` gives ``("P.0", "P.1")``.
    Variables over a set of unknown or mixed dimension get none.

    >>> m = pyo.ConcreteModel()
    >>> m.I, m.S = pyo.RangeSet(0, 1), pyo.Set(initialize=["a", "b"])
    >>> m.y = pyo.Var(m.I, m.S)
    >>> variable_index_names(m)
    {'y': ('I', 'S')}
    """
    out: dict[str, tuple[str, ...]] = {}
    for comp in model.component_objects(pyo.Var, active=True, descend_into=True):
        if not comp.is_indexed():
            continue
        index = comp.index_set()
        subsets = list(index.subsets()) if hasattr(index, "subsets") else [index]
        names: list[str] = []
        for sub in subsets:
            dimen = getattr(sub, "dimen", None)
            if not isinstance(dimen, int) or dimen < 1:
                break
            names += [sub.local_name] if dimen == 1 else [f"{sub.local_name}.{j}" for j in range(dimen)]
        else:
            out[comp.name] = tuple(names)
    return out


def _dense_shape(comp) -> tuple[int, ...] | None:
    index = comp.index_set()
    subsets = list(index.subsets()) if hasattr(index, "subsets") else [index]
    if len(subsets) < 2:
        return None
    try:
        sizes = tuple(len(s) for s in subsets)
    except (TypeError, ValueError):
        return None
    if math.prod(sizes) != len(comp) or len(comp) != len(index):
        return None
    return sizes


def uses_contrib(route_native: str) -> bool:
    """Whether the native name belongs to a ``pyomo.contrib.solver`` interface."""
    return route_native in ContribFactory


def make_contrib_solver(native: str):
    """A fresh ``pyomo.contrib.solver`` object (persistent when ``native`` names one)."""
    return ContribFactory(native)


#: Top-level keys of the native options of a Pyomo route: the solver's Pyomo config and its own options.
NATIVE_KEYS = ("config", "solver_options")


def _highs_option_known(name: str) -> bool:
    import highspy

    from clusteropt.solvers.highs import quiet_banner

    quiet_banner()
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)  # an unknown name is otherwise reported on stdout
    return h.getOptionType(name)[0] == highspy.HighsStatus.kOk


def _highs_option_names() -> list[str]:
    import highspy

    from clusteropt.solvers.highs import quiet_banner

    quiet_banner()
    return [a for a in dir(highspy.Highs().getOptions()) if not a.startswith("_")]


def _scip_option_names() -> list[str]:
    import pyscipopt

    return list(pyscipopt.Model().getParams())


def _closest(name: str, names) -> str:
    import difflib

    close = difflib.get_close_matches(name, list(names), n=1, cutoff=0.6)
    return f"; did you mean {close[0]!r}?" if close else ""


def check_native_options(native: str, options: dict[str, Any], config_keys=None) -> None:
    """Refuse native options a Pyomo route would silently ignore: a top-level key other than
    :data:`NATIVE_KEYS`, a ``config`` key the solver's Pyomo config lacks (``config_keys``), and a
    ``solver_options`` name that HiGHS or SCIP does not know (each lists its options; other
    solvers' names are passed on unchecked).  The message names the option and the closest valid
    name.
    """
    unknown = [k for k in options if k not in NATIVE_KEYS]
    if unknown:
        raise ValueError(f"native option(s) {', '.join(map(repr, unknown))} for {native} (Pyomo): the native "
                         "options of a Pyomo route are 'config' (the solver's Pyomo config, e.g. time_limit, "
                         "threads, rel_gap) and 'solver_options' (the solver's own, e.g. {'solver': 'ipm'} "
                         "for HiGHS)")
    if config_keys is not None:
        for key in options.get("config", {}):
            if key not in config_keys:
                raise ValueError(f"config option {key!r} is not one of {native}'s Pyomo config"
                                 f"{_closest(key, config_keys)} (it has {', '.join(sorted(config_keys))})")
    solver_options = options.get("solver_options", {})
    if native.startswith("highs") or native in ("appsi_highs",):
        for key in solver_options:
            if not _highs_option_known(key):
                raise ValueError(f"solver option {key!r} is not a HiGHS option"
                                 f"{_closest(key, _highs_option_names())}")
    elif native.startswith("scip"):
        names = set(_scip_option_names()) if solver_options else set()
        for key in solver_options:
            if key not in names:
                raise ValueError(f"solver option {key!r} is not a SCIP parameter{_closest(key, names)}")


def solve_pyomo(
    model: pyo.ConcreteModel,
    spec: SolverSpec,
    native_options: dict[str, Any],
    *,
    tee: bool = False,
    time_limit: float | None = None,
    solver_object=None,
) -> tuple[SolveResult, Any]:
    """Solve ``model`` with ``spec``'s Pyomo route; returns the result and the solver object.

    ``native_options`` are already translated by :func:`clusteropt.solvers.solve`.  Passing the
    ``solver_object`` returned by an earlier call re-solves through the same persistent
    interface, which hands over only what changed.
    """
    route = spec.route("pyomo")
    obj = _objective(model)
    mip = is_mip(model)
    native = route.native
    if route.linear_only and solver_object is None and _nonlinear_objective(obj):
        # e.g. Pyomo 6.10's gurobi_direct compiles a standard (linear) form and refuses a quadratic
        # objective, which its persistent interface takes
        native = route.persistent or native
    if solver_object is not None or uses_contrib(native):
        opt = solver_object if solver_object is not None else make_contrib_solver(native)
        check_native_options(native, native_options, set(opt.config.keys()))
        return _solve_contrib(model, spec, native, native_options, tee, obj, mip, opt)
    check_native_options(native, native_options)
    return _solve_legacy(model, spec, native, native_options, tee, time_limit, obj, mip), None


def _nonlinear_objective(obj: pyo.Objective) -> bool:
    from pyomo.core.expr.visitor import polynomial_degree

    degree = polynomial_degree(obj.expr)
    return degree is None or degree > 1


def _solve_contrib(model, spec, native, options, tee, obj, mip, opt):
    opt = opt if opt is not None else make_contrib_solver(native)
    timer = HierarchicalTimer()
    config = dict(options.get("config", {}))
    solver_options = dict(options.get("solver_options", {}))
    start = time.perf_counter()
    try:
        res = opt.solve(
            model,
            tee=tee,
            load_solutions=False,
            raise_exception_on_nonoptimal_result=False,
            timer=timer,
            solver_options=solver_options,
            **config,
        )
    except Exception as exc:
        if not (native.startswith("scip") or isinstance(exc, library_errors(spec))):
            raise
        # PySCIPOpt raises a bare Exception when SCIP itself fails ("SCIP: error in LP solver!",
        # e.g. on coefficients near its numerics/hugeval 1e15), gurobipy a GurobiError ("Model too
        # large for size-limited license"): a solver error, not a traceback
        total = time.perf_counter() - start
        text = " ".join(str(exc).split())
        log.warning("%s failed on the Pyomo model: %s", spec.name, text)
        return _finish(model, spec, Termination.ERROR, False, None, None, mip, build_s=total, solve_s=0.0,
                       raw={"status": f"error: {text}"}), opt
    total = time.perf_counter() - start
    try:
        solve_s = float(timer.get_total_time("optimize"))
    except (KeyError, AttributeError):
        solve_s = total
    term = CONTRIB_STATUS.get(res.termination_condition, Termination.UNKNOWN)
    refused = _highs_refused_rows(opt) if native == "highs" else None
    if refused is not None:  # HiGHS solved another model than Pyomo handed over: no answer to this one
        log.warning("HiGHS: %s", refused)
        return _finish(model, spec, Termination.ERROR, False, None, None, mip, build_s=total, solve_s=0.0,
                       raw={"status": f"error: {refused}"}), opt
    has_solution = res.solution_status in (SolutionStatus.feasible, SolutionStatus.optimal) and (
        term not in NO_SOLUTION
    )
    if has_solution:
        res.solution_loader.load_vars()
    objective = None
    if has_solution:  # the solver's own value (with constant terms); evaluating obj costs O(terms)
        inc = res.incumbent_objective
        objective = float(inc) if inc is not None else float(pyo.value(obj))
    bound = res.objective_bound
    bound = None if bound is None or not math.isfinite(bound) else float(bound)
    raw = {"status": str(res.termination_condition.name), "native": res}
    if term is Termination.UNKNOWN:
        constant = constant_model_status(model, obj)
        if constant is not None:  # HiGHS returns "unknown" on a model without variables
            term, objective = constant
            has_solution, bound = objective is not None, objective
            raw["status"] += f" (no variables: {term.value} by evaluation)"
    return _finish(
        model, spec, term, has_solution, objective, bound, mip, build_s=total - solve_s,
        solve_s=solve_s, raw=raw,
    ), opt


def _highs_refused_rows(opt) -> str | None:
    """Why HiGHS holds fewer rows or columns than Pyomo's HiGHS interface passed it, or None.

    HiGHS refuses rows with a coefficient of ``large_matrix_value`` (1e15) or more, and Pyomo's
    interface does not check the status its ``addRows`` returns, so the solve that follows is of the
    model without them (an "optimal" answer of another model).  The counts come from the
    interface's own maps (private attributes of ``pyomo.contrib.solver.solvers.highs.Highs``); an
    interface without them is not checked.
    """
    highs = getattr(opt, "_solver_model", None)
    rows = getattr(opt, "_pyomo_con_to_solver_con_map", None)
    cols = getattr(opt, "_pyomo_var_to_solver_var_map", None)
    if highs is None or rows is None or cols is None:
        return None
    held_rows, held_cols = int(highs.getNumRow()), int(highs.getNumCol())
    if held_rows >= len(rows) and held_cols >= len(cols):
        return None
    return (f"it took {held_rows} of the model's {len(rows)} constraints and {held_cols} of its {len(cols)} "
            "variables (a coefficient beyond its large_matrix_value 1e15, or an infinite one?); the model "
            "was not solved")


def constant_model_status(model: pyo.ConcreteModel, obj: pyo.Objective) -> tuple[Termination, float | None] | None:
    """``(OPTIMAL, objective)`` or ``(INFEASIBLE, None)`` for a model in which no active objective
    or constraint contains an unfixed variable (e.g. a slot model with no job active); None for
    any other model.  Constraints are checked with an absolute tolerance of 1e-9.

    >>> m = pyo.ConcreteModel()
    >>> m.I = pyo.Set(initialize=[])
    >>> m.x = pyo.Var(m.I)
    >>> m.o = pyo.Objective(expr=sum(m.x[i] for i in m.I) + 2.5)
    >>> constant_model_status(m, m.o)
    (<Termination.OPTIMAL: 'optimal'>, 2.5)
    """
    from pyomo.core.expr.visitor import identify_variables

    def has_var(expr) -> bool:
        return next(identify_variables(expr, include_fixed=False), None) is not None

    if has_var(obj.expr):
        return None
    cons = list(model.component_data_objects(pyo.Constraint, active=True, descend_into=True))
    if any(has_var(c.body) for c in cons):
        return None
    for c in cons:
        body = pyo.value(c.body)
        if (c.has_lb() and body < pyo.value(c.lower) - 1e-9) or (c.has_ub() and body > pyo.value(c.upper) + 1e-9):
            return Termination.INFEASIBLE, None
    return Termination.OPTIMAL, float(pyo.value(obj.expr))


def _solve_legacy(model, spec, native, options, tee, time_limit, obj, mip):
    opt = pyo.SolverFactory(native)
    for k, v in options.get("solver_options", {}).items():
        opt.options[k] = v
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        logfile = Path(tmp) / "solver.log"
        try:
            res = opt.solve(model, tee=tee, load_solutions=False, logfile=str(logfile))
        except library_errors(spec) as exc:  # "CPLEX Error 1016: Community Edition. Problem size limits ..."
            text = " ".join(str(exc).split())
            log.warning("%s failed on the Pyomo model: %s", spec.name, text)
            return _finish(model, spec, Termination.ERROR, False, None, None, mip,
                           build_s=time.perf_counter() - start, solve_s=0.0, raw={"status": f"error: {text}"})
        log_text = logfile.read_text() if logfile.exists() else ""
    total = time.perf_counter() - start
    term = LEGACY_STATUS.get(res.solver.termination_condition, Termination.UNKNOWN)
    log_bound = None
    if native in LOG_READERS:
        term, log_bound = LOG_READERS[native](term, log_text)
    has_solution = len(res.solution) > 0 and term not in NO_SOLUTION
    if has_solution:
        model.solutions.load_from(res)
    objective = float(pyo.value(obj)) if has_solution else None
    maximize = obj.sense == pyo.maximize
    bound = res.problem.upper_bound if maximize else res.problem.lower_bound
    bound = _number(bound)
    if not has_solution or (bound is not None and abs(bound) >= SOLVER_INFINITY):
        bound = None  # no point, or CPLEX's 1e75 / Xpress's 1e40: no bound
    if bound is None and has_solution:
        bound = log_bound
    if bound is not None and objective is not None and (bound < objective if maximize else bound > objective):
        # CBC 2.10.8 prints its "best possible" in its internal minimization sense, which
        # Pyomo's shell takes as the model's: the sign is wrong for a maximization
        bound = -bound if (-bound >= objective if maximize else -bound <= objective) else None
    solve_s = _number(getattr(res.solver, "wallclock_time", None)) or total
    return _finish(
        model, spec, term, has_solution, objective, bound, mip, build_s=max(total - solve_s, 0.0),
        solve_s=solve_s, raw={"status": str(res.solver.termination_condition), "native": res},
    )


SOLVER_INFINITY = 1e20
"""A bound of this magnitude or more from a classic Pyomo interface is none (CPLEX reports 1e75,
Xpress 1e40 for an infeasible or unbounded model)."""


def _glpk_log(term: Termination, log_text: str) -> tuple[Termination, float | None]:
    """Read what Pyomo 6.10's GLPK shell misses in GLPK 5.0's log: the status words of an
    infeasible / unbounded LP ("LP HAS NO PRIMAL FEASIBLE SOLUTION") and the MIP bound of the
    last branch-and-bound line (``+ 123: mip = 7.0e+03 <= 7.1e+03 ...``).
    """
    if term is Termination.UNKNOWN:
        if re.search(r"HAS NO (PRIMAL |INTEGER )?FEASIBLE SOLUTION", log_text):
            term = Termination.INFEASIBLE
        elif "HAS UNBOUNDED PRIMAL SOLUTION" in log_text or "HAS NO DUAL FEASIBLE" in log_text:
            term = Termination.UNBOUNDED
    found = re.findall(r"^\+\s*\d+: mip =\s*(\S+)\s*[<>]=\s*(\S+)", log_text, re.M)
    bound = _number(found[-1][1]) if found else None
    return term, bound


LOG_READERS = {"glpk": _glpk_log}
"""Legacy native name -> reader of its log for what Pyomo's shell does not parse."""


def _number(x) -> float | None:
    """A finite float from a legacy results field, or None (fields may be ``UndefinedData``)."""
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def _finish(model, spec, term, has_solution, objective, bound, mip, *, build_s, solve_s, raw):
    term, bound, gap = settle(term, has_solution, objective, bound, mip=mip)
    values = variable_values(model) if has_solution else {}
    labels = variable_labels(model) if has_solution else {}
    index_names = variable_index_names(model) if has_solution else {}
    return SolveResult(
        termination=term,
        has_solution=has_solution,
        objective=objective,
        bound=bound,
        gap=gap,
        values=values,
        solver=spec.name,
        backend="pyomo",
        build_seconds=float(build_s),
        solve_seconds=float(solve_s),
        raw=raw,
        labels=labels,
        index_names=index_names,
    )
