"""Ring partitioning (paper 004): which policy to run, and the rate of ``follow`` (ours).

Every online ring policy, and ``follow`` (:mod:`clusteropt.algorithms.ring.follow`: the cheapest
of dynamic-mix, greedy and never, by exponential weights with lazy switching) at several rates,
on the instances of the ``ring-ratio`` experiment's kind (4 servers, 256 requests per process,
hot arcs a quarter of a server wide, the moving hot spot one edge per ``4 k`` requests;
:func:`clusteropt.experiments.ring.ring_instance`) at n = 64, 256 and 1024, alpha 1 and 16
(1024: alpha 1), and on the hit-the-cut sequences built against each deterministic online
policy (dynamic-wfa, greedy, component; n = 64 and 256).  Every run is verified by
``check_ring_run`` at its promised capacity; a failed verification stops the benchmark.

Reported:

* per (n, alpha, pattern): each policy's mean cost over the seeds divided by the mean of
  ``min(never, greedy)`` (the better baseline, per instance), and the CPU seconds per request;
* per rate of ``follow``: the largest and the geometric mean of ``follow / min(never, greedy)``
  and of ``follow / dynamic-mix`` over the instances, random patterns and hit-the-cut apart.

Run ``python -m benchmarks.ring_follow`` (writes ``benchmarks/results/``; ``--jobs 2`` runs two
instances at once) or ``--quick`` (n = 64, alpha 1, one seed, print only).
"""

from __future__ import annotations

import dataclasses
import math
import time

import numpy as np
import pandas as pd

from benchmarks._report import finish, header, output_dir, parser
from clusteropt.algorithms.ring.follow import DEFAULT_FOLLOW_RATE
from clusteropt.experiments.ring import ring_instance
from clusteropt.online.ring import hit_the_cut, make_policy, run_ring
from clusteropt.verify import check_ring_run

NAME = "ring_follow"
PATTERNS = ("uniform", "hotspot", "moving-hotspot", "phases", "zipf")
ADVERSARIES = ("dynamic-wfa", "greedy", "component")
POLICIES = ("dynamic", "dynamic-wfa", "dynamic-mix", "static", "greedy", "never", "component")
RATES = (0.25, 0.5, 1.0, 2.0)
BASE = {"servers": 4, "requests_per_process": 256.0, "hot_width": 0.25, "step_k": 4.0}


def cases(quick: bool) -> list[dict]:
    """(n, alpha, pattern, seed) of every instance."""
    out = []
    for n in (64,) if quick else (64, 256, 1024):
        for alpha in (1.0,) if quick or n == 1024 else (1.0, 16.0):
            seeds = (0,) if quick or n == 1024 else (0, 1, 2)
            patterns = PATTERNS + (tuple(f"hit-the-cut:{a}" for a in ADVERSARIES) if n <= 256 else ())
            out += [{"n": n, "alpha": alpha, "pattern": p, "seed": s} for p in patterns for s in seeds]
    return out


def instance(case: dict):
    """The case's instance (hit-the-cut: built against the named policy with the same seed)."""
    pattern, seed = case["pattern"], case["seed"]
    if pattern.startswith("hit-the-cut:"):
        base = ring_instance({**BASE, "n": case["n"], "pattern": "uniform", "requests_per_process": 0.0}, seed)
        base = dataclasses.replace(base, alpha=case["alpha"])
        T = round(BASE["requests_per_process"] * case["n"])
        return hit_the_cut(base, T, against=pattern.split(":", 1)[1], seed=seed)
    inst = ring_instance({**BASE, "n": case["n"], "pattern": pattern}, seed)
    return dataclasses.replace(inst, alpha=case["alpha"])


