"""Paper 003 (mlBroker, Li et al.): the MILP (8) and its LP relaxation P_f (9), as Pyomo models.

Notation (Sec. 3, Table 1; :mod:`clusteropt.instances.broker`): jobs i active in slot t (``I_t``),
data centers r, r', resources k; data ``D_i^r(t)``, worker capacity ``P_i``, per-worker / per-PS
resources ``n_{i,k}`` / ``m_{i,k}``, parameter traffic ``B_i``, deployment cost ``c_i``,
transfer cost ``d^{rr'}``, prices ``a_k^r > b_k^r``, threshold ``l_k^r``, ``e_k^r = (a - b) l``,
``N_i(t) = ceil(sum_r D_i^r(t) / P_i)``.  Every job variable exists only for the active (job, slot)
pairs; decisions are read back over all jobs (zero rows for inactive ones) as
:class:`~clusteropt.decisions.broker.BrokerDecision`.

:func:`build_broker_milp` -- problem P, Eq. (8), as a Pyomo model
    Minimize ``sum_t C1(t) + C2*(t) + C3(t) + C4(t)`` (named Expressions ``C1 .. C4`` per slot:
    Eqs. (1), (7), (5), (6)) subject to

    * ``eq8a``: ``P_i y_i^{r'}(t) >= sum_r q_i^{rr'}(t)``;
    * ``eq8b``: ``sum_{r'} q_i^{rr'}(t) = D_i^r(t)``;
    * the price of ``h_k^r(t) = sum_{i in I_t} (n_{i,k} y_i^r(t) + m_{i,k} s_i^r(t))`` (Expression
      ``h``, Eq. (3)), ``price_form="bigm"`` (the paper's): ``eq8c``: ``x >= a h - M u^1``,
      ``eq8d``: ``x >= b h + e - M u^2``, ``eq8e``: ``u^1 + u^2 = 1`` with ``M = inst.big_m[r, k]``;
      ``price_form="tight"`` (the default of every entry point, :data:`DEFAULT_PRICE_FORM`): ``eq8e``
      and the convex-hull rows ``eq7_split``, ``eq7_first``, ``eq7_second``, ``eq7_hull`` (below);
    * ``eq8f``: ``sum_r s_i^r(t) = 1``;
    * ``eq8g``: ``U v_i^r(t) >= y_i^r(t) + s_i^r(t)`` with ``U = inst.big_u``;
    * ``eq8h``: ``z_i^r(t) >= v_i^r(t) - v_i^r(t - 1)`` (``v(t - 1)`` is the variable of the previous
      slot when job i was active then and the slot is in the model, ``prev_v`` for the first
      slot of the model, else 0);
    * ``eq8i``: ``sum_{r'} g_i^{rr'}(t) = y_i^r(t)``;
    * ``eq8j``: ``sum_r g_i^{rr'}(t) >= s_i^{r'}(t) N_i(t)``;
    * (8k): ``y, g`` integer >= 0; ``s, v, z, u^1, u^2`` binary; ``q, x >= 0``.

    As in the paper, (8i) and (8j) do not tie ``g_i^{rr'}`` to ``s_i^{r'}``: only ``N_i(t)``
    connections must reach the PS, and a worker beyond them may "connect" inside its own DC at
    no C4.  An optimum can use that (a one-job case in the tests costs 14 where connecting
    every worker to the PS would cost 16); we keep the paper's constraints.  A_round and the
    baselines connect every worker to the PS (``g = y (x) s``, Alg. 2's Step 3).

    Two reductions that do not change the problem, and one bound that does not change its optimum:

    * ``q_i^{rr'}(t)`` exists only where ``D_i^r(t) > 0``: where ``D_i^r(t) = 0``, (8b) with ``q >= 0``
      forces every ``q_i^{rr'}(t)`` to 0 (and (8b) has no row there).
    * Rows with no variable (e.g. (8a) for a job without data) are left out.
    * ``0 <= y_i^r(t) <= N_i(t)`` (the bounds of ``y``).  Some optimal solution of (8) and of (9)
      satisfies it, so neither optimum changes: where ``y_i^r > N_i``, lower it to ``N_i`` ((8a)
      still holds since ``sum_r q_i^{rr'} <= sum_r D_i^r <= P_i N_i``) and take the excess out of
      row r of ``g`` -- first from the columns ``r'`` where ``g_i^{rr'} > s_i^{r'} N_i``, which is
      possible because ``sum_{r'} min(g_i^{rr'}, s_i^{r'} N_i) <= N_i`` -- so every column still
      meets (8j); ``v`` stays as it was.  C1 and C3 do not change, C2 (F is non-decreasing) and C4
      (``d >= 0``) do not grow.  The bound makes ``H_k(t)`` below a bound of ``h_k^r(t)`` for every
      feasible point, and ``inst.big_m`` (computed for ``y <= U - 1 = max N``) a valid ``M``.

``price_form="tight"`` -- the convex hull of Eq. (7) (disjunctive form)
    With ``H_k(t) = sum_{i in I_t} (n_{i,k} N_i(t) + m_{i,k})`` >= ``h_k^r(t)`` (by the bounds of y):
    ``eq7_split``: ``h = h_a + h_b``, ``eq7_first``: ``h_a <= H u^2``, ``eq7_second``: ``h_b <= H u^1``,
    ``eq7_hull``: ``x >= a h_a + b h_b + e u^1``, with ``h_a, h_b >= 0`` (variables ``h_a``, ``h_b``:
    the amount priced at the first tier / at the discounted tier), and ``eq8e``.

    *Same F at integer u.*  ``u^1 = 1, u^2 = 0`` (the discounted segment, as in the paper:
    ``u^1 = 1`` relaxes (8c)) forces ``h_a = 0``, ``h_b = h`` and leaves ``x >= b h + e``;
    ``u^1 = 0, u^2 = 1`` forces ``h_b = 0``, ``h_a = h`` and leaves ``x >= a h``.  The big-M rows at
    the same u leave the same bound: with ``u^1 = 1``, (8c) reads ``x >= a h - M``, implied by
    ``x >= b h + e`` since ``a h - M <= b h + e`` iff ``(a - b)(h - l) <= M``; symmetrically for
    ``u^2 = 1`` (``M >= e``).  So both forms allow exactly the same ``(y, s, x, u)`` at integer u and
    ``min_u x = min(a h, b h + e) = F(h)`` (Eqs. (2), (7)): the MILPs have the same optimum.

    *Never weaker as an LP.*  Every LP point of the tight form satisfies the big-M rows with the
    same u: ``a h - M u^1 = a h_a + a h_b - M u^1 <= a h_a + b h_b + e u^1`` because
    ``(a - b) h_b <= (a - b) H u^1 <= (M + e) u^1`` (``M >= (a - b)(H - l)``); and
    ``b h + e - M u^2 <= a h_a + b h_b + e u^1`` because ``(e - M) u^2 <= 0 <= (a - b) h_a``.  Hence
    LP(tight) >= LP(big-M) = P_f.  It is the convex hull of ``{x >= a h} u {x >= b h + e}`` over
    ``0 <= h <= H`` (Balas' extended formulation with the two copies of x aggregated): its LP
    price is the chord ``x >= h F(H) / H``, whereas the big-M LP allows
    ``x >= max(0, ((a + b) h + e - M) / 2)`` (the best fractional u), i.e. ``x = 0`` whenever
    ``(a + b) h + e <= M``: with the paper's M nearly all of C2 disappears from P_f.

``relax=True`` -- P_f, Eq. (9)
    Integers become continuous (``y`` in ``[0, N_i(t)]``, ``g >= 0``) and binaries continuous in
    ``[0, 1]``.  (9k) asks only for ``>= 0``; the upper bounds are implied or lose nothing: ``s``
    and ``u`` by (8e), (8f); ``v <= 1`` and ``z <= 1`` because ``(y + s) / U <= 1`` and capping
    ``v`` at 1 never raises a ``v(t) - v(t - 1)``.

References
----------
X. Li, R. Zhou, L. Jiao, C. Wu, Y. Deng, Z. Li, "Online Placement and Scaling of Geo-distributed
Machine Learning Jobs via Volume-discounting Brokerage" (paper 003): Sec. 3.2-3.3 (Eqs. (1)-(8)),
Sec. 4.1 (Eqs. (9), (10), Alg. 1), Sec. 6.1.
"""

