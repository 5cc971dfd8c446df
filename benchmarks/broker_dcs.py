"""Paper 003 beyond the paper's 15 data centres: A_fractional's slot problem (10) at 15 .. 100 DCs.

``random_broker(jobs, horizon, n_dcs, seed 0)`` (the paper's generator; the transfer variables
``q`` and ``g`` grow as active jobs x DCs^2: about 105,000 each at 60 DCs with 29 active jobs), run with
the policy ``mlbroker`` (A_fractional: problem (10) by CVXPY -> Clarabel every slot, with its
documented retries ``CLARABEL_RETRIES``; then A_round), and the run's integral schedule checked by
``check_broker_schedule``.

Both forms of the transfer variables of (10) run at every size (``transfers``: ``all``, the
paper's ``q`` over every pair of DCs, and ``sources``, only from the DCs holding each job's data: the
same problem, see ``build_broker_regularized``).  Recorded per form, size and slot: the active jobs,
the status, the Clarabel settings tried (attempts) and the one that solved, build and solve time
(the solve time sums every attempt), and the process CPU time of the whole run.  Where the
defaults stall ("InsufficientProgress") the table shows which retry solved the slot and what the
failed attempt cost; a run in which no setting solves a slot (``SlotSolveError``) is recorded as
failed, with the slot and the statuses.

Run ``python -m benchmarks.broker_dcs`` (writes ``benchmarks/results/``) or ``--quick``.
"""

from __future__ import annotations

import time

from benchmarks._report import finish, header, output_dir, parser
from clusteropt.instances.broker import random_broker
from clusteropt.online import run_online
from clusteropt.online.broker import SlotSolveError, make_policy
from clusteropt.verify.broker import check_broker_schedule

NAME = "broker_dcs"
#: (DCs, jobs) per run: the paper's 100 jobs to 60 DCs; at 100 DCs 30 jobs (100 jobs there make
#: problem (10) about three times the 60-DC one, several minutes a slot).
FULL = {"sizes": [[15, 100], [30, 100], [60, 100], [100, 30]], "horizon": 3, "seed": 0,
        "transfers": ["all", "sources"]}
QUICK = {"sizes": [[4, 10]], "horizon": 2, "seed": 0, "transfers": ["all", "sources"]}


def _one(cfg: dict, n_dcs: int, n_jobs: int, transfers: str) -> dict:
    inst = random_broker(n_jobs, horizon=cfg["horizon"], n_dcs=n_dcs, seed=cfg["seed"])
    cpu, wall = time.process_time(), time.perf_counter()
    head = {"transfers": transfers, "dcs": n_dcs, "jobs": n_jobs}
    try:
        policy = make_policy("mlbroker", transfers=transfers)
        run = run_online(policy, inst, horizon=inst.horizon, seed=cfg["seed"])
    except SlotSolveError as exc:  # recorded, not hidden: the size where Clarabel gives up
        return {**head, "cpu_s": time.process_time() - cpu,
                "wall_s": time.perf_counter() - wall, "failed": str(exc), "verified": False, "slots": []}
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    check = check_broker_schedule(inst, run.schedule)
    if not check.ok:
        raise AssertionError(f"{n_dcs} DCs: the schedule failed verification: {check.violations[:3]}")
    slots = [{"slot": k + 1, **{key: info.get(key) for key in ("jobs", "status", "attempts", "solver_options",
                                                                  "build_seconds", "solve_seconds")}}
             for k, info in enumerate(run.slot_info)]
    return {**head, "cpu_s": cpu, "wall_s": wall, "total_cost": float(check.total_cost),
            "fractional_total": float(sum(i["objective"] for i in run.slot_info)), "verified": True,
            "slots": slots}


def _markdown(report: dict) -> str:
    m = report["machine"]
    lines = [f"# {NAME}", "", f"Machine: {m['platform']}, {m['cpu_count']} cores, load average "
             f"{m.get('load_average_1_5_15')} (after: {m.get('load_average_after')}); created "
             f"{report['created']}, code version {report['code_version']}; parameters {report['config']}; "
             f"cvxpy {report['versions'].get('cvxpy')}, clarabel {report['versions'].get('clarabel')}.", "",
             "Policy `mlbroker` with `transfers` all (the paper's q over every DC pair) and sources (q only "
             "from the DCs holding the data; the same problem) (A_fractional: problem (10) every slot, CVXPY -> "
             "Clarabel with the documented "
             "retries; then A_round); "
             "every schedule verified.  Attempts = Clarabel settings tried in the slot (1: the defaults "
             "solved it).", "",
             "| transfers | DCs | jobs | slot | active jobs | status | attempts | settings that solved "
             "| build (s) | solve (s) |",
             "|:---|---:|---:|---:|---:|:---|---:|:---|---:|---:|"]
    for row in report["sizes"]:
        for s in row["slots"]:
            opts = ", ".join(f"{k}={v}" for k, v in (s["solver_options"] or {}).items()) or "defaults"
            lines.append(f"| {row['transfers']} | {row['dcs']} | {row['jobs']} | {s['slot']} | {s['jobs']} | "
                         f"{s['status']} | {s['attempts']} | {opts} | {s['build_seconds']:.2f} | "
                         f"{s['solve_seconds']:.2f} |")
    lines += ["", "| transfers | DCs | jobs | run CPU (s) | run wall (s) | objectives of (10), summed "
              "| total cost (verified) |", "|:---|---:|---:|---:|---:|---:|---:|"]
    for row in report["sizes"]:
        if "failed" in row:
            lines.append(f"| {row['transfers']} | {row['dcs']} | {row['jobs']} | {row['cpu_s']:.1f} | "
                         f"{row['wall_s']:.1f} | | failed: {row['failed'].split(';')[0]} |")
        else:
            lines.append(f"| {row['transfers']} | {row['dcs']} | {row['jobs']} | {row['cpu_s']:.1f} | "
                         f"{row['wall_s']:.1f} | {row['fractional_total']:.4f} | {row['total_cost']:.4f} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    args = parser(NAME, __doc__, "small sizes, print only").parse_args(argv)
    cfg = QUICK if args.quick else FULL
    start = time.perf_counter()
    report = header(NAME, ("numpy", "cvxpy", "clarabel", "scipy"))
    report["config"] = cfg
    report["sizes"] = []
    for n, jobs in cfg["sizes"]:
        for transfers in cfg["transfers"]:
            report["sizes"].append(_one(cfg, n, jobs, transfers))
            print(f"{n} DCs, {jobs} jobs, transfers {transfers}: {report['sizes'][-1]['cpu_s']:.1f} s CPU",
                  flush=True)
            finish(NAME, report, _markdown, output_dir(args), start)  # after each run: a long run keeps its part
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
