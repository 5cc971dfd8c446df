"""mlBroker (paper 003): what each package addition buys, against mlBroker as the paper writes it.

On Sec. 6.1's setting (``broker_preset("paper", seed=s)``: 100 jobs, T = 50, R = 15, K = 4),
seeds 0-4, the runs of the README's loop (``clusteropt run b$seed.json --price-form F --rounding V``
and ``--policy local|central|oasis|mlbroker-plus``), made through the same API the CLI calls:

* mlBroker with the convex-hull price rows (``--price-form tight``, default) or the paper's big-M
  rows (``bigm``), each with the package's rounding (``package``, default: A_round then the repair
  that completes a job left short) or Alg. 2 as written (``paper``);
* ``mlbroker-plus`` (the package's slot MILP step), Local, Central and OASiS.

Recorded per run: the verifier's total (``check_broker_schedule``), A_fractional's own cost of (9)
(``fractional_costs`` of the CLI's out.json; with the hull it equals P_f), the workers the repair
added, the slots on which Clarabel needed its retry settings, and the wall time; per variant the mean
of total / A_fractional's hull cost of the same seed (a lower bound on every schedule).

Run ``python -m benchmarks.broker_variants`` (writes ``benchmarks/results/``) or ``--quick``.
"""

from __future__ import annotations

import math
import time

import numpy as np

from benchmarks._report import finish, header, output_dir, parser
from clusteropt.instances.broker import broker_preset
from clusteropt.online import run_online
from clusteropt.online.broker import make_policy
from clusteropt.verify import check_broker_schedule

NAME = "broker_variants"
RUNS = (("mlBroker, default (tight, package)", "mlbroker", {"price_form": "tight", "rounding_variant": "package"}),
        ("--rounding paper (tight)", "mlbroker", {"price_form": "tight", "rounding_variant": "paper"}),
        ("--price-form bigm (package)", "mlbroker", {"price_form": "bigm", "rounding_variant": "package"}),
        ("paper-literal (bigm, paper)", "mlbroker", {"price_form": "bigm", "rounding_variant": "paper"}),
        ("mlbroker-plus", "mlbroker-plus", {}),
        ("Local", "local", {}), ("Central", "central", {}), ("OASiS", "oasis", {}))
FULL = {"preset": "paper", "seeds": [0, 1, 2, 3, 4]}
QUICK = {"preset": "small", "seeds": [0]}


def run_one(inst, policy: str, options: dict, seed: int) -> dict:
    built = make_policy(policy, **options)
    t0 = time.perf_counter()
    run = run_online(built, inst, horizon=inst.horizon, seed=seed)
    wall = time.perf_counter() - t0
    check = check_broker_schedule(inst, run.schedule)
    if not check.ok:
        raise AssertionError(f"{policy} {options} seed {seed}: {check.violations[:3]}")
    out = {"total": float(check.total_cost), "wall_s": wall}
    if policy in ("mlbroker", "mlbroker-plus"):
        out["fractional"] = math.fsum(float(d[f"fractional_{c}"]) for d in run.slot_info
                                      for c in ("C1", "C2", "C3", "C4"))
        out["workers_added"] = int(sum(int(d.get("workers_added", 0) or 0) for d in run.slot_info))
        out["retried_slots"] = int(sum(int(d.get("attempts", 1) or 1) > 1 for d in run.slot_info))
        out["slots"] = len(run.slot_info)
    return out


def main(argv: list[str] | None = None) -> int:
    args = parser(NAME, __doc__, "small preset, one seed; print only").parse_args(argv)
    params = dict(QUICK if args.quick else FULL)
    start = time.perf_counter()
    report = {**header(NAME, ("clusteropt", "cvxpy", "clarabel", "highspy", "numpy")), "parameters": params,
              "seeds": {}}
    for seed in params["seeds"]:
        inst = broker_preset(params["preset"], seed=seed)
        rows = {}
        for label, policy, options in RUNS:
            rows[label] = run_one(inst, policy, options, seed)
            print(f"  seed {seed} {label}: {rows[label]['total']:.6g} ({rows[label]['wall_s']:.1f} s)", flush=True)
        rows["P_f"] = {"total": rows[RUNS[0][0]]["fractional"]}  # A_fractional's hull cost = P_f
        report["seeds"][str(seed)] = rows

    def markdown(rep: dict) -> str:
        seeds = list(rep["seeds"])
        lines = [f"# {NAME}", "", f"recorded {rep['created']} on {rep['machine']['platform']}; parameters "
                 f"{rep['parameters']}", "",
                 "| run | " + " | ".join(f"seed {s}" for s in seeds) + " | mean / P_f | workers the repair added "
                 "| slots needing Clarabel retries | wall s a run |",
                 "|---|" + "---:|" * (len(seeds) + 4)]
        pf = np.array([rep["seeds"][s]["P_f"]["total"] for s in seeds])
        lines.append("| P_f (hull) = A_fractional's cost | " + " | ".join(f"{v:.0f}" for v in pf) + " | 1 | | | |")
        for label, _, _ in RUNS:
            r = [rep["seeds"][s][label] for s in seeds]
            tot = np.array([x["total"] for x in r])
            added = "" if "workers_added" not in r[0] else str(sum(x["workers_added"] for x in r))
            retried = "" if "retried_slots" not in r[0] else \
                f"{sum(x['retried_slots'] for x in r)} of {sum(x['slots'] for x in r)}"
            walls = [x["wall_s"] for x in r]
            lines.append(f"| {label} | " + " | ".join(f"{v:.0f}" for v in tot) + f" | {np.mean(tot / pf):.3f} | "
                         f"{added} | {retried} | {min(walls):.0f}-{max(walls):.0f} |")
        return "\n".join(lines) + "\n"

    finish(NAME, report, markdown, output_dir(args), start)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
