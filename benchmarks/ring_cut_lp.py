"""Ring partitioning (paper 004): what the cut-set LP's min-move rows buy, and what they cost.

The cut-set LP (``clusteropt.models.ring.cut``, ours) bounds OPT_dyn from below at any n.  Without
its min-move rows (``min_move=False``) a change of cut set costs ``alpha / 2`` per edge whose
status changes; with them (the default) also at least ``m``, the least cost of changing the
labelling at all (``2 alpha`` on full servers), as the cut-set DP and the window bound charge.  For
the recorded ``ring-ratio`` instances (4 servers, 256 requests per process; rebuilt from their
parameters and seeds and checked against the recorded request count and window bound) this
certifies both bounds (``dynamic_cut_lp_bound``: pieces of 500 compressed requests joined by
``--sweeps`` sweeps, default 1; HiGHS's interior point; the Lagrangian evaluated by
``clusteropt.verify.ring.cut_lagrangian_bound``) and records, per instance, each bound's value
and time (the whole call, and HiGHS's share), next to the window bound, the DP over cut sets
(n <= 16) and OPT_dyn where the experiment's DP found it (n = 8).

Run ``python -m benchmarks.ring_cut_lp`` (n = 8, 16, 32, seed 0; writes ``benchmarks/results/``),
``--n 32 --seeds 0,1,2,3,4 --patterns moving-hotspot`` for more or fewer, or ``--quick`` (n = 8, seed
0, the moving hot spot, print only).
"""

from __future__ import annotations

import time
from pathlib import Path

import pandas as pd

from benchmarks._report import finish, header, output_dir, parser
from benchmarks.ring_dynamic_bracket import fmt, rebuild, recorded_instances
from clusteropt.algorithms.ring.offline import dynamic_cut_bound
from clusteropt.models.ring.cut import CHUNK, IPM_OPTIONS, OVERLAP, SWEEPS, dynamic_cut_lp_bound

NAME = "ring_cut_lp"
RECORD = Path(__file__).resolve().parent / "results" / "experiments" / "ring-ratio" / "results.csv"
CUT_DP_MAX_N = 16


def _ints(text: str) -> list[int]:
    return [int(x) for x in text.split(",") if x.strip()]


