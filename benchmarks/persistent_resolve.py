"""Rebuild every slot vs keep one solver alive: worker placement over N online slots.

Each slot draws new remaining capacities ``C`` and utilities ``u`` (seeded) for one
worker-placement instance and solves it four ways with HiGHS:

``pyomo-rebuild``
    ``build_worker_placement(inst)`` then ``solve(model, "highs")`` (a fresh persistent HiGHS
    object is created and the whole model handed over).
``pyomo-persistent``
    one model and one :class:`~clusteropt.solvers.PersistentSolver`; the slot writes the new
    values into the mutable Params ``m.C`` / ``m.u`` and re-solves (Pyomo hands over changes).
``cvxpy-rebuild``
    ``build_worker_placement_cvxpy(inst)`` then ``solve(model, "highs")`` (full canonicalization).
``cvxpy-persistent``
    one CVXPY problem; the slot sets ``parameters["C"].value`` / ``["u"].value`` and re-solves
    (CVXPY reuses the cached DPP canonicalization and only re-applies the parameters).

Per slot and method it records, separately:

* ``construct_s``: building the model (rebuild) or writing the new values into it (persistent);
* ``handoff_s``: ``SolveResult.build_seconds`` (Pyomo: hand-off or update of the solver object;
  CVXPY: compilation);
* ``solve_s``: ``SolveResult.solve_seconds`` (the solver's own time);
* ``other_s``: the rest of the ``solve()`` call (Pyomo: loading values back into the model and
  reading them out, evaluating the objective; CVXPY: passing the matrices to highspy, unpacking);
* ``total_s``: construct + the whole ``solve()`` call.

The first slot is reported separately (it includes the one-off build and hand-off of the
persistent methods); medians are over the later slots.  All four methods must reach the same
objective in every slot (relative 1e-6); integral placements are checked by the verifier.

Run ``python -m benchmarks.persistent_resolve`` (full, writes ``benchmarks/results/``) or with
``--quick`` (small, prints only).
"""

from __future__ import annotations

import dataclasses
import gc
import statistics
import time
from collections.abc import Callable

import numpy as np

from benchmarks._report import finish, header, output_dir
from benchmarks._report import parser as make_parser
from clusteropt.instances import WorkerPlacementInstance, random_worker_placement
from clusteropt.models.worker_placement import (
    build_worker_placement,
    build_worker_placement_cvxpy,
)
from clusteropt.solvers import PersistentSolver, SolveResult, solve
from clusteropt.verify import check_worker_placement

NAME = "persistent_resolve"
SOLVER = "highs"
REL_TOL = 1e-6
FIELDS = ("construct_s", "handoff_s", "solve_s", "other_s", "total_s")
METHODS = ("pyomo-rebuild", "pyomo-persistent", "cvxpy-rebuild", "cvxpy-persistent")

FULL = {"n_jobs": 200, "n_servers": 50, "slots": 20, "seed": 2024}
QUICK = {"n_jobs": 40, "n_servers": 10, "slots": 3, "seed": 2024}


# ---------------------------------------------------------------------------------------------
# the slots' data


def slot_instance(base: WorkerPlacementInstance, rng: np.random.Generator) -> WorkerPlacementInstance:
    """New remaining capacities (20-100 % of the servers', integral) and utilities (x0.5-2)."""
    capacity = np.floor(base.capacity * rng.uniform(0.2, 1.0, size=base.capacity.shape))
    utility = np.round(base.utility * rng.uniform(0.5, 2.0, size=base.n_jobs), 2)
    return dataclasses.replace(base, capacity=capacity, utility=utility)


def model_size(inst: WorkerPlacementInstance) -> dict[str, int]:
    """Columns, rows and nonzeros of the worker-placement LP (Eqs. (2) and (4))."""
    n_i, n_s, n_r = inst.n_jobs, inst.n_servers, len(inst.resources)
    return {
        "columns": n_i * n_s,
        "rows": n_i + n_s * n_r,
        "nonzeros": n_i * n_s + n_s * int(np.count_nonzero(inst.per_worker)),
    }


# ---------------------------------------------------------------------------------------------
# the four methods; each slot returns (timings, result)

Timed = tuple[dict[str, float], SolveResult]


def _timed(construct: Callable[[], object], run: Callable[[object], SolveResult]) -> Timed:
    t0 = time.perf_counter()
    model = construct()
    t1 = time.perf_counter()
    result = run(model)
    t2 = time.perf_counter()
    call = t2 - t1
    return {
        "construct_s": t1 - t0,
        "handoff_s": result.build_seconds,
        "solve_s": result.solve_seconds,
        "other_s": max(call - result.build_seconds - result.solve_seconds, 0.0),
        "total_s": t2 - t0,
    }, result


