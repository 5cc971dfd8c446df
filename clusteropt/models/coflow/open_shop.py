"""Paper 001 (coflow scheduling): the concurrent-open-shop LP, its row generation, exact MILPs.

The lower bound every approximation ratio of paper 001 is measured against is the LP of the
slides' section "LP for Concurrent Open Shop" (coflow.md B6): machines ``i`` (for a coflow
instance: its ports, inputs then outputs, loads ``L_{i,j}`` = row / column sums of ``D^j``),

.. code-block:: text

    min  sum_j w_j C_j
    s.t. C_j >= r_j + L_{i,j}                                   for all j, i    (release)
         sum_{j in S} L_{i,j} C_j >= f_i(S)                     for all i, S    (parallel)
         f_i(S) = 1/2 ( sum_{j in S} L_{i,j}^2 + (sum_{j in S} L_{i,j})^2 )

Slot convention (as in :mod:`clusteropt.instances.coflow.instance`): a job released at ``r_j`` may use
slots ``r_j + 1`` onward, and ``C_j`` is its last busy slot.  A job with ``L`` units on a machine
therefore ends no earlier than ``r_j + L``, and on one machine processing jobs back to back
(loads ``p_1, p_2, ...``) the completions are ``p_1, p_1 + p_2, ...`` with
``sum_k p_k C_k = f(S)`` exactly: the slides' "Parallel Constraint" derivation, so the LP is a
valid lower bound on ``sum_j w_j C_j`` of every (preemptive, slotted) schedule, for concurrent
open shop and, through the port loads, for coflows.

There is one parallel inequality per machine and *subset* of jobs, so the LP is solved by row
generation (coflow.md B8): :func:`build_cos_lp` writes the release rows and the full-set
inequality of every machine, :func:`separate_parallel_inequalities` finds the violated ones by
Queyranne's prefix rule, and :func:`clusteropt.models.coflow.bound.cos_lower_bound` runs
the loop (:func:`clusteropt.solvers.rowgen.row_generation`).

For tiny instances, :func:`build_cos_milp` and :func:`build_coflow_milp` are exact time-indexed
MILPs (one binary per unit of work and slot; preemption at slot granularity as in the slides'
matching model) that give true optima for tests.
"""

from __future__ import annotations

import dataclasses
import logging
from typing import TYPE_CHECKING, Any

import numpy as np

from clusteropt.instances.coflow.instance import CoflowInstance, ConcurrentOpenShopInstance
from clusteropt.models.registry import ModelSpec, register_model
from clusteropt.models.size import check_model_size

if TYPE_CHECKING:
    import pyomo.environ as pyo

    from clusteropt.solvers.rowgen import Cut

log = logging.getLogger(__name__)

__all__ = [
    "PER_MACHINE",
    "PURGE_AFTER",
    "CosData",
    "ParallelCuts",
    "build_coflow_milp",
    "build_cos_lp",
    "build_cos_milp",
    "cos_data",
    "full_set_rows",
    "parallel_cut_rows",
    "parallel_rhs",
    "separate_parallel_inequalities",
]

INITIAL = ("singletons+full", "full", "none")
PER_MACHINE = 1
"""Default cuts per machine and round of :func:`~clusteropt.models.coflow.bound.cos_lower_bound`.

coflow.md B8 suggests up to 5.  Measured on a random 526 jobs x 300 machines instance with 28k
nonzero loads (HiGHS 1.15, dual simplex warm-started through the persistent interface): 5 per
machine without purging took 46 rounds and 174 s, because the LP grows to 35k dense rows and
every simplex iteration pays for them; purging after 6 slack rounds, 2 per machine took 82
rounds and 47 s, 1 per machine 107 rounds and 39 s (the test ``test_speed_526_jobs_300_machines_dense``).
"""
PURGE_AFTER = 6
"""Default number of consecutive optima at which a cut may be slack before
:func:`~clusteropt.models.coflow.bound.cos_lower_bound`
deletes it (``purge_after`` of :func:`~clusteropt.solvers.rowgen.row_generation`; 4 and 10 were
slower on the instance of :data:`PER_MACHINE`)."""
RELEASE_ROWS = ("tightest", "all")


# ---------------------------------------------------------------------------------------------
# the data of the LP


@dataclasses.dataclass(frozen=True, eq=False)
class CosData:
    """The numbers of the concurrent-open-shop LP, as numpy arrays.

    Attributes
    ----------
    loads : float array (M, n)
        ``L_{i,j}``: units of job j on machine i (for a coflow: port i, inputs first).
    weight, release : arrays (n,)
        ``w_j`` and ``r_j``.
    source : str
        Kind of the instance the data came from.
    """

    loads: np.ndarray
    weight: np.ndarray
    release: np.ndarray
    source: str = "concurrent-open-shop"

    @property
    def n_machines(self) -> int:
        """Number of machines M."""
        return int(self.loads.shape[0])

    @property
    def n_jobs(self) -> int:
        """Number of jobs n."""
        return int(self.loads.shape[1])

    def release_bound(self) -> np.ndarray:
        """``r_j + max_i L_{i,j}``: the tightest of the release rows of job j."""
        top = self.loads.max(axis=0) if self.n_machines else np.zeros(self.n_jobs)
        return self.release + top


