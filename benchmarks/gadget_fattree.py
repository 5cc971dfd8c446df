"""GADGET LP-RS-MDE per slot on k-ary fat-trees up to 2,000 servers, through the quotient tree.

A k-ary fat-tree (:func:`clusteropt.instances.gadget.instance.k_ary_fat_tree`, ``k^3 / 4`` servers) is not a
tree, so the tree routes of Alg. 2 do not apply to it as it is, and the general-topology LP
(:mod:`clusteropt.models.gadget.extended`) has ``kappa |S| |E|`` arc variables per job.  Here every
slot is solved on the fat-tree's quotient tree (:mod:`clusteropt.algorithms.gadget.quotient`: the
same LP optimum as the splittable LP on the fat-tree) with column generation and the certified
capacity relaxation (``Gadget("lp-rs-mde", embed_route="colgen", select_route="capacity",
quotient=True)``), and the rings are lifted onto the fat-tree's own links; every schedule is
checked by :func:`clusteropt.verify.check_gadget_schedule` on the fat-tree (a failure stops the
benchmark).

Setting: every link at 100 Gbps (``host_bw = fabric_bw = 100``: the full-bisection fat-tree of
Al-Fares et al., all links alike), 1-8 GPUs per server, 100 jobs arriving at slot 1 (sqrt
utility), ``b_i`` of 10-60 Gbps (so that host links bind: the paper's 0.1-5 Gbps never load a
100 Gbps link), ``horizon`` slots.  ``k = 4 .. 20`` (16 .. 2,000 servers).

Recorded per size: per-slot wall time (median, p90; the lift included), the lift's time and
whether its greedy sufficed or the path-assignment MILP ran, the jobs it dropped, the selection
LP's HiGHS time, the first slot's selection-LP value, the largest load / bandwidth over the slots
on host links and on fabric links (switch to switch), the run's total utility, the verifier's
verdict, and the fitted exponent of the median slot time in the servers (sizes from 100 on).

``--setting oversubscribed`` runs the same sweep where the fabric binds: switch-to-switch links at
25 Gbps against 100 at the servers (4:1 oversubscribed), 1-2 GPUs per server and 2-8 workers per
job (so rings span servers), ``b_i`` of 5-25 Gbps, ``k = 4 .. 16``; written as
``gadget_fattree_oversubscribed.*``.  There the lift's greedy may fail and the MILP run, and jobs
may be dropped: both are counted.

Side by side on a small fat-tree (:data:`COMPARE`: k = 4, 10 jobs), the paper's route on the
fat-tree as it is (``Gadget("lp-rs-mde")``: the selection LP in flow form, the augmented LP on Rost
and Schmid's extended graph) against the quotient tree with the augmented LP then its
decomposition, and with column generation: the first slot's selection-LP values must agree (the
module's theorem), and the times show what the quotient buys.

Run ``python -m benchmarks.gadget_fattree`` (writes ``benchmarks/results/``) or ``--quick``.
"""

from __future__ import annotations

import time

import numpy as np

from benchmarks._report import finish, header, output_dir, parser
from benchmarks.gadget_servers import _stats, exponent
from clusteropt.instances.gadget.instance import k_ary_fat_tree, random_gadget
from clusteropt.online import run_online
from clusteropt.online.gadget import Gadget
from clusteropt.verify import check_gadget_schedule

NAME = "gadget_fattree"
FULL = {"k": [4, 6, 8, 10, 12, 16, 20], "n_jobs": 100, "horizon": 3, "utility": "sqrt", "seed": 0,
        "host_bw": 100.0, "fabric_bw": 100.0, "bandwidth": [10.0, 60.0], "gpus": [1, 2, 4, 8]}
QUICK = {**FULL, "k": [4, 6], "n_jobs": 10, "horizon": 2}
#: ``--setting oversubscribed`` (module docstring).
OVERSUBSCRIBED = {**FULL, "k": [4, 6, 8, 10, 12, 16], "fabric_bw": 25.0, "bandwidth": [5.0, 25.0], "gpus": [1, 2],
                  "workers": [2, 8]}
