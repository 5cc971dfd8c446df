"""Paper 004 (Räcke, Schmid, Zabrodin): a lower bound on OPT_dyn at any ``n``, the LP over cut sets (ours).

The exact dynamic optimum (:func:`~clusteropt.algorithms.ring.offline.dynamic_opt_dp`) stops at
``l^n = 2^22`` labellings and the time-expanded MILP
(:func:`~clusteropt.models.ring.offline.build_ring_dynamic_opt`) at a few dozen compressed requests;
its LP relaxation is at most ``alpha n / l`` whatever the requests.  This module relaxes OPT_dyn
differently: it forgets which server holds which process and keeps only which ring edges are
*cut*, as :func:`~clusteropt.algorithms.ring.offline.dynamic_cut_bound` does with a DP over
``2^n`` cut sets, and then relaxes the cut statuses to ``[0, 1]``.  The paper gives no offline
bound of its own (its comparator is OPT_dyn, Thm 2.1).

:func:`build_ring_cut_lp` (Pyomo; ``clusteropt solve / export --model ring-dynamic-cut-lp``), on the
run-length compressed requests ``(e_t, w_t)``, ``t = 1..T'``:

* ``y[t, e]`` in [0, 1]: edge ``e = (e, e + 1 mod n)`` is cut while request ``t`` is served;
  ``y[0, e] = y0_e`` is the initial assignment's cut status (a constant);
* ``window[t, j]``: ``sum_(i < K) y[t, j + i mod n] >= 1`` for every ``j``: ``K + 1``
  consecutive processes never share a server of capacity ``K``, so every ``K`` consecutive
  edges hold a cut (the condition of :func:`~clusteropt.algorithms.ring.offline.gap_cut`);
* ``d[t, e] >= |y[t, e] - y[t - 1, e]|`` (rows ``move_up`` and ``move_down``): moving one
  process changes the cut status of its two edges only, so ``alpha / 2`` per unit of status
  change under-counts the migration cost ``alpha Ham``;
* with ``min_move`` (the default), the moves between two requests cost ``c[t]`` with
  ``move_sum[t]``: ``c[t] >= alpha / 2 sum_e d[t, e]``, ``move_min[t]``: ``c[t] >= m z[t]`` and
  ``move_any[t, e]``: ``z[t] >= d[t, e]``: a change of labelling moves at least ``m`` (``2 alpha``
  when every server is full, since a process can only arrive where one leaves; else ``alpha``,
  the ``min_move`` of :func:`~clusteropt.algorithms.ring.offline.dynamic_window_bound`), and
  ``z[t] = 1`` at a 0/1 point whose cut set changes.  Without it, ``c[t] = alpha / 2 sum_e d[t, e]``;
* ``min sum_t w_t y[t, e_t] + sum_t c[t]``.

Every labelling sequence gives a 0/1 point of these rows with at most its cost, so the LP optimum
is at most OPT_dyn at capacity ``K``.  Without the min-move rows it is also at most the DP over
cut sets (:func:`~clusteropt.algorithms.ring.offline.dynamic_cut_bound`, which keeps integrality
and the ring's parity and charges at least ``alpha / 2`` per status change); with them its 0/1
points pay ``max(alpha / 2 |C xor C'|, m)`` per change of cut set, which that DP relaxes, so the
two are not ordered by construction (the 0/1 relations are tested).
It has ``2 T' n`` columns and ``3 T' n`` rows, plus ``2 T'`` columns and ``T' (n + 2)`` rows with
``min_move``: about half a million columns at ``n = 32`` and 8,000 compressed requests.  What the
min-move rows add to the bound, and to HiGHS's time, is recorded by
``python -m benchmarks.ring_cut_lp`` (columns ``lp0`` without them, ``lp`` with them).

:func:`dynamic_cut_lp_bound` is the route for long sequences.  It solves the same LP in
overlapping pieces of the sequence (``chunk`` compressed requests each, plus ``overlap`` on both
sides), takes the pieces' window-row duals as multipliers (and, with ``min_move``, each step's
switching weights ``alpha / 2 mu_t + nu[t, e]`` from the duals of ``move_sum`` and ``move_any``),
and evaluates the Lagrangian of the *whole* LP at those multipliers with
:func:`clusteropt.verify.ring.cut_lagrangian_bound`.  By weak duality that value is a lower bound
on OPT_dyn whatever the multipliers are, so neither the split nor the solver's tolerances can make
it invalid; they can only make it lower than the LP optimum.  With one piece holding every request
it is the LP optimum up to the solver's tolerance (tested).

How the pieces are joined is a choice of ours, ``sweeps``.  The Lagrangian splits by edge into
two-state shortest paths, so with the multipliers outside a piece fixed, the best multipliers of the
piece are the duals of the piece's LP priced at its two ends by the cheapest paths through the
requests before and after it (``_Sweep``): block coordinate ascent on the Lagrangian.  A sweep
(default one, from zero multipliers) solves the pieces in order that way, and no piece lowers the
bound; more sweeps approach the LP optimum, but may stall below it (the dual is not smooth).
``sweeps = 0`` is the route before sweeps existed: independent pieces, each but the first from a
free start, each keeping the duals of its own ``chunk`` requests; where the optimum plans far ahead
(the moving hot spot) it loses much of the LP.

Choices of ours, each a parameter: ``min_move`` (default on), ``chunk`` (default 500), ``overlap``
(50), ``sweeps`` (1), and HiGHS's interior point method without crossover (``options``: only the
duals are used, and any non-negative ones certify a bound, so no basis is needed).  What the routes
certify and their time per instance are recorded by ``python -m benchmarks.ring_cut_lp`` and
``python -m benchmarks.ring_dynamic_bracket`` (column ``LP s``).

References
----------
Räcke, Schmid, Zabrodin, "Dynamic Balanced Graph Partitioning for Ring Demands", SPAA 2023:
Sec. 1 (cost model, OPT_dyn), Thm 2.1; docs/algorithms/ring-partitioning.md A5 (offline optima).
"""

