"""Paper 004: an upper bound on OPT_dyn by dynamic programming over swap neighbourhoods (ours).

The moving-arcs bound (:func:`clusteropt.algorithms.ring.offline.dynamic_arc_bound`) keeps every
server on one arc of ``k`` processes.  Where the DP over all labellings runs, optimal schedules
leave that class: they use labellings with more cut edges than the ``l`` of the arcs (a process
traded into a cold stretch of another server costs two moves, rotating all arcs by one ``l``).
This module improves any feasible offline schedule by a very large neighbourhood search whose
every step is an exact dynamic programme.

One round
    Let ``B_t`` be the labelling that serves compressed request ``t`` in the current schedule.
    Its *swap neighbourhood* ``N_t`` is ``B_t`` itself and every ``B_t`` with the servers of two
    processes ``a, b`` on different servers exchanged (``B_t o (a b)``; ``sum_c |c| (n - |c|) / 2``
    of them: 1,536 at ``n = 64`` on 4 full servers).  A round finds, by dynamic programming over
    ``t``, the cheapest schedule that serves every request ``t`` with some labelling of ``N_t``:
    any subset of the requests may take a swap, a different one each, and the moves between them
    are paid at their true Hamming distance::

        V_t(s) = min_s' [V_{t-1}(s') + alpha Ham(s', s)] + w_t hit_t(s),   s in N_t

    (the DP of :func:`~clusteropt.algorithms.ring.offline.dynamic_opt_dp` with a state set that
    follows the schedule).  A swap preserves every server's load, so every labelling stays within
    the start's capacity.

    Where ``B_t = B_{t-1}`` the inner minimum is exact in ``O(n l)`` per state set, not
    ``O(|N_t|^2)``: two swaps of one base are 0 (the same), 2 (sharing a process whose partners
    sit on one server), 3 (sharing a process, partners on different servers) or 4 (disjoint)
    apart, and the base is 2 from every swap, so the minimum over ``s'`` only needs, per process
    ``a`` and server ``c``, the cheapest swap of ``a`` with a process of ``c``.  Where the base
    changes (a migration of the current schedule) the transitions are restricted to: from the old
    base, from the same swap of the old base, and from the old step's cheapest state, to every new
    state; and from every old state to the new base.  Each is paid its exact Hamming distance, so
    the DP's value is the cost of the schedule it returns (checked), and the current schedule is
    among the candidates (base to base everywhere), so a round never costs more.

Retiming
    A swap round cannot move a migration of the current schedule to another request (its states
    at ``t`` are swaps of ``B_t``).  :func:`retime_round` can: the exact DP over the labellings
    the schedule uses (``dynamic_opt_restricted``), any of them at any time.

The search
    Rounds (a swap round, then a retiming) repeat from the schedule the last one returned until
    a round gains less than ``tol`` (or ``max_rounds``).  Each round can move every request's
    labelling one more swap away, so the schedule can drift far from the start.  The result is a
    local optimum over these neighbourhoods, an *upper bound* on OPT_dyn at the start's capacity
    with a schedule that :func:`clusteropt.verify.check_ring_run` replays; it is not OPT_dyn.  Started from the arc
    bound (the default), on the ``ring-ratio-exact`` instances it comes much closer to OPT_dyn
    than the arc bound (``python -m benchmarks.ring_dynamic_bracket``, column ``swap arc``).

Two starts
    A one-swap neighbourhood has local optima that two swaps in a row leave (one Zipf instance of
    ``ring-ratio-exact``: 26 against OPT_dyn 17).  :func:`dynamic_swap_bound` also starts from the
    arc bound with given labellings among its candidates (the static optimum's placement) and
    keeps the better schedule (column ``swap``).

Cost: ``O(T' n^2)`` time per round (about 30 array operations on ``n x n`` arrays per compressed
request) and ``T' (n (n - 1) / 2 + 1)`` stored predecessors (16-bit while that is below ``2^15``);
the retiming step is ``O(T' m^2)`` for the ``m`` distinct labellings of the schedule.  Measured
in ``python -m benchmarks.ring_dynamic_bracket`` (column ``swap``, its time ``swap s``).

References
----------
Räcke, Schmid, Zabrodin, "Dynamic Balanced Graph Partitioning for Ring Demands", SPAA 2023
(paper 004), Sec. 1 (the model and its offline optimum OPT_dyn).  The round is a dynamic
programming very large-scale neighbourhood search in the sense of Ahuja, Ergun, Orlin and Punnen,
"A survey of very large-scale neighborhood search techniques", Discrete Applied Mathematics 123
(2002); the swap neighbourhood and its ``O(n l)`` transition are ours.
"""

