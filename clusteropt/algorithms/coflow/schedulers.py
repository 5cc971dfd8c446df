"""Coflow schedules from an order: the paper's moved blocks, and the priority greedy.

``greedy_schedule``
    Event-driven, work-conserving priority greedy: in every slot the flows of released coflows
    are taken in priority order (coflow position, then the flow's row) and a flow moves a unit
    when neither of its ports is taken by a higher-priority flow.  It is computed flow by flow
    instead of slot by slot: a flow's units go to the earliest slots after its release in which
    both ports are free of higher-priority flows, which is the same schedule (by induction over
    the priority order) and costs per flow, not per slot.  Every slot before a coflow's
    completion in which one of its flows waits has that flow's input or output busy with an
    earlier coflow's unit (or its own), so ``C_k <= r_k + 2 * Delta(prefix) - 1``: the bound the
    primal-dual analysis needs for the ratios 4 and 5 (docs/algorithms/coflow.md B7, [I]).

``paper_schedule``
    The slides' steps 2 and 3: in order, move each unit edge of coflow k back to the first
    earlier block whose two ports are both below that block's frozen max degree
    ``Delta(G'_j)``, then run each block in ``Delta(G'_j)`` consecutive slots by decomposing its
    bipartite multigraph into matchings (Konig's edge-colouring theorem: pad to a
    ``Delta``-regular multigraph, take a perfect matching on the support with multiplicity the
    smallest entry on it, repeat).  The lemma ``sum_{p<=k} Delta(G'_p) <= 2 Delta(prefix)`` gives
    ``C_k <= 2 Delta(prefix)`` without release times.  With release times the slides' "modified
    Hall's theorem" is not recoverable (docs/algorithms/coflow.md B7, [?]); here a block starts no earlier than the
    slot after its own coflow's release (and after the previous block), and an edge moves back
    only into a block starting after its coflow's release, which keeps the schedule feasible but
    carries no proven bound: use ``greedy`` when the bound matters.

``madd_schedule``
    Varys's MADD rule (Chowdhury, Zhong, Stoica, SIGCOMM 2014: every flow of a coflow is paced to
    finish with the coflow's bottleneck, and what that frees goes to the coflows behind it) in
    unit slots.  Coflows in priority order: the coflow's completion ``C_k`` is what the greedy
    would give it (its flows' earliest common free slots after the higher-priority coflows);
    then its flows, in reverse order, take the *latest* common free slots in ``[r_k + 1, C_k]``,
    so no flow finishes earlier than it has to and the earlier slots stay free for lower
    priorities.  The first coflow completes when the greedy would complete it; a later one may
    complete earlier (the early slots left free) or later (the late slots now taken) than under
    the greedy, so neither dominates (``coflow-arrivals`` measures both).  When the latest
    placement does not fit (its flows block each other differently from the earliest one) the
    coflow keeps the greedy placement.  The schedule is not work conserving: a port may
    idle while a flow with units left waits for its late slots (rate pacing, as in Varys, without
    its backfilling, which would not change any coflow's completion).

All return a :class:`~clusteropt.decisions.coflow.CoflowSchedule`; check it with
:func:`clusteropt.verify.check_coflow_schedule`.

Compiled.  The greedy (and the online greedy of :mod:`~clusteropt.algorithms.coflow.online`, window
by window) spends its time on each port's sorted busy intervals: a bisection and a list insert per
segment, in Python about 2 us each, sequential (a flow's slots depend on every flow before it) and
so not vectorisable.  :func:`_fill` runs the compiled transcription of :func:`_fill_reference`
(numba, :mod:`clusteropt.algorithms.coflow._numba_kernels`; the same segments, checked in
``tests/algorithms/test_coflow_compiled.py``) from :data:`JIT_MIN_FLOWS` flows on, or whenever the
kernel is loaded already (:mod:`clusteropt.jit`; ``CLUSTEROPT_JIT=0`` runs the reference).  MADD and
the paper's scheduler stay in Python.
"""

from __future__ import annotations

import bisect
import itertools
import logging
from typing import Any

import numpy as np