from __future__ import annotations

import dataclasses
import logging
import time
from typing import TYPE_CHECKING

import numpy as np
import pyomo.environ as pyo

from clusteropt.algorithms.ring.offline import compress_requests, min_move_cost
from clusteropt.instances.ring import RingInstance
from clusteropt.models.registry import ModelSpec, register_model
from clusteropt.verify.ring import cut_lagrangian_bound, switching_excess

if TYPE_CHECKING:
    import scipy.sparse as sp

__all__ = ["CHUNK", "IPM_OPTIONS", "OVERLAP", "SWEEPS", "CutLPBound", "build_ring_cut_lp", "cut_lp_arrays",
           "cut_lp_scaffold", "dynamic_cut_lp_bound", "previous_cut"]

log = logging.getLogger(__name__)

#: Default compressed requests per piece of :func:`dynamic_cut_lp_bound`.
CHUNK = 500
#: Default compressed requests solved on each side of a piece (with ``sweeps = 0`` their duals are dropped).
OVERLAP = 50
#: Default sweeps of :func:`dynamic_cut_lp_bound` (block coordinate ascent; 0: independent pieces).
SWEEPS = 1
#: Default HiGHS options of :func:`dynamic_cut_lp_bound`: interior point, no crossover (only the
#: row duals are used, and any non-negative ones give a valid bound).
IPM_OPTIONS = {"solver": "ipm", "run_crossover": "off"}


def _cap(instance: RingInstance, capacity) -> int:
    n = instance.n
    if instance.servers < 2:
        raise ValueError(f"servers = {instance.servers}: one server holds every process and nothing is ever cut; "
                         f"the cut-set LP needs servers >= 2")
    cap = instance.k if capacity is None else capacity
    if not isinstance(cap, (int, np.integer)) or not instance.k <= cap <= n - 1:
        raise ValueError(f"capacity = {capacity!r}; expected an integer in k..n-1 = {instance.k}..{n - 1} (with n "
                         f"or more one server may hold every process and the LP has no window row)")
    return int(cap)


def _initial_cut(instance: RingInstance) -> np.ndarray:
    init = np.asarray(instance.initial, dtype=np.int64)
    return (init != np.roll(init, -1)).astype(float)


