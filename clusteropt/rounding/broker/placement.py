"""mlBroker (paper 003) rounding: ``A_round`` (Sec. 5, Alg. 2 with Alg. 3) and the IR / GR baselines (Sec. 6.2).

Each function turns one slot's fractional placement, ``y~_i^r(t)`` workers and the PS distribution
``s~_i^r(t)`` (from the relaxed one-shot problem (10)), into an integral
:class:`~clusteropt.decisions.broker.BrokerDecision` that satisfies (8a)-(8k):

:func:`a_round` (Alg. 2)
    Lines 1-3: ``Round1_y`` (Alg. 3) once per resource k, i.e. for every DC r a weighted pairwise
    dependent rounding of ``y~_i^r`` over the active jobs with weights ``n_{i,k}``
    (:func:`round1_y`).  Line 4: ``Round2_y``, for every job a rounding over the DCs with equal
    weights ``P_i`` (:func:`round2_y`).  Line 5: ``ybar_i^r`` = the largest of the K + 1 rounded
    values.  Lines 6-9: the PS of job i goes to DC ``r_i`` drawn from ``s~_i`` (:func:`sample_ps`).
    Line 10 (Sec. 5.1, Step 3): the rest, see *Completion* below.
:func:`independent_round` (IR, Sec. 6.2)
    "*Independent Rounding (IR)*, which rounds each ``y_i^r(t)`` to the nearest integer (e.g., 2.6
    to 3, 2.1 to 2) and rounds ``s_i^r(t)`` in the same way as in ``A_round``".  Despite its name
    the worker rounding is deterministic (nearest integer, halves up); only the PS is drawn.
:func:`greedy_round` (GR, Sec. 6.2)
    "*Greedy Rounding (GR)*, which rounds up ``y_i^r(t)`` (e.g., 2.2 to 3) and assigns
    ``s_i^{r*}(t) = 1, r* = arg max_{r in [R]} s_i^r(t)``".  Deterministic (ties: the lowest DC).

**Completion** (the same for all three, so that they compare; Alg. 2 line 10, Step 3 of Sec. 5.1):

1. *Feasibility fix.*  (8a)+(8b) have a solution ``q`` iff ``P_i sum_r ybar_i^r >= sum_r D_i^r``,
   i.e. (``ybar`` integral) iff job i has at least ``N_i = ceil(sum_r D_i^r / P_i)`` workers, which
   with ``g = ybar (x) s`` is also (8j).  For ``A_round`` this holds by construction when ``y~``
   satisfies the relaxed (8a)/(8b) (``sum_r P_i y~_i^r >= sum_r D_i^r``): ``Round2_y`` keeps
   ``sum_r y~_i^r`` and rounds the last fraction up, so its candidate alone has
   ``ceil(sum_r y~_i^r) >= N_i`` workers, and line 5's maximum only adds (the proof of Lemma 1:
   "all the round-down ... can be compensated with round-up ones").  It can fail only when the
   input breaks the relaxed constraint, or within the noise tolerance ``tol`` (integral snapping
   can lower ``sum_r y~_i^r`` by up to ``R * tol``, which matters only if ``sum_r D_i^r / P_i`` lies
   within that of an integer from above).  IR can fail often (2.4 + 2.4 -> 4 < ceil(4.8)).  A job
   short of ``N_i`` gets the missing workers one at a time, each in the DC with the least
   estimated marginal cost: the resource cost ``sum_k F_k^r(h + n_{i,k}) - F_k^r(h)`` at the
   current amounts, plus ``c_i`` if job i is not deployed in r now nor in ``t - 1``, plus
   ``d^{r r_i} B_i`` (C4), plus ``P_i min_{r0: D_i^{r0} > 0} d^{r0 r}`` (an estimate of C1 for
   the data the worker takes); ties go to the lowest DC.  ``info.added_workers`` counts them.
   This step is the package's: Alg. 2 has none.  ``variant="paper"`` runs the roundings exactly as
   the paper writes them, without it: a job left short of ``N_i`` then has no feasible ``q`` at
   line 10, and the call raises :class:`RoundingShortError` naming the job (measured: on the
   experiments' instances ``A_round``'s fix never fired, so both variants return the same
   decisions there; README, mlBroker).
2. ``q``: the transportation LP minimizing C1 (Eq. (1)) under (8a), (8b), all jobs at once
   (the jobs do not interact: one block per job), over the arcs ``r -> r'`` with ``D_i^r > 0``
   and ``ybar_i^{r'} > 0`` (the other ``q`` are 0 in every solution).  The capacity rows use
   ``P_i ybar_i^{r'} (1 + 1e-9)`` so that a job whose ``sum D / P`` lies within the 1e-9
   ``ceil`` slack of :meth:`~clusteropt.instances.broker.BrokerInstance.required_workers` stays
   feasible.  Solved with HiGHS through its matrix (``builder="matrix"``, the default for
   ``solver="highs"``) or as the Pyomo model of :func:`build_transport_model` through
   :func:`clusteropt.solvers.solve` (``builder="pyomo"``, any LP solver of the registry).  A
   non-optimal LP raises :class:`~clusteropt.solvers.NotOptimalError`.
3. ``x, u^1, u^2`` in closed form: ``x_k^r = min(a h, b h + e)``, ``u^1 = 1`` exactly where the
   discounted segment is strictly cheaper (Step 3 of Sec. 5.1); ``v`` the smallest binary
   satisfying (8g) (``v = 1`` iff ``y + s > 0``); ``g_i^{rr'} = ybar_i^r s_i^{r'}`` ((8i), (8j));
   ``z = max(v - v(t - 1), 0)`` ((8h), (4)).

Measured (paper preset, R = 15, K = 4, slot 19 with 20 active jobs, the workers ``A_round``
returned there, 765 arcs; medians of 10): one ``scipy.optimize.linprog(method="highs")`` per
job 34 ms per slot (about 1.7 ms per call, mostly overhead), the stacked LP through ``run_highs``
(matrix) 2.1 ms, the same LP as the Pyomo model through :func:`clusteropt.solvers.solve` 37 ms;
hence the stacked matrix route.  With ``N_i`` workers scattered at random over the DCs: 80 ms
per job, 10 ms stacked through one ``linprog``, 7 ms matrix, 430 ms for a Pyomo model over all
``R^2`` pairs; HiGHS's default (dual simplex, presolve) was within 1 ms of primal simplex or no
presolve, interior point 3x slower.

Inputs ``y_frac`` / ``s_frac`` are ``(I, R)`` over all jobs (rows of jobs not in ``I_t`` are
ignored, as the decision's rows of inactive jobs are zero) or ``(|I_t|, R)`` with one row per
active job in ascending order.  Solver noise: entries of ``y~`` and ``s~`` in ``[-tol, 0)`` count
as 0, ``y~`` within ``tol`` of an integer is that integer (Alg. 3 line 4's test); each row of
``s~`` must sum to 1 within ``R * tol`` and is divided by its sum; anything worse raises
``ValueError`` naming the job.

Random draws, in order (one Generator, :func:`numpy.random.default_rng` once): ``A_round``:
``Round1_y`` for k = 0 .. K - 1 and per k for r = 0 .. R - 1; ``Round2_y`` per active job in
ascending order; one uniform per active job for the PS.  IR: the PS uniforms only.  GR: none.
"""

