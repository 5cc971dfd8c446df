"""Paper 004 (Räcke, Schmid, Zabrodin): exact offline optima without a solver, for tiny instances.

These are the oracles the solver models (:mod:`clusteropt.models.ring.offline`) and the online
algorithms are tested against (docs/algorithms/ring-partitioning.md A3, A5).

Ring partitioning (Sec. 1, Thm 2.1 / 2.2 comparators)
    A *labelling* gives every process a server with at most ``capacity`` processes per server;
    :func:`feasible_labellings` lists them all (``n = 8``, ``l = 2``, capacity 4: 70 of them).

    :func:`dynamic_opt_dp` is value iteration over labellings.  Timing (the same as
    :func:`clusteropt.models.ring.offline.build_ring_dynamic_opt`): before (compressed) request ``t`` the
    algorithm may migrate, paying ``alpha`` per process that changes server (the Hamming distance
    of the two labellings), then serves request ``t`` under the new labelling::

        W_0 = 0 at the initial labelling, +inf elsewhere
        W_t(S) = min_S' [W_{t-1}(S') + alpha Ham(S', S)] + w_t hit_t(S)
        OPT_dyn = min_S W_T'(S)

    with ``hit_t(S) = 1`` when the endpoints of request ``t``'s edge are on different servers of
    ``S``.  The inner minimum runs against the ``|S| x |S|`` Hamming matrix, or, when that is
    larger, as a separable distance transform over all ``l^n`` labellings (``n = 22``, ``l = 2``:
    about 0.5 s of CPU per compressed request; ``n = 24``: 2.6 s; ``python -m
    benchmarks.ring_dynamic_milp``).  The schedule is backtracked from checkpoints of ``W`` within a
    memory budget (:func:`dynamic_opt_dp`), so the sequence length is not limited.  Migrating
    before the first request is allowed (``t = 1``); migrating after the last one never helps.
    Requests are run-length compressed first (:func:`compress_requests`; a run of ``w`` identical
    requests is one request of weight ``w``), which is exact: given the placements used during a
    run, replacing them all by the one with the fewest hits costs no more hits, and by the triangle
    inequality of the Hamming distance no more migration.

    :func:`static_opt_bruteforce` is the static optimum (migrate only before the first request):
    ``min_S sum_e r_e cut_e(S) + alpha Ham(initial, S)``.

A lower bound on OPT_dyn at any size (ours; the paper has none)
    :func:`dynamic_window_bound` cuts the sequence into windows.  In each window an offline
    solution either migrates (at least ``m = alpha`` x the fewest processes a change of
    labelling moves) or serves the whole window under one labelling, so it pays at least
    ``min(m, cut_i)`` there, with ``cut_i`` a lower bound on the cheapest labelling's cost for the
    window's requests (:func:`gap_cut`).  Linear in the sequence up to a log factor; how close it
    comes to OPT_dyn where the DP runs is tabulated by the ``ring-ratio-exact`` experiment (table
    ``bound``).

    :func:`dynamic_cut_bound` runs the DP over cut sets instead of labellings: a request costs the
    same, a migration at least ``alpha / 2`` per edge whose cut status changes, and the cut sets
    are the edge sets whose consecutive cuts are at most ``capacity`` apart.  ``2^n`` states
    instead of ``l^n``, so it reaches ``n = 16`` on 4 servers, where the DP over labellings cannot.
    An LP over the same cut sets (fractional cut statuses, the same two move charges), certified
    through its Lagrangian, runs at any ``n`` (:func:`clusteropt.models.ring.cut.dynamic_cut_lp_bound`;
    it and this DP are not ordered by construction).  All are lower bounds: take the largest.

An upper bound on OPT_dyn at any size (ours)
    :func:`dynamic_opt_restricted` runs the same DP over a given set of labellings (plus the
    initial one): the exact optimum over that class, hence at least OPT_dyn, with a schedule
    the verifier can replay.  :func:`dynamic_arc_bound` takes the placements with one arc of
    ``k`` consecutive processes per server (:func:`arc_labellings`, ``k l!`` of them), so it
    is at most the ``static-best`` baseline's cost; with the window bound it brackets OPT_dyn
    (``python -m benchmarks.ring_dynamic_bracket``).

Line games (docs/algorithms/ring-partitioning.md A3, A4) for the interval algorithms' unit tests
    :func:`line_hitting_static_opt`: the hitting game's static optimum ``min_e |e - e0| + r_e``.
    :func:`line_mts_opt`: the offline optimum of the line MTS (minimum of the work function).

References
----------
Räcke, Schmid, Zabrodin, "Dynamic Balanced Graph Partitioning for Ring Demands", SPAA 2023
(paper 004): Sec. 1 (model), Sec. 3 (line MTS per interval), Sec. 4.1 (hitting game).
"""

from __future__ import annotations

import dataclasses
import logging
import time
from fractions import Fraction
from math import factorial

import numpy as np

__all__ = [
    "MAX_CUT_BOUND_EDGES",
    "MAX_DP_GRID",
    "MAX_DP_LABELLINGS",
    "MAX_DP_MEMORY",
    "MAX_DP_TABLE",
    "MAX_LABELLINGS",
    "DPPlan",
    "DynamicDP",
    "WindowBound",
    "arc_labellings",
    "compress_requests",
    "dynamic_arc_bound",
    "dynamic_cut_bound",
    "dynamic_dp_plan",
    "dynamic_opt_dp",
    "dynamic_opt_restricted",
    "dynamic_opt_value",
    "dynamic_window_bound",
    "feasible_labellings",
    "gap_cut",
    "hamming_matrix",
    "line_hitting_static_opt",
    "line_mts_opt",
    "migrations_from_placements",
    "min_move_cost",
    "schedule_cost",
    "static_opt_bruteforce",
]

log = logging.getLogger(__name__)

#: :func:`feasible_labellings` refuses to list more labellings than this (``n = 12``, ``l = 3``,
#: capacity 4 has 34,650).
MAX_LABELLINGS = 200_000
#: :func:`dynamic_opt_dp` refuses more labellings than this: each step costs ``|S|^2`` work and
#: the Hamming matrix ``|S|^2`` bytes (3,000 labellings: 9 MB; 3,432 labellings take about 60 ms of
#: CPU a step, ``python -m benchmarks.ring_dynamic_milp``).
MAX_DP_LABELLINGS = 3_000
#: :func:`dynamic_opt_dp` with ``method="transform"`` and :func:`dynamic_opt_value` refuse ``l^n`` above
#: this (``2^24``: ``n = 24`` on 2 servers, 15 on 3, 12 on 4; the labels, one grid of values and the
#: budgeted rows peak at about 1.3 GB there; ``python -m benchmarks.ring_dynamic_milp`` times a step).
MAX_DP_GRID = 1 << 24
#: :func:`dynamic_opt_dp` with ``method="matrix"`` stores ``T' x |S|`` values for backtracking and
#: refuses more than this.
MAX_DP_TABLE = 25_000_000
#: :func:`dynamic_opt_dp` with ``method="transform"`` keeps at most this many bytes of value rows for
#: backtracking (checkpoints and one recomputed block; module docstring): 1 GiB.
MAX_DP_MEMORY = 1 << 30


def _capacity(n: int, servers: int, capacity) -> int:
    k = n // servers
    if capacity is None:
        return k
    cap = int(np.floor(float(capacity) + 1e-9))
    if cap < k:
        raise ValueError(f"capacity = {capacity!r}; expected >= k = n / servers = {k}")
    return min(cap, n)


