"""GADGET (paper 000): which HiGHS algorithm for LP-RS-MDE's two LPs (Alg. 2 lines 3 and 4).

``clusteropt.rounding.gadget.SELECT_HIGHS_OPTIONS`` (primal simplex for the ring-selection LP, the
relaxation of (12)-(19)) and ``EMBED_HIGHS_OPTIONS`` (dual simplex with presolve, HiGHS's default,
for the augmented LP) rest on these measurements.  On the paper preset (``gadget_preset("paper")``,
100 jobs, sqrt utility so that the slots' gains are not underflowed sigmoid zeros), for each slot
the slot problem with no earlier allocation (``slot_problem(inst, t, 0)``, its jobs with a positive
gain) is built as arrays (tree form, ``build_gvne_matrix``), its selection LP solved by each
algorithm, the rings chosen from the primal-simplex solution (``select_from_chi``), and the
augmented LP (``build_embedding_matrix``) solved by each algorithm.  Every solve must end optimal
and all algorithms must agree on the LP value (else the benchmark stops).  HiGHS's own run time
(``solve_seconds``; the hand-off, ``passModel``, is the same for all) is the median of
``--repeats`` solves from scratch.

Run ``python -m benchmarks.gadget_lp_methods`` (writes ``benchmarks/results/``) or ``--quick``.
"""

from __future__ import annotations

import math
import statistics
import time

import numpy as np

from benchmarks._report import finish, header, output_dir, parser
from clusteropt.instances.gadget.instance import gadget_preset
from clusteropt.models.gadget.gvne import slot_problem
from clusteropt.models.gadget.matrix import build_embedding_matrix, build_gvne_matrix, solve_matrix
from clusteropt.rounding.gadget import EMBED_HIGHS_OPTIONS, SELECT_HIGHS_OPTIONS, positive_gain, select_from_chi

NAME = "gadget_lp_methods"
PRIMAL = {"solver": "simplex", "simplex_strategy": 4}
DUAL = {"solver": "simplex", "simplex_strategy": 1}
IPM = {"solver": "ipm", "run_crossover": "on"}
#: (LP, algorithm name, HiGHS options); the package's choices are marked in the report.
METHODS = {
    "select": {"primal simplex": PRIMAL, "dual simplex": DUAL, "interior point": IPM},
    "embed": {"dual simplex": DUAL, "dual simplex, no presolve": {**DUAL, "presolve": "off"},
              "interior point": IPM, "primal simplex": PRIMAL},
}
CHOSEN = {"select": dict(SELECT_HIGHS_OPTIONS), "embed": dict(EMBED_HIGHS_OPTIONS)}
FULL = {"jobs": 100, "seed": 0, "utility": "sqrt", "slots": [60, 110, 160], "repeats": 3}
QUICK = {"jobs": 30, "seed": 0, "utility": "sqrt", "slots": [40], "repeats": 1}


def _time(lp, options: dict, repeats: int) -> tuple[float, list[float], float, np.ndarray]:
    times, value, x = [], math.nan, None
    for _ in range(repeats):
        res, x = solve_matrix(lp, options=options)  # raises unless optimal
        times.append(res.solve_seconds)
        value = float(res.objective)
    assert x is not None
    return statistics.median(times), times, value, x


def run_slot(params: dict, slot: int) -> list[dict]:
    inst = gadget_preset("paper", jobs=params["jobs"], seed=params["seed"], utility=params["utility"])
    problem = positive_gain(slot_problem(inst, slot, np.zeros(inst.n_jobs)))
    rows: list[dict] = []
    kappa = None
    for which in ("select", "embed"):
        t0 = time.perf_counter()
        lp = build_gvne_matrix(problem) if which == "select" else build_embedding_matrix(problem, kappa)
        build_s = time.perf_counter() - t0
        values = []
        for name, options in METHODS[which].items():
            median, times, value, x = _time(lp, options, params["repeats"])
            values.append(value)
            if which == "select" and options == PRIMAL:
                kappa, _ = select_from_chi(problem, lp.values_by_key(x, "chi"))
            rows.append({"slot": slot, "jobs": int(problem.jobs.size), "lp": which, "columns": int(lp.a.shape[1]),
                         "rows": int(lp.a.shape[0]), "build_s": build_s, "algorithm": name,
                         "package_default": options == CHOSEN[which], "solve_median_s": median,
                         "solve_s": times, "objective": value})
            print(f"slot {slot} {which} ({problem.jobs.size} jobs, {lp.a.shape[1]} columns) {name}: "
                  f"{median:.2f} s, {value:.6g}", flush=True)
        if max(values) - min(values) > 1e-6 * max(1.0, abs(max(values))):
            raise RuntimeError(f"slot {slot} {which}: the algorithms disagree on the LP value: {values}")
    return rows


def to_markdown(report: dict) -> str:
    p = report["parameters"]
    lines = [f"# {NAME}", "",
             f"created {report['created']}, code version {report['code_version']}, "
             f"{report['machine']['cpu_count']} CPUs, load average before "
             f"{report['machine']['load_average_1_5_15']}, after {report['machine'].get('load_average_after')}; "
             f"HiGHS {report['versions'].get('highspy')}; whole benchmark {report['wall_s']:.0f} s wall.", "",
             f"Reproduce: `python -m benchmarks.gadget_lp_methods`.  Paper preset, {p['jobs']} jobs, "
             f"{p['utility']} utility, seed {p['seed']}; each slot's problem with no earlier allocation; "
             f"HiGHS's run time, median of {p['repeats']}; `*` = the package's default "
             "(`SELECT_HIGHS_OPTIONS`, `EMBED_HIGHS_OPTIONS`).  All algorithms reach the same LP value.", "",
             "| slot | jobs | LP | columns | rows | build s | algorithm | solve median s | objective |",
             "| ---: | ---: | :--- | ---: | ---: | ---: | :--- | ---: | ---: |"]
    for r in report["rows"]:
        star = " *" if r["package_default"] else ""
        lines.append(f"| {r['slot']} | {r['jobs']} | {r['lp']} | {r['columns']:,} | {r['rows']:,} | "
                     f"{r['build_s']:.2f} | {r['algorithm']}{star} | {r['solve_median_s']:.2f} | "
                     f"{r['objective']:.6g} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    args = parser(NAME, __doc__, "30 jobs, one slot, one repeat; print only").parse_args(argv)
    params = dict(QUICK if args.quick else FULL)
    start = time.perf_counter()
    report = {**header(NAME, ("highspy", "numpy")), "parameters": params, "rows": []}
    for slot in params["slots"]:
        report["rows"] += run_slot(params, slot)
    finish(NAME, report, to_markdown, output_dir(args), start)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