from __future__ import annotations

import dataclasses
import logging
import math
import time
from collections.abc import Callable
from types import MappingProxyType
from typing import TYPE_CHECKING

import numpy as np
import scipy.sparse as sp

from clusteropt.decisions.broker import BrokerDecision
from clusteropt.rounding.dependent import pairwise_dependent_round
from clusteropt.solvers.direct import highs_termination, run_highs
from clusteropt.solvers.result import NotOptimalError, SolveResult, Termination, settle

if TYPE_CHECKING:
    import pyomo.environ as pyo

    from clusteropt.instances.broker import BrokerInstance

__all__ = ["BROKER_ROUNDINGS", "DEFAULT_TOL", "ROUNDING_VARIANTS", "TRANSPORT_BUILDERS", "BrokerRoundingInfo",
           "RoundingShortError", "a_round", "build_transport_model", "complete_placement", "greedy_round",
           "independent_round", "round1_y", "round2_y", "sample_ps"]

log = logging.getLogger(__name__)

#: ``builder`` values of the completion's transportation LP.
TRANSPORT_BUILDERS = ("auto", "matrix", "pyomo")
#: ``variant`` values of the roundings: ``"package"`` adds missing workers (module docstring,
#: Completion 1), ``"paper"`` is Alg. 2 as written (a job left short raises :class:`RoundingShortError`).
ROUNDING_VARIANTS = ("package", "paper")
#: Default solver-noise tolerance of the roundings (module docstring): within it of an integer is that integer.
DEFAULT_TOL = 1e-6
#: Relative slack on the LP's capacity rows ``P_i ybar_i^{r'}`` (module docstring, Completion 2).
_CAP_SLACK = 1e-9


class RoundingShortError(RuntimeError):
    """``variant="paper"``: the rounding left an active job with fewer than ``N_i(t)`` workers, so
    (8a)/(8b) have no solution ``q`` and Alg. 2 line 10 cannot complete (the package variant adds
    the missing workers instead; module docstring, Completion 1).
    """


@dataclasses.dataclass(frozen=True, eq=False)
class BrokerRoundingInfo:
    """What one call of :func:`a_round`, :func:`independent_round` or :func:`greedy_round` did.

    Attributes
    ----------
    method : str
        ``"a_round"``, ``"ir"`` or ``"gr"``.
    slot : int
        ``t``.
    jobs : int array (J,)
        ``I_t``, the active jobs (row ``j`` of the per-job arrays below is job ``jobs[j]``).
    candidates : int array (C, J, R)
        The rounded worker matrices before the maximum: for ``A_round`` ``C = K + 1``, rows
        ``0 .. K - 1`` from ``Round1_y`` with ``n_{.,k}`` (Alg. 2 line 2), row ``K`` from
        ``Round2_y`` (line 4); for IR / GR ``C = 1``.
    candidate_costs : float array (C, 3)
        C2, C3, C4 of each candidate alone, with the drawn PS locations and ``g = y (x) s``
        (C1 needs the LP and is undefined for a candidate short of workers).
    candidate_short : int array (C,)
        Per candidate, the number of jobs with fewer than ``N_i`` workers.
    ps_dc : int array (J,)
        ``r_i``, the DC of each active job's PS.
    added_workers : int array (J,)
        Workers added by the feasibility fix (module docstring, Completion 1).
    input_short : int
        Active jobs whose ``y~`` breaks the relaxed (8a)/(8b), ``sum_r P_i y~_i^r < sum_r D_i^r``
        beyond the tolerance (the cause the fix is there for, with IR's nearest rounding).
    costs : Mapping[str, float]
        ``C1 .. C4`` and ``total`` of the returned decision (C3 against ``prev_v``).
    lp : SolveResult or None
        The transportation LP's result (None when no job has data to move).
    round_seconds, lp_seconds, total_seconds : float
        Rounding (lines 1-9 and the fix), the LP (build, hand-off and solve), the whole call.
    variant : str
        ``"package"`` or ``"paper"`` (:data:`ROUNDING_VARIANTS`).
    """

    method: str
    slot: int
    jobs: np.ndarray
    candidates: np.ndarray
    candidate_costs: np.ndarray
    candidate_short: np.ndarray
    ps_dc: np.ndarray
    added_workers: np.ndarray
    input_short: int
    costs: MappingProxyType
    lp: SolveResult | None
    round_seconds: float
    lp_seconds: float
    total_seconds: float
    variant: str = "package"

    @property
    def workers_added(self) -> int:
        """Total workers added by the feasibility fix."""
        return int(self.added_workers.sum())

    @property
    def jobs_fixed(self) -> int:
        """Jobs that needed the feasibility fix."""
        return int((self.added_workers > 0).sum())


# ---------------------------------------------------------------------------------------------
# inputs


def _check_tol(tol: float) -> float:
    tol = float(tol)
    if not (0.0 <= tol < 0.5):
        raise ValueError(f"tol = {tol!r}; expected 0 <= tol < 0.5")
    return tol


def _job_rows(inst: BrokerInstance, jobs: np.ndarray, value, name: str) -> np.ndarray:
    """The rows of ``value`` ((I, R) or ``(|I_t|, R)``) for the active jobs, as floats (J, R)."""
    try:
        a = np.asarray(value, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} = {value!r}; expected an array of real numbers") from exc
    n_dcs = inst.n_dcs
    if a.ndim == 2 and a.shape == (inst.n_jobs, n_dcs):
        return a[jobs]
    if a.ndim == 2 and a.shape == (jobs.size, n_dcs):
        return a
    raise ValueError(f"{name} has shape {a.shape}; expected (I, R) = ({inst.n_jobs}, {n_dcs}) or "
                     f"(|I_t|, R) = ({jobs.size}, {n_dcs}) (one row per active job)")


