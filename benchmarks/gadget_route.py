"""GADGET LP-RS-MDE (paper 000, Alg. 2): the four named routes of one slot, from the tiny preset to 400 servers.

LP-RS-MDE solves two LPs a slot, each of them one of two ways
(:func:`clusteropt.rounding.gadget.lp_rs_mde`):

``select_route``
    The ring-selection LP (Alg. 2 line 3, the LP relaxation of (12)-(19)) as built (``"full"``), or
    first without its link and ring-crossing rows, the relaxation's solution certified against the
    full LP (``"capacity"``; the full LP is solved only when the certificate fails).
``embed_route``
    The augmented LP (Alg. 2 line 4) then its decomposition (lines 5-6) (``"lp"``), or the same LP
    over the valid mappings by column generation (``"colgen"``, tree clusters).

The routes are named ``<embed>/<select>``; ``lp/full`` is the paper's order.  Each route solves one
slot problem (:func:`clusteropt.models.gadget.gvne.slot_problem`, no earlier allocation) of every case
of :data:`CASES` (sqrt utility: every job gains, so both LPs hold every active job):

``tiny``, ``small``
    ``gadget_preset`` with 20 jobs, its last slot (every job has arrived).
``fat-tree-N``
    ``random_gadget`` with 100 jobs arriving at slot 1 on ``fat_tree_cluster(N)`` (the paper's
    generator at N servers), slot 1; N = 16, 50, 100, 200, 400.
``paper``
    ``gadget_preset("paper")`` with 100 jobs (the 50-server cluster of Sec. VI-1), slot 110.

Recorded per case and route (the median run by wall time of :data:`REPEATS`): wall and CPU seconds
(``time.process_time``: every thread of the process) of the whole call, the build time (both LPs'
construction and hand-off to HiGHS; column generation's column hand-off), the solve time (HiGHS's
runs; column generation's master runs and pricing), the decomposition and the rounding; the
selection LP's optimum (``lp_value``), the augmented LP's (``augmented_value``), Lemma 7's kept value
and the slot's gain.  The selection LP's optimum must agree across routes (:data:`RTOL`); the
augmented LP's depends on the ring sizes Lemma 7 keeps from the selection LP's vertex, which the
capacity route may change, so up to :data:`CROSS_MAX_SERVERS` servers the benchmark also solves the
augmented LP both ways for the ring sizes of the full selection LP (``cross``): those optima must
agree.  A disagreement stops the benchmark.

Each route runs up to its :data:`MAX_SERVERS` (the augmented LP of the ``lp`` routes grows about
quadratically in the servers: 187 s a slot at 200 servers in ``benchmarks/results/gadget_servers.md``).
The column ``auto`` is the route :func:`clusteropt.rounding.gadget.resolve_routes` resolves for the
case (the default ``embed_route="auto", select_route="auto"``).

Run ``python -m benchmarks.gadget_route`` (writes ``benchmarks/results/gadget_route.*``) or ``--quick``.
"""

from __future__ import annotations

import time

import numpy as np

from benchmarks._report import finish, header, output_dir, parser
from clusteropt.instances.gadget.instance import fat_tree_cluster, gadget_preset, random_gadget
from clusteropt.models.gadget.gvne import slot_problem
from clusteropt.rounding.gadget import lp_rs_mde, positive_gain, resolve_routes, select_rings

NAME = "gadget_route"
#: The cases: name -> servers (module docstring).
CASES = {"tiny": 4, "small": 8, "fat-tree-16": 16, "paper": 50, "fat-tree-50": 50, "fat-tree-100": 100,
         "fat-tree-200": 200, "fat-tree-400": 400}
QUICK_CASES = ("tiny", "small")
#: The named routes, ``(embed_route, select_route)``.
ROUTES = {"lp/full": ("lp", "full"), "lp/capacity": ("lp", "capacity"), "colgen/full": ("colgen", "full"),
          "colgen/capacity": ("colgen", "capacity")}
#: Largest cluster (servers) each route runs on.
MAX_SERVERS = {"lp/full": 200, "lp/capacity": 100, "colgen/full": 400, "colgen/capacity": 400}
#: Runs per case and route up to 50 servers (one above).
REPEATS = 3
#: The ``cross`` check (augmented LP both ways for the same ring sizes) up to this many servers.
CROSS_MAX_SERVERS = 100
#: Relative tolerance of the agreement checks (HiGHS's optimality tolerance is 1e-7).
RTOL = 1e-6
SEED = 0


