"""Paper 003 (mlBroker, Li et al.): the MILP (8), its LP relaxation P_f (9) and the regularized slot problem (10).

Notation (Sec. 3, Table 1; :mod:`clusteropt.instances.broker`): jobs i active in slot t (``I_t``),
data centers r, r', resources k; data ``D_i^r(t)``, worker capacity ``P_i``, per-worker / per-PS
resources ``n_{i,k}`` / ``m_{i,k}``, parameter traffic ``B_i``, deployment cost ``c_i``,
transfer cost ``d^{rr'}``, prices ``a_k^r > b_k^r``, threshold ``l_k^r``, ``e_k^r = (a - b) l``,
``N_i(t) = ceil(sum_r D_i^r(t) / P_i)``.  Every job variable exists only for the active (job, slot)
pairs; decisions are read back over all jobs (zero rows for inactive ones) as
:class:`~clusteropt.algorithms.broker.decision.BrokerDecision`.

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

:func:`build_broker_regularized` -- problem (10), one slot, CVXPY
    With the previous slot's ``v_i^r(t - 1)`` given (``prev_v``), minimize (Sec. 4.1, Eq. (10))::

        C1(t) + C2*(t) + C4(t)
          + sum_{i in I_t} sum_r (c_i / sigma) ((v_i^r(t) + eps) ln((v_i^r(t) + eps) / (v_i^r(t-1) + eps))
                                               - v_i^r(t)),      sigma = ln(1 + 1 / eps),

    subject to (8a)-(8g), (8i), (8j), (9k) at t (all variables continuous, >= 0).  The entropy
    term is ``cp.rel_entr(v + eps, v_prev + eps) - v`` exactly (``rel_entr(x, y) = x ln(x / y)``).
    ``cp.kl_div(v + eps, v_prev + eps) = (v + eps) ln(..) - v + v_prev`` is the regularized C3 of
    Sec. 4.1 before the paper drops the constant ``+ v_prev``: same minimizers, objective larger
    by ``sum (c_i / sigma) v_i^r(t - 1)``.  The price: see the function.

:func:`broker_offline_optimum` / :func:`broker_lp_bound`
    Solve (8) / (9) over the horizon and read the schedule back (:func:`schedule_from_solution`).

References
----------
X. Li, R. Zhou, L. Jiao, C. Wu, Y. Deng, Z. Li, "Online Placement and Scaling of Geo-distributed
Machine Learning Jobs via Volume-discounting Brokerage" (paper 003): Sec. 3.2-3.3 (Eqs. (1)-(8)),
Sec. 4.1 (Eqs. (9), (10), Alg. 1), Sec. 6.1.
"""

from __future__ import annotations

import dataclasses
import itertools
import logging
import math
import time
from collections.abc import Iterable

import numpy as np
import pyomo.environ as pyo

from clusteropt.algorithms.broker.decision import BrokerDecision, BrokerSchedule
from clusteropt.instances.broker import BrokerInstance
from clusteropt.models.cvxpy_model import CvxpyModel
from clusteropt.models.registry import ModelSpec, register_model
from clusteropt.models.size import check_model_size

__all__ = [
    "DEFAULT_EPSILON",
    "DEFAULT_PRICE_FORM",
    "PRICE_FORMS",
    "BrokerSlotModel",
    "broker_lp_bound",
    "broker_offline_optimum",
    "build_broker_milp",
    "build_broker_regularized",
    "decision_from_regularized",
    "decisions_from_solution",
    "price_bound",
    "schedule_from_solution",
]

log = logging.getLogger(__name__)

#: Formulations of the volume-discount price (7): the paper's big-M rows or the convex hull.
PRICE_FORMS = ("bigm", "tight")
#: The price form of every entry point unless given (models, policies, CLI): the convex hull, which
#: has the MILP's optimum and a tighter relaxation (module docstring); ``"bigm"`` is the paper's.
DEFAULT_PRICE_FORM = "tight"

