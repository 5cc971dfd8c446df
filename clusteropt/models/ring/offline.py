"""Paper 004 (Räcke, Schmid, Zabrodin): the offline optima of ring partitioning as MILPs.

The online algorithms of the paper are compared with two offline optima (Sec. 1;
docs/algorithms/ring-partitioning.md A1, A5):
``OPT_static`` (Thm 2.2) may migrate only before the first request, ``OPT_dyn`` (Thm 2.1) before
every request.  Both are built here as Pyomo models; the paper gives no formulation, so the
MILPs below are the package's (docs/algorithms/ring-partitioning.md A5).  Processes ``v`` and servers ``c``; edge
``e = (e, e + 1 mod n)``;
``c0(v)`` the initial server; ``alpha`` per migrated process.

:func:`build_ring_static_opt`
    ``x[v, c]`` binary (process v on server c), ``sum_c x[v, c] = 1``, ``sum_v x[v, c] <= K``
    (``K = k`` unless ``capacity`` is given, e.g. ``c k`` to compare with an augmented run),
    ``z[e] >= |x[e, c] - x[e + 1, c]|`` for every c (two rows each), and
    ``min sum_e r_e z[e] + alpha sum_v (1 - x[v, c0(v)])``, ``r_e`` = requests on e.  Only edges
    with ``r_e > 0`` get a ``z``: an unrequested edge costs nothing whether cut or not.
    Colours are not interchangeable (the migration term), so there is little symmetry.

:func:`build_ring_dynamic_opt`
    Time-expanded, on *run-length compressed* requests: a run of ``w`` identical consecutive
    requests is one request of weight ``w``.  Moving in the middle of a run never helps: replacing
    every placement used during the run by the one with the fewest hits costs no more hits, and by
    the triangle inequality of the Hamming distance no more migration
    (:func:`~clusteropt.algorithms.ring.offline.compress_requests`).  ``x[0]`` is the initial
    assignment (the parameter ``x0``); ``x[t]`` (``t = 1..T'``) is the placement serving
    compressed request ``t``, so migrating before the first request is allowed and migrating after
    the last never helps.  Capacity for ``t >= 1``;
    ``h[t] >= |x[t, v_t, c] - x[t, v_t + 1, c]|``; ``m[t, v] >= x[t, v, c] - x[t - 1, v, c]``
    for every c; ``min sum_t w_t h[t] + alpha sum m``.  Its size grows as ``T' n l`` binaries,
    so :func:`build_ring_dynamic_opt` refuses more than ``max_steps`` compressed requests or
    ``max_binaries`` binaries (a ``ValueError`` naming the sizes instead of a hang).

:func:`build_ring_dynamic_dp`
    The same ``OPT_dyn`` solved by the package's labelling DP
    (:func:`~clusteropt.algorithms.ring.offline.dynamic_opt_dp`), an exact algorithm rather than a
    solver model (:class:`~clusteropt.models.exact.ExactModel`, backend ``"exact"``): value iteration
    over the capacity-feasible labellings, exact with a schedule wherever ``l^n <= 2^24``
    (``n <= 24`` on 2 servers, 15 on 3, 12 on 4) at any sequence length.  Where both run they
    agree; the MILP is the form for external solvers and LP/MPS files, the DP the one to solve.

``relax=True`` gives the LP relaxations (lower bounds).  They are weak: spreading every process
evenly (``x = 1/l``) cuts nothing and meets every capacity, so both LP bounds are at most
``alpha n (l - 1) / l`` (static) and ``alpha n / l`` (dynamic: the migration rows take the
largest per-server increase) whatever the requests.  :mod:`clusteropt.models.ring.cut`
relaxes OPT_dyn over cut sets instead (model ``ring-dynamic-cut-lp``), a lower bound that grows
with the requests.

:func:`ring_static_optimum` and :func:`ring_dynamic_optimum` solve them and return a
:class:`RingOptimum` holding, for integral solves, the solution as a run in the format of
:mod:`clusteropt.online.ring` (``initial``, ``migrations``, ``augmentation``), which
``clusteropt.verify.check_ring_run`` replays.  :func:`contiguous_arcs_cost` is a cheap upper
bound on the static optimum (no solver).

References
----------
Räcke, Schmid, Zabrodin, "Dynamic Balanced Graph Partitioning for Ring Demands", SPAA 2023:
Sec. 1 (model, OPT_static / OPT_dyn), Thm 2.1, Thm 2.2.
"""

