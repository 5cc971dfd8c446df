"""Ring partitioning (paper 004): how far the time-expanded OPT_dyn MILP solves, for its size guard.

``clusteropt.models.ring.offline.MAX_DYNAMIC_BINARIES`` (5,000 binaries ``T' n l``) and the advice to prefer
the DP (``clusteropt.algorithms.ring.offline.dynamic_opt_dp``) rest on these measurements.  For each
case (``n``, ``l``, pattern, request count ``T``, seed 0, ``alpha = 1``, ``random_ring``'s defaults
otherwise) the MILP (``build_ring_dynamic_opt``, run-length compressed: ``T'`` steps) is built and
solved by HiGHS under a time limit (the size guard lifted: measuring it is the point); build (Pyomo
model) and solve (hand-over to HiGHS and HiGHS's own time, the package's ``SolveResult``) are timed
separately.  Where the DP fits, its OPT_dyn is computed too and the MILP's proven optimum must equal
it (else the benchmark stops).  The LP relaxation (``relax=True``) is timed on a larger case, where
the MILP is out of reach.

A second table times the DP itself near its own limits (``MAX_DP_LABELLINGS``, ``MAX_DP_GRID`` of
``clusteropt.algorithms.ring.offline``), per compressed request, wall and CPU: ``method="matrix"`` at
n = 14, l = 2 (3,432 labellings, the limit raised to fit) and ``method="transform"`` at every shape
at the grid limit ``l^n <= 2^24`` (n = 24 on 2 servers, 15 on 3, 12 on 4), and on a sequence whose
table does not fit ``MAX_DP_MEMORY`` (n = 18 on 2 servers, 4,000 requests), where the backtrack
recomputes blocks from checkpoints.  Beside it, ``dynamic_opt_value`` (one forward pass, no
schedule) on the same instance: the ratio is what the schedule costs.

Run ``python -m benchmarks.ring_dynamic_milp`` (writes ``benchmarks/results/``) or ``--quick``
(the smallest cases, print only).
"""

from __future__ import annotations

import math
import time

from benchmarks._report import finish, header, output_dir, parser
from clusteropt.algorithms.ring.offline import (
    MAX_DP_MEMORY,
    compress_requests,
    dynamic_dp_plan,
    dynamic_opt_dp,
    dynamic_opt_value,
)
from clusteropt.instances.ring import random_ring
from clusteropt.models.ring.offline import build_ring_dynamic_opt
from clusteropt.solvers import solve

NAME = "ring_dynamic_milp"
#: (n, servers, pattern, requests, relax); relax cases are LP relaxations only.
CASES = [
    (8, 2, "hotspot", 32, False),
    (8, 2, "uniform", 32, False),
    (8, 2, "hotspot", 64, False),
    (8, 2, "uniform", 64, False),
    (8, 2, "hotspot", 96, False),
    (8, 2, "uniform", 96, False),
    (12, 3, "hotspot", 48, False),
    (12, 3, "uniform", 48, False),
    (16, 4, "hotspot", 48, False),
    (16, 4, "uniform", 48, False),
    (32, 4, "uniform", 256, True),
]
QUICK = [c for c in CASES if c[0] == 8 and c[3] <= 32]
#: (n, servers, pattern, requests, method, max_labellings) for the DP's own timing.
DP_CASES = [(14, 2, "uniform", 64, "matrix", 3_432), (22, 2, "uniform", 24, "transform", None),
            (24, 2, "uniform", 24, "transform", None), (15, 3, "uniform", 24, "transform", None),
            (12, 4, "uniform", 24, "transform", None), (18, 2, "uniform", 4_000, "transform", None)]
QUICK_DP = [(12, 2, "uniform", 32, "matrix", None), (16, 2, "uniform", 16, "transform", None)]


def _case(n: int, servers: int, pattern: str, requests: int, relax: bool, time_limit: float) -> dict:
    inst = random_ring(n, servers, requests, pattern, seed=0)
    steps = int(compress_requests(inst.requests)[0].size)
    t0 = time.perf_counter()
    model = build_ring_dynamic_opt(inst, relax=relax, max_binaries=10**6)
    build_s = time.perf_counter() - t0
    res = solve(model, "highs", time_limit=time_limit, raise_on_nonoptimal=False)
    row = {"n": n, "servers": servers, "pattern": pattern, "requests": requests, "relax": relax,
           "steps": steps, "binaries": steps * n * servers, "build_s": build_s,
           "handover_s": res.build_seconds, "solve_s": res.solve_seconds, "status": res.termination.value,
           "proven": res.is_optimal, "objective": res.objective, "bound": res.bound, "dp": None, "dp_s": None}
    if not relax:
        try:
            t0 = time.perf_counter()
            dp = dynamic_opt_dp(inst)
        except ValueError:  # beyond the DP's size limits
            return row
        row["dp"], row["dp_s"] = float(dp.value), time.perf_counter() - t0
        if res.is_optimal and not math.isclose(row["dp"], float(res.objective), rel_tol=1e-6, abs_tol=1e-6):
            raise RuntimeError(f"n={n} {pattern} T={requests}: MILP {res.objective} != DP {row['dp']}")
    return row


