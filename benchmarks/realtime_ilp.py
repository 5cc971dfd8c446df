"""Real-time jobs (paper 002): Alg. 1's max-weight ILP, a Pyomo model every frame vs one live HiGHS model.

Alg. 1 line 6 solves the set packing of Eq. (2) every frame.  ``MaxWeight(method="ilp")`` used to
build :func:`~clusteropt.models.realtime.build_max_weight_ilp` in Pyomo and hand it to HiGHS every
frame; its default route is now one :class:`~clusteropt.models.realtime.PersistentMaxWeight` per
run, whose costs, bounds and coefficients are changed in place each frame.  For each
setting (``realtime_preset("fig5")``: ``P_ij`` = 0.9, every requirement 0.05) one run of the live
route is made and verified (``check_realtime_run``); then on the very frames it saw (queues and
jobs) both routes are timed once more, frame by frame: Pyomo build, hand-off (the compiler and
``passModel``; the live model: the in-place changes) and HiGHS's run, and both values of Eq. (2)
must agree with the search's (``max_weight_packing``) where the search is cheap (at most
:data:`~clusteropt.online.realtime.policies.SEARCH_MAX_JOBS` jobs of positive weight).  Whole-run times
for 10,000 frames are *extrapolated* from the per-frame means.

Run ``python -m benchmarks.realtime_ilp`` (writes ``benchmarks/results/``) or ``--quick``.
"""

from __future__ import annotations

import time

import numpy as np

from benchmarks._report import finish, header, output_dir, parser
from clusteropt.algorithms.realtime import frame_masks, max_weight_packing
from clusteropt.instances import realtime_preset
from clusteropt.models.realtime import PersistentMaxWeight, build_max_weight_ilp
from clusteropt.online import run_online
from clusteropt.online.realtime.policies import SEARCH_MAX_JOBS, MaxWeight
from clusteropt.solvers import solve
from clusteropt.verify import check_realtime_run

NAME = "realtime_ilp"
FULL = {"settings": [[10, 0.3], [10, 0.5], [40, 0.1], [40, 0.3]], "frames": 500, "requirement": 0.05, "seed": 0}
QUICK = {"settings": [[10, 0.3], [40, 0.1]], "frames": 20, "requirement": 0.05, "seed": 0}


def run_setting(n: int, generation: float, params: dict) -> dict:
    inst = realtime_preset("fig5", n=n, generation=generation)
    req = np.full(n, params["requirement"])
    frames = params["frames"]
    start = time.perf_counter()
    run = run_online(MaxWeight(req, method="ilp"), inst.with_requirement(req), horizon=frames, seed=params["seed"])
    wall = time.perf_counter() - start
    check_realtime_run(inst.with_requirement(req), run).raise_if_infeasible()
    weights = run.queues * inst.completion_probability(run.jobs)
    masks = frame_masks(run.jobs)
    live = PersistentMaxWeight(n, n)
    times = {"pyomo_build_s": 0.0, "pyomo_handoff_s": 0.0, "pyomo_solve_s": 0.0, "live_change_s": 0.0,
             "live_solve_s": 0.0}
    worst, searched, positive = 0.0, 0, []
    for t in range(frames):
        d = live.solve(run.queues[t], run.jobs[t], inst.success)
        times["live_change_s"] += d.change_seconds
        times["live_solve_s"] += d.solve_seconds
        t0 = time.perf_counter()
        model = build_max_weight_ilp(run.queues[t], run.jobs[t], inst.success)
        times["pyomo_build_s"] += time.perf_counter() - t0
        value = 0.0
        if len(model.A):
            res = solve(model, "highs")
            times["pyomo_handoff_s"] += res.build_seconds
            times["pyomo_solve_s"] += res.solve_seconds
            value = float(res.objective)
        worst = max(worst, abs(value - d.value) / max(1.0, abs(value)))
        n_pos = int(((weights[t] > 0) & (masks[t] != 0)).sum())
        positive.append(n_pos)
        if n_pos <= SEARCH_MAX_JOBS:
            exact, _ = max_weight_packing(weights[t], masks[t].tolist())
            worst = max(worst, abs(exact - d.value) / max(1.0, abs(exact)))
            searched += 1
    if worst > 1e-7:
        raise AssertionError(f"N = {n}, g = {generation}: the routes differ on Eq. (2) by up to {worst:.3g}")
    per = {k: v / frames for k, v in times.items()}
    pyomo = per["pyomo_build_s"] + per["pyomo_handoff_s"] + per["pyomo_solve_s"]
    livet = per["live_change_s"] + per["live_solve_s"]
    out = {"n": n, "generation": generation, "frames": frames, "run_s": wall, "mean_positive_jobs":
           float(np.mean(positive)), "frames_searched": searched, "max_rel_diff": worst, **per,
           "pyomo_overhead_over_solve": (per["pyomo_build_s"] + per["pyomo_handoff_s"]) / per["pyomo_solve_s"],
           "live_overhead_over_solve": per["live_change_s"] / per["live_solve_s"],
           "pyomo_10000_s": pyomo * 10_000, "live_10000_s": livet * 10_000, "speedup": pyomo / livet}
    print(f"  N = {n}, g = {generation}: Pyomo {pyomo * 1e3:.2f} ms/frame, live {livet * 1e3:.2f} ms/frame",
          flush=True)
    return out


def to_markdown(report: dict) -> str:
    p = report["parameters"]
    lines = [f"# {NAME}", "", f"recorded {report['created']} on {report['machine']['platform']}, "
             f"{report['machine']['cpu_count']} CPUs; parameters {p}", "",
             "Per frame (ms), on the frames of one verified run of the live route; 10,000 frames "
             "extrapolated:", "",
             "| N = M | P[J_ij = 1] | frames | jobs with weight > 0 | Pyomo build | Pyomo hand-off | Pyomo HiGHS "
             "| Pyomo (build + hand-off) / solve | live changes | live HiGHS | live changes / solve "
             "| Pyomo 10,000 frames s | live 10,000 frames s | speed-up | max rel. diff |",
             "|" + "---:|" * 15]
    for c in report["settings"]:
        lines.append(f"| {c['n']} | {c['generation']} | {c['frames']} | {c['mean_positive_jobs']:.2f} | "
                     + " | ".join(f"{c[k] * 1e3:.3f}"
                                  for k in ("pyomo_build_s", "pyomo_handoff_s", "pyomo_solve_s"))
                     + f" | {c['pyomo_overhead_over_solve']:.2f} | {c['live_change_s'] * 1e3:.3f} | "
                     f"{c['live_solve_s'] * 1e3:.3f} | {c['live_overhead_over_solve']:.3f} | "
                     f"{c['pyomo_10000_s']:.1f} | {c['live_10000_s']:.1f} | {c['speedup']:.2f} | "
                     f"{c['max_rel_diff']:.1e} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    args = parser(NAME, __doc__, "two settings, 20 frames; print only").parse_args(argv)
    params = dict(QUICK if args.quick else FULL)
    start = time.perf_counter()
    report = {**header(NAME, ("clusteropt", "pyomo", "highspy", "numpy")), "parameters": params}
    report["settings"] = [run_setting(n, g, params) for n, g in params["settings"]]
    finish(NAME, report, to_markdown, output_dir(args), start)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