from __future__ import annotations

import dataclasses
import logging
import math
import time
from typing import TYPE_CHECKING

import numpy as np
import pyomo.environ as pyo

from clusteropt.algorithms.ring.offline import (
    compress_requests,
    dynamic_dp_plan,
    dynamic_opt_dp,
    migrations_from_placements,
    schedule_cost,
)
from clusteropt.instances.ring import RingInstance
from clusteropt.models.exact import ExactModel, ExactSolution
from clusteropt.models.registry import ModelSpec, register_model

if TYPE_CHECKING:
    from clusteropt.solvers.result import SolveResult

__all__ = [
    "MAX_DYNAMIC_BINARIES",
    "MAX_DYNAMIC_STEPS",
    "RingOptimum",
    "build_ring_dynamic_dp",
    "build_ring_dynamic_opt",
    "build_ring_static_opt",
    "contiguous_arcs_cost",
    "placements_from_model",
    "ring_dynamic_optimum",
    "ring_static_optimum",
]

log = logging.getLogger(__name__)

#: Default limit on compressed requests ``T'`` of :func:`build_ring_dynamic_opt`.
MAX_DYNAMIC_STEPS = 1_000
#: Default limit on the binaries ``T' n l`` of :func:`build_ring_dynamic_opt`.  Measured by
#: ``python -m benchmarks.ring_dynamic_milp`` (``benchmarks/results/ring_dynamic_milp.md``: HiGHS
#: 1.15, 60 s a solve, 2 cores shared with other work, seed 0, alpha = 1): n = 8, l = 2 proves
#: optimality in 0.3-0.8 s at T' = 21-26 (336-416 binaries), 6-13 s at T' = 44-51 (704-816) and
#: 45-48 s at T' = 77-80 (1,232-1,280); n = 12, l = 3 at T' = 42-43 (about 1,500) and
#: n = 16, l = 4 at T' = 43-44 (about 2,800) are not proven, with incumbents 2-12 times the
#: optimum where the DP gives it.  The LP relaxation at n = 32, l = 4, T' = 250 (32,000 columns
#: of ``x``) takes 30 s and gives ``alpha n / l``.  Prefer the model ``ring-dynamic-dp``
#: (:func:`clusteropt.algorithms.ring.offline.dynamic_opt_dp`) where it fits.
MAX_DYNAMIC_BINARIES = 5_000


def _capacity(instance: RingInstance, capacity) -> int:
    """``capacity`` as an integer load bound (default k; floor of a fractional ``c k``; >= k)."""
    k = instance.k
    if capacity is None:
        return k
    try:
        cap = math.floor(float(capacity) + 1e-9)
    except (TypeError, ValueError):
        raise ValueError(f"capacity = {capacity!r}; expected a number >= k = {k}") from None
    if cap < k:
        raise ValueError(f"capacity = {capacity!r}; expected >= k = n / servers = {k} (else nothing fits)")
    return min(cap, instance.n)


def _common(m: pyo.ConcreteModel, instance: RingInstance, cap: int) -> None:
    m.V = pyo.Set(initialize=range(instance.n), doc="processes v = 0..n-1 on the ring (Sec. 1)")
    m.C = pyo.Set(initialize=range(instance.servers), doc="servers c = 0..l-1 (Sec. 1)")
    m.K = pyo.Param(initialize=cap, doc="K: server capacity (k = n / l, or c k with augmentation, Sec. 1)")
    m.alpha = pyo.Param(initialize=float(instance.alpha), doc="alpha: cost per migrated process (Sec. 1: 1)")
    m.capacity_value = cap


