"""One call from a coflow instance to a verified schedule: order, schedule, check, bound.

``run_coflow(inst, policy, scheduler)`` orders the coflows with ``policy``, builds the schedule
with ``scheduler``, checks it with :func:`clusteropt.verify.check_coflow_schedule` (the
completion times and the total weighted CCT reported are the verifier's, not the scheduler's)
and, when asked, computes the concurrent-open-shop LP lower bound by row generation.  It is what
``clusteropt run`` and the coflow experiments call.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any

import numpy as np

from clusteropt.algorithms.coflow.orderings import (
    fifo_order,
    lp_order,
    primal_dual_order,
    sebf_order,
    sincronia_order,
    size_order,
)
from clusteropt.algorithms.coflow.schedulers import SCHEDULERS
from clusteropt.decisions.coflow import CoflowSchedule
from clusteropt.instances.coflow.instance import CoflowInstance, ConcurrentOpenShopInstance
from clusteropt.progress import Progress

__all__ = ["POLICIES", "CoflowRun", "coflow_order", "run_coflow"]

#: Ordering policies ``clusteropt run --policy`` takes.
POLICIES = ("primal-dual", "lp-order", "sincronia", "sebf", "fifo", "smallest-first", "largest-first")
#: Orderings that rank a coflow by its own data alone (its bottleneck, release or size): computed
#: once, they still give an online schedule with the ``greedy`` scheduler.  The others
#: (``primal-dual``, ``sincronia``, ``lp-order``) look at coflows that have not arrived yet
#: (clairvoyant) unless run with ``online=True`` (:mod:`clusteropt.algorithms.coflow.online`).
SELF_CONTAINED = ("sebf", "fifo", "smallest-first", "largest-first")


def is_online(policy: str, scheduler: str, online: bool) -> bool:
    """Whether every slot of the run is decided from the coflows released by then.

    >>> is_online("sebf", "greedy", False), is_online("sincronia", "greedy", False)
    (True, False)
    >>> is_online("sincronia", "greedy", True)
    True
    >>> is_online("fifo", "paper", False)   # the moved blocks place later coflows' edges early
    False
    >>> is_online("sebf", "madd", False)    # pacing to a completion that later arrivals move
    False
    """
    return bool(online) or (scheduler == "greedy" and policy in SELF_CONTAINED)


@dataclasses.dataclass(frozen=True)
class CoflowRun:
    """A verified run: the order, the schedule, the verifier's numbers and the times.

    ``lower_bound`` is the LP bound (None unless asked for, or computed for ``lp-order``);
    ``bound_converged`` says whether the row generation proved it is the LP optimum.
    """

    policy: str
    scheduler: str
    order: np.ndarray
    schedule: CoflowSchedule
    completion: np.ndarray
    total_weighted_cct: float
    verified: bool
    violations: tuple[str, ...]
    lower_bound: float | None
    bound_converged: bool | None
    seconds: dict[str, float]
    replanned: bool = False
    epoch: int | None = None
    replan_slots: int | None = None
    params: dict[str, Any] = dataclasses.field(default_factory=dict)
    """Every setting that shaped the run, defaults included (:func:`run_coflow`), for ``out.json``."""
    check: Any = dataclasses.field(default=None, repr=False, compare=False)
    """The verifier's result (:func:`clusteropt.verify.check_coflow_schedule`) of ``schedule``."""

    @property
    def online(self) -> bool:
        """Every slot decided from the coflows released by then (:func:`is_online`)."""
        return is_online(self.policy, self.scheduler, self.replanned)

    @property
    def ratio(self) -> float | None:
        """``total_weighted_cct / lower_bound`` (None without a bound)."""
        if self.lower_bound is None or self.lower_bound <= 0:
            return None
        return self.total_weighted_cct / self.lower_bound

    def from_release(self, inst: CoflowInstance) -> dict[str, float | None]:
        """The objective coflow users compare: completion time counted from each coflow's release.

        ``total_weighted_cct`` (the paper's objective, the one its ratios bound) counts every
        completion from slot 0, so on arrivals spread over time the release offsets
        ``sum_j w_j r_j`` make up most of it and every policy looks close to the bound.  Here:
        ``total`` = ``sum_j w_j (C_j - r_j)``, ``mean`` = the unweighted mean of ``C_j - r_j`` (slots),
        ``offset`` = ``sum_j w_j r_j``, and with a bound ``lower_bound`` = LP bound - offset (a lower
        bound on ``total``, since the offset is the same for every schedule) and ``ratio``.
        ``mean_seconds``: ``mean`` times the instance's ``slot_seconds`` (None when unknown).
        """
        release = np.asarray(inst.release, dtype=float)
        offset = float(np.asarray(inst.weight, dtype=float) @ release)
        cct = self.completion.astype(float) - release
        total = self.total_weighted_cct - offset
        mean = float(cct.mean()) if cct.size else 0.0
        out: dict[str, float | None] = {"total": total, "mean": mean, "offset": offset,
                                        "lower_bound": None, "ratio": None, "mean_seconds": None}
        if inst.slot_seconds is not None:
            out["mean_seconds"] = mean * inst.slot_seconds
        if self.lower_bound is not None:
            bound = self.lower_bound - offset
            out["lower_bound"] = bound
            out["ratio"] = total / bound if bound > 0 else None
        return out

    def to_json_dict(self, inst: CoflowInstance) -> dict[str, Any]:
        """The ``--json`` output of ``clusteropt run`` (documented in the README)."""
        assert inst.ids is not None  # validate() fills in the default ids 1..n
        ids = inst.ids.tolist()
        out: dict[str, Any] = {
            "policy": self.policy,
            "params": self.params,
            "seed": None,  # no policy or scheduler draws at random
            "schedule": self.scheduler,
            "replanned": self.replanned,
            "epoch": self.epoch,
            "replan_slots": self.replan_slots,
            "online": self.online,
            "verified": self.verified,
            "order": [ids[j] for j in self.order.tolist()],
            "completion": {str(ids[j]): int(c) for j, c in enumerate(self.completion.tolist())},
            "total_weighted_cct": self.total_weighted_cct,
            "from_release": self.from_release(inst),
        }
        if self.lower_bound is not None:
            out["lower_bound"] = self.lower_bound
            out["lower_bound_converged"] = self.bound_converged
            out["ratio"] = self.ratio
        out["seconds"] = self.seconds
        out["violations"] = list(self.violations)
        out["blocks"] = self.schedule.to_json_blocks(ids)
        return out


