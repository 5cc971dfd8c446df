"""GADGET LP-RS-MDE on the default route: the column generation's pricing compiled against numpy, per slot.

The setting of ``gadget_servers`` (the paper's cluster generator at 100 .. 2,000 servers, 100 jobs
arriving at slot 1, sqrt utility, ``horizon`` slots with 100 active jobs each), run with
``Gadget("lp-rs-mde")`` as a user runs it (the default routes: column generation with the
capacity-first selection LP), twice in one process: ``CLUSTEROPT_JIT=1`` (the min-plus convolution
of the pricing DP compiled, kernel loaded beforehand) and ``CLUSTEROPT_JIT=0`` (numpy).  Recorded
per size and mode: the run's CPU time, each slot's wall time and pricing time (median), and the
check that both runs schedule the same (equal utility and the same verified schedule).  The target
is a median of 3 s of CPU a slot at 1,000 servers; the run's CPU time over its slots is the
per-slot CPU time (the processes do nothing else).

Run ``python -m benchmarks.gadget_pricing`` (writes ``benchmarks/results/``) or ``--quick``.
"""

from __future__ import annotations

import os
import time

import numpy as np

from benchmarks._report import finish, header, output_dir, parser
from clusteropt.instances.gadget.instance import fat_tree_cluster, random_gadget
from clusteropt.online import run_online
from clusteropt.online.gadget import Gadget
from clusteropt.verify import check_gadget_schedule

NAME = "gadget_pricing"
FULL = {"servers": [100, 400, 1000, 2000], "n_jobs": 100, "horizon": 3, "utility": "sqrt", "seed": 0}
QUICK = {"servers": [20], "n_jobs": 8, "horizon": 2, "utility": "sqrt", "seed": 0}
TARGET_CPU_SECONDS = 3.0


def _run(inst, seed: int, jit: str) -> dict:
    os.environ["CLUSTEROPT_JIT"] = jit
    try:
        cpu, wall = time.process_time(), time.perf_counter()
        run = run_online(Gadget("lp-rs-mde"), inst, horizon=inst.horizon, seed=seed)
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    finally:
        del os.environ["CLUSTEROPT_JIT"]
    check = check_gadget_schedule(inst, run.schedule)
    if not check.ok:
        raise AssertionError(f"CLUSTEROPT_JIT={jit}: the schedule failed verification: {check.violations[:3]}")
    infos = [i for i in run.slot_info if i.get("jobs")]
    return {"cpu_s": cpu, "wall_s": wall, "slots": len(infos), "cpu_per_slot_s": cpu / max(1, len(infos)),
            "slot_median_s": float(np.median([i["seconds"] for i in infos])),
            "pricing_median_s": float(np.median([i.get("pricing_s", 0.0) for i in infos])),
            "total_utility": float(check.total_utility), "params": run.params,
            "_schedule": run.schedule}


def _markdown(report: dict) -> str:
    m = report["machine"]
    lines = [f"# {NAME}", "", f"Machine: {m['platform']}, {m['cpu_count']} cores, load average "
             f"{m.get('load_average_1_5_15')} (after: {m.get('load_average_after')}); created "
             f"{report['created']}, code version {report['code_version']}; parameters {report['config']}.", "",
             "`Gadget(\"lp-rs-mde\")` with its default routes; compiled = `CLUSTEROPT_JIT=1` (the pricing's "
             "min-plus convolution in numba), numpy = `CLUSTEROPT_JIT=0`; both schedules verified and "
             "equal.  CPU / slot = the run's CPU time over its slots.", "",
             "| servers | mode | CPU / slot (s) | slot median wall (s) | pricing median (s) | total utility |",
             "|---:|:---|---:|---:|---:|---:|"]
    for row in report["sizes"]:
        for mode in ("compiled", "numpy"):
            r = row[mode]
            lines.append(f"| {row['servers']} | {mode} | {r['cpu_per_slot_s']:.2f} | {r['slot_median_s']:.2f} | "
                         f"{r['pricing_median_s']:.2f} | {r['total_utility']:.2f} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    args = parser(NAME, __doc__, "small sizes, print only").parse_args(argv)
    cfg = QUICK if args.quick else FULL
    start = time.perf_counter()
    report = header(NAME, ("numpy", "highspy", "numba"))
    report["config"] = cfg
    warm = random_gadget(4, cluster=fat_tree_cluster(20, seed=0), horizon=1, arrivals="zero", seed=0)  # colgen
    _run(warm, 0, "1")  # load the kernel outside the timed runs
    sizes = []
    for n in cfg["servers"]:
        inst = random_gadget(cfg["n_jobs"], cluster=fat_tree_cluster(n, seed=cfg["seed"]), horizon=cfg["horizon"],
                             arrivals="zero", utility=cfg["utility"], seed=cfg["seed"])
        fast, ref = _run(inst, cfg["seed"], "1"), _run(inst, cfg["seed"], "0")
        a, b = fast.pop("_schedule"), ref.pop("_schedule")
        same = fast["total_utility"] == ref["total_utility"] and a.to_json_list() == b.to_json_list()
        if not same:
            raise AssertionError(f"{n} servers: the compiled and the numpy runs differ")
        sizes.append({"servers": n, "compiled": fast, "numpy": ref, "same": same})
        print(f"{n} servers: {fast['cpu_per_slot_s']:.2f} s CPU a slot ({ref['cpu_per_slot_s']:.2f} numpy)",
              flush=True)
    report["sizes"] = sizes
    finish(NAME, report, _markdown, output_dir(args), start)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
