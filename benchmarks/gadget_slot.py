"""GADGET (paper 000): one slot of problem (10) at the paper's scale, exact ILP forms vs the greedy.

On the paper's Sec. VI-1 setting (``gadget_preset("paper")``: 50-server fat-tree, log utility so
that one slot's gains are not all underflowed sigmoid zeros), the slot problem of a given slot
with no earlier allocation is built in both G-VNE forms (:func:`build_gvne`: ``"flow"``,
(12)-(19) with routing variables, and ``"tree"``, without them), and the tree form once more as
arrays (``tree-arrays``: :func:`build_gvne_matrix` with ``relax=False``, the exact slot solver's
default route, handed to HiGHS with ``passModel``), and solved by HiGHS with a time limit;
recorded separately: model size, build time, hand-off, solve time, ``(build + hand-off) /
solve``, objective and bound.  The fast
greedy slot solver (:func:`greedy_slot`) is measured against the best bound.  Every allocation is
checked by :func:`clusteropt.verify.check_gadget_allocation`.

Run ``python -m benchmarks.gadget_slot`` (writes ``benchmarks/results/``) or ``--quick``.
"""

from __future__ import annotations

import time

import numpy as np
import pyomo.environ as pyo

from benchmarks._report import finish, header, output_dir, parser
from clusteropt.algorithms.gadget.greedy import greedy_slot
from clusteropt.instances.gadget.instance import gadget_preset
from clusteropt.models.gadget.gvne import allocation_from_solution, build_gvne, slot_problem
from clusteropt.models.gadget.matrix import allocation_from_matrix, build_gvne_matrix, solve_matrix
from clusteropt.solvers import solve
from clusteropt.verify import check_gadget_allocation

NAME = "gadget_slot"
FULL = {"cases": [[100, 60], [400, 100]], "seed": 1, "utility": "log", "time_limit": 120.0}
QUICK = {"cases": [[30, 40]], "seed": 1, "utility": "log", "time_limit": 20.0}


def run_case(params: dict, n_jobs: int, slot: int) -> dict:
    inst = gadget_preset("paper", jobs=n_jobs, seed=params["seed"], utility=params["utility"])
    p = slot_problem(inst, slot, np.zeros(inst.n_jobs))
    out = {"jobs": n_jobs, "slot": slot, "active": int(p.jobs.size), "rings": p.n_rings, "forms": {}}
    bound = -np.inf
    for form in ("tree", "flow"):
        t0 = time.perf_counter()
        m = build_gvne(p, form=form)
        build = time.perf_counter() - t0
        n_var = sum(len(v) for v in m.component_objects(pyo.Var, active=True))
        n_row = sum(len(c) for c in m.component_objects(pyo.Constraint, active=True))
        res = solve(m, time_limit=params["time_limit"], raise_on_nonoptimal=False)
        if not res.has_solution:
            raise AssertionError(f"{form}: no solution ({res.termination.name})")
        check = check_gadget_allocation(inst, allocation_from_solution(p, m), slot)
        if not check.ok:
            raise AssertionError(f"{form}: {check.violations[:3]}")
        bound = max(bound, res.bound if res.bound is not None else res.objective)
        out["forms"][form] = {"variables": n_var, "rows": n_row, "build_s": build,
                              "handoff_s": res.build_seconds, "solve_s": res.solve_seconds,
                              "termination": res.termination.name, "objective": res.objective, "bound": res.bound}
        print(f"  {n_jobs} jobs slot {slot} {form}: {n_var} vars, build {build:.2f} s, "
              f"solve {res.solve_seconds:.1f} s, {res.termination.name} {res.objective:.6g} / {res.bound}",
              flush=True)
    t0 = time.perf_counter()
    lp = build_gvne_matrix(p, relax=False)
    build = time.perf_counter() - t0
    res, x = solve_matrix(lp, time_limit=params["time_limit"], raise_on_nonoptimal=False)
    if not res.has_solution:
        raise AssertionError(f"tree-arrays: no solution ({res.termination.name})")
    check = check_gadget_allocation(inst, allocation_from_matrix(p, lp, x), slot)
    if not check.ok:
        raise AssertionError(f"tree-arrays: {check.violations[:3]}")
    bound = max(bound, res.bound if res.bound is not None else res.objective)
    out["forms"]["tree-arrays"] = {"variables": lp.n_cols, "rows": lp.n_rows, "build_s": build,
                                   "handoff_s": res.build_seconds, "solve_s": res.solve_seconds,
                                   "termination": res.termination.name, "objective": res.objective,
                                   "bound": res.bound}
    print(f"  {n_jobs} jobs slot {slot} tree-arrays: build {build:.3f} s, hand-off {res.build_seconds:.3f} s, "
          f"solve {res.solve_seconds:.1f} s, {res.termination.name} {res.objective:.6g}", flush=True)
    for f in out["forms"].values():
        f["overhead_over_solve"] = (f["build_s"] + f["handoff_s"]) / f["solve_s"] if f["solve_s"] > 0 else None
    t0 = time.perf_counter()
    alloc, gain = greedy_slot(p)
    seconds = time.perf_counter() - t0
    if not check_gadget_allocation(inst, alloc, slot).ok:
        raise AssertionError("greedy allocation failed verification")
    best = max(f["objective"] for f in out["forms"].values())
    out["greedy"] = {"objective": gain, "seconds": seconds, "over_best": gain / best if best else None,
                     "over_bound": gain / bound if bound else None}
    out["bound"] = bound
    return out


def to_markdown(report: dict) -> str:
    lines = [f"# {NAME}", "",
             f"recorded {report['created']} on {report['machine']['platform']}, "
             f"{report['machine']['cpu_count']} CPUs; parameters {report['parameters']}", "",
             "| jobs | slot | active | form | variables | rows | build s | hand-off s | solve s "
             "| (build + hand-off) / solve | status | objective | bound |",
             "| ---: | ---: | ---: | :--- | ---: | ---: | ---: | ---: | ---: | ---: | :--- | ---: | ---: |"]
    for c in report["cases"]:
        for form, f in c["forms"].items():
            lines.append(f"| {c['jobs']} | {c['slot']} | {c['active']} | {form} | {f['variables']} | "
                         f"{f['rows']} | {f['build_s']:.3f} | {f['handoff_s']:.3f} | {f['solve_s']:.2f} | "
                         f"{f['overhead_over_solve']:.3f} | {f['termination']} | "
                         f"{f['objective']:.6g} | {f['bound']:.6g} |")
    lines += ["", "| jobs | slot | greedy objective | greedy s | greedy / best ILP incumbent "
              "| greedy / best bound |",
              "| ---: | ---: | ---: | ---: | ---: | ---: |"]
    for c in report["cases"]:
        g = c["greedy"]
        lines.append(f"| {c['jobs']} | {c['slot']} | {g['objective']:.6g} | {g['seconds']:.3f} | "
                     f"{g['over_best']:.3f} | {g['over_bound']:.3f} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    args = parser(NAME, __doc__, "one small case, short time limit; print only").parse_args(argv)
    params = dict(QUICK if args.quick else FULL)
    out = output_dir(args)
    report = {**header(NAME, ("clusteropt", "pyomo", "highspy", "numpy")), "parameters": params}
    report["cases"] = [run_case(params, n, t) for n, t in params["cases"]]
    finish(NAME, report, to_markdown, out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