def cut_lp_scaffold(instance: RingInstance, capacity: int | None, *, name: str, d_upper: float | None
                    ) -> pyo.ConcreteModel:
    """The rows every LP over cut statuses shares (module docstring): sets ``T`` (compressed
    requests) and ``E`` (edges), parameters ``K``, ``alpha``, ``w``, ``y0``, variables ``y[t, e]``
    in [0, 1] and ``d[t, e]`` in ``[0, d_upper]``, rows ``window``, ``move_up``, ``move_down``;
    ``m.edges``, ``m.weights``, ``m.capacity_value`` hold the compressed requests and ``K``.
    :func:`build_ring_cut_lp` and :func:`clusteropt.models.ring.move.build_ring_move_lp` add their
    own columns, rows and objective.
    """
    n = instance.n
    cap = _cap(instance, capacity)
    edges, weights, _ = compress_requests(instance.requests)
    y0 = _initial_cut(instance)
    m = pyo.ConcreteModel(name=f"{name}-n{n}-l{instance.servers}")
    m.T = pyo.RangeSet(1, len(edges), doc="compressed requests t = 1..T' (runs of one edge merged)")
    m.E = pyo.Set(initialize=range(n), doc="ring edges e = (e, e+1 mod n); also processes v and window starts j")
    m.K = pyo.Param(initialize=cap, doc="K: server capacity (k = n / l unless given)")
    m.alpha = pyo.Param(initialize=float(instance.alpha), doc="alpha: cost per migrated process (Sec. 1)")
    m.w = pyo.Param(m.T, initialize={t + 1: int(w) for t, w in enumerate(weights.tolist())},
                    doc="w_t: requests merged into compressed request t")
    m.y0 = pyo.Param(m.E, initialize=dict(enumerate(y0.tolist())),
                     doc="y0_e: edge e cut by the initial assignment")
    m.edges, m.weights, m.capacity_value = edges, weights, cap
    m.y = pyo.Var(m.T, m.E, bounds=(0, 1), doc="y[t, e]: edge e cut while request t is served (relaxed)")
    m.d = pyo.Var(m.T, m.E, bounds=(0, d_upper), doc="d[t, e] >= |y[t, e] - y[t-1, e]|: e's status changes")
    m.window = pyo.Constraint(m.T, m.E, rule=lambda m, t, j: sum(m.y[t, (j + i) % n] for i in range(cap)) >= 1,
                              doc="every K consecutive edges hold a cut (K + 1 processes never share a server)")
    m.move_up = pyo.Constraint(m.T, m.E, rule=lambda m, t, e: m.d[t, e] >= m.y[t, e] - previous_cut(m, t, e),
                               doc="d[t, e] >= y[t, e] - y[t-1, e]")
    m.move_down = pyo.Constraint(m.T, m.E, rule=lambda m, t, e: m.d[t, e] >= previous_cut(m, t, e) - m.y[t, e],
                                 doc="d[t, e] >= y[t-1, e] - y[t, e]")
    return m


def previous_cut(m: pyo.ConcreteModel, t: int, e: int):
    """``y[t - 1, e]`` of a :func:`cut_lp_scaffold` model, the constant ``y0_e`` at ``t = 1``."""
    return m.y[t - 1, e] if t > 1 else m.y0[e]


