"""GADGET's online scheduler (paper 000, Alg. 1) and the FIFO / DRF / LAS baselines, on the driver.

Every slot t the environment shows the policy ``I[t]``-relevant state (arrivals so far and the
worker-slots ``z_{i,t-1}`` each job has had); the policy returns a :class:`SlotAllocation` for
slot t: workers per server and each multi-server job's ring.  Allocations are re-decided every
slot, so a job may be preempted and resumed (footnote 2 of the paper: containers keep progress).
The environment only records; :func:`clusteropt.verify.check_gadget_schedule` judges the run.

Policies (:data:`POLICIES`):

``gadget``
    Alg. 1, temporal greedy: each slot solve problem (10) (:func:`clusteropt.models.gadget.gvne.slot_problem`)
    with a per-slot solver: ``"exact"`` (the G-VNE ILP (12)-(19): on a tree with HiGHS built as
    arrays, :func:`~clusteropt.models.gadget.matrix.build_gvne_matrix` with ``relax=False``, else
    the Pyomo model :func:`build_gvne` through :func:`clusteropt.solvers.solve`; by default at most
    :data:`EXACT_TIME_LIMIT` seconds and relative gap :data:`EXACT_MIP_GAP` a slot, and a slot
    that stops before optimality keeps the solver's incumbent, its gap recorded), ``"lp-rs-mde"`` (Alg. 2,
    :func:`clusteropt.rounding.gadget.lp_rs_mde`; its draws use the run's seed) with
    ``rounding="safe"`` (default: never exceeds a capacity) or ``"paper"`` (Alg. 2 lines 7-9 as
    written, the (alpha, beta, gamma) test of Theorem 8: the kept draw may overload servers and
    links, and every slot's record says by how much), or ``"greedy"`` (jobs by best utility gain
    per worker, each at the ring size with the largest positive gain that :func:`place_ring` can
    fit).
    ``fill="greedy"`` (default) ends every slot with a work-conserving fill (:func:`greedy_slot`
    from the slot solver's allocation): capacity the solution of (10) leaves idle goes to jobs it
    did not embed, at zero gain or more.  It only adds workers, so the slot's gain never drops and
    an optimum of (10) stays one (every ``mu_i`` is non-decreasing); it lets sigmoid jobs far
    below their inflection, whose gain this slot underflows to 0, climb towards it.
    ``fill="none"`` is Alg. 1 exactly as written: the slot solver's solution of (10), nothing added.
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
import math
import time
from typing import Any

import numpy as np

from clusteropt.algorithms.gadget.greedy import future_density, greedy_slot, place_job
from clusteropt.algorithms.gadget.placement import Residual
from clusteropt.decisions.gadget import GadgetSchedule, PackedSlots, SlotAllocation
from clusteropt.instances.gadget.instance import GadgetInstance
from clusteropt.online.driver import register_environment

__all__ = ["CAPACITY_CONSTRAINTS", "FILLS", "POLICIES", "ROUNDINGS", "SLOT_SOLVERS", "Baseline", "Gadget",
           "GadgetEnvironment", "GadgetObservation", "GadgetRun", "capacity_overload", "future_density",
           "greedy_slot", "make_policy"]

log = logging.getLogger(__name__)


@dataclasses.dataclass(frozen=True)
class GadgetObservation:
    """Slot ``t``: worker-slots ``z_prev`` (I,) before t and the arrived jobs (``arrival <= t``)."""

    t: int
    z_prev: np.ndarray
    arrived: np.ndarray


@dataclasses.dataclass
class GadgetRun:
    """A finished run: the schedule, what each slot took and the policy's parameters."""

    policy: str
    schedule: GadgetSchedule
    worker_slots: np.ndarray
    utility: np.ndarray
    total_utility: float
    seconds: float
    slot_info: list[dict[str, Any]]
    params: dict[str, Any] = dataclasses.field(default_factory=dict)

    def to_json_dict(self, inst: GadgetInstance) -> dict[str, Any]:
        """The run as plain JSON (the README documents the keys)."""
        assert inst.job_ids is not None  # validate() fills in the default ids
        return {
            "policy": self.policy,
            "params": dict(self.params),
            "total_utility": self.total_utility,
            "utility": {str(i): float(u) for i, u in enumerate(self.utility)},
            "worker_slots": {str(i): int(z) for i, z in enumerate(self.worker_slots)},
            "seconds": self.seconds,
            "slots": self.schedule.to_json_list(inst.cluster.links),
            "slot_info": self.slot_info,
            "job_ids": list(inst.job_ids),
        }