def case_problem(case: str):
    """The instance and slot problem of ``case`` (module docstring)."""
    if case in ("tiny", "small"):
        inst = gadget_preset(case, jobs=20, seed=SEED, utility="sqrt")
        t = inst.horizon
    elif case == "paper":
        inst = gadget_preset("paper", jobs=100, seed=SEED, utility="sqrt")
        t = 110
    else:
        n = CASES[case]
        inst = random_gadget(100, cluster=fat_tree_cluster(n, seed=SEED), horizon=1, arrivals="zero",
                             utility="sqrt", seed=SEED, name=case)
        t = 1
    return inst, slot_problem(inst, t, np.zeros(inst.n_jobs))


def one(problem, route: str, paths) -> dict:
    embed, select = ROUTES[route]
    wall0, cpu0 = time.perf_counter(), time.process_time()
    _, info = lp_rs_mde(problem, rng=SEED, embed_route=embed, select_route=select, paths=paths)
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    relax = float(info.get("select_relaxation_s", 0.0)) if info.get("select_certified") is False else 0.0
    build = (info["select_build_s"] + info["select_handoff_s"] + info["build_s"] + info["handoff_s"])
    solve = info["select_solve_s"] + relax + info["solve_s"]
    return {"route": route, "wall_s": wall, "cpu_s": cpu, "build_s": build, "solve_s": solve,
            "select_build_s": info["select_build_s"] + info["select_handoff_s"],
            "select_solve_s": info["select_solve_s"] + relax,
            "embed_build_s": info["build_s"] + info["handoff_s"], "embed_solve_s": info["solve_s"],
            "decompose_s": info["decompose_s"], "round_s": info["round_s"],
            "certified": info.get("select_certified"), "colgen_rounds": info.get("colgen_rounds"),
            "lp_value": info["lp_value"], "augmented_value": info["augmented_value"],
            "selected_value": info["selected_value"], "gain": info["objective"],
            "resolved": [info["embed_route"], info["select_route"]]}


def cross(problem, paths) -> dict:
    """The augmented LP for the full selection LP's ring sizes, as the tree LP and by column generation."""
    from clusteropt.models.gadget.colgen import solve_embedding_colgen
    from clusteropt.models.gadget.matrix import build_embedding_matrix, solve_matrix
    from clusteropt.rounding.gadget import EMBED_HIGHS_OPTIONS

    gaining = positive_gain(problem)
    sel, _ = select_rings(gaining)
    res, _ = solve_matrix(build_embedding_matrix(gaining, sel.kappa), options=EMBED_HIGHS_OPTIONS)
    colgen = solve_embedding_colgen(gaining, sel.kappa, paths=paths)
    assert res.objective is not None
    return {"lp": float(res.objective), "colgen": float(colgen.value),
            "agree": bool(np.isclose(res.objective, colgen.value, rtol=RTOL, atol=RTOL))}