ROUTE = {"embed_route": "colgen", "select_route": "capacity", "quotient": True}
#: The side-by-side setting, and its routes: the fat-tree as it is, and the quotient with either
#: augmented-LP route.
COMPARE = {**FULL, "k": 4, "n_jobs": 10, "horizon": 2}
COMPARE_ROUTES = {"graph": {}, "quotient-lp": {"quotient": True}, "quotient-colgen": ROUTE}


def max_loads(inst, schedule) -> tuple[float, float]:
    """Largest load / bandwidth over the slots on host links and on switch-to-switch links."""
    cl = inst.cluster
    host = (cl.links < cl.n_servers).any(axis=1)
    worst = np.zeros(2)
    for a in schedule.slots:
        load = np.zeros(cl.n_links)
        for i, ring in a.rings.items():
            for p in ring.paths:
                np.add.at(load, list(p), inst.bandwidth[i])
        ratio = load / cl.bandwidth
        worst = np.maximum(worst, [ratio[host].max(initial=0.0), ratio[~host].max(initial=0.0)])
    return float(worst[0]), float(worst[1])


def one(k: int, params: dict, route: dict | None = None) -> dict:
    seed = params["seed"]
    cluster = k_ary_fat_tree(k, gpus=tuple(params["gpus"]), host_bw=params["host_bw"],
                             fabric_bw=params["fabric_bw"], seed=seed)
    inst = random_gadget(params["n_jobs"], cluster=cluster, horizon=params["horizon"], arrivals="zero",
                         utility=params["utility"], bandwidth=tuple(params["bandwidth"]),
                         workers=tuple(params.get("workers", (1, 5))), seed=seed)
    start = time.perf_counter()
    run = run_online(Gadget("lp-rs-mde", **(ROUTE if route is None else route)), inst, horizon=inst.horizon,
                     seed=seed)
    wall = time.perf_counter() - start
    check = check_gadget_schedule(inst, run.schedule)
    if not check.ok:
        raise AssertionError(f"k = {k}: the schedule failed verification on the fat-tree: {check.violations[:3]}")
    infos = [i for i in run.slot_info if i.get("jobs")]
    host_load, fabric_load = max_loads(inst, run.schedule)
    return {
        "k": k, "servers": cluster.n_servers, "switches": cluster.n_switches, "links": cluster.n_links,
        "wall_s": wall, "slots": len(infos), "active_jobs": [int(i["jobs"]) for i in infos],
        "slot_s": _stats([i["seconds"] for i in infos]),
        "lift_s": _stats([i.get("lift_s", 0.0) for i in infos]),
        "lift_methods": [i.get("lift_method") for i in infos],
        "lift_dropped": [list(i.get("lift_dropped", [])) for i in infos],
        "select_solve_s": _stats([i.get("select_solve_s", 0.0) for i in infos]),
        "certified": [i.get("select_certified") for i in infos],
        "first_lp_value": float(infos[0]["lp_value"]), "total_utility": float(check.total_utility),
        "multi_server_rings": int(sum(len(a.rings) for a in run.schedule.slots)),
        "host_max_load": host_load, "fabric_max_load": fabric_load,
        "verified": True, "params": run.params,
    }


