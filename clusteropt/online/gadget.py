"""GADGET's online scheduler (paper 000, Alg. 1) and the FIFO / DRF / LAS baselines, on the driver.

Every slot t the environment shows the policy ``I[t]``-relevant state (arrivals so far and the
worker-slots ``z_{i,t-1}`` each job has had); the policy returns a :class:`SlotAllocation` for
slot t: workers per server and each multi-server job's ring.  Allocations are re-decided every
slot, so a job may be preempted and resumed (footnote 2 of the paper: containers keep progress).
The environment only records; :func:`clusteropt.verify.check_gadget_schedule` judges the run.

Policies (:data:`POLICIES`):

``gadget``
    Alg. 1, temporal greedy: each slot solve problem (10) (:func:`clusteropt.models.gadget.slot_problem`)
    with a per-slot solver: ``"exact"`` (the G-VNE ILP (12)-(19), :func:`build_gvne`, through
    :func:`clusteropt.solvers.solve`; a slot that stops before optimality keeps the solver's
    incumbent, and the gap is recorded), ``"lp-rs-mde"`` (Alg. 2 in its default, never
    violating mode: :func:`clusteropt.rounding.gadget.lp_rs_mde`; its draws use the run's seed)
    or ``"greedy"`` (jobs by best utility gain per worker,
    each at the ring size with the largest gain that :func:`place_ring` can fit).  Both end with
    a work-conserving fill (:func:`greedy_slot`): capacity the optimum of (10) leaves idle goes to
    jobs it did not embed, at zero gain or more, which keeps the slot's allocation optimal for
    (10) (every ``mu_i`` is non-decreasing) and lets sigmoid jobs climb towards their inflection.
``fifo``, ``drf``, ``las``
    Sec. VI-2: fixed worker counts (``N_i``, capped by the budget left), gang placement with the
    greedy ring placement, jobs in the order of arrival (FIFO; Hadoop / Spark), of ascending
    dominant share of their request (DRF; YARN / Mesos) or of ascending attained service
    ``z_{i,t-1}`` (LAS; Tiresias).  A job that does not fit this slot waits; later jobs may
    still start (back-filling).
"""

from __future__ import annotations

import dataclasses
import logging
import time
from typing import Any

import numpy as np

from clusteropt.algorithms.gadget.allocation import GadgetSchedule, SlotAllocation
from clusteropt.algorithms.gadget.greedy import future_density, greedy_slot, place_job
from clusteropt.algorithms.gadget.placement import Residual
from clusteropt.instances.gadget import GadgetInstance
from clusteropt.online.driver import register_environment

__all__ = ["POLICIES", "Baseline", "Gadget", "GadgetEnvironment", "GadgetObservation", "GadgetRun",
           "future_density", "greedy_slot", "make_policy"]

log = logging.getLogger(__name__)


@dataclasses.dataclass(frozen=True)
class GadgetObservation:
    """Slot ``t``: worker-slots ``z_prev`` (I,) before t and the arrived jobs (``arrival <= t``)."""

    t: int
    z_prev: np.ndarray
    arrived: np.ndarray


@dataclasses.dataclass
class GadgetRun:
    """A finished run: the schedule and what each slot took."""

    policy: str
    schedule: GadgetSchedule
    worker_slots: np.ndarray
    utility: np.ndarray
    total_utility: float
    seconds: float
    slot_info: list[dict[str, Any]]

    def to_json_dict(self, inst: GadgetInstance) -> dict[str, Any]:
        """The run as plain JSON (the README documents the keys)."""
        return {
            "policy": self.policy,
            "total_utility": self.total_utility,
            "utility": {str(i): float(u) for i, u in enumerate(self.utility)},
            "worker_slots": {str(i): int(z) for i, z in enumerate(self.worker_slots)},
            "seconds": self.seconds,
            "slots": self.schedule.to_json_list(inst.cluster.links),
            "slot_info": self.slot_info,
        }


