"""Experiment ``worker-placement-gap``: the reference system's integrality gap, swept.

One slot of paper 000's resource model (Eqs. (2) and (4), :mod:`clusteropt.models.worker_placement`)
on random instances with the Sec. VI server mix, the CPU and memory each worker asks for
multiplied by ``demand_scale``.  At scale 1 only GPUs bind, every worker takes one, and the LP
relaxation is integral; from scale 2 on CPU and memory bind too, the problem becomes a
multi-dimensional knapsack, and rounding the LP loses.  Two policies per instance:

- ``ilp``: the exact integer program, solved with HiGHS;
- ``lp-floor``: the LP relaxation, each ``y_is`` rounded down (a feasible integral placement,
  since every coefficient of (2) and (4) is non-negative).

Both placements are checked by :func:`clusteropt.verify.check_worker_placement`, whose utility
is the one reported; ``lp_bound`` is the relaxation's optimum, an upper bound on both.  It is
the harness's worked example: a real solve in every cell, and its figures and tables.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any

import numpy as np

from clusteropt.experiments.spec import Experiment, register_experiment

__all__ = ["WORKER_PLACEMENT_GAP", "run_worker_placement_cell"]


def run_worker_placement_cell(params: dict[str, Any], seed: int, policy: str) -> dict[str, Any]:
    """One cell: build the instance from ``seed`` (CPU and memory per worker times
    ``params["demand_scale"]``), place workers with ``policy``, verify.

    Returns ``utility`` (verified), ``lp_bound``, ``ratio = utility / lp_bound``, ``verified``,
    ``workers`` placed, and ``build_seconds`` / ``solve_seconds`` of the main solve.
    """
    from clusteropt.instances import random_worker_placement
    from clusteropt.models.worker_placement import build_worker_placement
    from clusteropt.solvers import solve
    from clusteropt.verify import check_worker_placement

    if policy not in ("ilp", "lp-floor"):
        raise ValueError(f"policy = {policy!r}; expected 'ilp' or 'lp-floor'")
    inst = random_worker_placement(int(params["n_jobs"]), int(params["n_servers"]), seed=seed)
    per_worker = inst.per_worker.copy()
    per_worker[:, 1:] *= float(params["demand_scale"])  # columns: gpu, cpu, mem
    inst = dataclasses.replace(inst, per_worker=per_worker)
    start = time.perf_counter()
    lp_model = build_worker_placement(inst, relax=True)
    lp_build = time.perf_counter() - start
    lp = solve(lp_model, "highs")
    if policy == "ilp":
        start = time.perf_counter()
        model = build_worker_placement(inst)
        build = time.perf_counter() - start
        result = solve(model, "highs")
        workers = np.rint(result.values["y"])
    else:
        build, result = lp_build, lp
        workers = np.floor(lp.values["y"] + 1e-9)
    check = check_worker_placement(inst, workers)
    check.raise_if_infeasible()
    lp_bound = lp.objective
    assert lp_bound is not None  # solve() raises unless it proved the LP optimal
    return {
        "utility": check.value,
        "lp_bound": lp_bound,
        "ratio": check.value / lp_bound if lp_bound > 0 else float("nan"),
        "verified": check.feasible,
        "workers": int(workers.sum()),
        "build_seconds": build,
        "solve_seconds": result.solve_seconds,
    }


def _ratio_figure(table):
    from clusteropt.experiments.plots import line_plot

    return line_plot(table, "demand_scale", "ratio", hue="policy", ylabel="utility / LP bound",
                     xlabel="CPU and memory demand (x the generator's)",
                     title="worker placement: utility relative to the LP bound (mean, 95% CI)")


def _ratio_table(table):
    ok = table[table.status == "ok"]
    return (ok.pivot_table(index=["n_jobs", "demand_scale"], columns="policy", values="ratio", aggfunc="mean")
            .reset_index().rename_axis(columns=None))


WORKER_PLACEMENT_GAP = register_experiment(
    Experiment(
        name="worker-placement-gap",
        run=run_worker_placement_cell,
        grid={"n_jobs": [8, 16, 32, 64], "n_servers": [8], "demand_scale": [1.0, 2.0, 3.0, 4.0]},
        seeds=list(range(10)),
        policies=["ilp", "lp-floor"],
        description="one-slot worker placement: ILP vs LP-floor rounding vs the LP bound",
        paper="000 Eqs. (2), (4)",
        root_seed=20261122,
        timeout=120.0,
        quick={"grid": {"n_jobs": [8, 16], "demand_scale": [1.0, 3.0]}, "seeds": [0, 1], "timeout": 60.0},
        figures={"ratio": _ratio_figure},
        tables={"mean-ratio": _ratio_table},
    )
)
