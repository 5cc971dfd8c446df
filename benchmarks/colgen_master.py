"""The column-generation master's simplex: primal (the default) against HiGHS's own default, dual.

:func:`clusteropt.models.gadget.colgen.solve_embedding_colgen` adds columns every round and re-solves
the restricted master on the same ``highspy.Highs``; the last basis stays primal feasible, so primal
simplex re-starts from it (``master="primal"``), while HiGHS's default dual simplex (``"dual"``) does
not.  One slot's augmented LP (every job at its largest ring size ``kmax``) on the quotient tree of
the oversubscribed fat-trees of :mod:`benchmarks.gadget_fattree` (where link prices are positive and
the rounds many), solved both ways: rounds, placements, pricing and master seconds, and the value
(the two must agree, or the benchmark stops).

Run ``python -m benchmarks.colgen_master`` (writes ``benchmarks/results/``) or ``--quick``.
"""

from __future__ import annotations

import dataclasses
import time

from benchmarks._report import finish, header, output_dir, parser
from benchmarks.gadget_fattree import OVERSUBSCRIBED
from clusteropt.algorithms.gadget.quotient import fat_tree_groups, quotient_tree
from clusteropt.instances.gadget.instance import k_ary_fat_tree, random_gadget
from clusteropt.models.gadget.colgen import MASTER_STRATEGIES, solve_embedding_colgen
from clusteropt.models.gadget.gvne import slot_problem

NAME = "colgen_master"
FULL = {**OVERSUBSCRIBED, "k": [8, 12]}
QUICK = {**OVERSUBSCRIBED, "k": [4], "n_jobs": 10}


def one(k: int, params: dict) -> list[dict]:
    cluster = k_ary_fat_tree(k, gpus=tuple(params["gpus"]), host_bw=params["host_bw"],
                             fabric_bw=params["fabric_bw"], seed=params["seed"])
    inst = random_gadget(params["n_jobs"], cluster=cluster, horizon=1, arrivals="zero", utility=params["utility"],
                         bandwidth=tuple(params["bandwidth"]), workers=tuple(params["workers"]),
                         seed=params["seed"])
    q = quotient_tree(cluster, fat_tree_groups(cluster))
    problem = slot_problem(dataclasses.replace(inst, cluster=q.tree), 1)
    kappa = {int(i): int(m) for i, m in zip(problem.jobs.tolist(), problem.kmax.tolist(), strict=True)}
    paths = q.tree.paths()
    rows = []
    for master in MASTER_STRATEGIES:
        start = time.perf_counter()
        res = solve_embedding_colgen(problem, kappa, paths=paths, master=master)
        rows.append({"k": k, "servers": cluster.n_servers, "master": master, "rounds": res.rounds,
                     "columns": res.columns, "pricing_s": res.pricing_seconds, "master_s": res.solve_seconds,
                     "total_s": time.perf_counter() - start, "value": res.value, "bound": res.bound})
    a, b = rows[0]["value"], rows[1]["value"]
    if abs(a - b) > 1e-6 * max(1.0, abs(a)):
        raise AssertionError(f"k = {k}: the masters disagree: {a} against {b}")
    return rows


def to_markdown(report: dict) -> str:
    lines = [f"# {report['benchmark']}", "",
             f"recorded {report['created']} (code version {report['code_version']}) on "
             f"{report['machine']['platform']}, {report['machine']['cpu_count']} CPUs, load average after "
             f"{report['machine'].get('load_average_after')}; parameters {report['parameters']}", "",
             "| k | servers | master | rounds | placements | pricing s | master s | total s | value |",
             "| ---: | ---: | :--- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in report["rows"]:
        lines.append(f"| {r['k']} | {r['servers']} | {r['master']} | {r['rounds']} | {r['columns']} | "
                     f"{r['pricing_s']:.2f} | {r['master_s']:.2f} | {r['total_s']:.2f} | {r['value']:.10g} |")
    lines += ["", "The two masters reach the same value at every size (checked).", ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = parser(NAME, __doc__, "one small fat-tree; print only").parse_args(argv)
    params = QUICK if args.quick else FULL
    start = time.perf_counter()
    report = {**header(NAME, ("clusteropt", "highspy", "numpy")), "parameters": params, "rows": []}
    for k in params["k"]:
        for row in one(k, params):
            report["rows"].append(row)
            print(f"{NAME}: k = {k}, {row['master']}: master {row['master_s']:.2f} s in {row['rounds']} rounds",
                  flush=True)
    finish(NAME, report, to_markdown, output_dir(args), start)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