class GadgetEnvironment:
    """Records allocations slot by slot and keeps ``z_{i,t}`` (Alg. 1 line 5)."""

    def __init__(self, instance: GadgetInstance, horizon: int, rng: np.random.Generator | None = None):
        if not 1 <= horizon <= instance.horizon:
            raise ValueError(f"horizon = {horizon}; expected 1 .. {instance.horizon} (the instance's T)")
        self.instance = instance
        self.z = np.zeros(instance.n_jobs, dtype=np.int64)
        self.slots: list[SlotAllocation] = []
        self.info: list[dict[str, Any]] = []
        self._seconds = 0.0
        self._clock = 0.0

    def observe(self, t: int) -> GadgetObservation:
        """Slot t's state."""
        self._clock = time.perf_counter()
        return GadgetObservation(t, self.z.copy(), np.flatnonzero(self.instance.arrival <= t))

    def apply(self, t: int, decision) -> None:
        """Record ``decision`` (a :class:`SlotAllocation`, or ``(allocation, info dict)``)."""
        self._seconds += time.perf_counter() - self._clock
        info: dict[str, Any] = {}
        if isinstance(decision, tuple):
            decision, info = decision
        if not isinstance(decision, SlotAllocation):
            raise TypeError(f"slot {t}: the policy returned {type(decision).__name__}; expected a SlotAllocation")
        w = np.asarray(decision.workers)
        shape = (self.instance.n_jobs, self.instance.cluster.n_servers)
        if w.shape != shape or not np.issubdtype(w.dtype, np.integer):
            raise ValueError(f"slot {t}: workers has dtype {w.dtype} and shape {w.shape}; "
                             f"expected integers of shape {shape}")
        self.z += w.sum(axis=1)
        self.slots.append(decision)
        self.info.append({"slot": t, **info})

    def result(self, policy) -> GadgetRun:
        """The :class:`GadgetRun` so far (utility from the instance's utility of ``z``)."""
        inst = self.instance
        u = inst.utility_of(self.z)
        return GadgetRun(getattr(policy, "name", type(policy).__name__), GadgetSchedule(list(self.slots)),
                         self.z.copy(), u, float(u.sum()), self._seconds, list(self.info))


register_environment("gadget", GadgetEnvironment)


class Gadget:
    """Alg. 1 (temporal greedy) with a pluggable per-slot solver (module docstring).

    Parameters
    ----------
    slot_solver : {"exact", "lp-rs-mde", "greedy"}
    form : {"auto", "flow", "tree"}
        The G-VNE form for ``"exact"`` (:func:`clusteropt.models.gadget.build_gvne`).
    solver : str
        MILP solver name for ``"exact"`` (default HiGHS).
    time_limit : float, optional
        Seconds per slot for ``"exact"``; a slot stopped by it keeps the incumbent (its gap is in
        the run's ``slot_info``); a slot without any solution raises.
    """

    name = "gadget"

    def __init__(self, slot_solver: str = "greedy", *, form: str = "auto", solver: str | None = None,
                 time_limit: float | None = None, mip_gap: float | None = None):
        self.slot_solver = slot_solver
        self.form = form
        self.solver = solver
        self.time_limit = time_limit
        self.mip_gap = mip_gap

    def reset(self, instance: GadgetInstance, rng=None) -> None:
        """Check the slot solver, cache the cluster's paths, keep the generator of the rounding."""
        if self.slot_solver not in SLOT_SOLVERS:
            raise ValueError(f"slot_solver = {self.slot_solver!r}; expected one of {sorted(SLOT_SOLVERS)}")
        self.instance_ = instance
        self.paths_ = instance.cluster.paths()
        self.rng_ = np.random.default_rng(rng)

    def step(self, t: int, obs: GadgetObservation):
        """Solve problem (10) of slot t."""
        from clusteropt.models.gadget import slot_problem

        problem = slot_problem(self.instance_, t, obs.z_prev)
        return SLOT_SOLVERS[self.slot_solver](self, problem)