class GadgetEnvironment:
    """Records allocations slot by slot and keeps ``z_{i,t}`` (Alg. 1 line 5)."""

    def __init__(self, instance: GadgetInstance, horizon: int, rng: np.random.Generator | None = None):
        if not 1 <= horizon <= instance.horizon:
            raise ValueError(f"horizon = {horizon}; expected 1 .. {instance.horizon} (the instance's T)")
        self.instance = instance
        self.z = np.zeros(instance.n_jobs, dtype=np.int64)
        self.slots = PackedSlots(instance.n_jobs, instance.cluster.n_servers)
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
        params = policy.get_params() if hasattr(policy, "get_params") else {}
        return GadgetRun(getattr(policy, "name", type(policy).__name__), GadgetSchedule(self.slots.copy()),
                         self.z.copy(), u, float(u.sum()), self._seconds, list(self.info), params)


register_environment("gadget", GadgetEnvironment)


#: Default seconds per slot of :class:`Gadget`'s ``"exact"`` slot solver (the G-VNE ILP); a
#: 167-job slot of the paper preset is not proved optimal in 120 s (``benchmarks/gadget_slot``).
EXACT_TIME_LIMIT = 60.0
#: Default relative MIP gap of the ``"exact"`` slot solver: HiGHS's own default, stated.
EXACT_MIP_GAP = 1e-4