class Rebuild:
    """Build a new model from the slot's instance and ``solve()`` it."""

    def __init__(self, builder, relax: bool, options: dict):
        self.builder, self.relax, self.options = builder, relax, options

    def first(self, inst: WorkerPlacementInstance) -> Timed:
        return self.step(inst)

    def step(self, inst: WorkerPlacementInstance) -> Timed:
        return _timed(
            lambda: self.builder(inst, relax=self.relax),
            lambda m: solve(m, SOLVER, **self.options),
        )


class PyomoPersistent:
    """One Pyomo model and one PersistentSolver; slots write the mutable Params."""

    def __init__(self, relax: bool, options: dict):
        self.relax, self.options = relax, options

    def first(self, inst: WorkerPlacementInstance) -> Timed:
        def construct():
            self.model = build_worker_placement(inst, relax=self.relax)
            self.ps = PersistentSolver(self.model, SOLVER, **self.options)
            return self.model

        return _timed(construct, lambda _m: self.ps.solve())

    def step(self, inst: WorkerPlacementInstance) -> Timed:
        def construct():
            m = self.model
            for s in range(inst.n_servers):
                for k, r in enumerate(inst.resources):
                    m.C[s, r] = float(inst.capacity[s, k])
            for i in range(inst.n_jobs):
                m.u[i] = float(inst.utility[i])
            return m

        return _timed(construct, lambda _m: self.ps.solve())


class CvxpyPersistent:
    """One CVXPY problem with Parameters and one PersistentSolver; slots set parameter values."""

    def __init__(self, relax: bool, options: dict):
        self.relax, self.options = relax, options

    def first(self, inst: WorkerPlacementInstance) -> Timed:
        def construct():
            self.model = build_worker_placement_cvxpy(inst, relax=self.relax)
            self.ps = PersistentSolver(self.model, SOLVER, **self.options)
            return self.model

        return _timed(construct, lambda _m: self.ps.solve())

    def step(self, inst: WorkerPlacementInstance) -> Timed:
        def construct():
            self.model.parameters["C"].value = inst.capacity
            self.model.parameters["u"].value = inst.utility
            return self.model

        return _timed(construct, lambda _m: self.ps.solve())


def make_methods(relax: bool) -> dict[str, object]:
    # MILPs are solved to a zero gap so that every method must reach the same optimum
    options = {} if relax else {"mip_gap": 0.0}
    return {
        "pyomo-rebuild": Rebuild(build_worker_placement, relax, options),
        "pyomo-persistent": PyomoPersistent(relax, options),
        "cvxpy-rebuild": Rebuild(build_worker_placement_cvxpy, relax, options),
        "cvxpy-persistent": CvxpyPersistent(relax, options),
    }


# ---------------------------------------------------------------------------------------------
# running one variant (LP relaxation or MILP)


def check_slot(t: int, inst, results: dict[str, SolveResult], relax: bool) -> float:
    """All methods agree on the objective; integral placements pass the verifier."""
    objectives = {name: r.objective for name, r in results.items()}
    ref = objectives["pyomo-rebuild"]
    for name, obj in objectives.items():
        if abs(obj - ref) > REL_TOL * max(1.0, abs(ref)):
            raise AssertionError(f"slot {t}: {name} objective {obj!r} != pyomo-rebuild {ref!r}")
    if not relax:
        for name, r in results.items():
            check = check_worker_placement(inst, r.values["y"])
            check.raise_if_infeasible()
            if abs(check.value - r.objective) > REL_TOL * max(1.0, abs(r.objective)):
                raise AssertionError(f"slot {t}: {name} utility {check.value} != {r.objective}")
    return ref


def run_variant(params: dict, relax: bool) -> dict:
    """All methods over ``params["slots"]`` slots (plus the first); per-slot records and medians."""
    base = random_worker_placement(params["n_jobs"], params["n_servers"], seed=params["seed"])
    rng = np.random.default_rng(params["seed"] + 1)
    instances = [base] + [slot_instance(base, rng) for _ in range(params["slots"])]
    methods = make_methods(relax)
    records: dict[str, list[dict]] = {name: [] for name in methods}
    objectives = []
    for t, inst in enumerate(instances):
        # rotate the order each slot so that no method always runs first (caches, GC, load)
        order = list(METHODS[t % len(METHODS):] + METHODS[: t % len(METHODS)])
        results = {}
        for name in order:
            gc.collect()
            method = methods[name]
            timings, result = method.first(inst) if t == 0 else method.step(inst)
            results[name] = result
            records[name].append({"slot": t, **timings, "objective": result.objective})
        objectives.append(check_slot(t, inst, results, relax))
        print(
            f"  slot {t:2d}: objective {objectives[-1]:.6g}; total s "
            + ", ".join(f"{n} {records[n][-1]['total_s']:.3f}" for n in METHODS),
            flush=True,
        )
    summary = {}
    for name, rows in records.items():
        later = rows[1:]
        summary[name] = {
            "first": {f: rows[0][f] for f in FIELDS},
            "median": {f: statistics.median(r[f] for r in later) for f in FIELDS},
            "slots": rows,
        }
    for backend in ("pyomo", "cvxpy"):
        rebuild = summary[f"{backend}-rebuild"]["median"]["total_s"]
        persistent = summary[f"{backend}-persistent"]["median"]["total_s"]
        summary[f"{backend}-persistent"]["speedup_vs_rebuild"] = rebuild / persistent
    return {
        "relax": relax,
        "model": model_size(base),
        "objectives": objectives,
        "methods": summary,
    }


