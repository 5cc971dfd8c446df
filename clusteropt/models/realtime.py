"""Paper 002 (Hsu, Huang, Shieh): the per-frame max-weight ILP and the exact feasibility-region LP.

``build_max_weight_ilp``
    Line 6 of Alg. 1: choose interference-free jobs maximizing Eq. (2),
    ``sum_{i in D} Q_i * 1{|J_i| != 0} * prod_{j: J_ij = 1} P_ij``, a weighted set packing
    (NP-hard, Lemma 8).  ``x_i = 1`` runs application i's job; each worker takes at most one task.

``PersistentMaxWeight``
    The same ILP as one live HiGHS model per run, its costs, bounds and coefficients changed in
    place each frame instead of a Pyomo model built and handed over every frame.

``build_region_lp``
    Beyond the paper (which estimates ``R_max`` by simulation, Sec. IV): the maximum feasibility
    region is exactly the set of rates of *stationary randomized* policies (Lemma 16: one exists
    for every interior requirement, and every stationary policy's rates are feasible).  A
    stationary policy picks, in every job-pattern state s, an interference-free set D with
    probability ``y_{s,D}``; its rate for application i is
    ``N_i = sum_s p_s sum_{D ni i} y_{s,D} c_{s,i}`` with ``c_{s,i}`` the job's completion
    probability.  For a direction ``d >= 0`` the LP ``max theta  s.t.  N_i >= theta d_i,
    sum_D y_{s,D} = 1`` gives the largest ``theta`` with ``theta * d`` in ``R_max`` (its boundary
    point along d).  Only maximal interference-free sets are listed: adding a job never lowers a
    rate, so a set and a maximal superset serve every requirement alike.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pyomo.environ as pyo

from clusteropt.instances.realtime import MAX_STATES, RealtimeInstance
from clusteropt.models.registry import ModelSpec, register_model

__all__ = [
    "FrameDecision",
    "PersistentMaxWeight",
    "RegionData",
    "build_max_weight_ilp",
    "build_region_lp",
    "max_weight_arrays",
    "maximal_packings",
    "region_data",
    "resolve_direction",
]


def build_max_weight_ilp(queues, jobs, success) -> pyo.ConcreteModel:
    """Alg. 1, line 6: the max-weight decision of one frame as a Pyomo ILP (Eq. (2)).

    Parameters
    ----------
    queues : array (N,)
        Virtual queue sizes ``Q_i(t)`` (after this frame's arrivals, Alg. 1 line 4).
    jobs : 0/1 array (N, M)
        ``J_{i,j}(t)``.
    success : array (N, M)
        ``P_{i,j}``.

    Returns
    -------
    pyomo.environ.ConcreteModel
        ``A`` (applications with a job), ``W`` (workers), ``Q`` and ``V`` (the weight
        ``Q_i * prod P``) as parameters, ``x[i]`` binary, ``one_task[j]`` (each worker at most one
        task: interference-free), objective ``eq2`` (maximize).

    References
    ----------
    Paper 002, Alg. 1 line 6 and Eq. (2); Lemma 8 (NP-hard, by set packing).

    Examples
    --------
    Example 6: Q = r = (0.48, 0.5), the two jobs share W_2; weights 0.3072 and 0.3645.

    >>> from clusteropt.solvers import solve
    >>> m = build_max_weight_ilp([0.48, 0.5], [[1, 1, 0, 0], [0, 1, 1, 1]], [[0.8] * 4, [0.9] * 4])
    >>> [round(pyo.value(m.V[i]), 4) for i in m.A]
    [0.3072, 0.3645]
    >>> res = solve(m, "highs")
    >>> res.values["x"].round().tolist(), round(res.objective, 4)
    ([0.0, 1.0], 0.3645)
    """
    q, job, weight = _frame_weights(queues, jobs, success)
    apps = np.flatnonzero(job.any(axis=1)).tolist()
    m = pyo.ConcreteModel(name="realtime_max_weight")
    m.A = pyo.Set(initialize=apps, ordered=True, doc="i: applications that generated a job, |J_i(t)| != 0")
    m.W = pyo.RangeSet(0, job.shape[1] - 1, doc="j: workers")
    m.Q = pyo.Param(m.A, initialize={i: float(q[i]) for i in apps}, doc="Q_i(t): virtual queue (Alg. 1 line 4)")
    m.V = pyo.Param(m.A, initialize={i: float(weight[i]) for i in apps},
                    doc="Q_i(t) * prod_{j: J_ij = 1} P_ij: the weight of job i in Eq. (2)")
    m.x = pyo.Var(m.A, domain=pyo.Binary, doc="x_i = 1: job J_i(t) is in D(t)")
    users = {j: [i for i in apps if job[i, j]] for j in range(job.shape[1])}
    shared = [j for j in range(job.shape[1]) if len(users[j]) >= 2]
    m.one_task = pyo.Constraint(
        pyo.Set(initialize=shared, ordered=True, doc="workers wanted by two or more jobs"),
        rule=lambda m, j: sum(m.x[i] for i in users[j]) <= 1,
        doc="D(t) interference-free: at most one task per worker and frame (Sec. II-A)")
    m.eq2 = pyo.Objective(expr=sum(m.V[i] * m.x[i] for i in apps), sense=pyo.maximize,
                          doc="Eq. (2): sum_{i in D(t)} Q_i(t) 1{|J_i(t)| != 0} prod P_ij")
    return m


def max_weight_arrays(queues, jobs, success, *, relax: bool = False):
    """The ILP of :func:`build_max_weight_ilp` as a :class:`~clusteropt.models.matrix.MatrixLP`,
    without building the Pyomo model: columns ``x[i]`` (binary; continuous in [0, 1] with
    ``relax``), rows ``one_task[j]``: the columns and rows Pyomo's standard-form compiler makes of
    that model (tested), an application of weight 0 in no shared worker's row being no column.
    What ``clusteropt solve --model realtime-max-weight`` hands to HiGHS (an online run keeps one
    live model instead, :class:`PersistentMaxWeight`).

    >>> lp = max_weight_arrays([0.48, 0.5], [[1, 1, 0, 0], [0, 1, 1, 1]], [[0.8] * 4, [0.9] * 4])
    >>> lp.col_names(), lp.row_names(), lp.cost.round(4).tolist()
    (['x[0]', 'x[1]'], ['one_task[1]'], [0.3072, 0.3645])
    """
    from clusteropt.models.matrix import Assembler, MatrixLP

    _, job, weight = _frame_weights(queues, jobs, success)
    apps = np.flatnonzero(job.any(axis=1))
    n = apps.size
    used = job[apps]  # (A, M): the jobs of the applications that have one
    shared = np.flatnonzero(used.sum(axis=0) >= 2)
    rows = Assembler(n)
    row, col = np.nonzero(used[:, shared].T)  # (shared worker, application with a job there)
    rows.add("one_task", shared.size, lambda: [(int(j),) for j in shared], (row, col, np.ones(row.size)),
             -np.inf, 1.0)
    cost, lower, upper, A, row_lower, row_upper, col_blocks, row_blocks = rows.finish(
        weight[apps].astype(float), np.zeros(n), np.ones(n), np.zeros(n, dtype=bool),
        [("x", slice(0, n), lambda: [(int(i),) for i in apps])])
    integer = None if relax else np.ones(cost.size, dtype=bool)
    return MatrixLP("realtime_max_weight", True, cost, lower, upper, A, row_lower, row_upper, col_blocks,
                    row_blocks, "realtime", {}, integer, index_names={"x": ("A",)})


def _frame_weights(queues, jobs, success) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Checked ``(Q, J, weight)`` of one frame: ``weight_i = Q_i prod_{j: J_ij = 1} P_ij`` where
    ``|J_i| != 0``, else 0 (the terms of Eq. (2)).
    """
    q = np.asarray(queues, dtype=float)
    job = np.asarray(jobs).astype(bool)
    p = np.asarray(success, dtype=float)
    if job.ndim != 2 or p.shape != job.shape or q.shape != (job.shape[0],):
        raise ValueError(f"shapes: queues {q.shape}, jobs {job.shape}, success {p.shape}; "
                         "expected (N,), (N, M), (N, M)")
    if (q < 0).any():
        i = int(np.flatnonzero(q < 0)[0])
        raise ValueError(f"queues[{i}] = {q[i]}; expected >= 0")
    return q, job, q * np.where(job, p, 1.0).prod(axis=1) * job.any(axis=1)


@dataclasses.dataclass(frozen=True)
class FrameDecision:
    """One frame's solve by :class:`PersistentMaxWeight`.

    Attributes
    ----------
    value : float
        Eq. (2) of ``chosen`` (HiGHS's objective).
    chosen : list of int
        The applications whose jobs run (``x_i = 1``), ascending.
    changes : int
        Costs, bounds and coefficients changed in the live model for this frame.
    change_seconds, solve_seconds : float
        The hand-off (those changes) and HiGHS's run.
    """

    value: float
    chosen: list[int]
    changes: int
    change_seconds: float
    solve_seconds: float


class PersistentMaxWeight:
    """Alg. 1 line 6 as *one* live HiGHS model for a whole run, changed in place every frame.

    The model of :func:`build_max_weight_ilp` with a structure that does not depend on the frame:
    a binary ``x_i`` for every application (upper bound 0 when it has no job this frame, cost
    its Eq. (2) weight otherwise) and a row ``sum_i J_ij x_i <= 1`` for every worker ``j``, whose
    coefficients follow ``J(t)`` (:meth:`highspy.Highs.changeCoeff`; a coefficient set to 0
    leaves the matrix).  The rows of workers with fewer than two jobs, which the Pyomo model
    leaves out, are implied by ``x <= 1``, so both models have the same feasible sets and the
    same optimum (tested frame by frame).  Each frame changes only the costs, bounds and
    coefficients that differ from the previous frame's and re-runs HiGHS (the MIP search starts
    afresh: HiGHS keeps no MIP state across changes).

    Parameters
    ----------
    n_apps, n_workers : int
        ``N`` and ``M``.
    mip_gap : float
        HiGHS's ``mip_rel_gap`` (default 0: every frame proved optimal, as Alg. 1 needs an exact
        maximizer).

    Examples
    --------
    Example 6 of the paper (two jobs sharing W_2): the second job is worth more.

    >>> ilp = PersistentMaxWeight(2, 4)
    >>> d = ilp.solve([0.48, 0.5], [[1, 1, 0, 0], [0, 1, 1, 1]], [[0.8] * 4, [0.9] * 4])
    >>> round(d.value, 4), d.chosen
    (0.3645, [1])
    >>> ilp.solve([0.48, 0.5], [[1, 1, 0, 0], [0, 0, 1, 1]], [[0.8] * 4, [0.9] * 4]).chosen  # no conflict
    [0, 1]
    """

    def __init__(self, n_apps: int, n_workers: int, *, mip_gap: float = 0.0):
        import highspy

        from clusteropt.solvers.highs import new_highs

        self.n_apps, self.n_workers = int(n_apps), int(n_workers)
        if self.n_apps < 1 or self.n_workers < 1:
            raise ValueError(f"n_apps = {n_apps}, n_workers = {n_workers}; expected >= 1 each")
        h = new_highs(options={"mip_rel_gap": float(mip_gap)})
        n, m = self.n_apps, self.n_workers
        h.addVars(n, np.zeros(n), np.zeros(n))
        h.changeColsIntegrality(n, np.arange(n, dtype=np.int32), np.full(n, highspy.HighsVarType.kInteger))
        h.addRows(m, np.full(m, -highspy.kHighsInf), np.ones(m), 0, np.zeros(m + 1, dtype=np.int32),
                  np.zeros(0, dtype=np.int32), np.zeros(0))
        h.changeObjectiveSense(highspy.ObjSense.kMaximize)
        self.highs = h
        self._job = np.zeros((n, m), dtype=bool)
        self._cost = np.zeros(n)
        self._upper = np.zeros(n)

    def solve(self, queues, jobs, success) -> FrameDecision:
        """Solve one frame (the arguments of :func:`build_max_weight_ilp`).

        Raises
        ------
        ValueError
            Shapes other than ``(N,)``, ``(N, M)``, ``(N, M)`` of this model, or a negative queue.
        RuntimeError
            HiGHS does not prove the frame optimal (within ``mip_gap``).
        """
        import time

        import highspy

        from clusteropt.solvers.highs import run_live

        _, job, weight = _frame_weights(queues, jobs, success)
        if job.shape != (self.n_apps, self.n_workers):
            raise ValueError(f"jobs: shape {job.shape}; expected ({self.n_apps}, {self.n_workers}) of this model")
        h = self.highs
        t0 = time.perf_counter()
        upper = job.any(axis=1).astype(float)
        changes = 0
        idx = np.flatnonzero(weight != self._cost).astype(np.int32)
        if idx.size:
            h.changeColsCost(int(idx.size), idx, weight[idx])
            changes += int(idx.size)
        idx = np.flatnonzero(upper != self._upper).astype(np.int32)
        if idx.size:
            h.changeColsBounds(int(idx.size), idx, np.zeros(idx.size), upper[idx])
            changes += int(idx.size)
        for i, j in np.argwhere(job != self._job).tolist():
            h.changeCoeff(j, i, 1.0 if job[i, j] else 0.0)
            changes += 1
        self._job, self._cost, self._upper = job.copy(), weight, upper
        t1 = time.perf_counter()
        run_live(h)
        t2 = time.perf_counter()
        if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
            raise RuntimeError(f"max-weight ILP: HiGHS stopped with {h.modelStatusToString(h.getModelStatus())}")
        x = np.asarray(h.getSolution().col_value)
        chosen = np.flatnonzero(x > 0.5).tolist()
        return FrameDecision(float(weight[chosen].sum()), chosen, changes, t1 - t0, t2 - t1)


def maximal_packings(masks) -> list[tuple[int, ...]]:
    """Every maximal set of pairwise disjoint non-zero bitmasks, as sorted index tuples.

    ``masks[i]`` is application i's set of workers as an int bitmask (0: no job).  With no job at
    all the one maximal set is ``()``.

    >>> maximal_packings([0b011, 0b110, 0b100])
    [(0, 2), (1,)]
    """
    items = [i for i, mk in enumerate(masks) if mk]
    out: list[tuple[int, ...]] = []

    def grow(k: int, used: int, chosen: list[int]) -> None:
        if k == len(items):
            # maximal: no skipped job fits
            if all(masks[i] & used for i in items if i not in chosen):
                out.append(tuple(chosen))
            return
        i = items[k]
        if not masks[i] & used:
            chosen.append(i)
            grow(k + 1, used | masks[i], chosen)
            chosen.pop()
        grow(k + 1, used, chosen)

    grow(0, 0, [])
    return sorted(out)


@dataclasses.dataclass(frozen=True)
class RegionData:
    """The exact-region LP's data (:func:`region_data`).

    ``masks`` (S, N, M) and ``prob`` (S,) are the job-pattern states; ``sets`` lists per state
    its maximal interference-free sets; ``columns`` (state, set index) pairs index ``y``;
    ``service[k, i]`` = ``p_s * c_{s,i}`` when application i is in column k's set, else 0.
    """

    masks: np.ndarray
    prob: np.ndarray
    completion: np.ndarray
    sets: tuple[tuple[tuple[int, ...], ...], ...]
    columns: np.ndarray
    service: np.ndarray


def region_data(inst: RealtimeInstance, max_states: int = MAX_STATES) -> RegionData:
    """States, their maximal interference-free sets and each column's service rates."""
    masks, prob = inst.states(max_states)
    comp = inst.completion_probability(masks)                      # (S, N)
    bits = masks.astype(np.int64) @ (np.int64(1) << np.arange(inst.n_workers, dtype=np.int64))
    sets, cols, rows = [], [], []
    for s in range(masks.shape[0]):
        packs = tuple(maximal_packings(bits[s].tolist()))
        sets.append(packs)
        for k, pack in enumerate(packs):
            cols.append((s, k))
            row = np.zeros(inst.n_apps)
            row[list(pack)] = prob[s] * comp[s, list(pack)]
            rows.append(row)
    return RegionData(masks=masks, prob=prob, completion=comp, sets=tuple(sets),
                      columns=np.asarray(cols, dtype=np.int64).reshape(-1, 2),
                      service=np.asarray(rows).reshape(-1, inst.n_apps))


def build_region_lp(inst: RealtimeInstance, direction=None, *, data: RegionData | None = None,
                    max_states: int = MAX_STATES, slack: float = 0.0) -> pyo.ConcreteModel:
    """The exact maximum-feasibility-region LP along ``direction`` (module docstring).

    Parameters
    ----------
    inst : RealtimeInstance
        Small: every job-pattern state is a block of the LP (N = M = 3 with independent tasks
        has 2^9 = 512 states).
    direction : array (N,), optional
        ``d >= 0``, not all zero; default ``inst.requirement``, or all ones when that is zero.
    data : RegionData, optional
        Reuse the states and sets of an earlier call (they do not depend on the direction).
    slack : float
        ``N_i >= theta d_i - slack``: the exact counterpart of the paper's simulation test, which
        accepts rates 0.01 below the requirement (Sec. IV).  Default 0: the boundary of ``R_max``.

    Returns
    -------
    pyomo.environ.ConcreteModel
        ``S`` (states), ``K`` (columns: a state and one of its maximal interference-free sets),
        ``I`` (applications), ``theta``, ``y[k]`` (probability of the column's set in its state),
        ``choose[s]`` (``sum y = 1``), ``rate[i]`` (``N_i >= theta d_i``), objective
        ``max_theta``; the numbers in ``model.region_data``.

    References
    ----------
    Paper 002, Definition 1 (``R_max``), Eq. (1) (``N_i``), Lemma 16 (stationary policies).

    Examples
    --------
    Example 6's single pattern: run J_1, J_2, or mix them.  Along d = (1, 1) the best mix gives
    both ``0.64 * 0.729 / (0.64 + 0.729)``:

    >>> from clusteropt.instances import realtime_preset
    >>> from clusteropt.solvers import solve
    >>> res = solve(build_region_lp(realtime_preset("paper"), [1, 1]), "highs")
    >>> round(res.objective, 6), round(0.64 * 0.729 / (0.64 + 0.729), 6)
    (0.340804, 0.340804)
    """
    d = resolve_direction(inst, direction)
    if not (math.isfinite(slack) and slack >= 0):
        raise ValueError(f"slack = {slack!r}; expected a finite number >= 0")
    data = region_data(inst, max_states) if data is None else data
    n_cols = data.columns.shape[0]
    m = pyo.ConcreteModel(name="realtime_region")
    m.region_data = data
    m.direction = d
    m.S = pyo.RangeSet(0, data.prob.size - 1, doc="s: job-pattern states (J_1(t), ..., J_N(t))")
    m.K = pyo.RangeSet(0, n_cols - 1, doc="k: (state s, maximal interference-free set D of s)")
    m.I = pyo.RangeSet(0, inst.n_apps - 1, doc="i: applications")
    m.theta = pyo.Var(domain=pyo.NonNegativeReals, doc="theta: the requirement theta * d is fulfilled")
    m.y = pyo.Var(m.K, domain=pyo.NonNegativeReals, bounds=(0, 1),
                  doc="y_{s,D}: probability that the stationary policy runs D in state s")
    by_state: list[list[int]] = [[] for _ in range(data.prob.size)]
    for k, s in enumerate(data.columns[:, 0].tolist()):
        by_state[s].append(k)
    m.choose = pyo.Constraint(m.S, rule=lambda m, s: sum(m.y[k] for k in by_state[s]) == 1,
                              doc="sum_D y_{s,D} = 1: one decision per state")
    serve = [np.flatnonzero(data.service[:, i]).tolist() for i in range(inst.n_apps)]
    coef = data.service
    m.rate = pyo.Constraint(
        m.I, rule=lambda m, i: sum(float(coef[k, i]) * m.y[k] for k in serve[i]) >= float(d[i]) * m.theta - slack,
        doc="N_i = sum_s p_s sum_{D ni i} y_{s,D} prod P_ij >= theta d_i - slack (Eq. (1), Def. 1)")
    m.max_theta = pyo.Objective(expr=m.theta, sense=pyo.maximize, doc="the boundary of R_max along d")
    return m


def resolve_direction(inst: RealtimeInstance, direction) -> np.ndarray:
    """``direction`` as a checked array (N,); None: ``r``, or all ones when ``r`` is zero."""
    if direction is None:
        d = np.asarray(inst.requirement, dtype=float)
        if not d.any():
            d = np.ones(inst.n_apps)
    else:
        d = np.asarray(direction, dtype=float).reshape(-1)
    if d.shape != (inst.n_apps,):
        raise ValueError(f"direction has {d.size} entries; expected one per application ({inst.n_apps})")
    bad = ~np.isfinite(d) | (d < 0)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"direction[{i}] = {d[i]}; expected a finite number >= 0")
    if not d.any():
        raise ValueError("direction is all zero; expected at least one positive entry")
    return d


