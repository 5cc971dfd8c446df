"""The registry of systems shown by ``clusteropt demo``: one row per system.

A system (a paper, or the foundation's reference model) registers a function that builds a small
instance, runs its main model or algorithm, checks the output with ``clusteropt.verify`` and
returns one summary row.  Each paper system adds its own entry.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from clusteropt.registries import register

__all__ = ["SYSTEMS", "SystemSpec", "register_system", "run_demo"]


@dataclass(frozen=True)
class SystemSpec:
    """A system in the demo: ``demo()`` returns a dict with at least ``instance``, ``model``,
    ``solver``, ``objective`` and ``verified`` (bool).
    """

    name: str
    paper: str
    demo: Callable[[], dict[str, Any]]


SYSTEMS: dict[str, SystemSpec] = {}


def register_system(spec: SystemSpec) -> SystemSpec:
    """Add ``spec`` (a name may be registered once)."""
    return register(SYSTEMS, spec, "system")


def run_demo() -> list[dict[str, Any]]:
    """Run every registered system's demo; a failing system gives a row with its error."""
    import clusteropt.models  # noqa: F401  (systems register with their models)

    rows = []
    for spec in SYSTEMS.values():
        start = time.perf_counter()
        try:
            row = dict(spec.demo())
            row.setdefault("error", "")
        except Exception as exc:
            row = {"verified": False, "error": f"{type(exc).__name__}: {exc}"}
        row = {"system": spec.name, "paper": spec.paper, **row,
               "seconds": round(time.perf_counter() - start, 3)}
        rows.append(row)
    return rows


def _worker_placement_demo() -> dict[str, Any]:
    from clusteropt.instances import random_worker_placement
    from clusteropt.models.worker_placement import build_worker_placement
    from clusteropt.solvers import solve
    from clusteropt.verify import check_worker_placement

    inst = random_worker_placement(n_jobs=12, n_servers=6, seed=0)
    result = solve(build_worker_placement(inst), "highs")
    check = check_worker_placement(inst, result.values["y"])
    assert result.objective is not None  # solve() raises unless optimal
    return {
        "instance": f"{inst.n_jobs} jobs x {inst.n_servers} servers (seed 0)",
        "model": "worker-placement",
        "solver": result.solver,
        "objective": result.objective,
        "metric": "total utility of the placement (max)",
        "verified": check.feasible and abs(check.value - result.objective) <= 1e-6 * max(
            1.0, abs(check.value)
        ),
    }


register_system(
    SystemSpec("worker-placement", "000 (Eqs. (2), (4), one slot)", _worker_placement_demo)
)


def _coflow_demo() -> dict[str, Any]:
    from clusteropt.algorithms.coflow.pipeline import run_coflow
    from clusteropt.instances import random_coflows

    inst = random_coflows(30, 10, release=False, weights="random", seed=0)
    run = run_coflow(inst, "primal-dual", "paper", lower_bound=True)
    ratio = run.ratio
    assert ratio is not None  # lower_bound=True, and the bound of positive work is positive
    return {
        "instance": f"{inst.n_coflows} coflows x {inst.n_inputs} ports (seed 0)",
        "model": "cos-lp (row generation) + primal-dual + paper schedule",
        "solver": "highs",
        "objective": run.total_weighted_cct,
        "metric": "total weighted completion time from slot 0 (the paper's objective), slots (min)",
        # verified by clusteropt.verify inside run_coflow; the slides' bound without releases is 4
        "verified": bool(run.verified and run.bound_converged and ratio <= 4.0),
    }


def _realtime_demo() -> dict[str, Any]:
    import numpy as np

    from clusteropt.instances import realtime_preset
    from clusteropt.online import run_online
    from clusteropt.online.realtime.policies import SqrtGreedy
    from clusteropt.online.realtime.regions import exact_region
    from clusteropt.verify import check_realtime_run

    inst = realtime_preset("fig5", n=3)
    region = exact_region(inst, np.ones(3))
    req = 0.9 * region.theta * np.ones(3)
    run = run_online(SqrtGreedy(req), inst, horizon=10_000, seed=0)
    check = check_realtime_run(inst, run)
    assert check.rates is not None  # check_realtime_run always recounts the rates
    return {
        "instance": "paper 002 Fig. 5 setting, N = M = 3",
        "model": "realtime-region (exact R_max) + Alg. 2 at 90% of it",
        "solver": "highs",
        "objective": float(check.rates.min()),
        "metric": "smallest completion rate, jobs per frame (needs >= r)",
        "verified": bool(check.feasible and run.fulfilled(req)),
    }


