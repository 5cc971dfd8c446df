"""mlBroker (paper 003): P_f (9) and the MILP (8) built in Pyomo against built as arrays, same HiGHS.

At Sec. 6.1's scale (``broker_preset("paper")``: 100 jobs, T = 50, R = 15, K = 4) the offline
problems are built two ways and handed to HiGHS: the Pyomo model
(:func:`~clusteropt.models.broker.milp.build_broker_milp`, then
:func:`~clusteropt.solvers.direct.solve_highs_direct`: the compiler and ``passModel`` are its
hand-off) and the arrays (:func:`~clusteropt.models.broker.matrix.build_broker_arrays`, then
``passModel``).  Recorded per route: size, build, hand-off, HiGHS's own time, objective, and
``(build + hand-off) / solve``; both routes must reach the same P_f.  The MILP (8) runs under a
time limit (it is not solved to optimality at this scale in minutes); its incumbents and bounds
are recorded as they are.

Run ``python -m benchmarks.broker_arrays`` (writes ``benchmarks/results/``) or ``--quick``.
"""

from __future__ import annotations

import time

from benchmarks._report import finish, header, output_dir, parser
from clusteropt.instances.broker import broker_preset
from clusteropt.models.broker.matrix import build_broker_arrays, solve_broker_arrays
from clusteropt.models.broker.milp import build_broker_milp
from clusteropt.solvers.direct import solve_highs_direct

NAME = "broker_arrays"
FULL = {"preset": "paper", "seeds": [0, 1, 2], "price_forms": ["tight", "bigm"], "milp_seeds": [0],
        "milp_time_limit": 120.0}
QUICK = {"preset": "small", "seeds": [0], "price_forms": ["tight"], "milp_seeds": [0], "milp_time_limit": 20.0}
REL = 1e-6


def _route(inst, price_form: str, relax: bool, builder: str, time_limit) -> dict:
    t0 = time.perf_counter()
    if builder == "pyomo":
        model = build_broker_milp(inst, price_form=price_form, relax=relax)
        build = time.perf_counter() - t0
        res = solve_highs_direct(model, time_limit=time_limit, raise_on_nonoptimal=False)
        size = None
    else:
        lp = build_broker_arrays(inst, price_form=price_form, relax=relax)
        build = time.perf_counter() - t0
        res, _ = solve_broker_arrays(lp, time_limit=time_limit)
        size = {"columns": lp.n_cols, "rows": lp.n_rows, "nonzeros": lp.nnz}
    return {"build_s": build, "handoff_s": res.build_seconds, "solve_s": res.solve_seconds,
            "termination": res.termination.name, "objective": res.objective, "bound": res.bound,
            "overhead_over_solve": (build + res.build_seconds) / res.solve_seconds, "size": size}


def main(argv: list[str] | None = None) -> int:
    args = parser(NAME, __doc__, "small preset, one seed; print only").parse_args(argv)
    params = dict(QUICK if args.quick else FULL)
    start = time.perf_counter()
    report = {**header(NAME, ("clusteropt", "pyomo", "highspy", "numpy", "scipy")), "parameters": params,
              "cases": []}
    todo = [(seed, form, True, None) for seed in params["seeds"] for form in params["price_forms"]]
    todo += [(seed, "tight", False, params["milp_time_limit"]) for seed in params["milp_seeds"]]
    for seed, form, relax, limit in todo:
        inst = broker_preset(params["preset"], seed=seed)
        case = {"seed": seed, "price_form": form, "problem": "P_f (9)" if relax else "MILP (8)", "routes": {}}
        for builder in ("pyomo", "arrays"):
            case["routes"][builder] = _route(inst, form, relax, builder, limit)
            r = case["routes"][builder]
            print(f"  seed {seed} {form} {case['problem']} {builder}: build {r['build_s']:.2f} s, hand-off "
                  f"{r['handoff_s']:.2f} s, solve {r['solve_s']:.2f} s, {r['termination']} {r['objective']}",
                  flush=True)
        a, b = (case["routes"][k]["objective"] for k in ("pyomo", "arrays"))
        if relax and abs(a - b) > REL * max(1.0, abs(a)):
            raise AssertionError(f"seed {seed} {form}: P_f {a} (Pyomo) and {b} (arrays) differ")
        report["cases"].append(case)

    def markdown(rep: dict) -> str:
        lines = [f"# {NAME}", "", f"recorded {rep['created']} on {rep['machine']['platform']}, "
                 f"{rep['machine']['cpu_count']} CPUs; parameters {rep['parameters']}", "",
                 "| seed | price form | problem | route | columns | nonzeros | build s | hand-off s | HiGHS s "
                 "| (build + hand-off) / solve | status | objective | bound |",
                 "| ---: | :--- | :--- | :--- | ---: | ---: | ---: | ---: | ---: | ---: | :--- | ---: | ---: |"]
        for c in rep["cases"]:
            size = c["routes"]["arrays"]["size"]
            for route, r in c["routes"].items():
                bound = "" if r["bound"] is None else f"{r['bound']:.6g}"
                lines.append(f"| {c['seed']} | {c['price_form']} | {c['problem']} | {route} | {size['columns']} | "
                             f"{size['nonzeros']} | {r['build_s']:.2f} | {r['handoff_s']:.2f} | "
                             f"{r['solve_s']:.2f} | {r['overhead_over_solve']:.3f} | {r['termination']} | "
                             f"{r['objective']:.6g} | {bound} |")
        return "\n".join(lines) + "\n"

    finish(NAME, report, markdown, output_dir(args), start)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