from __future__ import annotations

import dataclasses
import logging

import numpy as np

from clusteropt.algorithms.ring.offline import (
    MAX_DP_TABLE,
    DynamicDP,
    compress_requests,
    dynamic_opt_restricted,
    migrations_from_placements,
    schedule_cost,
)

__all__ = ["MAX_SEARCH_TABLE", "SwapSearch", "dynamic_swap_bound", "dynamic_swap_search", "retime_round",
           "swap_round"]

log = logging.getLogger(__name__)

#: :func:`swap_round` refuses when ``T' x (n (n - 1) / 2 + 1)`` stored predecessors exceed this
#: (``n = 64`` with 16,384 compressed requests: 33.0 million).
MAX_SEARCH_TABLE = 200_000_000


@dataclasses.dataclass(frozen=True)
class SwapSearch(DynamicDP):
    """Result of :func:`dynamic_swap_search`: the schedule of :class:`DynamicDP` plus its history.

    Attributes
    ----------
    rounds : tuple of float
        The start's cost, then the cost after each round (non-increasing).
    start : str
        Which start the schedule came from: ``"given"`` (:func:`dynamic_swap_search`'s ``start``),
        ``"arc"`` (the arc bound) or ``"arc+extra"`` (the arc bound with extra labellings,
        :func:`dynamic_swap_bound`).
    """

    rounds: tuple[float, ...] = ()
    start: str = "given"


class _Pairs:
    """Index bookkeeping of the swap states: pair ``(a, b)``, ``a < b``, is state ``tri[a, b]``;
    state ``P`` (the last) is the base itself.
    """

    def __init__(self, n: int) -> None:
        self.n = n
        self.a, self.b = np.triu_indices(n, 1)
        self.P = self.a.size
        self.BASE = self.P
        tri = np.full((n, n), self.P, dtype=np.int64)  # the diagonal maps to the base (never used)
        tri[self.a, self.b] = np.arange(self.P)
        tri[self.b, self.a] = np.arange(self.P)
        self.tri = tri
        self.rows = np.arange(n)

    def labelling(self, base: np.ndarray, s: int) -> np.ndarray:
        out = base.copy()
        if s != self.BASE:
            a, b = self.a[s], self.b[s]
            out[a], out[b] = base[b], base[a]
        return out


def _ham_to_swaps(L: np.ndarray, B: np.ndarray) -> tuple[int, np.ndarray]:
    """``Ham(L, B)`` and the matrix ``Ham(L, B o (a b))`` (also ``Ham(L o (a b), B)``) for all a, b."""
    D = (L != B).astype(np.int64)
    H = int(D.sum())
    Hp = H - D[:, None] - D[None, :] + (L[:, None] != B[None, :]) + (L[None, :] != B[:, None])
    return H, Hp