def build_ring_static_opt(instance: RingInstance, relax: bool = False, capacity: float | None = None
                          ) -> pyo.ConcreteModel:
    """``OPT_static`` (Sec. 1, the comparator of Thm 2.2) as a MILP, or its LP relaxation.

    Parameters
    ----------
    instance : RingInstance
    relax : bool
        ``x`` in [0, 1] instead of binary: a lower bound.
    capacity : float, optional
        Load bound per server (default ``k``; a fractional ``c k`` is floored; must be >= k).

    Returns
    -------
    pyomo.environ.ConcreteModel
        ``x[v, c]``, ``z[e]`` (requested edges only), rows ``assign``, ``capacity``, ``cut_out``,
        ``cut_in``, objective ``cost``.

    References
    ----------
    Paper 004, Sec. 1 (static OPT migrates only before the first request), Thm 2.2;
    docs/algorithms/ring-partitioning.md A5.

    Examples
    --------
    >>> from clusteropt.solvers import solve
    >>> inst = RingInstance(n=8, servers=2, requests=[1] * 10 + [3] * 10 + [4] * 10 + [6] * 10, alpha=0)
    >>> m = build_ring_static_opt(inst)
    >>> sorted(m.E), solve(m).objective   # the A5 example: contiguous arcs would pay 10
    ([1, 3, 4, 6], 0.0)
    """
    n = instance.n
    cap = _capacity(instance, capacity)
    r = instance.request_counts()
    m = pyo.ConcreteModel(name=f"ring-static-opt-n{n}-l{instance.servers}")
    _common(m, instance, cap)
    binary = pyo.UnitInterval if relax else pyo.Binary
    requested = np.flatnonzero(r > 0).tolist()
    m.E = pyo.Set(initialize=requested, doc="requested edges e = (e, e+1 mod n), r_e > 0 (others cost nothing)")
    m.r = pyo.Param(m.E, initialize={e: int(r[e]) for e in requested}, doc="r_e: requests on edge e")
    assert instance.initial is not None  # validation sets the default
    c0 = instance.initial.tolist()
    m.x = pyo.Var(m.V, m.C, domain=binary, doc="x[v, c]: process v on server c (placed before request 1)")
    m.z = pyo.Var(m.E, bounds=(0, 1), doc="z[e]: edge e is cut (its endpoints on different servers)")
    m.assign = pyo.Constraint(m.V, rule=lambda m, v: sum(m.x[v, c] for c in m.C) == 1,
                              doc="every process on one server")
    m.capacity = pyo.Constraint(m.C, rule=lambda m, c: sum(m.x[v, c] for v in m.V) <= m.K,
                                doc="server capacity K (Sec. 1)")
    m.cut_out = pyo.Constraint(m.E, m.C, rule=lambda m, e, c: m.z[e] >= m.x[e, c] - m.x[(e + 1) % n, c],
                               doc="z[e] >= x[e, c] - x[e+1, c]")
    m.cut_in = pyo.Constraint(m.E, m.C, rule=lambda m, e, c: m.z[e] >= m.x[(e + 1) % n, c] - m.x[e, c],
                              doc="z[e] >= x[e+1, c] - x[e, c]")
    m.migration = pyo.Expression(expr=m.alpha * sum(1 - m.x[v, c0[v]] for v in m.V),
                                 doc="alpha sum_v (1 - x[v, c0(v)]): migrations before request 1")
    m.cost = pyo.Objective(expr=sum(m.r[e] * m.z[e] for e in m.E) + m.migration, sense=pyo.minimize,
                           doc="OPT_static: communication sum_e r_e z[e] plus migration (Sec. 1)")
    return m


