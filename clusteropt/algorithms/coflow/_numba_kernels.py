"""The numba kernel behind ``clusteropt.algorithms.coflow.schedulers._fill`` (imported on first use).

:func:`fill` is ``schedulers._fill_reference`` transcribed: ``_Busy.free_at`` / ``_Busy.add`` on
each port's sorted, merged busy intervals, and ``_common_free``'s leaps.  A port's intervals live in
one region of two shared pools (``starts``, ``ends``) that moves to a region twice as large when
full; ``None`` of the reference (an unbounded free segment) is ``-1`` here (slots are ``>= 0``).
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def _free_at(p, x, starts, ends, off, size):
    """``_Busy.free_at``: the free segment ``[a, b)`` holding ``x`` or the next (``b = -1``: unbounded)."""
    o = off[p]
    n = size[p]
    lo = 0  # bisect_right(ends, x)
    hi = n
    while lo < hi:
        mid = (lo + hi) // 2
        if x < ends[o + mid]:
            hi = mid
        else:
            lo = mid + 1
    k = lo
    if k == n:
        return x, -1
    if starts[o + k] > x:
        return x, starts[o + k]
    return ends[o + k], (starts[o + k + 1] if k + 1 < n else -1)


@njit(cache=True)
def _add(p, a, b, starts, ends, off, size, cap, pool):
    """``_Busy.add``: insert the busy interval ``[a, b)``, merging with neighbours that touch it.

    ``pool[0]`` is the pools' used length; returns the pools (new arrays when they grew).
    """
    o = off[p]
    n = size[p]
    lo = 0  # bisect_left(starts, a)
    hi = n
    while lo < hi:
        mid = (lo + hi) // 2
        if starts[o + mid] < a:
            lo = mid + 1
        else:
            hi = mid
    k = lo
    if k > 0 and ends[o + k - 1] == a:
        k -= 1
        a = starts[o + k]
        for q in range(k, n - 1):
            starts[o + q] = starts[o + q + 1]
            ends[o + q] = ends[o + q + 1]
        n -= 1
    if k < n and starts[o + k] == b:
        b = ends[o + k]
        for q in range(k, n - 1):
            starts[o + q] = starts[o + q + 1]
            ends[o + q] = ends[o + q + 1]
        n -= 1
    if n == cap[p]:  # move the port's intervals to a region twice as large at the pools' end
        new_cap = 2 * cap[p]
        if pool[0] + new_cap > starts.size:
            grown = max(2 * starts.size, pool[0] + new_cap)
            s2 = np.empty(grown, dtype=np.int64)
            e2 = np.empty(grown, dtype=np.int64)
            s2[: pool[0]] = starts[: pool[0]]
            e2[: pool[0]] = ends[: pool[0]]
            starts, ends = s2, e2
        no = pool[0]
        starts[no:no + n] = starts[o:o + n]
        ends[no:no + n] = ends[o:o + n]
        off[p] = no
        cap[p] = new_cap
        pool[0] += new_cap
        o = no
    for q in range(n, k, -1):
        starts[o + q] = starts[o + q - 1]
        ends[o + q] = ends[o + q - 1]
    starts[o + k] = a
    ends[o + k] = b
    size[p] = n + 1
    return starts, ends


@njit(cache=True)
def fill(u, v, need, first, end, n_in, n_out):
    """``schedulers._fill_reference``: each flow in turn takes the earliest common free slots of its ports.

    Flow ``i`` (input ``u[i]``, output ``v[i]``) needs ``need[i]`` slots from ``first[i]``, before
    ``end`` (``-1``: no end).  Returns ``(flow, a, b)``: segment ``k`` gives flow ``flow[k]`` the
    slots ``a[k] .. b[k] - 1``, in the order the reference appends them.
    """
    P = n_in + n_out
    init = 8
    cap = np.full(P, init, dtype=np.int64)
    off = np.arange(P, dtype=np.int64) * init
    size = np.zeros(P, dtype=np.int64)
    starts = np.empty(P * init * 2, dtype=np.int64)
    ends = np.empty(P * init * 2, dtype=np.int64)
    pool = np.array([P * init], dtype=np.int64)
    m = max(16, u.size)
    out_f = np.empty(m, dtype=np.int64)
    out_a = np.empty(m, dtype=np.int64)
    out_b = np.empty(m, dtype=np.int64)
    nout = 0
    taken_a = np.empty(16, dtype=np.int64)
    taken_b = np.empty(16, dtype=np.int64)
    for i in range(u.size):
        left = need[i]
        if left == 0:
            continue
        pu = u[i]
        pv = n_in + v[i]
        x = first[i]
        nt = 0
        while left > 0 and (end < 0 or x < end):  # _common_free
            a1, b1 = _free_at(pu, x, starts, ends, off, size)
            if end >= 0 and a1 >= end:
                break
            a2, b2 = _free_at(pv, a1, starts, ends, off, size)
            if a2 > a1:
                x = a2
                continue
            x = a1
            if b1 < 0:
                b = b2
            elif b2 < 0:
                b = b1
            else:
                b = min(b1, b2)
            if end >= 0:
                b = end if b < 0 else min(b, end)
            stop = x + left if b < 0 else min(b, x + left)
            if nt == taken_a.size:
                ta = np.empty(2 * nt, dtype=np.int64)
                tb = np.empty(2 * nt, dtype=np.int64)
                ta[:nt] = taken_a
                tb[:nt] = taken_b
                taken_a, taken_b = ta, tb
            taken_a[nt] = x
            taken_b[nt] = stop
            nt += 1
            left -= stop - x
            x = stop
        for q in range(nt):
            a = taken_a[q]
            b = taken_b[q]
            starts, ends = _add(pu, a, b, starts, ends, off, size, cap, pool)
            starts, ends = _add(pv, a, b, starts, ends, off, size, cap, pool)
            if nout == out_f.size:
                g = 2 * nout
                f2 = np.empty(g, dtype=np.int64)
                a2_ = np.empty(g, dtype=np.int64)
                b2_ = np.empty(g, dtype=np.int64)
                f2[:nout] = out_f
                a2_[:nout] = out_a
                b2_[:nout] = out_b
                out_f, out_a, out_b = f2, a2_, b2_
            out_f[nout] = i
            out_a[nout] = a
            out_b[nout] = b
            nout += 1
    return out_f[:nout].copy(), out_a[:nout].copy(), out_b[:nout].copy()