def cos_data(source: Any) -> CosData:
    """The LP data of an instance, of a model built by :func:`build_cos_lp`, or of a load matrix.

    ``source`` may be a :class:`ConcurrentOpenShopInstance`, a :class:`CoflowInstance` (its
    ports become machines: ``loads().T``), a :class:`CosData`, a Pyomo model from
    :func:`build_cos_lp`, or a load array ``L`` of shape (M, n) (unit weights, zero releases).

    >>> cos_data(CoflowInstance(2, 2, [0, 0], [0, 1], [1, 1], [2, 1], [1.0], [0])).loads.tolist()
    [[2.0], [1.0], [0.0], [3.0]]
    """
    if isinstance(source, CosData):
        return source
    if isinstance(source, CoflowInstance):
        return CosData(source.loads().T.astype(float), np.asarray(source.weight, float),
                       np.asarray(source.release, float), CoflowInstance.kind)
    if isinstance(source, ConcurrentOpenShopInstance):
        return CosData(np.asarray(source.processing, float), np.asarray(source.weight, float),
                       np.asarray(source.release, float))
    data = getattr(source, "cos_data", None)
    if isinstance(data, CosData):
        return data
    if isinstance(source, np.ndarray | list | tuple):
        loads = np.asarray(source, dtype=float)
        if loads.ndim != 2 or (loads < 0).any():
            raise ValueError(f"loads of shape {loads.shape}; expected a nonnegative (M, n) array")
        n = loads.shape[1]
        return CosData(loads, np.ones(n), np.zeros(n), "loads")
    raise TypeError(
        f"cannot read LP data from a {type(source).__name__}; expected a ConcurrentOpenShopInstance, "
        "a CoflowInstance, a model from build_cos_lp, CosData or an (M, n) load array"
    )


def parallel_rhs(loads: np.ndarray) -> float:
    """``f(S) = 1/2 (sum_{j in S} L_j^2 + (sum_{j in S} L_j)^2)`` for the loads of S on one machine.

    It equals ``sum_k L_k C_k`` of the jobs of S run back to back in any order:

    >>> parallel_rhs([2, 1]), 2 * 2 + 1 * 3, 1 * 1 + 2 * 3
    (7.0, 7, 7)
    """
    x = np.asarray(loads, dtype=float)
    return float(0.5 * (np.dot(x, x) + x.sum() ** 2))


# ---------------------------------------------------------------------------------------------
# the LP


def full_set_rows(loads: np.ndarray):
    """The full-set parallel inequality of every machine with two or more jobs, divided by ``L_i(S)``:
    ``(i, jobs S, L_{i,S} / L_i(S), f_i(S) / L_i(S))`` per machine, in machine order (a single job's
    inequality is implied by its release row).  Shared by :func:`build_cos_lp` and the array loop
    (:func:`clusteropt.models.coflow.matrix.cos_start_rows`), through :func:`full_set_arrays`.

    >>> [(i, s.tolist(), c.tolist(), r) for i, s, c, r in full_set_rows(np.array([[1.0, 3.0], [0.0, 2.0]]))]
    [(0, [0, 1], [0.25, 0.75], 3.25)]
    """
    machines, ptr, jobs, coef, rhs = full_set_arrays(loads)
    for k, i in enumerate(machines.tolist()):
        yield i, jobs[ptr[k]:ptr[k + 1]], coef[ptr[k]:ptr[k + 1]], float(rhs[k])