def build_ring_dynamic_opt(instance: RingInstance, relax: bool = False, capacity: float | None = None,
                           max_steps: int = MAX_DYNAMIC_STEPS, max_binaries: int = MAX_DYNAMIC_BINARIES,
                           compress: bool = True) -> pyo.ConcreteModel:
    """``OPT_dyn`` (Sec. 1, the comparator of Thm 2.1) as a time-expanded MILP, or its LP relaxation.

    Parameters
    ----------
    instance : RingInstance
    relax : bool
        Continuous ``x`` in [0, 1]: a lower bound.
    capacity : float, optional
        Load bound per server for ``t >= 1`` (default ``k``; floored; >= k).
    max_steps : int
        Refuse more compressed requests ``T'`` than this (default :data:`MAX_DYNAMIC_STEPS`).
    max_binaries : int
        Refuse more than this many ``x`` variables ``T' n l`` (default :data:`MAX_DYNAMIC_BINARIES`,
        where measured solve times are listed: minutes already at a few thousand binaries; pass
        a ``time_limit`` when solving).
    compress : bool
        Merge runs of identical requests (exact, module docstring).  ``False`` gives one step per
        request (for testing the compression).

    Returns
    -------
    pyomo.environ.ConcreteModel
        ``x[t, v, c]`` (``t = 1..T'``), ``x0`` (initial, a parameter), ``h[t]``, ``mig[t, v]``;
        ``model.steps`` holds the compression ``(edges, weights, starts)``.

    Raises
    ------
    ValueError
        Past the size limits (the message names ``T'``, ``n``, ``l`` and the binaries).

    References
    ----------
    Paper 004, Sec. 1 (dynamic OPT may migrate after every request), Thm 2.1; docs/algorithms/ring-partitioning.md
    A5.

    Examples
    --------
    >>> from clusteropt.solvers import solve
    >>> inst = RingInstance(n=4, servers=2, requests=[1, 1, 1, 1, 1, 3])
    >>> m = build_ring_dynamic_opt(inst)
    >>> len(m.T), m.steps[1].tolist(), solve(m).objective   # runs 1 x 5 and 3 x 1; swap two processes
    (2, [5, 1], 2.0)
    """
    n, ns = instance.n, instance.servers
    cap = _capacity(instance, capacity)
    if compress:
        edges, weights, starts = compress_requests(instance.requests)
    else:
        edges = np.asarray(instance.requests, dtype=np.int64)
        weights, starts = np.ones(edges.size, dtype=np.int64), np.arange(edges.size, dtype=np.int64)
    T = int(edges.size)
    binaries = T * n * ns
    if T > max_steps or binaries > max_binaries:
        raise ValueError(
            f"dynamic OPT model too large: T' = {T} compressed requests (of {instance.n_requests}), n = {n}, "
            f"l = {ns}: {binaries} x variables; limits max_steps = {max_steps}, max_binaries = {max_binaries}. "
            "Use a shorter sequence, the LP bound of a prefix, or raise the limits knowingly (max_steps= / "
            "max_binaries=; the CLI's --max-steps / --max-binaries)")
    m = pyo.ConcreteModel(name=f"ring-dynamic-opt-n{n}-l{ns}-T{T}")
    _common(m, instance, cap)
    m.steps = (edges, weights, starts)
    binary = pyo.UnitInterval if relax else pyo.Binary
    assert instance.initial is not None  # validation sets the default
    c0 = instance.initial.tolist()
    ev = edges.tolist()
    m.T = pyo.RangeSet(1, T, doc="compressed requests t = 1..T' (runs of identical requests)")
    m.w = pyo.Param(m.T, initialize={t: int(weights[t - 1]) for t in range(1, T + 1)},
                    doc="w_t: length of run t (its requests all hit edge v_t)")
    m.edge = pyo.Param(m.T, initialize={t: ev[t - 1] for t in range(1, T + 1)},
                       doc="v_t: the requested edge (v_t, v_t + 1) of run t")
    m.x0 = pyo.Param(m.V, m.C, initialize={(v, c): int(c0[v] == c) for v in range(n) for c in range(ns)},
                     doc="x[0, v, c]: the initial assignment (fixed)")
    m.x = pyo.Var(m.T, m.V, m.C, domain=binary, doc="x[t, v, c]: process v on server c while run t is served")
    m.h = pyo.Var(m.T, bounds=(0, 1), doc="h[t]: run t's edge is cut (each request of the run pays 1)")
    m.mig = pyo.Var(m.T, m.V, bounds=(0, 1), doc="m[t, v]: process v migrates just before run t")
    m.assign = pyo.Constraint(m.T, m.V, rule=lambda m, t, v: sum(m.x[t, v, c] for c in m.C) == 1,
                              doc="every process on one server")
    m.capacity = pyo.Constraint(m.T, m.C, rule=lambda m, t, c: sum(m.x[t, v, c] for v in m.V) <= m.K,
                                doc="server capacity K after every step's migrations (Sec. 1)")
    m.hit_out = pyo.Constraint(m.T, m.C, rule=lambda m, t, c: m.h[t] >= m.x[t, ev[t - 1], c]
                               - m.x[t, (ev[t - 1] + 1) % n, c], doc="h[t] >= x[t, v_t, c] - x[t, v_t+1, c]")
    m.hit_in = pyo.Constraint(m.T, m.C, rule=lambda m, t, c: m.h[t] >= m.x[t, (ev[t - 1] + 1) % n, c]
                              - m.x[t, ev[t - 1], c], doc="h[t] >= x[t, v_t+1, c] - x[t, v_t, c]")

    def move(m, t, v, c):
        prev = m.x0[v, c] if t == 1 else m.x[t - 1, v, c]
        return m.mig[t, v] >= m.x[t, v, c] - prev

    m.move = pyo.Constraint(m.T, m.V, m.C, rule=move, doc="m[t, v] >= x[t, v, c] - x[t-1, v, c]")
    m.cost = pyo.Objective(
        expr=sum(m.w[t] * m.h[t] for t in m.T) + m.alpha * sum(m.mig[t, v] for t in m.T for v in m.V),
        sense=pyo.minimize, doc="OPT_dyn: sum_t w_t h[t] (communication) + alpha sum m (migration)")
    log.info("dynamic OPT model: T' = %d (of %d requests), n = %d, l = %d, %d x variables", T,
             instance.n_requests, n, ns, binaries)
    return m