class Gadget:
    """Alg. 1 (temporal greedy) with a pluggable per-slot solver (module docstring).

    Parameters
    ----------
    slot_solver : {"exact", "lp-rs-mde", "greedy"}
    fill : {"greedy", "none"}
        ``"greedy"`` (default): the work-conserving fill after the slot solver; ``"none"``: Alg. 1
        as written (module docstring).
    rounding : {"safe", "paper"}
        Alg. 2's rounding for ``"lp-rs-mde"`` (:func:`clusteropt.rounding.gadget.lp_rs_mde`);
        ``"paper"`` with another slot solver is refused.
    form : {"auto", "flow", "tree"}
        The G-VNE form for ``"exact"`` and of the ring-selection LP of ``"lp-rs-mde"``
        (:func:`clusteropt.models.gadget.gvne.build_gvne`).
    solver : str
        MILP solver name for ``"exact"``, LP solver for ``"lp-rs-mde"`` (default HiGHS).
    time_limit : float, optional
        Seconds per slot for ``"exact"`` (default :data:`EXACT_TIME_LIMIT`; ``None`` or ``inf``: no
        limit); a slot stopped by it keeps the incumbent (its gap is in the run's ``slot_info``); a
        slot without any solution raises.
    mip_gap : float, optional
        Relative MIP gap for ``"exact"`` (default :data:`EXACT_MIP_GAP`, HiGHS's own default;
        ``0``: prove optimality).
    builder : {"auto", "matrix", "pyomo"}
        ``"exact"``: ``"matrix"`` builds the tree-form ILP as arrays for HiGHS (the same model,
        tested row by row); ``"pyomo"`` the Pyomo model (any form and MILP solver); ``"auto"``
        (default) the arrays when the form is the tree form and the solver HiGHS.
    rounds, alpha, epsilon
        ``u_b``, ``alpha`` and Theorem 8's ``epsilon`` of the paper rounding
        (:func:`clusteropt.rounding.gadget.round_paper`).
    samples, passes
        Of the safe rounding (:func:`clusteropt.rounding.gadget.round_safe`).
    warm : bool
        ``"lp-rs-mde"``: keep both HiGHS models alive across slots and re-solve an LP whose
        structure is the previous slot's from its basis, changing only costs and bounds
        (:class:`~clusteropt.solvers.direct.WarmHighs`).  Default False (every slot cold, as the
        recorded runs were made).  With ``embed_route`` ``"colgen"`` only the selection LP's model
        is held (column generation builds its master afresh every slot).
    embed_route : {"auto", "lp", "colgen"}
        ``"lp-rs-mde"``: how Alg. 2 lines 4-6 are solved (:data:`clusteropt.rounding.gadget.EMBED_ROUTES`):
        the augmented LP then its decomposition (``"lp"``, the paper's order), or column generation
        over the valid mappings (``"colgen"``: tree clusters, HiGHS; the same LP optimum, and it scales
        with servers).  ``"auto"`` (default) resolves when the run starts
        (:func:`clusteropt.rounding.gadget.resolve_routes`): ``"colgen"`` on a cluster of
        :data:`~clusteropt.rounding.gadget.AUTO_SERVERS` (16) servers or more where it applies, else
        ``"lp"``; measured by ``python -m benchmarks.gadget_route``
        (``benchmarks/results/gadget_route.md``: one slot from 4 to 400 servers; with 100 jobs the
        paper's route takes 2.8x the CPU of ``"colgen"`` with ``select_route="capacity"`` at 16
        servers, 11.7x at 50).
    select_algorithm : {"simplex", "ipm"}
        ``"lp-rs-mde"``: HiGHS's algorithm for the ring-selection LP
        (:data:`clusteropt.rounding.gadget.SELECT_ALGORITHMS`; default primal simplex; not with ``warm``).
    select_classes : bool
        ``"lp-rs-mde"``: the ring-selection LP over classes of interchangeable servers (same value;
        :func:`clusteropt.models.gadget.matrix.server_classes`).  Default False.
    select_route : {"auto", "full", "capacity"}
        ``"lp-rs-mde"``: solve the ring-selection LP as built (``"full"``, the paper's), or first
        without its link rows and certify the result against it (``"capacity"``; tree clusters,
        HiGHS, the tree form: :data:`clusteropt.rounding.gadget.SELECT_ROUTES`).  ``"auto"``
        (default) resolves as ``embed_route`` does: ``"capacity"`` from 16 servers on where it
        applies, else ``"full"``.  After :meth:`reset` (and so in a run's ``params`` and its
        ``out.json``) :meth:`get_params` gives the resolved ``embed_route`` and ``select_route`` and
        ``route_requested`` (``"<embed_route>/<select_route>"`` as given, e.g. ``"auto/auto"``); a
        named route that cannot run on the instance is refused by :meth:`reset`.
    quotient : bool
        Solve every slot on the cluster's quotient tree (a fat-tree's parallel switches and links
        merged: :mod:`clusteropt.algorithms.gadget.quotient`, the same LP optimum as the
        splittable LP on the fat-tree) and lift the rings onto the cluster's own links; a job the
        lift cannot route is dropped from the slot and listed in the slot's ``lift_dropped``.
        Default False (the cluster as it is).  Not with ``rounding="paper"`` (the lift would hide
        its overloads).
    """

    name = "gadget"

    def __init__(self, slot_solver: str = "greedy", *, fill: str = "greedy", rounding: str = "safe",
                 form: str = "auto", solver: str | None = None, time_limit: float | None = EXACT_TIME_LIMIT,
                 mip_gap: float | None = EXACT_MIP_GAP, rounds: int = 100, alpha: float = 1 / 3,
                 epsilon: float | None = None, samples: int = 8, passes: int = 5, warm: bool = False,
                 builder: str = "auto", embed_route: str = "auto", select_algorithm: str = "simplex",
                 select_classes: bool = False, select_route: str = "auto", quotient: bool = False):
        self.slot_solver = slot_solver
        self.quotient = quotient
        self.embed_route = embed_route
        self.select_algorithm = select_algorithm
        self.select_classes = select_classes
        self.select_route = select_route
        self.fill = fill
        self.rounding = rounding
        self.form = form
        self.solver = solver
        self.time_limit = time_limit
        self.mip_gap = mip_gap
        self.rounds = rounds
        self.alpha = alpha
        self.epsilon = epsilon
        self.samples = samples
        self.passes = passes
        self.warm = warm
        self.builder = builder

    def get_params(self) -> dict[str, Any]:
        """Every parameter that shapes a run, ``None`` where it does not apply to the slot solver.

        ``embed_route`` and ``select_route`` are the routes the run takes: as given until
        :meth:`reset` resolves ``"auto"`` on the instance, resolved after it; ``route_requested``
        keeps what was given.

        >>> Gadget("greedy", fill="none").get_params()["fill"], Gadget().get_params()["solver"]
        ('none', None)
        >>> from clusteropt.instances.gadget.instance import gadget_preset
        >>> pol = Gadget("lp-rs-mde")
        >>> pol.get_params()["embed_route"], pol.get_params()["route_requested"]
        ('auto', 'auto/auto')
        >>> pol.reset(gadget_preset("paper", seed=0))
        >>> [pol.get_params()[k] for k in ("embed_route", "select_route", "route_requested")]
        ['colgen', 'capacity', 'auto/auto']
        """
        exact, lp = self.slot_solver == "exact", self.slot_solver == "lp-rs-mde"
        paper, safe = lp and self.rounding == "paper", lp and self.rounding != "paper"
        solver = (self.solver or "highs") if exact or lp else None
        embed_route, select_route = getattr(self, "routes_", None) or (self.embed_route, self.select_route)
        return {
            "slot_solver": self.slot_solver,
            "fill": self.fill,
            "rounding": self.rounding if lp else None,
            "form": self.form if exact or lp else None,
            "solver": solver,
            # no limit (None or inf) is null: the file stays strict JSON
            "time_limit": self.time_limit if exact and _limited(self.time_limit) else None,
            "mip_gap": self.mip_gap if exact else None,
            "rounds": self.rounds if paper else None,
            "alpha": self.alpha if paper else None,
            "epsilon": self.epsilon if paper else None,
            "samples": self.samples if safe else None,
            "passes": self.passes if safe else None,
            "warm": bool(self.warm) if lp else None,
            "builder": self.builder if exact else None,
            "embed_route": embed_route if lp else None,
            "select_algorithm": self.select_algorithm if lp else None,
            "select_classes": bool(self.select_classes) if lp else None,
            "select_route": select_route if lp else None,
            "route_requested": f"{self.embed_route}/{self.select_route}" if lp else None,
            "quotient": bool(self.quotient),
        }

    def reset(self, instance: GadgetInstance, rng=None) -> None:
        """Check the parameters, cache the cluster's paths, keep the generator of the rounding."""
        if self.slot_solver not in SLOT_SOLVERS:
            raise ValueError(f"slot_solver = {self.slot_solver!r}; expected one of {sorted(SLOT_SOLVERS)}")
        if self.fill not in FILLS:
            raise ValueError(f"fill = {self.fill!r}; expected one of {FILLS}")
        if self.rounding not in ROUNDINGS:
            raise ValueError(f"rounding = {self.rounding!r}; expected one of {ROUNDINGS}")
        from clusteropt.rounding.gadget import (
            BUILDERS,
            EMBED_ROUTES,
            SELECT_ALGORITHMS,
            SELECT_ROUTES,
            capacity_obstacle,
            resolve_routes,
        )

        if self.builder not in BUILDERS:
            raise ValueError(f"builder = {self.builder!r}; expected one of {BUILDERS}")
        if self.embed_route not in EMBED_ROUTES:
            raise ValueError(f"embed_route = {self.embed_route!r}; expected one of {EMBED_ROUTES}")
        if self.select_algorithm not in SELECT_ALGORITHMS:
            raise ValueError(f"select_algorithm = {self.select_algorithm!r}; expected one of "
                             f"{tuple(SELECT_ALGORITHMS)}")
        if self.select_route not in SELECT_ROUTES:
            raise ValueError(f"select_route = {self.select_route!r}; expected one of {SELECT_ROUTES}")
        work = instance
        self.quotient_ = None
        if self.quotient:
            from clusteropt.algorithms.gadget.quotient import check_bandwidths, fat_tree_groups, quotient_tree

            if self.rounding == "paper":
                raise ValueError("quotient = True with rounding = 'paper': the lift routes only what fits, so it "
                                 "would hide the paper rounding's overloads")
            self.quotient_ = quotient_tree(instance.cluster, fat_tree_groups(instance.cluster))
            check_bandwidths(self.quotient_, instance.bandwidth)
            if not self.quotient_.uniform:
                log.warning("quotient tree: some merged links join parallel links of different bandwidths, so "
                            "its LPs bound the cluster's from above but need not equal them")
            work = dataclasses.replace(instance, cluster=self.quotient_.tree)
        self.routes_: tuple[str, str] | None = None
        if self.slot_solver == "lp-rs-mde":
            if self.select_algorithm != "simplex" and self.warm:
                raise ValueError(f"select_algorithm = {self.select_algorithm!r} with warm = True: a warm re-solve "
                                 "starts the simplex from the held basis")
            # the routes this run takes: "auto" resolved on the cluster the slots are solved on
            routes = resolve_routes(work.cluster, embed_route=self.embed_route, select_route=self.select_route,
                                    solver=self.solver, form=self.form)
            obstacle = capacity_obstacle(work.cluster, solver=self.solver, form=self.form)
            if self.select_classes and obstacle is not None:
                raise ValueError(f"select_classes = True cannot run here: {obstacle}")
            self.routes_ = routes
        if self.rounding == "paper" and self.slot_solver != "lp-rs-mde":
            raise ValueError(f"rounding = 'paper' is Alg. 2's rounding: a mode of slot_solver 'lp-rs-mde', "
                             f"not of {self.slot_solver!r}")
        self.instance_ = work  # the slots are solved on it (the quotient tree's instance with quotient=True)
        self.paths_ = work.cluster.paths()
        self.rng_ = np.random.default_rng(rng)
        self.warm_: dict[str, Any] | None = None
        if self.warm:
            from clusteropt.solvers.direct import WarmHighs

            self.warm_ = {"select": WarmHighs(), "embed": WarmHighs()}

    def step(self, t: int, obs: GadgetObservation):
        """Solve problem (10) of slot t (and fill, unless ``fill="none"``)."""
        from clusteropt.models.gadget.gvne import slot_problem

        problem = slot_problem(self.instance_, t, obs.z_prev)
        alloc, info = SLOT_SOLVERS[self.slot_solver](self, problem)
        if self.quotient_ is not None and alloc.rings:
            from clusteropt.algorithms.gadget.quotient import lift_allocation
            from clusteropt.rounding.gadget import slot_gain

            inst = self.instance_
            z = obs.z_prev.astype(float)
            weight = inst.utility_of(z + alloc.total_workers()) - inst.utility_of(z)
            lift = lift_allocation(self.quotient_, alloc, inst.bandwidth, weight=weight)
            info = {**info, "lift_dropped": lift.dropped, "lift_method": lift.method, "lift_s": lift.seconds}
            if lift.dropped:
                info["gain"] = slot_gain(problem, lift.allocation)
            alloc = lift.allocation
        elif self.quotient_ is not None:
            info = {**info, "lift_dropped": [], "lift_method": None, "lift_s": 0.0}
        return alloc, {"active": problem.jobs.tolist(), **info}


