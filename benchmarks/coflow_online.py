"""Coflows arriving over time: every ordering offline and re-planned online, on the CCT scale.

A trace-like synthetic workload at the public Facebook trace's scale (``random_coflows``: 526
coflows, 150 ports, Poisson arrivals at offered load 0.9 of the busiest port, heavy-tailed widths
and sizes, unit weights as in the trace), 5 seeds.  Every ordering runs with the greedy schedule
once offline (ordered once; clairvoyant for primal-dual, sincronia and lp-order) and once with
``--online`` (re-planned on the remaining demand at every arrival).  ``lp-order`` online would
solve the LP of the residual instance at each of about 500 arrivals, so it is left out here
(``tests/algorithms/test_coflow_online.py`` runs it on small inputs).

Recorded per run: the mean CCT (completion - release, slots), the total weighted CCT counted from
release over the LP bound on that scale (bound - sum of w r), the paper's objective (from slot 0)
over the LP bound, the time of ordering + schedule, and the outside cut test: the coflows released
after the median release are dropped and the run repeated; it passes when every slot up to the
median + 1 is unchanged.  Every schedule is checked by the verifier.

Run ``python -m benchmarks.coflow_online`` (writes ``benchmarks/results/``) or ``--quick``.
"""

from __future__ import annotations

import time

import numpy as np

from benchmarks._report import finish, header, output_dir, parser
from clusteropt.algorithms.coflow.pipeline import POLICIES, run_coflow
from clusteropt.instances import random_coflows
from clusteropt.instances.coflow.instance import CoflowInstance
from clusteropt.models.coflow.bound import cos_lower_bound

NAME = "coflow_online"
FULL = {"n_coflows": 526, "n_ports": 150, "load": 0.9, "weights": "unit", "max_units": 1000,
        "seeds": [0, 1, 2, 3, 4]}
QUICK = {"n_coflows": 40, "n_ports": 10, "load": 0.9, "weights": "unit", "max_units": 50, "seeds": [0]}


def cut_instance(inst: CoflowInstance, t: int) -> CoflowInstance:
    """The coflows released by time ``t``, with their ids and flow order."""
    keep = np.flatnonzero(inst.release <= t)
    flows = np.isin(inst.coflow, keep)
    local = np.full(inst.n_coflows, -1)
    local[keep] = np.arange(keep.size)
    return CoflowInstance(inst.n_inputs, inst.n_outputs, coflow=local[inst.coflow[flows]], input=inst.input[flows],
                          output=inst.output[flows], units=inst.units[flows], weight=inst.weight[keep],
                          release=inst.release[keep], ids=inst.ids[keep])


def units_until(inst: CoflowInstance, schedule, last: int) -> set[tuple[int, int, int, int]]:
    """``{(slot, coflow id, input, output)}`` of the units sent in slots up to ``last``."""
    out = set()
    for start, length, flows in schedule.blocks():
        if start > last:
            continue
        for c, i, o in flows.tolist():
            for t in range(start, min(start + length - 1, last) + 1):
                out.add((t, int(inst.ids[c]), i, o))
    return out


def run_seed(params: dict, seed: int) -> dict:
    inst = random_coflows(params["n_coflows"], params["n_ports"], load=params["load"], weights=params["weights"],
                          max_units=params["max_units"], seed=seed)
    t0 = time.perf_counter()
    bound, completion, rowgen = cos_lower_bound(inst)
    lp_s = time.perf_counter() - t0
    offset = float(inst.weight @ inst.release)
    t_cut = int(np.median(inst.release))
    cut = cut_instance(inst, t_cut)
    out = {"seed": seed, "flows": inst.n_flows, "units": int(inst.units.sum()),
           "last_release": int(inst.release.max()), "lp_bound": bound, "lp_converged": rowgen.converged,
           "lp_s": lp_s, "offset": offset, "cut_after": t_cut, "runs": {}}
    for policy in POLICIES:
        for online in (False, True):
            if online and policy == "lp-order":
                continue
            known = (bound, completion, rowgen.converged)
            run = run_coflow(inst, policy, "greedy", lower_bound=True, bound=known, online=online)
            if not run.verified:
                raise AssertionError(f"seed {seed} {policy} online={online}: {run.violations[:3]}")
            part = run_coflow(cut, policy, "greedy", online=online)
            same = units_until(cut, part.schedule, t_cut + 1) == units_until(inst, run.schedule, t_cut + 1)
            late = run.from_release(inst)
            out["runs"][f"{policy}{' --online' if online else ''}"] = {
                "mean_cct": late["mean"], "ratio_from_release": late["ratio"], "ratio": run.ratio,
                "seconds": run.seconds["order"] + run.seconds["schedule"], "online": run.online,
                "cut_test": bool(same), "replans": run.replan_slots,
            }
            print(f"  seed {seed} {policy} online={online}: mean CCT {late['mean']:.1f}, "
                  f"cut test {'passes' if same else 'fails'}", flush=True)
    return out


def to_markdown(report: dict) -> str:
    p = report["parameters"]
    seeds = report["seeds"]
    lines = [f"# {NAME}", "",
             f"recorded {report['created']} on {report['machine']['platform']}, {report['machine']['cpu_count']} "
             f"CPUs; parameters {p}", "",
             "| seed | flows | units | last release | LP bound | offset sum w r | cut after |",
             "| ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in seeds:
        lines.append(f"| {r['seed']} | {r['flows']} | {r['units']} | {r['last_release']} | {r['lp_bound']:.6g} | "
                     f"{r['offset']:.6g} | {r['cut_after']} |")
    lines += ["", "Means over seeds; the cut test counts the seeds where it passed.", "",
              "| ordering + greedy | mean CCT (slots) | CCT / LP bound (from release) | from slot 0 / LP bound | "
              "online | cut test | worst seconds |",
              "| :--- | ---: | ---: | ---: | :--- | ---: | ---: |"]
    names = list(seeds[0]["runs"])
    for name in sorted(names, key=lambda k: np.mean([r["runs"][k]["mean_cct"] for r in seeds])):
        rs = [r["runs"][name] for r in seeds]
        lines.append(f"| {name} | {np.mean([x['mean_cct'] for x in rs]):.1f} | "
                     f"{np.mean([x['ratio_from_release'] for x in rs]):.2f} | "
                     f"{np.mean([x['ratio'] for x in rs]):.3f} | "
                     f"{'yes' if all(x['online'] for x in rs) else 'no'} | {sum(x['cut_test'] for x in rs)} / "
                     f"{len(rs)} | {max(x['seconds'] for x in rs):.2f} |")
    lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = parser(NAME, __doc__, "small workload, one seed; print only").parse_args(argv)
    params = dict(QUICK if args.quick else FULL)
    start = time.perf_counter()
    report = {**header(NAME, ("clusteropt", "highspy", "numpy")), "parameters": params, "seeds": []}
    for seed in params["seeds"]:
        print(f"{NAME}: seed {seed}", flush=True)
        report["seeds"].append(run_seed(params, seed))
    finish(NAME, report, to_markdown, output_dir(args), start)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
