"""GADGET (paper 000): one Fig. 4 point, online over T slots, with LP-RS-MDE timed slot by slot.

On the paper's Sec. VI-1 setting (``gadget_preset("paper")``: 50-server fat-tree, sigmoid
utility, bursty arrivals), Alg. 1 runs with the per-slot solvers ``lp-rs-mde`` (Alg. 2) and
``greedy``, next to FIFO, DRF and LAS.  Every schedule is checked by
:func:`clusteropt.verify.check_gadget_schedule`, whose recount of the total utility is what is
reported.  For LP-RS-MDE each slot's time is split into model builds plus hand-offs to HiGHS
(ring-selection LP and augmented LP) and HiGHS's solves, and the decomposition and rounding.
``alone_bound`` is what every job would reach alone on the cluster (``N_i`` workers every slot
from its arrival, up to its budget): no policy can exceed it.  Two cases: the paper's sigmoid,
where most jobs gain nothing in one slot (the gain underflows far below the inflection) and the
LPs hold only the few that do, and ``sqrt``, where every active job gains and is in the LPs.

Run ``python -m benchmarks.gadget_online`` (writes ``benchmarks/results/``) or ``--quick``.
"""

from __future__ import annotations

import time

import numpy as np

from benchmarks._report import finish, header, output_dir, parser
from clusteropt.instances.gadget.instance import gadget_preset
from clusteropt.online import run_online
from clusteropt.online.gadget import make_policy
from clusteropt.verify import check_gadget_schedule

NAME = "gadget_online"
FULL = {"cases": [{"preset": "paper", "jobs": 100, "seed": 0, "utility": "sigmoid", "horizon": 200},
                  {"preset": "paper", "jobs": 100, "seed": 0, "utility": "sqrt", "horizon": 200}]}
QUICK = {"cases": [{"preset": "small", "jobs": 10, "seed": 0, "utility": "sqrt", "horizon": 20}]}
POLICIES = (("gadget", "lp-rs-mde"), ("gadget", "greedy"), ("fifo", None), ("drf", None), ("las", None))


def _slot_times(slot_info: list[dict]) -> dict:
    rows = [d for d in slot_info if "select_s" in d]
    if not rows:
        return {"slots": 0}
    total = np.array([d["seconds"] for d in rows])
    build = np.array([d["select_s"] - d["select_solve_s"] + d["build_s"] + d["handoff_s"] for d in rows])
    solve = np.array([d["select_solve_s"] + d["solve_s"] for d in rows])
    rest = np.array([d["decompose_s"] + d["round_s"] for d in rows])
    return {
        "slots": len(rows),
        "median_s": float(np.median(total)), "p90_s": float(np.quantile(total, 0.9)), "max_s": float(total.max()),
        "median_build_handoff_s": float(np.median(build)), "median_solve_s": float(np.median(solve)),
        "median_rest_s": float(np.median(rest)),
        "sum_build_handoff_s": float(build.sum()), "sum_solve_s": float(solve.sum()),
        "median_lp_jobs": float(np.median([d.get("lp_jobs", d["jobs"]) for d in rows])),
        "median_active": float(np.median([d["jobs"] for d in rows])),
    }


def run_policy(inst, name: str, slot_solver: str | None) -> dict:
    # lp-rs-mde on the paper's route, the one the record measured (the default "auto" picks by size)
    routes = {"embed_route": "lp", "select_route": "full"} if slot_solver == "lp-rs-mde" else {}
    policy = make_policy(name, slot_solver=slot_solver, **routes) if slot_solver else make_policy(name)
    t0 = time.perf_counter()
    run = run_online(policy, inst, horizon=inst.horizon, seed=0)
    wall = time.perf_counter() - t0
    check = check_gadget_schedule(inst, run.schedule)
    if not check.ok:
        raise AssertionError(f"{name} {slot_solver}: {check.violations[:3]}")
    label = f"{name} ({slot_solver})" if slot_solver else name
    out = {"policy": label, "total_utility": check.total_utility, "wall_s": wall,
           "worker_slots": int(check.worker_slots.sum()), "slot_times": _slot_times(run.slot_info)}
    print(f"  {label}: total utility {check.total_utility:.6g}, {wall:.1f} s", flush=True)
    return out


def run_case(params: dict) -> dict:
    inst = gadget_preset(params["preset"], jobs=params["jobs"], seed=params["seed"], utility=params["utility"],
                         horizon=params["horizon"])
    print(f"{params}", flush=True)
    return {"parameters": params, "alone_bound": inst.alone_bound(),
            "runs": [run_policy(inst, name, solver) for name, solver in POLICIES]}


def to_markdown(report: dict) -> str:
    lines = [f"# {NAME}", "",
             f"recorded {report['created']} on {report['machine']['platform']}, "
             f"{report['machine']['cpu_count']} CPUs; "
             f"load average before {report['machine'].get('load_average_1_5_15')}, "
             f"after {report['machine'].get('load_average_after')}"]
    for case in report["cases"]:
        lines += ["", f"## {case['parameters']}", "", *_case_lines(case)]
    return "\n".join(lines) + "\n"


def _case_lines(report: dict) -> list[str]:
    lines = [f"alone bound (no policy can exceed it): {report['alone_bound']:.6g}", "",
             "| policy | total utility | / alone bound | worker-slots | wall s |",
             "| :--- | ---: | ---: | ---: | ---: |"]
    for r in report["runs"]:
        ratio = r["total_utility"] / report["alone_bound"]
        lines.append(f"| {r['policy']} | {r['total_utility']:.6g} | {ratio:.4f} "
                     f"| {r['worker_slots']} | {r['wall_s']:.1f} |")
    for r in report["runs"]:
        st = r["slot_times"]
        if st.get("slots"):
            lines += ["", f"{r['policy']}, per slot over {st['slots']} slots with active jobs "
                          f"(median {st['median_active']:.0f} active, {st['median_lp_jobs']:.0f} of them gaining "
                          "utility, i.e. in the LPs):", "",
                      "| median s | p90 s | max s | median build + hand-off s | median HiGHS solve s "
                      "| median decompose + round s | total build + hand-off s | total solve s |",
                      "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
                      f"| {st['median_s']:.3f} | {st['p90_s']:.3f} | {st['max_s']:.3f} | "
                      f"{st['median_build_handoff_s']:.3f} | {st['median_solve_s']:.3f} | "
                      f"{st['median_rest_s']:.3f} | "
                      f"{st['sum_build_handoff_s']:.1f} | {st['sum_solve_s']:.1f} |"]
    return lines


def main(argv: list[str] | None = None) -> int:
    args = parser(NAME, __doc__, "the small preset, 10 jobs, T = 20; print only").parse_args(argv)
    params = dict(QUICK if args.quick else FULL)
    out = output_dir(args)
    report = {**header(NAME, ("clusteropt", "pyomo", "highspy", "numpy")), "parameters": params}
    report["cases"] = [run_case(case) for case in params["cases"]]
    finish(NAME, report, to_markdown, out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
