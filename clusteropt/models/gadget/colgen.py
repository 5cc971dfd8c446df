"""Paper 000 (GADGET), Alg. 2 lines 4-6 by column generation: the augmented LP over valid mappings.

The augmented LP of Alg. 2 line 4 (:func:`clusteropt.models.gadget.embedding.build_embedding_lp`,
tree form) keeps, per job and tree node, the distribution of "the subtree holds k workers": about
``kappa_i^2`` variables per job and tree link, hence a size that grows with jobs x servers x
``kappa^2``, and a HiGHS solve that dominates LP-RS-MDE's slot from a hundred servers on.  Its
per-job polytope is exact (the local polytope of a tree-structured model): every solution is a
convex combination of integral placements, scaled by ``x[i]``.  So the same LP is, written over
the placements themselves (Dantzig-Wolfe; the "valid mappings" ``omega_i^k`` with weights
``varphi_i^k`` of Alg. 2 lines 5-6)::

    max   sum_i pi[i, kappa_i] sum_m varphi[i, m]                              (12)
    s.t.  sum_m varphi[i, m] <= 1                                       (13), per job i
          sum_{i, m} l_i^r count_s(m) varphi[i, m] <= C_s^r             (16), (18), per server s, type r
          sum_{i, m : m crosses e} b_i varphi[i, m] <= e_s^e            (17), (19), per directed link e
          varphi >= 0

with ``m`` over the placements of ``kappa_i`` workers, at most ``floor(min_r C_s^r / l_i^r)`` on
server s (the tree LP's ``own_cap``); a placement crosses the link above tree node c (both
directions) when the subtree of c holds between 1 and ``kappa_i - 1`` of its workers (the ring in
depth-first order, :mod:`clusteropt.models.gadget.gvne`).  The same optimum as the tree LP, which
``tests/models/test_gadget_colgen.py`` checks on random instances.

:func:`solve_embedding_colgen` solves it with a restricted master on a live ``highspy.Highs``
(columns added with ``addCols``, each re-solve by primal simplex from the last basis) and *pricing* by a
dynamic program over the tree (:func:`price_placements`): with the master's row duals as prices
``sigma_s^r >= 0`` and ``tau_e >= 0`` the cheapest placement of job i minimises::

    sum_s count_s (l_i . sigma_s) + b_i sum_{c crossed} (tau_up(c) + tau_down(c))

bottom-up: ``F_c[k]`` (cheapest way for c's subtree to hold k workers) is the min-plus convolution
of its parts (the server's own workers, then every child's ``F_d`` plus the link charge for
``0 < k < kappa_i``), at most ``O(kappa^2)`` per tree link, all jobs at once in numpy.  A placement
enters when its reduced profit ``pi_i - u_i - cost`` is above ``tol``; when none is, the master
is optimal for the full LP.  Every round also gives the Lagrangian upper bound (capacity rows
priced by ``sigma, tau``)::

    LP <= sum sigma C + sum tau e + sum_i max(0, pi_i - cost_i*)

reported as :attr:`ColgenResult.bound`.  The master's solution *is* the decomposition of Alg. 2
lines 5-6: per job, the placements with positive weight, as :class:`Mapping` objects, in the format
of :func:`clusteropt.models.gadget.embedding.decompose_embedding`.  The master gains at most one
placement per job and round (39-71 rounds a slot in ``python -m benchmarks.gadget_servers``), and
pricing is linear in the tree's links, so the route scales with servers where the tree LP does not.

Not the paper's construction (it builds the augmented LP on Rost and Schmid's extended graph and
decomposes its solution); the same LP and the same kind of decomposition, reached another way.  An
optimal LP can have several optimal decompositions, so a run through this route draws other
mappings than the tree LP's run with the same seed: ``lp_rs_mde(embed_route="colgen")`` names it.

Compiled.  The pricing DP's min-plus convolutions (thousands of small ones a round, one per tree
height and part position) were most of a slot at a thousand servers in numpy, which pays a
temporary array and a pass per shifted comparison; :func:`_min_plus` runs a numba kernel cell by
cell instead (the same sums and the same tie rule, so the same placements; ``CLUSTEROPT_JIT``,
:data:`JIT_MIN_CELLS`, :mod:`clusteropt.jit`), measured by ``python -m benchmarks.gadget_pricing``.
The rest of the DP (gathering the parts, reading the placements back) stays in numpy.

References
----------
Yu et al., GADGET (paper 000): Eqs. (12)-(19), Alg. 2 lines 4-6.  Dantzig and Wolfe, "Decomposition
principle for linear programs" (1960); the pricing is a tree knapsack by min-plus convolution.
"""

