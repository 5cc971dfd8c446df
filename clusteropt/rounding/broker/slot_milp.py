"""mlBroker's integral step made cost-aware: the slot's exact MILP beside A_round (the package's, not paper 003's).

:func:`slot_milp_round` turns A_fractional's slot-t solution into an integral decision like
:func:`~clusteropt.rounding.broker.placement.a_round`, and then tries to do better for the same state:

1. *Incumbent.*  A_round (Alg. 2, ``variant="package"``) of ``y~, s~`` against the run's integral
   ``v(t - 1)``: feasible for (8a)-(8k) by Lemma 1 (and the package's completion), cost ``c_A``.
2. *Slot MILP.*  Problem (8) restricted to slot t with ``v(t - 1)`` fixed
   (:func:`clusteropt.models.broker.milp.build_broker_milp` with ``slots=t, prev_v=...``, the convex-hull
   price rows of Eq. (7): the same integral optimum as the paper's big-M rows, a tighter LP),
   solved by HiGHS to the relative gap ``mip_gap`` (and, if given, within ``time_limit``).
   With ``fix="ps"`` or ``"integral"`` (*Fixing*) the MILP keeps what A_fractional already decided
   integrally: the PS of a job whose ``s~_i`` is a unit vector (within :data:`FIX_TOL`; its
   connections ``g_i^{rr'}`` to DCs that are neither r nor the PS are fixed to 0, which loses no
   optimum since ``d^{rr} = 0`` and only the PS column of (8j) asks for connections), and with
   ``"integral"`` also every integral ``y~_i^r``.  The MILP is then a neighbourhood of the
   fractional solution rather than the whole slot problem: smaller and faster, its optimum
   possibly above the slot's.
3. *Keep the cheaper* of the two (the MILP's with ``x = F(h)`` and the cheaper price tier in closed
   form, Eq. (7), as the other integral policies) by the slot's cost ``C1 + C2* + C3 + C4`` of (8)
   (:func:`clusteropt.decisions.broker.decision_cost`), the incumbent on ties or when the MILP ends
   without a solution.

The incumbent when the MILP has no solution.  Only a *limit* may end the MILP so: ``time_limit``
(or an iteration limit) ran out before HiGHS found a point.  Then A_round's decision is kept, and
that is a *fallback*: the slot was decided by mlBroker's rounding, not by this policy's MILP.
:attr:`SlotMilpInfo.fallback` says so, the online policy writes it into the slot's info
(``"fallback"``), and the command line and the experiments count it
(:func:`clusteropt.online.driver.fallback_summary`).  Any other end without a solution (a solver
error, "infeasible" for a model that A_round's decision satisfies) is a failure, never a
fallback: :func:`slot_milp_round` raises :class:`~clusteropt.solvers.NotOptimalError` naming the
slot, the solver and its status.

What survives of the paper's analysis.  The kept decision never costs more in slot t than A_round
would from the same ``v(t - 1)``; Theorem 4's per-slot bound on A_round's expected cost (from the same
state) therefore holds for the kept decision too.  It does *not* carry over to the whole run: the
kept ``v(t)`` differs from A_round's, so the next slot's deployment cost C3 starts from another
state, and the competitive ratio of Theorem 5 is not proved for this policy.  In exchange the
slot's cost is within ``mip_gap`` of the best integral decision for that state.

Why an exact slot problem: on the paper's setting (Sec. 6.1) A_fractional matches the lower bound
P_f to four digits and the whole loss is in the integral step (``benchmarks/broker_integral_step.py``
measures it per cost term), while the slot MILP stays small (one slot's active jobs, ``R^2`` g and q
per job) and solves in about a second with HiGHS.  Note that the MILP, like P_f and the offline
optimum, uses the paper's (8i)/(8j) as written: only ``N_i(t)`` connections must reach the PS
(:mod:`clusteropt.models.broker.milp`), where A_round and the baselines connect every worker to it.

References
----------
X. Li et al., "Online Placement and Scaling of Geo-distributed Machine Learning Jobs via
Volume-discounting Brokerage" (paper 003): problem (8) (Sec. 3.3), Alg. 2 (Sec. 5.1), Lemma 1,
Theorems 4-5 (Sec. 5.2).
"""