def main(argv: list[str] | None = None) -> int:
    ap = parser(NAME, __doc__, "n = 8, seed 0, the moving hot spot, print only")
    ap.add_argument("--n", type=_ints, default=None, help="ring sizes, comma-separated (default 8,16,32)")
    ap.add_argument("--seeds", type=_ints, default=None, help="recorded seeds, comma-separated (default 0)")
    ap.add_argument("--patterns", type=lambda t: [p for p in t.split(",") if p], default=None,
                    help="request patterns, comma-separated (default: every recorded one)")
    ap.add_argument("--sweeps", type=int, default=SWEEPS,
                    help=f"sweeps joining the pieces (default {SWEEPS}; 0: independent pieces)")
    args = ap.parse_args(argv)
    sizes = args.n or ([8] if args.quick else [8, 16, 32])
    seeds = args.seeds or [0]
    patterns = args.patterns or (["moving-hotspot"] if args.quick else None)
    start = time.perf_counter()
    report = header(NAME, ("numpy", "highspy"))
    table = pd.read_csv(RECORD)
    table = table[(table.status == "ok") & table.n.isin(sizes) & table.seed.isin(seeds)]
    if patterns is not None:
        table = table[table.pattern.isin(patterns)]
    report["record"] = {"file": "benchmarks/results/experiments/ring-ratio/results.csv",
                        "code_version": sorted(table.code_version.unique().tolist())}
    report["parameters"] = {"n": sizes, "seeds": seeds, "patterns": patterns, "chunk": CHUNK, "overlap": OVERLAP,
                            "sweeps": args.sweeps,
                            "options": IPM_OPTIONS,
                            "cut_dp_max_n": CUT_DP_MAX_N, "quick": bool(args.quick)}
    rows = recorded_instances(table).sort_values(["n", "pattern", "seed"])
    if rows.empty:
        raise SystemExit(f"no recorded ring-ratio instance with n in {sizes}, seed in {seeds} and pattern in "
                         f"{patterns or 'any'}")
    out = []
    for _, r in rows.iterrows():
        inst, window = rebuild("ring-ratio", r)
        row = {"pattern": r.pattern, "n": int(r.n), "seed": int(r.seed), "cell_seed": int(r.cell_seed),
               "n_requests": int(r.n_requests), "window": window,
               "cut_dp": dynamic_cut_bound(inst) if inst.n <= CUT_DP_MAX_N else None,
               "opt_dynamic": float(r.opt_dynamic) if r.dynamic_denominator == "dp" else None}
        for key, min_move in (("lp0", False), ("lp", True)):
            t0 = time.perf_counter()
            b = dynamic_cut_lp_bound(inst, min_move=min_move, sweeps=args.sweeps)
            row[key], row[f"{key}_seconds"], row[f"{key}_solve_seconds"] = (b.value, time.perf_counter() - t0,
                                                                            b.solve_seconds)
            row["steps"] = b.n_steps
        for key in ("lp0", "lp"):
            if row["opt_dynamic"] is not None and row[key] > row["opt_dynamic"] * (1 + 1e-6) + 1e-6:
                raise RuntimeError(f"n={r.n} {r.pattern} seed={r.seed}: {key} {row[key]} > OPT_dyn "
                                   f"{row['opt_dynamic']}")
        out.append(row)
        print(f"n={row['n']} {row['pattern']} seed {row['seed']}: window {window:.1f}, "
              f"cut DP {fmt(row['cut_dp'])}, "
              f"LP {row['lp0']:.2f} ({row['lp0_seconds']:.1f} s), with min-move rows {row['lp']:.2f} "
              f"({row['lp_seconds']:.1f} s)", flush=True)
    report["instances"] = out
    b = pd.DataFrame(out)
    b = b.assign(gain=b.lp / b.lp0, time_ratio=b.lp_seconds / b.lp0_seconds, lp_over_cut=b.lp / b.cut_dp,
                 lp0_over_cut=b.lp0 / b.cut_dp, lp_over_window=b.lp / b.window)
    summary = b.groupby(["n", "pattern"], sort=True).agg(
        instances=("lp", "size"), window=("window", "mean"), cut_dp=("cut_dp", "mean"),
        opt_dynamic=("opt_dynamic", "mean"), lp0=("lp0", "mean"), lp=("lp", "mean"), gain=("gain", "mean"),
        lp0_over_cut=("lp0_over_cut", "mean"), lp_over_cut=("lp_over_cut", "mean"),
        lp_over_window=("lp_over_window", "mean"), lp0_seconds=("lp0_seconds", "median"),
        lp_seconds=("lp_seconds", "median"), time_ratio=("time_ratio", "median")).reset_index()
    report["summary"] = summary.to_dict(orient="records")

    def markdown(rep: dict) -> str:
        lines = [f"# {NAME}", "", f"Machine: {rep['machine']['platform']}, {rep['machine']['cpu_count']} cores; "
                 f"created {rep['created']}; code version {rep['code_version']}. Instances from "
                 f"`{rep['record']['file']}` ({', '.join(rep['record']['code_version'])}), seeds "
                 f"{', '.join(map(str, seeds))}.", "",
                 "`lp0`: the cut-set LP without the min-move rows, `lp`: with them (both certified bounds on "
                 f"OPT_dyn, pieces of {CHUNK}, "
                 + (f"{args.sweeps} sweep(s)" if args.sweeps else "independent pieces")
                 + "); `window` the window bound, `cut DP` the DP over cut sets (n <= 16), "
                 "`OPT_dyn` the experiment's DP (n = 8); `lp / lp0` and the times per instance (the whole call, "
                 "build, HiGHS and certificate) are means and medians over the seeds.", "",
                 "<a id=\"summary\"></a>", "",
                 "| n | pattern | instances | window | cut DP | OPT_dyn | lp0 | lp | lp / lp0 | lp0 / cut DP | "
                 "lp / cut DP | lp / window | lp0 s | lp s | time ratio |",
                 "|---:|---|---:|" + "---:|" * 12]
        for g in summary.itertuples():
            lines.append(f"| {g.n} | {g.pattern} | {g.instances} | {g.window:.1f} | {fmt(g.cut_dp)} | "
                         f"{fmt(g.opt_dynamic)} | {g.lp0:.2f} | {g.lp:.2f} | {g.gain:.3f} | "
                         f"{fmt(g.lp0_over_cut)} | {fmt(g.lp_over_cut)} | {g.lp_over_window:.2f} | "
                         f"{g.lp0_seconds:.1f} | {g.lp_seconds:.1f} | {g.time_ratio:.1f} |")
        return "\n".join(lines) + "\n"

    finish(NAME, report, markdown, output_dir(args), start)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