from clusteropt.decisions.coflow import CoflowSchedule, ScheduleBuilder
from clusteropt.instances.coflow.instance import CoflowInstance

__all__ = ["JIT_MIN_FLOWS", "SCHEDULERS", "decompose_into_matchings", "flows_in_order", "greedy_schedule",
           "madd_schedule", "paper_schedule"]

log = logging.getLogger(__name__)


def _check_order(order, n: int) -> np.ndarray:
    order = np.asarray(order, dtype=np.int64)
    if order.shape != (n,) or not np.array_equal(np.sort(order), np.arange(n)):
        raise ValueError(f"order must be a permutation of the {n} coflow indices")
    return order


def _merge_blocks(start, length, coflow, inp, out, order) -> CoflowSchedule:
    """One block per distinct (start, length), holding every flow segment with that span."""
    start, length = np.asarray(start, np.int64), np.asarray(length, np.int64)
    key = np.argsort(start * (int(length.max(initial=0)) + 1) + length, kind="stable")
    start, length = start[key], length[key]
    new = np.ones(start.size, dtype=bool)
    new[1:] = (np.diff(start) != 0) | (np.diff(length) != 0)
    firsts = np.flatnonzero(new)
    ptr = np.append(firsts, start.size).astype(np.int64)
    return CoflowSchedule(start=start[firsts], length=length[firsts], ptr=ptr,
                          coflow=np.asarray(coflow, np.int64)[key], input=np.asarray(inp, np.int64)[key],
                          output=np.asarray(out, np.int64)[key], order=order)


class _Busy:
    """Busy slots of one port as sorted, disjoint, merged half-open intervals [a, b)."""

    __slots__ = ("ends", "starts")

    def __init__(self) -> None:
        self.starts: list[int] = []
        self.ends: list[int] = []

    def free_at(self, x: int) -> tuple[int, int | None]:
        """The free segment [a, b) holding slot x, or the first one after it (b None: unbounded)."""
        k = bisect.bisect_right(self.ends, x)  # the first busy interval ending after x
        starts = self.starts
        if k == len(starts):
            return x, None
        if starts[k] > x:
            return x, starts[k]
        return self.ends[k], (starts[k + 1] if k + 1 < len(starts) else None)

    def last_free(self, x: int) -> tuple[int | None, int]:
        """The latest free segment [a, b) with ``b <= x + 1``: ``b = x + 1`` when x is free, else the
        start of the busy interval holding x; ``a`` the end of the busy interval before it (None:
        free back to minus infinity).
        """
        k = bisect.bisect_right(self.starts, x) - 1  # the last busy interval starting at or before x
        if k >= 0 and self.ends[k] > x:
            return (self.ends[k - 1] if k >= 1 else None), self.starts[k]
        return (self.ends[k] if k >= 0 else None), x + 1

    def copy(self) -> _Busy:
        out = _Busy()
        out.starts, out.ends = list(self.starts), list(self.ends)
        return out

    def add(self, a: int, b: int) -> None:
        k = bisect.bisect_left(self.starts, a)
        # merge with the previous interval if it ends at a, and the next if it starts at b
        if k > 0 and self.ends[k - 1] == a:
            k -= 1
            a = self.starts[k]
            del self.starts[k]
            del self.ends[k]
        if k < len(self.starts) and self.starts[k] == b:
            b = self.ends[k]
            del self.starts[k]
            del self.ends[k]
        self.starts.insert(k, a)
        self.ends.insert(k, b)


def _common_free(u: _Busy, v: _Busy, t: int, need: int, end: int | None = None) -> list[tuple[int, int]]:
    """The earliest ``need`` slots from t free in both u and v, as segments; with ``end``, only
    slots before it (possibly fewer than ``need``: the online greedy's windows).

    ``x`` leaps to the start of the next free segment of whichever port is busy at x (a
    bisection each), so the cost grows with the number of common segments and leaps, not with
    the number of busy intervals the two ports hold before the answer.
    """
    taken: list[tuple[int, int]] = []
    x = t
    while need > 0 and (end is None or x < end):
        a1, b1 = u.free_at(x)
        if end is not None and a1 >= end:
            break
        a2, b2 = v.free_at(a1)
        if a2 > a1:  # v is busy at a1: look again from v's next free slot
            x = a2
            continue
        x = a1
        b = b2 if b1 is None else b1 if b2 is None else min(b1, b2)
        if end is not None:
            b = end if b is None else min(b, end)
        stop = x + need if b is None else min(b, x + need)
        taken.append((x, stop))
        need -= stop - x
        x = stop
    return taken