from __future__ import annotations

import dataclasses
import logging
import math
import time

import numpy as np

from clusteropt.decisions.broker import BrokerDecision
from clusteropt.instances.broker import BrokerInstance
from clusteropt.rounding.broker.placement import DEFAULT_TOL, BrokerRoundingInfo, a_round

__all__ = ["DEFAULT_SLOT_FIX", "DEFAULT_SLOT_GAP", "FIX_MODES", "FIX_TOL", "SlotMilpInfo", "check_slot_gap",
           "check_slot_time_limit", "slot_milp_round"]

log = logging.getLogger(__name__)

#: Default relative gap of the slot MILP (0.5%): our choice.  The recorded benchmark
#: (``python -m benchmarks.broker_integral_step``) compares the ``fix`` modes at this gap only.
DEFAULT_SLOT_GAP = 5e-3
#: What of A_fractional's solution the slot MILP keeps fixed (module docstring, "Fixing"):
#: ``"none"``, ``"ps"`` (the PS of every job whose ``s~`` is integral) or ``"integral"`` (that and
#: every integral ``y~`` entry).
FIX_MODES = ("none", "ps", "integral")
#: Distance from an integer within which an entry of ``y~`` / ``s~`` counts as decided by A_fractional.
FIX_TOL = 1e-5
#: Default ``fix`` of :class:`~clusteropt.online.broker.MlBroker`'s slot MILP, chosen by measurement
#: (``python -m benchmarks.broker_integral_step``).
DEFAULT_SLOT_FIX = "ps"


@dataclasses.dataclass(frozen=True)
class SlotMilpInfo:
    """What :func:`slot_milp_round` did in one slot.

    Attributes
    ----------
    chosen : {"milp", "a_round"}
        Which decision was kept.
    a_round_cost, milp_cost : float
        The slot's cost of (8) of A_round's decision and of the MILP's (NaN without a solution).
    milp_status : str
        HiGHS's termination (``OPTIMAL`` means within ``mip_gap``).
    milp_bound : float
        The MILP's proved lower bound on the slot's integral cost (NaN when not reported).
    build_seconds, solve_seconds, seconds : float
        Building the MILP, solving it, and the whole call (with A_round).
    a_round : BrokerRoundingInfo
        A_round's own info (candidates, drawn PS, repair).
    fallback : str
        Empty, or why A_round's decision was kept without a MILP solution to compare it with (a
        limit ran out first; module docstring).
    """

    chosen: str
    a_round_cost: float
    milp_cost: float
    milp_status: str
    milp_bound: float
    build_seconds: float
    solve_seconds: float
    seconds: float
    a_round: BrokerRoundingInfo
    fallback: str = ""

    @property
    def workers_added(self) -> int:
        """Workers the package's repair added to A_round's decision (0 when the MILP's was kept)."""
        return self.a_round.workers_added if self.chosen == "a_round" else 0

    def to_dict(self) -> dict:
        """The numbers as plain JSON (A_round's info left out): ``chosen``, ``a_round_cost``, ``cost``
        (the MILP's), ``status``, ``bound``, ``build_seconds``, ``solve_seconds``, ``seconds``,
        ``fallback``.
        """
        return {"chosen": self.chosen, "a_round_cost": self.a_round_cost, "cost": self.milp_cost,
                "status": self.milp_status, "bound": self.milp_bound, "build_seconds": self.build_seconds,
                "solve_seconds": self.solve_seconds, "seconds": self.seconds, "fallback": self.fallback}


def check_slot_gap(mip_gap: float) -> float:
    """The slot MILP's ``mip_gap`` as a float in [0, 1); ``ValueError`` otherwise."""
    if isinstance(mip_gap, bool) or not isinstance(mip_gap, int | float) or not 0.0 <= float(mip_gap) < 1.0:
        raise ValueError(f"mip_gap = {mip_gap!r}; expected a relative gap in [0, 1)")
    return float(mip_gap)