def run_case(case: str) -> dict:
    inst, problem = case_problem(case)
    paths = inst.cluster.paths()
    n = inst.cluster.n_servers
    auto = resolve_routes(inst.cluster)
    out = {"case": case, "servers": n, "jobs": int(problem.jobs.size), "tree": inst.cluster.is_tree(),
           "auto": f"{auto[0]}/{auto[1]}", "rows": []}
    repeats = REPEATS if n <= 50 else 1
    for route in ROUTES:
        if n > MAX_SERVERS[route]:
            continue
        runs = sorted((one(problem, route, paths) for _ in range(repeats)), key=lambda r: r["wall_s"])
        row = runs[len(runs) // 2]
        row["repeats"] = repeats
        out["rows"].append(row)
        print(f"{NAME}: {case} ({n} servers), {route}: wall {row['wall_s']:.3f} s, CPU {row['cpu_s']:.3f} s",
              flush=True)
    values = [r["lp_value"] for r in out["rows"]]
    out["lp_values_agree"] = bool(np.allclose(values, values[0], rtol=RTOL, atol=RTOL))
    augmented = [r["augmented_value"] for r in out["rows"]]
    out["augmented_values_agree"] = bool(np.allclose(augmented, augmented[0], rtol=RTOL, atol=RTOL))
    out["cross"] = cross(problem, paths) if n <= CROSS_MAX_SERVERS else None
    if not out["lp_values_agree"] or (out["cross"] is not None and not out["cross"]["agree"]):
        raise AssertionError(f"{case}: the routes' LP optima disagree: selection {values}, cross {out['cross']}")
    return out


def to_markdown(report: dict) -> str:
    v, m = report["versions"], report["machine"]
    lines = [f"# {report['benchmark']}", "",
             f"recorded {report['created']} (code version {report['code_version']}; "
             + ", ".join(f"{k} {v[k]}" for k in v) + f") on {m['platform']}, {m['cpu_count']} CPUs, load average "
             f"after {m.get('load_average_after')}; command `{report['command']}`", "",
             "One slot of LP-RS-MDE per case and named route (`<embed_route>/<select_route>`; `lp/full` is the "
             "paper's order); seconds, the median run of the repeats (3 up to 50 servers, else 1).  CPU s: the "
             "whole call's CPU time (every thread of the process); the other columns are wall time: build = "
             "both LPs' construction and hand-off, solve = HiGHS's runs (column generation: master runs and "
             "pricing), then the selection LP's and the embedding's solves, the decomposition and the "
             "rounding.  The machine is shared (see the load average): wall time includes waiting for a core, "
             "CPU time is the steadier number.", "",
             "| case | servers | jobs | route | wall s | CPU s | build s | solve s | selection solve s "
             "| embedding solve s | decompose s | round s | certified | selection LP optimum "
             "| augmented LP optimum | slot gain |",
             "| :--- | ---: | ---: | :--- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | :--- "
             "| ---: | ---: | ---: |"]
    for c in report["cases"]:
        for r in c["rows"]:
            cert = "-" if r["certified"] is None else ("yes" if r["certified"] else "no")
            lines.append(f"| {c['case']} | {c['servers']} | {c['jobs']} | {r['route']} | {r['wall_s']:.3f} | "
                         f"{r['cpu_s']:.3f} | {r['build_s']:.3f} | {r['solve_s']:.3f} | "
                         f"{r['select_solve_s']:.3f} | {r['embed_solve_s']:.3f} | {r['decompose_s']:.3f} | "
                         f"{r['round_s']:.3f} | {cert} | {r['lp_value']:.10g} | {r['augmented_value']:.10g} | "
                         f"{r['gain']:.10g} |")
    lines += ["", "| case | servers | auto resolves to | least CPU | CPU lp/full / CPU colgen/capacity "
              "| selection LP optima agree | augmented LP optima agree | same ring sizes: tree LP "
              "| same ring sizes: column generation |",
              "| :--- | ---: | :--- | :--- | ---: | :--- | :--- | ---: | ---: |"]
    for c in report["cases"]:
        rows = {r["route"]: r for r in c["rows"]}
        least = min(c["rows"], key=lambda r: r["cpu_s"])["route"]
        ratio = (f"{rows['lp/full']['cpu_s'] / rows['colgen/capacity']['cpu_s']:.1f}"
                 if "lp/full" in rows and "colgen/capacity" in rows else "-")
        x = c["cross"]
        lines.append(f"| {c['case']} | {c['servers']} | {c['auto']} | {least} | {ratio} | "
                     f"{c['lp_values_agree']} | {c['augmented_values_agree']} | "
                     f"{'-' if x is None else format(x['lp'], '.10g')} | "
                     f"{'-' if x is None else format(x['colgen'], '.10g')} |")
    lines += ["", "The augmented LP's optimum depends on the ring sizes Lemma 7 keeps from the selection LP's "
              "vertex; where the capacity route's vertex keeps other sizes it differs.  For the same sizes (the "
              "last two columns: those of the full selection LP) the tree LP and column generation agree to "
              f"{RTOL:g} in every case checked (up to {CROSS_MAX_SERVERS} servers); the benchmark stops "
              "otherwise.",
              ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    cli = parser(NAME, __doc__, "the tiny and small presets only; print only")
    args = cli.parse_args(argv)
    cases = QUICK_CASES if args.quick else tuple(CASES)
    start = time.perf_counter()
    report = {**header(NAME, ("clusteropt", "highspy", "numpy", "pyomo")),
              "command": "python -m benchmarks.gadget_route" + (" --quick" if args.quick else ""),
              "parameters": {"cases": list(cases), "routes": list(ROUTES), "max_servers": MAX_SERVERS,
                             "repeats": REPEATS, "seed": SEED, "utility": "sqrt"}, "cases": []}
    lp_rs_mde(case_problem("tiny")[1], rng=SEED)  # warm-up (imports), not recorded
    for case in cases:
        report["cases"].append(run_case(case))
    finish(NAME, report, to_markdown, output_dir(args), start)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