def _common_free_back(u: _Busy, v: _Busy, lo: int, hi: int, need: int) -> tuple[list[tuple[int, int]], int]:
    """The latest ``need`` slots in ``[lo, hi]`` free in both u and v, as segments, and the units
    that did not fit (0 when all did): the mirror image of :func:`_common_free`.
    """
    taken: list[tuple[int, int]] = []
    x = hi
    while need > 0 and x >= lo:
        a1, b1 = u.last_free(x)
        if b1 - 1 < lo:
            break
        a2, b2 = v.last_free(b1 - 1)
        if b2 < b1:  # v is busy at b1 - 1: look again below v's busy interval
            x = b2 - 1
            continue
        bottom = max([lo] + [a for a in (a1, a2) if a is not None])
        start = max(bottom, b1 - need)
        taken.append((start, b1))
        need -= b1 - start
        x = start - 1
    return taken, need


#: In the default mode (:func:`clusteropt.jit.mode` ``"auto"``), work on fewer flows runs on the
#: Python reference while the compiled kernel is not loaded: loading numba and the kernel costs
#: about 0.4 s of CPU, what the reference spends on some 20,000 flows.
JIT_MIN_FLOWS = 20_000

_KERNELS = "clusteropt.algorithms.coflow._numba_kernels"


def _fill_reference(u, v, need, first, end: int | None, n_in: int, n_out: int):
    """Each flow in turn takes the earliest slots from ``first[i]`` (before ``end``) free at both its ports.

    Flow ``i`` runs from input ``u[i]`` to output ``v[i]`` and needs ``need[i]`` slots.  Returns
    ``(flow, a, b)`` int64 arrays: segment ``k`` gives flow ``flow[k]`` the slots ``a[k] .. b[k] - 1``,
    flows in order and each flow's segments in time order.  The pure-Python reference of the
    compiled :func:`clusteropt.algorithms.coflow._numba_kernels.fill`.
    """
    busy_in: dict[int, _Busy] = {}
    busy_out: dict[int, _Busy] = {}
    fs, As, Bs = [], [], []
    for i, (uu, vv, d, t) in enumerate(zip(np.asarray(u).tolist(), np.asarray(v).tolist(),
                                           np.asarray(need).tolist(), np.asarray(first).tolist())):
        if d == 0:
            continue
        bu = busy_in.get(uu)
        if bu is None:
            bu = busy_in[uu] = _Busy()
        bv = busy_out.get(vv)
        if bv is None:
            bv = busy_out[vv] = _Busy()
        for a, b in _common_free(bu, bv, t, d, end):
            bu.add(a, b)
            bv.add(a, b)
            fs.append(i)
            As.append(a)
            Bs.append(b)
    return (np.asarray(fs, dtype=np.int64), np.asarray(As, dtype=np.int64), np.asarray(Bs, dtype=np.int64))


def _fill(u, v, need, first, end: int | None, n_in: int, n_out: int, *, flows: int | None = None):
    """:func:`_fill_reference`, compiled (numba) when :func:`clusteropt.jit.use_compiled` says so for
    ``flows`` (default ``len(u)``) against :data:`JIT_MIN_FLOWS`; the same result either way.
    """
    from clusteropt.jit import use_compiled

    if not use_compiled(len(u) if flows is None else flows, JIT_MIN_FLOWS, _KERNELS):
        return _fill_reference(u, v, need, first, end, n_in, n_out)
    from clusteropt.algorithms.coflow import _numba_kernels

    fill: Any = _numba_kernels.fill  # numba's dispatcher types no signature
    arr = [np.ascontiguousarray(x, dtype=np.int64) for x in (u, v, need, first)]
    return fill(*arr, -1 if end is None else int(end), int(n_in), int(n_out))