def _limited(time_limit: float | None) -> bool:
    return time_limit is not None and math.isfinite(time_limit)


def _exact(policy: Gadget, problem):
    from clusteropt.models.gadget.gvne import allocation_from_solution, build_gvne
    from clusteropt.rounding.gadget import slot_gain, use_matrix
    from clusteropt.solvers import solve

    inst = problem.inst
    if problem.jobs.size == 0:
        empty = SlotAllocation.empty(inst.n_jobs, inst.cluster.n_servers)
        return empty, {"jobs": 0, "gain": 0.0, "fill_gain": 0.0}
    limit = policy.time_limit if _limited(policy.time_limit) else None
    t0 = time.perf_counter()
    if use_matrix(problem, policy.form, policy.solver, policy.builder):
        from clusteropt.models.gadget.matrix import allocation_from_matrix, build_gvne_matrix, solve_matrix

        lp = build_gvne_matrix(problem, relax=False)
        build = time.perf_counter() - t0
        res, x = solve_matrix(lp, time_limit=limit, mip_gap=policy.mip_gap, raise_on_nonoptimal=False)

        def read():
            return allocation_from_matrix(problem, lp, x, paths=policy.paths_)
    else:
        model = build_gvne(problem, form=policy.form)
        build = time.perf_counter() - t0
        res = solve(model, policy.solver, time_limit=limit, mip_gap=policy.mip_gap, raise_on_nonoptimal=False)

        def read():
            return allocation_from_solution(problem, model, paths=policy.paths_)
    if not res.has_solution:
        raise RuntimeError(f"slot {problem.t}: the G-VNE ILP stopped with {res.termination.name} and no solution")
    if res.termination.name != "OPTIMAL":
        log.warning("slot %d: G-VNE ILP stopped with %s, gap %s; keeping the incumbent", problem.t,
                    res.termination.name, res.gap)
    alloc = read()
    fill_gain = 0.0
    if policy.fill == "greedy":
        alloc, fill_gain = greedy_slot(problem, start=alloc, paths=policy.paths_)
    return alloc, {"jobs": int(problem.jobs.size), "objective": res.objective, "bound": res.bound, "gap": res.gap,
                   "gain": slot_gain(problem, alloc), "fill_gain": fill_gain,
                   "termination": res.termination.name, "builder": res.backend, "build_s": build,
                   "handoff_s": res.build_seconds, "solve_s": res.solve_seconds}


