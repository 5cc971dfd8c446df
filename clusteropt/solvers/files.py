"""LP / MPS export of Pyomo and CVXPY models, and solving such files directly.

Pyomo models are written by Pyomo's own LP and MPS writers with symbolic labels, so the file
reads like the model (``x(a_1)``, ``cap(3)``).  Linear CVXPY problems are turned into matrices
(:func:`clusteropt.solvers.cvxpy_backend.linear_form`) and written by HiGHS with the wrapper's
names.  :func:`solve_file` reads a file straight into HiGHS (highspy) or SCIP (PySCIPOpt).
"""

from __future__ import annotations

import logging
import math
import time
from pathlib import Path
from typing import Any

import numpy as np

from clusteropt.models.cvxpy_model import CvxpyModel
from clusteropt.solvers.registry import SolverSpec
from clusteropt.solvers.result import NO_SOLUTION, SolveResult, Termination, settle

log = logging.getLogger(__name__)

FORMATS = {".lp": "lp", ".mps": "mps"}

__all__ = ["FORMATS", "write_model"]


def _format_of(path: Path) -> str:
    fmt = FORMATS.get(path.suffix.lower())
    if fmt is None:
        raise ValueError(
            f"cannot tell the file format of {str(path)!r} from its suffix {path.suffix!r}; "
            f"expected one of {', '.join(FORMATS)}"
        )
    return fmt


def write_model(model: Any, path: str | Path) -> Path:
    """Write ``model`` (Pyomo ``ConcreteModel``, ``cvxpy.Problem`` or :class:`CvxpyModel`) to LP/MPS.

    The format follows the suffix: ``.lp`` (CPLEX LP) or ``.mps`` (free MPS).  Names are the
    model's own (the paper's symbols), so the file can be read next to the paper.

    Parameters
    ----------
    model : pyomo ConcreteModel, cvxpy.Problem or CvxpyModel
    path : str or Path
        Destination; its parent directory must exist.

    Returns
    -------
    Path
        The path written.

    Raises
    ------
    ValueError
        Unknown suffix.
    FileNotFoundError
        The parent directory does not exist.
    clusteropt.solvers.UnsuitableSolverError
        A CVXPY problem that needs a non-linear cone (the cone is named in the message).

    Examples
    --------
    >>> import cvxpy as cp, tempfile, pathlib
    >>> x = cp.Variable(2, integer=True, name="x")
    >>> prob = cp.Problem(cp.Maximize(x[0] + 2 * x[1]), [x >= 0, x[0] + x[1] <= 3.5])
    >>> out = write_model(prob, pathlib.Path(tempfile.mkdtemp()) / "tiny.lp")
    >>> "x(1)" in out.read_text()
    True
    """
    from clusteropt.solvers.core import backend_of

    path = Path(path)
    _format_of(path)
    if not path.parent.is_dir():
        # checked here: HiGHS's writer crashes the interpreter on a missing directory
        raise FileNotFoundError(f"cannot write {path}: no such directory {path.parent}")
    if backend_of(model) == "pyomo":
        # Pyomo picks its LP / MPS writer from the suffix; rows read c_u_capacity(0_gpu)_
        # (Pyomo's prefix for an upper-bounded row), columns y(3_1)
        model.write(str(path), io_options={"symbolic_solver_labels": True})
        return path
    _write_cvxpy(model, path)
    return path


def _write_cvxpy(model, path: Path) -> None:
    import highspy

    from clusteropt.solvers.cvxpy_backend import linear_form

    form = linear_form(model)
    lp = highspy.HighsLp()
    n, m = form.A.shape[1], form.A.shape[0]
    lp.num_col_, lp.num_row_ = n, m
    lp.col_cost_ = form.c
    lp.offset_ = form.offset
    lp.col_lower_, lp.col_upper_ = form.col_lower, form.col_upper
    lp.row_lower_, lp.row_upper_ = form.row_lower, form.row_upper
    lp.sense_ = highspy.ObjSense.kMaximize if form.maximize else highspy.ObjSense.kMinimize
    A = form.A.tocsc()
    A.sort_indices()
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_ = A.indptr
    lp.a_matrix_.index_ = A.indices
    lp.a_matrix_.value_ = A.data
    lp.a_matrix_.num_col_, lp.a_matrix_.num_row_ = n, m
    if form.integer.any():
        lp.integrality_ = [
            highspy.HighsVarType.kInteger if f else highspy.HighsVarType.kContinuous
            for f in form.integer
        ]
    lp.col_names_ = form.col_names
    lp.row_names_ = form.row_names
    if isinstance(model, CvxpyModel):
        lp.model_name_ = model.name
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    status = h.passModel(lp)
    if status == highspy.HighsStatus.kError:
        raise RuntimeError(f"HiGHS refused the model read from the CVXPY problem ({status})")
    status = h.writeModel(str(path))
    if status == highspy.HighsStatus.kError:
        raise OSError(f"HiGHS could not write {path}")


