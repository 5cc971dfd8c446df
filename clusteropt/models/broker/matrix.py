"""Paper 003 (mlBroker): the MILP (8) and P_f (9) built directly as sparse arrays for HiGHS.

:func:`clusteropt.models.broker.milp.build_broker_milp` is the Pyomo model users inspect and export;
at the paper's scale (100 jobs, T = 50, R = 15: about 600k columns) building it and handing it to
HiGHS took longer than HiGHS's solve.  :func:`build_broker_arrays` builds **the same
model** -- the same variables with the same bounds and integrality, the same rows, the same
objective -- as numpy / scipy arrays in one vectorized pass, in a
:class:`~clusteropt.models.matrix.MatrixLP` whose column and row names are the Pyomo
names (``y[3,2,1]``, ``eq8h[3,2,1]``), so that ``tests/models/test_broker_matrix.py`` compares the
two models row by row by name (the order of columns and rows differs from the compiler's; a
row may be written with the opposite sign).  The components, equation numbers, reductions and
both price forms are those of :mod:`clusteropt.models.broker.milp` (its module docstring):

* columns ``y, s, q, g, v, z`` per active (job, slot) pair (``q`` only from DCs holding data),
  ``x, u1, u2`` per (slot, DC, resource), and with ``price_form="tight"`` the hull's ``h_a, h_b``;
* rows (8a), (8b), the price rows ((8c), (8d) or the hull's ``eq7_split``, ``eq7_first``,
  ``eq7_second``, ``eq7_hull``), (8e)-(8j), each left out where the Pyomo model leaves it out;
* objective ``sum_t C1 + C2* + C3 + C4`` (Eqs. (1), (7), (5), (6)).

:func:`solve_broker_arrays` hands the arrays to HiGHS (:func:`~clusteropt.models.matrix.solve_matrix`)
and :func:`decisions_from_arrays` reads the solution back as the Pyomo reader does.

References
----------
Li et al. (paper 003): Sec. 3.2-3.3 (Eqs. (1)-(8)), Sec. 4.1 (Eq. (9)).
"""

from __future__ import annotations

import itertools
import logging
import time
from typing import TYPE_CHECKING

import numpy as np

from clusteropt.decisions.broker import BrokerDecision, BrokerSchedule
from clusteropt.instances.broker import BrokerInstance
from clusteropt.models.broker.inputs import check_prev_v, check_price_form, check_slots, price_bound
from clusteropt.models.matrix import Assembler, MatrixLP, solve_matrix

if TYPE_CHECKING:
    from clusteropt.solvers.result import SolveResult

__all__ = ["build_broker_arrays", "decisions_from_arrays", "solve_broker_arrays"]

log = logging.getLogger(__name__)

_INF = np.inf