def greedy_schedule(inst: CoflowInstance, order) -> CoflowSchedule:
    """Work-conserving priority greedy (see the module docstring), respecting release times.

    Parameters
    ----------
    inst : CoflowInstance
    order : int array (n,)
        Coflow indices, highest priority first.

    Returns
    -------
    CoflowSchedule
        One block per distinct span of flow segments; a coflow released at r starts at r + 1.

    Examples
    --------
    >>> inst = CoflowInstance(2, 2, coflow=[0, 1], input=[0, 0], output=[0, 1], units=[2, 1],
    ...                       weight=[1.0, 1.0], release=[0, 0])
    >>> s = greedy_schedule(inst, [1, 0])
    >>> [(start, n, f.tolist()) for start, n, f in s.blocks()]
    [(1, 1, [[1, 0, 1]]), (2, 2, [[0, 0, 0]])]
    """
    order = _check_order(order, inst.n_coflows)
    flows = flows_in_order(inst, order)
    co = inst.coflow[flows]
    seg, a, b = _fill(inst.input[flows], inst.output[flows], inst.units[flows], inst.release[co] + 1, None,
                      inst.n_inputs, inst.n_outputs)
    f = flows[seg]
    return _merge_blocks(a, b - a, inst.coflow[f], inst.input[f], inst.output[f], order)


def flows_in_order(inst: CoflowInstance, order) -> np.ndarray:
    """The flow indices of the coflows ``order`` (each coflow's flows in index order), concatenated.

    >>> inst = CoflowInstance(2, 2, coflow=[0, 0, 1], input=[0, 1, 0], output=[0, 1, 1], units=[1, 1, 1],
    ...                       weight=[1.0, 1.0], release=[0, 0])
    >>> flows_in_order(inst, [1, 0]).tolist()
    [2, 0, 1]
    """
    order = np.asarray(order, dtype=np.int64)
    ptr = np.asarray(inst.coflow_ptr, dtype=np.int64)
    counts = ptr[order + 1] - ptr[order]
    base = np.repeat(ptr[order] - np.concatenate(([0], np.cumsum(counts)[:-1])), counts)
    return base + np.arange(int(counts.sum()), dtype=np.int64)


def madd_schedule(inst: CoflowInstance, order) -> CoflowSchedule:
    """MADD in unit slots (the module docstring): each coflow's flows take the latest slots that
    still let it complete when the greedy would; respects release times.

    Examples
    --------
    Coflow 0 (first) has 3 units on ports (0, 0) and 1 on (1, 1); coflow 1 has 1 unit on (1, 1).
    The greedy finishes coflow 0's short flow in slot 1 and delays coflow 1 to slot 2; MADD paces
    it to slot 3 (coflow 0 completes in slot 3 either way) and coflow 1 goes in slot 1:

    >>> inst = CoflowInstance(2, 2, coflow=[0, 0, 1], input=[0, 1, 1], output=[0, 1, 1], units=[3, 1, 1],
    ...                       weight=[1.0, 1.0], release=[0, 0])
    >>> from clusteropt.verify import check_coflow_schedule
    >>> check_coflow_schedule(inst, greedy_schedule(inst, [0, 1])).completion.tolist()
    [3, 2]
    >>> check_coflow_schedule(inst, madd_schedule(inst, [0, 1])).completion.tolist()
    [3, 1]
    """
    order = _check_order(order, inst.n_coflows)
    ports_in = [_Busy() for _ in range(inst.n_inputs)]
    ports_out = [_Busy() for _ in range(inst.n_outputs)]
    ptr = inst.coflow_ptr
    starts, lengths, cof, ins, outs = [], [], [], [], []
    release = inst.release.tolist()
    kept_greedy = 0
    for j in order.tolist():
        first = release[j] + 1
        flows = [(int(inst.input[f]), int(inst.output[f]), int(inst.units[f])) for f in range(ptr[j], ptr[j + 1])]
        if not flows:
            continue
        # the greedy's placement on copies of the coflow's ports: its completion C_j
        t_in = {u: ports_in[u].copy() for u, _, _ in flows}
        t_out = {v: ports_out[v].copy() for _, v, _ in flows}
        forward = []
        for u, v, d in flows:
            segs = _common_free(t_in[u], t_out[v], first, d)
            for a, b in segs:
                t_in[u].add(a, b)
                t_out[v].add(a, b)
            forward.append(segs)
        completion = max(b for segs in forward for _, b in segs) - 1
        # the latest placement in [first, C_j], flows in reverse order, on copies again
        b_in = {u: ports_in[u].copy() for u, _, _ in flows}
        b_out = {v: ports_out[v].copy() for _, v, _ in flows}
        backward: list[list[tuple[int, int]]] = [[] for _ in flows]
        fits = True
        for k in range(len(flows) - 1, -1, -1):
            u, v, d = flows[k]
            segs, left = _common_free_back(b_in[u], b_out[v], first, completion, d)
            if left:
                fits = False
                break
            for a, b in segs:
                b_in[u].add(a, b)
                b_out[v].add(a, b)
            backward[k] = segs
        chosen = backward if fits else forward
        kept_greedy += not fits
        for (u, v, _), segs in zip(flows, chosen, strict=True):
            for a, b in segs:
                ports_in[u].add(a, b)
                ports_out[v].add(a, b)
                starts.append(a)
                lengths.append(b - a)
                cof.append(j)
                ins.append(u)
                outs.append(v)
    if kept_greedy:
        log.info("madd: %d of %d coflows kept the greedy placement (the latest one did not fit)", kept_greedy,
                 inst.n_coflows)
    return _merge_blocks(starts, lengths, cof, ins, outs, order)