def _gadget_demo() -> dict[str, Any]:
    from clusteropt.instances.gadget.instance import gadget_preset
    from clusteropt.models.gadget.ddljs import ddljs_optimum
    from clusteropt.online import run_online
    from clusteropt.online.gadget import make_policy
    from clusteropt.verify import check_gadget_schedule

    inst = gadget_preset("tiny", jobs=8, seed=0, utility="sqrt")
    run = run_online(make_policy("gadget", slot_solver="lp-rs-mde"), inst, horizon=inst.horizon, seed=0)
    online = check_gadget_schedule(inst, run.schedule)
    _, schedule, result = ddljs_optimum(inst)
    offline = check_gadget_schedule(inst, schedule)
    ratio = online.total_utility / offline.total_utility
    return {
        "instance": f"{inst.n_jobs} jobs x {inst.cluster.n_servers} servers, T = {inst.horizon} (seed 0)",
        "model": f"GADGET (Alg. 1 + LP-RS-MDE) = {online.total_utility:.4g}; "
                 f"ddljs optimum {offline.total_utility:.4g}",
        "solver": result.solver,
        "objective": online.total_utility,
        "metric": "total utility (max)",
        # both schedules verified; the online one can never beat the proved offline optimum
        "verified": bool(online.ok and offline.ok and result.is_optimal and ratio <= 1 + 1e-6),
    }


def _broker_demo() -> dict[str, Any]:
    from clusteropt.instances.broker import broker_preset
    from clusteropt.models.broker.optimum import broker_offline_optimum
    from clusteropt.online import run_online
    from clusteropt.online.broker import make_policy
    from clusteropt.verify import check_broker_schedule

    inst = broker_preset("small", seed=0)
    run = run_online(make_policy("mlbroker"), inst, horizon=inst.horizon, seed=0)
    online = check_broker_schedule(inst, run.schedule)
    _, schedule, result = broker_offline_optimum(inst)
    offline = check_broker_schedule(inst, schedule)
    ratio = online.total_cost / offline.total_cost
    return {
        "instance": f"{inst.n_jobs} jobs x {inst.n_dcs} data centers, T = {inst.horizon} (seed 0)",
        "model": f"mlBroker (Alg. 1 + Alg. 2) cost {online.total_cost:.4g}; MILP (8) optimum "
                 f"{offline.total_cost:.4g}",
        "solver": f"clarabel + {result.solver}",
        "objective": online.total_cost,
        "metric": "total cost C1 + C2 + C3 + C4, USD (min)",
        # both verified; the online cost can never be below the proved offline optimum
        "verified": bool(online.ok and offline.ok and result.is_optimal and ratio >= 1 - 1e-6),
    }


def _ring_demo() -> dict[str, Any]:
    from clusteropt.algorithms.ring.offline import dynamic_opt_dp, dynamic_opt_value
    from clusteropt.instances import random_ring
    from clusteropt.models.ring.offline import ring_static_optimum
    from clusteropt.online.ring import run_ring
    from clusteropt.verify import check_ring_run

    # 3 servers and promised loads c k < n (epsilon 0.5, cluster_cap 1): no run may hold everything
    inst = random_ring(9, 3, 144, "phases", phase=36, seed=0)
    runs = {"dynamic": run_ring("dynamic", inst, seed=0, epsilon=0.5),
            "static": run_ring("static", inst, seed=0, epsilon=0.5, cluster_cap=1.0)}
    checks = {p: check_ring_run(inst, r) for p, r in runs.items()}
    opt_static = ring_static_optimum(inst)
    opt_dyn = dynamic_opt_dp(inst)
    verified = [check_ring_run(inst, {"initial": o.initial, "migrations": o.migrations,
                                      "augmentation": o.augmentation}) for o in (opt_static, opt_dyn)]
    # no online run may beat the exact dynamic optimum at its own capacity c k
    at_ck = {p: dynamic_opt_value(inst, int(r.augmentation * inst.k)) for p, r in runs.items()}
    dyn, static = checks["dynamic"], checks["static"]
    assert opt_static.value is not None  # no time limit: the MILP is solved
    return {
        "instance": f"n = {inst.n} processes, {inst.servers} servers, {inst.n_requests} phase requests (seed 0)",
        "model": f"dynamic (Sec. 3) {dyn.value:.4g}, static (Sec. 4) {static.value:.4g}; OPT_dyn (DP) "
                 f"{opt_dyn.value:.4g}, OPT_static (MILP) {opt_static.value:.4g}",
        "solver": opt_static.result.solver,
        "objective": dyn.value,
        "metric": "communication + migration cost (min)",
        "verified": bool(all(c.feasible for c in checks.values()) and all(c.feasible for c in verified)
                         and opt_static.proven_optimal and abs(verified[0].value - opt_static.value) <= 1e-9
                         and abs(verified[1].value - opt_dyn.value) <= 1e-9 and opt_dyn.value <= opt_static.value
                         and all(checks[p].value >= at_ck[p] for p in runs)),
    }


register_system(SystemSpec("coflow", "001 (slides: LP, primal-dual, moved blocks)", _coflow_demo))
register_system(SystemSpec("realtime", "002 (Alg. 2 against the exact region)", _realtime_demo))
register_system(SystemSpec("gadget", "000 (Alg. 1 + Alg. 2 vs the offline DDLJS MILP)", _gadget_demo))
register_system(SystemSpec("broker", "003 (mlBroker: Alg. 1 + Alg. 2 vs the offline MILP (8))", _broker_demo))
register_system(SystemSpec("ring", "004 (dynamic and static algorithms vs the exact offline optima)", _ring_demo))