def build_broker_arrays(inst: BrokerInstance, *, slots=None, prev_v=None, price_form: str = "tight",
                        relax: bool = False) -> MatrixLP:
    """Problem P (8), or P_f (9) with ``relax=True``, as arrays: the model of
    ``build_broker_milp(inst, slots=..., prev_v=..., price_form=..., relax=...)`` (module docstring).

    Returns a :class:`~clusteropt.models.matrix.MatrixLP` (minimization; ``integer`` set
    for the MILP) whose ``meta`` holds what :func:`decisions_from_arrays` needs.

    Raises
    ------
    ValueError
        Bad ``slots``, ``prev_v`` or ``price_form`` (the messages of :func:`build_broker_milp`).

    Examples
    --------
    >>> from clusteropt.instances.broker import broker_preset
    >>> lp = build_broker_arrays(broker_preset("tiny", seed=0), relax=True)
    >>> lp.col_names()[0], lp.row_names()[0], lp.maximize, lp.integer is None
    ('y[0,2,0]', 'eq8a[0,2,0]', False, True)
    """
    t0 = time.perf_counter()
    window = check_slots(inst, slots)
    prev = check_prev_v(inst, prev_v)
    price_form = check_price_form(price_form)
    R, K = inst.n_dcs, inst.n_resources
    first = window[0]
    # the active (job, slot) pairs in the Pyomo model's order: by slot, then job
    p_job = np.concatenate([inst.active(t) for t in window]).astype(np.int64)
    p_t = np.concatenate([np.full(len(inst.active(t)), t) for t in window]).astype(np.int64)
    n_p, n_t = p_job.size, len(window)
    need = np.concatenate([inst.required_workers(t)[inst.active(t)] for t in window]).astype(np.int64) \
        if n_p else np.zeros(0, np.int64)
    d_pr = inst.data[p_job, p_t - 1, :] if n_p else np.zeros((0, R))  # D_i^r(t) per pair
    src_p, src_r = np.nonzero(d_pr > 0)  # the (pair, DC) with data, pair-major: the Pyomo set Q's order
    n_src = src_p.size
    cap = inst.capacity[p_job]
    d = inst.transfer_cost
    a, b, e, big_m = inst.price_a, inst.price_b, inst.price_e, inst.big_m
    nd, md = inst.worker_demand[p_job], inst.ps_demand[p_job]  # (n_p, K)
    t_pos = p_t - first  # slot position of each pair

    # ---- columns, in the Pyomo declaration order
    sizes = {"y": n_p * R, "s": n_p * R, "q": n_src * R, "g": n_p * R * R, "v": n_p * R, "z": n_p * R,
             "x": n_t * R * K, "u1": n_t * R * K, "u2": n_t * R * K}
    if price_form == "tight":
        sizes.update(h_a=n_t * R * K, h_b=n_t * R * K)
    off = dict(zip(sizes, itertools.accumulate([0, *sizes.values()]), strict=False))
    n_cols = sum(sizes.values())
    pr = np.arange(n_p)[:, None] * R + np.arange(R)[None, :]  # (n_p, R) local index of (pair, r)
    y_c, s_c, v_c, z_c = (off[k] + pr for k in ("y", "s", "v", "z"))
    g_c = off["g"] + (np.arange(n_p)[:, None, None] * R * R + np.arange(R)[None, :, None] * R
                      + np.arange(R)[None, None, :])  # (n_p, R, R)
    q_c = off["q"] + np.arange(n_src)[:, None] * R + np.arange(R)[None, :]  # (n_src, R)
    trk = np.arange(n_t)[:, None, None] * R * K + np.arange(R)[None, :, None] * K + np.arange(K)[None, None, :]
    x_c, u1_c, u2_c = (off[k] + trk for k in ("x", "u1", "u2"))
    lower = np.zeros(n_cols)
    upper = np.full(n_cols, _INF)
    upper[off["y"]:off["y"] + sizes["y"]] = np.repeat(need.astype(float), R)
    for k in ("s", "v", "z", "u1", "u2"):
        upper[off[k]:off[k] + sizes[k]] = 1.0
    integer = None
    if not relax:
        integer = np.zeros(n_cols, dtype=bool)
        for k in ("y", "s", "g", "v", "z", "u1", "u2"):
            integer[off[k]:off[k] + sizes[k]] = True

    # ---- objective: C1 (q), C2* (x), C3 (z), C4 (g)
    cost = np.zeros(n_cols)
    cost[q_c] = d[src_r][:, :]  # d^{r r'} for q_i^{r r'}(t)
    cost[x_c] = 1.0
    cost[z_c] = np.repeat(inst.deploy_cost[p_job][:, None], R, axis=1)
    cost[g_c] = inst.traffic[p_job][:, None, None] * d[None, :, :]

    rows = Assembler(n_cols)

    def add(name, count, r, c, v, lo, hi, keys) -> None:
        rows.add(name, count, keys, (r, c, v), lo, hi)
    keys_pr = [(int(i), int(t)) for i, t in zip(p_job.tolist(), p_t.tolist(), strict=True)]
    window_l = list(window)

    # (8a) P_i y_i^{r'}(t) - sum_r q_i^{r r'}(t) >= 0, for pairs with data
    has = np.zeros(n_p, dtype=bool)
    has[src_p] = True
    hp = np.flatnonzero(has)
    row_of = np.full(n_p, -1)
    row_of[hp] = np.arange(hp.size)
    r8a = row_of[:, None] * R + np.arange(R)[None, :]  # (n_p, R), valid where has
    rr = np.concatenate([r8a[hp].ravel(), r8a[src_p].ravel()])  # q_i^{r r'}: row (pair, r')
    cc = np.concatenate([y_c[hp].ravel(), q_c.ravel()])
    vv = np.concatenate([np.repeat(cap[hp], R), -np.ones(n_src * R)])
    add("eq8a", hp.size * R, rr, cc, vv, 0.0, _INF,
             lambda: [(*keys_pr[p], r) for p in hp.tolist() for r in range(R)])
    # (8b) sum_{r'} q_i^{r r'}(t) = D_i^r(t)
    dv = d_pr[src_p, src_r]
    add("eq8b", n_src, np.repeat(np.arange(n_src), R), q_c.ravel(), np.ones(n_src * R), dv, dv,
             lambda: [(*keys_pr[p], int(r)) for p, r in zip(src_p.tolist(), src_r.tolist(), strict=True)])

    # h_k^r(t) = sum_{i in I_t} n_{i,k} y_i^r(t) + m_{i,k} s_i^r(t): entries per (pair, r, k)
    trk_keys = lambda: [(t, r, k) for t in window_l for r in range(R) for k in range(K)]  # noqa: E731
    h_row = (t_pos[:, None, None] * R * K + np.arange(R)[None, :, None] * K + np.arange(K)[None, None, :])
    h_row = np.broadcast_to(h_row, (n_p, R, K))
    h_y = np.broadcast_to(y_c[:, :, None], (n_p, R, K))
    h_s = np.broadcast_to(s_c[:, :, None], (n_p, R, K))
    ny = np.broadcast_to(nd[:, None, :], (n_p, R, K))
    ms = np.broadcast_to(md[:, None, :], (n_p, R, K))
    n_trk = n_t * R * K
    xt, u1t, u2t = x_c.ravel(), u1_c.ravel(), u2_c.ravel()
    ones = np.ones(n_trk)
    a_t = np.broadcast_to(a[None, :, :], (n_t, R, K)).ravel()
    b_t = np.broadcast_to(b[None, :, :], (n_t, R, K)).ravel()
    e_t = np.broadcast_to(e[None, :, :], (n_t, R, K)).ravel()
    hb_t = np.stack([np.broadcast_to(price_bound(inst, t)[None, :], (R, K)) for t in window]).ravel() \
        if n_t else np.zeros(0)
    idx = np.arange(n_trk)

    def h_terms(scale_y, scale_s):
        """COO of ``scale * h`` on the (t, r, k) rows: scale is (R, K) per DC and resource."""
        sy = np.broadcast_to(scale_y[None, :, :], (n_p, R, K)) * ny
        ss = np.broadcast_to(scale_s[None, :, :], (n_p, R, K)) * ms
        return (np.concatenate([h_row.ravel(), h_row.ravel()]), np.concatenate([h_y.ravel(), h_s.ravel()]),
                np.concatenate([sy.ravel(), ss.ravel()]))

    if price_form == "bigm":
        m_t = np.broadcast_to(big_m[None, :, :], (n_t, R, K)).ravel()
        hr, hc, hv = h_terms(-a, -a)  # (8c) x - a h + M u1 >= 0
        add("eq8c", n_trk, np.concatenate([idx, idx, hr]), np.concatenate([xt, u1t, hc]),
                 np.concatenate([ones, m_t, hv]), 0.0, _INF, trk_keys)
        hr, hc, hv = h_terms(-b, -b)  # (8d) x - b h + M u2 >= e
        add("eq8d", n_trk, np.concatenate([idx, idx, hr]), np.concatenate([xt, u2t, hc]),
                 np.concatenate([ones, m_t, hv]), e_t, _INF, trk_keys)
    else:
        hat, hbt = (off[k] + trk.ravel() for k in ("h_a", "h_b"))
        hr, hc, hv = h_terms(-np.ones((R, K)), -np.ones((R, K)))  # h_a + h_b - h = 0
        add("eq7_split", n_trk, np.concatenate([idx, idx, hr]), np.concatenate([hat, hbt, hc]),
                 np.concatenate([ones, ones, hv]), 0.0, 0.0, trk_keys)
        add("eq7_first", n_trk, np.concatenate([idx, idx]), np.concatenate([hat, u2t]),
                 np.concatenate([ones, -hb_t]), -_INF, 0.0, trk_keys)
        add("eq7_second", n_trk, np.concatenate([idx, idx]), np.concatenate([hbt, u1t]),
                 np.concatenate([ones, -hb_t]), -_INF, 0.0, trk_keys)
        add("eq7_hull", n_trk, np.concatenate([idx] * 4), np.concatenate([xt, hat, hbt, u1t]),
                 np.concatenate([ones, -a_t, -b_t, -e_t]), 0.0, _INF, trk_keys)
    # (8e) u1 + u2 = 1
    add("eq8e", n_trk, np.concatenate([idx, idx]), np.concatenate([u1t, u2t]), np.ones(2 * n_trk), 1.0, 1.0,
             trk_keys)
    # (8f) sum_r s = 1
    add("eq8f", n_p, np.repeat(np.arange(n_p), R), s_c.ravel(), np.ones(n_p * R), 1.0, 1.0,
             lambda: list(keys_pr))
    pr_keys = lambda: [(*keys_pr[p], r) for p in range(n_p) for r in range(R)]  # noqa: E731
    pr_idx = np.arange(n_p * R)
    # (8g) U v - y - s >= 0
    add("eq8g", n_p * R, np.concatenate([pr_idx] * 3),
             np.concatenate([v_c.ravel(), y_c.ravel(), s_c.ravel()]),
             np.concatenate([np.full(n_p * R, float(inst.big_u)), -np.ones(2 * n_p * R)]), 0.0, _INF, pr_keys)
    # (8h) z - v(t) + v(t - 1) >= 0 where job i was active in t - 1 within the window, else z - v >= -before
    where = {(int(i), int(t)): p for p, (i, t) in enumerate(zip(p_job.tolist(), p_t.tolist(), strict=True))}
    before_p = np.array([where.get((int(i), int(t) - 1), -1) for i, t in zip(p_job, p_t, strict=True)],
                        dtype=np.int64)
    linked = before_p >= 0
    lp_ = np.flatnonzero(linked)
    rhs8h = np.zeros((n_p, R))
    at_first = (~linked) & (p_t == first)
    rhs8h[at_first] = -prev[p_job[at_first]]
    add("eq8h", n_p * R,
             np.concatenate([pr_idx, pr_idx, (pr[lp_]).ravel()]),
             np.concatenate([z_c.ravel(), v_c.ravel(), v_c[before_p[lp_]].ravel()]),
             np.concatenate([np.ones(n_p * R), -np.ones(n_p * R), np.ones(lp_.size * R)]),
             rhs8h.ravel(), _INF, pr_keys)
    # (8i) sum_{r'} g_i^{r r'} - y_i^r = 0
    add("eq8i", n_p * R, np.concatenate([np.repeat(pr_idx, R), pr_idx]),
             np.concatenate([g_c.ravel(), y_c.ravel()]), np.concatenate([np.ones(n_p * R * R), -np.ones(n_p * R)]),
             0.0, 0.0, pr_keys)
    # (8j) sum_r g_i^{r r'} - N_i s_i^{r'} >= 0, pairs with N_i(t) > 0
    jp = np.flatnonzero(need > 0)
    row_j = np.full(n_p, -1)
    row_j[jp] = np.arange(jp.size)
    rj = row_j[:, None] * R + np.arange(R)[None, :]  # (n_p, R) by r'
    g_rows = np.broadcast_to(rj[:, None, :], (n_p, R, R))[jp]  # g[p, r, r'] -> row of (p, r')
    add("eq8j", jp.size * R, np.concatenate([g_rows.ravel(), rj[jp].ravel()]),
             np.concatenate([g_c[jp].ravel(), s_c[jp].ravel()]),
             np.concatenate([np.ones(jp.size * R * R), -np.repeat(need[jp].astype(float), R)]), 0.0, _INF,
             lambda: [(*keys_pr[p], r) for p in jp.tolist() for r in range(R)])

    # ---- assemble as the compiler does: no zero coefficient, no empty row or column
    def col_keys(name: str):
        if name in ("y", "s", "v", "z"):
            return pr_keys
        if name == "q":
            return lambda: [(*keys_pr[p], int(r), r2) for p, r in zip(src_p.tolist(), src_r.tolist(), strict=True)
                            for r2 in range(R)]
        if name == "g":
            return lambda: [(*keys_pr[p], r, r2) for p in range(n_p) for r in range(R) for r2 in range(R)]
        return trk_keys

    spec = [(k, slice(off[k], off[k] + sizes[k]), col_keys(k)) for k in sizes]
    cost, lower, upper, A, row_lower, row_upper, col_blocks, row_blocks = rows.finish(
        cost, lower, upper, np.zeros(n_cols, dtype=bool), spec)
    if integer is not None:  # the integer components, at the columns the assembly kept
        integer = np.zeros(cost.size, dtype=bool)
        for b in col_blocks:
            if b.name in ("y", "s", "g", "v", "z", "u1", "u2"):
                integer[b.positions[b.positions >= 0]] = True
    name = f"broker-{'lp' if relax else 'milp'}-{price_form}" + (
        "" if slots is None else f"-t{window[0]}" + (f"-{window[-1]}" if len(window) > 1 else ""))
    meta = {"instance": inst, "slots": window, "prev_v": prev, "price_form": price_form, "relaxed": relax,
            "pairs": (p_job, p_t), "sources": (src_p, src_r)}
    log.info("built %s as arrays: %d columns, %d rows, %d nonzeros in %.2f s", name, cost.size, row_lower.size,
             A.nnz, time.perf_counter() - t0)
    return MatrixLP(name, False, cost, lower, upper, A, row_lower, row_upper, col_blocks, row_blocks, "broker",
                    meta, integer)


