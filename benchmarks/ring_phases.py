"""Ring partitioning (paper 004): where the randomized dynamic algorithm beats the greedy on phases.

``ring-ratio`` records the greedy baseline (move a server boundary to a less-requested edge within
``eps k / 2``) below the paper's dynamic algorithm on the phases pattern from n = 32 on.  This
sweeps the two knobs of that pattern at n = 64, l = 4 (k = 16), 256 requests per process, 5 seeds:
the phase length (the hot arc jumps to a random place every ``phase`` requests: n, 4n, 10n --
the default of ``random_ring`` --, 40n, 160n) and the hot arc's width (4 edges, a quarter of a
server as in ``ring-ratio``, or 16, a whole server).  Per cell: every policy's verified cost
(``check_ring_run``), and OPT_dyn's bracket (the window lower bound and ``min`` of the moving-arcs
upper bound).  The ratios ALG / ub of different policies share a denominator, so their order is
exact.

Run ``python -m benchmarks.ring_phases`` (writes ``benchmarks/results/``) or ``--quick``.
"""

from __future__ import annotations

import time

import numpy as np

from benchmarks._report import finish, header, output_dir, parser
from clusteropt.algorithms.ring.offline import dynamic_arc_bound, dynamic_window_bound
from clusteropt.instances import random_ring
from clusteropt.online.ring import run_ring
from clusteropt.verify import check_ring_run

NAME = "ring_phases"
POLICIES = ("dynamic", "dynamic-wfa", "greedy", "static", "never")
FULL = {"n": 64, "servers": 4, "requests_per_process": 256, "phases_n": [1, 4, 10, 40, 160], "widths": [4, 16],
        "seeds": [0, 1, 2, 3, 4]}
QUICK = {"n": 16, "servers": 4, "requests_per_process": 32, "phases_n": [1, 10], "widths": [2], "seeds": [0]}


def main(argv: list[str] | None = None) -> int:
    args = parser(NAME, __doc__, "n = 16, two phase lengths, one seed; print only").parse_args(argv)
    p = dict(QUICK if args.quick else FULL)
    start = time.perf_counter()
    report = {**header(NAME, ("clusteropt", "numpy")), "parameters": p, "cells": []}
    n = p["n"]
    for mult in p["phases_n"]:
        for width in p["widths"]:
            costs: dict[str, list[float]] = {q: [] for q in POLICIES}
            lbs, ubs = [], []
            for seed in p["seeds"]:
                inst = random_ring(n, p["servers"], p["requests_per_process"] * n, "phases", seed=seed,
                                   width=width, phase=mult * n)
                for q in POLICIES:
                    check = check_ring_run(inst, run_ring(q, inst, seed=seed))
                    check.raise_if_infeasible()
                    costs[q].append(float(check.value))
                lbs.append(dynamic_window_bound(inst).value)
                ubs.append(dynamic_arc_bound(inst).value)
            ub = np.asarray(ubs)
            cell = {"phase": f"{mult}n", "width": width, "lb": float(np.mean(lbs)), "ub": float(ub.mean()),
                    **{f"{q}_total": float(np.mean(v)) for q, v in costs.items()},
                    **{f"{q}_over_ub": float(np.mean(np.asarray(v) / ub)) for q, v in costs.items()},
                    "dynamic_beats_greedy": int(sum(a < b for a, b in zip(costs["dynamic"], costs["greedy"],
                                                                          strict=True)))}
            report["cells"].append(cell)
            print(f"  phase {mult}n width {width}: " + ", ".join(f"{q} {cell[q + '_total']:.0f}" for q in POLICIES)
                  + f", ub {cell['ub']:.0f}", flush=True)

    def markdown(rep: dict) -> str:
        seeds = len(rep["parameters"]["seeds"])
        lines = [f"# {NAME}", "", f"recorded {rep['created']} on {rep['machine']['platform']}; parameters "
                 f"{rep['parameters']}", "", f"Mean verified cost over {seeds} seeds (ALG / ub in parentheses; "
                 "ub = the moving-arcs upper bound on OPT_dyn, lb = the window lower bound):", "",
                 "| phase | width | lb | ub | " + " | ".join(POLICIES) + " | seeds where dynamic < greedy |",
                 "|---|---:|---:|---:|" + "---:|" * len(POLICIES) + "---:|"]
        for c in rep["cells"]:
            lines.append(f"| {c['phase']} | {c['width']} | {c['lb']:.1f} | {c['ub']:.1f} | "
                         + " | ".join(f"{c[q + '_total']:.1f} ({c[q + '_over_ub']:.2f})" for q in POLICIES)
                         + f" | {c['dynamic_beats_greedy']} of {seeds} |")
        return "\n".join(lines) + "\n"

    finish(NAME, report, markdown, output_dir(args), start)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