def _max_weight_builder(inst: RealtimeInstance, *, relax: bool = False) -> pyo.ConcreteModel:
    """Frame 1 of Alg. 1 for the instance's most likely job pattern, with Q(1) = r (as in Example 6)."""
    m = build_max_weight_ilp(inst.requirement, inst.most_likely_pattern(), inst.success)
    if relax:
        pyo.TransformationFactory("core.relax_integer_vars").apply_to(m)
    return m


def _max_weight_arrays(inst: RealtimeInstance, *, relax: bool = False):
    """Registry array builder: the frame of :func:`_max_weight_builder` as arrays (:func:`max_weight_arrays`)."""
    return max_weight_arrays(inst.requirement, inst.most_likely_pattern(), inst.success, relax=relax)


def _region_builder(inst: RealtimeInstance, *, relax: bool = False,
                    max_states: int = MAX_STATES) -> pyo.ConcreteModel:
    return build_region_lp(inst, max_states=max_states)  # an LP already


register_model(ModelSpec(
    "realtime-max-weight", "realtime", _max_weight_builder, "pyomo",
    "paper 002 Alg. 1 line 6, Eq. (2): max-weight interference-free jobs of one frame "
    "(the most likely job pattern, Q(1) = r)", array_builder=_max_weight_arrays))
register_model(ModelSpec(
    "realtime-region", "realtime", _region_builder, "pyomo",
    "paper 002 R_max (Def. 1) exactly: LP over stationary randomized policies, max theta with "
    "theta * d feasible (d = r, or all ones)"))
