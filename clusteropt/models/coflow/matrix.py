"""Paper 001: the concurrent-open-shop LP solved by row generation on one live HiGHS model.

:func:`clusteropt.models.coflow.bound.cos_lower_bound` solves the slides' LP (release rows plus the
parallel inequalities of every machine, coflow.md B6) by row generation (B8).  Its Pyomo route
writes every cut as a Pyomo row and hands it over through Pyomo's persistent interface, which
took about half of the loop's time at the public trace's scale.  This module runs the
same loop on arrays:

* the starting LP of :func:`~clusteropt.models.coflow.open_shop.build_cos_lp` with ``release_rows="tightest"``
  (one row ``C_j >= r_j + max_i L_ij`` per job; the full-set parallel inequality of every machine
  with two or more jobs, divided by ``L_i(S)``), the same rows in the same order, handed to HiGHS
  once (:func:`clusteropt.solvers.direct.run_highs`);
* each round: :func:`~clusteropt.models.coflow.open_shop.separate_parallel_inequalities` at the optimum
  (Queyranne's prefix rule), the new cuts appended with ``Highs.addRows``, and with
  ``purge_after`` the loop's cuts that were slack at that many consecutive optima dropped with
  ``Highs.deleteRows``; HiGHS re-solves from its basis.

The rules are those of :func:`clusteropt.solvers.rowgen.row_generation` (a cut is violated
beyond ``tol * max(1, rhs)`` in the divided units, never added twice while in the LP, statuses
``converged`` / ``max_rounds`` / ``time_limit`` / ``stalled``), so both routes reach the same LP
optimum (tested); where the LP has several optimal points they may return different ``C*``.

References
----------
Paper 001 slides, "LP for Concurrent Open Shop" and "Parallel Constraint"; coflow.md B6, B8.
"""

from __future__ import annotations

import logging
import math
import time

import highspy
import numpy as np
import scipy.sparse as sp

from clusteropt.instances.coflow.instance import CoflowInstance, ConcurrentOpenShopInstance
from clusteropt.models.coflow.open_shop import (
    INITIAL,
    PER_MACHINE,
    PURGE_AFTER,
    cos_data,
    full_set_arrays,
    separate_parallel_inequalities,
)
from clusteropt.models.matrix import Block, MatrixLP
from clusteropt.solvers.direct import highs_termination, run_highs
from clusteropt.solvers.highs import run_live
from clusteropt.solvers.result import NotOptimalError, SolveResult, Termination
from clusteropt.solvers.rowgen import RowGenResult, check_options, stop_message

__all__ = ["cos_lower_bound_matrix", "cos_lp_arrays", "cos_start_rows"]

log = logging.getLogger(__name__)


def cos_start_rows(data, initial: str = "singletons+full") -> tuple[sp.csr_array, np.ndarray]:
    """The starting rows of :func:`~clusteropt.models.coflow.open_shop.build_cos_lp` (tightest release rows)
    as ``(A, lower)`` with every row ``A C >= lower``: one release row per job, then the full-set
    parallel inequality of every machine with two or more jobs, divided by ``L_i(S)``.

    >>> from clusteropt.models.coflow.open_shop import cos_data
    >>> A, lo = cos_start_rows(cos_data(ConcurrentOpenShopInstance([[1, 3]], [1.0, 1.0], [0, 0])))
    >>> A.toarray().tolist(), lo.tolist()
    ([[1.0, 0.0], [0.0, 1.0], [0.25, 0.75]], [1.0, 3.0, 3.25])
    """
    A, lower, _ = _start_rows(data, initial)
    return A, lower


def _start_rows(data, initial: str) -> tuple[sp.csr_array, np.ndarray, np.ndarray]:
    """:func:`cos_start_rows` and the machine of each full-set row."""
    if initial not in INITIAL:
        raise ValueError(f"initial = {initial!r}; expected one of {', '.join(INITIAL)}")
    L = data.loads
    n = L.shape[1]
    lower = data.release_bound().astype(float)
    if initial == "none":
        return sp.csr_array(sp.identity(n, format="csr")), lower, np.zeros(0, dtype=np.int64)
    machines, ptr, jobs, coef, rhs = full_set_arrays(L)
    rows = np.concatenate([np.arange(n), n + np.repeat(np.arange(machines.size), np.diff(ptr))])
    cols = np.concatenate([np.arange(n), jobs])
    vals = np.concatenate([np.ones(n), coef])
    lo = np.concatenate([lower, rhs])
    A = sp.csr_array((vals, (rows, cols)), shape=(lo.size, n))
    return A, lo, machines