def decompose_into_matchings(matrix) -> list[tuple[int, np.ndarray, np.ndarray]]:
    """Decompose a bipartite multigraph into ``Delta`` matchings (Konig), compressed.

    ``matrix[u, v]`` is the number of parallel (u, v) edges.  Returns ``(count, rows, cols)``
    triples: the matching ``{(rows[k], cols[k])}`` repeated ``count`` times; the counts sum to
    the max degree ``Delta`` and every edge is covered exactly once.  The graph is padded to a
    ``Delta``-regular one with dummy edges, a perfect matching is found on the support
    (``scipy.sparse.csgraph.maximum_bipartite_matching``, Hopcroft-Karp) and taken as many
    times as its smallest entry allows, which keeps the rest regular; dummies are dropped.

    Examples
    --------
    >>> parts = decompose_into_matchings([[2, 1], [1, 0]])
    >>> sum(c for c, _, _ in parts)   # Delta = 3
    3
    """
    a = np.asarray(matrix, dtype=np.int64)
    if a.ndim != 2 or (a < 0).any():
        raise ValueError("matrix must be a 2-d array of non-negative edge counts")
    # only ports with edges take part; the smaller side is padded with empty ports
    row_ids = np.flatnonzero(a.sum(axis=1))
    col_ids = np.flatnonzero(a.sum(axis=0))
    n = max(row_ids.size, col_ids.size)
    if n == 0:
        return []
    real = np.zeros((n, n), dtype=np.int64)
    real[: row_ids.size, : col_ids.size] = a[np.ix_(row_ids, col_ids)]
    row_ids = np.concatenate([row_ids, np.full(n - row_ids.size, -1)])
    col_ids = np.concatenate([col_ids, np.full(n - col_ids.size, -1)])
    delta = int(max(real.sum(axis=0).max(), real.sum(axis=1).max()))
    dummy = np.zeros_like(real)
    rd, cd = delta - real.sum(axis=1), delta - real.sum(axis=0)
    i = j = 0
    while i < n and j < n:  # north-west corner fill of the deficits (equal totals)
        if rd[i] == 0:
            i += 1
            continue
        if cd[j] == 0:
            j += 1
            continue
        x = min(rd[i], cd[j])
        dummy[i, j] += x
        rd[i] -= x
        cd[j] -= x
    # The support as a fixed edge list in row-major (CSR) order: cells only ever empty, so each
    # round drops the emptied edges instead of rebuilding the graph from a dense n x n mask.
    total = real + dummy
    edge_r, edge_c = np.nonzero(total)
    pos = np.full((n, n), -1, dtype=np.int64)  # (row, col) -> edge position
    pos[edge_r, edge_c] = np.arange(edge_r.size)
    tot, have_all = total[edge_r, edge_c], real[edge_r, edge_c]
    edge_c32 = edge_c.astype(np.int32)
    alive = np.arange(edge_r.size)
    deg = np.bincount(edge_r, minlength=n).astype(np.int32)
    from scipy.sparse import csr_matrix  # here: scipy.sparse takes 0.14 s to import
    from scipy.sparse.csgraph import maximum_bipartite_matching

    # One CSR graph whose (public) index arrays are replaced each round: building it through
    # the constructor's checks costs more than the matching itself.
    graph = csr_matrix((n, n), dtype=np.int8)
    indptr = np.zeros(n + 1, dtype=np.int32)
    ones = np.ones(edge_r.size, dtype=np.int8)
    out = []
    done = 0
    r = np.arange(n)
    while done < delta:
        np.cumsum(deg, out=indptr[1:])
        graph.indices = edge_c32[alive]
        graph.indptr = indptr
        graph.data = ones[: alive.size]
        match = maximum_bipartite_matching(graph, perm_type="column")
        if (match < 0).any():  # pragma: no cover - Konig guarantees a perfect matching
            raise RuntimeError("no perfect matching in a regular bipartite multigraph")
        e = pos[r, match]
        cell = tot[e]
        count = int(cell.min())
        have = have_all[e]
        keep = have > 0
        rows, cols, have_kept = row_ids[keep], col_ids[match[keep]], have[keep]
        # real edges are served first; a cell with fewer real edges than ``count`` (the rest are
        # dummies) is in the matching only for its first ``have`` slots, so the run is cut there
        if have_kept.size == 0 or have_kept.min() >= count:
            out.append((count, rows, cols))
        else:
            cuts = np.unique(np.concatenate([[0], np.minimum(have_kept, count), [count]]))
            for lo, hi in itertools.pairwise(cuts.tolist()):
                on = have_kept > lo
                out.append((hi - lo, rows[on], cols[on]))
        tot[e] = cell - count
        have_all[e] = have - np.minimum(have, count)
        emptied = cell == count
        deg[emptied] -= 1  # row k's matched edge is e[k]: one edge per row at most
        alive = alive[tot[alive] > 0]
        done += count
    return out


