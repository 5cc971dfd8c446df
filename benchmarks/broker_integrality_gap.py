"""mlBroker (paper 003): how much of each policy's gap to P_f is integrality, from the recorded ``broker-ratio``.

``broker-ratio`` (Figs. 9-10: small preset, T = 5-25, 1-4 jobs a slot, 700 GB, 5 trials) records for
every instance the exact optimum of the MILP (8) (``opt_value``, proved optimal) and the lower bound
P_f of (9) (``lp_bound``), and every policy's verified total.  Read from
``benchmarks/results/experiments/broker-ratio/results.csv`` (not re-run), this tabulates per
(T, jobs a slot) and overall: the integral optimum over P_f (what no integral schedule can beat),
each policy's total over P_f and over the optimum, and the share of its gap to P_f that the
optimum's own gap explains, ``(OPT - P_f) / (ALG - P_f)``.  A goal of ``ALG <= 1.01 P_f`` is
reachable on an instance only where ``OPT <= 1.01 P_f``.

Run ``python -m benchmarks.broker_integrality_gap`` (writes ``benchmarks/results/``); ``--quick``
prints only.
"""

from __future__ import annotations

import time
from pathlib import Path

import pandas as pd

from benchmarks._report import finish, header, output_dir, parser

NAME = "broker_integrality_gap"
RECORD = Path(__file__).resolve().parent / "results" / "experiments" / "broker-ratio" / "results.csv"
POLICIES = ("mlbroker-plus", "central", "oasis", "mlbroker", "local", "mlbroker-paper")


def tables(d: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(per instance size, per policy) summaries of ``results.csv``'s ok rows with a proved optimum."""
    d = d[(d.status == "ok") & d.opt_optimal.astype(bool)].copy()
    d["opt_over_pf"] = d.opt_value / d.lp_bound
    d["alg_over_pf"] = d.total / d.lp_bound
    d["alg_over_opt"] = d.total / d.opt_value
    gap = d.total - d.lp_bound
    d["integrality_share"] = (d.opt_value - d.lp_bound) / gap.where(gap > 0)
    d["opt_within_1pct"] = d.opt_over_pf <= 1.01
    inst = d.drop_duplicates("cell_seed")
    sizes = inst.groupby(["horizon", "jobs_per_slot"], sort=True).agg(
        opt_over_pf_mean=("opt_over_pf", "mean"), opt_over_pf_max=("opt_over_pf", "max"),
        opt_within_1pct=("opt_within_1pct", "sum"), instances=("opt_over_pf", "size")).reset_index()
    total = {"horizon": "all", "jobs_per_slot": "all", "opt_over_pf_mean": inst.opt_over_pf.mean(),
             "opt_over_pf_max": inst.opt_over_pf.max(), "opt_within_1pct": int(inst.opt_within_1pct.sum()),
             "instances": len(inst)}
    sizes = pd.concat([sizes, pd.DataFrame([total])], ignore_index=True)
    pol = d[d.policy.isin(POLICIES)].groupby("policy").agg(
        alg_over_pf_mean=("alg_over_pf", "mean"), alg_over_pf_max=("alg_over_pf", "max"),
        alg_over_opt_mean=("alg_over_opt", "mean"), alg_over_opt_max=("alg_over_opt", "max"),
        integrality_share_median=("integrality_share", "median"), runs=("total", "size"))
    pol = pol.reindex([p for p in POLICIES if p in pol.index]).reset_index()
    return sizes, pol


def main(argv: list[str] | None = None) -> int:
    args = parser(NAME, __doc__, "print only").parse_args(argv)
    start = time.perf_counter()
    d = pd.read_csv(RECORD)
    sizes, pol = tables(d)
    report = {**header(NAME, ("pandas",)), "record": str(RECORD.relative_to(RECORD.parents[3])),
              "code_version": sorted(d.code_version.unique().tolist()),
              "sizes": sizes.to_dict(orient="records"), "policies": pol.to_dict(orient="records")}

    def markdown(rep: dict) -> str:
        lines = [f"# {NAME}", "", f"created {rep['created']} from `{rep['record']}` (code version "
                 f"{', '.join(rep['code_version'])}); instances whose MILP (8) was proved optimal.", "",
                 "## The integral optimum over P_f", "", "<a id=\"sizes\"></a>", "",
                 "| horizon | jobs_per_slot | opt_over_pf_mean | opt_over_pf_max | opt_within_1pct | instances |",
                 "|---|---|---:|---:|---:|---:|"]
        for r in rep["sizes"]:
            lines.append(f"| {r['horizon']} | {r['jobs_per_slot']} | {r['opt_over_pf_mean']:.4f} | "
                         f"{r['opt_over_pf_max']:.4f} | {int(r['opt_within_1pct'])} | {int(r['instances'])} |")
        lines += ["", "## Each policy against P_f and against the optimum", "", "<a id=\"policies\"></a>", "",
                  "| policy | alg_over_pf_mean | alg_over_pf_max | alg_over_opt_mean | alg_over_opt_max "
                  "| integrality_share_median | runs |", "|---|---:|---:|---:|---:|---:|---:|"]
        for r in rep["policies"]:
            lines.append(f"| {r['policy']} | {r['alg_over_pf_mean']:.4f} | {r['alg_over_pf_max']:.4f} | "
                         f"{r['alg_over_opt_mean']:.4f} | {r['alg_over_opt_max']:.4f} | "
                         f"{r['integrality_share_median']:.3f} | {int(r['runs'])} |")
        return "\n".join(lines) + "\n"

    finish(NAME, report, markdown, output_dir(args), start)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