def run_case(case: dict, rates) -> list[dict]:
    """Every policy on the case's instance: one row each (verified)."""
    inst = instance(case)
    rows = []
    runs = [(p, p, {}) for p in POLICIES] + [(f"follow@{r:g}", "follow", {"rate": r}) for r in rates]
    runs.append((f"follow-diameter@{DEFAULT_FOLLOW_RATE:g}", "follow", {"rate": DEFAULT_FOLLOW_RATE,
                                                                      "scale": "diameter"}))
    for label, name, params in runs:
        c0, t0 = time.process_time(), time.perf_counter()
        run = run_ring(make_policy(name, **params), inst, seed=case["seed"])
        cpu, wall = time.process_time() - c0, time.perf_counter() - t0
        chk = check_ring_run(inst, run)
        if not chk.feasible:
            raise RuntimeError(f"{label} on {case}: not verified: {chk.violations[:3]}")
        rows.append({**case, "policy": label, "total": float(chk.value), "migrations": int(chk.n_migrations),
                     "requests": inst.n_requests, "cpu_s": cpu, "wall_s": wall,
                     "switches": float(run.costs.get("switches", math.nan))})
    return rows


def _geomean(x) -> float:
    return math.exp(np.log(np.asarray(x, dtype=float)).mean())


def tables(rows: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(per-setting ratios to min(never, greedy), per-rate summary of follow)."""
    wide = rows.pivot_table(index=["n", "alpha", "pattern", "seed"], columns="policy", values="total")
    base = np.minimum(wide["never"], wide["greedy"])
    means = wide.groupby(level=["n", "alpha", "pattern"]).mean()
    setting = means.div(base.groupby(level=["n", "alpha", "pattern"]).mean(), axis=0).reset_index()
    summary = []
    adversarial = wide.index.get_level_values("pattern").str.startswith("hit-the-cut")
    for col in [c for c in wide.columns if c.startswith("follow")]:
        for kind, mask in (("random", ~adversarial), ("hit-the-cut", adversarial)):
            if not mask.any():
                continue
            vs_base = (wide[col] / base)[mask]
            vs_mix = (wide[col] / wide["dynamic-mix"])[mask]
            summary.append({"variant": col, "sequences": kind, "instances": int(mask.sum()),
                            "max_vs_baseline": vs_base.max(), "geomean_vs_baseline": _geomean(vs_base),
                            "max_vs_mix": vs_mix.max(), "geomean_vs_mix": _geomean(vs_mix)})
    return setting, pd.DataFrame(summary)


def to_markdown(report: dict) -> str:
    rows = pd.DataFrame(report["rows"])
    setting, summary = tables(rows)
    cpu = rows.assign(us=1e6 * rows.cpu_s / rows.requests).groupby(["n", "policy"]).us.mean().unstack()
    cols = [*POLICIES, *[f"follow@{r:g}" for r in report["parameters"]["rates"]],
            f"follow-diameter@{DEFAULT_FOLLOW_RATE:g}"]
    lines = [f"# {NAME}", "",
             f"created {report['created']}, code version {report['code_version']}, "
             f"{report['machine']['cpu_count']} CPUs, load average before "
             f"{report['machine']['load_average_1_5_15']}, "
             f"after {report['machine'].get('load_average_after')}; numpy {report['versions'].get('numpy')}, "
             f"scipy {report['versions'].get('scipy')}.", "",
             "Reproduce: `python -m benchmarks.ring_follow --jobs 2`.  4 servers, 256 requests per process, "
             "hot_width 0.25, step_k 4 (`ring_instance`); hit-the-cut:P = the sequence built against P with the "
             "instance's seed.  Every run verified.  `follow@r` = the policy `follow` at rate r "
             f"(default {DEFAULT_FOLLOW_RATE:g}) with its adaptive scale, `follow-diameter@r` with the scale "
             "alpha n.  Every policy's geometric mean and largest ratio over the instances, and per pattern, "
             "follow the rate table.", "",
             "## Mean cost / mean min(never, greedy)", "",
             "| n | alpha | pattern | " + " | ".join(cols) + " |",
             "| ---: | ---: | :--- |" + " ---: |" * len(cols)]
    for _, r in setting.iterrows():
        lines.append(f"| {r['n']} | {r['alpha']:g} | {r['pattern']} | "
                     + " | ".join(f"{r[c]:.2f}" for c in cols) + " |")
    lines += ["", "## follow by variant", "",
              "Over the instances: `follow / min(never, greedy)` and `follow / dynamic-mix` (max and geometric "
              "mean).",
              "", "| variant | sequences | instances | max / baseline | geomean / baseline | max / dynamic-mix | "
              "geomean / dynamic-mix |", "| :--- | :--- | ---: | ---: | ---: | ---: | ---: |"]
    for _, r in summary.iterrows():
        lines.append(f"| {r['variant']} | {r['sequences']} | {r['instances']} | {r['max_vs_baseline']:.2f} | "
                     f"{r['geomean_vs_baseline']:.2f} | {r['max_vs_mix']:.2f} | {r['geomean_vs_mix']:.2f} |")
    wide = rows.pivot_table(index=["n", "alpha", "pattern", "seed"], columns="policy", values="total")
    base = np.minimum(wide["never"], wide["greedy"])
    adversarial = wide.index.get_level_values("pattern").str.startswith("hit-the-cut")
    lines += ["", "## Every policy / min(never, greedy) over the instances", "",
              "| sequences | statistic | " + " | ".join(cols) + " |", "| :--- | :--- |" + " ---: |" * len(cols)]
    for kind, mask in (("random", ~adversarial), ("hit-the-cut", adversarial)):
        ratio = wide[mask].div(base[mask], axis=0)
        lines.append(f"| {kind} | geomean | " + " | ".join(f"{_geomean(ratio[c]):.2f}" for c in cols) + " |")
        lines.append(f"| {kind} | max | " + " | ".join(f"{ratio[c].max():.2f}" for c in cols) + " |")
    lines += ["", "## By pattern: geometric mean over n, alpha and seeds of policy / min(never, greedy)", "",
              "<a id=\"by-pattern\"></a>", "",
              "| pattern | instances | " + " | ".join(cols) + " | best |",
              "| :--- | ---: |" + " ---: |" * len(cols) + " :--- |"]
    for pattern, part in wide.groupby(level="pattern"):
        ratio = part.div(base.loc[part.index], axis=0)
        means = {c: _geomean(ratio[c]) for c in cols}
        best = min(means, key=means.get)
        shown = " | ".join(f"{means[c]:.2f}" for c in cols)
        lines.append(f"| {pattern} | {len(part)} | {shown} | {best} |")
    stationary = ("uniform", "hotspot", "zipf")
    costly = wide[(wide.index.get_level_values("alpha") == 16.0)
                  & wide.index.get_level_values("pattern").isin(stationary)]
    if len(costly):
        means = costly.groupby(level=["n", "pattern"]).mean()
        lines += ["", "## alpha 16, stationary patterns: mean cost / mean cost of never", "",
                  "<a id=\"alpha16\"></a>", "",
                  "| n | pattern | " + " | ".join(cols) + " |", "| ---: | :--- |" + " ---: |" * len(cols)]
        for (n, pattern), r in means.iterrows():
            lines.append(f"| {n} | {pattern} | " + " | ".join(f"{r[c] / r['never']:.2f}" for c in cols) + " |")
    lines += ["", "## CPU microseconds per request (mean over the instances)", "",
              "| n | " + " | ".join(cols) + " |", "| ---: |" + " ---: |" * len(cols)]
    for n, r in cpu.iterrows():
        lines.append(f"| {n} | " + " | ".join(f"{r[c]:.1f}" for c in cols) + " |")
    lines += ["", f"Whole benchmark {report.get('wall_s', 0):.0f} s wall.", ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = parser(NAME, __doc__, "n = 64, alpha 1, one seed, print only")
    ap.add_argument("--jobs", type=int, default=1, help="instances run at once (joblib processes)")
    args = ap.parse_args(argv)
    start = time.perf_counter()
    report = header(NAME, ("numpy", "scipy"))
    rates = (DEFAULT_FOLLOW_RATE,) if args.quick else RATES
    report["parameters"] = {"rates": list(rates), "quick": bool(args.quick), **BASE}
    todo = cases(args.quick)
    if args.jobs > 1:
        from joblib import Parallel, delayed

        parts = Parallel(n_jobs=args.jobs)(delayed(run_case)(c, rates) for c in todo)
    else:
        parts = [run_case(c, rates) for c in todo]
    report["rows"] = [r for part in parts for r in part]
    finish(NAME, report, to_markdown, output_dir(args), start)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