#: Default ``epsilon`` of (10).  The paper varies it in Fig. 5 without naming a default (our choice).
DEFAULT_EPSILON = 0.1


def _slots(inst: BrokerInstance, slots) -> tuple[int, ...]:
    """``None`` -> ``1 .. T``; an int -> that slot; an iterable -> consecutive increasing slots."""
    if slots is None:
        return tuple(range(1, inst.horizon + 1))
    if isinstance(slots, int | np.integer) and not isinstance(slots, bool):
        out: tuple[int, ...] = (int(slots),)
    elif isinstance(slots, Iterable) and not isinstance(slots, str):
        out = tuple(int(t) for t in slots)
    else:
        raise ValueError(f"slots = {slots!r}; expected None, a slot or consecutive slots in "
                         f"1 .. T = {inst.horizon}")
    if not out:
        raise ValueError("slots is empty; expected at least one slot")
    bad = [t for t in out if not 1 <= t <= inst.horizon]
    if bad:
        raise ValueError(f"slot {bad[0]}; expected slots in 1 .. T = {inst.horizon}")
    if any(b != a + 1 for a, b in itertools.pairwise(out)):
        raise ValueError(f"slots = {list(out)}; expected consecutive increasing slots (e.g. range(3, 7))")
    return out


def _prev_v(inst: BrokerInstance, prev_v) -> np.ndarray:
    if prev_v is None:
        return np.zeros((inst.n_jobs, inst.n_dcs))
    prev = np.asarray(prev_v, dtype=float)
    if prev.shape != (inst.n_jobs, inst.n_dcs):
        raise ValueError(f"prev_v has shape {prev.shape}; expected (I, R) = ({inst.n_jobs}, {inst.n_dcs})")
    if not np.isfinite(prev).all() or (prev < 0).any():
        raise ValueError("prev_v must be finite and >= 0 (v_i^r(t - 1) of the previous slot)")
    return prev


def _price_form(price_form: str) -> str:
    if price_form not in PRICE_FORMS:
        raise ValueError(f"price_form = {price_form!r}; expected one of {', '.join(PRICE_FORMS)}")
    return price_form


def price_bound(inst: BrokerInstance, t: int) -> np.ndarray:
    """``H_k(t) = sum_{i in I_t} (n_{i,k} N_i(t) + m_{i,k})``, (K,): a bound of ``h_k^r(t)`` when
    ``y_i^r(t) <= N_i(t)`` (the bounds both builders put on ``y``; module docstring).

    >>> from clusteropt.instances.broker import broker_preset
    >>> inst = broker_preset("tiny", seed=0)
    >>> bool((price_bound(inst, 2) >= 0).all()), price_bound(inst, 2).shape
    (True, (4,))
    """
    act = inst.active(t)
    n_w = inst.required_workers(t)[act].astype(float)
    return (inst.worker_demand[act] * n_w[:, None] + inst.ps_demand[act]).sum(axis=0)


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
    window = _slots(inst, slots)
    prev = _prev_v(inst, prev_v)
    price_form = _price_form(price_form)
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


def _solve_linear(model, solver: str, time_limit, mip_gap):
    """HiGHS through its matrix (:func:`clusteropt.solvers.direct.solve_highs_direct`), else :func:`solve`."""
    if solver == "highs":
        from clusteropt.solvers.direct import solve_highs_direct

        return solve_highs_direct(model, time_limit=time_limit, mip_gap=mip_gap, raise_on_nonoptimal=False)
    from clusteropt.solvers import solve  # here: clusteropt.solvers imports the models

    return solve(model, solver, time_limit=time_limit, mip_gap=mip_gap, raise_on_nonoptimal=False)


def _use_arrays(solver: str, builder: str) -> bool:
    if builder not in ("auto", "matrix", "pyomo"):
        raise ValueError(f"builder = {builder!r}; expected 'auto', 'matrix' or 'pyomo'")
    if builder == "matrix" and solver != "highs":
        raise ValueError(f"builder = 'matrix' hands arrays to HiGHS; solver = {solver!r} needs builder 'pyomo'")
    return builder == "matrix" or (builder == "auto" and solver == "highs")