def build_ring_dynamic_dp(instance: RingInstance, relax: bool = False, capacity: float | None = None,
                          method: str = "auto") -> ExactModel:
    """``OPT_dyn`` (Thm 2.1's comparator) as the labelling DP: an exact model with a schedule.

    The sizes are checked here (:func:`~clusteropt.algorithms.ring.offline.dynamic_dp_plan`: a
    ``ValueError`` naming them past the DP's limits); ``solve`` runs
    :func:`~clusteropt.algorithms.ring.offline.dynamic_opt_dp` and returns its value (objective =
    bound, gap 0) and ``placement[t, v]``, the server of process ``v`` while compressed request
    ``t`` is served, with ``starts[t]``, the original index of its first request.  The written
    result adds the schedule as a run (``system``, ``initial``, ``migrations``, ``augmentation``)
    so that ``clusteropt verify INSTANCE RESULT`` replays it; the cost recomputed from the
    placements must equal the DP's value, or the solve fails.

    Parameters
    ----------
    instance : RingInstance
    relax : bool
        Refused: an exact algorithm has no relaxation (``ring-dynamic-opt`` with ``relax=True`` is
        the LP relaxation of the same optimum).
    capacity : float, optional
        Load bound (default ``k``; the floor of a fractional ``c k``).
    method : {"auto", "matrix", "transform"}
        The DP's minimisation (:func:`~clusteropt.algorithms.ring.offline.dynamic_opt_dp`).

    References
    ----------
    Paper 004, Sec. 1 (dynamic OPT may migrate before every request), Thm 2.1;
    docs/algorithms/ring-partitioning.md A5.

    Examples
    --------
    >>> from clusteropt.solvers import solve
    >>> inst = RingInstance(n=4, servers=2, requests=[1, 1, 1, 1, 1, 3])
    >>> m = build_ring_dynamic_dp(inst)
    >>> r = solve(m)
    >>> r.objective, r.gap, r.solver, r.backend, r.values["placement"].tolist()
    (2.0, 0.0, 'labelling-dp', 'exact', [[0, 1, 1, 0], [0, 1, 1, 0]])
    >>> m.solution.output["migrations"]      # before the first request: processes 1 and 3 swap
    [[-1, 1, 1], [-1, 3, 0]]
    """
    if relax:
        raise ValueError("model 'ring-dynamic-dp' is exact and has no relaxation; the LP relaxation of the "
                         "same optimum is model 'ring-dynamic-opt' with relax (--relax)")
    start = time.perf_counter()
    cap = _capacity(instance, capacity)
    plan = dynamic_dp_plan(instance, cap, method=method)
    n, ns, T = instance.n, instance.servers, plan.steps
    edges, weights, _ = compress_requests(instance.requests)

    def run(time_limit: float | None) -> ExactSolution:
        sol = dynamic_opt_dp(instance, cap, method=plan.method, time_limit=time_limit)
        recount = schedule_cost(instance, sol.placements, edges, weights) if T else 0.0
        if not math.isclose(recount, sol.value, rel_tol=1e-9, abs_tol=1e-9):
            raise RuntimeError(f"ring-dynamic-dp: DP value {sol.value} but its schedule costs {recount}")
        steps = range(1, T + 1)
        return ExactSolution(
            sol.value, {"placement": sol.placements, "starts": sol.starts},
            labels={"placement": [(t, v) for t in steps for v in range(n)], "starts": [(t,) for t in steps]},
            index_names={"placement": ("T", "V"), "starts": ("T",)},
            output={"system": "ring", "policy": "ring-dynamic-dp", "n_requests": instance.n_requests,
                    "initial": sol.initial.tolist(), "migrations": sol.migrations.tolist(),
                    "augmentation": sol.augmentation, "capacity": cap, "method": plan.method})

    rows = [
        {"component": "S", "type": "state", "size": plan.labellings,
         "doc": f"labellings of the n = {n} processes with every load <= {cap} (the DP's states)"},
        {"component": "W", "type": "value", "size": T * plan.labellings,
         "doc": "W_t(S) = min_S' [W_{t-1}(S') + alpha Ham(S', S)] + w_t hit_t(S), by the "
                f"{plan.method} method (A5)"},
        {"component": "placement", "type": "variable", "size": T * n,
         "doc": "placement[t, v]: server of process v while compressed request t is served"},
        {"component": "capacity", "type": "constraint", "size": T * ns,
         "doc": f"every server holds <= {cap} processes after every step's migrations (Sec. 1)"},
        {"component": "cost", "type": "objective", "size": 1,
         "doc": "OPT_dyn: sum_t w_t hit_t (communication) + alpha sum_t Ham(S_{t-1}, S_t) (migration)"},
    ]
    return ExactModel("ring-dynamic-dp", "labelling-dp", rows, run, solver_model="ring-dynamic-opt",
                      build_seconds=time.perf_counter() - start)


