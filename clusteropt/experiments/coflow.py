"""Coflow experiments (paper 001): every ordering x scheduler against the LP lower bound.

``coflow-ratios``
    Synthetic trace-like workloads (:func:`clusteropt.instances.random_coflows`) over sizes,
    loads, and with and without release times.  Each cell runs one ``ordering+scheduler``
    policy, verifies the schedule (:func:`clusteropt.verify.check_coflow_schedule`), and divides
    its total weighted CCT by the concurrent-open-shop LP bound (row generation).
``coflow-trace``
    The same table on a coflow-benchmark trace file given as the ``trace`` parameter
    (``--param trace=FB2010-1Hr-150-0.txt``), with the import's ``unit_mb`` and ``slot_ms``.
``coflow-arrivals``
    Arrivals of increasing spread (``arrivals``: all released at slot 0, then Poisson at offered
    load 3, 1.5, 0.9 and 0.5 of the busiest port), unit weights (CCT, what coflow users compare):
    every ordering with each schedule computed once (``+greedy``, the paper's ``+paper`` and
    Varys's MADD pacing ``+madd``; clairvoyant for primal-dual, sincronia and lp-order) and
    with the greedy re-planned on the remaining demand at every arrival (``+online``,
    :mod:`clusteropt.algorithms.coflow.online`).  Both objectives; ``online`` says whether the
    run decided each slot from released coflows only.

A cell that produces a schedule the verifier rejects raises, so it is recorded as failed and
never reported as a result.  The LP bound of an instance is computed once per cell process and
reused by the other policies of the same instance.
"""

from __future__ import annotations

import functools
import json
from typing import Any

from clusteropt.experiments.spec import Experiment, register_experiment

__all__ = ["COFLOW_POLICIES", "run_coflow_cell"]

#: ``ordering+scheduler`` pairs compared by the coflow experiments.
COFLOW_POLICIES = (
    "primal-dual+greedy", "primal-dual+paper", "lp-order+greedy", "lp-order+paper", "sincronia+greedy",
    "sebf+greedy", "fifo+greedy", "smallest-first+greedy", "largest-first+greedy",
)
# the quick coflow-trace reads the small sample trace shipped with the package (by name, so its cell
# keys are the same on every machine); the full variant reads the user's downloaded trace
_SAMPLE_TRACE = "package:coflow/small_benchmark.txt"


@functools.lru_cache(maxsize=4)
def _instance_and_bound(params_json: str, seed: int):
    from clusteropt.instances import random_coflows, read_coflow_benchmark
    from clusteropt.models.coflow.bound import cos_lower_bound

    params = json.loads(params_json)
    if "arrivals" in params:
        spread = str(params["arrivals"])
        load = 0.9 if spread == "at-0" else float(spread.removeprefix("load-"))
        inst = random_coflows(int(params["n_coflows"]), int(params["n_ports"]), load=load,
                              release=spread != "at-0", weights=str(params["weights"]), seed=seed)
    elif "trace" in params:
        from clusteropt.data import resolve

        inst = read_coflow_benchmark(resolve(str(params["trace"])), unit_mb=float(params["unit_mb"]),
                                     slot_ms=float(params["slot_ms"]))
    else:
        inst = random_coflows(int(params["n_coflows"]), int(params["n_ports"]), load=float(params["load"]),
                              release=bool(params["release"]), weights=str(params["weights"]), seed=seed)
    value, completion, rowgen = cos_lower_bound(inst)
    return inst, (value, completion, rowgen.converged), rowgen