from __future__ import annotations

import logging
import time

import numpy as np
import pyomo.environ as pyo

from clusteropt.decisions.broker import BrokerDecision, BrokerSchedule
from clusteropt.instances.broker import BrokerInstance
from clusteropt.models.broker.inputs import check_prev_v, check_price_form, check_slots, price_bound
from clusteropt.models.registry import ModelSpec, register_model
from clusteropt.models.size import check_model_size

__all__ = ["build_broker_milp", "decisions_from_solution", "schedule_from_solution"]

log = logging.getLogger(__name__)



# ---------------------------------------------------------------------------------------------
# the MILP (8) and P_f (9), Pyomo


def build_broker_milp(inst: BrokerInstance, *, slots=None, prev_v=None, price_form: str = "tight",
                      relax: bool = False) -> pyo.ConcreteModel:
    """Problem P (8) of paper 003 over the horizon or a window of slots; ``relax=True``: P_f (9).

    Parameters
    ----------
    inst : BrokerInstance
    slots : None, int or iterable of int
        ``None``: slots ``1 .. T`` (the offline problem); an int t: the one-slot problem of t; an
        iterable: those consecutive slots.
    prev_v : array (I, R), optional
        ``v_i^r(t_0 - 1)`` for the first slot ``t_0`` of the model, used by (8h) (default 0:
        nothing deployed; pass zeros for jobs not active in ``t_0 - 1``, as
        :func:`~clusteropt.verify.check_broker_decision` reads it).
    price_form : {"tight", "bigm"}
        The convex-hull form of (7) (default, the package's: same MILP optimum, LP bound never
        lower; module docstring), or the paper's (8c)-(8e) with ``M = inst.big_m[r, k]``.  Every
        entry point has the same default (:data:`DEFAULT_PRICE_FORM`).
    relax : bool
        Continuous variables: P_f (9) (module docstring).

    Returns
    -------
    pyomo.environ.ConcreteModel
        Minimization objective ``eq8``; Expressions ``C1 .. C4`` (per slot) and ``h``; attributes
        ``instance``, ``slots``, ``prev_v``, ``price_form``, ``relaxed``.

    Raises
    ------
    ValueError
        Bad ``slots``, ``prev_v`` or ``price_form``.

    Examples
    --------
    >>> from clusteropt.instances.broker import broker_preset
    >>> inst = broker_preset("tiny", seed=0)
    >>> m = build_broker_milp(inst)
    >>> m.eq8a.doc.split(":")[0], m.y.doc.split(":")[0]
    ('(8a) worker capacity', 'y_i^r(t)')
    >>> len(m.IT) == sum(len(inst.active(t)) for t in range(1, inst.horizon + 1))
    True
    """
    t0 = time.perf_counter()
    window = check_slots(inst, slots)
    prev = check_prev_v(inst, prev_v)
    price_form = check_price_form(price_form)
    n_dcs, n_res = inst.n_dcs, inst.n_resources
    dcs, res = range(n_dcs), range(n_res)
    first = window[0]

    pairs = [(int(i), t) for t in window for i in inst.active(t)]
    act_at = {t: [int(i) for i in inst.active(t)] for t in window}
    cap = inst.capacity.tolist()
    need = {(i, t): int(inst.required_workers(t)[i]) for t in window for i in act_at[t]}
    data = inst.data
    sources = {(i, t): [r for r in dcs if data[i, t - 1, r] > 0] for i, t in pairs}
    n_sources = sum(len(v) for v in sources.values())
    check_model_size(
        "broker-lp" if relax else "broker-milp",
        len(pairs) * (4 * n_dcs + n_dcs * n_dcs) + n_sources * n_dcs + 5 * len(window) * n_dcs * n_res,
        f"{len(pairs)} (job, slot) pairs x {n_dcs} DCs (y, s, v, z, g) and the price terms",
        advice="Solve a window of slots (slots=...) or one slot at a time (--slot).")
    qidx = [(i, t, r, r2) for i, t in pairs for r in sources[i, t] for r2 in dcs]
    d = inst.transfer_cost.tolist()
    a, b, e = inst.price_a.tolist(), inst.price_b.tolist(), inst.price_e.tolist()
    big_m = inst.big_m.tolist()
    big_u = float(inst.big_u)
    nd, md = inst.worker_demand.tolist(), inst.ps_demand.tolist()
    traffic, deploy = inst.traffic.tolist(), inst.deploy_cost.tolist()

    kind = "P_f (9)" if relax else "P (8)"
    m = pyo.ConcreteModel(name=f"broker-{'lp' if relax else 'milp'}-{price_form}"
                               + ("" if slots is None else f"-t{window[0]}" + (f"-{window[-1]}" if len(window) > 1
                                                                                 else "")))
    m.instance, m.slots, m.prev_v, m.price_form, m.relaxed = inst, window, prev, price_form, relax
    integer = pyo.NonNegativeReals if relax else pyo.NonNegativeIntegers
    binary = pyo.UnitInterval if relax else pyo.Binary

    m.T = pyo.Set(initialize=window, doc="slots t of the model")
    m.R = pyo.Set(initialize=dcs, doc="data centers r, r' in [R]")
    m.K = pyo.Set(initialize=res, doc="resource types k in [K]")
    m.IT = pyo.Set(dimen=2, initialize=pairs, doc="(i, t): job i in I_t (active in slot t)")
    m.Q = pyo.Set(dimen=4, initialize=qidx, doc="(i, t, r, r'): D_i^r(t) > 0 (q is 0 elsewhere by (8b))")

    m.y = pyo.Var(m.IT, m.R, domain=integer, bounds=lambda m, i, t, r: (0, need[i, t]),
                  doc="y_i^r(t): workers of job i in DC r (0 <= y <= N_i(t), module docstring)")
    m.s = pyo.Var(m.IT, m.R, domain=binary, doc="s_i^r(t): job i's PS is in DC r")
    m.q = pyo.Var(m.Q, domain=pyo.NonNegativeReals, doc="q_i^{rr'}(t): data of job i moved from r to r'")
    m.g = pyo.Var(m.IT, m.R, m.R, domain=integer,
                  doc="g_i^{rr'}(t): worker-PS connections from workers in r to the PS in r'")
    m.v = pyo.Var(m.IT, m.R, domain=binary, doc="v_i^r(t): job i deployed (a worker or the PS) in DC r")
    m.z = pyo.Var(m.IT, m.R, domain=binary, doc="z_i^r(t): deployment cost paid for job i in DC r (Eq. (4))")
    m.x = pyo.Var(m.T, m.R, m.K, domain=pyo.NonNegativeReals, doc="x_k^r(t): price paid for resource k in DC r "
                                                                  "(C2*, Eq. (7))")
    m.u1 = pyo.Var(m.T, m.R, m.K, domain=binary, doc="u^1_{k,r}(t): 1 relaxes (8c): discounted segment b h + e")
    m.u2 = pyo.Var(m.T, m.R, m.K, domain=binary, doc="u^2_{k,r}(t): 1 relaxes (8d): first-tier segment a h")

    y, s, q, g, v, z, x, u1, u2 = m.y, m.s, m.q, m.g, m.v, m.z, m.x, m.u1, m.u2
    into: dict[tuple[int, int, int], list] = {}
    for i, t, r, r2 in qidx:
        into.setdefault((i, t, r2), []).append(q[i, t, r, r2])

    def eq8a(m, i, t, r2):
        terms = into.get((i, t, r2))
        return pyo.Constraint.Skip if not terms else cap[i] * y[i, t, r2] >= sum(terms)

    m.eq8a = pyo.Constraint(m.IT, m.R, rule=eq8a,
                            doc="(8a) worker capacity: P_i y_i^{r'}(t) >= sum_r q_i^{rr'}(t)")
    m.eq8b = pyo.Constraint([(i, t, r) for i, t in pairs for r in sources[i, t]], doc=(
        "(8b) data conservation: sum_{r'} q_i^{rr'}(t) = D_i^r(t)"),
        rule=lambda m, i, t, r: sum(q[i, t, r, r2] for r2 in dcs) == float(data[i, t - 1, r]))

    def h_rule(m, t, r, k):
        return sum(nd[i][k] * y[i, t, r] for i in act_at[t] if nd[i][k]) + sum(
            md[i][k] * s[i, t, r] for i in act_at[t] if md[i][k])

    m.h = pyo.Expression(m.T, m.R, m.K, rule=h_rule,
                         doc="h_k^r(t) = sum_{i in I_t} (n_{i,k} y_i^r(t) + m_{i,k} s_i^r(t)) (Eq. (3))")
    if price_form == "bigm":
        m.eq8c = pyo.Constraint(m.T, m.R, m.K, doc="(8c) first tier: x_k^r(t) >= a_k^r h - M u^1_{k,r}(t)",
                                rule=lambda m, t, r, k: x[t, r, k]
                                >= a[r][k] * m.h[t, r, k] - big_m[r][k] * u1[t, r, k])
        m.eq8d = pyo.Constraint(m.T, m.R, m.K,
                                doc="(8d) second tier: x_k^r(t) >= b_k^r h + e_k^r - M u^2_{k,r}(t)",
                                rule=lambda m, t, r, k: x[t, r, k] >= b[r][k] * m.h[t, r, k] + e[r][k]
                                - big_m[r][k] * u2[t, r, k])
    else:
        hb = {t: price_bound(inst, t).tolist() for t in window}
        m.h_a = pyo.Var(m.T, m.R, m.K, domain=pyo.NonNegativeReals,
                        doc="h_a: the part of h_k^r(t) priced at the first tier a (0 unless u^2 = 1)")
        m.h_b = pyo.Var(m.T, m.R, m.K, domain=pyo.NonNegativeReals,
                        doc="h_b: the part of h_k^r(t) priced at the discounted tier b (0 unless u^1 = 1)")
        m.eq7_split = pyo.Constraint(m.T, m.R, m.K, doc="(7) convex hull: h_k^r(t) = h_a + h_b",
                                     rule=lambda m, t, r, k: m.h_a[t, r, k] + m.h_b[t, r, k] == m.h[t, r, k])
        m.eq7_first = pyo.Constraint(m.T, m.R, m.K, doc="(7) convex hull: h_a <= H_k(t) u^2_{k,r}(t)",
                                     rule=lambda m, t, r, k: m.h_a[t, r, k] <= hb[t][k] * u2[t, r, k])
        m.eq7_second = pyo.Constraint(m.T, m.R, m.K, doc="(7) convex hull: h_b <= H_k(t) u^1_{k,r}(t)",
                                      rule=lambda m, t, r, k: m.h_b[t, r, k] <= hb[t][k] * u1[t, r, k])
        m.eq7_hull = pyo.Constraint(m.T, m.R, m.K, doc="(7) convex hull: x_k^r(t) >= a h_a + b h_b + e u^1",
                                    rule=lambda m, t, r, k: x[t, r, k] >= a[r][k] * m.h_a[t, r, k]
                                    + b[r][k] * m.h_b[t, r, k] + e[r][k] * u1[t, r, k])
    m.eq8e = pyo.Constraint(m.T, m.R, m.K, doc="(8e) one tier: u^1_{k,r}(t) + u^2_{k,r}(t) = 1",
                            rule=lambda m, t, r, k: u1[t, r, k] + u2[t, r, k] == 1)
    m.eq8f = pyo.Constraint(m.IT, doc="(8f) one PS: sum_r s_i^r(t) = 1",
                            rule=lambda m, i, t: sum(s[i, t, r] for r in dcs) == 1)
    m.eq8g = pyo.Constraint(m.IT, m.R, doc="(8g) deployment indicator: U v_i^r(t) >= y_i^r(t) + s_i^r(t)",
                            rule=lambda m, i, t, r: big_u * v[i, t, r] >= y[i, t, r] + s[i, t, r])

    active_set = set(pairs)

    def eq8h(m, i, t, r):
        if (i, t - 1) in active_set:
            return z[i, t, r] >= v[i, t, r] - v[i, t - 1, r]
        before = float(prev[i, r]) if t == first else 0.0
        return z[i, t, r] >= v[i, t, r] - before

    m.eq8h = pyo.Constraint(m.IT, m.R, rule=eq8h, doc="(8h) deployment cost: z_i^r(t) >= v_i^r(t) - v_i^r(t - 1)")
    m.eq8i = pyo.Constraint(m.IT, m.R, doc="(8i) connections from r: sum_{r'} g_i^{rr'}(t) = y_i^r(t)",
                            rule=lambda m, i, t, r: sum(g[i, t, r, r2] for r2 in dcs) == y[i, t, r])

    def eq8j(m, i, t, r2):
        if need[i, t] == 0:
            return pyo.Constraint.Skip  # 0 >= 0
        return sum(g[i, t, r, r2] for r in dcs) >= need[i, t] * s[i, t, r2]

    m.eq8j = pyo.Constraint(m.IT, m.R, rule=eq8j,
                            doc="(8j) connections to the PS: sum_r g_i^{rr'}(t) >= s_i^{r'}(t) N_i(t), "
                                "N_i(t) = ceil(sum_r D_i^r(t) / P_i)")

    q_by_t: dict[int, list] = {t: [] for t in window}
    for i, t, r, r2 in qidx:
        if d[r][r2]:
            q_by_t[t].append(d[r][r2] * q[i, t, r, r2])
    m.C1 = pyo.Expression(m.T, rule=lambda m, t: sum(q_by_t[t]),
                          doc="C1(t) = sum_{i, r, r'} d^{rr'} q_i^{rr'}(t): data transfer (Eq. (1))")
    m.C2 = pyo.Expression(m.T, rule=lambda m, t: sum(x[t, r, k] for r in dcs for k in res),
                          doc="C2*(t) = sum_{r, k} x_k^r(t): resource rent (Eqs. (3), (7))")
    m.C3 = pyo.Expression(m.T, rule=lambda m, t: sum(deploy[i] * z[i, t, r] for i in act_at[t] if deploy[i]
                                                     for r in dcs),
                          doc="C3(t) = sum_{i, r} c_i z_i^r(t): deployment (Eqs. (4), (5))")
    m.C4 = pyo.Expression(m.T, rule=lambda m, t: sum(traffic[i] * d[r][r2] * g[i, t, r, r2] for i in act_at[t]
                                                     if traffic[i] for r in dcs for r2 in dcs if d[r][r2]),
                          doc="C4(t) = sum_{i, r, r'} d^{rr'} B_i g_i^{rr'}(t): worker-PS communication (Eq. (6))")
    m.eq8 = pyo.Objective(expr=sum(m.C1[t] + m.C2[t] + m.C3[t] + m.C4[t] for t in window), sense=pyo.minimize,
                          doc=f"{kind}: minimize sum_t C1(t) + C2*(t) + C3(t) + C4(t)")
    log.info("built %s (%s price, slots %d..%d): %d job-slots, %d q, %d g in %.2f s", kind, price_form, window[0],
             window[-1], len(pairs), len(qidx), len(pairs) * n_dcs * n_dcs, time.perf_counter() - t0)
    return m


