"""Paper 004 (Räcke, Schmid, Zabrodin): a lower bound on OPT_dyn that sees how far a cut moves (ours).

The cut-set bounds (:func:`~clusteropt.algorithms.ring.offline.dynamic_cut_bound`,
:mod:`clusteropt.models.ring.cut`) charge a change of labelling ``alpha / 2`` per edge whose cut
status changes.  A cut moved ``d`` edges changes two statuses, so they charge it ``alpha`` whatever
``d``, while a labelling pays for every process it moves: the reason they fall to about half of
OPT_dyn on the moving hot spot as ``k`` grows (``python -m benchmarks.ring_bound_quality``).  This
LP adds the processes.  Between request ``t - 1`` and request ``t`` (before the first: from the
initial assignment) let ``m[t, v] = 1`` when process ``v`` moves.  In any labelling sequence:

* an edge ``e = (e, e + 1)`` whose cut status changes has a moved endpoint:
  ``d[t, e] <= m[t, e] + m[t, e + 1]`` (row ``cover``);
* a run of moved processes ends only at an edge whose status changes or that is cut both before
  and after: if ``e`` is moved and ``e + 1`` is not (or the reverse) and the edge was uncut, the
  moved one now sits on another server than its unmoved neighbour, so the edge is cut after; if it
  was cut it is either uncut after (changed) or cut both times.  So
  ``|m[t, e] - m[t, e + 1]| <= d[t, e] + p[t, e]`` (rows ``run_right``, ``run_left``) with
  ``p[t, e] <= y[t - 1, e]`` and ``p[t, e] <= y[t, e]`` (rows ``persist_prev``, ``persist_now``:
  ``p`` is at most "cut both times").

Moving a cut ``d`` edges inside a stretch with no other cut now needs the ``d`` processes between
its old and new edge to move, or the blocks on both sides of it: the move is paid by the processes,
``alpha sum_v m[t, v]``, not by the statuses.  With the rows of the cut-set LP (``window``: every
``K`` consecutive edges hold a cut; ``move_up``, ``move_down``: ``d[t, e] >= |y[t, e] - y[t - 1, e]|``,
``y[0] = y0`` the initial assignment's cut statuses) and

    ``min  sum_t w_t y[t, e_t] + alpha sum_(t, v) m[t, v]``

on the run-length compressed requests ``(e_t, w_t)``, every labelling sequence gives a 0/1 point
(``y`` its cut statuses, ``d`` their changes, ``m`` its moves, ``p`` "cut both times") of cost
exactly its cost, so the LP optimum is at most OPT_dyn at capacity ``K`` (tested against the DP's
optimal schedules).  It is at least the cut-set LP without its min-move rows, since ``cover``
gives ``sum_v m >= sum_e d / 2``.  Every column lies in ``[0, 1]``.

The bound is certified without trusting the solver: any non-negative row multipliers give the
Lagrangian value ``lambda . lower + sum_j min(0, c_j - (A^T lambda)_j)`` (columns in ``[0, 1]``),
a lower bound by weak duality (:func:`clusteropt.verify.ring.box_lp_dual_bound`), evaluated on the
duals HiGHS returns.  The LP is solved whole (no pieces): ``4 T' n`` columns and ``8 T' n`` rows.
What it adds and costs is measured by ``python -m benchmarks.ring_bound_quality`` (column
``move_lp``, against the exact OPT_dyn).  Choices of ours: no min-move rows, HiGHS's interior
point method without crossover (only the duals are used).

References
----------
Räcke, Schmid, Zabrodin, "Dynamic Balanced Graph Partitioning for Ring Demands", SPAA 2023:
Sec. 1 (cost model, OPT_dyn), Thm 2.1 (OPT_dyn, bounded here from below); docs/algorithms/ring-partitioning.md A5
(offline optima).
"""

from __future__ import annotations

import dataclasses
import logging
import time
from typing import TYPE_CHECKING

import numpy as np
import pyomo.environ as pyo

from clusteropt.algorithms.ring.offline import compress_requests
from clusteropt.instances.ring import RingInstance
from clusteropt.models.registry import ModelSpec, register_model
from clusteropt.models.ring.cut import IPM_OPTIONS, _cap, _initial_cut, cut_lp_scaffold, previous_cut

if TYPE_CHECKING:
    import scipy.sparse as sp

__all__ = ["MoveLPBound", "build_ring_move_lp", "dynamic_move_lp_bound", "move_lp_arrays", "move_lp_point"]

