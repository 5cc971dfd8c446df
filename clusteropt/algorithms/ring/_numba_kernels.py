"""The numba kernels behind :mod:`clusteropt.algorithms.ring.compiled` (imported on first use: numba loads slowly).

Each function transcribes a pure-Python reference operation for operation; the reference is named
in its docstring.  Arrays are the :class:`~clusteropt.algorithms.ring.compiled.HSTPack` layout:
``th / de / al / sib [j, i, k]`` = conditional, ``delta``, mirror-map weight ``eta / w`` and sibling
index of cluster ``k`` at level ``i`` of interval ``j``'s HST; ``ints[j] = position, requests,
hit cost, move cost``; ``fl[j] = frac_hit, frac_service, frac_move``; ``w[j]`` the work function.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

_POS, _REQ, _HIT, _MOVE = 0, 1, 2, 3
_FHIT, _FSERV, _FMOVE = 0, 1, 2


@njit(cache=True)
def log_exp(x):
    """``log(x) + exp(-x)`` (the check that compiled ``log`` / ``exp`` equal CPython's)."""
    return math.log(x) + math.exp(-x)


@njit(cache=True)
def _flow_pair(ta, da, db, aa, ab, dtau):
    """``EntropicHSTLine._flow_pair``: ``(theta_a, clock passed up)`` after the exact flow."""
    y0 = ta + da
    S = 1.0 + da + db
    t_drain = math.log(y0 / da) / aa + math.log((S - da) / (S - y0)) / ab
    if dtau >= t_drain:
        y = da
    elif aa == ab:
        y = S / (1.0 + (S - y0) / y0 * math.exp(aa * dtau))
        y = min(max(y, da), y0)
    else:
        u = math.log(y0)
        y = y0
        for _ in range(60):
            g = math.log(y0 / y) / aa + math.log((S - y) / (S - y0)) / ab - dtau
            du = g / (1.0 / aa + y / (ab * (S - y)))
            u += du
            y = math.exp(u)
            if abs(du) <= 1e-15:
                break
        y = min(max(y, da), y0)
    up = ((y0 - y) - da * math.log(y0 / y)) / aa + (math.log((S - y) / (S - y0)) * (S - da) - (y0 - y)) / ab
    return y - da, max(up, 0.0)


@njit(cache=True)
def _flow(j, path, th, de, al, sib, cnt, depth, hit):
    """``EntropicHSTLine._flow`` at full depth (the top level has one or two clusters)."""
    dtau = hit
    top = depth - 1
    for i in range(depth):
        a = path[i]
        ta = th[j, i, a]
        if ta == 0.0:
            return 0.0
        if i < top:
            b = sib[j, i, a]
            if b < 0:
                continue
            na, dtau = _flow_pair(ta, de[j, i, a], de[j, i, b], al[j, i, a], al[j, i, b], dtau)
            th[j, i, a] = na
            th[j, i, b] = 1.0 - na
        elif cnt[j, i] == 1:
            return dtau
        else:
            rest_d = (de[j, i, 0] + de[j, i, 1]) - de[j, i, a]
            na, up = _flow_pair(ta, de[j, i, a], rest_d, al[j, i, a], al[j, i, 1 - a], dtau)
            th[j, i, a] = na
            th[j, i, 1 - a] = 1.0 - na
            return up
    return dtau


@njit(cache=True)
def _hst_move(j, path, old_a, old_b, old_top, th, sib, cnt, depth):
    """``EntropicHSTLine._hst_move``: HST earth mover distance between the states before and after."""
    top = depth - 1
    moved = 0.0
    xo = 1.0
    xn = 1.0
    for i in range(top, -1, -1):
        w = float(1 << i)
        sub = w - 1.0
        if i == top:
            a = path[i]
            for k in range(cnt[j, top]):
                if k != a:
                    moved += abs(xo * old_top[k] - xn * th[j, top, k]) * (w + sub)
            xo, xn = xo * old_top[a], xn * th[j, top, a]
        else:
            a = path[i]
            b = sib[j, i, a]
            bn = th[j, i, b] if b >= 0 else 0.0
            moved += abs(xo * old_b[i] - xn * bn) * (w + sub)
            xo, xn = xo * old_a[i], xn * th[j, i, a]
        moved += abs(xo - xn) * w
    return moved


@njit(cache=True)
def _quantile(j, th, cnt, base, shift, u0, depth):
    """``EntropicHSTLine._quantile``: smallest leaf with ``CDF >= U``, descending the tree."""
    u = u0
    top = depth - 1
    klo = 0
    khi = cnt[j, top]
    for i in range(top, -1, -1):
        chosen = -1
        for k in range(klo, khi):
            tk = th[j, i, k]
            if tk > 0.0:
                chosen = k
                if u <= tk:
                    break
                u -= tk
        tk = th[j, i, chosen if chosen >= 0 else cnt[j, i] - 1]
        u = min(u / tk, 1.0) if tk > 0 else 1.0
        if i:
            lo = ((base[j, i] + chosen) << 1) - base[j, i - 1]
            klo = max(lo, 0)
            khi = min(lo + 2, cnt[j, i - 1])
        else:
            return base[j, 0] + chosen - shift[j]
    return 0


@njit(cache=True)
def _close(w, j, e, N, alpha):
    """``LineMTS._close`` on row ``j``: ``w(e) <- min(w(e) + 1, w(e -+ 1) + alpha)``."""
    tp = w[j, e] + 1.0
    if e > 0 and w[j, e - 1] + alpha < tp:
        tp = w[j, e - 1] + alpha
    if e + 1 < N and w[j, e + 1] + alpha < tp:
        tp = w[j, e + 1] + alpha
    w[j, e] = tp


@njit(cache=True)
def hst_serve(j, e, th, de, al, sib, cnt, base, shift, u, ints, fl, w, depth, N, hit, alpha, path, old_a, old_b,
              old_top):
    """``EntropicHSTLine.serve`` (``method="exact"``, full depth) on interval ``j``; returns the position."""
    ints[j, _REQ] += 1
    _close(w, j, e, N, alpha)
    pos = ints[j, _POS]
    if pos == e:
        ints[j, _HIT] += 1
    s = shift[j]
    xe = 1.0
    for i in range(depth):
        path[i] = ((e + s) >> i) - base[j, i]
        xe *= th[j, i, path[i]]
    fl[j, _FHIT] += xe
    top = depth - 1
    if xe != 0.0:
        for i in range(top):
            a = path[i]
            old_a[i] = th[j, i, a]
            b = sib[j, i, a]
            old_b[i] = th[j, i, b] if b >= 0 else 0.0
        for k in range(cnt[j, top]):
            old_top[k] = th[j, top, k]
    serv = _flow(j, path, th, de, al, sib, cnt, depth, hit)
    fl[j, _FSERV] += serv * alpha
    if xe == 0.0:
        return pos
    fl[j, _FMOVE] += _hst_move(j, path, old_a, old_b, old_top, th, sib, cnt, depth)
    new_pos = _quantile(j, th, cnt, base, shift, u[j], depth)
    if new_pos != pos:
        ints[j, _MOVE] += abs(new_pos - pos)
        ints[j, _POS] = new_pos
    return new_pos


@njit(cache=True)
def _bisect_left(B, x):
    lo = 0
    hi = B.size
    while lo < hi:
        mid = (lo + hi) // 2
        if B[mid] < x:
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(cache=True)
def _assign_one(v, server, so, load, stamp, origin, touched, ntouch, t, counters):
    """``RingAssignment.assign_one`` with the step's origins in ``stamp`` / ``origin``; returns (delta, ntouch)."""
    old = so[v]
    if old == server:
        return 0, ntouch
    if stamp[v] != t:
        stamp[v] = t
        origin[v] = old
        touched[ntouch] = v
        ntouch += 1
    start = origin[v]
    so[v] = server
    load[old] -= 1
    load[server] += 1
    delta = (1 if server != start else 0) - (1 if old != start else 0)
    counters[2] += delta
    return delta, ntouch


@njit(cache=True)
def wfa_serve(j, e, w, ints, N, alpha):
    """``WorkFunctionLine.serve`` on interval ``j``; returns the position."""
    ints[j, _REQ] += 1
    we = w[j, e]
    top = we + 1.0
    lo = w[j, e - 1] + alpha if e > 0 else top
    hi = w[j, e + 1] + alpha if e + 1 < N else top
    if lo < top or hi < top:
        w[j, e] = lo if lo <= hi else hi
        if ints[j, _POS] == e:
            ints[j, _HIT] += 1
            ints[j, _POS] = e - 1 if lo <= hi else e + 1
            ints[j, _MOVE] += 1
    else:
        w[j, e] = top
        if ints[j, _POS] == e:
            ints[j, _HIT] += 1
    return ints[j, _POS]


@njit(cache=True)
def mix_serve(j, e, th, de, al, sib, cnt, base, shift, u, ints, fl, w, depth, N, hit, alpha, path, old_a, old_b,
              old_top, cw, cints, ww, wints, fcost, fp, fint, eta, coins, cused):
    """``CombinedLine.serve`` with the experts ``("hst", "wfa")`` and ``LazyFollower.update``.

    The switching coins are ``coins[j, cused[j]:]``, drawn beforehand from the follower's generator
    in the order the reference draws them (one double per coin; a switch's ``choice`` of two
    experts is one more double against the normalised cumulative weights, as numpy's).
    """
    cints[j, _REQ] += 1
    pos = cints[j, _POS]
    if pos == e:
        cints[j, _HIT] += 1
    _close(cw, j, e, N, alpha)
    old0 = ints[j, _POS]
    new0 = hst_serve(j, e, th, de, al, sib, cnt, base, shift, u, ints, fl, w, depth, N, hit, alpha, path, old_a,
                     old_b, old_top)
    old1 = wints[j, _POS]
    new1 = wfa_serve(j, e, ww, wints, N, alpha)
    fcost[j, 0] += (1.0 if old0 == e else 0.0) + alpha * abs(new0 - old0)
    fcost[j, 1] += (1.0 if old1 == e else 0.0) + alpha * abs(new1 - old1)
    low = min(fcost[j, 0], fcost[j, 1])
    z0 = math.exp(-eta * (fcost[j, 0] - low))
    z1 = math.exp(-eta * (fcost[j, 1] - low))
    total = z0 + z1
    n0 = z0 / total
    n1 = z1 / total
    o0 = fp[j, 0]
    o1 = fp[j, 1]
    fp[j, 0] = n0
    fp[j, 1] = n1
    f = fint[j, 0]
    nf = n0 if f == 0 else n1
    of = o0 if f == 0 else o1
    if nf < of:
        coin = coins[j, cused[j]]
        cused[j] += 1
        if coin >= nf / of:
            g0 = max(0.0, n0 - o0)
            g1 = max(0.0, n1 - o1)
            g = g0 + g1
            if g > 0.0:
                p0 = g0 / g
                p1 = g1 / g
                cdf0 = p0 / (p0 + p1)
                coin = coins[j, cused[j]]
                cused[j] += 1
                fint[j, 0] = 1 if coin >= cdf0 else 0
                fint[j, 1] += 1
    new_pos = ints[j, _POS] if fint[j, 0] == 0 else wints[j, _POS]
    if new_pos != pos:
        cints[j, _MOVE] += abs(new_pos - pos)
        cints[j, _POS] = new_pos
    return new_pos


@njit(cache=True)
def dynamic_block(req, t0, so, load, cover_n, cover_j, cover_x, cuts, B, perm, kind, th, de, al, sib, cnt, base,
                  shift, u, ints, fl, w, depth, N, hit, alpha, cw, cints, ww, wints, fcost, fp, fint, eta, coins,
                  cused, counters):
    """``DynamicRing.serve`` + ``_move_cut`` over a block (see ``compiled.serve_block``).

    ``kind`` 0: every interval runs the HST MTS (``ints`` holds its position); 1: the combined MTS
    of the HST MTS and the WFA (``cints`` holds the followed position).
    """
    n = so.size
    m = cuts.size
    stamp = np.full(n, -2, dtype=np.int64)
    origin = np.zeros(n, dtype=np.int64)
    touched = np.zeros(n, dtype=np.int64)
    path = np.zeros(depth, dtype=np.int64)
    old_a = np.zeros(depth)
    old_b = np.zeros(depth)
    old_top = np.zeros(2)
    rows = np.zeros((max(16, req.size // 4), 3), dtype=np.int64)
    nrows = 0
    arcs = np.zeros((2, 2), dtype=np.int64)
    for r in range(req.size):
        t = t0 + r
        e = req[r]
        ntouch = 0
        if so[e] != so[(e + 1) % n]:
            counters[0] += 1
        for c in range(cover_n[e]):
            j = cover_j[e, c]
            if kind == 0:
                old = ints[j, _POS]
                new = hst_serve(j, cover_x[e, c], th, de, al, sib, cnt, base, shift, u, ints, fl, w, depth, N,
                                hit, alpha, path, old_a, old_b, old_top)
            else:
                old = cints[j, _POS]
                new = mix_serve(j, cover_x[e, c], th, de, al, sib, cnt, base, shift, u, ints, fl, w, depth, N,
                                hit, alpha, path, old_a, old_b, old_top, cw, cints, ww, wints, fcost, fp, fint,
                                eta, coins, cused)
            if new == old:
                continue
            # DynamicRing._move_cut(j, new - old)
            d = new - old
            oc = cuts[j]
            nc = oc + d
            cuts[j] = nc
            lo, hi = (oc, nc) if d > 0 else (nc, oc)
            narcs = 0
            if j != 0:
                B[j] = nc
                arcs[narcs, 0] = lo
                arcs[narcs, 1] = hi
                narcs += 1
            if j == 0 or j == m - 1:
                old_m = B[m]
                B[m] = max(cuts[0] + n, cuts[m - 1])
                B[0] = B[m] - n
                if B[m] != old_m:
                    arcs[narcs, 0] = min(old_m, B[m])
                    arcs[narcs, 1] = max(old_m, B[m])
                    narcs += 1
            b0 = B[0]
            for q in range(narcs):
                for v in range(arcs[q, 0] + 1, arcs[q, 1] + 1):
                    vv = b0 + 1 + (v - b0 - 1) % n
                    owner = _bisect_left(B, vv) - 1
                    delta, ntouch = _assign_one(v % n, perm[owner], so, load, stamp, origin, touched, ntouch, t,
                                                counters)
                    counters[1] += delta
        if ntouch:
            vs = np.sort(touched[:ntouch])
            for v in vs:
                if so[v] != origin[v]:
                    if nrows == rows.shape[0]:
                        grown = np.zeros((2 * nrows, 3), dtype=np.int64)
                        grown[:nrows] = rows
                        rows = grown
                    rows[nrows, 0] = t
                    rows[nrows, 1] = v
                    rows[nrows, 2] = so[v]
                    nrows += 1
    return rows[:nrows].copy()


@njit(cache=True)
def dynamic_block_static(req, t0, so, counters):
    """``DynamicRing.serve`` with one interval (no cut to move): count the cut requests."""
    n = so.size
    for r in range(req.size):
        e = req[r]
        if so[e] != so[(e + 1) % n]:
            counters[0] += 1
    return np.zeros((0, 3), dtype=np.int64)


@njit(cache=True)
def follow_block(req, t0, r0, so, load, P, rows, ptr, end, sigma, fcost, tcost, fp, fint, eta, coins, cused,
                 alpha, scale, check_scale, counters, out, nout, last):
    """``FollowRing.serve`` over a block, the experts' moves given (see ``FollowRing.serve_block``).

    ``P[i]`` is expert ``i``'s placement before request ``r0``; its net migrations in the block are
    ``rows[ptr[i]:end[i]]`` (time order), replayed here.  ``fcost / fp / fint`` are the follower's
    costs, weights and ``[following, switches]``; ``tcost`` the experts' true costs; ``counters`` =
    ``[hits, moved]``; the follower's own migrations go to ``out[nout[0]:]``.  Returns ``(r,
    event)``: 0 = block done; 1 = the follower switched at request ``r`` (relabel, sync and the
    scale check are the caller's); 2 = the scale must grow at ``r`` (the sync and the restart are
    the caller's); 3 = coins ran low, request ``r`` not served.  ``last[:m]`` holds the step costs
    of request ``r`` and ``last[m]`` the followed expert's migrations in it.
    """
    n = so.size
    m = P.shape[0]
    old_p = np.zeros(m)
    cdf = np.zeros(m)
    for r in range(r0, req.size):
        if cused[0] + 2 > coins.size:
            return r, 3
        t = t0 + r
        e = req[r]
        e1 = (e + 1) % n
        if so[e] != so[e1]:
            counters[0] += 1
        J = fint[0]
        dJ = 0
        for i in range(m):
            hit = 1.0 if P[i, e] != P[i, e1] else 0.0
            d = 0
            while ptr[i] < end[i] and rows[ptr[i], 0] == t:
                P[i, rows[ptr[i], 1]] = rows[ptr[i], 2]
                ptr[i] += 1
                d += 1
            step = hit + alpha * d if d else hit
            last[i] = step
            if i == J:
                dJ = d
            tcost[i] += step
        last[m] = dJ
        # LazyFollower.update
        for i in range(m):
            fcost[i] += last[i]
        if m > 1:
            low = fcost[0]
            for i in range(1, m):
                if fcost[i] < low:
                    low = fcost[i]
            total = 0.0
            for i in range(m):
                old_p[i] = fp[i]
                fp[i] = math.exp(-eta * (fcost[i] - low))
                total += fp[i]
            for i in range(m):
                fp[i] = fp[i] / total
            if fp[J] < old_p[J]:
                coin = coins[cused[0]]
                cused[0] += 1
                if coin >= fp[J] / old_p[J]:
                    g = 0.0
                    for i in range(m):
                        cdf[i] = max(0.0, fp[i] - old_p[i])
                        g += cdf[i]
                    if g > 0.0:
                        acc = 0.0
                        for i in range(m):  # numpy's choice: cumulative p, normalised, searchsorted right
                            acc += cdf[i] / g
                            cdf[i] = acc
                        u = coins[cused[0]]
                        cused[0] += 1
                        idx = 0
                        for i in range(m):
                            if cdf[i] / acc <= u:
                                idx += 1
                        fint[0] = idx
                        fint[1] += 1
                        return r, 1
        if check_scale:
            big = last[0]
            for i in range(1, m):
                if last[i] > big:
                    big = last[i]
            if max(big - 1.0, 0.0) > scale:
                return r, 2
        if dJ:  # FollowRing._sync(switched=False): J's moves, relabelled by sigma
            for q in range(ptr[J] - dJ, ptr[J]):
                v = rows[q, 1]
                want = sigma[rows[q, 2]]
                if so[v] != want:
                    load[so[v]] -= 1
                    load[want] += 1
                    so[v] = want
                    k = nout[0]
                    out[k, 0] = t
                    out[k, 1] = v
                    out[k, 2] = want
                    nout[0] = k + 1
                    counters[1] += 1
    return req.size, 0