def broker_offline_optimum(inst: BrokerInstance, *, time_limit: float | None = None, solver: str = "highs",
                           price_form: str = "tight", mip_gap: float | None = 0.0, builder: str = "auto"):
    """Solve the offline MILP (8) over slots ``1 .. T``: ``(value, schedule, result)``.

    ``value`` is the objective (8) of the solution found, ``schedule`` its integral
    :class:`BrokerSchedule` (``check_broker_schedule`` recomputes the same total cost), ``result``
    the :class:`~clusteropt.solvers.SolveResult`.  ``price_form="tight"`` (default) has the same
    optimum as the paper's big-M form and a stronger LP relaxation (module docstring).  HiGHS gets
    the model through its matrix.  ``mip_gap`` defaults to 0 (an optimum to compare online
    policies with).  A solve stopped by ``time_limit`` with an incumbent returns it with a
    warning: check ``result.is_optimal``; ``result.bound`` is then the proven lower bound.
    ``builder``: ``"matrix"`` builds (8) as arrays (:mod:`clusteropt.models.broker_matrix`, the
    same model, tested row by row), ``"pyomo"`` builds this module's Pyomo model, ``"auto"``
    (default) the arrays with HiGHS.

    Raises
    ------
    RuntimeError
        The solver stopped without any solution.

    Examples
    --------
    >>> from clusteropt.instances.broker import broker_preset
    >>> from clusteropt.verify import check_broker_schedule
    >>> inst = broker_preset("tiny", seed=1)
    >>> value, schedule, result = broker_offline_optimum(inst)
    >>> chk = check_broker_schedule(inst, schedule)
    >>> result.termination.name, chk.ok, abs(chk.total_cost - value) < 1e-6 * max(1.0, value)
    ('OPTIMAL', True, True)
    """
    if _use_arrays(solver, builder):
        from clusteropt.models.broker_matrix import build_broker_arrays, schedule_from_arrays, solve_broker_arrays

        lp = build_broker_arrays(inst, price_form=price_form)
        res, x = solve_broker_arrays(lp, time_limit=time_limit, mip_gap=mip_gap)
    else:
        model = build_broker_milp(inst, price_form=price_form)
        res = _solve_linear(model, solver, time_limit, mip_gap)
    if not res.has_solution:
        raise RuntimeError(f"the broker MILP (8) stopped with {res.termination.name} and no solution "
                           f"({res.raw.get('status')}); raise time_limit")
    if not res.is_optimal:
        log.warning("the broker MILP (8) stopped with %s (objective %s, bound %s, gap %s): returning the "
                    "incumbent", res.termination.name, res.objective, res.bound, res.gap)
    assert res.objective is not None  # it has a solution
    schedule = schedule_from_arrays(lp, x) if res.backend == "matrix" else schedule_from_solution(model)
    return float(res.objective), schedule, res


def broker_lp_bound(inst: BrokerInstance, *, time_limit: float | None = None, solver: str = "highs",
                    price_form: str = "tight", builder: str = "auto"):
    """The offline fractional optimum: P_f (9) over slots ``1 .. T``, ``(value, result)``.

    ``price_form="tight"`` (default) is the relaxation of the convex-hull form: a lower bound of
    (8) at least as high as the paper's; ``"bigm"`` is the paper's P_f, the denominator of Fig. 5's
    ratio with the paper's rows (module docstring).  ``result.values`` holds the fractional
    solution per variable, in the Pyomo model's index order on either route (``builder`` as in
    :func:`broker_offline_optimum`).

    Raises
    ------
    RuntimeError
        The LP was not solved to optimality.
    """
    if _use_arrays(solver, builder):
        from clusteropt.models.broker_matrix import build_broker_arrays, solve_broker_arrays

        res, _ = solve_broker_arrays(build_broker_arrays(inst, price_form=price_form, relax=True),
                                     time_limit=time_limit)
    else:
        res = _solve_linear(build_broker_milp(inst, price_form=price_form, relax=True), solver, time_limit, None)
    if not res.is_optimal:
        raise RuntimeError(f"P_f (9) stopped with {res.termination.name} ({res.raw.get('status')})")
    assert res.objective is not None  # optimal
    return float(res.objective), res