def placements_from_model(model: pyo.ConcreteModel, *, tol: float = 1e-6) -> np.ndarray:
    """The server of every process in a solved model: ``(n,)`` (static) or ``(T', n)`` (dynamic).

    ``x`` is rounded; a value farther than ``tol`` from 0 or 1 raises ``ValueError`` (an LP
    relaxation's solution is not a placement).
    """
    keys = list(model.x.keys())
    vals = np.array([model.x[k].value if model.x[k].value is not None else np.nan for k in keys])
    if np.isnan(vals).any():
        raise ValueError("the model has no solution loaded (solve it first)")
    if np.abs(vals - np.round(vals)).max(initial=0.0) > tol:
        raise ValueError("x is fractional: an LP relaxation's solution is not a placement")
    idx = np.array(keys, dtype=np.int64)
    n, ns = len(model.V), len(model.C)
    if idx.shape[1] == 2:
        out = np.full(n, -1, dtype=np.int64)
        on = np.round(vals) == 1
        out[idx[on, 0]] = idx[on, 1]
    else:
        out = np.full((len(model.T), n), -1, dtype=np.int64)
        on = np.round(vals) == 1
        out[idx[on, 0] - 1, idx[on, 1]] = idx[on, 2]
    if (out < 0).any() or out.max(initial=0) >= ns:
        raise ValueError("x does not place every process on exactly one server")
    return out