def build_ring_cut_lp(instance: RingInstance, relax: bool = False, capacity: int | None = None,
                      min_move: bool = True) -> pyo.ConcreteModel:
    """The cut-set LP (module docstring) as a Pyomo model: a lower bound on OPT_dyn at ``capacity``.

    Parameters
    ----------
    instance : RingInstance
    relax : bool
        Ignored (the model is an LP); accepted so that ``--relax`` is harmless.
    capacity : int, optional
        ``K``, the load bound per server (default ``k``), in ``k..n-1``.
    min_move : bool
        Add the rows ``move_sum``, ``move_min``, ``move_any`` (module docstring; default).  False
        is the LP without them, ``alpha / 2`` per unit of status change.

    Returns
    -------
    pyomo.environ.ConcreteModel
        Variables ``y[t, e]``, ``d[t, e]`` and ``c[t]`` (``t = 1..T'``; ``z[t]`` with
        ``min_move``), rows ``window[t, j]``, ``move_up[t, e]``, ``move_down[t, e]`` (and the
        min-move rows), objective ``cost``; ``m.edges`` and ``m.weights`` hold the compressed
        requests, ``m.min_move_value`` the ``m`` used (0 without the rows).

    References
    ----------
    Paper 004, Sec. 1 (cost model), Thm 2.1 (OPT_dyn, bounded here from below);
    docs/algorithms/ring-partitioning.md A5.

    Examples
    --------
    >>> from clusteropt.solvers import solve
    >>> inst = RingInstance(n=4, servers=2, requests=[1] * 5)   # OPT_dyn = 2 (swap two processes)
    >>> m0 = build_ring_cut_lp(inst, min_move=False)
    >>> len(m0.y), len(m0.window), solve(m0).objective   # uncut edge 1, cut edges 0 and 2: three half-moves
    (4, 4, 1.5)
    >>> solve(build_ring_cut_lp(inst)).objective   # a change of labelling moves two processes
    2.0
    """
    m = cut_lp_scaffold(instance, capacity, name="ring-dynamic-cut-lp", d_upper=None)
    m.c = pyo.Var(m.T, domain=pyo.NonNegativeReals, doc="c[t]: the moves' cost before request t")
    m.move_sum = pyo.Constraint(m.T, rule=lambda m, t: m.c[t] >= m.alpha / 2 * sum(m.d[t, e] for e in m.E),
                                doc="c[t] >= alpha / 2 sum_e d[t, e] (one moved process changes two edges)")
    m.min_move_value = (min_move_cost(instance.n, instance.servers, m.capacity_value, float(instance.alpha))
                        if min_move else 0.0)
    if min_move:
        m.m = pyo.Param(initialize=m.min_move_value, doc="m: the least cost of changing the labelling at all")
        m.z = pyo.Var(m.T, domain=pyo.NonNegativeReals, doc="z[t] >= d[t, e]: the cut set changes before t")
        m.move_min = pyo.Constraint(m.T, rule=lambda m, t: m.c[t] >= m.m * m.z[t], doc="c[t] >= m z[t]")
        m.move_any = pyo.Constraint(m.T, m.E, rule=lambda m, t, e: m.z[t] >= m.d[t, e], doc="z[t] >= d[t, e]")
    m.cost = pyo.Objective(expr=sum(m.w[t] * m.y[t, int(m.edges[t - 1])] for t in m.T) + sum(m.c[t] for t in m.T),
                           sense=pyo.minimize, doc="requests on cut edges plus the moves' cost")
    return m