def _as_coflow(inst) -> CoflowInstance:
    if isinstance(inst, ConcurrentOpenShopInstance):
        return inst.to_coflow()
    if not isinstance(inst, CoflowInstance):
        raise TypeError(f"expected a CoflowInstance or ConcurrentOpenShopInstance, got {type(inst).__name__}")
    return inst


def coflow_order(inst: CoflowInstance, policy: str, *, kappa: float = 0.5, lp_completion=None) -> np.ndarray:
    """The order of ``policy`` (one of :data:`POLICIES`) for ``inst``.

    ``lp-order`` needs ``lp_completion`` (the LP's ``C*``, from
    :func:`clusteropt.models.coflow.bound.cos_lower_bound`).
    """
    loads = inst.loads()
    if policy == "primal-dual":
        return primal_dual_order(loads, inst.weight, inst.release, kappa=kappa).order
    if policy == "lp-order":
        if lp_completion is None:
            raise ValueError("policy 'lp-order' needs the LP completion times (lp_completion=)")
        return lp_order(lp_completion)
    if policy == "sincronia":
        return sincronia_order(loads, inst.weight)
    if policy == "sebf":
        return sebf_order(loads, inst.weight, inst.release)
    if policy == "fifo":
        return fifo_order(inst.release, inst.ids)
    if policy in ("smallest-first", "largest-first"):
        return size_order(inst.total_units(), largest_first=policy == "largest-first")
    raise ValueError(f"policy = {policy!r}; expected one of {', '.join(POLICIES)}")