def _dp_case(n: int, servers: int, pattern: str, requests: int, method: str, max_labellings: int | None) -> dict:
    inst = random_ring(n, servers, requests, pattern, seed=0)
    steps = int(compress_requests(inst.requests)[0].size)
    kwargs = {} if max_labellings is None else {"max_labellings": max_labellings}
    plan = dynamic_dp_plan(inst, method=method, **kwargs)
    t0, c0 = time.perf_counter(), time.process_time()
    dp = dynamic_opt_dp(inst, method=method, **kwargs)
    seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
    row = {"n": n, "servers": servers, "pattern": pattern, "requests": requests, "method": method,
           "labellings": plan.labellings, "grid": plan.grid, "steps": steps, "value": float(dp.value),
           "table_bytes": 8 * steps * plan.labellings,
           "checkpointed": method == "transform" and 8 * steps * plan.labellings > MAX_DP_MEMORY,
           "seconds": seconds, "cpu_s": cpu, "ms_per_step": 1000 * seconds / steps,
           "value_only_s": None, "value_only_cpu_s": None}
    if method == "transform":
        t0, c0 = time.perf_counter(), time.process_time()
        value = dynamic_opt_value(inst)
        row["value_only_s"], row["value_only_cpu_s"] = time.perf_counter() - t0, time.process_time() - c0
        if not math.isclose(value, row["value"], rel_tol=1e-9, abs_tol=1e-9):
            raise RuntimeError(f"n={n} l={servers}: dynamic_opt_value {value} != dynamic_opt_dp {row['value']}")
    return row


def _num(x, fmt: str = "{:.2f}") -> str:
    return "" if x is None or (isinstance(x, float) and not math.isfinite(x)) else fmt.format(x)


def to_markdown(report: dict) -> str:
    lines = [f"# {NAME}", "",
             f"created {report['created']}, code version {report['code_version']}, "
             f"{report['machine']['cpu_count']} CPUs, load average before "
             f"{report['machine']['load_average_1_5_15']}, after {report['machine'].get('load_average_after')}; "
             f"HiGHS {report['versions'].get('highspy')}, Pyomo {report['versions'].get('pyomo')}; "
             f"time limit {report['parameters']['time_limit']:g} s per solve.", "",
             "Reproduce: `python -m benchmarks.ring_dynamic_milp`.  Seed 0, alpha = 1; `steps` = T' after "
             "run-length compression, `binaries` = T' n l; build = the Pyomo model; hand-over and solve = "
             "the package's `SolveResult` (HiGHS's own time in solve); `dp` = OPT_dyn by "
             "`dynamic_opt_dp` where it fits (a proven MILP optimum equals it).", "",
             "| n | l | pattern | T | LP only | T' | binaries | build s | hand-over s | solve s | status | "
             "objective | bound | dp | dp s |",
             "|" + " ---: |" * 2 + " :--- | ---: | :--- |" + " ---: |" * 5 + " :--- |" + " ---: |" * 4]
    for r in report["cases"]:
        lines.append(f"| {r['n']} | {r['servers']} | {r['pattern']} | {r['requests']} | "
                     f"{'yes' if r['relax'] else ''} | {r['steps']} | {r['binaries']:,} | {_num(r['build_s'])} | "
                     f"{_num(r['handover_s'])} | {_num(r['solve_s'])} | {r['status']} | "
                     f"{_num(r['objective'], '{:g}')} | {_num(r['bound'], '{:g}')} | {_num(r['dp'], '{:g}')} | "
                     f"{_num(r['dp_s'])} |")
    lines += ["", "The DP alone (seed 0; `ms / step` = its whole wall time over T'; `table GB` = the T' x "
              "labellings values a stored-table backtrack would keep, `checkpointed` when that exceeds "
              f"MAX_DP_MEMORY = {MAX_DP_MEMORY / 2**30:g} GiB; `value only` = `dynamic_opt_value`, one forward "
              "pass without the schedule):", "",
              "| n | l | pattern | T | method | labellings | l^n | T' | table GB | checkpointed | OPT_dyn | s | "
              "CPU s | ms / step | value only s | value only CPU s |",
              "|" + " ---: |" * 2 + " :--- | ---: | :--- |" + " ---: |" * 4 + " :--- |" + " ---: |" * 6]
    for r in report["dp"]:
        lines.append(f"| {r['n']} | {r['servers']} | {r['pattern']} | {r['requests']} | {r['method']} | "
                     f"{r['labellings']:,} | {r['grid']:,} | {r['steps']} | {r['table_bytes'] / 1e9:.2f} | "
                     f"{'yes' if r['checkpointed'] else ''} | {r['value']:g} | {r['seconds']:.2f} | "
                     f"{r['cpu_s']:.2f} | {r['ms_per_step']:.1f} | {_num(r['value_only_s'])} | "
                     f"{_num(r['value_only_cpu_s'])} |")
    lines += ["", f"Whole benchmark {report['wall_s']:.0f} s wall.", ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = parser(NAME, __doc__, "n = 8 with 32 requests only, print only")
    ap.add_argument("--time-limit", type=float, default=60.0, help="seconds per solve (default 60)")
    args = ap.parse_args(argv)
    start = time.perf_counter()
    report = header(NAME, ("highspy", "pyomo", "numpy"))
    report["parameters"] = {"time_limit": args.time_limit, "quick": bool(args.quick), "seed": 0}
    report["cases"] = []
    for case in QUICK if args.quick else CASES:
        row = _case(*case, time_limit=args.time_limit)
        print(f"n={row['n']} {row['pattern']} T={row['requests']} T'={row['steps']}: {row['status']} "
              f"{row['objective']} (build {row['build_s']:.2f} s, solve {row['solve_s']:.2f} s)", flush=True)
        report["cases"].append(row)
    report["dp"] = []
    for case in QUICK_DP if args.quick else DP_CASES:
        row = _dp_case(*case)
        print(f"DP n={row['n']} {row['method']}: {row['ms_per_step']:.1f} ms a step", flush=True)
        report["dp"].append(row)
    finish(NAME, report, to_markdown, output_dir(args), start)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