# ---------------------------------------------------------------------------------------------
# report


def to_markdown(report: dict) -> str:
    p = report["parameters"]
    lines = [
        "# Persistent re-solve vs rebuild (worker placement, HiGHS)",
        "",
        f"{p['n_jobs']} jobs x {p['n_servers']} servers, {p['slots']} slots after the first, "
        f"seed {p['seed']}; recorded {report['created']} on {report['machine']['platform']}, "
        f"Python {report['machine']['python']}, {report['machine']['cpu_count']} CPUs; "
        + ", ".join(f"{k} {v}" for k, v in report["versions"].items()) + ".",
        "",
        "Seconds per slot.  `construct`: build the model (rebuild) or write the new values into "
        "it (persistent); `hand-off`: `SolveResult.build_seconds` (Pyomo: hand-off / update of the "
        "solver object, CVXPY: compilation); `solve`: the solver's own time; `other`: the rest of "
        "the `solve()` call (Pyomo: loading values, evaluating the objective; CVXPY: the highspy "
        "hand-off and unpacking).  Medians over the later slots; `first` is the "
        "first slot's total (it includes the persistent methods' one-off build and hand-off).",
        "",
    ]
    for key, variant in report["variants"].items():
        size = variant["model"]
        lines += [
            f"## {key} ({size['columns']} columns, {size['rows']} rows, {size['nonzeros']} nonzeros)",
            "",
            "| method | first | construct | hand-off | solve | other | total | speed-up |",
            "|---|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for name in METHODS:
            m = variant["methods"][name]
            med = m["median"]
            speed = m.get("speedup_vs_rebuild")
            lines.append(
                f"| {name} | {m['first']['total_s']:.3f} | "
                + " | ".join(f"{med[f]:.4f}" for f in FIELDS)
                + f" | {'' if speed is None else f'{speed:.1f}x'} |"
            )
        lines.append("")
    lines += [
        "All four methods reached the same objective in every slot (relative 1e-6); MILP "
        "placements passed `check_worker_placement`.",
        "",
        "Reproduce: `.venv/bin/python -m benchmarks.persistent_resolve` (results in "
        "`benchmarks/results/persistent_resolve.{json,md}`).",
        "",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = make_parser(NAME, __doc__, "small instance, few slots; print only")
    parser.add_argument("--slots", type=int, help="slots after the first (default 20, quick 3)")
    parser.add_argument("--n-jobs", type=int)
    parser.add_argument("--n-servers", type=int)
    parser.add_argument("--seed", type=int)
    parser.add_argument(
        "--variants", default="lp,milp", help="comma-separated: lp (relax=True), milp (default both)"
    )
    args = parser.parse_args(argv)

    params = dict(QUICK if args.quick else FULL)
    for key in ("slots", "n_jobs", "n_servers", "seed"):
        if getattr(args, key) is not None:
            params[key] = getattr(args, key)
    if params["slots"] < 1:
        parser.error("--slots must be >= 1")
    variants = [v.strip() for v in args.variants.split(",") if v.strip()]
    bad = set(variants) - {"lp", "milp"}
    if bad:
        parser.error(f"unknown variant(s) {sorted(bad)}; expected lp, milp")
    out = output_dir(args)

    report = {
        **header(NAME, ("clusteropt", "pyomo", "highspy", "cvxpy", "numpy")),
        "parameters": {**params, "solver": SOLVER, "solver_options": "HiGHS defaults",
                       "mip_gap": 0.0, "quick": args.quick},
        "variants": {},
    }
    for key in variants:
        print(f"{NAME} [{key}]: {params}", flush=True)
        report["variants"][key] = run_variant(params, relax=key == "lp")
    finish(NAME, report, to_markdown, out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
