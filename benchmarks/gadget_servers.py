"""GADGET LP-RS-MDE per slot against the number of servers.

The paper's cluster generator (:func:`clusteropt.instances.gadget.instance.fat_tree_cluster`: 2-5 racks under
one core switch, GPUs and server links drawn per server, so hardly two servers are interchangeable)
at 50 .. 2,000 servers, 100 jobs that all arrive at slot 1 (sqrt utility), a short online run of
``horizon`` slots (100 active jobs in every slot), three routes of Alg. 2:

``paper``
    The ring-selection LP by primal simplex, the augmented LP (tree form) then its decomposition:
    the default ``Gadget("lp-rs-mde")``.
``colgen``
    The same selection LP; the augmented LP by column generation over the valid mappings
    (``embed_route="colgen"``, :mod:`clusteropt.models.gadget.colgen`, same LP optimum).
``colgen-ipm``
    Column generation, and the selection LP by HiGHS's interior point method with crossover
    (``select_algorithm="ipm"``).
``colgen-capacity``
    Column generation, and the selection LP first without its link rows, its solution certified
    against the full LP (``select_route="capacity"``; the full LP is solved where the certificate
    fails, counted in the column ``certified``).

Each route runs up to its :data:`MAX_SERVERS`.

``--cluster racks`` runs the same sweep on homogeneous racks, the topology
:func:`clusteropt.instances.gadget.trace.read_alibaba_nodes` documents for a node list (racks of 16
servers of one model, 100 Gbps to the rack switch, 800 Gbps to the core), read from a generated
node list of 8-GPU nodes (not the trace's own: it is not in the repository), with the routes of
:data:`RACK_ROUTES`: column generation with the interior-point selection LP over every server, and
with the selection LP over classes of interchangeable servers (``select_classes=True``, one class
per rack here; the same LP value), through the certified capacity relaxation, and both.  Written as
``gadget_servers_racks.*``.
Recorded per route and size: per-slot wall time (median, p90), the selection LP's HiGHS time, the
embedding step (master + pricing for column generation), the first slot's selection-LP and augmented-LP
values (the routes solve the same LPs: the selection values must agree; the augmented values agree
when the same ring sizes were selected), the run's total utility, and the verifier's verdict (a
schedule that fails stops the benchmark).  The fitted exponent of the median slot time against the
servers (least squares in log-log over the sizes from 100 on) is reported per route.

Run ``python -m benchmarks.gadget_servers`` (writes ``benchmarks/results/``) or ``--quick``.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import numpy as np

from benchmarks._report import finish, header, output_dir, parser
from clusteropt.instances.gadget.instance import fat_tree_cluster, random_gadget
from clusteropt.instances.gadget.trace import read_alibaba_nodes
from clusteropt.online import run_online
from clusteropt.online.gadget import Gadget
from clusteropt.verify import check_gadget_schedule

NAME = "gadget_servers"
FULL = {"servers": [50, 100, 200, 400, 1000, 2000], "n_jobs": 100, "horizon": 3, "utility": "sqrt", "seed": 0}
QUICK = {"servers": [10, 20], "n_jobs": 8, "horizon": 2, "utility": "sqrt", "seed": 0}
ROUTES = {"paper": {"embed_route": "lp", "select_route": "full"}, "colgen": {"embed_route": "colgen"},
          "colgen-ipm": {"embed_route": "colgen", "select_algorithm": "ipm"},
          "colgen-capacity": {"embed_route": "colgen", "select_route": "capacity"}}
#: Largest cluster each route runs on (None: every size; the same caps on ``--cluster racks``): the
#: paper's route grows about quadratically in the servers, the selection LP by simplex or interior
#: point a little less.
MAX_SERVERS = {"paper": 200, "colgen": 400, "colgen-ipm": 1000, "colgen-capacity": None}
#: The routes of ``--cluster racks`` (every size).
RACK_ROUTES = {"colgen-ipm": ROUTES["colgen-ipm"],
               "classes": {"embed_route": "colgen", "select_classes": True},
               "colgen-capacity": ROUTES["colgen-capacity"],
               "classes-capacity": {"embed_route": "colgen", "select_classes": True, "select_route": "capacity"}}
#: GPUs per node of the generated node list of ``--cluster racks``.
RACK_NODE_GPUS = 8


def rack_cluster(n_servers: int):
    """``n_servers`` 8-GPU nodes read by :func:`read_alibaba_nodes` (its documented topology)."""
    rows = ["sn,cpu_milli,memory_mib,gpu,model"] + [f"node-{k:05d},96000,786432,{RACK_NODE_GPUS},G8"
                                                    for k in range(n_servers)]
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "nodes.csv"
        path.write_text("\n".join(rows) + "\n")
        cluster, _ = read_alibaba_nodes(path)
    return cluster


def _stats(values) -> dict:
    v = np.asarray(values, dtype=float)
    return {"median": float(np.median(v)), "p90": float(np.quantile(v, 0.9)), "max": float(v.max()),
            "sum": float(v.sum())}


def one(n_servers: int, route: str, params: dict) -> dict:
    seed = params["seed"]
    racks = params.get("cluster") == "racks"
    cluster = rack_cluster(n_servers) if racks else fat_tree_cluster(n_servers, seed=seed)
    inst = random_gadget(params["n_jobs"], cluster=cluster, horizon=params["horizon"], arrivals="zero",
                         utility=params["utility"], seed=seed)
    start = time.perf_counter()
    run = run_online(Gadget("lp-rs-mde", **(RACK_ROUTES if racks else ROUTES)[route]), inst, horizon=inst.horizon,
                     seed=seed)
    wall = time.perf_counter() - start
    check = check_gadget_schedule(inst, run.schedule)
    if not check.ok:
        raise AssertionError(f"{route} at {n_servers} servers: the schedule failed verification: "
                             f"{check.violations[:3]}")
    infos = [i for i in run.slot_info if i.get("jobs")]
    embed = [float(i.get("solve_s", 0.0)) + float(i.get("build_s", 0.0)) + float(i.get("handoff_s", 0.0))
             + float(i.get("decompose_s", 0.0)) for i in infos]
    return {
        "servers": n_servers, "route": route, "wall_s": wall, "slots": len(infos),
        "active_jobs": [int(i["jobs"]) for i in infos],
        "slot_s": _stats([i["seconds"] for i in infos]),
        "select_solve_s": _stats([i.get("select_solve_s", 0.0) for i in infos]),
        "select_build_s": _stats([i.get("select_build_s", 0.0) + i.get("select_handoff_s", 0.0) for i in infos]),
        "embed_s": _stats(embed),
        "pricing_s": _stats([i.get("pricing_s", 0.0) for i in infos]),
        "colgen_rounds": [int(i.get("colgen_rounds", 0)) for i in infos],
        "certified": [i.get("select_certified") for i in infos],
        "first_lp_value": float(infos[0]["lp_value"]), "first_augmented_value": float(infos[0]["augmented_value"]),
        "total_utility": float(check.total_utility), "verified": True, "params": run.params,
    }


def exponent(rows: list[dict], route: str, smallest: int) -> float | None:
    """Least-squares slope of log(median slot seconds) on log(servers), sizes >= ``smallest``."""
    pts = [(r["servers"], r["slot_s"]["median"]) for r in rows if r["route"] == route and r["servers"] >= smallest]
    if len(pts) < 2:
        return None
    x, y = np.log([p[0] for p in pts]), np.log([p[1] for p in pts])
    return float(np.polyfit(x, y, 1)[0])


def to_markdown(report: dict) -> str:
    p = report["parameters"]
    lines = [f"# {report['benchmark']}", "",
             f"recorded {report['created']} (code version {report['code_version']}) on "
             f"{report['machine']['platform']}, {report['machine']['cpu_count']} CPUs, load average after "
             f"{report['machine'].get('load_average_after')}; parameters {p}", "",
             "| servers | route | slot median s | slot p90 s | selection LP (HiGHS) median s | embedding median s "
             "| of it pricing s | colgen rounds | certified slots | first-slot LP value "
             "| first-slot augmented value | total utility |",
             "| ---: | :--- | ---: | ---: | ---: | ---: | ---: | :--- | :--- | ---: | ---: | ---: |"]
    for r in report["rows"]:
        rounds = ", ".join(map(str, r["colgen_rounds"])) if any(r["colgen_rounds"]) else "-"
        cert = r["certified"]
        cert_s = f"{sum(bool(c) for c in cert)} of {len(cert)}" if any(c is not None for c in cert) else "-"
        lines.append(f"| {r['servers']} | {r['route']} | {r['slot_s']['median']:.2f} | {r['slot_s']['p90']:.2f} | "
                     f"{r['select_solve_s']['median']:.2f} | {r['embed_s']['median']:.2f} | "
                     f"{r['pricing_s']['median']:.2f} | {rounds} | {cert_s} | {r['first_lp_value']:.10g} | "
                     f"{r['first_augmented_value']:.10g} | {r['total_utility']:.8g} |")
    lines += ["", f"Fitted exponent of the median slot time in the servers (sizes from {report['fit_from']} on): "
              + ", ".join(f"{k} {v:.2f}" if v is not None else f"{k} -" for k, v in report["exponents"].items())
              + ".", f"Selection-LP values equal across routes at every size: {report['lp_values_equal']}.", ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    cli = parser(NAME, __doc__, "small clusters; print only")
    cli.add_argument("--cluster", choices=("paper", "racks"), default="paper",
                     help="the paper's generator (default) or homogeneous racks (module docstring)")
    args = cli.parse_args(argv)
    params = {**(QUICK if args.quick else FULL), "cluster": args.cluster}
    racks = args.cluster == "racks"
    name = NAME + ("_racks" if racks else "")
    routes = RACK_ROUTES if racks else ROUTES
    start = time.perf_counter()
    report = {**header(name, ("clusteropt", "highspy", "numpy")), "parameters": params, "rows": []}
    one(min(params["servers"]), "colgen-ipm", {**params, "horizon": 1})  # warm-up, not recorded
    for n in params["servers"]:
        for route in routes:
            if MAX_SERVERS.get(route) is not None and n > MAX_SERVERS[route]:
                continue
            row = one(n, route, params)
            report["rows"].append(row)
            print(f"{name}: {n} servers, {route}: slot median {row['slot_s']['median']:.2f} s", flush=True)
    smallest = 100 if max(params["servers"]) > 100 else min(params["servers"])
    report["fit_from"] = smallest
    report["exponents"] = {route: exponent(report["rows"], route, smallest) for route in routes}
    by_size: dict[int, list[float]] = {}
    for r in report["rows"]:
        by_size.setdefault(r["servers"], []).append(r["first_lp_value"])
    report["lp_values_equal"] = all(np.allclose(v, v[0], rtol=1e-7) for v in by_size.values())
    finish(name, report, to_markdown, output_dir(args), start)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