def _clean_y(y: np.ndarray, jobs: np.ndarray, tol: float) -> np.ndarray:
    """Validate ``y~`` rows: finite, ``>= -tol``; entries in ``[-tol, 0)`` become 0."""
    bad = ~np.isfinite(y) | (y < -tol)
    if bad.any():
        j, r = (int(x) for x in np.argwhere(bad)[0])
        raise ValueError(f"y_frac[job {int(jobs[j])}, DC {r}] = {float(y[j, r])!r}; expected a finite number >= 0 "
                         f"(within tol={tol:g} below 0 counts as 0)")
    return np.maximum(y, 0.0)


def _ps_distribution(s: np.ndarray, jobs: np.ndarray, tol: float) -> np.ndarray:
    """Validate and normalise ``s~`` rows into distributions over the DCs (module docstring)."""
    bad = ~np.isfinite(s) | (s < -tol)
    if bad.any():
        j, r = (int(x) for x in np.argwhere(bad)[0])
        raise ValueError(f"s_frac[job {int(jobs[j])}, DC {r}] = {float(s[j, r])!r}; expected a finite number >= 0 "
                         f"(within tol={tol:g} below 0 counts as 0)")
    s = np.maximum(s, 0.0)
    total = s.sum(axis=1)
    slack = tol * max(s.shape[1], 1)
    off = ~(np.abs(total - 1.0) <= slack) | (total <= 0)
    if off.any():
        j = int(np.flatnonzero(off)[0])
        raise ValueError(f"s_frac[job {int(jobs[j])}] sums to {float(total[j])!r}; expected 1 within R * tol = "
                         f"{slack:g} (constraint (8f): a distribution over the data centers)")
    return s / total[:, None] if s.size else s


def _prev_v(inst: BrokerInstance, prev_v, tol: float) -> np.ndarray:
    """``v(t - 1)`` (I, R) as 0/1 integers (an integral schedule's previous ``v``)."""
    if prev_v is None:
        return np.zeros((inst.n_jobs, inst.n_dcs), dtype=np.int64)
    prev = np.asarray(prev_v, dtype=float)
    if prev.shape != (inst.n_jobs, inst.n_dcs):
        raise ValueError(f"prev_v has shape {prev.shape}; expected (I, R) = ({inst.n_jobs}, {inst.n_dcs})")
    bad = ~(np.abs(prev) <= tol) & ~(np.abs(prev - 1.0) <= tol)
    if bad.any():
        i, r = (int(x) for x in np.argwhere(bad)[0])
        raise ValueError(f"prev_v[{i}, {r}] = {float(prev[i, r])!r}; expected 0 or 1 (v_i^r(t - 1) of the "
                         "integral decision of the previous slot)")
    return np.rint(prev).astype(np.int64)


def _snap(y: np.ndarray, tol: float) -> tuple[np.ndarray, np.ndarray]:
    """``(integral, base)``: entries within ``tol`` of an integer, and that integer or the floor."""
    nearest = np.rint(y)
    integral = np.abs(y - nearest) <= tol
    return integral, np.where(integral, nearest, np.floor(y))


# ---------------------------------------------------------------------------------------------
# Alg. 3 and Alg. 2 lines 1-9


def _matrix(y_frac, tol: float) -> np.ndarray:
    """``y_frac`` as a (J, R) float array, finite, ``>= -tol``, with ``[-tol, 0)`` set to 0."""
    y = np.asarray(y_frac, dtype=float)
    if y.ndim != 2:
        raise ValueError(f"y_frac has shape {y.shape}; expected (J, R)")
    bad = ~np.isfinite(y) | (y < -tol)
    if bad.any():
        j, r = (int(x) for x in np.argwhere(bad)[0])
        raise ValueError(f"y_frac[{j}, {r}] = {float(y[j, r])!r}; expected a finite number >= 0 "
                         f"(within tol={tol:g} below 0 counts as 0)")
    return np.maximum(y, 0.0)


def round1_y(y_frac, weights, rng=None, *, tol: float = 1e-6) -> np.ndarray:
    """Alg. 3 ``Round1_y`` for one resource k: per DC r, round ``y~_i^r`` over the jobs, weights ``n_{i,k}``.

    Column ``r`` of ``y_frac`` is rounded by :func:`~clusteropt.rounding.dependent.pairwise_dependent_round`
    (Alg. 3 lines 2-25: pairs of fractional entries moved against each other keeping
    ``sum_i n_{i,k} y_i^r``, the last fraction rounded up) over the jobs with ``weights > 0``.
    Jobs with ``weights[i] = 0`` (e.g. no GPU, ``n_{i,gpu} = 0``) make Alg. 3's ratio
    ``omega_{i2} / omega_{i1}`` undefined; they take no part in (8c) for this k, and are rounded
    up independently with probability equal to their fractional part: the limit of lines 10-15 as
    ``omega_{i1} -> 0`` (``Psi1 -> 1 - p1``, ``Psi2 -> p1``: ``p1`` goes to 1 w.p. ``p1``, to 0
    otherwise, and the partner does not move).  Both kinds keep their marginals ((P1)); every
    entry becomes its floor or ceiling.

    Parameters
    ----------
    y_frac : array_like (J, R)
        ``y~`` of the active jobs, finite and ``>= 0`` (``[-tol, 0)`` counts as 0).
    weights : array_like (J,)
        ``n_{i,k}`` ``>= 0``.
    rng : numpy.random.Generator, int or None
        Draws column by column (r ascending): first the pairwise rounding of the positive-weight
        jobs, then one uniform per fractional zero-weight job.
    tol : float, keyword-only
        An entry within ``tol`` of an integer is that integer (Alg. 3 line 4).

    Returns
    -------
    int64 array (J, R)

    Examples
    --------
    >>> round1_y([[0.5, 1.0], [0.5, 2.0]], [1.0, 1.0], rng=0)
    array([[0, 1],
           [1, 2]])
    """
    tol = _check_tol(tol)
    y = _matrix(y_frac, tol)
    w = np.asarray(weights, dtype=float)
    if w.shape != (y.shape[0],) or not (np.isfinite(w) & (w >= 0)).all():
        raise ValueError(f"weights = {weights!r}; expected {y.shape[0]} finite numbers >= 0 (n_{{i,k}})")
    rng = np.random.default_rng(rng)
    integral, base = _snap(y, tol)
    out = base.astype(np.int64)
    pos = w > 0
    zero = np.flatnonzero(~pos)
    for r in range(y.shape[1]):  # Alg. 3 line 1
        if pos.any():
            out[pos, r] = pairwise_dependent_round(y[pos, r], w[pos], rng, tol=tol)  # lines 2-25
        free = zero[~integral[zero, r]]
        if free.size:  # omega = 0: the limit of lines 10-15, independent with the marginal kept
            out[free, r] += (rng.random(free.size) < y[free, r] - base[free, r]).astype(np.int64)
    return out