def _within(V0: float, Vp: np.ndarray, B: np.ndarray, members: list[np.ndarray], alpha: float,
            idx: _Pairs) -> tuple[float, int, np.ndarray, np.ndarray]:
    """One step inside a base: the exact ``min_s' [V(s') + alpha Ham(s', s)]`` for every state
    (module docstring) and the predecessor state of each.
    """
    n, rows = idx.n, idx.rows
    j = int(Vp.argmin())
    pmin = float(Vp.flat[j])
    jstate = int(idx.tri.flat[j])
    if V0 <= pmin + 2 * alpha:
        V0n, pred0 = V0, idx.BASE
    else:
        V0n, pred0 = pmin + 2 * alpha, jstate
    ns = len(members)
    M = np.full((n, ns), np.inf)  # M[a, c]: cheapest swap of a with a process d on server c
    Dm = np.zeros((n, ns), dtype=np.int64)  # ... and that d
    for c, cols in enumerate(members):
        if cols.size:
            sub = Vp[:, cols]
            arg = sub.argmin(axis=1)
            M[:, c] = sub[rows, arg]
            Dm[:, c] = cols[arg]
    c1 = M.argmin(axis=1)
    m1 = M[rows, c1]
    M2 = M.copy()
    M2[rows, c1] = np.inf
    c2 = M2.argmin(axis=1)
    m2 = M2[rows, c2]
    # target (a, b) through a swap (a, d): d on b's server costs 2, on a third server 3
    R = np.where(np.arange(ns)[None, :] == c1[:, None], m2[:, None], m1[:, None])
    Rsrv = np.where(np.arange(ns)[None, :] == c1[:, None], c2[:, None], c1[:, None])
    two, three = M + 2 * alpha, R + 3 * alpha
    Ta = np.minimum(two, three)
    Tsrc = np.where(two <= three, Dm, Dm[rows[:, None], Rsrv])
    Tm, Ts = Ta[:, B], Tsrc[:, B]  # [a, b]: the best source (a, Ts[a, b]) for target (a, b)
    cand = np.stack([Vp, np.full_like(Vp, V0 + 2 * alpha), Tm, Tm.T, np.full_like(Vp, pmin + 4 * alpha)])
    pick = cand.argmin(axis=0)
    Vpn = np.take_along_axis(cand, pick[None], axis=0)[0]
    src = np.stack([idx.tri, np.full_like(idx.tri, idx.BASE), idx.tri[rows[:, None], Ts],
                    idx.tri[rows[:, None], Ts].T, np.full_like(idx.tri, jstate)])
    predp = np.take_along_axis(src, pick[None], axis=0)[0]
    return V0n, pred0, Vpn, predp


def _cross(V0: float, Vp: np.ndarray, Bp: np.ndarray, B: np.ndarray, alpha: float,
           idx: _Pairs) -> tuple[float, int, np.ndarray, np.ndarray]:
    """One step from the states of base ``Bp`` to those of ``B`` (restricted transitions, module
    docstring), each paid its exact Hamming distance.
    """
    H0, Hp = _ham_to_swaps(Bp, B)
    j = int(Vp.argmin())
    pmin = float(Vp.flat[j])
    jstate = int(idx.tri.flat[j])
    # to the new base: from the old base, or from any old swap (Ham(Bp o (c d), B) = Hp[c, d])
    back = Vp + alpha * Hp
    jb = int(back.argmin())
    if V0 + alpha * H0 <= back.flat[jb]:
        V0n, pred0 = V0 + alpha * H0, idx.BASE
    else:
        V0n, pred0 = float(back.flat[jb]), int(idx.tri.flat[jb])
    cands = [np.full_like(Vp, V0) + alpha * Hp, Vp + alpha * H0]
    srcs = [np.full_like(idx.tri, idx.BASE), idx.tri]
    if np.isfinite(pmin):
        best = idx.labelling(Bp, jstate)
        cands.append(pmin + alpha * _ham_to_swaps(best, B)[1])
        srcs.append(np.full_like(idx.tri, jstate))
    cand, src = np.stack(cands), np.stack(srcs)
    pick = cand.argmin(axis=0)
    Vpn = np.take_along_axis(cand, pick[None], axis=0)[0]
    predp = np.take_along_axis(src, pick[None], axis=0)[0]
    return V0n, pred0, Vpn, predp