# ---------------------------------------------------------------------------------------------
# the regularized one-slot problem (10), CVXPY


@dataclasses.dataclass
class BrokerSlotModel(CvxpyModel):
    """:class:`CvxpyModel` of problem (10) for one slot, plus what it was built from.

    Extra attributes: ``instance``, ``t``, ``jobs`` (``I_t``, the rows of every job variable),
    ``prev_v`` (I, R), ``epsilon``, ``sigma``, ``price_form``.
    """

    instance: BrokerInstance | None = None
    t: int = 0
    jobs: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    prev_v: np.ndarray | None = None
    epsilon: float = DEFAULT_EPSILON
    sigma: float = math.log(1.0 + 1.0 / DEFAULT_EPSILON)
    price_form: str = "tight"


#: The paper's symbol and equation of every component of :func:`build_broker_regularized` (rows of the
#: job variables are the slot's active jobs ``I_t``, in order; (9k): every variable continuous, >= 0).
_REGULARIZED_DOCS = {
    "y": "y_i^r(t): workers of job i in DC r (row: i in I_t)",
    "s": "s_i^r(t): job i's PS is in DC r (relaxed to [0, 1] by (9k))",
    "v": "v_i^r(t): job i deployed in DC r (relaxed; the entropic term of (10) acts on it)",
    "q": "q_i^{rr'}(t): data of job i moved from r to r'",
    "g": "g_i^{rr'}(t): worker-PS connections from workers in r to the PS in r'",
    "x": "x_k^r(t): price paid for resource k in DC r (C2*, Eq. (7))",
    "u1": "u^1_{k,r}(t): discounted segment b h + e (relaxed)",
    "u2": "u^2_{k,r}(t): first-tier segment a h (relaxed)",
    "h_a": "h_a: the part of h_k^r(t) priced at the first tier a (tight form)",
    "h_b": "h_b: the part of h_k^r(t) priced at the discounted tier b (tight form)",
    "8a": "(8a) worker capacity: P_i y_i^{r'}(t) >= sum_r q_i^{rr'}(t)",
    "8b": "(8b) data conservation: sum_{r'} q_i^{rr'}(t) = D_i^r(t)",
    "8c": "(8c) first tier: x_k^r(t) >= a_k^r h - M u^1_{k,r}(t)",
    "8d": "(8d) second tier: x_k^r(t) >= b_k^r h + e_k^r - M u^2_{k,r}(t)",
    "7_split": "(7) convex hull: h_k^r(t) = h_a + h_b",
    "7_first": "(7) convex hull: h_a <= H_k(t) u^2_{k,r}(t)",
    "7_second": "(7) convex hull: h_b <= H_k(t) u^1_{k,r}(t)",
    "7_hull": "(7) convex hull: x_k^r(t) >= a h_a + b h_b + e u^1",
    "8e": "(8e) one tier: u^1_{k,r}(t) + u^2_{k,r}(t) = 1",
    "8f": "(8f) one PS: sum_r s_i^r(t) = 1",
    "8g": "(8g) deployment indicator: U v_i^r(t) >= y_i^r(t) + s_i^r(t)",
    "8i": "(8i) connections from r: sum_{r'} g_i^{rr'}(t) = y_i^r(t)",
    "8j": "(8j) connections to the PS: sum_r g_i^{rr'}(t) >= s_i^{r'}(t) N_i(t)",
    "y_bound": "y_i^r(t) <= N_i(t) (does not change the optimum; module docstring)",
    "objective": "(10) minimize C1(t) + C2*(t) + C4(t) + sum_i sum_r (c_i / sigma) "
                 "((v + eps) ln((v + eps) / (v(t-1) + eps)) - v)",
}