from __future__ import annotations

import dataclasses
import logging
import math
import time
from typing import Any

import highspy
import numpy as np

from clusteropt.decisions.gadget import Mapping
from clusteropt.models.gadget.gvne import SlotProblem, TreeLayout, tree_layout
from clusteropt.models.gadget.trees import check_kappa, preorder, server_fit, tree_mapping, tree_parts
from clusteropt.solvers.direct import highs_termination
from clusteropt.solvers.highs import new_highs, run_live
from clusteropt.solvers.result import NotOptimalError, SolveResult, Termination

__all__ = ["MASTER_STRATEGIES", "ColgenResult", "PlacementPrices", "price_placements", "solve_embedding_colgen"]

log = logging.getLogger(__name__)

#: Default cap on pricing rounds of :func:`solve_embedding_colgen`.
MAX_ROUNDS = 2000
#: HiGHS ``simplex_strategy`` of the master by name (:func:`solve_embedding_colgen`'s ``master``).
MASTER_STRATEGIES = {"primal": 4, "dual": 1}
#: Relative gap between the Lagrangian bound and the master under which a round whose only
#: entering placements are already in the master counts as converged.
GAP_TOL = 1e-7


@dataclasses.dataclass(frozen=True)
class PlacementPrices:
    """The cheapest placement of each job under given prices (:func:`price_placements`).

    Attributes
    ----------
    cost : array (J,)
        Its cost (``inf``: the job cannot hold ``kappa`` workers anywhere).
    counts : int array (J, S)
        Workers per server.
    below : int array (J, N)
        Workers in the subtree of every node (``N`` = servers + switches).
    """

    cost: np.ndarray
    counts: np.ndarray
    below: np.ndarray


#: In the default mode (:func:`clusteropt.jit.mode` ``"auto"``), a pricing DP with fewer
#: ``N J (K + 1)`` cells (tree nodes x jobs x ring sizes) than this runs the numpy reference while
#: the compiled kernel is not loaded (loading numba costs about 0.4 s, which small slots never repay).
JIT_MIN_CELLS = 50_000

_KERNELS = "clusteropt.models.gadget._numba_kernels"