def round2_y(y_frac, rng=None, *, tol: float = 1e-6) -> np.ndarray:
    """``Round2_y`` (Sec. 5.1, after Alg. 3): per job, round ``y~_i^r`` over the DCs with equal weights ``P_i``.

    Row ``i`` is rounded by :func:`~clusteropt.rounding.dependent.pairwise_dependent_round`
    (weights all ``P_i``, i.e. equal): ``sum_r y~_i^r`` is kept but for the last fraction, which
    is rounded up, so the row sums to ``ceil(sum_r y~_i^r)`` (up to ``tol`` snapping).

    >>> round2_y([[0.5, 0.5, 1.0], [1.25, 0.0, 0.75]], rng=0).sum(axis=1).tolist()
    [2, 2]
    """
    tol = _check_tol(tol)
    y = _matrix(y_frac, tol)
    rng = np.random.default_rng(rng)
    out = np.zeros(y.shape, dtype=np.int64)
    for j in range(y.shape[0]):
        out[j] = pairwise_dependent_round(y[j], None, rng, tol=tol)
    return out


def sample_ps(s_frac, rng=None) -> np.ndarray:
    """Alg. 2 lines 6-9: for each row (job), a DC drawn with probabilities ``s_frac[j]``.

    ``s_frac`` (J, R) holds distributions (non-negative rows summing to 1; :func:`a_round`
    validates and normalises before).  One uniform per row, in one ``rng.random(J)`` call; the
    draw is the first DC whose cumulative probability exceeds ``u * sum``, so a DC of probability
    0 is never chosen, and a one-hot row always gives its DC.

    >>> sample_ps([[0.0, 1.0, 0.0], [0.25, 0.25, 0.5]], rng=0).tolist()
    [1, 1]
    """
    s = np.asarray(s_frac, dtype=float)
    rng = np.random.default_rng(rng)
    if s.ndim != 2:
        raise ValueError(f"s_frac has shape {s.shape}; expected (J, R)")
    if s.shape[0] == 0:
        return np.zeros(0, dtype=np.int64)
    cum = np.cumsum(s, axis=1)
    u = rng.random(s.shape[0]) * cum[:, -1]
    pick = (cum > u[:, None]).argmax(axis=1)
    last_pos = s.shape[1] - 1 - np.argmax(s[:, ::-1] > 0, axis=1)  # guard: u * sum rounding to sum
    return np.minimum(pick, last_pos).astype(np.int64)


# ---------------------------------------------------------------------------------------------
# completion (Alg. 2 line 10)


def _one_hot(ps: np.ndarray, n_dcs: int) -> np.ndarray:
    s = np.zeros((ps.size, n_dcs), dtype=np.int64)
    s[np.arange(ps.size), ps] = 1
    return s


def _partial_costs(inst: BrokerInstance, jobs: np.ndarray, y: np.ndarray, ps: np.ndarray,
                   prev: np.ndarray) -> np.ndarray:
    """C2, C3, C4 of workers ``y`` (J, R) and PSs ``ps`` of the active jobs (C3 against ``prev``)."""
    s = _one_hot(ps, inst.n_dcs)
    h = y.T.astype(float) @ inst.worker_demand[jobs] + s.T.astype(float) @ inst.ps_demand[jobs]  # (R, K)
    c2 = float(inst.resource_price(h).sum())
    v = (y + s) > 0
    c3 = float((np.maximum(v - prev[jobs], 0.0) * inst.deploy_cost[jobs, None]).sum())
    c4 = float((inst.traffic[jobs, None] * y * inst.transfer_cost[:, ps].T).sum())
    return np.array([c2, c3, c4])


def _required(inst: BrokerInstance, t: int, jobs: np.ndarray) -> np.ndarray:
    return inst.required_workers(t)[jobs]