def build_broker_regularized(inst: BrokerInstance, t: int, prev_v=None, *, epsilon: float = DEFAULT_EPSILON,
                             sigma: float | None = None, price_form: str = "tight") -> BrokerSlotModel:
    """The regularized convex problem (10) of slot t (Sec. 4.1, Alg. 1 line 4) as a CVXPY problem.

    Objective (Eq. (10); ``sigma = ln(1 + 1 / epsilon)`` by default, Sec. 4.1)::

        C1(t) + C2*(t) + C4(t)
          + sum_{i in I_t} sum_r (c_i / sigma) ((v_i^r(t) + eps) ln((v_i^r(t) + eps) / (v_i^r(t-1) + eps))
                                               - v_i^r(t))

    written ``c_i / sigma * (cp.rel_entr(v + eps, v_prev + eps) - v)`` (``rel_entr(x, y) = x ln(x / y)``,
    exactly the paper's term; ``kl_div`` would add the constant ``v_prev`` the paper drops).
    Constraints: (8a)-(8g), (8i), (8j) at t and (9k) (every variable continuous and >= 0), plus
    ``y <= N_i(t)`` (``y_bound``; it does not change the optimum, see the module docstring).

    The price.  ``min(a h, b h + e)`` is concave, so it cannot enter a convex objective as it is.
    ``price_form="bigm"`` is the paper's choice: keep ``x`` and the rows (8c)-(8e) with
    ``u^1, u^2`` relaxed to ``u >= 0``, ``u^1 + u^2 = 1``.  What that implies: for a given ``h`` the
    cheapest feasible ``x`` is ``max(0, ((a + b) h + e - M) / 2)`` (the two rows cross at
    ``u^1 = (a h - b h - e + M) / (2 M)``), so with ``M = inst.big_m`` (the bound of
    ``(a - b)|h - l|`` over all jobs) the resource price is 0 for every ``h`` up to
    ``(M - e) / (a + b)``: problem (10) sees almost none of C2, and the fractional decisions
    follow C1, C4 and the regularized deployment cost.  ``price_form="tight"`` (default, as in
    every entry point) uses the convex hull rows instead (``h = h_a + h_b``, ``h_a <= H u^2``, ``h_b <= H u^1``,
    ``x >= a h_a + b h_b + e u^1``, ``H = price_bound(inst, t)``), whose cheapest ``x`` is the chord
    ``h F(H) / H`` of the price on ``[0, H]``: a convex under-estimator that keeps the prices.

    Parameters
    ----------
    inst : BrokerInstance
    t : int
        The slot.
    prev_v : array (I, R), optional
        ``v_i^r(t - 1)`` (fractional, from the previous slot's solution; default 0).
    epsilon : float
        ``epsilon > 0`` of (10) (default :data:`DEFAULT_EPSILON`).
    sigma : float, optional
        The scale ``sigma > 0``; default ``ln(1 + 1 / epsilon)`` (the paper's definition).
    price_form : {"tight", "bigm"}
        The convex hull (default) or the paper's big-M rows (below).

    Returns
    -------
    BrokerSlotModel
        ``variables``: ``y, s, v`` (J, R), ``q, g`` (J, R, R), ``x, u1, u2`` (R, K) (and ``h_a``,
        ``h_b`` for the tight form), rows ``jobs`` = ``I_t`` (J = ``len(I_t)``); ``constraints``
        ``"8a"`` .. ``"8j"`` (no 8h), ``"y_bound"``, (tight) ``"7_split"``, ``"7_first"``, ``"7_second"``,
        ``"7_hull"``; the objective is ``problem.objective``.  Solve it with
        ``clusteropt.solvers.solve(model, "clarabel")`` (default for exponential cones) or ``"scs"``.

    Examples
    --------
    >>> from clusteropt.instances.broker import broker_preset
    >>> from clusteropt.solvers import solve
    >>> inst = broker_preset("tiny", seed=0)
    >>> model = build_broker_regularized(inst, 2)
    >>> res = solve(model, "clarabel")
    >>> res.termination.name, res.values["y"].shape == (len(inst.active(2)), inst.n_dcs)
    ('OPTIMAL', True)
    """
    import cvxpy as cp  # here: importing the models needs no CVXPY

    if isinstance(t, bool) or not isinstance(t, int | np.integer) or not 1 <= t <= inst.horizon:
        raise ValueError(f"t = {t!r}; expected a slot in 1 .. T = {inst.horizon}")
    t = int(t)
    if not (math.isfinite(epsilon) and epsilon > 0):
        raise ValueError(f"epsilon = {epsilon!r}; expected > 0")
    if sigma is None:
        sigma = math.log(1.0 + 1.0 / epsilon)
    if not (math.isfinite(sigma) and sigma > 0):
        raise ValueError(f"sigma = {sigma!r}; expected > 0")
    price_form = _price_form(price_form)
    prev = _prev_v(inst, prev_v)
    jobs = inst.active(t)
    n_jobs, n_dcs, n_res = len(jobs), inst.n_dcs, inst.n_resources
    data = inst.slot_data(t)[jobs]  # (J, R)
    cap = inst.capacity[jobs]
    need = inst.required_workers(t)[jobs].astype(float)
    nd, md = inst.worker_demand[jobs], inst.ps_demand[jobs]  # (J, K)
    d = inst.transfer_cost
    a, b, e, big_m = inst.price_a, inst.price_b, inst.price_e, inst.big_m

    shape_jr = (n_jobs, n_dcs)
    y = cp.Variable(shape_jr, nonneg=True, name="y")
    s = cp.Variable(shape_jr, nonneg=True, name="s")
    v = cp.Variable(shape_jr, nonneg=True, name="v")
    q = cp.Variable((n_jobs, n_dcs, n_dcs), nonneg=True, name="q")
    g = cp.Variable((n_jobs, n_dcs, n_dcs), nonneg=True, name="g")
    x = cp.Variable((n_dcs, n_res), nonneg=True, name="x")
    u1 = cp.Variable((n_dcs, n_res), nonneg=True, name="u1")
    u2 = cp.Variable((n_dcs, n_res), nonneg=True, name="u2")
    variables = {"y": y, "s": s, "q": q, "g": g, "v": v, "x": x, "u1": u1, "u2": u2}

    h = y.T @ nd + s.T @ md  # (R, K): h_k^r(t), Eq. (3)
    cons: dict[str, cp.Constraint] = {
        "8a": cp.multiply(cap[:, None], y) >= cp.sum(q, axis=1),
        "8b": cp.sum(q, axis=2) == data,
    }
    if price_form == "bigm":
        cons["8c"] = x >= cp.multiply(a, h) - cp.multiply(big_m, u1)
        cons["8d"] = x >= cp.multiply(b, h) + e - cp.multiply(big_m, u2)
    else:
        hb = np.broadcast_to(price_bound(inst, t)[None, :], (n_dcs, n_res))
        h_a = cp.Variable((n_dcs, n_res), nonneg=True, name="h_a")
        h_b = cp.Variable((n_dcs, n_res), nonneg=True, name="h_b")
        variables.update(h_a=h_a, h_b=h_b)
        cons["7_split"] = h_a + h_b == h
        cons["7_first"] = h_a <= cp.multiply(hb, u2)
        cons["7_second"] = h_b <= cp.multiply(hb, u1)
        cons["7_hull"] = x >= cp.multiply(a, h_a) + cp.multiply(b, h_b) + cp.multiply(e, u1)
    cons["8e"] = u1 + u2 == 1
    cons["8f"] = cp.sum(s, axis=1) == 1
    cons["8g"] = float(inst.big_u) * v >= y + s
    cons["8i"] = cp.sum(g, axis=2) == y
    cons["8j"] = cp.sum(g, axis=1) >= cp.multiply(need[:, None], s)
    cons["y_bound"] = y <= np.broadcast_to(need[:, None], shape_jr)

    c1 = cp.sum(cp.multiply(cp.sum(q, axis=0), d))
    c2 = cp.sum(x)
    comm = inst.traffic[jobs][:, None, None] * d[None, :, :]
    c4 = cp.sum(cp.multiply(g, comm))
    weight = np.broadcast_to((inst.deploy_cost[jobs] / sigma)[:, None], shape_jr)
    vp = prev[jobs] + epsilon
    reg = cp.sum(cp.multiply(weight, cp.rel_entr(v + epsilon, vp) - v))
    problem = cp.Problem(cp.Minimize(c1 + c2 + c4 + reg), list(cons.values()))
    return BrokerSlotModel(problem, variables, cons, name=f"broker-regularized-t{t}", instance=inst, t=t,
                           jobs=jobs, prev_v=prev, epsilon=float(epsilon), sigma=float(sigma),
                           price_form=price_form, docs=_REGULARIZED_DOCS)