def _lp_rs_mde(policy: Gadget, problem):
    from clusteropt.rounding.gadget import lp_rs_mde

    alloc, info = lp_rs_mde(problem, rng=policy.rng_, form=policy.form, solver=policy.solver,
                            rounding=policy.rounding, samples=policy.samples, passes=policy.passes,
                            rounds=policy.rounds, alpha=policy.alpha, epsilon=policy.epsilon,
                            fill=policy.fill == "greedy", paths=policy.paths_, warm=policy.warm_,
                            embed_route=policy.embed_route, select_algorithm=policy.select_algorithm,
                            select_classes=policy.select_classes, select_route=policy.select_route)
    info.setdefault("fill_gain", 0.0)
    return alloc, {**info, "gain": info.get("objective", 0.0)}


def _greedy(policy: Gadget, problem):
    alloc, gain = greedy_slot(problem, paths=policy.paths_, zero_gain=False)
    fill_gain = 0.0
    if policy.fill == "greedy":
        alloc, fill_gain = greedy_slot(problem, start=alloc, paths=policy.paths_)
    return alloc, {"jobs": int(problem.jobs.size), "objective": gain, "gain": gain + fill_gain,
                   "fill_gain": fill_gain}


#: Per-slot solvers of :class:`Gadget`.
SLOT_SOLVERS = {"exact": _exact, "greedy": _greedy, "lp-rs-mde": _lp_rs_mde}
#: ``fill`` values of :class:`Gadget`: the work-conserving greedy fill, or none (Alg. 1 as written).
FILLS = ("greedy", "none")
#: ``rounding`` values of :class:`Gadget` (its ``"lp-rs-mde"`` slot solver).
ROUNDINGS = ("safe", "paper")