def run_coflow_cell(params: dict[str, Any], seed: int, policy: str) -> dict[str, Any]:
    """One cell: instance from ``params`` and ``seed``, then ``policy = "<ordering>+<scheduler>"``
    (scheduler ``online``: the greedy re-planned at every arrival).
    """
    from clusteropt.algorithms.coflow.pipeline import run_coflow

    ordering, _, scheduler = policy.partition("+")
    online = scheduler == "online"
    inst, bound, rowgen = _instance_and_bound(json.dumps(params, sort_keys=True), seed)
    run = run_coflow(inst, ordering, "greedy" if online else scheduler, lower_bound=True, bound=bound,
                     online=online)
    if not run.verified:
        raise RuntimeError(f"{policy}: the schedule failed verification: {'; '.join(run.violations[:3])}")
    late = run.from_release(inst)
    return {
        "total_weighted_cct": run.total_weighted_cct,
        "lower_bound": run.lower_bound,
        "ratio": run.ratio,
        "cct_from_release": late["total"],
        "mean_cct_slots": late["mean"],
        "lower_bound_from_release": late["lower_bound"],
        "ratio_from_release": late["ratio"],
        "bound_converged": bool(bound[2]),
        "verified": run.verified,
        "online": run.online,
        "replan_slots": run.replan_slots,
        "coflows": inst.n_coflows,
        "flows": inst.n_flows,
        "units": int(inst.units.sum()),
        "makespan": run.schedule.makespan,
        "lp_rounds": rowgen.rounds,
        "order_seconds": run.seconds["order"],
        "schedule_seconds": run.seconds["schedule"],
        "verify_seconds": run.seconds["verify"],
        "lp_seconds": rowgen.model_build_seconds + rowgen.total_seconds,
    }


def _ratio_table(table):
    ok = table[table.status == "ok"]
    keys = [c for c in ("n_coflows", "load", "release", "trace") if c in ok.columns]
    return ok.pivot_table(index=keys, columns="policy", values="ratio", aggfunc="mean").reset_index().rename_axis(
        columns=None)


#: The ``coflow-arrivals`` schedules: the three of ``run_coflow`` ordered once, and the greedy re-planned.
ARRIVAL_SCHEDULES = ("greedy", "paper", "madd", "online")
#: The ``coflow-arrivals`` policies: every ordering x :data:`ARRIVAL_SCHEDULES`.
ARRIVAL_POLICIES = tuple(f"{o}+{s}" for o in ("primal-dual", "sincronia", "sebf", "lp-order", "fifo",
                                               "smallest-first", "largest-first") for s in ARRIVAL_SCHEDULES)
ARRIVALS = ["at-0", "load-3", "load-1.5", "load-0.9", "load-0.5"]


def _arrivals_table(table):
    ok = table[table.status == "ok"]
    out = ok.groupby(["arrivals", "policy"], sort=False).agg(
        mean_cct_slots=("mean_cct_slots", "mean"), ratio_from_release=("ratio_from_release", "mean"),
        ratio=("ratio", "mean"), online=("online", "all"), seeds=("seed", "nunique")).reset_index()
    rank = {a: k for k, a in enumerate(ARRIVALS)}
    return out.sort_values(["arrivals", "mean_cct_slots"],
                           key=lambda c: c.map(rank) if c.name == "arrivals" else c)


