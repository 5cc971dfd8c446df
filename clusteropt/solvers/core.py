"""``solve()`` and ``solve_file()``: one entry point for Pyomo models, CVXPY problems and files."""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import time
from pathlib import Path
from typing import Any

from clusteropt.solvers.options import THREADS_ENV as THREADS_ENV  # also importable from here, as before
from clusteropt.solvers.options import backend_of as backend_of
from clusteropt.solvers.options import check_numbers
from clusteropt.solvers.options import default_threads as default_threads
from clusteropt.solvers.registry import (
    Capability,
    SolverSpec,
    available_solvers,
    default_solver,
    get_spec,
    suitable_solvers,
)
from clusteropt.solvers.result import (
    NotOptimalError,
    SolveResult,
    Termination,
    UnsuitableSolverError,
)

log = logging.getLogger(__name__)

__all__ = ["solve", "solve_file"]



def problem_class(model: Any, backend: str) -> str:
    """Registry problem class of ``model``: LP, MILP, QP, SOC, EXP_CONE or PSD."""
    if backend == "matrix":
        return "MILP" if model.integer is not None and bool(model.integer.any()) else "LP"
    if backend == "cvxpy":
        from clusteropt.solvers.cvxpy_backend import problem_class as cvx_class
        from clusteropt.solvers.cvxpy_backend import unwrap

        return cvx_class(unwrap(model)[0])
    from pyomo.core.expr.visitor import polynomial_degree

    from clusteropt.solvers.pyomo_backend import _objective, is_mip

    if is_mip(model):
        return "MILP"
    degree = polynomial_degree(_objective(model).expr)
    return "QP" if degree is None or degree > 1 else "LP"