def check_slot_time_limit(time_limit: float | None) -> float | None:
    """The slot MILP's ``time_limit``: None or seconds > 0, as a float; ``ValueError`` otherwise."""
    if time_limit is None:
        return None
    if isinstance(time_limit, bool) or not isinstance(time_limit, int | float) or not float(time_limit) > 0:
        raise ValueError(f"time_limit = {time_limit!r}; expected seconds > 0 or None")
    return float(time_limit)


def _rows(inst: BrokerInstance, t: int, value) -> np.ndarray:
    """``value`` as (I, R) rows (given over all jobs or over the active ones)."""
    arr = np.asarray(value, dtype=float)
    if arr.shape[0] == inst.n_jobs:
        return arr
    out = np.zeros((inst.n_jobs, inst.n_dcs))
    out[inst.active(t)] = arr
    return out


def _fix(model, inst: BrokerInstance, t: int, y_frac, s_frac, fix: str) -> None:
    """Fix in the slot MILP what A_fractional decided integrally (module docstring, "Fixing")."""
    y, s = _rows(inst, t, y_frac), _rows(inst, t, s_frac)
    dcs = range(inst.n_dcs)
    for i in inst.active(t).tolist():
        top = int(np.argmax(s[i]))
        if s[i, top] >= 1.0 - FIX_TOL:
            for r in dcs:
                model.s[i, t, r].fix(1 if r == top else 0)
                for r2 in dcs:
                    if r2 not in (r, top):
                        model.g[i, t, r, r2].fix(0)
        if fix == "integral":
            for r in dcs:
                nearest = round(float(y[i, r]))
                if abs(y[i, r] - nearest) <= FIX_TOL:
                    model.y[i, t, r].fix(nearest)