log = logging.getLogger(__name__)

#: The row blocks of :func:`move_lp_arrays`, in order, each ``T' n`` rows.
ROWS = ("window", "move_up", "move_down", "cover", "run_right", "run_left", "persist_now", "persist_prev")
#: Its column blocks, in order, each ``T' n`` columns (``[t, e]`` at ``t n + e``; ``m`` indexed by process).
COLUMNS = ("y", "d", "m", "p")


def build_ring_move_lp(instance: RingInstance, relax: bool = False, capacity: int | None = None
                       ) -> pyo.ConcreteModel:
    """The move LP (module docstring) as a Pyomo model: a lower bound on OPT_dyn at ``capacity``.

    Parameters
    ----------
    instance : RingInstance
    relax : bool
        Ignored (the model is an LP); accepted so that ``--relax`` is harmless.
    capacity : int, optional
        ``K``, the load bound per server (default ``k``), in ``k..n-1``.

    Returns
    -------
    pyomo.environ.ConcreteModel
        Variables ``y[t, e]``, ``d[t, e]``, ``m[t, v]``, ``p[t, e]`` (``t = 1..T'``), the rows of
        :data:`ROWS`, objective ``cost``.

    References
    ----------
    Paper 004, Sec. 1 (cost model), Thm 2.1; docs/algorithms/ring-partitioning.md A5.

    Examples
    --------
    Two servers of two, 5 requests on edge 1: OPT_dyn = 2 (swap processes 1 and 3, or 0 and 2).
    The cut-set LP without min-move rows gives 1.5 (three half-moves of status); here the moves
    are paid per process:

    >>> from clusteropt.solvers import solve
    >>> inst = RingInstance(n=4, servers=2, requests=[1] * 5)
    >>> model = build_ring_move_lp(inst)
    >>> len(model.y), len(model.m), len(model.cover), solve(model).objective
    (4, 4, 4, 2.0)
    """
    n = instance.n
    m = cut_lp_scaffold(instance, capacity, name="ring-dynamic-move-lp", d_upper=1)
    m.m = pyo.Var(m.T, m.E, bounds=(0, 1), doc="m[t, v]: process v moves before request t")
    m.p = pyo.Var(m.T, m.E, bounds=(0, 1), doc="p[t, e] <= y[t-1, e], y[t, e]: e cut before and after")
    m.cover = pyo.Constraint(m.T, m.E, rule=lambda m, t, e: m.d[t, e] <= m.m[t, e] + m.m[t, (e + 1) % n],
                             doc="an edge whose status changes has a moved endpoint")
    m.run_right = pyo.Constraint(m.T, m.E, rule=lambda m, t, e: m.m[t, e] - m.m[t, (e + 1) % n]
                                 <= m.d[t, e] + m.p[t, e],
                                 doc="a run of moved processes ends at a changed or twice-cut edge")
    m.run_left = pyo.Constraint(m.T, m.E, rule=lambda m, t, e: m.m[t, (e + 1) % n] - m.m[t, e]
                                <= m.d[t, e] + m.p[t, e],
                                doc="a run of moved processes starts at a changed or twice-cut edge")
    m.persist_now = pyo.Constraint(m.T, m.E, rule=lambda m, t, e: m.p[t, e] <= m.y[t, e], doc="p[t, e] <= y[t, e]")
    m.persist_prev = pyo.Constraint(m.T, m.E, rule=lambda m, t, e: m.p[t, e] <= previous_cut(m, t, e),
                                    doc="p[t, e] <= y[t-1, e]")
    m.cost = pyo.Objective(expr=sum(m.w[t] * m.y[t, int(m.edges[t - 1])] for t in m.T)
                           + m.alpha * sum(m.m[t, v] for t in m.T for v in m.E),
                           sense=pyo.minimize, doc="requests on cut edges plus alpha per moved process")
    return m


