"""Coflow scheduling at the public trace's scale: speed of each step, and quality against the LP bound.

A trace-like synthetic workload (``random_coflows``: 150 ports, 526 coflows, heavy-tailed
widths and sizes, demands up to millions of units), once with Poisson arrivals and once all
released at slot 0 (where the LP's parallel inequalities matter and the proven bounds hold), is
ordered by every policy and scheduled by both schedulers; every schedule is checked by the verifier.  Recorded
separately: the ordering, the schedule, the verification, and the LP bound (model build, the
row generation's solves and separations).  Quality: total weighted CCT / LP bound per policy.

The issue's bars: ordering + full schedule under 30 s, LP bound under 60 s on one core; the best
ordering within 1.5x of the LP bound, and better than SEBF and FIFO.

Run ``python -m benchmarks.coflow_scale`` (writes ``benchmarks/results/``) or ``--quick``.
"""

from __future__ import annotations

import time

from benchmarks._report import finish, header, output_dir, parser
from clusteropt.algorithms.coflow.pipeline import POLICIES, run_coflow
from clusteropt.instances import random_coflows
from clusteropt.models.coflow.bound import cos_lower_bound

NAME = "coflow_scale"
FULL = {"n_coflows": 526, "n_ports": 150, "units_scale": 2000.0, "max_units": None, "seeds": [0, 1, 2],
        "load": 0.9, "weights": "random", "releases": [True, False]}
QUICK = {"n_coflows": 40, "n_ports": 12, "units_scale": 20.0, "max_units": None, "seeds": [0],
         "load": 0.9, "weights": "random", "releases": [True, False]}


def run_seed(params: dict, seed: int, release: bool) -> dict:
    inst = random_coflows(params["n_coflows"], params["n_ports"], units_scale=params["units_scale"],
                          max_units=params["max_units"], load=params["load"], weights=params["weights"],
                          release=release, seed=seed)
    t0 = time.perf_counter()
    bound, completion, rowgen = cos_lower_bound(inst)
    lp_wall = time.perf_counter() - t0
    out = {
        "seed": seed, "coflows": inst.n_coflows, "flows": inst.n_flows, "units": int(inst.units.sum()),
        "max_flow_units": int(inst.units.max()),
        "lp": {"bound": bound, "converged": rowgen.converged, "rounds": rowgen.rounds, "cuts": rowgen.n_cuts,
               "model_build_s": rowgen.model_build_seconds, "handoff_s": rowgen.build_seconds,
               "solve_s": rowgen.solve_seconds, "separation_s": rowgen.separation_seconds, "wall_s": lp_wall},
        "runs": {},
    }
    for policy in POLICIES:
        for scheduler in ("greedy", "paper"):
            known = (bound, completion, rowgen.converged)
            run = run_coflow(inst, policy, scheduler, lower_bound=True, bound=known)
            if not run.verified:
                raise AssertionError(f"seed {seed} {policy}+{scheduler}: {run.violations[:3]}")
            out["runs"][f"{policy}+{scheduler}"] = {
                "total_weighted_cct": run.total_weighted_cct, "ratio": run.ratio, "blocks": run.schedule.n_blocks,
                "order_s": run.seconds["order"], "schedule_s": run.seconds["schedule"],
                "verify_s": run.seconds["verify"],
            }
        ratios = out["runs"][policy + "+greedy"]["ratio"], out["runs"][policy + "+paper"]["ratio"]
        print(f"  seed {seed} release={release} {policy}: greedy ratio {ratios[0]:.4f}, paper {ratios[1]:.4f}",
              flush=True)
    return out


def to_markdown(report: dict) -> str:
    lines = [
        f"# {NAME}", "",
        f"recorded {report['created']} on {report['machine']['platform']}, {report['machine']['cpu_count']} CPUs; "
        f"parameters {report['parameters']}", "",
    ]
    for case in report["cases"]:
        lines += _case_markdown(case)
    lines.append("Times are the worst over seeds; ratios are total weighted CCT / LP bound.")
    return "\n".join(lines) + "\n"


def _case_markdown(case: dict) -> list[str]:
    title = "Poisson arrivals (release times)" if case["release"] else "all released at 0"
    lines = [
        f"## {title}", "",
        "| seed | flows | units | LP bound | converged | rounds | LP build s | LP solve s | separation s "
        "| LP wall s |",
        "| ---: | ---: | ---: | ---: | :--- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in case["seeds"]:
        lp = r["lp"]
        lines.append(f"| {r['seed']} | {r['flows']} | {r['units']} | {lp['bound']:.6g} | {lp['converged']} | "
                     f"{lp['rounds']} | {lp['model_build_s'] + lp['handoff_s']:.2f} | {lp['solve_s']:.2f} | "
                     f"{lp['separation_s']:.2f} | {lp['wall_s']:.2f} |")
    lines += ["", "| policy + scheduler | mean ratio to LP | worst ratio | order s | schedule s | verify s |",
              "| :--- | ---: | ---: | ---: | ---: | ---: |"]
    names = list(case["seeds"][0]["runs"])
    for name in sorted(names, key=lambda k: sum(r["runs"][k]["ratio"] for r in case["seeds"])):
        rs = [r["runs"][name] for r in case["seeds"]]
        lines.append(
            f"| {name} | {sum(x['ratio'] for x in rs) / len(rs):.4f} | {max(x['ratio'] for x in rs):.4f} | "
            f"{max(x['order_s'] for x in rs):.2f} | {max(x['schedule_s'] for x in rs):.2f} | "
            f"{max(x['verify_s'] for x in rs):.2f} |")
    lines.append("")
    return lines


def main(argv: list[str] | None = None) -> int:
    args = parser(NAME, __doc__, "small workload, one seed; print only").parse_args(argv)
    params = dict(QUICK if args.quick else FULL)
    out = output_dir(args)
    report = {**header(NAME, ("clusteropt", "pyomo", "highspy", "numpy", "scipy")), "parameters": params,
              "cases": []}
    for release in params["releases"]:
        case = {"release": release, "seeds": []}
        for seed in params["seeds"]:
            print(f"{NAME}: seed {seed}, release times {release}", flush=True)
            case["seeds"].append(run_seed(params, seed, release))
        report["cases"].append(case)
    finish(NAME, report, to_markdown, out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