def native_options(
    spec: SolverSpec,
    backend: str,
    *,
    time_limit: float | None = None,
    mip_gap: float | None = None,
    threads: int | None = None,
    options: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Translate the common options into ``spec``'s native spelling for ``backend``.

    An option the solver does not take is refused with an error naming the solvers that do,
    except ``threads=1`` for single-threaded solvers.  ``options`` (native names) are merged
    last, so they override.  Called right before every solve, it also readies the solver for the
    thread count (``SolverSpec.prepare``: HiGHS resets its process-wide thread pool, whose count a
    run cannot change otherwise; see :mod:`clusteropt.solvers.highs`).
    ``threads=None`` means :func:`default_threads` (``$CLUSTEROPT_THREADS``), if set.
    """
    if threads is None:
        threads = default_threads()
    route = spec.route(backend)
    out: dict[str, Any] = {}
    asked = {"time_limit": time_limit, "mip_gap": mip_gap, "threads": threads}
    for key, value in asked.items():
        if value is None:
            continue
        if key == "threads" and not spec.threads:
            if value == 1:
                continue
            raise UnsuitableSolverError(
                f"solver '{spec.name}' is single-threaded; threads={value} cannot be honoured "
                "(pass threads=1 or None, or choose highs / gurobi / cbc)"
            )
        translate = route.options.get(key)
        if translate is None:
            takers = [n for n in suitable_solvers("LP", backend) if n != spec.name]
            raise UnsuitableSolverError(
                f"solver '{spec.name}' ({backend}) does not take {key}; solvers that may: "
                f"{', '.join(takers) or 'none installed'}"
            )
        _merge(out, translate(value))
    _merge(out, dict(options or {}))
    if spec.prepare is not None:
        spec.prepare(threads)
    return out


def _merge(into: dict, extra: dict) -> None:
    for k, v in extra.items():
        if isinstance(v, dict) and isinstance(into.get(k), dict):
            _merge(into[k], v)
        else:
            into[k] = v


@contextlib.contextmanager
def notices_to_stderr(spec: SolverSpec):
    """Run the block with the C-level standard output sent to standard error when ``spec`` prints
    notices there (:attr:`SolverSpec.stdout_notices`: Gurobi's and COPT's licence lines), else as it is.

    C's buffered output is flushed before the output is restored, so that nothing the solver wrote
    reaches standard output later.  Where file descriptors 1 and 2 cannot be used, nothing is moved.
    """
    if not spec.stdout_notices:
        yield
        return
    sys.stdout.flush()
    try:
        saved = os.dup(1)
        os.dup2(2, 1)
    except OSError:
        yield
        return
    try:
        yield
    finally:
        _flush_c_stdout()
        os.dup2(saved, 1)
        os.close(saved)


def _flush_c_stdout() -> None:
    """``fflush(NULL)`` of the C library, where there is one to load."""
    import ctypes
    import ctypes.util

    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or None)
        libc.fflush(None)
    except (OSError, AttributeError):
        pass


def resolve_solver(model: Any, solver: str | None, backend: str) -> tuple[SolverSpec, str]:
    """The registry spec to use for ``model`` and the model's problem class."""
    cls = problem_class(model, backend)
    if solver is not None and not isinstance(solver, str):
        # a Pyomo solver object (pyo.SolverFactory("highs")): its name, where it has one
        named = getattr(solver, "name", None)
        if not isinstance(named, str):
            raise TypeError(f"solver = {solver!r}: pass a solver's name (clusteropt solvers lists them: "
                            f"{', '.join(available_solvers())}), not a solver object")
        solver = named
    name = solver if solver is not None else default_solver(cls, _route_of(backend))
    spec = get_spec(name)
    if Capability[cls] not in spec.capabilities:
        raise UnsuitableSolverError(
            f"solver '{spec.name}' cannot take a problem of class {cls}; installed solvers that can: "
            f"{', '.join(suitable_solvers(cls, _route_of(backend))) or 'none'}"
        )
    spec.route(_route_of(backend))  # raises with the alternatives if there is no installed route
    return spec, cls


def _route_of(backend: str) -> str:
    """The registry route that serves ``backend``: a MatrixLP goes to HiGHS as arrays and to every
    other solver as a file, both with the solver's native option names (the ``file`` route's).
    """
    return "file" if backend == "matrix" else backend


def solve(
    model: Any,
    solver: str | None = None,
    *,
    time_limit: float | None = None,
    mip_gap: float | None = None,
    threads: int | None = None,
    tee: bool = False,
    raise_on_nonoptimal: bool = True,
    options: dict[str, Any] | None = None,
) -> SolveResult:
    """Solve a Pyomo model or a CVXPY problem and return a :class:`SolveResult`.

    Variable values are also loaded back into the model (Pyomo ``Var`` values, CVXPY
    ``Variable.value``), so a model can be inspected after the solve as usual.

    Parameters
    ----------
    model : pyomo ConcreteModel, cvxpy.Problem, CvxpyModel or MatrixLP
        A :class:`~clusteropt.models.matrix.MatrixLP` (a registered model's arrays,
        ``build(name, instance, arrays=True)``) goes to HiGHS as arrays and to any other LP /
        MILP solver as an MPS file with the model's names.
    solver : str, optional
        Registry name (``clusteropt solvers`` lists them), or a solver's Pyomo / CVXPY name
        (``"scip_direct"``, ``"appsi_highs"``, ``"GUROBI"``), or a Pyomo solver object with a
        ``name`` (``pyo.SolverFactory("highs")``): the solve then goes through clusteropt's own
        route for that solver.  Default: HiGHS for LP / MILP / QP, Clarabel for conic problems.
    time_limit : float, optional
        Wall-clock limit in seconds.
    mip_gap : float, optional
        Relative MIP gap at which the solver may stop (reported as OPTIMAL, as solvers do).
    threads : int, optional
        Thread count; single-threaded solvers accept only 1.  Default: ``$CLUSTEROPT_THREADS``
        if set (the experiments harness sets 1 in its workers), else the solver's own default.
    tee : bool
        Stream the solver's log.
    raise_on_nonoptimal : bool
        Raise :class:`NotOptimalError` (carrying the result) unless optimality was proven.
    options : dict, optional
        Native solver options, passed as they are (e.g. ``{"solver": "simplex"}`` for HiGHS
        through CVXPY or ``{"solver_options": {"solver": "ipm"}}`` through Pyomo, whose routes
        also take ``{"config": {...}}``, the solver's Pyomo config).  A name the route would
        ignore is refused with a ``ValueError`` naming it and the closest valid name (HiGHS and
        SCIP list their options; :func:`clusteropt.solvers.pyomo_backend.check_native_options`).

    Returns
    -------
    SolveResult

    Raises
    ------
    UnknownSolverError, UnsuitableSolverError, SolverUnavailableError
        The solver name is not registered, cannot take the problem, or is not installed; the
        message lists the alternatives.
    NotOptimalError
        When ``raise_on_nonoptimal`` and the solve did not prove optimality.

    References
    ----------
    The status model follows Pyomo's ``contrib.solver`` (termination vs solution status).

    Examples
    --------
    >>> import pyomo.environ as pyo
    >>> m = pyo.ConcreteModel()
    >>> m.x = pyo.Var(bounds=(0, 4))
    >>> m.obj = pyo.Objective(expr=3 * m.x + 1, sense=pyo.maximize)
    >>> r = solve(m)
    >>> r.termination.name, r.objective, float(r.values["x"])
    ('OPTIMAL', 13.0, 4.0)
    """
    backend = backend_of(model)
    check_numbers(time_limit, mip_gap, threads)
    if backend == "exact":  # an exact algorithm of the package, not a solver (models/exact.py)
        from clusteropt.solvers.exact_backend import solve_exact

        result = solve_exact(model, solver, time_limit=time_limit, threads=threads, options=options)
        _log_summary(result)
        return check_optimal(result, raise_on_nonoptimal)
    spec, cls = resolve_solver(model, solver, backend)
    native = native_options(
        spec, _route_of(backend), time_limit=time_limit, mip_gap=mip_gap, threads=threads, options=options
    )
    with notices_to_stderr(spec):
        if backend == "matrix":
            result = _solve_arrays(model, spec, native, tee)
        elif backend == "pyomo":
            from clusteropt.solvers.pyomo_backend import solve_pyomo

            result, _ = solve_pyomo(model, spec, native, tee=tee, time_limit=time_limit)
        else:
            from clusteropt.solvers.cvxpy_backend import solve_cvxpy

            result = solve_cvxpy(
                model, spec, native, tee=tee, time_limit=time_limit, mip=cls == "MILP"
            )
    _log_summary(result)
    return check_optimal(result, raise_on_nonoptimal)


def _solve_arrays(lp: Any, spec: SolverSpec, native: dict[str, Any], tee: bool) -> SolveResult:
    """A :class:`~clusteropt.models.matrix.MatrixLP`: HiGHS takes the arrays (``Highs.passModel``);
    another solver reads them from an MPS file written with the model's names, and the values come
    back per variable component (:func:`clusteropt.solvers.files.model_values`).  Either way the
    result carries the labels (index tuples) and index-set names the Pyomo route gives.
    """
    from dataclasses import replace

    if spec.name == "highs":
        from clusteropt.models.matrix import solve_matrix

        options = {**native, **({"output_flag": True, "log_to_console": True} if tee else {})}
        result, x = solve_matrix(lp, options=options, raise_on_nonoptimal=False)
        labels = lp.labels()
        return replace(result, values=lp.shaped_values(x, labels) if x is not None else {}, labels=labels,
                       index_names=dict(lp.index_names))
    import tempfile

    from clusteropt.solvers.files import model_values, solve_file_with, write_model

    with tempfile.TemporaryDirectory() as tmp:
        path = write_model(lp, Path(tmp) / "model.mps")
        t0 = time.perf_counter()
        result = solve_file_with(path, spec, native, tee)
        result = model_values(result, lp, path)
    raw = {**dict(result.raw), "route": "file", "read_seconds": result.build_seconds,
           "file_seconds": time.perf_counter() - t0}
    return replace(result, backend="matrix", raw=raw)


def _log_summary(result: SolveResult) -> None:
    if log.isEnabledFor(logging.INFO):  # the summary is formatted only for a log that shows it
        log.info("%s", result.summary())


def check_optimal(result: SolveResult, raise_on_nonoptimal: bool) -> SolveResult:
    """Return ``result``, or raise :class:`NotOptimalError` saying what to do."""
    if not raise_on_nonoptimal or result.termination is Termination.OPTIMAL:
        return result
    advice = {
        Termination.FEASIBLE: (
            f"stopped with a feasible point (objective {result.objective}, bound {result.bound}, "
            f"gap {result.gap}); raise time_limit, loosen mip_gap, or pass "
            "raise_on_nonoptimal=False to use the incumbent"
        ),
        Termination.INFEASIBLE: "the model is infeasible; check the instance data and constraints",
        Termination.UNBOUNDED: "the model is unbounded; a bound or constraint is missing",
        Termination.INFEASIBLE_OR_UNBOUNDED: (
            "the model is infeasible or unbounded; solve its feasibility version to tell which"
        ),
        Termination.TIME_LIMIT: "the time limit ran out before any feasible point was found",
        Termination.ITERATION_LIMIT: "an iteration limit ran out before any feasible point",
        Termination.ERROR: "the solver failed; re-run with tee=True to see its log",
    }.get(result.termination, "the solver stopped for an unknown reason; re-run with tee=True")
    raise NotOptimalError(
        f"{result.solver}/{result.backend} did not prove optimality ({result.raw.get('status')}): "
        f"{advice}",
        result,
    )


def solve_file(
    path: str | Path,
    solver: str = "highs",
    *,
    time_limit: float | None = None,
    mip_gap: float | None = None,
    threads: int | None = None,
    tee: bool = False,
    raise_on_nonoptimal: bool = True,
    options: dict[str, Any] | None = None,
    model: Any = None,
) -> SolveResult:
    """Read an LP or MPS file into a solver and solve it (backend ``"file"``).

    The file must be complete, well-formed text (UTF-8, sections and names as the format defines
    them, closed by ``end`` / ``ENDATA``, numbers below 1e15; see
    :func:`clusteropt.solvers.files.check_model_file`): solvers read damaged files leniently.

    ``values`` are keyed by the file's column names, or, given the ``model`` the file was written
    from (:func:`~clusteropt.solvers.write_model`), by its variables as :func:`solve` keys them, with
    the model's own index as ``labels`` (:func:`clusteropt.solvers.files.model_values`; the model
    itself is not changed).  Other parameters are as for :func:`solve`.

    Raises
    ------
    ValueError
        Unknown suffix, a damaged file, or a file the solver cannot read (the path is named).
    FileNotFoundError
        No such file.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "t.lp"
    >>> _ = p.write_text("max\\n obj: x + 2 y\\nst\\n c1: x + y <= 3\\nbounds\\n y <= 1\\nend\\n")
    >>> solve_file(p).objective
    4.0

    With the model the file was written from, the values come back keyed by its index:

    >>> import pyomo.environ as pyo
    >>> from clusteropt.solvers import write_model
    >>> m = pyo.ConcreteModel()
    >>> m.J = pyo.Set(initialize=["a", "b"])
    >>> m.x = pyo.Var(m.J, bounds=(0, 2))
    >>> m.c = pyo.Constraint(expr=m.x["a"] + m.x["b"] <= 3)
    >>> m.o = pyo.Objective(expr=m.x["a"] + 2 * m.x["b"], sense=pyo.maximize)
    >>> r = solve_file(write_model(m, p.with_name("m.lp")), model=m)
    >>> r.labelled("x"), r.index_names["x"]
    ({('a',): 1.0, ('b',): 2.0}, ('J',))
    """
    from clusteropt.solvers.files import _format_of, solve_file_with

    path = Path(path)
    _format_of(path)
    if not path.is_file():
        raise FileNotFoundError(f"no such model file: {path}")
    check_numbers(time_limit, mip_gap, threads)
    spec = get_spec(solver)
    native = native_options(
        spec, "file", time_limit=time_limit, mip_gap=mip_gap, threads=threads, options=options
    )
    with notices_to_stderr(spec):
        result = solve_file_with(path, spec, native, tee)
    if model is not None:
        from clusteropt.solvers.files import model_values

        result = model_values(result, model, path)
    _log_summary(result)
    return check_optimal(result, raise_on_nonoptimal)