def slot_milp_round(inst: BrokerInstance, t: int, y_frac, s_frac, prev_v=None, rng=None, *,
                    solver: str = "highs", builder: str = "auto", tol: float = DEFAULT_TOL,
                    return_info: bool = False, variant: str = "package", mip_gap: float = DEFAULT_SLOT_GAP,
                    time_limit: float | None = None, fix: str = "none"):
    """A_round's decision or the slot MILP's, whichever costs less in slot t (module docstring).

    Parameters
    ----------
    inst, t, y_frac, s_frac, prev_v, rng, solver, builder, tol
        As :func:`~clusteropt.rounding.broker.placement.a_round` (A_round makes the incumbent; ``solver`` is
        its LP solver for ``q``; the slot MILP always uses HiGHS).
    return_info : bool, keyword-only
        Also return a :class:`SlotMilpInfo`.
    variant : {"package"}, keyword-only
        Only the package's A_round completes the incumbent (the paper's may leave a job short).
    mip_gap : float, keyword-only
        Relative gap of the slot MILP, default :data:`DEFAULT_SLOT_GAP`.
    time_limit : float or None, keyword-only
        Seconds for the slot MILP (None: until ``mip_gap``; a limit makes the result depend on
        the machine's speed, so the default has none).
    fix : {"none", "ps", "integral"}, keyword-only
        What of ``y~, s~`` the MILP keeps (:data:`FIX_MODES`, module docstring).

    Returns
    -------
    BrokerDecision
        Integral, feasible for (8a)-(8k); with ``return_info``: ``(decision, info)``.

    Raises
    ------
    ValueError
        Bad input (as :func:`~clusteropt.rounding.broker.placement.a_round`), ``variant`` other than
        ``"package"``, a bad ``mip_gap``, ``time_limit`` or ``fix`` (all before any draw).
    NotOptimalError
        The MILP ended without a solution for another reason than a limit (a solver error): the
        message names the slot, the solver and its status (module docstring).

    Examples
    --------
    >>> from clusteropt.instances.broker import BrokerInstance
    >>> from clusteropt.decisions.broker import decision_cost
    >>> from clusteropt.verify.broker import check_broker_decision
    >>> inst = BrokerInstance(horizon=1, price_a=[[2.0], [3.0]], price_b=[[1.0], [2.0]], threshold=[[4.0], [4.0]],
    ...                       transfer_cost=[[0, 0.5], [0.5, 0]], arrival=[1], last_slot=[1],
    ...                       data=[[[20.0, 10.0]]], capacity=[15.0], worker_demand=[[1.0]], ps_demand=[[0.0]],
    ...                       traffic=[2.0], deploy_cost=[7.0], resources=("gpu",))
    >>> d, info = slot_milp_round(inst, 1, [[4 / 3, 2 / 3]], [[0.5, 0.5]], rng=0, return_info=True)
    >>> check_broker_decision(inst, d, 1).ok, info.chosen, d.y.tolist()
    (True, 'milp', [[2, 0]])
    >>> info.milp_cost < info.a_round_cost
    True
    """
    from clusteropt.decisions.broker import decision_cost
    from clusteropt.models.broker.milp import build_broker_milp, decisions_from_solution
    from clusteropt.solvers.direct import solve_highs_direct
    from clusteropt.solvers.result import NotOptimalError, Termination

    t0 = time.perf_counter()
    if variant != "package":
        raise ValueError(f"variant = {variant!r}; slot_milp_round completes A_round's incumbent with the "
                         "package's repair only (variant='package')")
    mip_gap, time_limit = check_slot_gap(mip_gap), check_slot_time_limit(time_limit)
    if fix not in FIX_MODES:
        raise ValueError(f"fix = {fix!r}; expected one of {', '.join(FIX_MODES)}")
    incumbent, rinfo = a_round(inst, t, y_frac, s_frac, prev_v, rng, solver=solver, builder=builder, tol=tol,
                               return_info=True, variant="package")
    prev = np.zeros((inst.n_jobs, inst.n_dcs)) if prev_v is None else np.rint(np.asarray(prev_v, dtype=float))
    a_cost = float(math.fsum(decision_cost(inst, incumbent, prev, t)))
    decision, chosen, m_cost, status, bound, fallback = incumbent, "a_round", math.nan, "NOT_RUN", math.nan, ""
    build_s = solve_s = 0.0
    if inst.active(t).size:
        tb = time.perf_counter()
        model = build_broker_milp(inst, slots=t, prev_v=prev, price_form="tight")
        if fix != "none":
            _fix(model, inst, t, y_frac, s_frac, fix)
        build_s = time.perf_counter() - tb
        ts = time.perf_counter()
        res = solve_highs_direct(model, time_limit=time_limit, mip_gap=mip_gap, threads=1,
                                 raise_on_nonoptimal=False)
        solve_s = time.perf_counter() - ts
        status = res.termination.name
        bound = float(res.bound) if res.bound is not None else math.nan
        if res.has_solution:
            # x = F(h) and the cheaper tier in closed form (a solution within the gap may pay x above F(h))
            found = decisions_from_solution(model)[0]
            candidate = BrokerDecision.from_placement(inst, found.y, found.s, found.q, found.g, v=found.v)
            m_cost = float(math.fsum(decision_cost(inst, candidate, prev, t)))
            if m_cost < a_cost:
                decision, chosen = candidate, "milp"
        elif res.termination in (Termination.TIME_LIMIT, Termination.ITERATION_LIMIT):
            limit = status.lower().replace("_", " ")
            fallback = f"A_round kept (the slot MILP hit its {limit} without a solution)"
            log.warning("slot %d: %s", t, fallback)
        else:
            raise NotOptimalError(f"slot {t}: the slot MILP (8) ended {status} without a solution "
                                  f"({res.solver}/{res.backend}: {res.raw.get('status')})", res)
    info = SlotMilpInfo(chosen=chosen, a_round_cost=a_cost, milp_cost=m_cost, milp_status=status,
                        milp_bound=bound, build_seconds=build_s, solve_seconds=solve_s,
                        seconds=time.perf_counter() - t0, a_round=rinfo, fallback=fallback)
    return (decision, info) if return_info else decision