def move_lp_arrays(n: int, capacity: int, edges, weights, alpha: float, start
                   ) -> tuple[np.ndarray, sp.csc_array, np.ndarray]:
    """The LP of :func:`build_ring_move_lp` on the given compressed requests, as arrays.

    Columns: the blocks of :data:`COLUMNS` (``[t, e]`` at ``b T' n + t n + e``), all in ``[0, 1]``;
    rows: the blocks of :data:`ROWS`, every row ``A x >= lower``.  ``start`` is ``y0``, the cut
    statuses before the first request.  Returns ``(cost, A, lower)``.
    """
    import scipy.sparse as sp  # here, not at the top: the CLI's listings import this module (tests/test_cli.py)

    edges = np.asarray(edges, dtype=np.int64)
    S = edges.size
    N = S * n
    y0 = np.asarray(start, dtype=float)
    cost = np.zeros(4 * N)
    cost[np.arange(S) * n + edges] = np.asarray(weights, dtype=float)
    cost[2 * N:3 * N] = alpha
    i = np.arange(N)
    t, e = i // n, i % n
    Y, D, M, P = i, N + i, 2 * N + i, 3 * N + i
    M1 = 2 * N + t * n + (e + 1) % n
    later = i >= n  # y[t-1, e] is a column; at t = 0 it is the constant y0_e (moved to the bound)
    Yp = (i - n)[later]
    rows: list[np.ndarray] = []
    cols: list[np.ndarray] = []
    vals: list[np.ndarray] = []

    def put(block: int, terms) -> None:
        for col, val, mask in terms:
            r = block * N + (i if mask is None else i[mask])
            rows.append(r)
            cols.append(col)
            vals.append(np.full(r.size, float(val)))

    win = (t * n)[:, None] + (e[:, None] + np.arange(capacity)) % n
    rows.append(np.repeat(i, capacity))
    cols.append(win.ravel())
    vals.append(np.ones(N * capacity))
    put(1, [(D, 1, None), (Y, -1, None), (Yp, 1, later)])   # move_up:   d - y_t + y_(t-1) >= 0
    put(2, [(D, 1, None), (Y, 1, None), (Yp, -1, later)])   # move_down: d + y_t - y_(t-1) >= 0
    put(3, [(M, 1, None), (M1, 1, None), (D, -1, None)])    # cover:     m_e + m_(e+1) - d >= 0
    put(4, [(D, 1, None), (P, 1, None), (M, -1, None), (M1, 1, None)])   # run_right: d + p - m_e + m_(e+1) >= 0
    put(5, [(D, 1, None), (P, 1, None), (M, 1, None), (M1, -1, None)])   # run_left:  d + p + m_e - m_(e+1) >= 0
    put(6, [(Y, 1, None), (P, -1, None)])                   # persist_now:  y_t - p >= 0
    put(7, [(Yp, 1, later), (P, -1, None)])                 # persist_prev: y_(t-1) - p >= 0
    a = sp.csc_array((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(8 * N, 4 * N))
    a.sum_duplicates()
    lower = np.zeros(8 * N)
    lower[:N] = 1.0
    lower[N:N + n] = -y0          # move_up at t = 0:   d - y_0 >= -y0
    lower[2 * N:2 * N + n] = y0   # move_down at t = 0: d + y_0 >= y0
    lower[7 * N:7 * N + n] = -y0  # persist_prev at t = 0: -p >= -y0
    return cost, a, lower


def move_lp_point(instance: RingInstance, placements) -> np.ndarray:
    """The 0/1 point of :func:`move_lp_arrays` of a labelling sequence (one labelling per compressed
    request): its cut statuses, their changes, its moves and the edges cut before and after.

    Its cost under the arrays is the sequence's cost (communication plus ``alpha`` per move), and it
    meets every row when every labelling's loads are at most the capacity: the relaxation's claim,
    tested against the DP's optimal schedules.
    """
    P = np.asarray(placements, dtype=np.int64)
    init = np.asarray(instance.initial, dtype=np.int64)
    full = np.vstack([init[None, :], P])
    y = (full != np.roll(full, -1, axis=1)).astype(float)
    d = np.abs(y[1:] - y[:-1])
    m = (full[1:] != full[:-1]).astype(float)
    p = np.minimum(y[1:], y[:-1])
    return np.concatenate([y[1:].ravel(), d.ravel(), m.ravel(), p.ravel()])


@dataclasses.dataclass(frozen=True)
class MoveLPBound:
    """Result of :func:`dynamic_move_lp_bound`.

    Attributes
    ----------
    value : float
        The certified lower bound on OPT_dyn at ``capacity`` (weak duality on HiGHS's duals).
    lp_value : float
        HiGHS's objective value (the LP optimum up to its tolerances; not itself certified).
    capacity : int
    steps : int
        ``T'``, compressed requests.
    columns, rows : int
    status : str
        HiGHS's model status.
    build_seconds, solve_seconds, certify_seconds : float
    """

    value: float
    lp_value: float
    capacity: int
    steps: int
    columns: int
    rows: int
    status: str
    build_seconds: float
    solve_seconds: float
    certify_seconds: float


#: :func:`dynamic_move_lp_bound` refuses an LP with more columns than this (``4 T' n``).
MAX_MOVE_LP_COLUMNS = 20_000_000


def dynamic_move_lp_bound(instance: RingInstance, capacity: int | None = None, *, options: dict | None = None,
                          time_limit: float | None = None, max_columns: int = MAX_MOVE_LP_COLUMNS
                          ) -> MoveLPBound:
    """A certified lower bound on OPT_dyn at ``capacity`` (default ``k``) from the move LP (ours).

    Solves :func:`move_lp_arrays` whole with HiGHS (``options``, default interior point without
    crossover) and certifies the row duals it returns with
    :func:`clusteropt.verify.ring.box_lp_dual_bound`: the value holds whatever the solver's
    accuracy; a solve that stops early (``time_limit``) still certifies what its duals give.
    A solve that returns no dual solution raises :class:`clusteropt.solvers.result.NotOptimalError`.

    Examples
    --------
    >>> inst = RingInstance(n=4, servers=2, requests=[1] * 5)   # OPT_dyn = 2
    >>> bound = dynamic_move_lp_bound(inst)
    >>> round(bound.value, 6), bound.steps, bound.columns, bound.rows
    (2.0, 1, 16, 32)
    """
    # here, not at the top: the CLI's listings must not pay for the solver layer (tests/test_cli.py)
    from clusteropt.solvers.direct import highs_termination, run_highs
    from clusteropt.solvers.result import NotOptimalError, SolveResult, Termination
    from clusteropt.verify.ring import box_lp_dual_bound

    n = instance.n
    cap = _cap(instance, capacity)
    edges, weights, _ = compress_requests(instance.requests)
    S = edges.size
    if 4 * S * n > max_columns:
        raise ValueError(f"move LP: 4 T' n = 4 x {S} x {n} = {4 * S * n} columns; more than max_columns = "
                         f"{max_columns}")
    if S == 0:
        return MoveLPBound(0.0, 0.0, cap, 0, 0, 0, "empty", 0.0, 0.0, 0.0)
    t0 = time.perf_counter()
    cost, a, lower = move_lp_arrays(n, cap, edges, weights, float(instance.alpha), _initial_cut(instance))
    build = time.perf_counter() - t0
    h, pass_seconds, solve = run_highs(cost, np.zeros(cost.size), np.ones(cost.size), a, lower,
                                       np.full(lower.size, np.inf), maximize=False,
                                       options=dict(IPM_OPTIONS if options is None else options),
                                       time_limit=time_limit)
    term, status = highs_termination(h)
    sol = h.getSolution()
    if not sol.dual_valid:
        result = SolveResult(termination=term, has_solution=False, objective=None, bound=None, gap=None,
                             values={}, solver="highs", backend="matrix", build_seconds=build + pass_seconds,
                             solve_seconds=solve, raw={"status": status, "route": "matrix"})
        raise NotOptimalError(f"move LP ({S} compressed requests, n = {n}): HiGHS stopped with {status} and no "
                              f"dual solution; no bound returned", result)
    if term is not Termination.OPTIMAL:
        log.warning("move LP: HiGHS stopped with %s; certifying its duals anyway (a valid, weaker bound)", status)
    t1 = time.perf_counter()
    value = box_lp_dual_bound(cost, a, lower, np.asarray(sol.row_dual))
    certify = time.perf_counter() - t1
    lp_value = float(h.getInfo().objective_function_value)
    log.info("move LP n=%d T'=%d: %s, LP %.6g, certified %.6g (build %.1f s, solve %.1f s)", n, S, status,
             lp_value, value, build + pass_seconds, solve)
    return MoveLPBound(value, lp_value, cap, S, int(cost.size), int(lower.size), status, build + pass_seconds,
                       solve, certify)


def _builder(instance: RingInstance, relax: bool = False, capacity: int | None = None):
    return build_ring_move_lp(instance, relax=relax, capacity=capacity)


register_model(ModelSpec(
    "ring-dynamic-move-lp", "ring", _builder, "pyomo",
    "paper 004 Sec. 1 / Thm 2.1: cut-set LP with process moves and run-end rows, a lower bound on dynamic OPT "
    "(the package's; docs/algorithms/ring-partitioning.md A5)"))