def decision_from_regularized(model: BrokerSlotModel) -> BrokerDecision:
    """The solved (10) as a fractional :class:`BrokerDecision` over all jobs (``z`` not set).

    Values are kept as they are (clipped at 0: interior-point noise); round them with
    :mod:`clusteropt.rounding` before using them as a schedule.
    """
    inst = model.instance
    assert inst is not None  # build_broker_regularized records the instance
    var = model.variables
    if var["y"].value is None:
        raise ValueError(f"{model.name} has no solution; solve it first (clusteropt.solvers.solve)")
    dec = BrokerDecision.empty(inst.n_jobs, inst.n_dcs, inst.n_resources)
    out = {}
    for name in ("y", "s", "v", "q", "g"):
        full = np.zeros(getattr(dec, name).shape)
        full[model.jobs] = np.maximum(np.asarray(var[name].value, dtype=float), 0.0)
        out[name] = full
    for name in ("x", "u1", "u2"):
        out[name] = np.maximum(np.asarray(var[name].value, dtype=float), 0.0)
    return BrokerDecision(**out)


# ---------------------------------------------------------------------------------------------
# registry


def _milp_builder(inst: BrokerInstance, relax: bool = False, slot: int | None = None,
                  price_form: str = "tight"):
    """Registry builder: (8) over the horizon, or the one-slot problem of ``slot`` (no earlier deployment)."""
    return build_broker_milp(inst, slots=slot, price_form=price_form, relax=relax)


