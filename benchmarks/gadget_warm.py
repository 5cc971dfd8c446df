"""GADGET LP-RS-MDE with warm re-solves across slots against the cold path.

The same run twice, same instance and seed, after an unrecorded two-slot warm-up of the process:
``Gadget("lp-rs-mde")`` (every slot's two LPs built and solved afresh) and
``Gadget("lp-rs-mde", warm=True)`` (both HiGHS models kept; an LP with the previous slot's
structure is re-solved from its basis after changing costs and bounds, and an LP whose jobs
changed starts from the previous basis matched by the columns' and rows' names,
:class:`clusteropt.solvers.direct.WarmHighs`).  Recorded per run: wall time, the per-slot times of
the ring-selection and augmented LPs (HiGHS's run and the hand-off, median, p90 and sum), how many
slots started warm and how many of those from a matched basis, the total utility, and whether
the ring-selection LP's value (``lp_value``) was the same on every slot.  Every schedule is
checked by the verifier.

``--case fig4-1000``: the Fig. 4 point with 1,000 jobs (paper preset, T = 200, sqrt utility), both
runs with the augmented LP by column generation (``embed_route="colgen"``,
:mod:`clusteropt.models.gadget.colgen`; the default route's tree LP would take about an hour) and the
ring-selection LP through its certified capacity relaxation (``select_route="capacity"``), cold and
warm (the warm run re-solves the relaxation); written as ``gadget_warm_fig4-1000.*``.

Run ``python -m benchmarks.gadget_warm`` (writes ``benchmarks/results/``) or ``--quick``.
"""

from __future__ import annotations

import time

import numpy as np

from benchmarks._report import finish, header, output_dir, parser
from clusteropt.instances.gadget.instance import gadget_preset
from clusteropt.online import run_online
from clusteropt.online.gadget import Gadget
from clusteropt.verify import check_gadget_schedule

NAME = "gadget_warm"
FULL = {"preset": "paper", "n_jobs": 60, "horizon": 100, "utility": "sqrt", "seed": 0}
QUICK = {"preset": "small", "n_jobs": 8, "horizon": 20, "utility": "sqrt", "seed": 0}
#: ``--case``: parameters and the options both runs share.
CASES = {"default": (FULL, {"embed_route": "lp", "select_route": "full"}),
         "fig4-1000": ({"preset": "paper", "n_jobs": 1000, "horizon": 200, "utility": "sqrt", "seed": 0},
                       {"embed_route": "colgen", "select_route": "capacity"})}


def _times(infos, key: str) -> dict:
    values = np.array([float(i.get(key, 0.0)) for i in infos if i.get("jobs")])
    if values.size == 0:
        return {"median": 0.0, "p90": 0.0, "sum": 0.0}
    return {"median": float(np.median(values)), "p90": float(np.quantile(values, 0.9)), "sum": float(values.sum())}


def one(inst, warm: bool, seed: int, options=None) -> dict:
    start = time.perf_counter()
    run = run_online(Gadget("lp-rs-mde", warm=warm, **(options or {})), inst, horizon=inst.horizon, seed=seed)
    wall = time.perf_counter() - start
    check = check_gadget_schedule(inst, run.schedule)
    if not check.ok:
        raise AssertionError(f"warm={warm}: the schedule failed verification: {check.violations[:3]}")
    infos = run.slot_info
    return {
        "wall_s": wall, "total_utility": float(check.total_utility), "slots": len(infos),
        "select_solve_s": _times(infos, "select_solve_s"), "select_handoff_s": _times(infos, "select_handoff_s"),
        "embed_solve_s": _times(infos, "solve_s"), "embed_handoff_s": _times(infos, "handoff_s"),
        "slot_s": _times(infos, "seconds"),
        "select_warm_slots": sum(bool(i.get("select_warm")) for i in infos),
        "embed_warm_slots": sum(bool(i.get("embed_warm")) for i in infos),
        "select_mapped_slots": sum(i.get("select_start") == "mapped" for i in infos),
        "embed_mapped_slots": sum(i.get("embed_start") == "mapped" for i in infos),
        "lp_values": [float(i.get("lp_value", 0.0)) for i in infos],
    }


def to_markdown(report: dict) -> str:
    p = report["parameters"]
    cold, warm = report["runs"]["cold"], report["runs"]["warm"]
    lines = [f"# {report['benchmark']}", "",
             f"recorded {report['created']} on {report['machine']['platform']}, {report['machine']['cpu_count']} "
             f"CPUs; parameters {p}", "",
             "| path | wall s | slot median s | slot p90 s | select LP solve s (sum) | augmented LP solve s (sum) "
             "| hand-offs s (sum) | warm slots (select / augmented) | of them from a matched basis "
             "| total utility |",
             "| :--- | ---: | ---: | ---: | ---: | ---: | ---: | :--- | :--- | ---: |"]
    for name, r in (("cold", cold), ("warm", warm)):
        hand = r["select_handoff_s"]["sum"] + r["embed_handoff_s"]["sum"]
        lines.append(f"| {name} | {r['wall_s']:.1f} | {r['slot_s']['median']:.3f} | {r['slot_s']['p90']:.3f} | "
                     f"{r['select_solve_s']['sum']:.2f} | {r['embed_solve_s']['sum']:.2f} | {hand:.2f} | "
                     f"{r['select_warm_slots']} / {r['embed_warm_slots']} of {r['slots']} | "
                     f"{r['select_mapped_slots']} / {r['embed_mapped_slots']} | {r['total_utility']:.6g} |")
    lines += ["", f"Ring-selection LP value equal on every slot: {report['lp_values_equal']}; total utility "
              f"equal: {report['utility_equal']}; wall-time ratio cold / warm: {report['speedup']:.2f}.", ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    cli = parser(NAME, __doc__, "small instance; print only")
    cli.add_argument("--case", choices=tuple(CASES), default="default",
                     help="default: 60 jobs, T = 100; fig4-1000: Fig. 4 with 1,000 jobs (module docstring)")
    args = cli.parse_args(argv)
    full, options = CASES[args.case]
    params = {**(QUICK if args.quick else full), "options": options}
    bench = NAME if args.case == "default" else f"{NAME}_{args.case}"
    start = time.perf_counter()
    inst = gadget_preset(params["preset"], n_jobs=params["n_jobs"], seed=params["seed"], utility=params["utility"],
                         horizon=params["horizon"])
    report = {**header(bench, ("clusteropt", "highspy", "numpy")), "parameters": params, "runs": {}}
    # a two-slot run first, not recorded: imports and first-call costs would otherwise fall on the cold run
    run_online(Gadget("lp-rs-mde", **options), inst, horizon=min(2, inst.horizon), seed=params["seed"])
    for name, warm in (("cold", False), ("warm", True)):
        report["runs"][name] = one(inst, warm, params["seed"], options)
        print(f"{bench}: {name} {report['runs'][name]['wall_s']:.1f} s", flush=True)
    cold, warm = report["runs"]["cold"], report["runs"]["warm"]
    report["lp_values_equal"] = bool(np.allclose(cold["lp_values"], warm["lp_values"], rtol=1e-9, atol=1e-9))
    report["utility_equal"] = bool(np.isclose(cold["total_utility"], warm["total_utility"], rtol=1e-9))
    report["speedup"] = cold["wall_s"] / warm["wall_s"]
    finish(bench, report, to_markdown, output_dir(args), start)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
