"""Paper 003 (mlBroker, Li et al.): the regularized one-slot problem (10), as a CVXPY problem.

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

References
----------
X. Li, R. Zhou, L. Jiao, C. Wu, Y. Deng, Z. Li, "Online Placement and Scaling of Geo-distributed
Machine Learning Jobs via Volume-discounting Brokerage" (paper 003): Sec. 4.1 (Eq. (10), Alg. 1).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from clusteropt.decisions.broker import BrokerDecision
from clusteropt.instances.broker import BrokerInstance
from clusteropt.models.broker.inputs import check_prev_v, check_price_form, price_bound
from clusteropt.models.cvxpy_model import CvxpyModel
from clusteropt.models.registry import ModelSpec, register_model

__all__ = ["DEFAULT_EPSILON", "TRANSFERS", "BrokerSlotModel", "build_broker_regularized",
           "decision_from_regularized"]

#: Default ``epsilon`` of (10).  The paper varies it in Fig. 5 without naming a default (our choice).
DEFAULT_EPSILON = 0.1

#: The forms of the data-transfer variables ``q`` of (10) (:func:`build_broker_regularized`).
TRANSFERS = ("all", "sources")


@dataclasses.dataclass
class BrokerSlotModel(CvxpyModel):
    """:class:`CvxpyModel` of problem (10) for one slot, plus what it was built from.

    Extra attributes: ``instance``, ``t``, ``jobs`` (``I_t``, the rows of every job variable),
    ``prev_v`` (I, R), ``epsilon``, ``sigma``, ``price_form``, ``transfers``; with ``transfers =
    "sources"``, ``sources`` = (rows into ``jobs``, DCs) of the rows of ``q``.
    """

    instance: BrokerInstance | None = None
    t: int = 0
    jobs: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    prev_v: np.ndarray | None = None
    epsilon: float = DEFAULT_EPSILON
    sigma: float = math.log(1.0 + 1.0 / DEFAULT_EPSILON)
    price_form: str = "tight"
    transfers: str = "all"
    sources: tuple[np.ndarray, np.ndarray] | None = None


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
    "y_bound": "y_i^r(t) <= N_i(t) (does not change the optimum; see clusteropt.models.broker.milp)",
    "objective": "(10) minimize C1(t) + C2*(t) + C4(t) + sum_i sum_r (c_i / sigma) "
                 "((v + eps) ln((v + eps) / (v(t-1) + eps)) - v)",
}


def build_broker_regularized(inst: BrokerInstance, t: int, prev_v=None, *, epsilon: float = DEFAULT_EPSILON,
                             sigma: float | None = None, price_form: str = "tight",
                             transfers: str = "all") -> BrokerSlotModel:
    """The regularized convex problem (10) of slot t (Sec. 4.1, Alg. 1 line 4) as a CVXPY problem.

    Objective (Eq. (10); ``sigma = ln(1 + 1 / epsilon)`` by default, Sec. 4.1)::

        C1(t) + C2*(t) + C4(t)
          + sum_{i in I_t} sum_r (c_i / sigma) ((v_i^r(t) + eps) ln((v_i^r(t) + eps) / (v_i^r(t-1) + eps))
                                               - v_i^r(t))

    written ``c_i / sigma * (cp.rel_entr(v + eps, v_prev + eps) - v)`` (``rel_entr(x, y) = x ln(x / y)``,
    exactly the paper's term; ``kl_div`` would add the constant ``v_prev`` the paper drops).
    Constraints: (8a)-(8g), (8i), (8j) at t and (9k) (every variable continuous and >= 0), plus
    ``y <= N_i(t)`` (``y_bound``; it does not change the optimum, see :mod:`clusteropt.models.broker.milp`).

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
    transfers : {"all", "sources"}
        ``"all"`` (default, the paper's variables): ``q_i^{rr'}(t)`` for every job and pair of DCs.
        ``"sources"``: only for the DCs ``r`` that hold job i's data (``D_i^r(t) > 0``), one row of
        ``q`` per such (i, r).  The same problem: for every other ``r`` (8b) reads
        ``sum_{r'} q_i^{rr'} = 0`` with ``q >= 0``, which fixes those ``q`` at 0, so the feasible
        sets, objectives and optima agree.  It has ``R`` times fewer transfer variables when each
        job's data sits in a few DCs, and Clarabel solves it where it fails on the full form
        (``python -m benchmarks.broker_dcs``: at 100 DCs the full form ends with a solver error on
        every setting, this one is optimal).

    Returns
    -------
    BrokerSlotModel
        ``variables``: ``y, s, v`` (J, R), ``q, g`` (J, R, R) (``q``: (S, R) with ``transfers =
        "sources"``, row k for job ``jobs[sources[0][k]]`` and DC ``sources[1][k]``), ``x, u1, u2``
        (R, K) (and ``h_a``, ``h_b`` for the tight form), rows ``jobs`` = ``I_t`` (J = ``len(I_t)``);
        ``constraints`` ``"8a"`` .. ``"8j"`` (no 8h), ``"y_bound"``, (tight) ``"7_split"``,
        ``"7_first"``, ``"7_second"``, ``"7_hull"``; the objective is ``problem.objective``.  Solve it with
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
    price_form = check_price_form(price_form)
    if transfers not in TRANSFERS:
        raise ValueError(f"transfers = {transfers!r}; expected one of {', '.join(TRANSFERS)}")
    prev = check_prev_v(inst, prev_v)
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
    sources = None
    if transfers == "sources":
        import scipy.sparse as sp  # here: the model module imports no SciPy

        rows, dcs = np.nonzero(data > 0)  # (job row, DC) of every q row: the data's DCs
        sources = (rows.astype(np.int64), dcs.astype(np.int64))
        n_src = sources[0].size
        q = cp.Variable((n_src, n_dcs), nonneg=True, name="q")
        # sum_r q_i^{rr'}: the rows of job i summed, (J, S) @ (S, R)
        per_job = sp.csr_array((np.ones(n_src), (sources[0], np.arange(n_src))), shape=(n_jobs, n_src))
        moved_to, moved_from = per_job @ q, cp.sum(q, axis=1)
        moved_cost = cp.sum(cp.multiply(q, d[sources[1], :]))
    else:
        q = cp.Variable((n_jobs, n_dcs, n_dcs), nonneg=True, name="q")
        moved_to, moved_from = cp.sum(q, axis=1), cp.sum(q, axis=2)
        moved_cost = cp.sum(cp.multiply(cp.sum(q, axis=0), d))
    g = cp.Variable((n_jobs, n_dcs, n_dcs), nonneg=True, name="g")
    x = cp.Variable((n_dcs, n_res), nonneg=True, name="x")
    u1 = cp.Variable((n_dcs, n_res), nonneg=True, name="u1")
    u2 = cp.Variable((n_dcs, n_res), nonneg=True, name="u2")
    variables = {"y": y, "s": s, "q": q, "g": g, "v": v, "x": x, "u1": u1, "u2": u2}

    h = y.T @ nd + s.T @ md  # (R, K): h_k^r(t), Eq. (3)
    cons: dict[str, cp.Constraint] = {
        "8a": cp.multiply(cap[:, None], y) >= moved_to,
        "8b": moved_from == (data if sources is None else data[sources]),
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

    c1 = moved_cost
    c2 = cp.sum(x)
    comm = inst.traffic[jobs][:, None, None] * d[None, :, :]
    c4 = cp.sum(cp.multiply(g, comm))
    weight = np.broadcast_to((inst.deploy_cost[jobs] / sigma)[:, None], shape_jr)
    vp = prev[jobs] + epsilon
    reg = cp.sum(cp.multiply(weight, cp.rel_entr(v + epsilon, vp) - v))
    problem = cp.Problem(cp.Minimize(c1 + c2 + c4 + reg), list(cons.values()))
    return BrokerSlotModel(problem, variables, cons, name=f"broker-regularized-t{t}", instance=inst, t=t,
                           jobs=jobs, prev_v=prev, epsilon=float(epsilon), sigma=float(sigma),
                           price_form=price_form, transfers=transfers, sources=sources, docs=_REGULARIZED_DOCS)


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
        value = np.maximum(np.asarray(var[name].value, dtype=float), 0.0)
        if name == "q" and model.sources is not None:  # rows of the data's DCs only: the rest are 0
            full[model.jobs[model.sources[0]], model.sources[1]] = value
        else:
            full[model.jobs] = value
        out[name] = full
    for name in ("x", "u1", "u2"):
        out[name] = np.maximum(np.asarray(var[name].value, dtype=float), 0.0)
    return BrokerDecision(**out)


def _regularized_builder(inst: BrokerInstance, relax: bool = True, slot: int | None = None,
                         epsilon: float = DEFAULT_EPSILON, price_form: str = "tight", transfers: str = "all"):
    """Registry builder: (10) of ``slot`` with ``v(t - 1) = 0`` (already continuous: ``relax`` is moot)."""
    if slot is None:
        raise ValueError("model 'broker-regularized' is the one-slot problem (10): give the slot t "
                         f"(CLI: --slot T, T in 1 .. {inst.horizon})")
    return build_broker_regularized(inst, int(slot), epsilon=epsilon, price_form=price_form, transfers=transfers)


register_model(ModelSpec(
    "broker-regularized", BrokerInstance.kind, _regularized_builder, "cvxpy",
    "paper 003 (10): one slot's regularized convex problem, relative-entropy deployment term (needs --slot; "
    "exponential cone: clarabel / scs, no LP export)"))