def full_set_arrays(loads: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """:func:`full_set_rows` as arrays: ``(machines, ptr, jobs, coef, rhs)``, machine ``machines[k]``'s
    row over ``jobs[ptr[k]:ptr[k+1]]`` (sorted) with coefficients ``coef[...]`` and right-hand side
    ``rhs[k]``.  Each row's sums are taken over its own loads as :func:`parallel_rhs` takes them, so
    the numbers are those of the per-machine computation to the last bit.

    >>> m, ptr, jobs, coef, rhs = full_set_arrays(np.array([[1.0, 3.0], [0.0, 2.0], [4.0, 4.0]]))
    >>> m.tolist(), ptr.tolist(), jobs.tolist(), coef.tolist(), rhs.tolist()
    ([0, 2], [0, 2, 4], [0, 1, 0, 1], [0.25, 0.75, 0.5, 0.5], [3.25, 6.0])
    """
    import scipy.sparse as sp  # here: the module is imported by CLI commands that build no LP

    loads = np.asarray(loads, dtype=float)
    width = np.count_nonzero(loads, axis=1)
    machines = np.flatnonzero(width >= 2)  # a singleton is implied by the release rows
    sub = sp.csr_array(loads[machines])  # per row: its jobs in order and their loads, as flatnonzero gives them
    sub.sort_indices()
    data, ptr = sub.data, sub.indptr.astype(np.int64)
    total = np.empty(machines.size)
    rhs = np.empty(machines.size)
    for k in range(machines.size):
        li = data[ptr[k]:ptr[k + 1]]
        t = li.sum()
        total[k] = t
        rhs[k] = 0.5 * (np.dot(li, li) + t ** 2) / t  # parallel_rhs(li) / L_i(S)
    coef = data / np.repeat(total, np.diff(ptr))
    return machines, ptr, sub.indices.astype(np.int64), coef, rhs


def build_cos_lp(
    inst: ConcurrentOpenShopInstance | CoflowInstance,
    *,
    initial: str = "singletons+full",
    release_rows: str = "tightest",
) -> pyo.ConcreteModel:
    """The slides' concurrent-open-shop LP with a starting set of parallel inequalities.

    Parameters
    ----------
    inst : ConcurrentOpenShopInstance or CoflowInstance
        For a coflow instance the machines are its ports (inputs, then outputs) with the loads
        of :meth:`CoflowInstance.loads` (the slides' "Coflow => Concurrent Open shop").
    initial : {"singletons+full", "full", "none"}
        Which parallel inequalities to start with.  ``"full"``: ``S = {j : L_{i,j} > 0}`` for
        every machine with at least two jobs.  Singletons ``S = {j}`` read ``L_{i,j} C_j >=
        L_{i,j}^2``, i.e. ``C_j >= L_{i,j}``, which the release row ``C_j >= r_j + L_{i,j}`` implies
        for every ``r_j >= 0``: they are covered by the release rows and never written twice,
        so ``"singletons+full"`` and ``"full"`` build the same model.  ``"none"``: release rows only.
    release_rows : {"tightest", "all"}
        ``"tightest"``: one row per job, ``C_j >= r_j + max_i L_{i,j}`` (the others of the
        slides' family are implied; jobs without load get ``C_j >= r_j``).  ``"all"``: the slides'
        rows literally, one per (i, j) with ``L_{i,j} > 0``, plus ``C_j >= r_j`` for every j.
        Both give the same LP optimum.

    Returns
    -------
    pyomo.environ.ConcreteModel
        Components ``J, M`` (sets), ``w, r`` (parameters), ``C`` (completion times),
        ``release`` (and ``release_any`` with ``"all"``), ``parallel_full``, ``rowgen_cuts``
        (empty; row generation fills it), objective ``total_weighted_completion``; the numbers
        as numpy arrays in ``model.cos_data`` (:class:`CosData`).

    Notes
    -----
    Parallel inequalities are written divided by ``L_i(S) = sum_{j in S} L_{i,j}`` (the same
    inequality, read as "the L-weighted mean completion time of S is at least f_i(S)/L_i(S)"):
    coefficients in (0, 1] and right-hand sides in slots keep the LP well scaled when loads
    reach millions of units.  Solved alone, this model gives a weaker bound than the full LP;
    :func:`~clusteropt.models.coflow.bound.cos_lower_bound` adds the violated parallel inequalities by row
    generation.

    References
    ----------
    Paper 001 slides, sections "LP for Concurrent Open Shop" and "Parallel Constraint"; the
    slides' "Relationship with Concurrent Open Shop" for coflows; coflow.md B6 (the LP) and B8
    (row generation).

    Examples
    --------
    One machine, loads 1 and 3: ``C_0 + 3 C_1 >= f = (1 + 9 + 16) / 2 = 13``, divided by 4:

    >>> m = build_cos_lp(ConcurrentOpenShopInstance([[1, 3]], [1.0, 1.0], [0, 0]))
    >>> len(m.release), len(m.parallel_full)
    (2, 1)
    >>> print(m.parallel_full[0].expr)
    3.25  <=  0.25*C[0] + 0.75*C[1]
    """
    import pyomo.environ as pyo  # here: Pyomo takes 0.7 s to import
    from pyomo.core.expr.numeric_expr import LinearExpression

    if initial not in INITIAL:
        raise ValueError(f"initial = {initial!r}; expected one of {', '.join(INITIAL)}")
    if release_rows not in RELEASE_ROWS:
        raise ValueError(f"release_rows = {release_rows!r}; expected one of {', '.join(RELEASE_ROWS)}")
    data = cos_data(inst)
    L, w, r = data.loads, data.weight, data.release
    n_m, n = L.shape
    m = pyo.ConcreteModel(name="cos_lp")
    m.cos_data = data
    m.J = pyo.RangeSet(0, n - 1, doc="jobs j (coflows)")
    m.M = pyo.RangeSet(0, n_m - 1, doc="machines i (ports: inputs, then outputs)")
    m.w = pyo.Param(m.J, initialize=dict(enumerate(w.tolist())), doc="w_j: weight of job j")
    m.r = pyo.Param(m.J, initialize=dict(enumerate(r.tolist())), doc="r_j: release slot of job j")
    m.C = pyo.Var(m.J, domain=pyo.NonNegativeReals, doc="C_j: completion time (last busy slot) of job j")
    cvars = list(m.C.values())

    if release_rows == "tightest":
        lower = data.release_bound().tolist()
        m.release = pyo.Constraint(
            m.J, rule=lambda m, j: cvars[j] >= lower[j],
            doc="C_j >= r_j + L_ij for all i (slides' LP): the tightest machine, r_j + max_i L_ij",
        )
    else:
        rows, cols = np.nonzero(L)
        pairs = list(zip(rows.tolist(), cols.tolist()))
        bound = dict(zip(pairs, (r[cols] + L[rows, cols]).tolist()))
        m.release = pyo.Constraint(
            pyo.Set(initialize=pairs, dimen=2, ordered=True, doc="(i, j) with L_ij > 0"),
            rule=lambda m, i, j: cvars[j] >= bound[i, j],
            doc="C_j >= r_j + L_ij for all (i, j) with L_ij > 0 (slides' LP, release constraint)",
        )
        m.release_any = pyo.Constraint(m.J, rule=lambda m, j: cvars[j] >= float(r[j]),
                                       doc="C_j >= r_j (jobs without load complete at release)")

    full: dict[int, tuple[list, list, float]] = {}
    if initial != "none":
        for i, jobs, coef, rhs in full_set_rows(L):
            full[i] = (coef.tolist(), [cvars[j] for j in jobs.tolist()], rhs)
    m.parallel_full = pyo.Constraint(
        pyo.Set(initialize=sorted(full), ordered=True, doc="machines with >= 2 jobs"),
        rule=lambda m, i: LinearExpression(linear_coefs=full[i][0], linear_vars=full[i][1]) >= full[i][2],
        doc="sum_{j in S} L_ij C_j >= f_i(S) for S = {j: L_ij > 0} (slides' parallel constraint), "
            "divided by L_i(S)",
    )
    m.rowgen_cuts = pyo.ConstraintList(
        doc="sum_{j in S} L_ij C_j >= f_i(S) for violated (i, S) found by row generation "
            "(coflow.md B8), divided by L_i(S)",
    )
    m.total_weighted_completion = pyo.Objective(
        expr=LinearExpression(linear_coefs=w.tolist(), linear_vars=cvars),
        sense=pyo.minimize, doc="min sum_j w_j C_j (slides' objective)",
    )
    return m


# ---------------------------------------------------------------------------------------------
# separation


@dataclasses.dataclass(frozen=True, eq=False)
class ParallelCuts:
    """Violated parallel inequalities ``sum_{j in S_k} L_{i_k,j} C_j >= f_{i_k}(S_k)``.

    Attributes
    ----------
    machine : int array (K,)
        ``i_k``.
    ptr : int array (K + 1,)
        Cut k's jobs are ``jobs[ptr[k]:ptr[k+1]]`` (sorted), with loads ``coef[ptr[k]:ptr[k+1]]``.
    jobs : int array
    coef : float array
        ``L_{i_k, j}`` of those jobs.
    load : float array (K,)
        ``L_{i_k}(S_k)``.
    rhs : float array (K,)
        ``f_{i_k}(S_k)``.
    lhs : float array (K,)
        ``sum_{j in S_k} L_{i_k,j} C*_j`` at the separated point.
    """

    machine: np.ndarray
    ptr: np.ndarray
    jobs: np.ndarray
    coef: np.ndarray
    load: np.ndarray
    rhs: np.ndarray
    lhs: np.ndarray

    @property
    def n_cuts(self) -> int:
        """Number of cuts K."""
        return int(self.machine.shape[0])

    @property
    def violation(self) -> np.ndarray:
        """``f_i(S) - sum_S L C*`` (> 0)."""
        return self.rhs - self.lhs

    @property
    def relative(self) -> np.ndarray:
        """``violation / f_i(S)``."""
        return self.violation / self.rhs

    def job_set(self, k: int) -> np.ndarray:
        """The jobs of cut k."""
        return self.jobs[self.ptr[k] : self.ptr[k + 1]]


def separate_parallel_inequalities(
    model_or_data: Any,
    C_values: Any,
    *,
    per_machine: int | None = 5,
    tol: float = 1e-7,
    tie_tol: float = 1e-9,
) -> ParallelCuts:
    """The most violated parallel inequalities at ``C*``, by Queyranne's prefix rule (coflow.md B8).

    For machine i, let ``h(S) = f_i(S) - sum_{j in S} L_{i,j} C*_j``.  Adding job k to S changes
    ``h`` by ``L_{i,k} (L_i(S) + L_{i,k} - C*_k)``, so a maximizer of ``h`` that contains j also
    contains every k with ``C*_k <= C*_j`` (else adding k would raise ``h`` by at least
    ``L_{i,k}^2 > 0``): the most violated set is a *level-set prefix*
    ``{j : L_{i,j} > 0, C*_j <= c}`` of the jobs sorted by ``C*``.  All machines share that
    order, so one sort and a few cumulative sums over the (M, n) load matrix give every prefix
    of every machine: ``O(M n + n log n)`` numpy work per call, no Python loop over jobs or
    machines (only over the cuts returned, to list their jobs).

    Parameters
    ----------
    model_or_data :
        Anything :func:`cos_data` reads (a model from :func:`build_cos_lp`, an instance, loads).
    C_values : array (n,)
        The point to separate (e.g. ``result.values["C"]``).
    per_machine : int or None
        At most this many cuts per machine, the most violated (relative to ``f_i(S)``) first;
        None for every violated prefix.
    tol : float
        A prefix is violated when ``f_i(S) - sum L C* > tol * max(f_i(S), L_i(S))`` (the same rule
        as :class:`~clusteropt.solvers.rowgen.Cut` applies to the row divided by ``L_i(S)``).
    tie_tol : float
        ``C*`` values closer than ``tie_tol * max(1, |C*|)`` are one level set.

    Returns
    -------
    ParallelCuts
        Ordered by machine, then by relative violation (largest first).

    Examples
    --------
    One machine, loads 2 and 1, and a point ``C* = (2, 2)`` that satisfies both release rows
    (``C_j >= L_j``) but not ``2 C_0 + C_1 >= f({0, 1}) = 7``:

    >>> cuts = separate_parallel_inequalities(np.array([[2.0, 1.0]]), [2.0, 2.0])
    >>> cuts.n_cuts, cuts.job_set(0).tolist(), float(cuts.rhs[0]), float(cuts.lhs[0])
    (1, [0, 1], 7.0, 6.0)
    """
    data = cos_data(model_or_data)
    L = data.loads
    n_m, n = L.shape
    C = np.asarray(C_values, dtype=float).reshape(-1)
    if C.shape[0] != n:
        raise ValueError(f"C_values has {C.shape[0]} entries; expected one per job ({n})")
    if per_machine is not None and (int(per_machine) != per_machine or per_machine < 1):
        raise ValueError(f"per_machine = {per_machine!r}; expected a positive integer or None")
    empty = ParallelCuts(*(np.zeros(0, dtype=np.int64),), np.zeros(1, dtype=np.int64),
                         np.zeros(0, dtype=np.int64), *(np.zeros(0),) * 4)
    if n == 0 or n_m == 0:
        return empty

    order = np.argsort(C, kind="stable")
    Cs = C[order]
    Ls = L[:, order]
    step = np.diff(Cs) > tie_tol * np.maximum(1.0, np.abs(Cs[1:]))
    ends = np.flatnonzero(np.append(step, True))  # last position of each level set
    cumL = np.cumsum(Ls, axis=1)[:, ends]
    cumL2 = np.cumsum(Ls * Ls, axis=1)[:, ends]
    cumLC = np.cumsum(Ls * Cs, axis=1)[:, ends]
    count = np.cumsum(Ls > 0, axis=1)[:, ends]
    f = 0.5 * (cumL2 + cumL * cumL)
    viol = f - cumLC
    new = np.diff(count, axis=1, prepend=0) > 0  # the prefix gained a job on this machine
    ok = new & (viol > tol * np.maximum(f, cumL))
    score = np.where(ok, viol / np.where(f > 0, f, 1.0), -np.inf)

    n_e = ends.shape[0]
    k = n_e if per_machine is None else min(int(per_machine), n_e)
    if k < n_e:
        pick = np.argpartition(-score, k - 1, axis=1)[:, :k]
    else:
        pick = np.broadcast_to(np.arange(n_e), (n_m, n_e))
    picked = np.take_along_axis(score, pick, axis=1)
    rank = np.argsort(-picked, axis=1, kind="stable")
    pick = np.take_along_axis(pick, rank, axis=1)
    picked = np.take_along_axis(picked, rank, axis=1)
    mi, col = np.nonzero(np.isfinite(picked))
    if mi.size == 0:
        return empty
    e = pick[mi, col]

    jobs_list, coef_list, sizes = [], [], np.empty(mi.size, dtype=np.int64)
    for k_, (i, t) in enumerate(zip(mi.tolist(), ends[e].tolist())):
        pos = np.flatnonzero(Ls[i, : t + 1])
        jobs = order[pos]
        srt = np.argsort(jobs)
        jobs_list.append(jobs[srt])
        coef_list.append(Ls[i, pos][srt])
        sizes[k_] = pos.size
    ptr = np.zeros(mi.size + 1, dtype=np.int64)
    np.cumsum(sizes, out=ptr[1:])
    return ParallelCuts(
        machine=mi.astype(np.int64),
        ptr=ptr,
        jobs=np.concatenate(jobs_list).astype(np.int64),
        coef=np.concatenate(coef_list),
        load=cumL[mi, e],
        rhs=f[mi, e],
        lhs=cumLC[mi, e],
    )


def parallel_cut_rows(model: pyo.ConcreteModel, cuts: ParallelCuts) -> list[Cut]:
    """The cuts as row-generation :class:`~clusteropt.solvers.rowgen.Cut` objects on ``model.C``.

    Each row is ``sum_{j in S} (L_{i,j} / L_i(S)) C_j >= f_i(S) / L_i(S)``; its ``violation`` is in
    slots and its ``scale`` is the right-hand side; its ``key`` is ``(i, S)``.
    """
    from pyomo.core.expr.numeric_expr import LinearExpression  # here: Pyomo takes 0.7 s to import

    from clusteropt.solvers.rowgen import Cut

    cvars = list(model.C.values())
    out = []
    ptr, jobs, coef = cuts.ptr, cuts.jobs, cuts.coef
    for k in range(cuts.n_cuts):
        lo, hi = int(ptr[k]), int(ptr[k + 1])
        load = float(cuts.load[k])
        js = jobs[lo:hi]
        body = LinearExpression(linear_coefs=(coef[lo:hi] / load).tolist(),
                                linear_vars=[cvars[j] for j in js.tolist()])
        rhs = float(cuts.rhs[k]) / load
        out.append(Cut(body >= rhs, (float(cuts.rhs[k]) - float(cuts.lhs[k])) / load, rhs,
                       key=(int(cuts.machine[k]), js.tobytes())))
    return out



# ---------------------------------------------------------------------------------------------
# exact time-indexed MILPs (tiny instances)


def _horizon(horizon: int | None, default: int, need: int, what: str) -> int:
    if horizon is None:
        return max(int(default), 1)
    if isinstance(horizon, bool) or int(horizon) != horizon or horizon < 1:
        raise ValueError(f"horizon = {horizon!r}; expected a positive integer number of slots")
    if horizon < need:
        raise ValueError(f"horizon = {horizon} slots; {what} needs at least {need} (max_j r_j + L_ij)")
    return int(horizon)


def build_cos_milp(
    inst: ConcurrentOpenShopInstance, horizon: int | None = None, *, relax: bool = False
) -> pyo.ConcreteModel:
    """Exact time-indexed MILP of concurrent open shop (preemptive at slot granularity).

    ``x[i, j, t] = 1`` when machine i works on job j in slot t (``t = r_j + 1 .. T``):

    * ``sum_j x[i, j, t] <= 1`` (a machine does one unit per slot),
    * ``sum_t x[i, j, t] = p_ij`` (all of job j's work on machine i),
    * ``C_j >= t x[i, j, t]`` and ``C_j >= r_j``; minimize ``sum_j w_j C_j``.

    Not a formulation of the slides (it has one binary per unit of work and slot); it is the
    exact reference for tiny instances (a few jobs and machines, tens of slots) against which
    the LP bound and the approximation algorithms are tested.

    Parameters
    ----------
    inst : ConcurrentOpenShopInstance
    horizon : int, optional
        Number of slots T.  Default ``max_j r_j + max_i sum_j p_ij``, which never cuts off an
        optimum: shifting every unit of an optimal schedule to the earliest free slot on its
        machine (keeping their order) delays nobody, and afterwards no machine idles after
        ``max_j r_j`` while it has work left.
    relax : bool
        Continuous ``x`` in [0, 1] (the weak LP relaxation of this formulation).

    Returns
    -------
    pyomo.environ.ConcreteModel
        ``x``, ``C``; constraints ``machine_capacity``, ``processing``, ``completion``,
        ``release``; objective ``total_weighted_completion``.

    Examples
    --------
    One machine, jobs of 2 and 1 units, weights 1 and 3: Smith's rule runs job 1 first, 3 + 3 = 6.

    >>> from clusteropt.solvers import solve
    >>> solve(build_cos_milp(ConcurrentOpenShopInstance([[2, 1]], [1.0, 3.0], [0, 0]))).objective
    6.0
    """
    import pyomo.environ as pyo  # here: Pyomo takes 0.7 s to import

    if not isinstance(inst, ConcurrentOpenShopInstance):
        raise TypeError(f"build_cos_milp takes a ConcurrentOpenShopInstance, got {type(inst).__name__}")
    p = np.asarray(inst.processing, dtype=np.int64)
    r = np.asarray(inst.release, dtype=np.int64)
    n_m, n = p.shape
    max_r = int(r.max()) if n else 0
    need = int((r + p.max(axis=0)).max()) if n and n_m else 1
    T = _horizon(horizon, max_r + (int(p.sum(axis=1).max()) if n and n_m else 0), need, "the instance")

    rows, cols = np.nonzero(p)
    check_model_size("cos-milp", int(np.sum(T - r[cols])) + n,
                     f"{rows.size} nonzero loads x up to {T} slots, plus C",
                     advice="Use the LP bound (cos-lp) or a shorter horizon.")
    m = pyo.ConcreteModel(name="cos_milp")
    m.J = pyo.RangeSet(0, n - 1, doc="jobs j")
    m.M = pyo.RangeSet(0, n_m - 1, doc="machines i")
    m.T = pyo.RangeSet(1, T, doc="slots t = 1..T")
    ops = [(i, j) for i, j in zip(*map(np.ndarray.tolist, np.nonzero(p)))]
    m.ops = pyo.Set(initialize=ops, dimen=2, ordered=True, doc="(i, j) with p_ij > 0")
    m.p = pyo.Param(m.ops, initialize={(i, j): int(p[i, j]) for i, j in ops},
                    doc="p_ij: units of job j on machine i")
    m.w = pyo.Param(m.J, initialize=dict(enumerate(np.asarray(inst.weight, float).tolist())), doc="w_j: weight")
    m.r = pyo.Param(m.J, initialize=dict(enumerate(r.tolist())), doc="r_j: release (slots r_j+1.. usable)")
    idx = [(i, j, t) for i, j in ops for t in range(int(r[j]) + 1, T + 1)]
    m.X = pyo.Set(initialize=idx, dimen=3, ordered=True, doc="(i, j, t) with p_ij > 0 and r_j < t <= T")
    m.x = pyo.Var(m.X, domain=pyo.UnitInterval if relax else pyo.Binary,
                  doc="x_ijt = 1 if machine i works on job j in slot t")
    m.C = pyo.Var(m.J, domain=pyo.NonNegativeReals, doc="C_j: completion time (last busy slot) of job j")

    by_slot: dict[tuple[int, int], list] = {}
    by_op: dict[tuple[int, int], list] = {}
    for i, j, t in idx:
        by_slot.setdefault((i, t), []).append(m.x[i, j, t])
        by_op.setdefault((i, j), []).append(m.x[i, j, t])
    m.machine_capacity = pyo.Constraint(
        pyo.Set(initialize=sorted(by_slot), dimen=2, ordered=True, doc="(i, t) with some x_ijt"),
        rule=lambda m, i, t: sum(by_slot[i, t]) <= 1,
        doc="sum_j x_ijt <= 1: one unit per machine and slot",
    )
    m.processing = pyo.Constraint(m.ops, rule=lambda m, i, j: sum(by_op[i, j]) == m.p[i, j],
                                  doc="sum_t x_ijt = p_ij")
    m.completion = pyo.Constraint(m.X, rule=lambda m, i, j, t: m.C[j] >= t * m.x[i, j, t],
                                  doc="C_j >= t x_ijt")
    m.release = pyo.Constraint(m.J, rule=lambda m, j: m.C[j] >= m.r[j], doc="C_j >= r_j")
    m.total_weighted_completion = pyo.Objective(expr=sum(m.w[j] * m.C[j] for j in m.J), sense=pyo.minimize,
                                                doc="min sum_j w_j C_j")
    return m


def build_coflow_milp(
    inst: CoflowInstance, horizon: int | None = None, *, relax: bool = False
) -> pyo.ConcreteModel:
    """Exact time-indexed MILP of coflow scheduling on a big switch (the slides' model).

    ``x[f, t] = 1`` when flow ``f = (j, a, b)`` (coflow j, input a, output b) moves one unit in
    slot t (``t = r_j + 1 .. T``):

    * ``sum_{f: input a} x[f, t] <= 1`` and ``sum_{f: output b} x[f, t] <= 1`` (each port one unit
      per slot: the slot's flows form a matching),
    * ``sum_t x[f, t] = d^j_{ab}``,
    * ``C_j >= t x[f, t]`` and ``C_j >= r_j``; minimize ``sum_j w_j C_j``.

    Exact reference for tiny instances (say <= 6 coflows, <= 4 ports, <= 20 units).

    Parameters
    ----------
    inst : CoflowInstance
    horizon : int, optional
        Slots T; default ``max_j r_j + total units`` (an optimal schedule can be taken to move
        at least one unit in every slot after ``max_j r_j`` until it ends: deleting an empty
        slot delays nobody).
    relax : bool
        Continuous ``x`` in [0, 1].

    Examples
    --------
    Two unit flows sharing input 0, weights 1 and 2: the heavier goes first, 2*1 + 1*2 = 4.

    >>> from clusteropt.solvers import solve
    >>> inst = CoflowInstance(1, 2, [0, 1], [0, 0], [0, 1], [1, 1], [1.0, 2.0], [0, 0])
    >>> solve(build_coflow_milp(inst)).objective
    4.0
    """
    import pyomo.environ as pyo  # here: Pyomo takes 0.7 s to import

    if not isinstance(inst, CoflowInstance):
        raise TypeError(f"build_coflow_milp takes a CoflowInstance, got {type(inst).__name__}")
    r = np.asarray(inst.release, dtype=np.int64)
    n = inst.n_coflows
    loads = inst.loads()
    need = int((r + loads.max(axis=1)).max()) if n else 1
    T = _horizon(horizon, (int(r.max()) if n else 0) + int(np.sum(inst.units)), need, "the instance")
    cf, a_, b_, d_ = (inst.coflow.tolist(), inst.input.tolist(), inst.output.tolist(), inst.units.tolist())

    check_model_size("coflow-milp", int(np.sum(T - r[np.asarray(inst.coflow, dtype=np.int64)])) + n,
                     f"{inst.n_flows} flows x up to {T} slots, plus C",
                     advice="The exact MILP is for tiny instances; use the LP bound (coflow-lp).")
    m = pyo.ConcreteModel(name="coflow_milp")
    m.J = pyo.RangeSet(0, n - 1, doc="coflows j")
    m.F = pyo.RangeSet(0, inst.n_flows - 1, doc="flows f = (j, a, b) with d^j_ab > 0")
    m.T = pyo.RangeSet(1, T, doc="slots t = 1..T")
    m.d = pyo.Param(m.F, initialize=dict(enumerate(d_)), doc="d^j_ab: units of flow f")
    m.w = pyo.Param(m.J, initialize=dict(enumerate(np.asarray(inst.weight, float).tolist())), doc="w_j: weight")
    m.r = pyo.Param(m.J, initialize=dict(enumerate(r.tolist())), doc="r_j: release (slots r_j+1.. usable)")
    idx = [(f, t) for f in range(inst.n_flows) for t in range(int(r[cf[f]]) + 1, T + 1)]
    m.X = pyo.Set(initialize=idx, dimen=2, ordered=True, doc="(f, t) with r_j < t <= T")
    m.x = pyo.Var(m.X, domain=pyo.UnitInterval if relax else pyo.Binary,
                  doc="x_ft = 1 if flow f moves one unit in slot t")
    m.C = pyo.Var(m.J, domain=pyo.NonNegativeReals, doc="C_j: completion time (last busy slot) of coflow j")

    at_in: dict[tuple[int, int], list] = {}
    at_out: dict[tuple[int, int], list] = {}
    of_flow: dict[int, list] = {}
    for f, t in idx:
        v = m.x[f, t]
        at_in.setdefault((a_[f], t), []).append(v)
        at_out.setdefault((b_[f], t), []).append(v)
        of_flow.setdefault(f, []).append(v)
    m.input_capacity = pyo.Constraint(
        pyo.Set(initialize=sorted(at_in), dimen=2, ordered=True, doc="(input a, t) with some x_ft"),
        rule=lambda m, a, t: sum(at_in[a, t]) <= 1,
        doc="sum_{f at input a} x_ft <= 1: an input port sends one unit per slot",
    )
    m.output_capacity = pyo.Constraint(
        pyo.Set(initialize=sorted(at_out), dimen=2, ordered=True, doc="(output b, t) with some x_ft"),
        rule=lambda m, b, t: sum(at_out[b, t]) <= 1,
        doc="sum_{f at output b} x_ft <= 1: an output port receives one unit per slot",
    )
    m.demand = pyo.Constraint(m.F, rule=lambda m, f: sum(of_flow.get(f, [])) == m.d[f], doc="sum_t x_ft = d^j_ab")
    m.completion = pyo.Constraint(m.X, rule=lambda m, f, t: m.C[cf[f]] >= t * m.x[f, t],
                                  doc="C_j >= t x_ft for the flows f of coflow j")
    m.release = pyo.Constraint(m.J, rule=lambda m, j: m.C[j] >= m.r[j], doc="C_j >= r_j")
    m.total_weighted_completion = pyo.Objective(expr=sum(m.w[j] * m.C[j] for j in m.J), sense=pyo.minimize,
                                                doc="min sum_j w_j C_j (slides' objective)")
    return m


# ---------------------------------------------------------------------------------------------
# registry


def _lp_builder(inst, *, relax: bool = False) -> pyo.ConcreteModel:
    """Registry builder: the starting LP of :func:`build_cos_lp` (``relax`` is moot: it is an LP).

    Solving it alone gives a weaker bound than the slides' LP (only the full-set parallel
    inequalities); :func:`~clusteropt.models.coflow.bound.cos_lower_bound` runs the row generation that closes
    the gap.
    """
    return build_cos_lp(inst)


def _cos_milp_builder(inst, *, relax: bool = False) -> pyo.ConcreteModel:
    """Registry builder: :func:`build_cos_milp` with the default horizon."""
    return build_cos_milp(inst, relax=relax)


def _coflow_milp_builder(inst, *, relax: bool = False) -> pyo.ConcreteModel:
    """Registry builder: :func:`build_coflow_milp` with the default horizon."""
    return build_coflow_milp(inst, relax=relax)


#: The same LP as arrays (by path: that module imports this one).
_LP_ARRAYS = "clusteropt.models.coflow.matrix:cos_lp_arrays"

register_model(ModelSpec(
    "coflow-lp", CoflowInstance.kind, _lp_builder, "pyomo",
    "paper 001 concurrent-open-shop LP over the coflow's port loads, release + full-set parallel rows "
    "only (weaker bound; cos_lower_bound adds the rest by row generation)", array_builder=_LP_ARRAYS,
))
register_model(ModelSpec(
    "cos-lp", ConcurrentOpenShopInstance.kind, _lp_builder, "pyomo",
    "paper 001 concurrent-open-shop LP, release + full-set parallel rows only (weaker bound; "
    "cos_lower_bound adds the rest by row generation)", array_builder=_LP_ARRAYS,
))
register_model(ModelSpec(
    "coflow-milp", CoflowInstance.kind, _coflow_milp_builder, "pyomo",
    "paper 001 coflows on a big switch, exact time-indexed MILP (tiny instances; relax: its LP relaxation)",
))
register_model(ModelSpec(
    "cos-milp", ConcurrentOpenShopInstance.kind, _cos_milp_builder, "pyomo",
    "paper 001 concurrent open shop, exact time-indexed MILP (tiny instances; relax: its LP relaxation)",
))