def _value(var) -> float:
    val = var.value
    return 0.0 if val is None else float(val)


def decisions_from_solution(model: pyo.ConcreteModel, *, tol: float = 1e-6) -> list[BrokerDecision]:
    """The solved model's decisions, one :class:`BrokerDecision` per slot of the model (in order).

    Over all jobs (zero rows for jobs not in ``I_t``), with ``z``.  From a MILP (``relaxed`` False)
    the integral fields (``y, s, g, v, z, u1, u2``) are rounded and come back as int64; one more
    than ``tol`` from an integer raises ``ValueError``.  From P_f every value is kept as it is.
    ``q`` and ``x`` are clipped at 0 (solver noise).
    """
    inst: BrokerInstance = model.instance
    n_jobs, n_dcs, n_res = inst.n_jobs, inst.n_dcs, inst.n_resources
    window = model.slots
    pos = {t: k for k, t in enumerate(window)}
    n = len(window)
    arr = {name: np.zeros((n, n_jobs, n_dcs)) for name in ("y", "s", "v", "z")}
    arr.update({name: np.zeros((n, n_jobs, n_dcs, n_dcs)) for name in ("q", "g")})
    arr.update({name: np.zeros((n, n_dcs, n_res)) for name in ("x", "u1", "u2")})
    for name in ("y", "s", "v", "z", "g", "q"):
        out = arr[name]
        for idx, var in getattr(model, name).items():
            i, t, *rest = idx
            out[(pos[t], i, *rest)] = _value(var)
    for name in ("x", "u1", "u2"):
        out = arr[name]
        for (t, r, k), var in getattr(model, name).items():
            out[pos[t], r, k] = _value(var)
    arr["q"] = np.maximum(arr["q"], 0.0)
    arr["x"] = np.maximum(arr["x"], 0.0)
    if not model.relaxed:
        for name in ("y", "s", "g", "v", "z", "u1", "u2"):
            frac = np.abs(arr[name] - np.round(arr[name]))
            if frac.size and frac.max() > tol:
                where = np.unravel_index(int(frac.argmax()), frac.shape)
                raise ValueError(f"{name}{[int(w) for w in where]} = {float(arr[name][where])!r} "
                                 f"(slot {window[where[0]]}): the "
                                 "solution is fractional; solve the MILP (or round P_f first: "
                                 "clusteropt.rounding)")
            arr[name] = np.round(arr[name]).astype(np.int64)
    return [BrokerDecision(**{name: arr[name][k] for name in arr}) for k in range(n)]