def cos_lp_arrays(inst: ConcurrentOpenShopInstance | CoflowInstance, relax: bool = False, *,
                  initial: str = "singletons+full") -> MatrixLP:
    """The model of :func:`~clusteropt.models.coflow.open_shop.build_cos_lp` (tightest release rows) as
    a :class:`~clusteropt.models.matrix.MatrixLP`: columns ``C[j]``, rows ``release[j]`` then
    ``parallel_full[i]``, in the order Pyomo's standard-form compiler gives them (tested); what
    ``clusteropt solve --model coflow-lp`` hands to HiGHS without building the Pyomo model (``relax``
    is moot: it is an LP).

    >>> lp = cos_lp_arrays(ConcurrentOpenShopInstance([[1, 3]], [1.0, 1.0], [0, 0]))
    >>> lp.col_names(), lp.row_names()
    (['C[0]', 'C[1]'], ['release[0]', 'release[1]', 'parallel_full[0]'])
    """
    data = cos_data(inst)
    A, lower, machines = _start_rows(data, initial)
    n = data.loads.shape[1]
    jobs = np.arange(n)
    col_blocks = (Block("C", jobs, lambda: [(j,) for j in range(n)]),)
    row_blocks = (Block("release", jobs, lambda: [(j,) for j in range(n)]),
                  Block("parallel_full", n + np.arange(machines.size), lambda: [(i,) for i in machines.tolist()]))
    return MatrixLP("cos_lp", False, data.weight.astype(float), np.zeros(n), np.full(n, np.inf), A.tocsc(),
                    lower, np.full(lower.size, np.inf), col_blocks, row_blocks, "cos", index_names={"C": ("J",)})