def _lp_builder(inst: BrokerInstance, relax: bool = True, slot: int | None = None, price_form: str = "tight"):
    """Registry builder: P_f (9) (always relaxed), over the horizon or one slot."""
    return build_broker_milp(inst, slots=slot, price_form=price_form, relax=True)


def _regularized_builder(inst: BrokerInstance, relax: bool = True, slot: int | None = None,
                         epsilon: float = DEFAULT_EPSILON, price_form: str = "tight"):
    """Registry builder: (10) of ``slot`` with ``v(t - 1) = 0`` (already continuous: ``relax`` is moot)."""
    if slot is None:
        raise ValueError("model 'broker-regularized' is the one-slot problem (10): give the slot t "
                         f"(CLI: --slot T, T in 1 .. {inst.horizon})")
    return build_broker_regularized(inst, int(slot), epsilon=epsilon, price_form=price_form)


register_model(ModelSpec(
    "broker-milp", BrokerInstance.kind, _milp_builder, "pyomo",
    "paper 003 (8a)-(8k): the MILP P over all slots (--slot: one slot, nothing deployed before; --relax: P_f)"))
register_model(ModelSpec(
    "broker-lp", BrokerInstance.kind, _lp_builder, "pyomo",
    "paper 003 P_f (9): LP relaxation of (8), the offline fractional optimum (--slot: one slot)"))
register_model(ModelSpec(
    "broker-regularized", BrokerInstance.kind, _regularized_builder, "cvxpy",
    "paper 003 (10): one slot's regularized convex problem, relative-entropy deployment term (needs --slot; "
    "exponential cone: clarabel / scs, no LP export)"))