def swap_round(instance, placements, *, max_table: int = MAX_SEARCH_TABLE) -> tuple[float, np.ndarray]:
    """One round (module docstring): the cheapest schedule serving every compressed request ``t``
    with ``placements[t]`` or one swap of it, as ``(value, placements)``.

    ``placements`` is ``(T', n)``, one labelling per run of :func:`compress_requests` (the format
    of :class:`DynamicDP`).  The value is the returned schedule's cost (at most the given one's).

    Examples
    --------
    Never migrating on ``n = 4`` pays 5 for five requests on the cut edge 1; one swap before the
    first request (processes 0 and 2: 2 migrations) makes them free:

    >>> from clusteropt.instances.ring import RingInstance
    >>> inst = RingInstance(n=4, servers=2, requests=[1] * 5)     # one run: T' = 1
    >>> value, p = swap_round(inst, [[0, 0, 1, 1]])
    >>> value, p.tolist()
    (2.0, [[1, 0, 0, 1]])
    """
    n = instance.n
    alpha = float(instance.alpha)
    edges, weights, _ = compress_requests(instance.requests)
    P = np.asarray(placements, dtype=np.int64)
    if P.shape != (edges.size, n):
        raise ValueError(f"placements: shape {P.shape}; expected (T' = {edges.size} compressed requests, n = {n})")
    bad = np.argwhere((P < 0) | (P >= instance.servers))
    if bad.size:
        t, v = bad[0]
        raise ValueError(f"placements[{t}][{v}] = {P[t, v]}; expected a server in 0..{instance.servers - 1}")
    if edges.size == 0:
        return 0.0, P.copy()
    idx = _Pairs(n)
    if edges.size * (idx.P + 1) > max_table:
        raise ValueError(f"swap search table too large: T' = {edges.size} compressed requests x "
                         f"{idx.P + 1} states > max_table = {max_table}")
    dtype = np.int16 if idx.P < np.iinfo(np.int16).max else np.int32
    pred = np.empty((edges.size, idx.P + 1), dtype=dtype)
    change = np.r_[True, (P[1:] != P[:-1]).any(axis=1)]
    V0, Vp = 0.0, np.full((n, n), np.inf)
    Bp = np.asarray(instance.initial, dtype=np.int64)
    members: list[np.ndarray] = []
    valid = np.zeros((n, n), dtype=bool)
    for t in range(edges.size):
        B = P[t]
        if change[t]:
            members = [np.flatnonzero(B == c) for c in range(instance.servers)]
            valid = B[:, None] != B[None, :]
            V0, p0, Vp, pp = _cross(V0, Vp, Bp, B, alpha, idx)
        else:
            V0, p0, Vp, pp = _within(V0, Vp, B, members, alpha, idx)
        Vp[~valid] = np.inf
        # serve request t: a swap changes the base's hit only when it moves an endpoint
        u, w = int(edges[t]), float(weights[t])
        u1 = (u + 1) % n
        h0 = float(B[u] != B[u1])
        V0 += w * h0
        Vp += w * h0
        ru = w * ((B != B[u1]) - h0)  # swap (u, b): u takes B[b]
        ru[u1] = 0.0
        ru1 = w * ((B != B[u]) - h0)  # swap (u1, b): u1 takes B[b]
        ru1[u] = 0.0
        Vp[u, :] += ru
        Vp[:, u] += ru
        Vp[u1, :] += ru1
        Vp[:, u1] += ru1
        Vp[u, u] = Vp[u1, u1] = np.inf
        pred[t, :idx.P] = pp[idx.a, idx.b]
        pred[t, idx.P] = p0
        Bp = B
    # backtrack
    last = Vp[idx.a, idx.b]
    s = int(last.argmin()) if last.size and last.min() < V0 else idx.BASE
    value = float(last[s]) if s != idx.BASE else float(V0)
    out = np.empty_like(P)
    for t in range(edges.size - 1, -1, -1):
        out[t] = idx.labelling(P[t], s)
        s = int(pred[t, s])
    cost = schedule_cost(instance, out, edges, weights)
    if abs(cost - value) > 1e-6 * max(1.0, abs(value)):
        raise RuntimeError(f"swap round: DP value {value} but its schedule costs {cost}")
    return cost, out


def retime_round(instance, placements, *, capacity: int | None = None,
                 max_table: int = MAX_DP_TABLE) -> tuple[float, np.ndarray]:
    """The cheapest schedule that uses only the labellings ``placements`` already uses (and the
    initial one), at any time and in any order: :func:`dynamic_opt_restricted` over them.

    It re-times the migrations of a schedule (a swap round cannot: its states at request ``t``
    are swaps of ``placements[t]``), skips detours and revisits a labelling.  ``O(T' m^2)`` for
    ``m`` distinct labellings.  ``capacity`` defaults to the largest load among them.

    >>> from clusteropt.instances.ring import RingInstance
    >>> inst = RingInstance(n=4, servers=2, requests=[1, 3, 1, 1])   # edges 1 and 3 are cut
    >>> value, p = retime_round(inst, [[0, 0, 1, 1], [0, 0, 1, 1], [1, 0, 0, 1]])   # moves late: 4
    >>> value, p[0].tolist()          # the same move before the first request: 2 moves, no hit
    (2.0, [1, 0, 0, 1])
    """
    P = np.asarray(placements, dtype=np.int64)
    U = np.unique(P, axis=0)
    if capacity is None:
        loads = np.stack([(U == c).sum(axis=1) for c in range(instance.servers)], axis=1)
        capacity = max(int(loads.max(initial=0)), instance.k)
    res = dynamic_opt_restricted(instance, U, capacity=capacity, max_table=max_table)
    return res.value, res.placements