def _count_labellings(n: int, servers: int, capacity: int) -> int:
    """Number of maps ``{0..n-1} -> {0..servers-1}`` with every load <= capacity (exact).

    ``n! [x^n] (sum_{j <= capacity} x^j / j!)^servers``.
    """
    base = [Fraction(1, factorial(j)) for j in range(min(capacity, n) + 1)]
    poly = [Fraction(1)]
    for _ in range(servers):
        out = [Fraction(0)] * min(len(poly) + len(base) - 1, n + 1)
        for i, a in enumerate(poly):
            for j, b in enumerate(base):
                if i + j <= n:
                    out[i + j] += a * b
        poly = out
    return int(poly[n] * factorial(n)) if len(poly) > n else 0


def feasible_labellings(n: int, servers: int, capacity: int | None = None, *,
                        max_count: int = MAX_LABELLINGS) -> np.ndarray:
    """All assignments of ``n`` processes to ``servers`` servers with loads <= ``capacity``.

    Parameters
    ----------
    n, servers : int
        Ring size and number of servers ``l`` (``n`` a multiple of ``l``).
    capacity : int, optional
        Load bound per server (default ``k = n / l``; must be >= k).
    max_count : int
        Refuse (``ValueError``) when there are more labellings than this (counted exactly,
        before anything is enumerated).  Default :data:`MAX_LABELLINGS`.

    Returns
    -------
    int array (number of labellings, n)
        One labelling per row (server of each process), in lexicographic order.

    Examples
    --------
    >>> S = feasible_labellings(4, 2)
    >>> S.shape, S[:3].tolist()
    ((6, 4), [[0, 0, 1, 1], [0, 1, 0, 1], [0, 1, 1, 0]])
    >>> feasible_labellings(8, 2).shape[0], feasible_labellings(6, 3).shape[0]
    (70, 90)
    >>> feasible_labellings(16, 2, max_count=10_000)
    Traceback (most recent call last):
    ...
    ValueError: 12870 labellings of n = 16 processes on 2 servers (capacity 8); more than max_count = 10000: ...
    """
    n, servers = int(n), int(servers)
    if n < 1 or servers < 1 or n % servers:
        raise ValueError(f"n = {n}, servers = {servers}; expected n >= 1 a multiple of servers >= 1")
    cap = _capacity(n, servers, capacity)
    count = _count_labellings(n, servers, cap)
    if count > max_count:
        raise ValueError(f"{count} labellings of n = {n} processes on {servers} servers (capacity {cap}); "
                         f"more than max_count = {max_count}: use the MILP (clusteropt.models.ring.offline)")
    # grow prefixes position by position; every prefix with loads <= cap extends to a full
    # labelling (servers * cap >= n), so no intermediate array is larger than the result
    rows = np.zeros((1, 0), dtype=np.int64)
    loads = np.zeros((1, servers), dtype=np.int64)
    for _ in range(n):
        new = np.repeat(rows, servers, axis=0)
        lab = np.tile(np.arange(servers, dtype=np.int64), rows.shape[0])
        ld = np.repeat(loads, servers, axis=0)
        ld[np.arange(ld.shape[0]), lab] += 1
        keep = ld[np.arange(ld.shape[0]), lab] <= cap
        rows = np.concatenate([new, lab[:, None]], axis=1)[keep]
        loads = ld[keep]
    assert rows.shape[0] == count
    return rows


def hamming_matrix(labellings: np.ndarray, *, chunk: int = 256) -> np.ndarray:
    """``H[i, j]`` = processes on different servers in labellings i and j (int16, computed in chunks).

    >>> hamming_matrix(np.array([[0, 0, 1], [0, 1, 1], [1, 1, 0]])).tolist()
    [[0, 1, 3], [1, 0, 2], [3, 2, 0]]
    """
    S = np.asarray(labellings)
    out = np.empty((S.shape[0], S.shape[0]), dtype=np.int16)
    for lo in range(0, S.shape[0], chunk):
        out[lo:lo + chunk] = (S[lo:lo + chunk, None, :] != S[None, :, :]).sum(axis=2)
    return out