def paper_schedule(inst: CoflowInstance, order) -> CoflowSchedule:
    """The slides' scheduler: move edges backward, then run each block as ``Delta`` matchings.

    See the module docstring for the rule, the bound without release times, and what is done
    with release times.

    Examples
    --------
    >>> inst = CoflowInstance(2, 2, coflow=[0, 1, 1], input=[0, 1, 0], output=[0, 1, 1],
    ...                       units=[2, 2, 1], weight=[1.0, 1.0], release=[0, 0])
    >>> s = paper_schedule(inst, [0, 1])
    >>> s.makespan   # coflow 1's (1, 1) edges move into block 0 beside (0, 0)
    3
    """
    order = _check_order(order, inst.n_coflows)
    n, mi, mo = inst.n_coflows, inst.n_inputs, inst.n_outputs
    ptr = inst.coflow_ptr
    cap_in = np.zeros((n, mi), dtype=np.int64)  # Delta(G'_b) - deg_in, per block b (= position)
    cap_out = np.zeros((n, mo), dtype=np.int64)
    open_in = np.zeros(mi, dtype=np.int64)  # blocks before this are saturated at the port
    open_out = np.zeros(mo, dtype=np.int64)
    block_start = np.zeros(n, dtype=np.int64)  # first slot of each block
    contents: list[list[tuple[int, int, int, int]]] = [[] for _ in range(n)]  # (coflow, u, v, units)
    has_release = bool(inst.release.any())
    next_free = 1
    for b, j in enumerate(order.tolist()):
        lo, hi = int(ptr[j]), int(ptr[j + 1])
        stay_u, stay_v, stay_d = [], [], []
        r = int(inst.release[j])
        for f in range(lo, hi):
            u, v, d = int(inst.input[f]), int(inst.output[f]), int(inst.units[f])
            first = max(int(open_in[u]), int(open_out[v]))
            if first < b:
                ok = (cap_in[first:b, u] > 0) & (cap_out[first:b, v] > 0)
                if has_release:
                    ok &= block_start[first:b] >= r + 1
                for k in (np.flatnonzero(ok) + first).tolist():
                    x = min(d, int(cap_in[k, u]), int(cap_out[k, v]))
                    cap_in[k, u] -= x
                    cap_out[k, v] -= x
                    contents[k].append((j, u, v, x))
                    d -= x
                    if d == 0:
                        break
                while open_in[u] < b and cap_in[open_in[u], u] == 0:
                    open_in[u] += 1
                while open_out[v] < b and cap_out[open_out[v], v] == 0:
                    open_out[v] += 1
            if d > 0:
                stay_u.append(u)
                stay_v.append(v)
                stay_d.append(d)
                contents[b].append((j, u, v, d))
        deg_in = np.bincount(stay_u, weights=stay_d, minlength=mi).astype(np.int64)
        deg_out = np.bincount(stay_v, weights=stay_d, minlength=mo).astype(np.int64)
        delta = int(max(deg_in.max(initial=0), deg_out.max(initial=0)))
        cap_in[b] = delta - deg_in
        cap_out[b] = delta - deg_out
        block_start[b] = max(next_free, r + 1)
        next_free = int(block_start[b]) + delta
        if delta == 0:  # an empty block takes no slots and takes no edges
            cap_in[b] = 0
            cap_out[b] = 0
    pieces: list[list[np.ndarray]] = []
    shared: list[tuple[int, int, int, int, int]] = []
    for b in range(n):
        if contents[b]:
            _run_block(pieces, shared, int(block_start[b]), contents[b], mi, mo)
    if shared:
        pieces.append(list(np.asarray(shared, dtype=np.int64).T))
    if not pieces:
        return ScheduleBuilder().build(order)
    start, length, cof, ins, outs = (np.concatenate([p[k] for p in pieces]) for k in range(5))
    return _merge_blocks(start, length, cof, ins, outs, order)