def cut_lp_arrays(n: int, capacity: int, edges, weights, alpha: float, start, min_move: float = 0.0
                  ) -> tuple[np.ndarray, sp.csc_array, np.ndarray, np.ndarray]:
    """The LP of :func:`build_ring_cut_lp` on the given compressed requests, as arrays.

    Columns ``y[t, e]`` (index ``t n + e``) then ``d[t, e]``; rows ``window[t, j]`` (``t n + j``),
    then ``move_up``, then ``move_down``, every row ``A z >= lower``.  ``start`` is ``y[0]`` (the
    cut statuses before the first request), or ``None`` for a free start: the first request's
    ``move`` rows get lower bound ``-inf``.  With ``min_move = m > 0`` the columns ``c[t]`` and
    ``z[t]`` follow and the rows ``move_sum[t]``, ``move_min[t]``, ``move_any[t, e]``; ``d``
    costs nothing and ``c`` one.  Without it ``d`` costs ``alpha / 2`` (``c`` eliminated).

    Returns ``(cost, A, lower, upper)``, ``upper`` the column upper bounds (1 for ``y``, ``inf``
    for the others; every column is ``>= 0``).
    """
    import scipy.sparse as sp  # here, not at the top: the CLI's listings import this module (tests/test_cli.py)

    edges = np.asarray(edges, dtype=np.int64)
    S = edges.size
    N = S * n
    cost = np.zeros(2 * N)
    cost[np.arange(S) * n + edges] = np.asarray(weights, dtype=float)
    cost[N:] = alpha / 2.0
    t = np.repeat(np.arange(S), n)
    j = np.tile(np.arange(n), S)
    win_cols = (t * n)[:, None] + (j[:, None] + np.arange(capacity)) % n
    i = np.arange(N)
    rows = [np.repeat(i, capacity)]
    cols = [win_cols.ravel()]
    vals = [np.ones(N * capacity)]
    later = i[i >= n]
    for block, sign in ((1, 1.0), (2, -1.0)):  # move_up: d - y_t + y_(t-1) >= 0; move_down: d + y_t - y_(t-1) >= 0
        r = block * N + i
        rows += [r, r, block * N + later]
        cols += [N + i, i, later - n]
        vals += [np.ones(N), np.full(N, -sign), np.full(later.size, sign)]
    a = sp.csc_array((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(3 * N, 2 * N))
    lower = np.concatenate([np.ones(N), np.zeros(2 * N)])
    if start is None:
        lower[N:N + n] = lower[2 * N:2 * N + n] = -np.inf
    else:
        y0 = np.asarray(start, dtype=float)
        lower[N:N + n] = -y0  # d - y_1 >= -y0
        lower[2 * N:2 * N + n] = y0  # d + y_1 >= y0
    upper = np.r_[np.ones(N), np.full(N, np.inf)]
    if min_move <= 0:
        return cost, a, lower, upper
    cost[N:] = 0.0
    c_col, z_col, step = 2 * N + np.arange(S), 2 * N + S + np.arange(S), np.arange(S)
    rows = [step, t, S + step, S + step, 2 * S + i, 2 * S + i]
    cols = [c_col, N + i, c_col, z_col, z_col[t], N + i]
    vals = [np.ones(S), np.full(N, -alpha / 2.0), np.ones(S), np.full(S, -float(min_move)),
            np.ones(N), -np.ones(N)]
    b = sp.csc_array((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                     shape=(2 * S + N, 2 * N + 2 * S))
    a = sp.vstack([sp.hstack([a, sp.csc_array((3 * N, 2 * S))]), b], format="csc")
    return (np.r_[cost, np.ones(S), np.zeros(S)], a, np.r_[lower, np.zeros(2 * S + N)],
            np.r_[upper, np.full(2 * S, np.inf)])


@dataclasses.dataclass(frozen=True, eq=False)
class CutLPBound:
    """Result of :func:`dynamic_cut_lp_bound`.

    Attributes
    ----------
    value : float
        The certified lower bound on OPT_dyn at ``capacity``:
        ``cut_lagrangian_bound(instance, multipliers, capacity=capacity, switching=switching)``.
    multipliers : float array (T', n)
        Window-row multipliers (``>= 0``) per compressed request and window start; an outside
        checker re-computes ``value`` from them, ``switching`` and the instance.
    switching : float array (T', n) or None
        With ``min_move``: each step's switching weights (``cut_lagrangian_bound(...,
        switching=)``); None: ``alpha / 2``.
    piece_values : float array
        Each piece's LP optimum as HiGHS reported it, in the last sweep (not a bound on anything by
        itself: a piece of a sweep is priced by the other pieces' multipliers).
    sweep_values : float array
        The certified bound after each sweep (one value with ``sweeps = 0``); ``value`` is the
        largest, and its sweep's multipliers are the ones returned.
    capacity, chunk, overlap, sweeps : int
    min_move : float
        The ``m`` of the min-move rows (0: without them).
    options : dict
        HiGHS options used.
    build_seconds, solve_seconds, certify_seconds : float
        Building the pieces' arrays (with their boundary prices) and handing them to HiGHS; HiGHS's
        runs; the Lagrangian after each sweep.
    """

    value: float
    multipliers: np.ndarray
    switching: np.ndarray | None
    piece_values: np.ndarray
    sweep_values: np.ndarray
    capacity: int
    chunk: int
    overlap: int
    sweeps: int
    min_move: float
    options: dict
    build_seconds: float
    solve_seconds: float
    certify_seconds: float

    @property
    def n_steps(self) -> int:
        """``T'``, the compressed requests."""
        return int(self.multipliers.shape[0])


def _lagrangian_costs(lam: np.ndarray, edges: np.ndarray, weights: np.ndarray, cap: int) -> np.ndarray:
    """Rows ``s`` of the Lagrangian's per-edge costs ``w_s [e = e_s] - sum_(i < cap) lam[s, e - i mod n]``.

    The same costs :func:`clusteropt.verify.ring.cut_lagrangian_bound` computes on its own.
    """
    c = np.zeros(lam.shape)
    for i in range(cap):  # window j covers edges j..j + cap - 1, so edge e is in windows e - cap + 1..e
        c -= np.roll(lam, i, axis=1)
    c[np.arange(edges.size), edges] += weights
    return c


class _Sweep:
    """Prices of the requests outside one piece, for a sweep of :func:`dynamic_cut_lp_bound` (ours).

    With the multipliers of every other request fixed, the whole LP's Lagrangian splits by edge
    into two-state shortest paths, so the best multipliers of one piece's requests are the window
    duals of the piece's LP with two boundary prices: reaching cut status ``y`` at the piece's
    first request costs ``F_e(y)`` (the cheapest path through the requests before it, plus the
    switch into the piece), and leaving cut status ``y`` at its last costs ``B_e(y)`` (the requests
    after it).  Both are linear in a fractional ``y`` (a path with fractional statuses is an
    average of 0/1 paths, its level sets), so they enter the piece's LP as costs ``F_e(1) - F_e(0)``
    and ``B_e(1) - B_e(0)`` on ``y[first, e]`` and ``y[last, e]``.  A forward sweep solves the pieces
    in order: the prices ``B`` at every piece's end are computed once, from the multipliers at the
    sweep's start (the pieces after it are not yet solved in this sweep), and ``F`` is carried
    forward as the pieces are solved.
    """

    def __init__(self, instance: RingInstance, edges, weights, cap: int, lam, sw, his):
        n, S = instance.n, edges.size
        self.edges, self.weights, self.cap, self.lam, self.sw = edges, weights, cap, lam, sw
        self.departure = {S: (np.zeros(n), np.zeros(n))}
        c = _lagrangian_costs(lam, edges, weights, cap)
        u0, u1 = np.zeros(n), np.zeros(n)  # steps s + 1.. given the status at s (switch into s + 1 included)
        for s in range(S - 1, 0, -1):
            a1 = u1 + c[s]
            u0, u1 = np.minimum(u0, a1 + sw[s]), np.minimum(a1, u0 + sw[s])
            if s in his:
                self.departure[s] = (u0, u1)
        cut0 = _initial_cut(instance) > 0
        self.pos = 0  # forward values after the requests before pos, ending uncut / cut
        self.v0, self.v1 = np.where(cut0, np.inf, 0.0), np.where(cut0, 0.0, np.inf)

    def arrival(self, lo: int) -> tuple[np.ndarray, np.ndarray]:
        """``F(0), F(1)`` at request ``lo >= 1``, from the current multipliers of the requests before it."""
        rows = slice(self.pos, lo)
        c = _lagrangian_costs(self.lam[rows], self.edges[rows], self.weights[rows], self.cap)
        v0, v1 = self.v0, self.v1
        for row, h in zip(c, self.sw[rows], strict=True):
            v0, v1 = np.minimum(v0, v1 + h), np.minimum(v1, v0 + h) + row
        self.v0, self.v1, self.pos = v0, v1, lo
        h = self.sw[lo]
        return np.minimum(v0, v1 + h), np.minimum(v1, v0 + h)


def dynamic_cut_lp_bound(instance: RingInstance, capacity: int | None = None, *, chunk: int = CHUNK,
                         overlap: int = OVERLAP, sweeps: int = SWEEPS, min_move: bool = True,
                         options: dict | None = None, time_limit: float | None = None) -> CutLPBound:
    """A lower bound on OPT_dyn at ``capacity`` from the cut-set LP, solved in pieces and certified.

    See the module docstring: the LP of :func:`build_ring_cut_lp` is solved by HiGHS on pieces of
    ``chunk`` compressed requests (with ``overlap`` more on each side); the window-row duals of the
    pieces become the multipliers, and :func:`clusteropt.verify.ring.cut_lagrangian_bound`
    evaluates the whole LP's Lagrangian there.

    ``sweeps >= 1`` (default 1) is block coordinate ascent on that Lagrangian (ours): starting from
    zero multipliers, each sweep solves the pieces in order, each priced at its two ends by the
    requests outside it (``_Sweep``), and takes the piece's duals for all its requests, overlap
    included, so no step of a sweep lowers the bound (up to the solver's tolerance) and more sweeps
    approach the LP optimum.  ``sweeps = 0`` is the previous route: independent pieces, the first
    from the initial cut statuses and the others from a free start, each keeping the duals of its
    own ``chunk`` requests only.  What each route certifies, and in what time, is recorded by
    ``python -m benchmarks.ring_cut_lp``.

    Parameters
    ----------
    instance : RingInstance
    capacity : int, optional
        Load bound per server (default ``k``), in ``k..n-1``.
    chunk, overlap : int
        Piece length (>= 1) and the extra requests solved on each side (>= 0).
    sweeps : int
        Sweeps of block coordinate ascent (>= 0; 0: independent pieces).
    min_move : bool
        With the min-move rows (default; see :func:`build_ring_cut_lp`).
    options : dict, optional
        HiGHS options (default :data:`IPM_OPTIONS`).
    time_limit : float, optional
        Seconds per piece.

    Raises
    ------
    ValueError
        A bad capacity, chunk, overlap or sweeps.
    NotOptimalError
        A piece's LP did not solve to optimality (its duals would still certify a bound, but a
        weaker one nobody asked for; nothing is returned).

    Examples
    --------
    >>> from clusteropt.instances.ring import RingInstance
    >>> inst = RingInstance(n=4, servers=2, requests=[1] * 5 + [0] * 3)
    >>> b = dynamic_cut_lp_bound(inst, options={})   # one piece: the LP optimum, here OPT_dyn = 4 (the DP)
    >>> round(b.value, 6), b.multipliers.shape, b.switching.shape
    (4.0, (2, 4), (2, 4))
    >>> round(dynamic_cut_lp_bound(inst, min_move=False, options={}).value, 6)
    2.5

    Pieces of one compressed request: independent pieces lose what a sweep recovers; without the
    min-move rows one sweep reaches the LP optimum here, with them the sweeps stall at 4 (block
    coordinate ascent may stop below the optimum of a non-smooth dual) and the LP is 5:

    >>> two = RingInstance(n=4, servers=2, requests=[1] * 5 + [0] * 3 + [1] * 4)
    >>> def bound(**kw):
    ...     return round(dynamic_cut_lp_bound(two, options={}, **kw).value, 6)
    >>> [bound(chunk=1, overlap=0, sweeps=s, min_move=False) for s in (0, 1)], bound(min_move=False)
    ([1.5, 3.5], 3.5)
    >>> [bound(chunk=1, overlap=0, sweeps=s) for s in (0, 1, 2)], bound()
    ([2.0, 4.0, 4.0], 5.0)
    """
    # here, not at the top: the package imports this module to register the model, and the CLI's
    # listings must not pay for the solver layer (tests/test_cli.py)
    from clusteropt.solvers.direct import highs_termination, run_highs
    from clusteropt.solvers.result import NotOptimalError, SolveResult, Termination

    n = instance.n
    cap = _cap(instance, capacity)
    if not isinstance(chunk, (int, np.integer)) or chunk < 1:
        raise ValueError(f"chunk = {chunk!r}; expected an integer >= 1 (compressed requests per piece)")
    if not isinstance(overlap, (int, np.integer)) or overlap < 0:
        raise ValueError(f"overlap = {overlap!r}; expected an integer >= 0")
    if not isinstance(sweeps, (int, np.integer)) or isinstance(sweeps, bool) or sweeps < 0:
        raise ValueError(f"sweeps = {sweeps!r}; expected an integer >= 0 (0: independent pieces)")
    opts = dict(IPM_OPTIONS if options is None else options)
    edges, weights, _ = compress_requests(instance.requests)
    S = edges.size
    alpha = float(instance.alpha)
    mm = min_move_cost(n, instance.servers, cap, alpha) if min_move else 0.0
    lam = np.zeros((S, n))
    sw = np.full((S, n), alpha / 2.0)
    starts = range(0, S, chunk)
    his = {min(S, a + chunk + overlap) for a in starts}
    build = solve = certify = 0.0
    best: tuple[float, np.ndarray, np.ndarray] | None = None
    sweep_values: list[float] = []
    values: list[float] = []

    def piece(a: int, lo: int, hi: int, first, last) -> np.ndarray:
        nonlocal build, solve
        t0 = time.perf_counter()
        cost, mat, lower, upper = cut_lp_arrays(n, cap, edges[lo:hi], weights[lo:hi], alpha,
                                                _initial_cut(instance) if lo == 0 else None, mm)
        P = (hi - lo) * n
        if first is not None:
            cost[:n] += first
        if last is not None:
            cost[P - n:P] += last
        h, _, run_s = run_highs(cost, np.zeros(cost.size), upper, mat, lower, np.full(lower.size, np.inf),
                                maximize=False, options=opts, time_limit=time_limit)
        build += time.perf_counter() - t0 - run_s
        solve += run_s
        term, status = highs_termination(h)
        if term is not Termination.OPTIMAL:
            result = SolveResult(termination=term, has_solution=False, objective=None, bound=None, gap=None,
                                 values={}, solver="highs", backend="matrix", build_seconds=build,
                                 solve_seconds=run_s, raw={"status": status, "route": "matrix"})
            raise NotOptimalError(f"cut-set LP piece {a}..{min(S, a + chunk) - 1} of {S} compressed requests: "
                                  f"HiGHS stopped with {status}; no bound returned", result)
        values.append(float(h.getInfo().objective_function_value))
        log.debug("cut LP piece %d..%d: %.6g in %.2f s", lo, hi, values[-1], run_s)
        return np.asarray(h.getSolution().row_dual)

    def switching(row_dual: np.ndarray, steps: int) -> np.ndarray:
        """Each step's switching weights from the duals, scaled to be valid.

        ``d[t, e]``'s column reads ``move_up + move_down <= alpha / 2 mu_t + nu[t, e]`` (rows
        ``move_sum``, ``move_any``).
        """
        P = steps * n
        mu = np.maximum(row_dual[3 * P:3 * P + steps], 0.0)
        nu = np.maximum(row_dual[3 * P + 2 * steps:].reshape(steps, n), 0.0)
        w = alpha / 2.0 * mu[:, None] + nu
        return w / np.maximum(1.0, switching_excess(w, alpha, mm))[:, None]

    def finish_sweep() -> None:
        nonlocal certify, best
        t0 = time.perf_counter()
        v = cut_lagrangian_bound(instance, lam, capacity=cap, switching=sw if mm > 0 else None)
        certify += time.perf_counter() - t0
        sweep_values.append(v)
        if best is None or v > best[0]:
            best = (v, lam.copy(), sw.copy())

    if sweeps == 0:
        for a in starts:
            lo, hi = max(0, a - overlap), min(S, a + chunk + overlap)
            row_dual = piece(a, lo, hi, None, None)
            own = slice(a - lo, a - lo + min(chunk, S - a))
            lam[a:a + chunk] = np.maximum(row_dual[:(hi - lo) * n].reshape(hi - lo, n)[own], 0.0)
            if mm > 0:
                sw[a:a + chunk] = switching(row_dual, hi - lo)[own]
        finish_sweep()
    for _ in range(sweeps):
        values.clear()
        t0 = time.perf_counter()
        prices = _Sweep(instance, edges, weights, cap, lam, sw, his)
        build += time.perf_counter() - t0
        for a in starts:
            lo, hi = max(0, a - overlap), min(S, a + chunk + overlap)
            t0 = time.perf_counter()
            first = None if lo == 0 else np.subtract(*prices.arrival(lo)[::-1])
            last = np.subtract(*prices.departure[hi][::-1])
            build += time.perf_counter() - t0
            row_dual = piece(a, lo, hi, first, last)
            lam[lo:hi] = np.maximum(row_dual[:(hi - lo) * n].reshape(hi - lo, n), 0.0)
            if mm > 0:  # the switch into a later piece's first request is priced outside it (F): kept
                keep = 0 if lo == 0 else 1
                sw[lo + keep:hi] = switching(row_dual, hi - lo)[keep:]
        finish_sweep()
    assert best is not None
    value, lam, sw_best = best
    return CutLPBound(value=value, multipliers=lam, switching=sw_best if mm > 0 else None,
                      piece_values=np.asarray(values), sweep_values=np.asarray(sweep_values), capacity=cap,
                      chunk=int(chunk), overlap=int(overlap), sweeps=int(sweeps), min_move=mm, options=opts,
                      build_seconds=build, solve_seconds=solve, certify_seconds=certify)


def _builder(instance: RingInstance, relax: bool = False, capacity: int | None = None):
    return build_ring_cut_lp(instance, relax=relax, capacity=capacity)


register_model(ModelSpec(
    "ring-dynamic-cut-lp", "ring", _builder, "pyomo",
    "paper 004 Sec. 1 / Thm 2.1: LP over cut sets, a lower bound on dynamic OPT at any n "
    "(the package's; docs/algorithms/ring-partitioning.md A5)"))