def _arrivals_lines(table):
    """One panel per ordering: mean CCT (log scale) of each schedule over the spreads, in order;
    the best run of any policy at each spread dotted in every panel for reference.
    """
    import numpy as np
    from matplotlib.figure import Figure

    from clusteropt.experiments.plots import policy_style

    means = _arrivals_table(table)
    x = {a: k for k, a in enumerate(ARRIVALS)}
    orderings = list(dict.fromkeys(p.partition("+")[0] for p in ARRIVAL_POLICIES if p in set(means.policy)))
    best = means.groupby("arrivals").mean_cct_slots.min()
    best = best.iloc[np.argsort(best.index.map(x).to_numpy())]
    cols = min(4, len(orderings))
    rows_n = -(-len(orderings) // cols)
    fig = Figure(layout="constrained", figsize=(3.6 * cols, 3.2 * rows_n))
    axes = np.atleast_1d(fig.subplots(rows_n, cols, sharey=True)).ravel()
    for ax, ordering in zip(axes, orderings):
        for schedule in ARRIVAL_SCHEDULES:
            policy = f"{ordering}+{schedule}"
            rows = means[means.policy == policy].sort_values("arrivals", key=lambda c: c.map(x))
            if rows.empty:
                continue
            how = "online" if bool(rows.online.all()) else "offline"
            ax.plot(rows.arrivals.map(x), rows.mean_cct_slots, linewidth=2.5 if schedule == "online" else 1.5,
                    label=f"{policy} ({how})", **(policy_style(policy) or {}))
        ax.plot(best.index.map(x), best.to_numpy(), color="black", linestyle=":", linewidth=1.0,
                label="best of all")
        ax.set_yscale("log")
        ax.set_xticks(range(len(ARRIVALS)), ARRIVALS, fontsize="small")
        ax.set_title(ordering)
        ax.legend(fontsize="x-small")
    for ax in axes[len(orderings):]:
        ax.set_visible(False)
    fig.supylabel("mean CCT from release (slots, log scale)")
    fig.supxlabel("arrivals: all at slot 0, then Poisson at decreasing offered load (more spread)")
    fig.suptitle("coflows arriving over time, mean over seeds")
    return fig


def _ratio_bars(table):
    from clusteropt.experiments.plots import normalized_bars

    group = "release" if "release" in table.columns else None
    return normalized_bars(table, "ratio", baseline="primal-dual+greedy", group=group,
                           ylabel="ratio to the LP bound, relative to primal-dual+greedy",
                           title="coflows: total weighted CCT / LP bound (mean over instances)")


def _ratio_cdf(table):
    from clusteropt.experiments.plots import cdf_plot

    return cdf_plot(table, "ratio", xlabel="total weighted CCT / LP bound",
                    title="coflows: ratio to the LP bound over instances")


register_experiment(
    Experiment(
        name="coflow-ratios",
        run=run_coflow_cell,
        grid={"n_coflows": [50, 150], "n_ports": [30], "load": [0.5, 0.9], "release": [False, True],
              "weights": ["random"]},
        seeds=list(range(5)),
        policies=list(COFLOW_POLICIES),
        description="every ordering x scheduler / the LP bound on trace-like synthetic coflows",
        paper="001 (slides: 4- and 5-approximations)",
        root_seed=1001,
        timeout=600.0,
        quick={"grid": {"n_coflows": [12], "n_ports": [6], "load": [0.9]}, "seeds": [0, 1], "timeout": 120.0},
        figures={"ratio-bars": _ratio_bars, "ratio-cdf": _ratio_cdf},
        tables={"ratio": _ratio_table},
    )
)

register_experiment(
    Experiment(
        name="coflow-trace",
        run=run_coflow_cell,
        grid={"trace": ["FB2010-1Hr-150-0.txt"], "unit_mb": [1.0], "slot_ms": [1000.0]},
        seeds=[0],
        policies=list(COFLOW_POLICIES),
        description="every ordering x scheduler / the LP bound on a coflow-benchmark trace (--param trace=PATH)",
        paper="001",
        root_seed=1001,
        timeout=3600.0,
        quick={"grid": {"trace": [_SAMPLE_TRACE]}, "timeout": 120.0},
        figures={"ratio-bars": _ratio_bars},
        tables={"ratio": _ratio_table},
    )
)

register_experiment(
    Experiment(
        name="coflow-arrivals",
        run=run_coflow_cell,
        grid={"n_coflows": [150], "n_ports": [30], "arrivals": ARRIVALS, "weights": ["unit"]},
        seeds=list(range(5)),
        policies=list(ARRIVAL_POLICIES),
        description="every ordering offline and re-planned online (+online) vs the spread of arrivals, "
                    "both objectives",
        paper="001 (coflows over time)",
        root_seed=1001,
        timeout=600.0,
        quick={"grid": {"n_coflows": [20], "n_ports": [6], "arrivals": ["at-0", "load-0.9"]}, "seeds": [0],
               "timeout": 120.0},
        figures={"cct": _arrivals_lines},
        tables={"arrivals": _arrivals_table},
    )
)
