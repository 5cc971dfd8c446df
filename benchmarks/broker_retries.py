"""Paper 003: how often Clarabel fails problem (10) under each setting, along A_fractional's runs.

A_fractional (``clusteropt.online.broker.AFractional``) solves the regularized one-slot problem
(10) every slot.  With Clarabel 0.11's default settings a small share of these problems stall
("InsufficientProgress", reported by CVXPY as a solver error), which used to stop the whole
mlBroker run; ``CLARABEL_RETRIES`` lists the settings tried next.  This benchmark is the
measurement behind that list: on the instances of the registered experiments
``broker-rounding-dcs`` (paper preset, 30 jobs, T = 20, R = 5 .. 20), ``broker-rounding`` (its
corner values of ``P_i`` and data) and ``broker-ratio`` (small preset, 700 GB), trials 0-2, it
walks A_fractional's trajectory and solves every slot's problem under each setting of
``CONFIGS``, counting the solves that end without an optimal status, and timing each solve.
The trajectory (the ``v(t - 1)`` handed to the next slot) is that of the first setting, in
``CONFIGS`` order, that ends optimal: what AFractional does with its default retries.  Where
several settings end optimal their objectives are compared (``max_rel_objective_spread``: the
settings must not change the answer).

Reproduce: ``python -m benchmarks.broker_retries`` (about 8 minutes on one core; ``--quick``: two
small instances, printed only).
"""

from __future__ import annotations

import time
from collections import Counter

import numpy as np

from benchmarks._report import finish, header, output_dir, parser
from clusteropt.experiments.broker import broker_instance
from clusteropt.models.broker.regularized import build_broker_regularized, decision_from_regularized
from clusteropt.online.broker import CLARABEL_RETRIES
from clusteropt.solvers import solve

NAME = "broker_retries"
#: Clarabel settings compared; "defaults" first and then CLARABEL_RETRIES (AFractional's order),
#: then two more that were candidates.
CONFIGS: dict[str, dict] = {
    "defaults": {},
    **{", ".join(f"{k}={v}" for k, v in opts.items()): dict(opts) for opts in CLARABEL_RETRIES},
    "static_regularization_constant=1e-07": {"static_regularization_constant": 1e-7},
    "equilibrate scaling 1e-6 .. 1e6": {"equilibrate_min_scaling": 1e-6, "equilibrate_max_scaling": 1e6},
}


def _cells(trials) -> list[dict]:
    cells = []
    for trial in trials:
        for n_dcs in (5, 10, 15, 20):
            cells.append({"preset": "paper", "n_jobs": 30, "horizon": 20, "n_dcs": n_dcs, "trial": trial})
        for cap in (16.0, 66.0):
            for data in (100.0, 700.0):
                cells.append({"preset": "paper", "n_jobs": 30, "horizon": 20, "capacity": cap,
                              "data_per_slot": data, "trial": trial})
        for horizon in (10, 20):
            for per_slot in (1, 3):
                cells.append({"preset": "small", "jobs_per_slot": per_slot, "horizon": horizon,
                              "data_per_slot": 700.0, "trial": trial})
    return cells


FULL = {"cells": _cells((0, 1, 2)), "price_form": "tight", "epsilon": 0.1}
QUICK = {"cells": [{"preset": "small", "jobs_per_slot": 1, "horizon": 10, "data_per_slot": 700.0, "trial": 1},
                   {"preset": "small", "jobs_per_slot": 3, "horizon": 10, "data_per_slot": 700.0, "trial": 0}],
         "price_form": "tight", "epsilon": 0.1}


def _status(res) -> str:
    raw = res.raw.get("status")
    return f"{res.termination.name} ({raw})" if raw else res.termination.name


def walk(params: dict, price_form: str, epsilon: float) -> dict:
    """Every slot of one instance under every setting; the per-instance record."""
    inst = broker_instance(params)
    v = np.zeros((inst.n_jobs, inst.n_dcs))
    slots = []
    for t in range(1, inst.horizon + 1):
        if len(inst.active(t)) == 0:
            continue
        record = {"slot": t, "jobs": len(inst.active(t)), "results": {}}
        carried = None
        objectives = []
        for name, options in CONFIGS.items():
            model = build_broker_regularized(inst, t, v, epsilon=epsilon, price_form=price_form)
            start = time.perf_counter()
            res = solve(model, "clarabel", raise_on_nonoptimal=False, options=dict(options) or None)
            wall = time.perf_counter() - start
            record["results"][name] = {"optimal": bool(res.is_optimal), "status": _status(res), "wall_s": wall,
                                       "solve_s": float(res.solve_seconds or 0.0),
                                       "objective": float(res.objective) if res.is_optimal else None}
            if res.is_optimal:
                objectives.append(float(res.objective))
                if carried is None:
                    carried = decision_from_regularized(model)
        if objectives:
            scale = max(1.0, abs(float(np.median(objectives))))
            record["rel_objective_spread"] = (max(objectives) - min(objectives)) / scale
        slots.append(record)
        if carried is None:
            record["unsolved"] = True
            break  # no setting solves it: the trajectory ends here (AFractional would raise)
        act = inst.active_mask(t)
        v = np.where(act[:, None], carried.v, 0.0)
    return {"params": params, "name": inst.name, "slots": slots}


