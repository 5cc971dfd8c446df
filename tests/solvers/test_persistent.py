"""PersistentSolver: re-solving after in-place changes gives the answers of a fresh build.

An online-style loop changes, slot by slot, the data of one worker-placement model (capacities
``C``, utilities ``u``, per-worker demands ``l``) and variable bounds (upper bounds, fixings),
re-solves it through one :class:`PersistentSolver`, and compares with a model built afresh
from an instance carrying the same data, solved by :func:`solve`.  Every placement is checked
by the independent verifier.  All randomness goes through fixed seeds.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from clusteropt.instances import WorkerPlacementInstance, random_worker_placement
from clusteropt.models.worker_placement import (
    build_worker_placement,
    build_worker_placement_cvxpy,
)
from clusteropt.solvers import (
    PersistentSolver,
    SolveResult,
    Termination,
    UnsuitableSolverError,
    available_solvers,
    solve,
)
from clusteropt.verify import check_worker_placement

N_SLOTS = 15
N_JOBS, N_SERVERS = 12, 5
REL = 1e-6

PYOMO_SOLVERS = [s for s in ("highs", "scip", "gurobi") if s in available_solvers("pyomo")]
CVXPY_SOLVERS = [s for s in ("highs", "scip") if s in available_solvers("cvxpy")]
LEGACY_SOLVERS = ["cbc", "glpk"]


# ---------------------------------------------------------------------------------------------
# slot data: what changes between slots, drawn from a seeded Generator


def slot_instance(
    base: WorkerPlacementInstance,
    rng: np.random.Generator,
    *,
    change_demand: bool,
    per_worker: np.ndarray | None = None,
) -> WorkerPlacementInstance:
    """``base`` with the remaining capacities and utilities of a new slot.

    ``per_worker`` (default ``base``'s) is kept, or redrawn when ``change_demand``.
    """
    capacity = np.floor(base.capacity * rng.uniform(0.2, 1.0, size=base.capacity.shape))
    utility = np.round(base.utility * rng.uniform(0.5, 2.0, size=base.n_jobs), 2)
    per_worker = base.per_worker if per_worker is None else per_worker
    if change_demand:
        # cores and memory per worker change (a job re-profiled); one GPU per worker stays
        per_worker = per_worker.copy()
        per_worker[:, 1] = rng.integers(2, 9, base.n_jobs)
        per_worker[:, 2] = 8 * rng.integers(1, 7, base.n_jobs)
    return dataclasses.replace(base, capacity=capacity, utility=utility, per_worker=per_worker)


def slot_bounds(inst: WorkerPlacementInstance, rng: np.random.Generator):
    """A few tightened upper bounds and one fixing ``y[i, s] = 1`` that the capacities allow."""
    n_i, n_s = inst.n_jobs, inst.n_servers
    pairs = [(int(i), int(s)) for i, s in zip(rng.integers(0, n_i, 4), rng.integers(0, n_s, 4))]
    ub = {p: int(rng.integers(0, inst.max_workers[p[0]])) for p in pairs}  # < N_i: binding-ish
    fits = [
        (i, s)
        for i in range(n_i)
        for s in range(n_s)
        if (i, s) not in ub and np.all(inst.per_worker[i] <= inst.capacity[s])
    ]
    fixed = {}
    if fits:
        fixed[fits[int(rng.integers(len(fits)))]] = 1
    return ub, fixed


def set_pyomo_data(m, inst: WorkerPlacementInstance, *, demand: bool) -> None:
    """Write the instance's C, u (and l) into the mutable Params of a built model."""
    for s in range(inst.n_servers):
        for k, r in enumerate(inst.resources):
            m.C[s, r] = float(inst.capacity[s, k])
    for i in range(inst.n_jobs):
        m.u[i] = float(inst.utility[i])
        if demand:
            for k, r in enumerate(inst.resources):
                m.l[i, r] = float(inst.per_worker[i, k])


def apply_bounds(m, ub: dict, fixed: dict) -> None:
    for (i, s), b in ub.items():
        m.y[i, s].setub(b)
    for (i, s), v in fixed.items():
        m.y[i, s].fix(v)


def undo_bounds(m, inst: WorkerPlacementInstance, ub: dict, fixed: dict) -> None:
    """Restore the build-time bounds ``0 <= y[i, s]`` (no upper bound) and unfix."""
    for i, s in [*ub, *fixed]:
        m.y[i, s].unfix()
        m.y[i, s].setub(None)


def assert_placement(inst, result: SolveResult, *, relax: bool, ub=None, fixed=None) -> None:
    """The verifier accepts the placement and recomputes the reported objective."""
    assert result.termination is Termination.OPTIMAL
    y = np.asarray(result.values["y"], dtype=float)
    check = check_worker_placement(inst, y)
    violated = [v for v in check.violations if not (relax and v.constraint == "integrality")]
    assert not violated, [str(v) for v in violated[:5]]
    assert check.value == pytest.approx(result.objective, rel=REL, abs=REL)
    for (i, s), b in (ub or {}).items():
        assert y[i, s] <= b + 1e-6, f"y[{i}, {s}] = {y[i, s]} above its bound {b}"
    for (i, s), v in (fixed or {}).items():
        assert y[i, s] == pytest.approx(v, abs=1e-6), f"y[{i}, {s}] = {y[i, s]}, fixed at {v}"


def gap_options(relax: bool) -> dict:
    # prove optimality exactly so that the two routes must agree to 1e-6 (the default MIP gap
    # of HiGHS is 1e-4)
    return {} if relax else {"mip_gap": 0.0}


# ---------------------------------------------------------------------------------------------
# Pyomo: mutable Params and variable bounds through the persistent contrib interface


@pytest.mark.parametrize("relax", [False, True], ids=["milp", "lp"])
@pytest.mark.parametrize("solver", PYOMO_SOLVERS)
def test_pyomo_persistent_matches_rebuild(solver, relax):
    rng = np.random.default_rng(20240601)
    base = random_worker_placement(N_JOBS, N_SERVERS, seed=7)
    model = build_worker_placement(base, relax=relax)
    ps = PersistentSolver(model, solver, **gap_options(relax))
    first = ps.solve()
    assert_placement(base, first, relax=relax)
    assert first.objective == pytest.approx(
        solve(build_worker_placement(base, relax=relax), solver, **gap_options(relax)).objective,
        rel=REL,
    )
    solver_object = ps.solver_
    assert solver_object is not None

    ub, fixed = {}, {}
    inst = base
    for t in range(1, N_SLOTS + 1):
        change_demand = t % 5 == 0  # l changes every fifth slot and then stays
        inst = slot_instance(base, rng, change_demand=change_demand, per_worker=inst.per_worker)
        set_pyomo_data(model, inst, demand=change_demand)
        undo_bounds(model, base, ub, fixed)
        ub, fixed = slot_bounds(inst, rng) if t % 2 == 1 else ({}, {})
        apply_bounds(model, ub, fixed)

        got = ps.solve()

        fresh = build_worker_placement(inst, relax=relax)
        apply_bounds(fresh, ub, fixed)
        want = solve(fresh, solver, **gap_options(relax))

        assert got.objective == pytest.approx(want.objective, rel=REL), f"slot {t}"
        assert_placement(inst, got, relax=relax, ub=ub, fixed=fixed)
        assert_placement(inst, want, relax=relax, ub=ub, fixed=fixed)
        assert ps.solver_ is solver_object, "the solver object was rebuilt"
        assert ps.n_solves_ == t + 1


def test_pyomo_persistent_sees_every_kind_of_change():
    """One change at a time, each must move the optimum the way a rebuild does."""
    base = WorkerPlacementInstance(
        capacity=[[4, 32, 256], [2, 16, 128]],
        per_worker=[[1, 4, 16], [1, 8, 32]],
        max_workers=[3, 4],
        utility=[5.0, 3.0],
    )
    model = build_worker_placement(base)
    ps = PersistentSolver(model, "highs")
    assert ps.solve().objective == pytest.approx(3 * 5 + 3 * 3)

    model.C[0, "gpu"] = 1.0  # server 0 keeps one GPU: job 0 gets 1 there, 2 on server 1
    assert ps.solve().objective == pytest.approx(3 * 5)
    model.u[1] = 6.0  # job 1 now worth more: it takes the three GPUs
    assert ps.solve().objective == pytest.approx(3 * 6)
    model.y[1, 1].setub(0)  # job 1 barred from server 1
    assert ps.solve().objective == pytest.approx(6 + 2 * 5)
    model.y[0, 0].fix(1)  # job 0 pinned to server 0
    assert ps.solve().objective == pytest.approx(5 + 2 * 5)
    model.y[0, 0].unfix()
    model.y[1, 1].setub(4)
    model.C[0, "gpu"] = 4.0
    assert ps.solve().objective == pytest.approx(4 * 6 + 2 * 5)
    assert ps.n_solves_ == 6


def test_pyomo_persistent_changing_max_workers_matches_rebuild():
    base = WorkerPlacementInstance([[8, 64, 512]], [[1, 2, 8]], [1], [1.0])
    model = build_worker_placement(base)
    ps = PersistentSolver(model, "highs")
    assert ps.solve().objective == pytest.approx(1.0)
    model.N[0] = 4
    want = solve(build_worker_placement(dataclasses.replace(base, max_workers=[4])), "highs")
    assert want.objective == pytest.approx(4.0)
    assert ps.solve().objective == pytest.approx(want.objective)


# ---------------------------------------------------------------------------------------------
# CVXPY: cp.Parameter values, the canonicalization cached across solves


@pytest.mark.parametrize("relax", [False, True], ids=["milp", "lp"])
@pytest.mark.parametrize("solver", CVXPY_SOLVERS)
def test_cvxpy_persistent_matches_rebuild(solver, relax):
    rng = np.random.default_rng(1789)
    base = random_worker_placement(N_JOBS, N_SERVERS, seed=11)
    cm = build_worker_placement_cvxpy(base, relax=relax)
    assert cm.problem.is_dpp()
    ps = PersistentSolver(cm, solver, **gap_options(relax))
    first = ps.solve()
    assert_placement(base, first, relax=relax)
    cache = getattr(cm.problem, "_cache", None)  # CVXPY's private canonicalization cache
    param_prog = getattr(cache, "param_prog", None)

    for t in range(1, N_SLOTS + 1):
        inst = slot_instance(base, rng, change_demand=False)
        cm.parameters["C"].value = inst.capacity
        cm.parameters["u"].value = inst.utility

        got = ps.solve()
        want = solve(build_worker_placement_cvxpy(inst, relax=relax), solver, **gap_options(relax))

        assert got.objective == pytest.approx(want.objective, rel=REL), f"slot {t}"
        assert_placement(inst, got, relax=relax)
        assert_placement(inst, want, relax=relax)
        assert ps.n_solves_ == t + 1
        if param_prog is not None:
            assert cm.problem._cache.param_prog is param_prog, "CVXPY re-canonicalized"


def test_cvxpy_and_pyomo_persistent_agree():
    rng = np.random.default_rng(3)
    base = random_worker_placement(N_JOBS, N_SERVERS, seed=5)
    m = build_worker_placement(base)
    cm = build_worker_placement_cvxpy(base)
    ps_pyomo = PersistentSolver(m, "highs", mip_gap=0.0)
    ps_cvxpy = PersistentSolver(cm, "highs", mip_gap=0.0)
    for _ in range(5):
        inst = slot_instance(base, rng, change_demand=False)
        set_pyomo_data(m, inst, demand=False)
        cm.parameters["C"].value = inst.capacity
        cm.parameters["u"].value = inst.utility
        a, b = ps_pyomo.solve(), ps_cvxpy.solve()
        assert a.objective == pytest.approx(b.objective, rel=REL)
        assert a.backend == "pyomo" and b.backend == "cvxpy"


# ---------------------------------------------------------------------------------------------
# the solver object, options and counters


@pytest.fixture
def small_model():
    return build_worker_placement(random_worker_placement(6, 3, seed=2))


@pytest.mark.parametrize("solver", LEGACY_SOLVERS)
def test_legacy_solvers_are_refused(solver, small_model):
    if solver not in available_solvers("pyomo"):
        pytest.skip(f"{solver} executable not installed")
    with pytest.raises(UnsuitableSolverError, match="no persistent Pyomo interface"):
        PersistentSolver(small_model, solver)


def test_solver_object_kept_and_counted(small_model):
    ps = PersistentSolver(small_model, "highs")
    assert ps.solver_ is None and ps.n_solves_ == 0
    ps.solve()
    first = ps.solver_
    for k in range(2, 5):
        small_model.u[0] = float(k)
        ps.solve()
        assert ps.solver_ is first
        assert ps.n_solves_ == k


@pytest.mark.parametrize("solver", PYOMO_SOLVERS)
def test_solver_object_is_persistent(solver, small_model):
    from pyomo.contrib.solver.common.base import PersistentSolverBase

    # scip / gurobi must use scip_persistent / gurobi_persistent, not the *_direct interfaces
    # that rebuild the native model on every solve
    ps = PersistentSolver(small_model, solver)
    ps.solve()
    assert isinstance(ps.solver_, PersistentSolverBase)


def test_per_call_overrides(small_model):
    ps = PersistentSolver(small_model, "highs", time_limit=100.0)
    r = ps.solve(time_limit=7.5, mip_gap=0.0)
    assert r.is_optimal
    assert r.raw["native"].solver_config.time_limit == pytest.approx(7.5)
    assert r.raw["native"].solver_config.rel_gap == 0.0
    # the override applied to that call only
    assert ps.defaults["time_limit"] == 100.0
    assert ps.solve().raw["native"].solver_config.time_limit == pytest.approx(100.0)
    with pytest.raises(ValueError, match="time_limit"):
        ps.solve(time_limit=-1.0)


def test_per_call_overrides_cvxpy():
    cm = build_worker_placement_cvxpy(random_worker_placement(6, 3, seed=2))
    ps = PersistentSolver(cm, "highs")
    assert ps.solve(time_limit=5.0, threads=1).is_optimal
    assert ps.n_solves_ == 1


def test_unknown_override_raises(small_model):
    ps = PersistentSolver(small_model, "highs")
    with pytest.raises(TypeError, match="timelimit"):
        ps.solve(timelimit=5.0)
    assert ps.n_solves_ == 0


def test_non_optimal_raises_and_can_be_kept(small_model):
    from clusteropt.solvers import NotOptimalError

    ps = PersistentSolver(small_model, "highs")
    ps.solve()
    small_model.y[0, 0].fix(small_model.N[0].value + 1)  # breaks (2)
    with pytest.raises(NotOptimalError, match="infeasible"):
        ps.solve()
    r = ps.solve(raise_on_nonoptimal=False)
    assert r.termination is Termination.INFEASIBLE and not r.has_solution
    small_model.y[0, 0].unfix()
    assert ps.solve().is_optimal