def schedule_from_solution(model: pyo.ConcreteModel, *, tol: float = 1e-6) -> BrokerSchedule:
    """:func:`decisions_from_solution` as a :class:`BrokerSchedule` (the model must start at slot 1)."""
    if model.slots[0] != 1:
        raise ValueError(f"the model starts at slot {model.slots[0]}; a BrokerSchedule starts at slot 1 "
                         "(use decisions_from_solution)")
    return BrokerSchedule(decisions_from_solution(model, tol=tol))



# ---------------------------------------------------------------------------------------------
# the regularized one-slot problem (10), CVXPY



# ---------------------------------------------------------------------------------------------
# registry


def _milp_builder(inst: BrokerInstance, relax: bool = False, slot: int | None = None,
                  price_form: str = "tight"):
    """Registry builder: (8) over the horizon, or the one-slot problem of ``slot`` (no earlier deployment)."""
    return build_broker_milp(inst, slots=slot, price_form=price_form, relax=relax)


def _lp_builder(inst: BrokerInstance, relax: bool = True, slot: int | None = None, price_form: str = "tight"):
    """Registry builder: P_f (9) (always relaxed), over the horizon or one slot."""
    return build_broker_milp(inst, slots=slot, price_form=price_form, relax=True)



def _milp_arrays(inst: BrokerInstance, relax: bool = False, slot: int | None = None, price_form: str = "tight"):
    """Registry array builder: the model of :func:`_milp_builder` as arrays
    (:func:`clusteropt.models.broker.matrix.build_broker_arrays`, tested equal to the compiled Pyomo model).
    """
    from clusteropt.models.broker.matrix import build_broker_arrays

    lp = build_broker_arrays(inst, slots=slot, price_form=price_form, relax=relax)
    size = {b.name: b.positions.size for b in lp.col_blocks}  # the price form decides which exist
    n_r, n_k = inst.n_dcs, inst.n_resources
    pairs, slots = size["y"] // n_r, size["x"] // (n_r * n_k)
    shapes = {**dict.fromkeys(("y", "s", "v", "z"), (pairs, n_r)), "g": (pairs, n_r, n_r),
              **dict.fromkeys(("x", "u1", "u2", "h_a", "h_b"), (slots, n_r, n_k))}
    lp.index_names.update({k: v for k, v in BROKER_INDEX_NAMES.items() if k in size})
    lp.shapes.update({k: v for k, v in shapes.items() if k in size})
    return lp