def solve_broker_arrays(lp: MatrixLP, *, time_limit: float | None = None, mip_gap: float | None = None,
                        options=None) -> tuple[SolveResult, np.ndarray | None]:
    """Hand ``lp`` to HiGHS (:func:`~clusteropt.models.matrix.solve_matrix`); never raises on a
    non-optimal stop (check ``result.termination``): ``(result, column values or None)``.
    """
    return solve_matrix(lp, options=options, time_limit=time_limit, mip_gap=mip_gap, raise_on_nonoptimal=False)


def decisions_from_arrays(lp: MatrixLP, x, *, tol: float = 1e-6) -> list[BrokerDecision]:
    """The decisions of a solution ``x`` of :func:`build_broker_arrays`, one per slot of the model.

    The same as :func:`clusteropt.models.broker.milp.decisions_from_solution` reads from the Pyomo
    model: over all jobs (zero rows for jobs not in ``I_t``), ``z`` included; from the MILP the
    integral fields are rounded to int64 (one more than ``tol`` from an integer raises
    ``ValueError``); ``q`` and ``x`` are clipped at 0.
    """
    meta = lp.meta
    inst: BrokerInstance = meta["instance"]
    window = meta["slots"]
    p_job, p_t = meta["pairs"]
    src_p, src_r = meta["sources"]
    n_jobs, R, K, n_t = inst.n_jobs, inst.n_dcs, inst.n_resources, len(window)
    val = {k: np.nan_to_num(v) for k, v in lp.values(x).items()}  # per component, index order; 0 off the LP
    tp = p_t - window[0]
    n_p = p_job.size
    arr: dict[str, np.ndarray] = {}
    for k in ("y", "s", "v", "z"):
        out = np.zeros((n_t, n_jobs, R))
        out[tp, p_job] = val[k].reshape(n_p, R)
        arr[k] = out
    g = np.zeros((n_t, n_jobs, R, R))
    g[tp, p_job] = val["g"].reshape(n_p, R, R)
    arr["g"] = g
    q = np.zeros((n_t, n_jobs, R, R))
    q[tp[src_p], p_job[src_p], src_r] = val["q"].reshape(src_p.size, R)
    arr["q"] = np.maximum(q, 0.0)
    for k in ("x", "u1", "u2"):
        arr[k] = val[k].reshape(n_t, R, K)
    arr["x"] = np.maximum(arr["x"], 0.0)
    if not meta["relaxed"]:
        for k in ("y", "s", "g", "v", "z", "u1", "u2"):
            frac = np.abs(arr[k] - np.round(arr[k]))
            if frac.size and frac.max() > tol:
                where = np.unravel_index(int(frac.argmax()), frac.shape)
                raise ValueError(f"{k}{[int(w) for w in where]} = {float(arr[k][where])!r} (slot "
                                 f"{window[where[0]]}): the solution is fractional")
            arr[k] = np.round(arr[k]).astype(np.int64)
    return [BrokerDecision(**{k: arr[k][n] for k in arr}) for n in range(n_t)]


def schedule_from_arrays(lp: MatrixLP, x, *, tol: float = 1e-6) -> BrokerSchedule:
    """:func:`decisions_from_arrays` as a :class:`BrokerSchedule` (the model must start at slot 1)."""
    if lp.meta["slots"][0] != 1:
        raise ValueError(f"the model starts at slot {lp.meta['slots'][0]}; a BrokerSchedule starts at slot 1")
    return BrokerSchedule(decisions_from_arrays(lp, x, tol=tol))