def summarize(instances: list[dict]) -> dict:
    slots = [s for rec in instances for s in rec["slots"]]
    out = {"instances": len(instances), "slot_problems": len(slots),
           "unsolved_by_every_setting": sum(bool(s.get("unsolved")) for s in slots),
           "max_rel_objective_spread": max((s.get("rel_objective_spread", 0.0) for s in slots), default=0.0),
           "configs": {}}
    for name in CONFIGS:
        results = [s["results"][name] for s in slots]
        failed = [r for r in results if not r["optimal"]]
        out["configs"][name] = {
            "failed": len(failed),
            "failed_statuses": dict(Counter(r["status"] for r in failed)),
            "solve_median_s": float(np.median([r["wall_s"] for r in results])) if results else None,
            "solve_total_s": float(np.sum([r["wall_s"] for r in results])),
        }
    # what AFractional's ladder does: the defaults, then CLARABEL_RETRIES in order
    ladder = list(CONFIGS)[: 1 + len(CLARABEL_RETRIES)]
    attempts = Counter()
    for s in slots:
        k = next((i + 1 for i, name in enumerate(ladder) if s["results"][name]["optimal"]), None)
        attempts["none" if k is None else str(k)] += 1
    out["ladder_attempts"] = dict(sorted(attempts.items()))
    return out


def compact(instances: list[dict]) -> list[dict]:
    """Per instance its slot count and only the slots where some setting failed (the JSON stays small)."""
    return [{"params": rec["params"], "name": rec["name"], "slot_problems": len(rec["slots"]),
             "slots_with_a_failure": [s for s in rec["slots"]
                                      if not all(r["optimal"] for r in s["results"].values())]}
            for rec in instances]


def to_markdown(report: dict) -> str:
    summ = report["summary"]
    lines = [
        f"# {NAME}",
        "",
        f"recorded {report['created']} on {report['machine']['platform']}, {report['machine']['cpu_count']} CPUs; "
        f"clarabel {report['versions'].get('clarabel')}, cvxpy {report['versions'].get('cvxpy')}; "
        f"whole benchmark {report['wall_s']:.0f} s wall.",
        "",
        "Reproduce: `python -m benchmarks.broker_retries`.  Problem (10) (price form "
        f"`{report['parameters']['price_form']}`, epsilon {report['parameters']['epsilon']}) of every slot along "
        "A_fractional's run, solved under each Clarabel setting; failed = ended without an optimal status.",
        "",
        f"{summ['instances']} instances, {summ['slot_problems']} slot problems; unsolved by every setting: "
        f"{summ['unsolved_by_every_setting']}; largest relative spread of the optimal objectives across settings: "
        f"{summ['max_rel_objective_spread']:.1e}.",
        "",
        "| setting | failed | statuses of the failures | median s a solve | total s |",
        "| :--- | ---: | :--- | ---: | ---: |",
    ]
    for name, c in summ["configs"].items():
        statuses = ", ".join(f"{k}: {v}" for k, v in c["failed_statuses"].items()) or "-"
        lines.append(f"| {name} | {c['failed']} | {statuses} | {c['solve_median_s']:.3f} "
                     f"| {c['solve_total_s']:.1f} |")
    attempts = ", ".join(f"{k}: {v}" for k, v in summ["ladder_attempts"].items())
    lines += ["", "AFractional's ladder (defaults, then `CLARABEL_RETRIES` in order): slot problems by attempt "
              f"that first ended optimal: {attempts}.", ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = parser(NAME, __doc__, "two small instances; print only").parse_args(argv)
    params = dict(QUICK if args.quick else FULL)
    out = output_dir(args)
    start = time.perf_counter()
    report = {**header(NAME, ("clusteropt", "cvxpy", "clarabel", "numpy")), "parameters": params,
              "quick": bool(args.quick), "configs": CONFIGS}
    instances = [walk(p, params["price_form"], params["epsilon"]) for p in params["cells"]]
    report["summary"] = summarize(instances)
    report["instances"] = compact(instances)
    finish(NAME, report, to_markdown, out, start)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