class Baseline:
    """FIFO / DRF / LAS with fixed worker counts and greedy ring placement (Sec. VI-2)."""

    def __init__(self, order: str = "fifo"):
        if order not in ("fifo", "drf", "las"):
            raise ValueError(f"order = {order!r}; expected 'fifo', 'drf' or 'las'")
        self.order = order
        self.name = order

    def get_params(self) -> dict[str, Any]:
        """The order and the fixed worker count (``N_i``, capped by the budget left)."""
        return {"order": self.order, "workers": "N_i"}

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
        return alloc, {"active": active.tolist(), "jobs": int(active.size)}


#: Policy names of :func:`make_policy`.
POLICIES = ("gadget", "fifo", "drf", "las")


def make_policy(name: str, **options):
    """A policy by name: ``gadget`` takes the parameters of :class:`Gadget` (``slot_solver``,
    ``fill``, ``rounding``, ``form``, ``solver``, ``time_limit``, ``mip_gap``, ...).
    """
    if name == "gadget":
        return Gadget(**options)
    if name in ("fifo", "drf", "las"):
        if options:
            raise ValueError(f"policy {name!r} takes no options; got {sorted(options)}")
        return Baseline(name)
    raise ValueError(f"unknown policy {name!r}; expected one of {POLICIES}")


#: Constraint labels of :mod:`clusteropt.verify.gadget` that Alg. 2's paper rounding (lines 7-9,
#: Theorem 8) may violate: the capacities, nothing else.
CAPACITY_CONSTRAINTS = ("(4) server capacity", "(8)/(19) link bandwidth")


def capacity_overload(inst: GadgetInstance, check) -> dict[str, Any]:
    """Capacity violations of a checked schedule (:func:`clusteropt.verify.check_gadget_schedule`),
    from the checker's loads alone: ``capacity_violations`` (its violations of
    :data:`CAPACITY_CONSTRAINTS`), ``overloaded_slots`` (slots with one) and ``max_load_ratio``
    (the largest load / capacity over slots, servers, resources and links; ``inf`` for a load on
    a capacity of 0).
    """
    cl = inst.cluster
    count = sum(v.constraint in CAPACITY_CONSTRAINTS for v in check.violations)
    node, link = np.asarray(check.server_load, dtype=float), np.asarray(check.link_load, dtype=float)
    over = (node > cl.capacity[None] + 1e-9).any(axis=(1, 2)) | (link > cl.bandwidth[None] + 1e-9).any(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        nr = np.where(cl.capacity[None] > 0, node / np.where(cl.capacity > 0, cl.capacity, 1)[None],
                      np.where(node > 0, np.inf, 0.0))
        lr = np.where(cl.bandwidth[None] > 0, link / np.where(cl.bandwidth > 0, cl.bandwidth, 1)[None],
                      np.where(link > 0, np.inf, 0.0))
    worst = max(float(nr.max(initial=0.0)), float(lr.max(initial=0.0)))
    return {"capacity_violations": int(count), "overloaded_slots": int(over.sum()), "max_load_ratio": worst}
