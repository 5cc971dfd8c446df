"""Paper 003: where mlBroker's integral step loses against A_fractional, per cost term; what the slot MILP buys.

On the paper's setting (Sec. 6.1: 100 jobs, T = 50, R = 15, K = 4) A_fractional's cost of (9)
matches the lower bound P_f closely, while mlBroker (A_fractional then A_round, Alg. 2) ends several
per cent above Central and OASiS.  For each data size this benchmark runs, on the same instance:

* ``mlbroker`` -- A_fractional + A_round (the paper's integral step, the package's completion);
  its A_fractional costs (``fractional``, from the slot info) are the fractional trajectory;
* ``mlbroker-plus`` -- A_fractional + the cheaper of A_round and the slot's exact MILP
  (:mod:`clusteropt.rounding.broker.slot_milp`), in each of ``VARIANTS`` (what of A_fractional's
  solution the MILP keeps fixed, and its gap; the first is the default);
* ``central`` and ``oasis`` -- the Sec. 6.3 baselines;
* ``P_f`` -- the LP relaxation (9) with the hull price rows, a lower bound on every schedule.

Per policy it records C1..C4 and the total (the independent checker's recount), the total over
P_f, and what an integral step can lose against the fractional one: ``extra_workers`` (workers
beyond ``N_i(t)``, summed over jobs and slots), ``ps_moves`` (job-slots whose PS is in another DC
than in the job's previous slot) and ``lost_discounts`` (slot, DC, resource triples where
A_fractional's amount ``h`` reaches the threshold ``l`` of the discounted price but the integral
decision's does not).  ``mlbroker-plus`` adds the slot MILP's time per slot (build and solve
apart: median and max) and how often its decision was kept over A_round's.

The last cell reads the deployment cost per GB of data instead of per GB of the model
(``deploy_per="data"``, :func:`~clusteropt.instances.broker.random_broker`).

Reproduce: ``python -m benchmarks.broker_integral_step`` (about 40 minutes on one core;
``--quick``: a 12-job instance, printed only).
"""

from __future__ import annotations

import math
import time

import numpy as np

from benchmarks._report import finish, header, output_dir, parser
from clusteropt.experiments.broker import broker_instance
from clusteropt.models.broker.milp import build_broker_milp
from clusteropt.online import run_online
from clusteropt.online.broker import make_policy
from clusteropt.rounding.broker.slot_milp import DEFAULT_SLOT_FIX, DEFAULT_SLOT_GAP
from clusteropt.solvers.direct import solve_highs_direct
from clusteropt.verify import check_broker_schedule

NAME = "broker_integral_step"
#: mlbroker-plus variants compared: (slot_fix, slot_gap); the first is the policy's default.
VARIANTS = ((DEFAULT_SLOT_FIX, DEFAULT_SLOT_GAP), ("none", DEFAULT_SLOT_GAP), ("integral", DEFAULT_SLOT_GAP))
FULL = {"cells": [{"preset": "paper", "n_jobs": 100, "horizon": 50, "data_per_slot": d, "trial": 0}
                  for d in (100.0, 300.0, 500.0, 700.0)]
        + [{"preset": "paper", "n_jobs": 100, "horizon": 50, "data_per_slot": 500.0, "deploy_per": "data",
            "trial": 0}], "variants": VARIANTS, "seed": 0}
QUICK = {"cells": [{"preset": "small", "n_jobs": 12, "horizon": 6, "data_per_slot": 500.0, "trial": 0}],
         "variants": VARIANTS[:1], "seed": 0}


def _integral_measures(inst, schedule, frac_h: list[np.ndarray] | None) -> dict:
    """Extra workers, PS moves and (given A_fractional's amounts per slot) lost discounts."""
    extra = moves = lost = 0
    last_ps: dict[int, int] = {}
    for k, dec in enumerate(schedule.slots):
        t = k + 1
        jobs = inst.active(t)
        need = inst.required_workers(t)[jobs]
        extra += int((dec.y[jobs].sum(axis=1) - need).sum())
        for i in jobs.tolist():
            ps = int(np.argmax(dec.s[i]))
            moves += int(i in last_ps and last_ps[i] != ps)
            last_ps[i] = ps
        if frac_h is not None:
            h = inst.resource_amount(dec.y, dec.s)
            lost += int(((frac_h[k] >= inst.threshold - 1e-9) & (h < inst.threshold - 1e-9)).sum())
    return {"extra_workers": extra, "ps_moves": moves, "lost_discounts": lost if frac_h is not None else None}


def _row(name: str, inst, run, frac_h, pf: float) -> dict:
    check = check_broker_schedule(inst, run.schedule)
    if not check.ok:
        raise RuntimeError(f"{name} on {inst.name}: the schedule failed verification: {check.violations[:3]}")
    totals = check.cost_totals()
    row = {"policy": name, **{k: float(v) for k, v in totals.items()}, "vs_pf": totals["total"] / pf,
           "verified": check.ok, "seconds": run.seconds,
           **_integral_measures(inst, run.schedule, frac_h)}
    milp = [d for d in run.slot_info if "slot_milp_chosen" in d]
    if milp:
        build = [d["slot_milp_build_seconds"] for d in milp]
        solve = [d["slot_milp_solve_seconds"] for d in milp]
        whole = [d["round_seconds"] for d in milp]
        row.update(milp_kept=sum(d["slot_milp_chosen"] == "milp" for d in milp), slots=len(milp),
                   milp_build_median_s=float(np.median(build)), milp_solve_median_s=float(np.median(solve)),
                   milp_solve_max_s=float(np.max(solve)), integral_step_median_s=float(np.median(whole)),
                   milp_not_optimal=sum(d["slot_milp_status"] not in ("OPTIMAL", "NOT_RUN") for d in milp))
    return row