def dynamic_swap_search(instance, start: DynamicDP | None = None, *, max_rounds: int = 100,
                        retime: bool = True, tol: float = 1e-9, max_table: int = MAX_SEARCH_TABLE) -> SwapSearch:
    """An upper bound on OPT_dyn: rounds of :func:`swap_round` then :func:`retime_round` from a
    feasible schedule, until a round gains less than ``tol`` (ours).

    Parameters
    ----------
    instance : RingInstance
    start : DynamicDP, optional
        The schedule to improve (its ``placements``, one per compressed request); default the
        moving-arcs bound :func:`~clusteropt.algorithms.ring.offline.dynamic_arc_bound`.  The
        result keeps every server's load in every labelling, so it is feasible at the start's
        capacity (``augmentation`` is copied from it).
    max_rounds : int
        Stop after this many rounds (>= 0; 0 returns the start, re-costed).
    retime : bool
        Follow each swap round by a :func:`retime_round` (default); ``False``: swap rounds only.
    tol : float
        Stop when a round gains less than this.
    max_table : int
        Refuse when a swap round would store more predecessors than this.

    Returns
    -------
    SwapSearch
        The schedule (placements, migrations in the run format), its cost ``value`` and the cost
        after each round ``rounds``.  ``value >= OPT_dyn`` at the start's capacity.

    Examples
    --------
    Every placement of two arcs of 4 cuts one of the requested edges 2, 4 and 7, so the arc
    bound pays 4 (hits, or moves and hits); one swap before the first request avoids all three:

    >>> from clusteropt.instances.ring import RingInstance
    >>> from clusteropt.algorithms.ring.offline import dynamic_arc_bound, dynamic_opt_dp
    >>> inst = RingInstance(n=8, servers=2, requests=[7, 7, 2, 2, 7, 7, 4, 4])
    >>> sol = dynamic_swap_search(inst)
    >>> dynamic_arc_bound(inst).value, sol.rounds, dynamic_opt_dp(inst).value
    (4.0, (4.0, 2.0, 2.0), 2.0)
    >>> sol.migrations.tolist()     # processes 0 and 6 trade servers before request 0
    [[-1, 0, 1], [-1, 6, 0]]
    """
    from clusteropt.algorithms.ring.offline import dynamic_arc_bound

    if isinstance(max_rounds, bool) or not isinstance(max_rounds, (int, np.integer)) or max_rounds < 0:
        raise ValueError(f"max_rounds = {max_rounds!r}; expected an integer >= 0")
    origin = "given"
    if start is None:
        start, origin = dynamic_arc_bound(instance), "arc"
    edges, weights, starts = compress_requests(instance.requests)
    P = np.asarray(start.placements, dtype=np.int64)
    if P.shape != (edges.size, instance.n):
        raise ValueError(f"start.placements: shape {P.shape}; expected (T' = {edges.size} compressed requests, "
                         f"n = {instance.n})")
    value = schedule_cost(instance, P, edges, weights)
    history = [value]
    for r in range(max_rounds):
        new_value, new_P = swap_round(instance, P, max_table=max_table)
        swapped = new_value
        if retime:
            new_value, new_P = retime_round(instance, new_P)
        history.append(new_value)
        log.info("swap search round %d: %.6g -> %.6g (swaps) -> %.6g", r + 1, value, swapped, new_value)
        gain = value - new_value
        if gain > 0:
            value, P = new_value, new_P
        if gain < tol:
            break
    initial = np.asarray(instance.initial, dtype=np.int64)
    return SwapSearch(value, P, starts, initial.copy(), migrations_from_placements(initial, P, starts),
                      float(start.augmentation), tuple(history), origin)