def compress_requests(requests) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Merge runs of identical consecutive requests: ``(edges, weights, starts)``.

    ``starts[t]`` is the index in the original sequence of the first request of run ``t``.
    Exact for both the dynamic and the static optimum (module docstring).

    >>> e, w, s = compress_requests([3, 3, 1, 3, 3, 3])
    >>> e.tolist(), w.tolist(), s.tolist()
    ([3, 1, 3], [2, 1, 3], [0, 2, 3])
    """
    r = np.asarray(requests, dtype=np.int64).ravel()
    if r.size == 0:
        z = np.zeros(0, dtype=np.int64)
        return z, z.copy(), z.copy()
    starts = np.flatnonzero(np.r_[True, r[1:] != r[:-1]])
    weights = np.diff(np.r_[starts, r.size])
    return r[starts].copy(), weights.astype(np.int64), starts.astype(np.int64)


def migrations_from_placements(initial, placements, starts) -> np.ndarray:
    """The run-format migrations ``(M, 3)`` of ``[request index, process, to server]`` that turn
    ``initial`` into ``placements[t]`` just before original request ``starts[t]``.

    The migrations into placement ``t`` are applied after request ``starts[t] - 1`` (index -1:
    before the first request), the convention of :mod:`clusteropt.online.ring`.

    >>> migrations_from_placements([0, 0, 1, 1], [[0, 1, 0, 1], [0, 1, 0, 1]], [0, 5]).tolist()
    [[-1, 1, 1], [-1, 2, 0]]
    """
    prev = np.asarray(initial, dtype=np.int64)
    out = []
    for t, p in enumerate(np.asarray(placements, dtype=np.int64)):
        moved = np.flatnonzero(p != prev)
        if moved.size:
            out.append(np.column_stack([np.full(moved.size, int(starts[t]) - 1), moved, p[moved]]))
        prev = p
    return np.concatenate(out).astype(np.int64) if out else np.zeros((0, 3), dtype=np.int64)


def schedule_cost(instance, placements: np.ndarray, edges: np.ndarray, weights: np.ndarray) -> float:
    """Communication plus ``alpha`` x migrations of serving compressed request ``t`` under
    ``placements[t]``, starting from ``instance.initial`` (recomputed from the placements alone).

    >>> from clusteropt.instances.ring import RingInstance
    >>> inst = RingInstance(n=4, servers=2, requests=[1, 1, 3])     # initial [0, 0, 1, 1]
    >>> schedule_cost(inst, np.array([[0, 0, 1, 1], [1, 0, 0, 1]]), np.array([1, 3]), np.array([2, 1]))
    4.0
    """
    p = np.asarray(placements, dtype=np.int64)
    prev = np.vstack([np.asarray(instance.initial, dtype=np.int64)[None, :], p])
    moves = int((prev[1:] != prev[:-1]).sum())
    t = np.arange(edges.size)
    hits = p[t, edges] != p[t, (edges + 1) % instance.n]
    return float(np.asarray(weights, dtype=float) @ hits) + float(instance.alpha) * moves


@dataclasses.dataclass(frozen=True)
class DynamicDP:
    """Result of :func:`dynamic_opt_dp`: an optimal dynamic solution as placements and as a run.

    Attributes
    ----------
    value : float
        ``OPT_dyn``: communication plus ``alpha`` x migrations.
    placements : int array (T', n)
        Placement serving each compressed request.
    starts : int array (T',)
        Original index of the first request of each run.
    initial : int array (n,)
    migrations : int array (M, 3)
        The run format of :mod:`clusteropt.online.ring` (check with ``clusteropt.verify.check_ring_run``).
    augmentation : float
        ``capacity / k``.
    """

    value: float
    placements: np.ndarray
    starts: np.ndarray
    initial: np.ndarray
    migrations: np.ndarray
    augmentation: float


@dataclasses.dataclass(frozen=True)
class DPPlan:
    """How :func:`dynamic_opt_dp` would run on an instance (:func:`dynamic_dp_plan`).

    Attributes
    ----------
    method : {"matrix", "transform"}
    capacity : int
        The load bound.
    labellings : int
        ``|S|``, the capacity-feasible labellings (the DP's states).
    grid : int
        ``l^n``, all labellings (the transform's grid).
    steps : int
        ``T'``, the compressed requests.
    """

    method: str
    capacity: int
    labellings: int
    grid: int
    steps: int


def dynamic_dp_plan(instance, capacity: int | None = None, *, method: str = "auto",
                    max_labellings: int = MAX_DP_LABELLINGS, max_grid: int = MAX_DP_GRID,
                    max_table: int = MAX_DP_TABLE, max_memory: int = MAX_DP_MEMORY) -> DPPlan:
    """The method :func:`dynamic_opt_dp` takes on ``instance`` and its sizes, or the ``ValueError``
    it raises past its limits (the same arguments), without running it.

    ``"auto"`` takes the matrix method when its table fits and it is the cheaper per request
    (``|S|^2 <= n l^(n+1)``), else the transform.

    >>> from clusteropt.instances.ring import RingInstance
    >>> dynamic_dp_plan(RingInstance(n=6, servers=3, requests=[1, 1, 5]))
    DPPlan(method='matrix', capacity=2, labellings=90, grid=729, steps=2)
    >>> dynamic_dp_plan(RingInstance(n=20, servers=2, requests=[1])).method
    'transform'
    """
    n, ns = instance.n, instance.servers
    cap = _capacity(n, ns, capacity)
    if method not in ("auto", "matrix", "transform"):
        raise ValueError(f"method = {method!r}; expected 'auto', 'matrix' or 'transform'")
    count = _count_labellings(n, ns, cap)
    grid = ns ** n
    steps = int(compress_requests(instance.requests)[0].size)
    if method == "auto":
        matrix_ok = count <= max_labellings and steps * count <= max_table
        transform_ok = grid <= max_grid
        if matrix_ok and (not transform_ok or count * count <= n * ns * grid):
            method = "matrix"
        elif transform_ok:
            method = "transform"
        else:
            raise ValueError(f"dynamic DP too large: {count} labellings (matrix limit max_labellings = "
                             f"{max_labellings}) and l^n = {grid} (transform limit max_grid = {max_grid}); "
                             "use the MILP (clusteropt.models.ring.offline) or its LP bound")
    if method == "matrix" and count > max_labellings:
        raise ValueError(f"{count} labellings; more than max_labellings = {max_labellings} for method='matrix'")
    if method == "matrix" and steps * count > max_table:
        raise ValueError(f"dynamic DP table too large: T' = {steps} compressed requests x {count} "
                         f"labellings > max_table = {max_table}")
    if method == "transform" and grid > max_grid:
        raise ValueError(f"l^n = {grid} labellings in the grid; more than max_grid = {max_grid} for "
                         "method='transform'")
    if method == "transform" and int(max_memory) // (8 * count) < 3:
        raise ValueError(f"max_memory = {max_memory} bytes holds {int(max_memory) // (8 * count)} value rows of "
                         f"{count} labellings; expected room for at least 3")
    return DPPlan(method, cap, count, grid, steps)


def dynamic_opt_dp(instance, capacity: int | None = None, *, method: str = "auto",
                   max_labellings: int = MAX_DP_LABELLINGS, max_grid: int = MAX_DP_GRID,
                   max_table: int = MAX_DP_TABLE, max_memory: int = MAX_DP_MEMORY,
                   time_limit: float | None = None) -> DynamicDP:
    """The dynamic offline optimum by value iteration over capacity-feasible labellings.

    ``W_t(S) = min_S' [W_{t-1}(S') + alpha Ham(S', S)] + w_t hit_t(S)`` (module docstring), on
    run-compressed requests.  The minimisation is done one of two ways:

    ``"matrix"``
        Against the ``|S| x |S|`` Hamming matrix, computed once: ``O(|S|^2)`` per request.
    ``"transform"``
        As a distance transform over *all* ``l^n`` labellings (infeasible ones at ``+inf``):
        the Hamming distance is a sum over processes, so the minimisation separates into ``n``
        passes ``W <- min(W, min_c W[.., v = c, ..] + alpha)``, ``O(n l^{n+1})`` per request.
        A path through infeasible intermediate labellings is fine: only its end points must
        meet the capacity (migrations of a step are applied together, Sec. 1).

    ``"auto"`` takes the cheaper one within the limits.  An optimal sequence of placements is
    recovered by backtracking, ``S_{t-1} = argmin_S' W_{t-1}(S') + alpha Ham(S', S_t)``.  The
    matrix method stores every ``W_t`` (``T' x |S|`` numbers, at most ``max_table``).  The
    transform method stores ``W_t`` only every so many steps and recomputes one block at a time
    from its checkpoint (recursively when the checkpoints alone exceed ``max_memory``), so its
    memory is bounded whatever ``T'`` and its time is a few forward passes (one when the whole
    table fits).

    Parameters
    ----------
    instance : RingInstance
    capacity : int, optional
        Load bound (default ``k``); pass ``c k`` to compare with an augmented run.
    method : {"auto", "matrix", "transform"}
    max_labellings : int
        ``"matrix"`` refuses more labellings than this (default :data:`MAX_DP_LABELLINGS`).
    max_grid : int
        ``"transform"`` refuses ``l^n`` above this (default :data:`MAX_DP_GRID`, ``2^24``).
    max_table : int
        ``"matrix"`` refuses when the stored table ``T' |S|`` exceeds this (default
        :data:`MAX_DP_TABLE`).
    max_memory : int
        Bytes of value rows ``"transform"`` may keep for backtracking (default
        :data:`MAX_DP_MEMORY`); refused when not even three rows fit.
    time_limit : float, optional
        Seconds; past them :class:`TimeoutError` is raised (checked once a request).

    Returns
    -------
    DynamicDP
        The value and an optimal sequence of placements.

    Raises
    ------
    ValueError
        Past the limits (the message names the sizes).
    TimeoutError
        ``time_limit`` ran out.

    References
    ----------
    Paper 004, Sec. 1 (the dynamic OPT of Thm 2.1); docs/algorithms/ring-partitioning.md A5.

    Examples
    --------
    >>> from clusteropt.instances.ring import RingInstance
    >>> inst = RingInstance(n=4, servers=2, requests=[1] * 5)   # initial {0,1}, {2,3}: edge 1 is cut
    >>> sol = dynamic_opt_dp(inst)
    >>> sol.value, sol.migrations.tolist()   # swap 1 and 3 (or 0 and 2) before the first request
    (2.0, [[-1, 1, 1], [-1, 3, 0]])
    >>> dynamic_opt_dp(inst, method="transform").value
    2.0

    With room for only three value rows the transform method recomputes blocks from checkpoints;
    the optimum is the same:

    >>> long = RingInstance(n=6, servers=2, requests=[1, 4, 2, 5, 0, 3] * 8)
    >>> a = dynamic_opt_dp(long, method="transform")
    >>> b = dynamic_opt_dp(long, method="transform", max_memory=3 * 8 * 20)   # 20 labellings
    >>> a.value == b.value, len(b.placements)
    (True, 48)
    """
    plan = dynamic_dp_plan(instance, capacity, method=method, max_labellings=max_labellings, max_grid=max_grid,
                           max_table=max_table, max_memory=max_memory)
    n, ns, cap, count, method = instance.n, instance.servers, plan.capacity, plan.labellings, plan.method
    edges, weights, starts = compress_requests(instance.requests)
    alpha = float(instance.alpha)
    initial = np.asarray(instance.initial, dtype=np.int64)
    if edges.size == 0:
        return DynamicDP(0.0, np.zeros((0, n), dtype=np.int64), starts, initial.copy(),
                         np.zeros((0, 3), dtype=np.int64), cap / instance.k)
    deadline = None if time_limit is None else time.monotonic() + float(time_limit)
    log.info("dynamic DP (%s): %d labellings, %d compressed requests (of %d)", method, count, edges.size,
             instance.n_requests)
    if method == "matrix":
        S = feasible_labellings(n, ns, cap, max_count=max(count, 1))
        table = _matrix_dp(S, alpha, (S != initial).sum(axis=1), edges, weights, deadline=deadline)
        placements = S[_backtrack(S, alpha, table)]
        value = float(table[-1].min())
    else:
        states = _GridStates(n, ns, cap)
        value, seq = _checkpointed_path(states, states.indicator(initial), edges, weights, alpha,
                                        int(max_memory) // (8 * count), deadline)
        placements = states.labelling(seq)
    migrations = migrations_from_placements(initial, placements, starts)
    return DynamicDP(value, placements, starts, initial.copy(), migrations, cap / instance.k)


def _past(deadline: float | None, t: int, total: int) -> None:
    if deadline is not None and time.monotonic() > deadline:
        raise TimeoutError(f"dynamic DP: time limit reached at compressed request {t} of {total}")


class _GridStates:
    """The capacity-feasible labellings as points of the grid of all ``l^n`` (lexicographic order).

    Process ``v`` is the grid digit of weight ``l^(n-1-v)``, so the feasible points in grid order
    are the rows of :func:`feasible_labellings` in its order.  ``move`` is the Hamming distance
    transform of a value vector over the feasible points (through the whole grid, infeasible
    points at ``+inf``).
    """

    def __init__(self, n: int, servers: int, cap: int) -> None:
        self.n, self.servers = n, servers
        grid = servers ** n
        self.powers = servers ** np.arange(n - 1, -1, -1, dtype=np.int64)
        idx = np.arange(grid, dtype=np.int64)
        labels = np.empty((n, grid), dtype=np.int8)
        for v in range(n):
            labels[v] = (idx // self.powers[v]) % servers
        del idx
        feasible = np.ones(grid, dtype=bool)
        load = np.zeros(grid, dtype=np.int16)
        for c in range(servers):
            load[:] = 0
            for v in range(n):
                load += labels[v] == c
            feasible &= load <= cap
        self.index = np.flatnonzero(feasible)
        del load, feasible
        self.labels = labels[:, self.index]  # (n, |S|): server of process v in feasible point j
        del labels
        self.cut = self.labels != np.roll(self.labels, -1, axis=0)  # cut[e, j]: edge (e, e+1) cut in j
        self.full = np.empty(grid)

    @property
    def size(self) -> int:
        return int(self.index.size)

    def indicator(self, labelling) -> np.ndarray:
        """0 at ``labelling``, ``+inf`` at every other feasible point."""
        v = np.full(self.size, np.inf)
        v[int(np.searchsorted(self.index, int(np.asarray(labelling, dtype=np.int64) @ self.powers)))] = 0.0
        return v

    def move(self, values: np.ndarray, alpha: float) -> np.ndarray:
        """``min_u values[u] + alpha Ham(u, .)`` over the feasible points."""
        self.full.fill(np.inf)
        self.full[self.index] = values
        _hamming_transform(self.full, self.n, self.servers, alpha)
        return self.full[self.index]

    def hamming(self, j: int) -> np.ndarray:
        """``Ham(u, point j)`` for every feasible point ``u``."""
        return (self.labels != self.labels[:, j:j + 1]).sum(axis=0)

    def labelling(self, points) -> np.ndarray:
        """The labellings (rows, int64) of the feasible points ``points``."""
        return self.labels[:, np.asarray(points, dtype=np.int64)].T.astype(np.int64)


def _checkpointed_path(states: _GridStates, start: np.ndarray, edges: np.ndarray, weights: np.ndarray,
                       alpha: float, rows: int, deadline: float | None) -> tuple[float, np.ndarray]:
    """``(OPT, point serving each compressed request)`` of the DP over ``states``, keeping at most
    ``rows`` value vectors at once (``rows >= 3``: the start, the one being computed, one kept).

    A segment's budget is the rows it may keep beyond its start.  A segment that fits is run
    forward with every row kept and backtracked, ``S_{t-1} = argmin W_{t-1} + alpha Ham(., S_t)``.
    A longer one is cut into ``K = max(2, budget // 2)`` pieces: one forward pass keeps the values
    at the ``K - 1`` inner piece starts, and the pieces are solved last to first with ``budget - K
    + 1`` rows each, the point serving the next piece's first request fixing where each backtrack
    ends.  With a budget of one row a segment recomputes from its start for every request.
    """
    total = edges.size
    seq = np.empty(total, dtype=np.int64)
    value = [np.inf]

    def step(v: np.ndarray, t: int) -> np.ndarray:
        _past(deadline, t, total)
        out = states.move(v, alpha)
        out += weights[t] * states.cut[edges[t]]
        return out

    def pick(v: np.ndarray, after: int) -> int:
        if after < 0:  # the last request: the optimum ends anywhere
            value[0] = float(v.min())
            return int(v.argmin())
        return int((v + alpha * states.hamming(after)).argmin())

    def segment(before: np.ndarray, t0: int, t1: int, after: int, budget: int) -> None:
        length = t1 - t0
        if length <= budget:
            kept = []
            v = before
            for t in range(t0, t1):
                v = step(v, t)
                kept.append(v)
            for i in range(length - 1, -1, -1):
                after = seq[t0 + i] = pick(kept.pop(), after)
            return
        if budget == 1:
            for t_end in range(t1 - 1, t0 - 1, -1):
                v = before
                for t in range(t0, t_end + 1):
                    v = step(v, t)
                after = seq[t_end] = pick(v, after)
            return
        pieces = max(2, budget // 2)
        size = -(-length // pieces)
        bounds = [*range(t0, t1, size), t1]
        inner = set(bounds[1:-1])
        marks = [before]
        v = before
        for t in range(t0, bounds[-2]):
            v = step(v, t)
            if t + 1 in inner:
                marks.append(v)
        child = budget - (len(bounds) - 2)
        for j in range(len(bounds) - 2, -1, -1):
            segment(marks.pop(), bounds[j], bounds[j + 1], after, child)
            after = int(seq[bounds[j]])

    segment(start, 0, total, -1, rows - 2)
    return value[0], seq


def _hamming_transform(w: np.ndarray, digits: int, base: int, cost: float) -> None:
    """In place, ``w(x) <- min_x' [w(x') + cost Ham(x, x')]`` over the grid of ``base^digits`` points
    (``w`` flat, one digit per coordinate).  The Hamming distance is a sum over digits, so the
    minimum separates into one pass per digit: ``O(digits base^(digits + 1))``.

    >>> w = np.array([0.0, np.inf, np.inf, 5.0])   # base 2, two digits: points 00, 01, 10, 11
    >>> _hamming_transform(w, 2, 2, 1.5); w.tolist()
    [0.0, 1.5, 1.5, 3.0]
    """
    for v in range(digits):
        view = w.reshape(base ** (digits - 1 - v), base, base ** v)
        np.minimum(view, view.min(axis=1, keepdims=True) + cost, out=view)


def _matrix_dp(S: np.ndarray, alpha: float, ham0: np.ndarray, edges: np.ndarray,
               weights: np.ndarray, *, deadline: float | None = None) -> np.ndarray:
    """The value table ``W_t`` (``T' x |S|``) of the DP over the labellings ``S`` (rows)."""
    cut = S != np.roll(S, -1, axis=1)  # cut[i, e]: edge e = (e, e + 1) cut in labelling i
    table = np.empty((edges.size, S.shape[0]))
    table[0] = alpha * ham0 + weights[0] * cut[:, edges[0]]
    move = alpha * hamming_matrix(S).astype(float)  # move[i, j]: from labelling i to j
    for t in range(1, edges.size):
        _past(deadline, t, edges.size)
        table[t] = (table[t - 1][:, None] + move).min(axis=0) + weights[t] * cut[:, edges[t]]
    return table


def _backtrack(S: np.ndarray, alpha: float, table: np.ndarray) -> np.ndarray:
    """Row of ``S`` serving each compressed request in an optimal path through ``table``."""
    seq = np.empty(table.shape[0], dtype=np.int64)
    seq[-1] = int(table[-1].argmin())
    for t in range(table.shape[0] - 1, 0, -1):
        seq[t - 1] = int((table[t - 1] + alpha * (S != S[seq[t]]).sum(axis=1)).argmin())
    return seq


def dynamic_opt_value(instance, capacity: int | None = None, *, max_grid: int = MAX_DP_GRID) -> float:
    """The dynamic offline optimum's value only, by the distance transform of :func:`dynamic_opt_dp`.

    Keeps one vector of ``l^n`` values (float64) instead of the ``T' x |S|`` table that
    backtracking needs, so it reaches larger capacities (an augmented run's ``c k``, where nearly
    every labelling is feasible) and longer sequences than :func:`dynamic_opt_dp`; it returns no
    schedule.  ``O(T' n l^{n+1})`` time.

    Raises
    ------
    ValueError
        ``l^n`` above ``max_grid``.

    Examples
    --------
    >>> from clusteropt.instances.ring import RingInstance
    >>> inst = RingInstance(n=4, servers=2, requests=[1] * 5)
    >>> dynamic_opt_value(inst), dynamic_opt_value(inst, capacity=4)   # capacity 4: move process 2 only
    (2.0, 1.0)
    >>> dynamic_opt_value(RingInstance(n=4, servers=2, requests=[1, 1]))
    2.0
    """
    n, ns = instance.n, instance.servers
    cap = _capacity(n, ns, capacity)
    grid = ns ** n
    if grid > max_grid:
        raise ValueError(f"l^n = {grid} labellings; more than max_grid = {max_grid}")
    alpha = float(instance.alpha)
    edges, weights, _ = compress_requests(instance.requests)
    states = _GridStates(n, ns, cap)
    w = states.indicator(instance.initial)
    for e, r in zip(edges.tolist(), weights.tolist(), strict=True):
        w = states.move(w, alpha)
        w += r * states.cut[e]
    return float(w.min())


def arc_labellings(n: int, servers: int, *, max_perms: int = 24) -> np.ndarray:
    """The labellings in which every server holds one arc of ``k = n / l`` consecutive processes.

    Arc ``j`` of offset ``o`` holds processes ``o + j k .. o + (j + 1) k - 1`` (mod ``n``), for
    ``o = 0..k-1``; the arcs go to the servers by every permutation when ``l! <= max_perms``,
    else by the ``l`` cyclic shifts of the initial order only (so ``n`` rotations of the
    contiguous initial assignment).  These are the placements of the ``static-best`` baseline at
    every offset and with any server order; :func:`dynamic_arc_bound` moves among them.

    Examples
    --------
    >>> arc_labellings(4, 2).tolist()
    [[0, 0, 1, 1], [1, 1, 0, 0], [1, 0, 0, 1], [0, 1, 1, 0]]
    >>> arc_labellings(64, 4).shape, arc_labellings(64, 8).shape   # 16 x 4!, then 8 x 8 shifts
    ((384, 64), (64, 64))
    """
    from itertools import permutations

    n, servers = int(n), int(servers)
    if n < 1 or servers < 1 or n % servers:
        raise ValueError(f"n = {n}, servers = {servers}; expected n >= 1 a multiple of servers >= 1")
    k = n // servers
    if factorial(servers) <= max_perms:
        perms = np.array(list(permutations(range(servers))), dtype=np.int64)
    else:
        perms = (np.arange(servers)[None, :] + np.arange(servers)[:, None]) % servers
    v = np.arange(n)
    rows = np.concatenate([perms[:, ((v - o) % n) // k] for o in range(k)])
    first = np.unique(rows, axis=0, return_index=True)[1]  # k = 1: every offset gives the same rows
    return rows[np.sort(first)]


def dynamic_opt_restricted(instance, candidates, capacity: int | None = None, *,
                           max_table: int = MAX_DP_TABLE) -> DynamicDP:
    """The cheapest dynamic solution that only ever uses ``candidates`` (and the initial labelling).

    The DP of :func:`dynamic_opt_dp` (``"matrix"`` method) with its state set replaced by the
    given labellings; the initial labelling is added when it is not among them, so staying put
    is always possible.  Its value is the exact optimum over that class, hence an *upper bound*
    on OPT_dyn, and its schedule is a feasible offline run at ``capacity``: check it with
    ``clusteropt.verify.check_ring_run``.  ``O(T' m^2)`` time for ``m`` labellings.

    Parameters
    ----------
    instance : RingInstance
    candidates : int array (m, n)
        Labellings (server of each process); every load at most ``capacity``.
    capacity : int, optional
        Load bound (default ``k``).
    max_table : int
        Refuse when the stored table ``T' m`` exceeds this.

    Raises
    ------
    ValueError
        A candidate of the wrong length, a label outside ``0..l-1`` or a load above ``capacity``
        (the message names the row), or the table past ``max_table``.

    Examples
    --------
    >>> from clusteropt.instances.ring import RingInstance
    >>> inst = RingInstance(n=4, servers=2, requests=[1] * 5)
    >>> dynamic_opt_restricted(inst, [[0, 1, 1, 0]]).value      # move 0 and 2 first: OPT_dyn
    2.0
    >>> dynamic_opt_restricted(inst, np.zeros((0, 4), dtype=int)).value   # initial only: never move
    5.0
    >>> dynamic_opt_restricted(inst, [[0, 0, 0, 1]])
    Traceback (most recent call last):
    ...
    ValueError: candidates[0]: server 0 holds 3 processes; expected at most capacity 2
    """
    n, ns = instance.n, instance.servers
    cap = _capacity(n, ns, capacity)
    C = np.asarray(candidates, dtype=np.int64)
    if C.ndim != 2 or C.shape[1] != n:
        raise ValueError(f"candidates: shape {C.shape}; expected (m, n = {n})")
    bad = np.flatnonzero(((C < 0) | (C >= ns)).any(axis=1))
    if bad.size:
        raise ValueError(f"candidates[{bad[0]}]: labels {C[bad[0]].tolist()}; expected servers 0..{ns - 1}")
    loads = np.stack([(C == c).sum(axis=1) for c in range(ns)], axis=1) if C.size else np.zeros((0, ns))
    over = np.argwhere(loads > cap)
    if over.size:
        i, c = over[0]
        raise ValueError(f"candidates[{i}]: server {c} holds {loads[i, c]} processes; expected at most "
                         f"capacity {cap}")
    initial = np.asarray(instance.initial, dtype=np.int64)
    S = np.unique(np.vstack([initial[None, :], C]), axis=0)
    alpha = float(instance.alpha)
    edges, weights, starts = compress_requests(instance.requests)
    if edges.size == 0:
        return DynamicDP(0.0, np.zeros((0, n), dtype=np.int64), starts, initial.copy(),
                         np.zeros((0, 3), dtype=np.int64), cap / instance.k)
    if edges.size * S.shape[0] > max_table:
        raise ValueError(f"restricted DP table too large: T' = {edges.size} compressed requests x "
                         f"{S.shape[0]} labellings > max_table = {max_table}")
    log.info("restricted dynamic DP: %d labellings, %d compressed requests", S.shape[0], edges.size)
    table = _matrix_dp(S, alpha, (S != initial).sum(axis=1), edges, weights)
    placements = S[_backtrack(S, alpha, table)]
    migrations = migrations_from_placements(initial, placements, starts)
    return DynamicDP(float(table[-1].min()), placements, starts, initial.copy(), migrations, cap / instance.k)


def dynamic_arc_bound(instance, *, extra=None, max_perms: int = 24,
                      max_table: int = MAX_DP_TABLE) -> DynamicDP:
    """An upper bound on OPT_dyn at capacity ``k`` for any ``n``: the best moving-arcs solution (ours).

    The exact optimum, by :func:`dynamic_opt_restricted`, over solutions that keep every server
    on one arc of ``k`` consecutive processes (:func:`arc_labellings`: any offset, any server
    order when ``l! <= max_perms``) and may move between such placements before any request, or
    stay on the initial labelling.  ``extra`` adds labellings (e.g. the static optimum's
    placement, which makes the bound at most OPT_static).  With the window lower bound
    (:func:`dynamic_window_bound`) it brackets OPT_dyn where the DP over all labellings cannot
    run.  Not in the paper; it is the dynamic counterpart of the ``static-best`` baseline (its
    value is at most static-best's cost) and a hindsight solution, not an online one.

    Examples
    --------
    Three phases of requests, each avoided by one rotation of the two arcs (n = 6, k = 3):

    >>> from clusteropt.instances.ring import RingInstance
    >>> inst = RingInstance(n=6, servers=2, requests=[0, 1, 3, 4] * 3 + [1, 2, 4, 5] * 3 + [0, 2, 3, 5] * 3)
    >>> sol = dynamic_arc_bound(inst)
    >>> sol.value, sol.migrations.tolist()   # rotate by one after request 12 and after 23 (2 + 2)
    (4.0, [[12, 0, 1], [12, 3, 0], [23, 1, 1], [23, 4, 0]])
    """
    cand = arc_labellings(instance.n, instance.servers, max_perms=max_perms)
    if extra is not None:
        cand = np.vstack([cand, np.asarray(extra, dtype=np.int64).reshape(-1, instance.n)])
    return dynamic_opt_restricted(instance, cand, max_table=max_table)


def static_opt_bruteforce(instance, capacity: int | None = None, *,
                          max_labellings: int = MAX_LABELLINGS) -> tuple[float, np.ndarray]:
    """The static offline optimum (migrate only before the first request) by enumeration.

    ``min_S sum_e r_e cut_e(S) + alpha Ham(initial, S)`` over labellings with loads <= capacity.

    Returns
    -------
    (value, placement) : (float, int array (n,))

    References
    ----------
    Paper 004, Sec. 1 and Thm 2.2 (OPT_static); docs/algorithms/ring-partitioning.md A5.

    Examples
    --------
    The A5 example: contiguous arcs pay 10, four cuts on unrequested edges pay nothing.

    >>> from clusteropt.instances.ring import RingInstance
    >>> reqs = [1] * 10 + [3] * 10 + [4] * 10 + [6] * 10
    >>> value, placement = static_opt_bruteforce(RingInstance(n=8, servers=2, requests=reqs, alpha=0))
    >>> value
    0.0
    """
    S = feasible_labellings(instance.n, instance.servers, capacity, max_count=max_labellings)
    r = instance.request_counts().astype(float)
    cut = S != np.roll(S, -1, axis=1)
    cost = cut @ r + float(instance.alpha) * (S != np.asarray(instance.initial)).sum(axis=1)
    best = int(cost.argmin())
    return float(cost[best]), S[best].copy()


def gap_cut(weights, capacity: int) -> float:
    """A lower bound on ``min_S sum_e w_e cut_e(S)`` over labellings with loads <= ``capacity``.

    In a labelling the processes between two consecutive cut edges sit on one server, so
    consecutive cut edges are at most ``capacity`` apart around the ring (and there is no cut
    only when ``capacity >= n``).  This returns the cheapest edge set with that property: a
    relaxation, because it ignores that the arcs must also be packed onto ``l`` servers.  Some cut
    lies among edges ``0..capacity-1`` (processes ``0..capacity`` cannot share one server); for
    each such first cut ``e0`` a shortest path over the edges after it, with steps of at most
    ``capacity``, gives the cheapest set: ``O(capacity^2 n)`` time, vectorized over ``e0``.

    Parameters
    ----------
    weights : array (n,)
        ``w_e >= 0``, the weight of ring edge ``e = (e, e + 1 mod n)``.
    capacity : int
        The load bound per server (``k``, or ``c k`` for an augmented run).

    Examples
    --------
    >>> gap_cut([5, 0, 7, 0, 3, 9], 3)      # cuts on edges 1 and 4: two arcs of 3 processes
    3.0
    >>> gap_cut([1, 1, 1, 1], 2), gap_cut([1, 1, 1, 1], 4)
    (2.0, 0.0)
    """
    w = np.asarray(weights, dtype=float).ravel()
    n, cap = w.size, int(capacity)
    if cap < 1:
        raise ValueError(f"capacity = {capacity!r}; expected >= 1")
    if cap >= n:
        return 0.0
    starts = np.arange(cap)
    rot = w[(starts[:, None] + np.arange(n)[None, :]) % n]  # rot[e0, j]: weight of edge e0 + j
    f = np.full((cap, n), np.inf)
    f[:, 0] = rot[:, 0]
    for j in range(1, n):
        f[:, j] = rot[:, j] + f[:, max(0, j - cap):j].min(axis=1)
    return float(f[:, n - cap:].min())


@dataclasses.dataclass(frozen=True)
class WindowBound:
    """Result of :func:`dynamic_window_bound`.

    Attributes
    ----------
    value : float
        The lower bound on OPT_dyn at ``capacity``: ``sum_i min(min_move, cut_i)``.
    ends : int array (W,)
        Window ``i`` holds requests ``ends[i-1]..ends[i]-1`` (``ends[-1] = 0``); the last window
        ends at the sequence's end.
    bounds : float array (W,)
        ``min(min_move, cut_i)`` of each window.
    min_move : float
        ``alpha`` x the fewest processes a change of labelling moves: ``2 alpha`` when every server
        is full (``n = l x capacity``), else ``alpha``.
    capacity : int
    """

    value: float
    ends: np.ndarray
    bounds: np.ndarray
    min_move: float
    capacity: int


def dynamic_window_bound(instance, capacity: int | None = None) -> WindowBound:
    """A lower bound on the dynamic optimum OPT_dyn at ``capacity`` (default ``k``), for any ``n``.

    Cut the requests into consecutive windows.  Charge each migration step of an offline solution
    to the window of the request it precedes.  A window with a migration step pays at least
    ``m`` (the ``min_move`` of :class:`WindowBound`): two distinct labellings differ in at least one
    process, and in two when every server is full.  A window without one is served under a single
    labelling, which is the initial one for the first window; it pays at least that labelling's
    communication cost for the window's requests, which is at least :func:`gap_cut` of the
    window's request counts (the first window: the initial labelling's cost itself).  Each step is
    charged once, so ``OPT_dyn >= sum_i min(m, cut_i)`` for every division into windows.

    This takes the greedy division: each window ends at the first request where its bound
    reaches ``m`` (found by doubling and bisection, since a window's bound never falls when it
    grows).  Any division is valid, so the greedy is a choice, not an assumption.

    Not in the paper: its comparator is OPT_dyn itself (Thm 2.1), which the DP
    (:func:`dynamic_opt_dp`) computes only up to ``l^n = 2^22`` labellings.

    Examples
    --------
    >>> from clusteropt.instances.ring import RingInstance
    >>> inst = RingInstance(n=4, servers=2, requests=[1] * 5)   # OPT_dyn = 2 (swap two processes)
    >>> b = dynamic_window_bound(inst)
    >>> b.value, b.ends.tolist(), b.min_move
    (2.0, [2, 5], 2.0)
    >>> dynamic_window_bound(inst, capacity=3).value            # room to move one process: OPT_dyn = 1
    1.0
    """
    n, ns = instance.n, instance.servers
    cap = _capacity(n, ns, capacity)
    alpha = float(instance.alpha)
    m = min_move_cost(n, ns, cap, alpha)
    req = np.asarray(instance.requests, dtype=np.int64).ravel()
    T = req.size
    init = np.asarray(instance.initial, dtype=np.int64)
    init_cut = (init != np.roll(init, -1)).astype(float)

    def bound(s: int, t: int, first: bool) -> float:
        counts = np.bincount(req[s:t], minlength=n).astype(float)
        return float(counts @ init_cut) if first else gap_cut(counts, cap)

    ends: list[int] = []
    bounds: list[float] = []
    s = 0
    while s < T:
        first = s == 0
        if m <= 0 or bound(s, T, first) < m:  # the rest never reaches m: one last window
            ends.append(T)
            bounds.append(min(m, bound(s, T, first)))
            break
        lo, step = s, 1  # bound(s, lo) < m <= bound(s, hi)
        while bound(s, min(T, s + step), first) < m:
            lo, step = s + step, 2 * step
        hi = min(T, s + step)
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if bound(s, mid, first) < m:
                lo = mid
            else:
                hi = mid
        ends.append(hi)
        bounds.append(m)
        s = hi
    b = np.asarray(bounds, dtype=float)
    return WindowBound(value=float(b.sum()), ends=np.asarray(ends, dtype=np.int64), bounds=b,
                       min_move=m, capacity=cap)


#: :func:`dynamic_cut_bound` refuses a DP over more than ``2^MAX_CUT_BOUND_EDGES`` cut sets (the whole
#: ring's ``n`` edges, or one arc's ``block``).
MAX_CUT_BOUND_EDGES = 20


def dynamic_cut_bound(instance, capacity: int | None = None, *, block: int | None = None,
                      max_edges: int = MAX_CUT_BOUND_EDGES) -> float:
    """A lower bound on OPT_dyn at ``capacity``: the dynamic DP over *cut sets* instead of labellings (ours).

    Replace a labelling ``S`` by its set of cut edges ``C(S) = {e : S_e != S_(e+1)}``.  What an
    offline solution pays is kept or under-counted:

    - a request on edge ``e`` costs ``[e in C]``, exactly as under ``S``;
    - a migration ``S -> S'`` costs ``alpha Ham(S, S')``, and moving one process changes the cut
      status of its two edges only, so ``|C(S) xor C(S')| <= 2 Ham(S, S')``: charging ``alpha / 2``
      per edge that changes status under-counts;
    - every ``C(S)`` is a *cut set*: the processes between two consecutive cut edges share a server,
      so no ``capacity`` consecutive edges are all uncut (the condition of :func:`gap_cut`); a ring
      is never cut in exactly one edge; with two servers the arcs alternate, so the number of cuts
      is even; with one server nothing is cut.

    So the DP ``W_t(C) = min_C' [W_(t-1)(C') + alpha / 2 |C xor C'|] + w_t [e_t in C]`` over cut
    sets, from ``C(initial)`` and on run-compressed requests (module docstring), is at most
    OPT_dyn.  It ignores that the arcs must also be packed onto ``l`` servers of ``capacity``.
    The inner minimum is the distance transform of :func:`dynamic_opt_value` with two states per
    edge, over all ``2^n`` edge sets (those that are not cut sets at ``+inf``): ``O(T' n 2^n)``
    time and ``2^n`` floats, against ``l^n`` for the DP over labellings (``n = 16`` on 4 servers:
    65,536 against 4.3 billion).

    A change of cut set is also a change of labelling, which moves at least ``m`` (the
    ``min_move`` of :func:`dynamic_window_bound`: ``2 alpha`` when every server is full, else
    ``alpha``).  So the inner minimum is raised to ``min(W(C), max(T(C), min W + m))`` (``T`` the
    transform): staying put, or a change that pays both lower bounds.  That is at most
    ``min_C' [W(C') + max(m, alpha / 2 |C xor C'|)]`` over ``C' != C``, so still a lower bound.

    Beyond ``2^n`` states, ``block = b`` splits the ring into ``ceil(n / b)`` arcs of at most ``b``
    consecutive edges (from edge 0), keeps of the cut-set conditions only the windows of
    ``capacity`` edges that lie inside one arc, and drops the min-move term.  Both costs are then
    sums over edges, so that relaxed DP separates into one DP per arc, each over ``2^b`` states and
    only its own requests (between them the arc's state may stay put), and their sum is a lower
    bound again, weaker than the whole ring's: ``O(T' b 2^b)`` time at any ``n``.

    Not in the paper; with :func:`dynamic_window_bound` (take the larger) and
    :func:`dynamic_arc_bound` it brackets OPT_dyn (``python -m benchmarks.ring_dynamic_bracket``).

    Parameters
    ----------
    instance : RingInstance
    capacity : int, optional
        Load bound (default ``k``).
    block : int, optional
        Arc length of the separated DP (default: the whole ring, one DP over ``2^n`` cut sets).
    max_edges : int
        Refuse (``ValueError``) a DP over more than ``2^max_edges`` states (default
        :data:`MAX_CUT_BOUND_EDGES`).

    References
    ----------
    Paper 004, Sec. 1 (the cost model and the dynamic OPT of Thm 2.1, which this bounds from
    below); docs/algorithms/ring-partitioning.md A5 (the offline optima).

    Examples
    --------
    >>> from clusteropt.instances.ring import RingInstance
    >>> inst = RingInstance(n=4, servers=2, requests=[1] * 5)       # OPT_dyn = 2 (dynamic_opt_dp)
    >>> dynamic_cut_bound(inst), dynamic_cut_bound(inst, capacity=3)  # OPT_dyn at capacity 3: 1
    (2.0, 1.0)

    In arcs of 2 edges, {0, 1} and {2, 3}, the window {1, 2} across them is dropped, so moving the
    cut from edge 1 to edge 0 is enough:

    >>> dynamic_cut_bound(inst, block=2)
    1.0
    """
    n, ns = instance.n, instance.servers
    cap = _capacity(n, ns, capacity)
    b = n if block is None else int(block)
    if b < 1:
        raise ValueError(f"block = {block!r}; expected an integer >= 1")
    b = min(b, n)
    if b > max_edges:
        raise ValueError(f"{'n' if b == n else 'block'} = {b} edges: 2^{b} cut sets; more than max_edges = "
                         f"{max_edges}" + ("; pass block <= max_edges" if b == n else ""))
    alpha = float(instance.alpha)
    req = np.asarray(instance.requests, dtype=np.int64).ravel()
    init = np.asarray(instance.initial, dtype=np.int64)
    init_cut = init != np.roll(init, -1)
    if b == n:
        return _cut_dp(n, cap, init_cut, req, alpha / 2.0, ring=True, servers=ns,
                       min_move=min_move_cost(n, ns, cap, alpha))
    q = -(-n // b)
    sizes = np.full(q, n // q) + (np.arange(q) < n % q)
    total = 0.0
    for a, m in zip(np.r_[0, np.cumsum(sizes)[:-1]].tolist(), sizes.tolist(), strict=True):
        mine = req[(req >= a) & (req < a + m)] - a
        total += _cut_dp(m, cap, init_cut[a:a + m], mine, alpha / 2.0, ring=False, servers=ns)
    return total


def min_move_cost(n: int, servers: int, cap: int, alpha: float) -> float:
    """The least cost of changing the labelling at all: ``2 alpha`` when every server is full (a
    process can only leave by another arriving), else ``alpha``.
    """
    return alpha * (2.0 if n >= servers * cap else 1.0)


def _cut_dp(m: int, cap: int, init_cut: np.ndarray, requests: np.ndarray, half: float, *, ring: bool,
            servers: int, min_move: float = 0.0) -> float:
    """The DP of :func:`dynamic_cut_bound` over ``2^m`` cut sets of ``m`` edges (``requests``: local
    edge ids): the whole ring (``ring=True``) or one arc of it (only the windows inside it).
    """
    edges, weights, _ = compress_requests(requests)
    sets = np.arange(1 << m, dtype=np.int64)  # bit e: local edge e is cut
    bits = ((sets[None, :] >> np.arange(m, dtype=np.int64)[:, None]) & 1).astype(bool)  # (m, 2^m)
    cuts = bits.sum(axis=0)
    feasible = np.ones(1 << m, dtype=bool)
    if ring:
        if cap >= m:  # one server may hold everything: no cut at all is allowed, one cut never
            feasible &= cuts != 1
        else:  # some cap consecutive edges all uncut: cap + 1 processes on one server
            feasible &= cuts >= 2
            for e0 in range(m):
                feasible &= (sets & int(sum(1 << ((e0 + j) % m) for j in range(cap)))) != 0
        if servers == 1:
            feasible &= cuts == 0
        elif servers == 2:
            feasible &= cuts % 2 == 0
    else:
        for e0 in range(m - cap + 1):  # the windows of cap edges inside the arc
            feasible &= (sets & (((1 << cap) - 1) << e0)) != 0
    start = int((np.asarray(init_cut, dtype=np.int64) << np.arange(m, dtype=np.int64)).sum())
    w = np.full(1 << m, np.inf)
    w[start] = 0.0
    for e, r in zip(edges.tolist(), weights.tolist(), strict=True):
        stay = w.copy() if min_move > 0 else w
        _hamming_transform(w, m, 2, half)  # one edge's cut status at a time
        if min_move > 0:  # a change of cut set costs at least min_move: stay, or pay both lower bounds
            np.minimum(stay, np.maximum(w, stay.min() + min_move), out=w)
        w[~feasible] = np.inf
        w += r * bits[e]
    return float(w.min())


def line_hitting_static_opt(counts, e0: int) -> float:
    """Static optimum of the hitting game on a line: ``min_e |e - e0| + r_e`` (Sec. 4.1;
    docs/algorithms/ring-partitioning.md A3).

    Edges ``0..d-1`` of a line; the player starts on edge ``e0``, may move once (paying the
    distance) and then pays 1 for each request on the edge it stands on.

    Parameters
    ----------
    counts : int array (d,)
        ``r_e``, requests per edge.
    e0 : int
        Start edge.

    Examples
    --------
    >>> line_hitting_static_opt([5, 0, 3, 9], 2)
    1.0
    >>> line_hitting_static_opt([1, 1, 1], 1)
    1.0
    """
    r = np.asarray(counts, dtype=float).ravel()
    if r.size == 0 or not 0 <= int(e0) < r.size:
        raise ValueError(f"e0 = {e0}; expected an edge in 0..{r.size - 1}")
    return float((np.abs(np.arange(r.size) - int(e0)) + r).min())


def line_mts_opt(n_states: int, start: int, requests) -> float:
    """Offline optimum of the line MTS of the dynamic algorithm: the work function's minimum (Sec. 3;
    docs/algorithms/ring-partitioning.md A4).

    States ``0..n_states-1`` on a line (distance ``|x - y|``), start at ``start``.  A request on
    state ``e`` costs 1 if the server is at ``e`` when it is served, moving costs the distance, and
    the server may move before any request (so the cost is ``min_x w_T(x)`` with
    ``w_0(x) = |x - start|`` and ``w_t(x) = min_y w_{t-1}(y) + c_t(y) + |y - x|``).  The work
    function stays 1-Lipschitz, so a request on ``e`` changes only
    ``w(e) <- min(w(e), w(e - 1), w(e + 1)) + 1``: O(1) per request.

    Parameters
    ----------
    n_states : int
    start : int
    requests : int array (T,)
        Requested states.

    Examples
    --------
    >>> line_mts_opt(3, 1, [1, 1, 1])      # move one step once
    1.0
    >>> line_mts_opt(3, 1, [0, 1, 2, 1])   # every state is hit; best: pay one hit
    1.0
    >>> line_mts_opt(1, 0, [0, 0])
    2.0
    """
    N = int(n_states)
    if N < 1 or not 0 <= int(start) < N:
        raise ValueError(f"start = {start}, n_states = {n_states}; expected 0 <= start < n_states")
    req = np.asarray(requests, dtype=np.int64).ravel()
    if req.size and (req.min() < 0 or req.max() >= N):
        bad = int(np.flatnonzero((req < 0) | (req >= N))[0])
        raise ValueError(f"requests[{bad}] = {int(req[bad])}; expected a state in 0..{N - 1}")
    w = np.abs(np.arange(N) - int(start)).astype(float).tolist()
    for e in req.tolist():
        lo = w[e - 1] if e > 0 else w[e]
        hi = w[e + 1] if e + 1 < N else w[e]
        w[e] = min(w[e], lo, hi) + 1.0
    return float(min(w))