def _lp_arrays(inst: BrokerInstance, relax: bool = True, slot: int | None = None, price_form: str = "tight"):
    """Registry array builder: P_f (9) as arrays (always relaxed), as :func:`_lp_builder`."""
    return _milp_arrays(inst, relax=True, slot=slot, price_form=price_form)


_PER_JOB = ("IT.0", "IT.1", "R")
BROKER_INDEX_NAMES = {"y": _PER_JOB, "s": _PER_JOB, "v": _PER_JOB, "z": _PER_JOB, "g": (*_PER_JOB, "R"),
                      "q": ("Q.0", "Q.1", "Q.2", "Q.3"), **dict.fromkeys(("x", "u1", "u2", "h_a", "h_b"),
                                                                          ("T", "R", "K"))}
"""The index sets of (8)'s variables, as the Pyomo model names them (tested)."""


register_model(ModelSpec(
    "broker-milp", BrokerInstance.kind, _milp_builder, "pyomo",
    "paper 003 (8a)-(8k): the MILP P over all slots (--slot: one slot, nothing deployed before; --relax: P_f)",
    array_builder=_milp_arrays))
register_model(ModelSpec(
    "broker-lp", BrokerInstance.kind, _lp_builder, "pyomo",
    "paper 003 P_f (9): LP relaxation of (8), the offline fractional optimum (--slot: one slot)",
    array_builder=_lp_arrays))