# ---------------------------------------------------------------------------------------------
# solving files

HIGHS_STATUS: dict[str, Termination] = {
    "kOptimal": Termination.OPTIMAL,
    "kInfeasible": Termination.INFEASIBLE,
    "kUnbounded": Termination.UNBOUNDED,
    "kUnboundedOrInfeasible": Termination.INFEASIBLE_OR_UNBOUNDED,
    "kTimeLimit": Termination.TIME_LIMIT,
    "kIterationLimit": Termination.ITERATION_LIMIT,
    "kSolutionLimit": Termination.ITERATION_LIMIT,
    "kObjectiveBound": Termination.FEASIBLE,
    "kObjectiveTarget": Termination.FEASIBLE,
    "kInterrupt": Termination.ERROR,
    "kSolveError": Termination.ERROR,
    "kLoadError": Termination.ERROR,
    "kModelError": Termination.ERROR,
    "kPresolveError": Termination.ERROR,
    "kPostsolveError": Termination.ERROR,
    "kMemoryLimit": Termination.ERROR,
}
"""``highspy.HighsModelStatus`` name -> :class:`Termination`."""

SCIP_STATUS: dict[str, Termination] = {
    "optimal": Termination.OPTIMAL,
    "gaplimit": Termination.OPTIMAL,  # stopped at the requested relative gap
    "infeasible": Termination.INFEASIBLE,
    "unbounded": Termination.UNBOUNDED,
    "inforunbd": Termination.INFEASIBLE_OR_UNBOUNDED,
    "timelimit": Termination.TIME_LIMIT,
    "nodelimit": Termination.ITERATION_LIMIT,
    "totalnodelimit": Termination.ITERATION_LIMIT,
    "stallnodelimit": Termination.ITERATION_LIMIT,
    "sollimit": Termination.ITERATION_LIMIT,
    "bestsollimit": Termination.ITERATION_LIMIT,
    "restartlimit": Termination.ITERATION_LIMIT,
    "memlimit": Termination.ERROR,
    "userinterrupt": Termination.ERROR,
}
"""PySCIPOpt ``Model.getStatus()`` text -> :class:`Termination`."""



END_KEYWORD = {"lp": "end", "mps": "endata"}
"""The keyword that closes a complete file of each format (case-insensitive)."""

COMMENT = {"lp": "\\", "mps": "*"}
"""What starts a comment: anywhere in an LP line (``\\``), at the start of an MPS line (``*``)."""


def check_model_file(path: Path) -> str:
    """Refuse a file that is not a complete LP / MPS text, before a solver reads it.

    Solvers' readers are lenient: SCIP solves a truncated file (or binary bytes) as whatever
    model the part it could parse describes.  A complete file is text (no NUL byte, valid
    UTF-8) and closes with its format's end keyword (``end`` for LP, ``ENDATA`` for MPS),
    which every writer puts last.  Returns the format.

    Raises
    ------
    ValueError
        Naming the file, what is wrong and (for binary bytes) the byte offset.
    """
    fmt = _format_of(path)
    data = path.read_bytes()
    nul = data.find(b"\0")
    if nul >= 0:
        raise ValueError(f"{path}: byte {nul} is NUL; expected an {fmt.upper()} text file")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path}: byte {exc.start} is not UTF-8; expected an {fmt.upper()} text file") from None
    last = ""
    for line in reversed(text.splitlines()):
        if fmt == "lp":
            line = line.split(COMMENT["lp"], 1)[0]
        elif line.startswith(COMMENT["mps"]):
            continue
        if line.strip():
            last = line.split()[-1]
            break
    if last.lower() != END_KEYWORD[fmt]:
        raise ValueError(
            f"{path}: the file ends with {last!r}, not the {END_KEYWORD[fmt].upper()} keyword that closes a "
            f"complete {fmt.upper()} file (truncated?)"
        )
    return fmt