@dataclasses.dataclass(frozen=True)
class RingOptimum:
    """An offline optimum (or bound) of ring partitioning.

    Attributes
    ----------
    value : float or None
        Cost of the returned solution (recomputed from it; for ``relax=True`` the LP optimum, a
        lower bound).  None when the solver found no solution in time.
    bound : float or None
        The solver's proven lower bound.
    proven_optimal : bool
        The solver proved ``value`` optimal (for ``relax=True``: optimal for the LP).
    result : SolveResult
    initial : int array (n,) or None
        The instance's initial assignment (integral solves with a solution).
    migrations : int array (M, 3) or None
        ``[request index, process, to server]`` applied after that request (``-1``: before the
        first), the run format of :mod:`clusteropt.online.ring`.
    augmentation : float
        ``capacity / k`` (what ``clusteropt.verify.check_ring_run`` checks loads against).
    capacity : int
        The load bound used.
    """

    value: float | None
    bound: float | None
    proven_optimal: bool
    result: SolveResult
    initial: np.ndarray | None
    migrations: np.ndarray | None
    augmentation: float
    capacity: int

    def placement(self) -> np.ndarray:
        """The server of every process after all migrations, ``(n,)``: for OPT_static the placement
        that serves every request (e.g. a start for
        :func:`~clusteropt.algorithms.ring.swap_search.dynamic_swap_bound`).

        Examples
        --------
        >>> inst = RingInstance(n=8, servers=2, requests=[1] * 10 + [3] * 10 + [4] * 10 + [6] * 10)
        >>> p = ring_static_optimum(inst).placement()     # (one of several optima)
        >>> [int(p[e] != p[(e + 1) % 8]) for e in (1, 3, 4, 6)], int((p != inst.initial).sum())
        ([0, 0, 0, 0], 4)
        """
        if self.initial is None or self.migrations is None:
            raise ValueError("no placement: the solve found no integral solution (value None or relax=True)")
        out = np.array(self.initial, dtype=np.int64)
        for _, v, c in np.asarray(self.migrations, dtype=np.int64).reshape(-1, 3).tolist():
            out[v] = c
        return out


def _optimum(instance, model, placements_to_run, *, relax, solver, time_limit, cap) -> RingOptimum:
    from clusteropt.solvers import solve

    res = solve(model, solver, time_limit=time_limit, raise_on_nonoptimal=False)
    aug = cap / instance.k
    if not res.has_solution:
        log.warning("ring optimum: no solution (%s)", res.summary())
        return RingOptimum(None, res.bound, False, res, None, None, aug, cap)
    assert res.objective is not None  # a solution has an objective value
    if relax:
        return RingOptimum(float(res.objective), res.bound, res.is_optimal, res, None, None, aug, cap)
    value, migrations = placements_to_run(placements_from_model(model))
    if res.is_optimal and not math.isclose(value, res.objective, rel_tol=1e-6, abs_tol=1e-6):
        log.warning("ring optimum: recomputed cost %g differs from the objective %g", value, res.objective)
    return RingOptimum(value, res.bound, res.is_optimal, res, np.array(instance.initial), migrations, aug, cap)


def ring_static_optimum(instance: RingInstance, *, capacity: float | None = None, solver: str = "highs",
                        time_limit: float | None = None, relax: bool = False) -> RingOptimum:
    """Solve :func:`build_ring_static_opt`: ``OPT_static`` and an optimal placement as a run.

    All migrations happen before the first request (index -1).

    Examples
    --------
    >>> inst = RingInstance(n=8, servers=2, requests=[1] * 10 + [3] * 10 + [4] * 10 + [6] * 10)
    >>> opt = ring_static_optimum(inst)
    >>> opt.value, opt.proven_optimal, len(opt.migrations)   # cut 0, 2, 5, 7; four processes move
    (4.0, True, 4)
    """
    cap = _capacity(instance, capacity)
    model = build_ring_static_opt(instance, relax=relax, capacity=cap)
    r = instance.request_counts()

    def to_run(p):
        cut = p != np.roll(p, -1)
        value = float(r @ cut) + float(instance.alpha) * int((p != instance.initial).sum())
        return value, migrations_from_placements(instance.initial, p[None, :], [0])

    return _optimum(instance, model, to_run, relax=relax, solver=solver, time_limit=time_limit, cap=cap)


def ring_dynamic_optimum(instance: RingInstance, *, capacity: float | None = None, solver: str = "highs",
                         time_limit: float | None = None, relax: bool = False,
                         max_steps: int = MAX_DYNAMIC_STEPS, max_binaries: int = MAX_DYNAMIC_BINARIES
                         ) -> RingOptimum:
    """Solve :func:`build_ring_dynamic_opt`: ``OPT_dyn`` and an optimal schedule as a run.

    The migrations into placement ``t`` are logged after the original request just before run
    ``t`` (index ``starts[t] - 1``; -1 for the first run).

    Examples
    --------
    >>> inst = RingInstance(n=4, servers=2, requests=[1, 1, 1, 1, 1, 3])
    >>> opt = ring_dynamic_optimum(inst)
    >>> opt.value, opt.migrations[:, 0].tolist()
    (2.0, [-1, -1])
    """
    cap = _capacity(instance, capacity)
    model = build_ring_dynamic_opt(instance, relax=relax, capacity=cap, max_steps=max_steps,
                                   max_binaries=max_binaries)
    edges, weights, starts = model.steps

    def to_run(p):
        return schedule_cost(instance, p, edges, weights), migrations_from_placements(instance.initial, p, starts)

    return _optimum(instance, model, to_run, relax=relax, solver=solver, time_limit=time_limit, cap=cap)