def dynamic_swap_bound(instance, extra=None, *, max_rounds: int = 100, retime: bool = True, tol: float = 1e-9,
                       max_table: int = MAX_SEARCH_TABLE) -> SwapSearch:
    """An upper bound on OPT_dyn at capacity ``k``: the better of two swap searches (ours).

    :func:`dynamic_swap_search` from the arc bound, and, when ``extra`` labellings are given, from
    the arc bound with them among its candidates (``dynamic_arc_bound(instance, extra=extra)``,
    which may move to any of them at any time).  The second start is the one that matters where
    the search is stuck in a one-swap local optimum: on ``ring-ratio-exact`` Zipf ``n = 12`` seed
    3 the optimal schedule moves two swaps in consecutive requests into the static optimum's
    placement, which no single swap pays for; from the arc bound the search stays at 26, with the
    static optimum's placement among the candidates it reaches OPT_dyn = 17.  Neither start
    dominates (each wins somewhere, ``python -m benchmarks.ring_dynamic_bracket``, keys
    ``swap_arc`` and ``swap``), so both run and the cheaper schedule is returned; its ``start``
    says which.

    Parameters
    ----------
    instance : RingInstance
    extra : array (m, n) or (n,), optional
        Labellings feasible at capacity ``k`` to add to the second start, typically the static
        optimum's placement (:meth:`clusteropt.models.ring.offline.RingOptimum.placement` of
        :func:`~clusteropt.models.ring.offline.ring_static_optimum`, or
        :func:`~clusteropt.algorithms.ring.offline.static_opt_bruteforce` for small ``n``).
        None: the search from the arc bound alone.
    max_rounds, retime, tol, max_table
        As in :func:`dynamic_swap_search`, for each search.

    Returns
    -------
    SwapSearch
        ``value >= OPT_dyn`` at capacity ``k``; ``start`` is ``"arc"`` or ``"arc+extra"`` (ties:
        ``"arc"``).

    Examples
    --------
    Three servers of two (n = 6).  The static optimum trades processes 1 and 5 before the first
    request (2 moves) and then pays only the request on edge 1; from the arc bound the search
    finds nothing better than 4:

    >>> from clusteropt.instances.ring import RingInstance
    >>> from clusteropt.algorithms.ring.offline import dynamic_opt_dp, static_opt_bruteforce
    >>> inst = RingInstance(n=6, servers=3, requests=[5, 2, 1, 5, 5, 5])
    >>> value, placement = static_opt_bruteforce(inst)
    >>> value, placement.tolist()
    (3.0, [0, 2, 1, 1, 2, 0])
    >>> dynamic_swap_bound(inst).value
    4.0
    >>> sol = dynamic_swap_bound(inst, extra=placement)
    >>> sol.value, sol.start, dynamic_opt_dp(inst).value
    (3.0, 'arc+extra', 3.0)
    """
    from clusteropt.algorithms.ring.offline import dynamic_arc_bound

    def search(start: DynamicDP) -> SwapSearch:
        return dynamic_swap_search(instance, start, max_rounds=max_rounds, retime=retime, tol=tol,
                                   max_table=max_table)

    E = None
    if extra is not None:
        size = int(np.size(extra))
        if size == 0 or size % instance.n:
            raise ValueError(f"extra: shape {np.shape(extra)}; expected (m, n = {instance.n}) labellings, m >= 1")
        E = np.asarray(extra, dtype=np.int64).reshape(-1, instance.n)
        for i, row in enumerate(E):
            bad = np.flatnonzero((row < 0) | (row >= instance.servers))
            if bad.size:
                raise ValueError(f"extra[{i}][{int(bad[0])}] = {int(row[bad[0]])}; expected a server in "
                                 f"0..{instance.servers - 1}")
            loads = np.bincount(row, minlength=instance.servers)
            if loads.max() > instance.k:
                c = int(loads.argmax())
                raise ValueError(f"extra[{i}]: server {c} holds {int(loads[c])} processes; expected at most "
                                 f"k = {instance.k}")
    best = dataclasses.replace(search(dynamic_arc_bound(instance)), start="arc")
    if E is None:
        return best
    other = search(dynamic_arc_bound(instance, extra=E))
    if other.value < best.value - tol:
        return dataclasses.replace(other, start="arc+extra")
    return best