def _min_plus(f: np.ndarray, g: np.ndarray, *, compiled: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Row-wise min-plus convolution ``h[c] = min_b f[c - b] + g[b]`` over ``c = 0 .. K`` and the
    minimising ``b`` (int16; ties go to the largest ``b``), over ``b`` up to the last column where
    ``g`` is finite anywhere (a server holds at most its ``own_cap``): ``O(J K m)`` work.

    ``compiled``: the numba kernel (:func:`clusteropt.models.gadget._numba_kernels.min_plus`, cell by
    cell, no temporaries), else the numpy reference (one shifted comparison per ``b``); the same
    ``h`` and ``b`` (``tests/models/test_gadget_colgen.py``).
    """
    if compiled:
        from clusteropt.models.gadget import _numba_kernels

        kernel: Any = _numba_kernels.min_plus  # numba's dispatcher types no signature
        return kernel(f, g)
    finite = np.flatnonzero(np.isfinite(g).any(axis=0))
    m = int(finite[-1]) + 1 if finite.size else 1
    J, width = f.shape
    h = np.full((J, width), np.inf)
    best = np.zeros((J, width), dtype=np.int16)
    for b in range(m - 1, -1, -1):  # largest b first: a strict < keeps it on ties
        cand = f[:, :width - b] + g[:, b:b + 1]
        better = cand < h[:, b:]
        h[:, b:] = np.where(better, cand, h[:, b:])
        best[:, b:] = np.where(better, b, best[:, b:])
    return h, best


@dataclasses.dataclass(frozen=True)
class _Level:
    """The tree nodes of one height, as :func:`price_placements` stacks them: ``nodes`` sorted by
    their number of parts (most first), and per part position q the rows that have a q-th part
    (a prefix of ``nodes``) split by kind: ``own[q] = (rows, servers)``, ``sub[q] = (rows, children)``.
    """

    nodes: np.ndarray
    n_parts: np.ndarray
    own: list[tuple[np.ndarray, np.ndarray]]
    sub: list[tuple[np.ndarray, np.ndarray]]


def pricing_plan(lay: TreeLayout, n_servers: int) -> tuple[_Level, ...]:
    """The tree's nodes by height, with their parts as index arrays (:func:`price_placements`'s
    ``plan``; it depends on the tree only, so one plan serves every pricing round of a slot).
    """
    order = preorder(lay)
    parts_of = {n: tree_parts(lay, n_servers, n) for n in order}
    height: dict[int, int] = {}
    for n in reversed(order):
        height[n] = 1 + max((height[c] for kind, c in parts_of[n] if kind == "sub"), default=0)
    levels = []
    for h in sorted(set(height.values())):
        nodes = sorted((n for n in order if height[n] == h), key=lambda n: -len(parts_of[n]))
        n_parts = np.asarray([len(parts_of[n]) for n in nodes], dtype=np.int64)
        own: list[tuple[np.ndarray, np.ndarray]] = []
        sub: list[tuple[np.ndarray, np.ndarray]] = []
        for q in range(int(n_parts.max(initial=0))):
            here = [(r, *parts_of[n][q]) for r, n in enumerate(nodes) if n_parts[r] > q]
            for kind, out in (("own", own), ("sub", sub)):
                rows = np.asarray([r for r, k, _ in here if k == kind], dtype=np.int64)
                ids = np.asarray([c for _, k, c in here if k == kind], dtype=np.int64)
                out.append((rows, ids))
        levels.append(_Level(np.asarray(nodes, dtype=np.int64), n_parts, own, sub))
    return tuple(levels)


def price_placements(lay: TreeLayout, kappa, unit, link, own_cap, *,
                     plan: tuple[_Level, ...] | None = None) -> PlacementPrices:
    """The cheapest placement of ``kappa[j]`` workers for every job j, by a tree DP.

    Parameters
    ----------
    lay : TreeLayout
    kappa : int array (J,)
        Ring sizes (>= 1).
    unit : array (J, S)
        Cost of one worker of job j on server s.
    link : array (J, N)
        Cost of crossing the link above tree node c (both directions together); ignored at the root.
    own_cap : int array (J, S)
        Most workers of job j on server s.
    plan : optional
        :func:`pricing_plan` of ``lay`` (computed here when not given).

    The placement crosses the link above c when c's subtree holds between 1 and ``kappa[j] - 1``
    workers.  ``O(J kappa^2)`` per tree link; the tree nodes of one height are convolved together
    (one numpy call per part position, not per node), and the placements are read back the same
    way, one height at a time from the root.

    Examples
    --------
    >>> from clusteropt.instances.gadget.instance import fat_tree_cluster
    >>> lay = tree_layout(fat_tree_cluster(4, n_racks=2, seed=0))   # 4 servers, 3 switches
    >>> unit = np.array([[1.0, 1.0, 5.0, 5.0]])   # servers 0 and 1 are cheap
    >>> link = np.zeros((1, 7))
    >>> p = price_placements(lay, [3], unit, link, np.full((1, 4), 2))   # at most 2 workers a server
    >>> float(p.cost[0]), p.counts.tolist()
    (3.0, [[2, 1, 0, 0]])
    >>> link[0, [0, 1]] = 10.0   # crossing the links of servers 0 and 1 now costs 10 each
    >>> p = price_placements(lay, [3], unit, link, np.full((1, 4), 2))
    >>> float(p.cost[0]), p.counts.tolist()   # all on servers 2 and 3: 3 x 5
    (15.0, [[0, 0, 1, 2]])
    """
    kappa = np.asarray(kappa, dtype=np.int64)
    unit = np.asarray(unit, dtype=float)
    link = np.asarray(link, dtype=float)
    own_cap = np.asarray(own_cap, dtype=np.int64)
    J = kappa.size
    n_srv = unit.shape[1] if unit.ndim == 2 else 0
    n_nodes = len(lay.parent) + 1
    if J == 0:
        none = np.zeros(0, dtype=np.int64)
        return PlacementPrices(np.zeros(0), none.reshape(0, n_srv), none.reshape(0, n_nodes))
    levels = pricing_plan(lay, n_srv) if plan is None else plan
    K = int(kappa.max())
    from clusteropt.jit import use_compiled

    compiled = use_compiled(J * (K + 1) * n_nodes, JIT_MIN_CELLS, _KERNELS)
    ks = np.arange(K + 1)
    beyond = ks[None, :] > kappa[:, None]  # (J, K+1): more workers than the ring has
    charge = (ks[None, :] > 0) & (ks[None, :] < kappa[:, None])

    own_all = ks[None, None, :] * unit.T[:, :, None]  # (S, J, K+1): w workers of job j on server s
    own_all[ks[None, None, :] > own_cap.T[:, :, None]] = np.inf
    F = np.empty((n_nodes, J, K + 1))  # F[c, j, w]: cheapest way for c's subtree to hold w workers of j
    steps: list[list[np.ndarray]] = []  # per level, per part q >= 1: workers in part q, (rows_q, J, K+1)

    def gather(lv: _Level, q: int) -> np.ndarray:
        (o_rows, o_ids), (s_rows, s_ids) = lv.own[q], lv.sub[q]
        out = np.empty((o_rows.size + s_rows.size, J, K + 1))
        out[o_rows] = own_all[o_ids]
        out[s_rows] = F[s_ids] + np.where(charge[None], link[:, s_ids].T[:, :, None], 0.0)
        return out

    # the nodes of one height do not depend on each other: their chains run together, stacked as
    # rows (the convolution is row-wise); the nodes with a q-th part are a prefix of the rows, so
    # no row is convolved with padding
    for lv in levels:
        m = lv.nodes.size
        f = np.empty((m, J, K + 1))
        f[:] = np.inf
        f[:, :, 0] = 0.0  # a node without parts: 0 workers at cost 0 (the convolution's identity)
        level_steps = []
        for q in range(len(lv.own)):
            g = gather(lv, q)
            r = g.shape[0]
            if q == 0:
                f[:r] = g
                continue
            h, b = _min_plus(f[:r].reshape(r * J, K + 1), g.reshape(r * J, K + 1), compiled=compiled)
            f[:r] = h.reshape(r, J, K + 1)
            level_steps.append(b.reshape(r, J, K + 1))
        f[:, beyond] = np.inf
        F[lv.nodes] = f
        steps.append(level_steps)
    cost = F[lay.root, np.arange(J), np.minimum(kappa, K)]
    counts = np.zeros((J, n_srv), dtype=np.int64)
    below = np.zeros((J, n_nodes), dtype=np.int64)
    below[:, lay.root] = np.where(np.isfinite(cost), kappa, 0)
    # read back from the root: a node's parent is of a larger height
    for lv, level_steps in zip(reversed(levels), reversed(steps), strict=True):
        rem = below[:, lv.nodes].T.copy()  # (m, J): workers in each node's subtree
        for q in range(len(lv.own) - 1, -1, -1):
            (o_rows, o_ids), (s_rows, s_ids) = lv.own[q], lv.sub[q]
            r = o_rows.size + s_rows.size
            if q == 0:
                b = rem[:r]
            else:
                b = np.take_along_axis(level_steps[q - 1], rem[:r, :, None], axis=2)[:, :, 0].astype(np.int64)
            counts[:, o_ids] = b[o_rows].T
            below[:, s_ids] = b[s_rows].T
            rem[:r] -= b
    return PlacementPrices(cost, counts, below)


@dataclasses.dataclass(frozen=True)
class ColgenResult:
    """The augmented LP solved by column generation (:func:`solve_embedding_colgen`).

    Attributes
    ----------
    value : float
        The master's optimum: the augmented LP's when ``status == "converged"``.
    bound : float
        The best Lagrangian upper bound seen (module docstring); ``bound - value`` is the gap.
    x : dict
        ``{job: sum of its weights}`` (``x[i]`` of the tree LP).
    decomposition : dict
        ``{job: [(varphi, Mapping), ...]}``: Alg. 2 lines 5-6, as
        :func:`~clusteropt.models.gadget.embedding.decompose_embedding` returns it.
    status : str
        ``"converged"`` (no placement with positive reduced profit, or only ones already in the
        master with the bound within :data:`GAP_TOL` of it), ``"stalled"`` (only such placements,
        with a larger gap), ``"max_rounds"`` or ``"time_limit"``; all but the first raise.
    rounds, columns : int
        Pricing rounds and placements generated.
    build_seconds, solve_seconds, pricing_seconds, total_seconds : float
        Column hand-off (``addCols``), HiGHS's runs, the pricing DP and everything.
    """

    value: float
    bound: float
    x: dict[int, float]
    decomposition: dict[int, list[tuple[float, Mapping]]]
    status: str
    rounds: int
    columns: int
    build_seconds: float
    solve_seconds: float
    pricing_seconds: float
    total_seconds: float

    @property
    def result(self) -> SolveResult:
        """As a :class:`~clusteropt.solvers.result.SolveResult` (``backend`` ``"colgen"``)."""
        return SolveResult(Termination.OPTIMAL, True, self.value, self.bound, 0.0, {}, "highs", "colgen",
                           self.build_seconds, self.solve_seconds,
                           {"status": self.status, "rounds": self.rounds, "columns": self.columns})


def solve_embedding_colgen(problem: SlotProblem, kappa, *, tol: float = 1e-7, max_rounds: int = MAX_ROUNDS,
                           time_limit: float | None = None, paths=None, master: str = "primal") -> ColgenResult:
    """The augmented LP of Alg. 2 line 4 (tree clusters) by column generation, with its decomposition.

    Parameters
    ----------
    problem : SlotProblem
    kappa : dict
        ``{job: kappa_i}`` as for :func:`~clusteropt.models.gadget.embedding.build_embedding_lp`.
    tol : float
        A placement enters when its reduced profit exceeds ``tol x max(1, max pi)``.
    max_rounds : int
        Pricing rounds at most.
    time_limit : float, optional
        Seconds; checked between rounds.
    paths : optional
        The cluster's :meth:`~clusteropt.instances.gadget.instance.Cluster.paths` (for the rings).
    master : {"primal", "dual"}
        HiGHS's simplex for the master's re-solves (:data:`MASTER_STRATEGIES`): primal (default;
        added columns keep the last basis primal feasible, so it re-starts from there) or HiGHS's
        own default, dual (``python -m benchmarks.colgen_master`` measures both).

    Raises
    ------
    ValueError
        Not a tree cluster, or a bad ``kappa`` (:func:`check_kappa`).
    NotOptimalError
        The master was not solved to optimality, or the rounds or time ran out before convergence
        (the result so far is attached: ``err.result.raw["colgen"]``).

    Examples
    --------
    >>> from clusteropt.instances.gadget.instance import gadget_preset
    >>> from clusteropt.models.gadget.gvne import slot_problem
    >>> p = slot_problem(gadget_preset("small", jobs=3, seed=0), t=20)
    >>> res = solve_embedding_colgen(p, {int(i): int(k) for i, k in zip(p.jobs, p.kmax)})
    >>> res.status, abs(res.bound - res.value) < 1e-6 * max(1.0, res.value)
    ('converged', True)
    """
    start = time.perf_counter()
    if master not in MASTER_STRATEGIES:
        raise ValueError(f"master = {master!r}; expected one of {sorted(MASTER_STRATEGIES)}")
    kap = check_kappa(problem, kappa)
    inst = problem.inst
    cl = inst.cluster
    if not cl.is_tree():
        raise ValueError("column generation prices placements on a tree (Cluster.is_tree() is False); "
                         "use the extended-graph LP (embed_form='extended')")
    lay = tree_layout(cl)
    paths = cl.paths() if paths is None else paths
    jobs = np.asarray(sorted(kap), dtype=np.int64)
    J, S, R, L = jobs.size, cl.n_servers, len(cl.resources), cl.n_links
    plan = pricing_plan(lay, S)
    kv = np.asarray([kap[i] for i in jobs.tolist()], dtype=np.int64)
    pos = {int(i): j for j, i in enumerate(problem.jobs.tolist())}
    pi = np.asarray([float(problem.pi[pos[i]][kap[i] - 1]) for i in jobs.tolist()])
    pw = inst.per_worker[jobs]  # (J, R)
    bw = inst.bandwidth[jobs].astype(float)
    own_cap = np.zeros((J, S), dtype=np.int64)
    for j, i in enumerate(jobs.tolist()):
        own_cap[j] = np.minimum(server_fit(problem, i), kv[j])
    nodes = np.asarray(sorted(lay.parent), dtype=np.int64)
    up = np.asarray([lay.up[c] for c in nodes.tolist()], dtype=np.int64)
    down = np.asarray([lay.down[c] for c in nodes.tolist()], dtype=np.int64)
    cap = cl.capacity.astype(float)
    link_cap = cl.bandwidth.astype(float)
    n_rows = J + S * R + L
    scale = max(1.0, float(np.abs(pi).max()) if J else 1.0)
    enter_tol = tol * scale

    h = new_highs(options={"simplex_strategy": MASTER_STRATEGIES[master]})
    upper = np.concatenate([np.ones(J), cap.ravel(), link_cap])
    h.addRows(n_rows, np.full(n_rows, -highspy.kHighsInf), upper, 0, np.zeros(n_rows + 1, dtype=np.int32),
              np.zeros(0, dtype=np.int32), np.zeros(0))
    # minimise -profit: row duals y <= 0 on the binding <= rows, prices are -y
    col_job: list[int] = []
    col_counts: list[np.ndarray] = []
    seen: set[tuple[int, bytes]] = set()
    build_s = solve_s = price_s = 0.0
    best_bound = math.inf
    value = 0.0
    sigma = np.zeros((S, R))
    tau = np.zeros(L)
    u = np.zeros(J)
    status = "max_rounds"
    rounds = 0
    while True:
        t0 = time.perf_counter()
        unit = pw @ sigma.T  # (J, S)
        link = np.zeros((J, cl.n_nodes))
        link[:, nodes] = bw[:, None] * (tau[up] + tau[down])[None, :]
        priced = price_placements(lay, kv, unit, link, own_cap, plan=plan)
        price_s += time.perf_counter() - t0
        feasible = np.isfinite(priced.cost)
        gain = np.where(feasible, pi - np.where(feasible, priced.cost, 0.0), -np.inf)
        bound = float((sigma * cap).sum() + (tau * link_cap).sum() + np.maximum(gain, 0.0).sum())
        best_bound = min(best_bound, bound)
        reduced = gain - u
        enter = np.flatnonzero(reduced > enter_tol)
        fresh = [j for j in enter.tolist() if (j, priced.counts[j].tobytes()) not in seen]
        log.debug("colgen round %d: master %.10g, bound %.10g, %d entering (%d new)", rounds, value, bound,
                  enter.size, len(fresh))
        if not enter.size:
            status = "converged"
            break
        if not fresh:  # only placements already in the master: HiGHS's duals are as good as they get
            # converged after all when the Lagrangian bound meets the master (the duals' rounding)
            gap_ok = best_bound - value <= GAP_TOL * max(1.0, abs(value))
            status = "converged" if gap_ok else "stalled"
            break
        if rounds >= max_rounds:
            break
        if time_limit is not None and time.perf_counter() - start > time_limit:
            status = "time_limit"
            break
        t1 = time.perf_counter()
        starts, index, coef = [0], [], []
        for j in fresh:
            seen.add((j, priced.counts[j].tobytes()))
            col_job.append(j)
            col_counts.append(priced.counts[j].copy())
            srv = np.flatnonzero(priced.counts[j])
            load = priced.counts[j][srv, None] * pw[j][None, :]  # (s, r)
            rr = np.flatnonzero(pw[j] > 0)
            rows_sr = (J + srv[:, None] * R + rr[None, :]).ravel()
            vals_sr = load[:, rr].ravel()
            crossed = (priced.below[j, nodes] > 0) & (priced.below[j, nodes] < kv[j])
            links = np.concatenate([up[crossed], down[crossed]]) if bw[j] > 0 else np.zeros(0, dtype=np.int64)
            rows_l = J + S * R + links
            r_all = np.concatenate([[j], rows_sr, rows_l])
            v_all = np.concatenate([[1.0], vals_sr, np.full(links.size, bw[j])])
            o = np.argsort(r_all, kind="stable")
            index.append(r_all[o])
            coef.append(v_all[o])
            starts.append(starts[-1] + r_all.size)
        m = len(fresh)
        h.addCols(m, -pi[fresh], np.zeros(m), np.full(m, highspy.kHighsInf), int(starts[-1]),
                  np.asarray(starts[:-1], dtype=np.int32), np.concatenate(index).astype(np.int32),
                  np.concatenate(coef))
        build_s += time.perf_counter() - t1
        t2 = time.perf_counter()
        run_live(h)
        solve_s += time.perf_counter() - t2
        rounds += 1
        term, message = highs_termination(h)
        if term is not Termination.OPTIMAL:
            raise NotOptimalError(f"column generation master, round {rounds}: {message}",
                                  SolveResult(term, False, None, None, None, {}, "highs", "colgen", build_s,
                                              solve_s, {"status": message}))
        sol = h.getSolution()
        value = -float(h.getInfo().objective_function_value)
        y = np.asarray(sol.row_dual, dtype=float)
        u = np.maximum(-y[:J], 0.0)
        sigma = np.maximum(-y[J:J + S * R], 0.0).reshape(S, R)
        tau = np.maximum(-y[J + S * R:], 0.0)
    varphi = np.asarray(h.getSolution().col_value, dtype=float) if col_job else np.zeros(0)
    x = {int(i): 0.0 for i in jobs.tolist()}
    decomposition: dict[int, list[tuple[float, Mapping]]] = {int(i): [] for i in jobs.tolist()}
    for q, (j, counts) in enumerate(zip(col_job, col_counts, strict=True)):
        w = float(varphi[q])
        if w <= 1e-12:
            continue
        i = int(jobs[j])
        x[i] += w
        decomposition[i].append((w, tree_mapping(i, {int(s): int(counts[s]) for s in np.flatnonzero(counts)},
                                             lay, paths)))
    total = time.perf_counter() - start
    res = ColgenResult(value, best_bound, x, decomposition, status, rounds, len(col_job), build_s, solve_s,
                       price_s, total)
    if status != "converged":
        err = SolveResult(Termination.FEASIBLE, True, value, best_bound, None, {}, "highs", "colgen", build_s,
                          solve_s, {"status": status, "colgen": res})
        raise NotOptimalError(f"column generation stopped ({status}) after {rounds} rounds: master {value:.10g}, "
                              f"Lagrangian bound {best_bound:.10g}", err)
    log.info("colgen: %d jobs, %d rounds, %d placements, value %.10g (bound %.10g), pricing %.3g s, master %.3g s",
             J, rounds, len(col_job), value, best_bound, price_s, solve_s)
    return res
