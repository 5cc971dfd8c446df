"""Coflow LP bound (paper 001): row generation through Pyomo against one live HiGHS model, same instances.

The slides' concurrent-open-shop LP (coflow.md B6) is solved by row generation (B8) two ways:
``cos_lower_bound(builder="pyomo")`` (every cut a Pyomo row, handed over through Pyomo's
persistent HiGHS interface) and ``builder="matrix"`` (the default with HiGHS: the starting rows as
arrays, cuts appended with ``addRows`` and purged with ``deleteRows`` on one live model;
:mod:`clusteropt.models.coflow.matrix`).  On trace-sized instances (``random_coflows``: 526 coflows,
150 ports, Poisson arrivals at load 0.9 and all released at slot 0, as ``coflow_scale``), per route:
rounds, cuts, the starting model's build, the hand-off of rows (build + hand-off for Pyomo: the cut
expressions and ``update()``), HiGHS's own time, separation, wall time, and
``(build + hand-off) / solve``.  Both routes must converge to the same bound.

Run ``python -m benchmarks.coflow_lp_routes`` (writes ``benchmarks/results/``) or ``--quick``.
"""

from __future__ import annotations

import time

from benchmarks._report import finish, header, output_dir, parser
from clusteropt.instances import random_coflows
from clusteropt.models.coflow.bound import cos_lower_bound

NAME = "coflow_lp_routes"
FULL = {"n_coflows": 526, "n_ports": 150, "units_scale": 2000.0, "seeds": [0, 1, 2], "load": 0.9,
        "weights": "random", "releases": [True, False]}
QUICK = {"n_coflows": 60, "n_ports": 16, "units_scale": 20.0, "seeds": [0], "load": 0.9, "weights": "random",
         "releases": [False]}
REL = 1e-6


def run_case(params: dict, seed: int, release: bool) -> dict:
    inst = random_coflows(params["n_coflows"], params["n_ports"], units_scale=params["units_scale"],
                          load=params["load"], weights=params["weights"], release=release, seed=seed)
    out: dict = {"seed": seed, "release": release, "coflows": inst.n_coflows, "flows": inst.n_flows, "routes": {}}
    for builder in ("pyomo", "matrix"):
        t0 = time.perf_counter()
        bound, _, rg = cos_lower_bound(inst, builder=builder)
        wall = time.perf_counter() - t0
        if not rg.converged:
            raise AssertionError(f"seed {seed} release={release} {builder}: {rg.message}")
        out["routes"][builder] = {
            "bound": bound, "rounds": rg.rounds, "cuts": rg.n_cuts, "purged": sum(rg.removed_per_round),
            "model_build_s": rg.model_build_seconds, "handoff_s": rg.build_seconds, "solve_s": rg.solve_seconds,
            "separation_s": rg.separation_seconds, "wall_s": wall,
            "overhead_over_solve": (rg.model_build_seconds + rg.build_seconds) / rg.solve_seconds}
        print(f"  seed {seed} release={release} {builder}: {rg.rounds} rounds, wall {wall:.2f} s, "
              f"solve {rg.solve_seconds:.2f} s", flush=True)
    a, b = out["routes"]["pyomo"]["bound"], out["routes"]["matrix"]["bound"]
    if abs(a - b) > REL * max(1.0, abs(a)):
        raise AssertionError(f"seed {seed} release={release}: bounds {a} (pyomo) and {b} (matrix) differ")
    out["speedup"] = out["routes"]["pyomo"]["wall_s"] / out["routes"]["matrix"]["wall_s"]
    return out


def to_markdown(report: dict) -> str:
    lines = [f"# {NAME}", "", f"recorded {report['created']} on {report['machine']['platform']}, "
             f"{report['machine']['cpu_count']} CPUs; parameters {report['parameters']}", "",
             "| seed | released at 0 | flows | route | bound | rounds | cuts | purged | model build s "
             "| hand-off s | HiGHS s | separation s | wall s | (build + hand-off) / solve | speed-up |",
             "| ---: | :--- | ---: | :--- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: "
             "| ---: |"]
    for c in report["cases"]:
        for route, r in c["routes"].items():
            lines.append(f"| {c['seed']} | {not c['release']} | {c['flows']} | {route} | {r['bound']:.8g} | "
                         f"{r['rounds']} | {r['cuts']} | {r['purged']} | {r['model_build_s']:.3f} | "
                         f"{r['handoff_s']:.3f} | {r['solve_s']:.2f} | {r['separation_s']:.2f} | "
                         f"{r['wall_s']:.2f} | {r['overhead_over_solve']:.3f} | {c['speedup']:.2f} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    args = parser(NAME, __doc__, "one small instance; print only").parse_args(argv)
    params = dict(QUICK if args.quick else FULL)
    start = time.perf_counter()
    report = {**header(NAME, ("clusteropt", "pyomo", "highspy", "numpy")), "parameters": params}
    report["cases"] = [run_case(params, s, r) for r in params["releases"] for s in params["seeds"]]
    finish(NAME, report, to_markdown, output_dir(args), start)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