def _add_missing_workers(inst: BrokerInstance, t: int, jobs: np.ndarray, y: np.ndarray, ps: np.ndarray,
                         prev: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The feasibility fix (module docstring, Completion 1): returns ``(y, added)``."""
    need = _required(inst, t, jobs)
    short = need - y.sum(axis=1)
    added = np.zeros(jobs.size, dtype=np.int64)
    if not (short > 0).any():
        return y, added
    y = y.copy()
    s = _one_hot(ps, inst.n_dcs)
    nd, md = inst.worker_demand[jobs], inst.ps_demand[jobs]
    h = y.T.astype(float) @ nd + s.T.astype(float) @ md  # (R, K), kept current
    data = inst.slot_data(t)[jobs]
    d = inst.transfer_cost
    for j in np.flatnonzero(short > 0):
        i = int(jobs[j])
        origins = np.flatnonzero(data[j] > 0)
        c1_est = inst.capacity[i] * (d[origins].min(axis=0) if origins.size else np.zeros(inst.n_dcs))
        c4 = d[:, ps[j]] * inst.traffic[i]
        for _ in range(int(short[j])):
            dc2 = (inst.resource_price(h + nd[j][None, :]) - inst.resource_price(h)).sum(axis=1)
            new = ((y[j] + s[j]) == 0) & (prev[i] == 0)
            marginal = dc2 + inst.deploy_cost[i] * new + c4 + c1_est
            r = int(np.argmin(marginal))
            y[j, r] += 1
            h[r] += nd[j]
            added[j] += 1
        log.info("slot %d: job %d had %d workers, needs N_i = %d; added %d (feasibility fix)", t, i,
                 int(need[j] - short[j]), int(need[j]), int(short[j]))
    return y, added


def _refuse_short(inst: BrokerInstance, t: int, jobs: np.ndarray, y: np.ndarray, method: str) -> None:
    """``variant="paper"``: raise :class:`RoundingShortError` when a job has fewer than ``N_i(t)`` workers."""
    need = _required(inst, t, jobs)
    short = np.flatnonzero(y.sum(axis=1) < need)
    if short.size:
        j = int(short[0])
        raise RoundingShortError(
            f"slot {t}: {method} as the paper writes it (variant='paper') left job {int(jobs[j])} with "
            f"{int(y[j].sum())} workers; (8a)/(8b) need N_i(t) = {int(need[j])}, so Alg. 2 line 10 has no "
            f"feasible q ({short.size} job(s) short); variant='package' adds the missing workers")


def _arcs(inst: BrokerInstance, t: int, jobs: np.ndarray, y: np.ndarray):
    """Arcs ``(j, r, r')`` of the transportation LP: ``D_i^r > 0``, ``y_i^{r'} > 0`` (row j = job jobs[j])."""
    data = inst.slot_data(t)[jobs]
    has_worker = y.sum(axis=1) > 0
    dropped = (~has_worker) & (data.sum(axis=1) > 0)
    if dropped.any():  # only when sum D / P <= 1e-9 (N_i = 0): data within the ceil slack stay put
        log.debug("slot %d: jobs %s have data within the ceil slack and no worker; q = 0", t,
                  jobs[dropped].tolist())
    mask = (data[:, :, None] > 0) & (y[:, None, :] > 0) & has_worker[:, None, None]
    return np.argwhere(mask), data


def build_transport_model(inst: BrokerInstance, t: int, y) -> pyo.ConcreteModel:
    """The LP of Alg. 2 line 10 for ``q`` (Step 3 of Sec. 5.1) as a Pyomo model, for given workers ``y``.

    ``min C1 = sum d^{rr'} q_i^{rr'}`` (Eq. (1)) subject to (8a) ``sum_r q_i^{rr'} <= P_i
    y_i^{r'} (1 + 1e-9)`` and (8b) ``sum_{r'} q_i^{rr'} = D_i^r(t)``, ``q >= 0``, over the arcs
    with ``D_i^r(t) > 0`` and ``y_i^{r'} > 0`` of the jobs in ``I_t`` that have a worker (the
    module docstring says why).  ``y`` is (I, R) over all jobs or ``(|I_t|, R)``.  The matrix route
    of :func:`a_round` solves the very same LP (a test compares them).

    >>> from clusteropt.instances.broker import broker_preset
    >>> inst = broker_preset("tiny", seed=1)
    >>> t = 2; jobs = inst.active(t)
    >>> m = build_transport_model(inst, t, np.tile(inst.required_workers(t)[jobs, None], (1, inst.n_dcs)))
    >>> sorted(c.name for c in m.component_objects()), len(m.q) > 0
    (['C1', 'arcs', 'capacity', 'conservation', 'q'], True)
    """
    import pyomo.environ as pyo

    jobs = inst.active(t)
    yy = np.rint(_job_rows(inst, jobs, y, "y")).astype(np.int64)
    arcs, data = _arcs(inst, t, jobs, yy)
    arc_list = [(int(jobs[j]), int(r), int(rp)) for j, r, rp in arcs]
    d, cap = inst.transfer_cost, inst.capacity
    m = pyo.ConcreteModel(name=f"broker-transport-t{t}")
    m.arcs = pyo.Set(initialize=arc_list, dimen=3, ordered=True, doc="(i, r, r'): D_i^r(t) > 0 and y_i^{r'} > 0")
    m.q = pyo.Var(m.arcs, domain=pyo.NonNegativeReals, doc="q_i^{rr'}(t) >= 0: data of job i moved from r to r'")
    rows_b = sorted({(i, r) for i, r, _ in arc_list})
    rows_a = sorted({(i, rp) for i, _, rp in arc_list})
    out_of: dict[tuple[int, int], list[tuple[int, int, int]]] = {key: [] for key in rows_b}
    into: dict[tuple[int, int], list[tuple[int, int, int]]] = {key: [] for key in rows_a}
    for i, r, rp in arc_list:
        out_of[i, r].append((i, r, rp))
        into[i, rp].append((i, r, rp))
    row = {int(jobs[j]): j for j in range(jobs.size)}
    m.capacity = pyo.Constraint(rows_a, rule=lambda m, i, rp: sum(m.q[a] for a in into[i, rp])
                                <= float(cap[i] * yy[row[i], rp]) * (1.0 + _CAP_SLACK),
                                doc="(8a) P_i y_i^{r'}(t) >= sum_r q_i^{rr'}(t)")
    m.conservation = pyo.Constraint(rows_b, rule=lambda m, i, r: sum(m.q[a] for a in out_of[i, r])
                                    == float(data[row[i], r]), doc="(8b) sum_{r'} q_i^{rr'}(t) = D_i^r(t)")
    m.C1 = pyo.Objective(expr=sum(float(d[r, rp]) * m.q[i, r, rp] for i, r, rp in arc_list),
                         doc="C1(t) = sum d^{rr'} q_i^{rr'}(t) (Eq. (1))")
    return m


def _solve_q(inst: BrokerInstance, t: int, jobs: np.ndarray, y: np.ndarray, solver: str,
             builder: str) -> tuple[np.ndarray, SolveResult | None]:
    """``q`` (I, R, R) from the transportation LP (module docstring, Completion 2)."""
    n_dcs = inst.n_dcs
    q = np.zeros((inst.n_jobs, n_dcs, n_dcs))
    arcs, data = _arcs(inst, t, jobs, y)
    if arcs.size == 0:
        return q, None
    j, r, rp = arcs.T
    if builder == "pyomo":
        import pyomo.environ as pyo

        from clusteropt.solvers import solve

        model = build_transport_model(inst, t, y)
        result = solve(model, solver)  # raises NotOptimalError unless optimal
        q[jobs[j], r, rp] = [pyo.value(model.q[int(jobs[a]), int(b), int(c)]) for a, b, c in arcs]
        return np.maximum(q, 0.0), result
    n_arc = arcs.shape[0]
    key_b = j * n_dcs + r  # (8b) rows: (job, origin)
    key_a = j * n_dcs + rp  # (8a) rows: (job, destination)
    ub, row_b = np.unique(key_b, return_inverse=True)
    ua, row_a = np.unique(key_a, return_inverse=True)
    nb = ub.size
    rows = np.concatenate([row_b, nb + row_a])
    cols = np.concatenate([np.arange(n_arc), np.arange(n_arc)])
    a = sp.csc_array((np.ones(2 * n_arc), (rows, cols)), shape=(nb + ua.size, n_arc))
    supply = data[ub // n_dcs, ub % n_dcs]
    capacity = inst.capacity[jobs[ua // n_dcs]] * y[ua // n_dcs, ua % n_dcs] * (1.0 + _CAP_SLACK)
    row_lower = np.concatenate([supply, np.full(ua.size, -np.inf)])
    row_upper = np.concatenate([supply, capacity])
    cost = inst.transfer_cost[r, rp]
    h, pass_s, run_s = run_highs(cost, np.zeros(n_arc), np.full(n_arc, np.inf), a, row_lower, row_upper,
                                 maximize=False)
    term, status = highs_termination(h)
    info = h.getInfo()
    has_solution = info.primal_solution_status == 2  # kSolutionStatusFeasible
    x = np.asarray(h.getSolution().col_value, dtype=float) if has_solution else None
    objective = float(info.objective_function_value) if has_solution else None
    term, bound, gap = settle(term, has_solution, objective, None, mip=False)
    result = SolveResult(termination=term, has_solution=has_solution, objective=objective, bound=bound, gap=gap,
                         values={"q": x} if x is not None else {}, solver="highs", backend="matrix",
                         build_seconds=pass_s, solve_seconds=run_s, raw={"status": status, "route": "matrix"})
    if term is not Termination.OPTIMAL:
        raise NotOptimalError(f"slot {t}: the transportation LP for q (Alg. 2 line 10; {n_arc} arcs, "
                              f"{jobs.size} jobs) stopped with {term.name} ({status}); the worker counts "
                              "passed the (8a)/(8b) feasibility check, so this is a solver problem", result)
    assert x is not None  # HiGHS reports optimality with a feasible primal solution
    q[jobs[j], r, rp] = np.maximum(x, 0.0)
    return q, result


def _complete(inst: BrokerInstance, t: int, jobs: np.ndarray, y_frac: np.ndarray, y: np.ndarray,
              candidates: np.ndarray, ps: np.ndarray, prev: np.ndarray, *, method: str, solver: str, builder: str,
              tol: float, t_start: float, return_info: bool, variant: str = "package"):
    """Alg. 2 line 10 for rounded ``y`` (J, R) and PS DCs ``ps``; builds the decision (and the info)."""
    n_jobs, n_dcs = inst.n_jobs, inst.n_dcs
    data = inst.slot_data(t)[jobs]
    cap = inst.capacity[jobs]
    total = data.sum(axis=1)
    input_short = int((cap * y_frac.sum(axis=1) < total - tol * (1.0 + total)).sum())
    if input_short:
        log.warning("slot %d: %d of %d active jobs have sum_r P_i y~_i^r < sum_r D_i^r (the fractional input "
                    "breaks the relaxed (8a)/(8b))", t, input_short, jobs.size)
    if variant == "paper":
        _refuse_short(inst, t, jobs, y, method)
        added = np.zeros(jobs.size, dtype=np.int64)
    else:
        y, added = _add_missing_workers(inst, t, jobs, y, ps, prev)
    t_fix = time.perf_counter()
    q, lp = _solve_q(inst, t, jobs, y, solver, builder)
    t_lp = time.perf_counter()
    y_all = np.zeros((n_jobs, n_dcs), dtype=np.int64)
    s_all = np.zeros((n_jobs, n_dcs), dtype=np.int64)
    y_all[jobs] = y
    s_all[jobs, ps] = 1
    g = y_all[:, :, None] * s_all[:, None, :]  # g_i^{rr'} = ybar_i^r s_i^{r'}
    v = ((y_all + s_all) > 0).astype(np.int64)  # the smallest binary v with (8g)
    decision = BrokerDecision.from_placement(inst, y_all, s_all, q, g, v=v)
    decision.z = np.maximum(v - prev, 0)  # (8h) with equality, Eq. (4)
    t_end = time.perf_counter()
    if not return_info:
        return decision
    c1 = float(np.einsum("irq,rq->", q, inst.transfer_cost))
    c234 = _partial_costs(inst, jobs, y, ps, prev) if jobs.size else np.zeros(3)
    costs = {"C1": c1, "C2": float(c234[0]), "C3": float(c234[1]), "C4": float(c234[2])}
    costs["total"] = math.fsum(costs.values())
    need = _required(inst, t, jobs)
    cand_costs = np.array([_partial_costs(inst, jobs, c, ps, prev) for c in candidates]) if jobs.size else \
        np.zeros((candidates.shape[0], 3))
    cand_short = np.array([int((c.sum(axis=1) < need).sum()) for c in candidates], dtype=np.int64)
    info = BrokerRoundingInfo(method=method, slot=int(t), jobs=jobs, candidates=candidates,
                              candidate_costs=cand_costs, candidate_short=cand_short, ps_dc=ps,
                              added_workers=added, input_short=input_short, costs=MappingProxyType(costs), lp=lp,
                              round_seconds=t_fix - t_start,
                              lp_seconds=t_lp - t_fix, total_seconds=t_end - t_start, variant=variant)
    return decision, info


def complete_placement(inst: BrokerInstance, t: int, y, ps, prev_v=None, *, solver: str = "highs",
                       builder: str = "auto") -> BrokerDecision:
    """An integral placement (workers ``y`` and PS data centers ``ps`` of the active jobs) made a decision.

    The completion of Alg. 2 line 10 without its rounding (module docstring, Completion 2-3):
    ``q`` by the transportation LP minimizing C1, ``x, u`` in closed form, ``v`` the smallest
    feasible, ``g = y (x) s``, ``z = max(v - v(t - 1), 0)``.  For placement policies that choose
    the workers themselves (the Local, Central and OASiS baselines of Sec. 6.3).

    Parameters
    ----------
    inst : BrokerInstance
    t : int
    y : int array_like (I, R) or (J, R)
        Workers per data center (J = ``len(I_t)``: one row per active job); every active job
        needs at least ``N_i(t)`` of them (no fix is applied: a placement short of workers is the
        caller's error).
    ps : int array_like (J,)
        The PS data center of each active job, in ascending job order.
    prev_v : array_like (I, R), optional
        ``v_i^r(t - 1)`` (0/1; default 0).
    solver, builder : str
        As :func:`a_round`.

    Raises
    ------
    ValueError
        Bad shapes, a negative or fractional ``y``, a PS outside ``0 .. R - 1``, a job with fewer
        than ``N_i(t)`` workers (named).
    """
    jobs = inst.active(t)
    builder = _builder(solver, builder)
    rows = _job_rows(inst, jobs, y, "y")
    if not np.isfinite(rows).all() or (rows < 0).any() or not np.array_equal(rows, np.round(rows)):
        raise ValueError(f"slot {t}: y must be non-negative integers")
    y_int = np.round(rows).astype(np.int64)
    ps = np.asarray(ps, dtype=np.int64).reshape(-1)
    if ps.shape != (jobs.size,):
        raise ValueError(f"slot {t}: ps has {ps.size} entries; expected one per active job ({jobs.size})")
    if ps.size and (ps.min() < 0 or ps.max() >= inst.n_dcs):
        raise ValueError(f"slot {t}: ps = {ps.tolist()}; expected data centers in 0 .. {inst.n_dcs - 1}")
    short = np.flatnonzero(y_int.sum(axis=1) < _required(inst, t, jobs))
    if short.size:
        j = int(short[0])
        raise ValueError(f"slot {t}: job {int(jobs[j])} has {int(y_int[j].sum())} workers; (8a)/(8b) need "
                         f"N_i(t) = {int(_required(inst, t, jobs)[j])}")
    prev = _prev_v(inst, prev_v, 1e-6)
    return _complete(inst, t, jobs, y_int.astype(float), y_int, y_int[None], ps, prev, method="placement",
                     solver=solver, builder=builder, tol=1e-6, t_start=time.perf_counter(), return_info=False)


def _builder(solver: str, builder: str) -> str:
    """The LP route for ``(solver, builder)`` (module docstring, Completion 2)."""
    if builder not in TRANSPORT_BUILDERS:
        raise ValueError(f"builder = {builder!r}; expected one of {TRANSPORT_BUILDERS}")
    if builder == "auto":
        return "matrix" if solver == "highs" else "pyomo"
    if builder == "matrix" and solver != "highs":
        raise ValueError(f"builder='matrix' solves with HiGHS only; got solver = {solver!r} (use builder='pyomo' "
                         "or 'auto' for another solver)")
    return builder


def _variant(variant: str) -> str:
    if variant not in ROUNDING_VARIANTS:
        raise ValueError(f"variant = {variant!r}; expected one of {', '.join(ROUNDING_VARIANTS)}")
    return variant


def _prepare(inst: BrokerInstance, t: int, y_frac, s_frac, prev_v, tol: float, solver: str, builder: str):
    """Validated inputs: ``(jobs, y~ (J, R), s~ (J, R) normalised, prev_v (I, R) binary, tol, builder)``."""
    jobs = inst.active(t)  # validates t
    tol = _check_tol(tol)
    builder = _builder(solver, builder)
    y = _clean_y(_job_rows(inst, jobs, y_frac, "y_frac"), jobs, tol)
    s = _ps_distribution(_job_rows(inst, jobs, s_frac, "s_frac"), jobs, tol)
    return jobs, y, s, _prev_v(inst, prev_v, tol), tol, builder


# ---------------------------------------------------------------------------------------------
# the three roundings


def a_round(inst: BrokerInstance, t: int, y_frac, s_frac, prev_v=None, rng=None, *, solver: str = "highs",
            builder: str = "auto", tol: float = DEFAULT_TOL, return_info: bool = False,
            variant: str = "package"):
    """``A_round`` (Alg. 2): dependent rounding of ``y~``, PS drawn from ``s~``, the rest by LP and closed form.

    Lines 1-3: ``Round1_y`` (Alg. 3, :func:`round1_y`) per resource k with ``omega_i = n_{i,k}``;
    line 4: ``Round2_y`` (:func:`round2_y`); line 5: ``ybar_i^r = max`` of the K + 1 values, each
    ``floor(y~_i^r)`` or ``ceil(y~_i^r)``; lines 6-9: the PS of job i in ``r_i ~ s~_i``
    (:func:`sample_ps`); line 10: the completion of the module docstring (feasibility fix, ``q``
    by LP, ``x, u`` closed form, ``v``, ``g = ybar (x) s``, ``z``).

    Parameters
    ----------
    inst : BrokerInstance
    t : int
        The slot, ``1 .. T``.
    y_frac : array_like (I, R) or (J, R)
        ``y~_i^r(t)`` >= 0 (J = ``len(I_t)``; module docstring: rows, noise).
    s_frac : array_like (I, R) or (J, R)
        ``s~_i^r(t)``: per active job a distribution over the DCs (normalised; module docstring).
    prev_v : array_like (I, R), optional
        ``v_i^r(t - 1)`` of the previous slot's integral decision, 0/1 within ``tol`` (default
        all 0): C3 of the result and of the candidates, the fix's deployment term, and ``z``.
    rng : numpy.random.Generator, int or None
        Normalised once with :func:`numpy.random.default_rng` (draw order: module docstring).
    solver : str, keyword-only
        LP solver for ``q`` (registry name); ``"highs"`` uses the matrix route.
    builder : {"auto", "matrix", "pyomo"}, keyword-only
        ``"auto"``: matrix for HiGHS, else the Pyomo model of :func:`build_transport_model`.
    tol : float, keyword-only
        Solver-noise tolerance (module docstring), default 1e-6.
    return_info : bool, keyword-only
        Also return a :class:`BrokerRoundingInfo`.
    variant : {"package", "paper"}, keyword-only
        ``"package"`` (default): a job left short of ``N_i(t)`` workers gets the missing ones
        (module docstring, Completion 1; for ``A_round`` only on input that breaks the relaxed
        (8a)/(8b) or within ``tol`` of it).  ``"paper"``: Alg. 2 exactly as written, with no such
        step; a short job raises :class:`RoundingShortError`.  Zero weights ``n_{i,k} = 0``, for
        which Alg. 3's ratio ``omega_{i2} / omega_{i1}`` is undefined, take the limit of lines
        10-15 in both variants (:func:`round1_y`).

    Returns
    -------
    BrokerDecision
        Integral, feasible for (8a)-(8k) (checked by the tests with
        :func:`~clusteropt.verify.broker.check_broker_decision`); all zero (``u2 = 1`` by (8e))
        when ``I_t`` is empty.  With ``return_info``: ``(decision, info)``.

    Raises
    ------
    ValueError
        Bad shapes, a negative or non-finite ``y~`` / ``s~`` beyond ``tol``, an ``s~`` row not
        summing to 1, a ``prev_v`` entry not 0 or 1, ``t`` outside ``1 .. T``, an unknown builder
        (all before any draw).
    clusteropt.solvers.NotOptimalError
        The LP for ``q`` did not solve to optimality.
    RoundingShortError
        ``variant="paper"`` and a job was left with fewer than ``N_i(t)`` workers.

    References
    ----------
    Paper 003 (mlBroker), Sec. 5.1: Alg. 2 (lines 1-11), Alg. 3, Step 1-3; Sec. 5.2, proof of
    Lemma 1 (feasibility), Theorem 4 (P1)/(P2).

    Examples
    --------
    >>> from clusteropt.instances.broker import BrokerInstance
    >>> from clusteropt.verify.broker import check_broker_decision
    >>> inst = BrokerInstance(horizon=1, price_a=[[2.0], [3.0]], price_b=[[1.0], [2.0]], threshold=[[4.0], [4.0]],
    ...                       transfer_cost=[[0, 0.5], [0.5, 0]], arrival=[1], last_slot=[1],
    ...                       data=[[[20.0, 10.0]]], capacity=[15.0], worker_demand=[[1.0]], ps_demand=[[0.0]],
    ...                       traffic=[2.0], deploy_cost=[7.0], resources=("gpu",))
    >>> d, info = a_round(inst, 1, [[4 / 3, 2 / 3]], [[0.5, 0.5]], rng=0, return_info=True)
    >>> d.y.tolist(), d.s.tolist(), info.candidates.tolist()
    ([[2, 1]], [[1, 0]], [[[2, 1]], [[1, 1]]])
    >>> check_broker_decision(inst, d, 1).ok, info.workers_added
    (True, 0)
    """
    t0 = time.perf_counter()
    variant = _variant(variant)
    jobs, y, s, prev, tol, builder = _prepare(inst, t, y_frac, s_frac, prev_v, tol, solver, builder)
    rng = np.random.default_rng(rng)
    cands = [round1_y(y, inst.worker_demand[jobs, k], rng, tol=tol) for k in range(inst.n_resources)]  # 1-3
    cands.append(round2_y(y, rng, tol=tol))  # line 4
    candidates = np.stack(cands)
    ybar = candidates.max(axis=0)  # line 5
    ps = sample_ps(s, rng)  # lines 6-9
    return _complete(inst, t, jobs, y, ybar, candidates, ps, prev, method="a_round", solver=solver,
                     builder=builder, tol=tol, t_start=t0, return_info=return_info, variant=variant)


def independent_round(inst: BrokerInstance, t: int, y_frac, s_frac, prev_v=None, rng=None, *,
                      solver: str = "highs", builder: str = "auto", tol: float = DEFAULT_TOL,
                      return_info: bool = False, variant: str = "package"):
    """IR (Sec. 6.2): each ``y~_i^r`` to the nearest integer, the PS drawn from ``s~_i`` as in ``A_round``.

    "*Independent Rounding (IR)*, which rounds each ``y_i^r(t)`` to the nearest integer (e.g.,
    2.6 to 3, 2.1 to 2) and rounds ``s_i^r(t)`` in the same way as in ``A_round``" (paper 003,
    Sec. 6.2).  Halves go up (``floor(y + 1/2)``); values within ``tol`` of an integer are that
    integer.  The PS uses Alg. 2 lines 6-9 (:func:`sample_ps`, the only random draw).  Nearest
    rounding can leave a job short of ``N_i`` workers; the completion (module docstring) adds them
    and counts them in ``info.added_workers`` (``variant="paper"``: raises :class:`RoundingShortError`
    instead).  Parameters, returns and raises as :func:`a_round`.
    """
    t0 = time.perf_counter()
    variant = _variant(variant)
    jobs, y, s, prev, tol, builder = _prepare(inst, t, y_frac, s_frac, prev_v, tol, solver, builder)
    rng = np.random.default_rng(rng)
    integral, base = _snap(y, tol)
    ybar = np.where(integral, base, np.floor(y + 0.5)).astype(np.int64)
    ps = sample_ps(s, rng)
    return _complete(inst, t, jobs, y, ybar, ybar[None], ps, prev, method="ir", solver=solver, builder=builder,
                     tol=tol, t_start=t0, return_info=return_info, variant=variant)


def greedy_round(inst: BrokerInstance, t: int, y_frac, s_frac, prev_v=None, rng=None, *, solver: str = "highs",
                 builder: str = "auto", tol: float = DEFAULT_TOL, return_info: bool = False,
                 variant: str = "package"):
    """GR (Sec. 6.2): each ``y~_i^r`` rounded up, the PS where ``s~_i`` is largest.

    "*Greedy Rounding (GR)*, which rounds up ``y_i^r(t)`` (e.g., 2.2 to 3) and assigns
    ``s_i^{r*}(t) = 1, r* = arg max_{r in [R]} s_i^r(t)``" (paper 003, Sec. 6.2).  Values within
    ``tol`` of an integer are that integer (so solver noise 2.0000001 stays 2); ties of the
    arg max go to the lowest DC.  Deterministic: ``rng`` is accepted (so that the three roundings
    share one signature) and not used.  Parameters, returns and raises as :func:`a_round`.
    """
    t0 = time.perf_counter()
    variant = _variant(variant)
    jobs, y, s, prev, tol, builder = _prepare(inst, t, y_frac, s_frac, prev_v, tol, solver, builder)
    integral, base = _snap(y, tol)
    ybar = np.where(integral, base, np.ceil(y)).astype(np.int64)
    ps = (s.argmax(axis=1) if jobs.size else np.zeros(0)).astype(np.int64)
    return _complete(inst, t, jobs, y, ybar, ybar[None], ps, prev, method="gr", solver=solver, builder=builder,
                     tol=tol, t_start=t0, return_info=return_info, variant=variant)


#: Name -> rounding function (the three of Sec. 6.2's Fig. 7), all with :func:`a_round`'s signature.
BROKER_ROUNDINGS: MappingProxyType[str, Callable] = MappingProxyType(
    {"a_round": a_round, "ir": independent_round, "gr": greedy_round})