def solve_file_with(path: Path, spec: SolverSpec, native: dict[str, Any], tee: bool) -> SolveResult:
    """Solve an LP / MPS file with ``spec``'s file route (options already native)."""
    route = spec.route("file")
    reader = FILE_SOLVERS[route.native]
    check_model_file(path)
    return reader(path, spec, native, tee)


def _highs_file(path: Path, spec: SolverSpec, native: dict[str, Any], tee: bool) -> SolveResult:
    import highspy

    h = highspy.Highs()
    h.setOptionValue("output_flag", bool(tee))
    t0 = time.perf_counter()
    if h.readModel(str(path)) == highspy.HighsStatus.kError:
        raise ValueError(f"HiGHS could not read {path} as an {_format_of(path).upper()} file")
    t1 = time.perf_counter()
    for k, v in native.items():  # after reading: HiGHS would count the reading against a time limit
        h.setOptionValue(k, v)
    h.run()
    t2 = time.perf_counter()
    status = h.getModelStatus()
    info = h.getInfo()
    lp = h.getLp()
    mip = any(int(v) != 0 for v in (lp.integrality_ or []))
    term = HIGHS_STATUS.get(status.name, Termination.UNKNOWN)
    has_solution = int(info.primal_solution_status) == 2 and term not in NO_SOLUTION
    objective = float(info.objective_function_value) if has_solution else None
    bound = None
    if mip and has_solution and math.isfinite(info.mip_dual_bound):
        bound = float(info.mip_dual_bound)
    values: dict[str, np.ndarray] = {}
    if has_solution:
        x = h.getSolution().col_value
        values = {name: np.asarray(val) for name, val in zip(lp.col_names_, x, strict=True)}
    return _finish(spec, term, has_solution, objective, bound, mip, values, t1 - t0, t2 - t1,
                   status.name, h)


def _scip_file(path: Path, spec: SolverSpec, native: dict[str, Any], tee: bool) -> SolveResult:
    import pyscipopt

    model = pyscipopt.Model()
    if not tee:
        model.hideOutput()
    t0 = time.perf_counter()
    try:
        model.readProblem(str(path))
    except Exception as exc:  # PySCIPOpt: OSError ("read error!") or a bare Exception ("error in input data!")
        raise ValueError(f"SCIP could not read {path} as an {_format_of(path).upper()} file ({exc})") from None
    t1 = time.perf_counter()
    for k, v in native.items():
        model.setParam(k, v)
    try:
        model.optimize()
    except Exception as exc:  # PySCIPOpt raises a bare Exception ("SCIP: error in LP solver!")
        log.warning("SCIP failed on %s: %s", path, exc)
        return _finish(spec, Termination.ERROR, False, None, None, False, {}, t1 - t0,
                       time.perf_counter() - t1, f"error: {exc}", model)
    t2 = time.perf_counter()
    status = model.getStatus()
    mip = any(v.vtype() != "CONTINUOUS" for v in model.getVars())
    term = SCIP_STATUS.get(status, Termination.UNKNOWN)
    has_solution = model.getNSols() > 0 and term not in NO_SOLUTION
    objective = float(model.getObjVal()) if has_solution else None
    bound = float(model.getDualbound()) if has_solution else None
    if bound is not None and not math.isfinite(bound):
        bound = None
    values = {}
    if has_solution:
        sol = model.getBestSol()
        values = {v.name: np.asarray(model.getSolVal(sol, v)) for v in model.getVars()}
        values.pop("ONE_VAR_CONSTANT", None)
    return _finish(spec, term, has_solution, objective, bound, mip, values, t1 - t0, t2 - t1,
                   status, model)


def _finish(spec, term, has_solution, objective, bound, mip, values, build_s, solve_s, status,
            native):
    term, bound, gap = settle(term, has_solution, objective, bound, mip=mip)
    return SolveResult(
        termination=term,
        has_solution=has_solution,
        objective=objective,
        bound=bound,
        gap=gap,
        values=values,
        solver=spec.name,
        backend="file",
        build_seconds=float(build_s),
        solve_seconds=float(solve_s),
        raw={"status": str(status), "native": native},
    )


FILE_SOLVERS = {"highspy": _highs_file, "pyscipopt": _scip_file}
"""Native name of a file route -> function that reads and solves the file."""