def _run_block(out: list[list[np.ndarray]], shared: list[tuple[int, int, int, int, int]], start: int, edges,
               mi: int, mo: int) -> None:
    """Schedule one block's edges in Delta(block) slots from ``start`` into ``out`` (arrays of
    start, length, coflow, input, output) and ``shared`` (the same as tuples, for port pairs that
    several coflows share: they serve them in turn, splitting a matching's run where one
    coflow's units end).
    """
    arr = np.asarray(edges, dtype=np.int64)
    matrix = np.zeros((mi, mo), dtype=np.int64)
    np.add.at(matrix, (arr[:, 1], arr[:, 2]), arr[:, 3])
    owner = np.full((mi, mo), -1, dtype=np.int64)  # the one coflow of a cell, -2 when shared
    cells = arr[:, 1] * mo + arr[:, 2]
    uniq, first, counts = np.unique(cells, return_index=True, return_counts=True)
    owner.flat[uniq] = np.where(counts == 1, arr[first, 0], -2)
    queues: dict[tuple[int, int], list[list[int]]] = {}
    for k in np.flatnonzero(np.isin(cells, uniq[counts > 1])).tolist():
        j, u, v, d = arr[k].tolist()
        queues.setdefault((u, v), []).append([j, d])
    t = start
    for count, rows, cols in decompose_into_matchings(matrix):
        own = owner[rows, cols]
        single = own >= 0
        if single.any():
            k = int(single.sum())
            out.append([np.full(k, t), np.full(k, count), own[single], rows[single], cols[single]])
        for u, v in zip(rows[~single].tolist(), cols[~single].tolist(), strict=True):
            q, off = queues[u, v], 0
            while off < count:
                j, d = q[0]
                x = min(d, count - off)
                shared.append((t + off, x, j, u, v))
                off += x
                if x == d:
                    q.pop(0)
                else:
                    q[0][1] = d - x
        t += count


#: Scheduler name -> function(instance, order) -> CoflowSchedule.
SCHEDULERS = {"paper": paper_schedule, "greedy": greedy_schedule, "madd": madd_schedule}