def run_coflow(
    inst: CoflowInstance | ConcurrentOpenShopInstance,
    policy: str = "primal-dual",
    scheduler: str = "greedy",
    *,
    lower_bound: bool = False,
    kappa: float = 0.5,
    solver: str = "highs",
    bound: tuple[float, np.ndarray, bool] | None = None,
    progress: bool = False,
    online: bool = False,
    epoch: int | None = None,
) -> CoflowRun:
    """Order, schedule, verify (and bound) one instance.

    Parameters
    ----------
    inst : CoflowInstance or ConcurrentOpenShopInstance
        A concurrent-open-shop instance runs as its diagonal coflow instance.
    policy : str
        One of :data:`POLICIES`.
    scheduler : {"greedy", "paper", "madd"}
        :func:`~clusteropt.algorithms.coflow.schedulers.greedy_schedule`,
        :func:`~clusteropt.algorithms.coflow.schedulers.paper_schedule` or
        :func:`~clusteropt.algorithms.coflow.schedulers.madd_schedule`.
    lower_bound : bool
        Also compute the LP bound (row generation; ``lp-order`` computes it anyway).
    kappa : float
        The primal-dual threshold.
    solver : str
        LP solver for the bound.
    bound : tuple, optional
        ``(value, C, converged)``: a bound computed before (reused across policies of one instance).
    progress : bool
        Show the stages done (bound, order, schedule, verify) and the bound's row-generation
        rounds (:class:`clusteropt.progress.Progress`).
    online : bool
        Re-plan ``policy`` on the remaining demand at every arrival (or every ``epoch`` slots) and
        continue the greedy schedule in between
        (:func:`~clusteropt.algorithms.coflow.online.online_greedy_schedule`); greedy scheduler only.
        The run's ``order`` is then the coflows by completion.
    epoch : int, optional
        With ``online``: re-plan every ``epoch`` slots instead of at every arrival.

    Returns
    -------
    CoflowRun
        With ``verified`` False and the violations if the verifier rejects the schedule (a bug
        in a scheduler; callers check ``verified`` and must not report such a run as a result).
    """
    from clusteropt.verify.coflow import check_coflow_schedule

    inst = _as_coflow(inst)
    if scheduler not in SCHEDULERS:
        raise ValueError(f"scheduler = {scheduler!r}; expected one of {', '.join(SCHEDULERS)}")
    if policy not in POLICIES:
        raise ValueError(f"policy = {policy!r}; expected one of {', '.join(POLICIES)}")
    if online and scheduler != "greedy":
        raise ValueError(f"online = True re-plans the greedy schedule; scheduler = {scheduler!r} builds the "
                         "paper's moved blocks offline (use scheduler='greedy')")
    if epoch is not None and not online:
        raise ValueError("epoch is the re-planning period of online = True; pass online=True too")
    seconds: dict[str, float] = {}
    report_bound = lower_bound or (policy == "lp-order" and not online)
    stages = 3 + (bound is None and report_bound)
    with Progress(f"coflow {policy}", stages, "stage", enabled=progress) as bar:
        if bound is None and report_bound:
            from clusteropt.models.coflow.bound import cos_lower_bound

            t0 = time.perf_counter()
            value, completion_lp, rowgen = cos_lower_bound(inst, solver=solver, progress=progress)
            seconds["lower_bound"] = time.perf_counter() - t0
            bound = (value, completion_lp, rowgen.converged)
            bar.update()
        replans = None
        if online:
            from clusteropt.algorithms.coflow.online import online_greedy_schedule

            seconds["order"] = 0.0  # ordering and scheduling interleave: counted as schedule time
            bar.update()
            t0 = time.perf_counter()
            result = online_greedy_schedule(inst, policy, epoch=epoch, kappa=kappa, solver=solver)
            schedule, replans = result.schedule, int(result.replan_slots.size)
            assert schedule.order is not None  # the online schedule records its order (by completion)
            order = schedule.order
            seconds["schedule"] = time.perf_counter() - t0
        else:
            t0 = time.perf_counter()
            order = coflow_order(inst, policy, kappa=kappa, lp_completion=None if bound is None else bound[1])
            seconds["order"] = time.perf_counter() - t0
            bar.update()
            t0 = time.perf_counter()
            schedule = SCHEDULERS[scheduler](inst, order)
            seconds["schedule"] = time.perf_counter() - t0
        bar.update()
        t0 = time.perf_counter()
        check = check_coflow_schedule(inst, schedule)
        seconds["verify"] = time.perf_counter() - t0
        bar.update()
    return CoflowRun(
        policy=policy, scheduler=scheduler, order=order, schedule=schedule,
        completion=check.completion if check.completion is not None else np.zeros(inst.n_coflows, np.int64),
        total_weighted_cct=float(check.value), verified=check.feasible,
        violations=tuple(str(v) for v in check.violations),
        lower_bound=float(bound[0]) if report_bound and bound is not None else None,
        bound_converged=bool(bound[2]) if report_bound and bound is not None else None,
        seconds=seconds, replanned=bool(online), epoch=None if epoch is None else int(epoch), replan_slots=replans,
        params=_run_params(policy, scheduler, kappa=kappa, solver=solver, online=online, epoch=epoch,
                           lp=report_bound or policy == "lp-order"),
        check=check,
    )


def _run_params(policy: str, scheduler: str, *, kappa: float, solver: str, online: bool, epoch: int | None,
                lp: bool) -> dict[str, Any]:
    """The settings of a run as ``out.json`` writes them: the ones the user passed and the defaults
    that applied (the row generation's of the LP, read from :func:`cos_lower_bound`'s signature, so
    they cannot drift from what ran).
    """
    import inspect

    from clusteropt.models.coflow.bound import cos_lower_bound

    out: dict[str, Any] = {"policy": policy, "scheduler": scheduler, "online": bool(online),
                           "epoch": None if epoch is None else int(epoch)}
    if policy in ("primal-dual", "sincronia"):
        out["kappa"] = float(kappa)
    if lp:
        used = ("tol", "max_rounds", "per_machine", "purge_after", "initial", "time_limit", "builder")
        defaults = {k: v.default for k, v in inspect.signature(cos_lower_bound).parameters.items() if k in used}
        out["lp"] = {"solver": solver, **defaults}
    return out