def cos_lower_bound_matrix(
    inst: ConcurrentOpenShopInstance | CoflowInstance,
    *,
    tol: float = 1e-7,
    max_rounds: int = 200,
    per_machine: int = PER_MACHINE,
    time_limit: float | None = None,
    purge_after: int | None = PURGE_AFTER,
    initial: str = "singletons+full",
    progress: bool = False,
) -> tuple[float, np.ndarray, RowGenResult]:
    """The slides' LP bound by row generation on one live HiGHS model (module docstring).

    Parameters and returns as :func:`clusteropt.models.coflow.bound.cos_lower_bound` (whose
    ``builder="matrix"`` calls this); ``RowGenResult.build_seconds`` is the hand-off (the first
    ``passModel``, then the ``addRows`` / ``deleteRows`` calls), ``model_build_seconds`` the
    arrays of the starting LP.

    Raises
    ------
    NotOptimalError
        The first solve does not reach optimality, or a later one fails other than by the time
        limit.
    ValueError
        Bad ``tol``, ``max_rounds``, ``time_limit``, ``purge_after`` or ``initial``.

    Examples
    --------
    >>> cos = ConcurrentOpenShopInstance([[2, 1]], [1.0, 3.0], [0, 0])
    >>> bound, C, rg = cos_lower_bound_matrix(cos)
    >>> round(bound, 6), C.round(6).tolist(), rg.status, rg.result.backend
    (6.0, [3.0, 1.0], 'converged', 'matrix')
    """
    from clusteropt.progress import Progress

    check_options(tol=tol, max_rounds=max_rounds, time_limit=time_limit, purge_after=purge_after)
    t0 = time.perf_counter()
    data = cos_data(inst)
    A, lower = cos_start_rows(data, initial)
    n = data.loads.shape[1]
    model_build = time.perf_counter() - t0

    start = time.perf_counter()
    build_s = solve_s = sep_s = 0.0
    h: highspy.Highs | None = None
    base_rows = int(lower.size)
    cut_keys: list[tuple] = []  # the loop's cuts, in row order after the starting rows
    cut_lower: list[float] = []
    slack_count: list[int] = []
    seen: set[tuple] = set()
    per_round: list[int] = []
    removed: list[int] = []
    last_x: np.ndarray | None = None
    last_obj = math.nan
    status = ""
    max_violation = math.inf
    rounds = 0

    def left() -> float | None:
        return None if time_limit is None else time_limit - (time.perf_counter() - start)

    with Progress("row generation", None, "round", enabled=progress) as bar:
        while True:
            remaining = left()
            if remaining is not None and remaining <= 0 and last_x is not None:
                status = "time_limit"
                break
            limit = None if remaining is None else max(remaining, 1e-3)
            if h is None:
                h, pass_s, run_s = run_highs(data.weight.astype(float), np.zeros(n), np.full(n, np.inf),
                                             A.tocsc(), lower, np.full(lower.size, np.inf), maximize=False,
                                             time_limit=limit)
                build_s += pass_s
            else:
                if limit is not None:
                    h.setOptionValue("time_limit", float(limit))
                t1 = time.perf_counter()
                run_live(h)
                run_s = time.perf_counter() - t1
            solve_s += run_s
            rounds += 1
            bar.update()
            term, text = highs_termination(h)
            if term is not Termination.OPTIMAL:
                if last_x is None or not (term is Termination.TIME_LIMIT and time_limit is not None):
                    result = SolveResult(term, False, None, None, None, {}, "highs", "matrix", build_s, run_s,
                                         {"status": text, "route": "matrix"})
                    raise NotOptimalError(f"row generation round {rounds}: HiGHS stopped with {term.name} "
                                          f"({text}) on the concurrent-open-shop LP", result)
                status = "time_limit"  # keep the last optimal relaxation: still a valid bound
                break
            sol = h.getSolution()
            last_x = np.asarray(sol.col_value, dtype=float)
            last_obj = float(h.getInfo().objective_function_value)

            t1 = time.perf_counter()
            cuts = separate_parallel_inequalities(data, last_x, per_machine=per_machine, tol=tol)
            sep_s += time.perf_counter() - t1
            keys = [(int(cuts.machine[k]), cuts.job_set(k).tobytes()) for k in range(cuts.n_cuts)]
            load = np.where(cuts.load > 0, cuts.load, 1.0)
            rhs_d = cuts.rhs / load  # the rows are divided by L_i(S), as Pyomo's are
            rel = ((cuts.rhs - cuts.lhs) / load) / np.maximum(1.0, np.abs(rhs_d))
            max_violation = float(rel.max()) if rel.size else 0.0
            fresh = [k for k in range(cuts.n_cuts) if keys[k] not in seen]
            log.debug("row generation (matrix) round %d: objective %.10g, %d violated (max relative violation "
                      "%.3g), solve %.3g s", rounds, last_obj, cuts.n_cuts, max_violation, run_s)
            if not cuts.n_cuts:
                status = "converged"
                break
            if not fresh:
                status = "stalled"
                break
            if rounds >= max_rounds:
                status = "max_rounds"
                break
            remaining = left()
            if remaining is not None and remaining <= 0:
                status = "time_limit"
                break
            fresh.sort(key=lambda k: -rel[k])
            t1 = time.perf_counter()
            n_removed = 0
            if purge_after is not None and cut_keys:
                act = np.asarray(sol.row_value, dtype=float)[base_rows:base_rows + len(cut_keys)]
                lo = np.asarray(cut_lower)
                slack = act - lo > tol * np.maximum(1.0, np.abs(lo))
                slack_count = [c + 1 if s else 0 for c, s in zip(slack_count, slack.tolist(), strict=True)]
                drop = [q for q, c in enumerate(slack_count) if c >= purge_after]
                if drop:
                    idx = np.asarray(drop, dtype=np.int32) + base_rows
                    h.deleteRows(int(idx.size), idx)
                    for q in drop:
                        seen.discard(cut_keys[q])
                    keep = np.setdiff1d(np.arange(len(cut_keys)), drop)
                    cut_keys = [cut_keys[q] for q in keep]
                    cut_lower = [cut_lower[q] for q in keep]
                    slack_count = [slack_count[q] for q in keep]
                    n_removed = len(drop)
            ptr, jobs, coef = cuts.ptr, cuts.jobs, cuts.coef
            starts, index, value, lo_new = [0], [], [], []
            for k in fresh:
                a, b = int(ptr[k]), int(ptr[k + 1])
                index.append(jobs[a:b])
                value.append(coef[a:b] / float(cuts.load[k]))
                starts.append(starts[-1] + b - a)
                lo_new.append(float(rhs_d[k]))
                seen.add(keys[k])
                cut_keys.append(keys[k])
                cut_lower.append(float(rhs_d[k]))
                slack_count.append(0)
            m = len(fresh)
            h.addRows(m, np.asarray(lo_new), np.full(m, np.inf), int(starts[-1]),
                      np.asarray(starts[:-1], dtype=np.int32), np.concatenate(index).astype(np.int32),
                      np.concatenate(value))
            build_s += time.perf_counter() - t1
            per_round.append(m)
            removed.append(n_removed)

    assert last_x is not None
    total = time.perf_counter() - start
    message = stop_message(status, rounds, sum(per_round), last_obj, tol, max_violation, "minimize")
    result = SolveResult(Termination.OPTIMAL, True, last_obj, last_obj, 0.0, {"C": last_x}, "highs", "matrix",
                         build_s, solve_s, {"status": "Optimal", "route": "matrix"})
    rg = RowGenResult(result=result, status=status, objective=last_obj, sense="minimize", rounds=rounds,
                      cuts_per_round=tuple(per_round), removed_per_round=tuple(removed), n_rows=len(cut_keys),
                      max_violation=0.0 if status == "converged" else float(max_violation),
                      build_seconds=build_s, solve_seconds=solve_s, separation_seconds=sep_s, total_seconds=total,
                      model_build_seconds=model_build, message=message)
    (log.info if status == "converged" else log.warning)("%s; %s", rg.summary(), message)
    return last_obj, last_x.copy(), rg