def to_markdown(report: dict) -> str:
    p = report["parameters"]
    lines = [f"# {report['benchmark']}", "",
             f"recorded {report['created']} (code version {report['code_version']}) on "
             f"{report['machine']['platform']}, {report['machine']['cpu_count']} CPUs, load average after "
             f"{report['machine'].get('load_average_after')}; parameters {p}", "",
             "| k | servers | links | slot median s | slot p90 s | lift median s | lift | dropped jobs "
             "| selection LP (HiGHS) median s | certified slots | rings | host / fabric max load "
             "| first-slot LP value | total utility |",
             "| ---: | ---: | ---: | ---: | ---: | ---: | :--- | ---: | ---: | :--- | ---: | :--- | ---: | ---: |"]
    for r in report["rows"]:
        cert = r["certified"]
        cert_s = f"{sum(bool(c) for c in cert)} of {len(cert)}" if any(c is not None for c in cert) else "-"
        methods = ", ".join(str(m) for m in r["lift_methods"])
        lines.append(f"| {r['k']} | {r['servers']} | {r['links']} | {r['slot_s']['median']:.2f} | "
                     f"{r['slot_s']['p90']:.2f} | {r['lift_s']['median']:.3f} | {methods} | "
                     f"{sum(len(d) for d in r['lift_dropped'])} | {r['select_solve_s']['median']:.2f} | "
                     f"{cert_s} | {r['multi_server_rings']} | "
                     f"{r['host_max_load']:.3f} / {r['fabric_max_load']:.3f} | "
                     f"{r['first_lp_value']:.10g} | {r['total_utility']:.8g} |")
    lines += ["", f"Fitted exponent of the median slot time in the servers (sizes from {report['fit_from']} on): "
              + (f"{report['exponent']:.2f}" if report["exponent"] is not None else "-") + ".",
              "Every schedule passed the verifier on the fat-tree itself.", "",
              f"Side by side, k = {report['compare_parameters']['k']}, {report['compare_parameters']['n_jobs']} "
              "jobs, the fat-tree as it is against its quotient tree:", "",
              "| route | slot median s | slot max s | first-slot LP value | total utility |",
              "| :--- | ---: | ---: | ---: | ---: |"]
    for r in report["compare"]:
        lines.append(f"| {r['route']} | {r['slot_s']['median']:.2f} | {r['slot_s']['max']:.2f} | "
                     f"{r['first_lp_value']:.10g} | {r['total_utility']:.8g} |")
    lines += ["", f"First-slot LP values equal across the routes: {report['compare_lp_equal']}.", ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    cli = parser(NAME, __doc__, "small fat-trees; print only")
    cli.add_argument("--setting", choices=("full-bisection", "oversubscribed"), default="full-bisection",
                     help="every link at 100 Gbps (default) or a 4:1 oversubscribed fabric (module docstring)")
    args = cli.parse_args(argv)
    over = args.setting == "oversubscribed"
    params = {**OVERSUBSCRIBED, **({"k": [4, 6], "n_jobs": 10, "horizon": 2} if args.quick else {})} if over else (
        QUICK if args.quick else FULL)
    name = NAME + ("_oversubscribed" if over else "")
    start = time.perf_counter()
    report = {**header(name, ("clusteropt", "highspy", "numpy", "scipy")), "parameters": params, "rows": []}
    one(4, {**params, "n_jobs": 4, "horizon": 1})  # warm-up, not recorded
    for k in params["k"]:
        row = one(k, params)
        report["rows"].append(row)
        print(f"{name}: k = {k} ({row['servers']} servers): slot median {row['slot_s']['median']:.2f} s, "
              f"lift {row['lift_methods']}, dropped {sum(len(d) for d in row['lift_dropped'])}", flush=True)
    sizes = [r["servers"] for r in report["rows"]]
    smallest = 100 if max(sizes) > 100 else min(sizes)
    report["fit_from"] = smallest
    rows = [{**r, "route": "quotient"} for r in report["rows"]]
    report["exponent"] = exponent(rows, "quotient", smallest)
    compare = {**params, "k": COMPARE["k"], "n_jobs": 4 if args.quick else COMPARE["n_jobs"],
               "horizon": COMPARE["horizon"]}
    report["compare_parameters"] = compare
    report["compare"] = []
    for route_name, route in COMPARE_ROUTES.items():
        row = {**one(compare["k"], compare, route), "route": route_name}
        report["compare"].append(row)
        print(f"{name}: side by side, {route_name}: slot median {row['slot_s']['median']:.2f} s", flush=True)
    values = [r["first_lp_value"] for r in report["compare"]]
    report["compare_lp_equal"] = bool(np.allclose(values, values[0], rtol=1e-7))
    finish(name, report, to_markdown, output_dir(args), start)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
