"""What `clusteropt solve` costs beyond the solver, per registered LP / MILP route, against bare HiGHS.

For each route a user takes with ``clusteropt solve`` (or ``solve(build(name, instance, arrays=None))``
in Python), in one process on the same instance:

* **package** (the default, ``--form auto``): the model's arrays built
  (:class:`~clusteropt.models.matrix.MatrixLP`, no Pyomo model), handed to HiGHS and solved by
  :func:`clusteropt.solve`, the values read back with their labels, as the CLI writes them;
* **bare**: the same arrays handed by this script to a fresh ``highspy.Highs`` (``passModel``, ``run``),
  nothing else: the solver's own time, the denominator;
* **model** (``--form model``): the Pyomo model built and solved through Pyomo, as before the array
  form existed; skipped where it is recorded as too slow (``pyomo_max``).

Recorded per route, CPU seconds beside wall: build, the package's whole solve call, bare HiGHS's
hand-off and run, the package's overhead ``(package - bare run) / bare run`` (the issue's
``(build + hand-off) / solve``; target <= 0.1), the Pyomo route's total, the LP / MPS export from the
arrays, and that all three objectives agree to 1e-8 (relative).  Routes that have no array form
(``broker-regularized`` through CVXPY, ``realtime-max-weight``) are measured the same way against
their own solve time and marked so.

Run ``python -m benchmarks.solve_routes`` (writes ``benchmarks/results/``) or ``--quick``.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import numpy as np

from benchmarks._report import finish, header, output_dir, parser
from clusteropt import build, solve, write_model
from clusteropt.instances import random_coflows
from clusteropt.instances.broker import broker_preset
from clusteropt.instances.gadget.instance import gadget_preset
from clusteropt.instances.realtime import random_realtime
from clusteropt.models.matrix import MatrixLP
from clusteropt.solvers.direct import run_highs

NAME = "solve_routes"
TARGET = 0.1

_GADGET = ("gadget", {"preset": "paper", "seed": 0})
FULL = [
    {"route": "gvne LP, paper preset slot 60", "model": "gvne", "make": _GADGET,
     "options": {"slot": 60, "relax": True}},
    {"route": "gvne ILP, paper preset slot 60", "model": "gvne", "make": _GADGET, "options": {"slot": 60}},
    {"route": "coflow-lp, 526 coflows x 150 ports", "model": "coflow-lp",
     "make": ("coflow", {"n_coflows": 526, "n_ports": 150, "seed": 0}), "options": {}},
    {"route": "broker-lp (P_f), small preset", "model": "broker-lp",
     "make": ("broker", {"preset": "small", "seed": 0}), "options": {}},
    {"route": "broker-lp (P_f), paper preset", "model": "broker-lp",
     "make": ("broker", {"preset": "paper", "seed": 0}), "options": {}, "pyomo": False},
    {"route": "broker-regularized (10), small preset slot 3", "model": "broker-regularized",
     "make": ("broker", {"preset": "small", "seed": 0}), "options": {"slot": 3}},
    {"route": "broker-regularized (10), paper preset slot 10", "model": "broker-regularized",
     "make": ("broker", {"preset": "paper", "seed": 0}), "options": {"slot": 10}},
    {"route": "realtime-max-weight, N = M = 4", "model": "realtime-max-weight",
     "make": ("realtime", {"n_apps": 4, "n_workers": 4, "requirement": [0.2] * 4, "seed": 0}), "options": {}},
]
QUICK = [
    {"route": "gvne LP, small preset slot 10", "model": "gvne", "make": ("gadget", {"preset": "small", "seed": 0}),
     "options": {"slot": 10, "relax": True}},
    {"route": "coflow-lp, 30 coflows x 10 ports", "model": "coflow-lp",
     "make": ("coflow", {"n_coflows": 30, "n_ports": 10, "seed": 0}), "options": {}},
    {"route": "broker-lp (P_f), tiny preset", "model": "broker-lp",
     "make": ("broker", {"preset": "tiny", "seed": 0}), "options": {}},
]


def _instance(kind: str, params: dict):
    p = dict(params)
    if kind == "gadget":
        return gadget_preset(p.pop("preset"), **p)
    if kind == "broker":
        return broker_preset(p.pop("preset"), **p)
    if kind == "realtime":
        return random_realtime(**p)
    return random_coflows(p.pop("n_coflows"), p.pop("n_ports"), **p)


def _timed(fn):
    cpu, wall = time.process_time(), time.perf_counter()
    out = fn()
    return out, time.process_time() - cpu, time.perf_counter() - wall


def _repeat(fn, budget: float = 1.0, least: int = 3, most: int = 50) -> tuple[object, dict]:
    """``fn()`` repeated until ``budget`` seconds of CPU (at least ``least`` times, at most ``most``):
    its last result and the median CPU and wall seconds per key of the dicts it returns."""
    runs: list[dict] = []
    spent = 0.0
    out = None
    while len(runs) < least or (spent < budget and len(runs) < most):
        out, times = fn()
        runs.append(times)
        spent += sum(v for k, v in times.items() if k.endswith("cpu_s"))
    return out, {k: float(np.median([r[k] for r in runs])) for k in runs[0]} | {"repeats": len(runs)}


def _bare(lp: MatrixLP):
    """The arrays handed to a fresh Highs by hand: passModel, then run, each timed."""
    integer = lp.integer if lp.integer is not None and lp.integer.any() else None
    cpu0, wall0 = time.process_time(), time.perf_counter()
    h, _, _ = run_highs(lp.cost, lp.col_lower, lp.col_upper, lp.a, lp.row_lower, lp.row_upper,
                        maximize=lp.maximize, integer=integer, run=False)
    cpu1, wall1 = time.process_time(), time.perf_counter()
    h.run()
    cpu2, wall2 = time.process_time(), time.perf_counter()
    return (float(h.getInfo().objective_function_value), h.getModelStatus().name), {
        "handoff_cpu_s": cpu1 - cpu0, "handoff_wall_s": wall1 - wall0, "run_cpu_s": cpu2 - cpu1,
        "run_wall_s": wall2 - wall1}


def _case(case: dict) -> dict:
    inst = _instance(*case["make"])
    opts = dict(case["options"])
    relax = opts.pop("relax", False)
    row: dict = {"route": case["route"], "model": case["model"], "instance": {"kind": case["make"][0],
                                                                               **case["make"][1]},
                 "options": case["options"]}

    def package():
        (model, result), cpu, wall = _timed(lambda: _package_solve(case["model"], inst, relax, opts))
        _, jcpu, jwall = _timed(result.to_dict)  # the labelled values, as `clusteropt solve --json` writes them
        run_cpu = result.raw.get("run_cpu_s")
        return (model, result), {"cpu_s": cpu, "wall_s": wall, "json_cpu_s": jcpu, "json_wall_s": jwall,
                                 "handoff_wall_s": result.build_seconds, "solver_wall_s": result.solve_seconds,
                                 "overhead_wall_s": wall - result.solve_seconds,
                                 **({} if run_cpu is None else {"solver_cpu_s": run_cpu,
                                                                "overhead_cpu_s": cpu - run_cpu})}

    (model, result), times = _repeat(package)
    row["package"] = {**times, "backend": result.backend, "objective": result.objective}
    objs = [result.objective]
    if isinstance(model, MatrixLP):
        _, btimes = _repeat(lambda: (None, dict(zip(("cpu_s", "wall_s"), _timed(
            lambda: build(case["model"], inst, relax=relax, arrays=True, **opts))[1:], strict=True))))
        row["package"].update(build_cpu_s=btimes["cpu_s"], build_wall_s=btimes["wall_s"], columns=model.n_cols,
                              rows=model.n_rows, nonzeros=model.nnz)
        (objective, status), bare = _repeat(lambda: _bare(model))
        row["bare"] = {**bare, "objective": objective, "status": status}
        objs.append(objective)
        with tempfile.TemporaryDirectory() as tmp:
            for suffix in (".lp", ".mps"):
                path = Path(tmp) / f"model{suffix}"
                _, ecpu, ewall = _timed(lambda path=path: write_model(model, path))
                row[f"export{suffix}"] = {"cpu_s": ecpu, "wall_s": ewall, "bytes": path.stat().st_size}
    # the overhead of a call against the solver's run inside that same call (CPU where the route
    # measures the run's CPU: the array route; the others report the solver's wall time only)
    row["overhead_cpu_s"] = times.get("overhead_cpu_s")
    row["overhead_cpu"] = None if "solver_cpu_s" not in times else times["overhead_cpu_s"] / times["solver_cpu_s"]
    row["overhead_wall"] = times["overhead_wall_s"] / times["solver_wall_s"]
    if case.get("pyomo", True) and isinstance(model, MatrixLP):
        def pyomo():
            (_, r), cpu, wall = _timed(lambda: _package_solve(case["model"], inst, relax, opts, arrays=False))
            return r, {"cpu_s": cpu, "wall_s": wall, "handoff_wall_s": r.build_seconds,
                       "solver_wall_s": r.solve_seconds}

        pres, ptimes = _repeat(pyomo, least=1, most=5)
        row["model_route"] = {**ptimes, "objective": pres.objective}
        objs.append(pres.objective)
    scale = max(1.0, max(abs(o) for o in objs))
    row["agree"] = bool(max(objs) - min(objs) <= 1e-8 * scale)
    if not row["agree"]:
        raise AssertionError(f"{case['route']}: the routes' objectives differ: {objs}")
    return row


def _package_solve(name: str, inst, relax: bool, opts: dict, arrays: bool | None = None):
    model = build(name, inst, relax=relax, arrays=arrays, **opts)
    return model, solve(model)


def _f(x, fmt=".3f"):
    return "" if x is None else format(x, fmt)


def _markdown(report: dict) -> str:
    m = report["machine"]
    lines = [f"# {NAME}", "", f"Machine: {m['platform']}, {m['cpu_count']} cores, load average "
             f"{m.get('load_average_1_5_15')} (after: {m.get('load_average_after')}); created "
             f"{report['created']}, code version {report['code_version']}; target overhead <= {TARGET}.", "",
             "package = `clusteropt solve`'s default route in process (the model built, `solve`: arrays where the "
             "model has them); bare = the same arrays passed to a fresh `highspy.Highs` by hand (its run: the "
             "solver alone); overhead = the package's call less the solver's run inside that call, and its ratio "
             "to that run, in CPU seconds (wall beside; routes without arrays report the run's wall time only); "
             "JSON = `to_dict` of the result (what `--json` adds); model = "
             "the Pyomo route (`--form model`). Medians of repeated runs (ms-scale rows repeat up to 50 times). "
             "Objectives agree to 1e-8 on every row.", "",
             "| route | backend | columns | package CPU (ms) | build CPU (ms) | bare hand-off (ms) "
             "| bare run CPU (ms) | package run CPU (ms) | overhead CPU (ms) | overhead / run CPU "
             "| overhead / run wall | JSON (ms) | model route CPU (ms) | export .mps (ms) |",
             "|:---|:---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]

    def ms(x):
        return "" if x is None else f"{1000 * x:.1f}"

    for r in report["routes"]:
        p, b = r["package"], r.get("bare", {})
        lines.append(f"| {r['route']} | {p['backend']} | {p.get('columns', '')} | {ms(p['cpu_s'])} | "
                     f"{ms(p.get('build_cpu_s'))} | {ms(b.get('handoff_cpu_s'))} | {ms(b.get('run_cpu_s'))} | "
                     f"{ms(p.get('solver_cpu_s'))} | {ms(r['overhead_cpu_s'])} | {_f(r['overhead_cpu'], '.2f')} | "
                     f"{_f(r['overhead_wall'], '.2f')} | "
                     f"{ms(p['json_cpu_s'])} | {ms(r.get('model_route', {}).get('cpu_s'))} | "
                     f"{ms(r.get('export.mps', {}).get('cpu_s'))} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    args = parser(NAME, __doc__, "small instances, print only").parse_args(argv)
    cases = QUICK if args.quick else FULL
    start = time.perf_counter()
    report = header(NAME, ("numpy", "scipy", "highspy", "pyomo", "cvxpy", "clarabel"))
    _case(QUICK[0])  # imports and first-call costs outside the timed rows
    rows = []
    for case in cases:
        row = _case(case)
        rows.append(row)
        print(f"{row['route']}: overhead {_f(row['overhead_cpu'])} CPU, {_f(row['overhead_wall'])} wall "
              f"({row['package']['backend']})", flush=True)
    report["routes"] = rows
    finish(NAME, report, _markdown, output_dir(args), start)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