def _exact(policy: Gadget, problem):
    from clusteropt.models.gadget import allocation_from_solution, build_gvne
    from clusteropt.solvers import solve

    inst = problem.inst
    if problem.jobs.size == 0:
        return SlotAllocation.empty(inst.n_jobs, inst.cluster.n_servers), {"jobs": 0}
    t0 = time.perf_counter()
    model = build_gvne(problem, form=policy.form)
    build = time.perf_counter() - t0
    res = solve(model, policy.solver, time_limit=policy.time_limit, mip_gap=policy.mip_gap,
                raise_on_nonoptimal=False)
    if not res.has_solution:
        raise RuntimeError(f"slot {problem.t}: the G-VNE ILP stopped with {res.termination.name} and no solution")
    if res.termination.name != "OPTIMAL":
        log.warning("slot %d: G-VNE ILP stopped with %s, gap %s; keeping the incumbent", problem.t,
                    res.termination.name, res.gap)
    start = allocation_from_solution(problem, model, paths=policy.paths_)
    alloc, fill_gain = greedy_slot(problem, start=start, paths=policy.paths_)
    return alloc, {"fill_gain": fill_gain, "jobs": int(problem.jobs.size), "objective": res.objective,
                   "bound": res.bound,
                   "termination": res.termination.name, "build_s": build, "solve_s": res.solve_seconds}


def _lp_rs_mde(policy: Gadget, problem):
    from clusteropt.rounding.gadget import lp_rs_mde

    return lp_rs_mde(problem, rng=policy.rng_, form=policy.form, solver=policy.solver, paths=policy.paths_)


def _greedy(policy: Gadget, problem):
    alloc, gain = greedy_slot(problem, paths=policy.paths_)
    return alloc, {"jobs": int(problem.jobs.size), "objective": gain}


#: Per-slot solvers of :class:`Gadget`.
SLOT_SOLVERS = {"exact": _exact, "greedy": _greedy, "lp-rs-mde": _lp_rs_mde}


class Baseline:
    """FIFO / DRF / LAS with fixed worker counts and greedy ring placement (Sec. VI-2)."""

    def __init__(self, order: str = "fifo"):
        if order not in ("fifo", "drf", "las"):
            raise ValueError(f"order = {order!r}; expected 'fifo', 'drf' or 'las'")
        self.order = order
        self.name = order

    def reset(self, instance: GadgetInstance, rng=None) -> None:
        """Fixed worker counts ``N_i`` and each job's dominant share of its request."""
        self.instance_ = instance
        total = instance.cluster.capacity.sum(axis=0)
        with np.errstate(divide="ignore", invalid="ignore"):
            share = np.where(total > 0, instance.per_worker * instance.max_workers[:, None] / total, 0.0)
        self.dominant_ = share.max(axis=1)
        self.paths_ = instance.cluster.paths()

    def step(self, t: int, obs: GadgetObservation):
        """Gang-place active jobs in the policy's order until nothing more fits."""
        inst = self.instance_
        left = inst.budget - obs.z_prev
        active = obs.arrived[left[obs.arrived] > 0]
        if self.order == "fifo":
            key = np.lexsort((active, inst.arrival[active]))
        elif self.order == "drf":
            key = np.lexsort((active, inst.arrival[active], self.dominant_[active]))
        else:
            key = np.lexsort((active, inst.arrival[active], obs.z_prev[active]))
        alloc = SlotAllocation.empty(inst.n_jobs, inst.cluster.n_servers)
        res = Residual.full(inst.cluster, self.paths_)
        for i in active[key].tolist():
            place_job(inst, res, alloc, i, int(min(inst.max_workers[i], left[i])))
        return alloc, {"jobs": int(active.size)}


#: Policy names of :func:`make_policy`.
POLICIES = ("gadget", "fifo", "drf", "las")


def make_policy(name: str, **options):
    """A policy by name: ``gadget`` takes ``slot_solver``, ``form``, ``solver``, ``time_limit``."""
    if name == "gadget":
        return Gadget(**options)
    if name in ("fifo", "drf", "las"):
        if options:
            raise ValueError(f"policy {name!r} takes no options; got {sorted(options)}")
        return Baseline(name)
    raise ValueError(f"unknown policy {name!r}; expected one of {POLICIES}")