def contiguous_arcs_cost(instance: RingInstance) -> tuple[float, np.ndarray]:
    """A cheap upper bound on ``OPT_static``: the best of the ``k`` rotations of ``l`` equal arcs.

    Rotation ``s`` cuts the edges ``s - 1 + j k`` (arcs ``s + j k .. s + (j + 1) k - 1``); arcs get
    servers by maximum overlap with the initial assignment
    (``scipy.optimize.linear_sum_assignment``), which gives the fewest migrations for that cut.
    Not optimal in general, even without migration: a server may hold several arcs
    (docs/algorithms/ring-partitioning.md A5).

    Returns
    -------
    (cost, assignment) : (float, int array (n,))
        Communication plus ``alpha`` x migrations, and the placement.

    Examples
    --------
    >>> inst = RingInstance(n=8, servers=2, requests=[1] * 10 + [3] * 10 + [4] * 10 + [6] * 10)
    >>> cost, placement = contiguous_arcs_cost(inst)
    >>> cost, placement.tolist()
    (10.0, [0, 0, 0, 0, 1, 1, 1, 1])
    """
    from scipy.optimize import linear_sum_assignment

    n, ns, k = instance.n, instance.servers, instance.k
    r = instance.request_counts()
    init = np.asarray(instance.initial)
    best: tuple[float, np.ndarray | None] = (math.inf, None)
    for s in range(k):
        arc = ((np.arange(n) - s) % n) // k  # arc index of every process
        overlap = np.zeros((ns, ns), dtype=np.int64)
        np.add.at(overlap, (arc, init), 1)
        rows, cols = linear_sum_assignment(overlap, maximize=True)
        label = np.empty(ns, dtype=np.int64)
        label[rows] = cols
        placement = label[arc]
        cost = float(r @ (placement != np.roll(placement, -1))) + float(instance.alpha) * int(
            (placement != init).sum())
        if cost < best[0]:
            best = (cost, placement)
    assert best[1] is not None  # k >= 1 rotations, each of finite cost
    return best[0], best[1]


def _static_builder(instance: RingInstance, relax: bool = False, capacity: float | None = None):
    return build_ring_static_opt(instance, relax=relax, capacity=capacity)


def _dynamic_builder(instance: RingInstance, relax: bool = False, capacity: float | None = None,
                     max_steps: int = MAX_DYNAMIC_STEPS, max_binaries: int = MAX_DYNAMIC_BINARIES,
                     compress: bool = True):
    return build_ring_dynamic_opt(instance, relax=relax, capacity=capacity, max_steps=max_steps,
                                  max_binaries=max_binaries, compress=compress)


register_model(ModelSpec(
    "ring-static-opt", "ring", _static_builder, "pyomo",
    "paper 004 Sec. 1 / Thm 2.2: static OPT (migrate only before the first request) as a MILP "
    "(docs/algorithms/ring-partitioning.md A5)"))
register_model(ModelSpec(
    "ring-dynamic-opt", "ring", _dynamic_builder, "pyomo",
    "paper 004 Sec. 1 / Thm 2.1: dynamic OPT, time-expanded MILP on run-compressed requests; proves small "
    "sizes only, solve with ring-dynamic-dp (docs/algorithms/ring-partitioning.md A5)"))
register_model(ModelSpec(
    "ring-dynamic-dp", "ring", build_ring_dynamic_dp, "exact",
    "paper 004 Sec. 1 / Thm 2.1: dynamic OPT by the exact labelling DP, value and schedule, to l^n <= 2^24 "
    "(docs/algorithms/ring-partitioning.md A5)"))