def measure(params: dict, variants, seed: int) -> dict:
    """Every policy on one instance: the per-instance record."""
    inst = broker_instance(params)
    start = time.perf_counter()
    pf_model = build_broker_milp(inst, price_form="tight", relax=True)
    pf_res = solve_highs_direct(pf_model)
    pf = float(pf_res.objective)
    record = {"params": params, "name": inst.name, "P_f": pf, "P_f_seconds": time.perf_counter() - start,
              "rows": []}
    base = make_policy("mlbroker", keep_trace=True)
    run = run_online(base, inst, horizon=inst.horizon, seed=seed)
    frac_h = [inst.resource_amount(slot["decision"].y, slot["decision"].s) for slot in base.trace_]
    frac = {c: math.fsum(float(d[f"fractional_{c}"]) for d in run.slot_info) for c in ("C1", "C2", "C3", "C4")}
    record["rows"].append({"policy": "A_fractional", **frac, "total": math.fsum(frac.values()),
                           "vs_pf": math.fsum(frac.values()) / pf, "verified": None})
    record["rows"].append(_row("mlbroker", inst, run, frac_h, pf))
    for fix, gap in variants:
        plus_run = run_online(make_policy("mlbroker-plus", slot_fix=fix, slot_gap=gap), inst,
                              horizon=inst.horizon, seed=seed)
        record["rows"].append(_row(f"mlbroker-plus (fix {fix}, gap {gap:g})", inst, plus_run, frac_h, pf))
    for name in ("central", "oasis"):
        record["rows"].append(_row(name, inst, run_online(make_policy(name), inst, horizon=inst.horizon,
                                                          seed=seed), frac_h, pf))
    return record


def _fmt(value, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def to_markdown(report: dict) -> str:
    lines = [
        f"# {NAME}",
        "",
        f"recorded {report['created']} on {report['machine']['platform']}, {report['machine']['cpu_count']} CPUs "
        f"(load average after: {report['machine'].get('load_average_after')}); highspy "
        f"{report['versions'].get('highspy')}, clarabel {report['versions'].get('clarabel')}; whole benchmark "
        f"{report['wall_s']:.0f} s wall.",
        "",
        "Reproduce: `python -m benchmarks.broker_integral_step`.  Seed "
        f"{report['parameters']['seed']}; totals are the checker's recount (A_fractional's: its cost of (9)); "
        "`lost disc.` counts (slot, DC, resource) where A_fractional's amount reaches the discount "
        "threshold and the policy's does not (A_fractional does not depend on the integral step, so "
        "one trajectory serves every policy).",
        "",
    ]
    for rec in report["instances"]:
        p = rec["params"]
        reading = "data" if p.get("deploy_per") == "data" else "model"
        lines += [f"## {rec['name']}: {p['n_jobs']} jobs, T = {p['horizon']}, {p['data_per_slot']:g} GB per job "
                  f"and slot, c_i per GB of {reading}, trial {p['trial']}; P_f = {rec['P_f']:.2f}", "",
                  "| policy | C1 | C2 | C3 | C4 | total | / P_f | extra workers | PS moves | lost disc. "
                  "| MILP kept | MILP solve median / max s | integral step median s |",
                  "| :--- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
        for r in rec["rows"]:
            kept = f"{r['milp_kept']} / {r['slots']}" if "milp_kept" in r else "-"
            times = (f"{r['milp_solve_median_s']:.2f} / {r['milp_solve_max_s']:.2f}"
                     if "milp_solve_median_s" in r else "-")
            lines.append(
                f"| {r['policy']} | {r['C1']:.1f} | {r['C2']:.1f} | {r['C3']:.2f} | {r['C4']:.1f} "
                f"| {r['total']:.1f} | {r['vs_pf']:.4f} | {_fmt(r.get('extra_workers'), 'd')} "
                f"| {_fmt(r.get('ps_moves'), 'd')} "
                f"| {_fmt(r.get('lost_discounts'), 'd')} | {kept} | {times} "
                f"| {_fmt(r.get('integral_step_median_s'), '.2f')} |")
        lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = parser(NAME, __doc__, "a 12-job instance; print only").parse_args(argv)
    params = dict(QUICK if args.quick else FULL)
    out = output_dir(args)
    start = time.perf_counter()
    report = {**header(NAME, ("clusteropt", "highspy", "cvxpy", "clarabel", "numpy")),
              "parameters": {**params, "variants": [list(v) for v in params["variants"]]},
              "quick": bool(args.quick)}
    report["instances"] = [measure(p, params["variants"], params["seed"]) for p in params["cells"]]
    finish(NAME, report, to_markdown, out, start)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
