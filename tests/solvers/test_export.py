"""LP / MPS export (write_model) and solving files (solve_file): round trips, names, refusals.

Every exported model must re-solve, in HiGHS and in SCIP, to the objective of the direct solve
(DESIGN.md, Contracts: Export).
"""

from __future__ import annotations

import math

import cvxpy as cp
import numpy as np
import pytest

from clusteropt import testing
from clusteropt.instances import random_worker_placement
from clusteropt.models import CvxpyModel, build_worker_placement, build_worker_placement_cvxpy
from clusteropt.solvers import (
    Termination,
    UnsuitableSolverError,
    available_solvers,
    solve,
    solve_file,
    write_model,
)
from clusteropt.solvers.result import relative_gap

OBJ_RTOL = 1e-6
"""Exported files re-solve to the direct objective within this relative tolerance."""

FILE_SOLVERS = ("highs", "scip")
SUFFIXES = (".lp", ".mps")
SEEDS = (0, 1, 2)


def _file_solver(name):
    return pytest.param(
        name,
        id=name,
        marks=pytest.mark.skipif(
            name not in available_solvers("file"), reason=f"{name} cannot read files here"
        ),
    )


def rich_cvxpy(integer: bool = False) -> cp.Problem:
    """Maximize, a constant offset, a matrix variable with bounds, equality rows and abs()."""
    X = cp.Variable((2, 3), name="X", bounds=[-2, 5], integer=integer)
    s = cp.Variable(3, name="s", nonneg=True)
    target = np.array([[1.0, 0.0, 2.0], [3.0, 1.0, 0.0]])
    gain = np.array([[1.0, 2.0, 0.5], [0.3, 1.0, 2.0]])
    objective = cp.Maximize(
        cp.sum(cp.multiply(gain, X)) - 2 * cp.sum(cp.abs(X - target)) - cp.sum(s) + 7.5
    )
    constraints = [
        cp.sum(X, axis=0) + s == np.array([3.0, 2.0, 4.5]),  # equality rows
        cp.abs(X[0, 0] - X[1, 2]) <= 1.5,
        X[0, :] @ np.ones(3) <= 6,
    ]
    return cp.Problem(objective, constraints)


def knapsack_milp_pyomo_offset():
    """The battery MILP (maximize) with a constant added to the objective."""
    m = testing.knapsack_milp_pyomo()
    m.value.set_value(m.value.expr + 7.5)
    return m


MODELS = {
    "transport_lp-pyomo": testing.transport_lp_pyomo,
    "transport_lp-cvxpy": testing.transport_lp_cvxpy,
    "knapsack_milp-pyomo": testing.knapsack_milp_pyomo,
    "knapsack_milp-cvxpy": testing.knapsack_milp_cvxpy,
    "knapsack_milp_offset-pyomo": knapsack_milp_pyomo_offset,
    "rich_lp-cvxpy": rich_cvxpy,
    "rich_milp-cvxpy": lambda: rich_cvxpy(integer=True),
    **{
        f"worker_placement_{seed}-pyomo": (
            lambda seed=seed: build_worker_placement(random_worker_placement(8, 4, seed=seed))
        )
        for seed in SEEDS
    },
    **{
        f"worker_placement_{seed}-cvxpy": (
            lambda seed=seed: build_worker_placement_cvxpy(random_worker_placement(8, 4, seed=seed))
        )
        for seed in SEEDS
    },
    "worker_placement_relaxed-pyomo": (
        lambda: build_worker_placement(random_worker_placement(8, 4, seed=5), relax=True)
    ),
    "worker_placement_relaxed-cvxpy": (
        lambda: build_worker_placement_cvxpy(random_worker_placement(8, 4, seed=5), relax=True)
    ),
}

_direct: dict[str, float] = {}


def direct_objective(name: str) -> float:
    """Objective of the direct HiGHS solve of ``MODELS[name]`` (cached per session)."""
    if name not in _direct:
        _direct[name] = solve(MODELS[name](), "highs").objective
    return _direct[name]


# ---------------------------------------------------------------------------------------------
# round trips


@pytest.mark.parametrize("solver", [_file_solver(s) for s in FILE_SOLVERS])
@pytest.mark.parametrize("suffix", SUFFIXES)
@pytest.mark.parametrize("name", list(MODELS))
def test_round_trip_objective(name, suffix, solver, tmp_path):
    path = write_model(MODELS[name](), tmp_path / f"model{suffix}")
    assert path == tmp_path / f"model{suffix}" and path.stat().st_size > 0
    result = solve_file(path, solver)
    assert result.backend == "file" and result.solver == solver
    assert result.termination is Termination.OPTIMAL and result.has_solution
    want = direct_objective(name)
    assert math.isclose(result.objective, want, rel_tol=OBJ_RTOL, abs_tol=OBJ_RTOL), (
        f"{name}{suffix} in {solver}: objective {result.objective}, direct solve {want}"
    )


def test_direct_objectives_match_the_battery():
    assert direct_objective("transport_lp-pyomo") == pytest.approx(10.0, rel=1e-9)
    assert direct_objective("transport_lp-cvxpy") == pytest.approx(10.0, rel=1e-9)
    assert direct_objective("knapsack_milp-cvxpy") == pytest.approx(22.5, rel=1e-9)
    assert direct_objective("knapsack_milp_offset-pyomo") == pytest.approx(30.0, rel=1e-9)
    for seed in SEEDS:  # both formulations of worker placement agree
        assert direct_objective(f"worker_placement_{seed}-pyomo") == pytest.approx(
            direct_objective(f"worker_placement_{seed}-cvxpy"), rel=1e-9
        )


FILE_VALUES = {
    "transport_lp-pyomo": {"x(p0_m0)": 2.0, "x(p0_m1)": 1.0, "x(p1_m0)": 0.0, "x(p1_m1)": 2.0},
    "transport_lp-cvxpy": {"x(0_0)": 2.0, "x(0_1)": 1.0, "x(1_0)": 0.0, "x(1_1)": 2.0},
    "knapsack_milp-pyomo": {"x(0)": 0.0, "x(1)": 1.0, "x(2)": 1.0, "x(3)": 1.0, "z": 0.0, "w": 1.0},
    "knapsack_milp-cvxpy": {"x(0)": 0.0, "x(1)": 1.0, "x(2)": 1.0, "x(3)": 1.0, "z": 0.0, "w": 1.0},
}


@pytest.mark.parametrize("solver", [_file_solver(s) for s in FILE_SOLVERS])
@pytest.mark.parametrize("suffix", SUFFIXES)
@pytest.mark.parametrize("name", list(FILE_VALUES))
def test_round_trip_values_by_column_name(name, suffix, solver, tmp_path):
    path = write_model(MODELS[name](), tmp_path / f"model{suffix}")
    result = solve_file(path, solver)
    for column, want in FILE_VALUES[name].items():
        assert column in result.values, f"no column {column!r} in {sorted(result.values)}"
        assert isinstance(result.values[column], np.ndarray)
        assert float(result.values[column]) == pytest.approx(want, abs=1e-6), column


@pytest.mark.parametrize("solver", [_file_solver(s) for s in FILE_SOLVERS])
@pytest.mark.parametrize("suffix", SUFFIXES)
@pytest.mark.parametrize("backend", ["pyomo", "cvxpy"])
@pytest.mark.parametrize("name", ["infeasible_lp", "unbounded_lp"])
def test_round_trip_infeasible_and_unbounded(name, backend, suffix, solver, tmp_path):
    problem = testing.get_problem(name, backend)
    path = write_model(problem.build(), tmp_path / f"model{suffix}")
    result = solve_file(path, solver, raise_on_nonoptimal=False)
    assert result.termination in problem.accepted | {Termination.INFEASIBLE_OR_UNBOUNDED}, (
        result.summary()
    )
    assert not result.has_solution and result.objective is None and result.gap is None


@pytest.mark.parametrize("solver", [_file_solver(s) for s in FILE_SOLVERS])
def test_time_limited_file_solve_reports_incumbent_bound_and_gap(solver, tmp_path):
    path = write_model(testing.hard_knapsack_cvxpy(), tmp_path / "hard.mps")
    result = solve_file(path, solver, time_limit=testing.TIME_LIMIT, raise_on_nonoptimal=False)
    assert result.termination is Termination.FEASIBLE and result.has_solution, result.summary()
    assert result.bound is not None and math.isfinite(result.bound)
    assert result.bound >= result.objective  # maximization
    assert result.bound <= testing.hard_knapsack_lp_bound(**testing.HARD_KNAPSACK_SIZE) * (1 + 1e-9)
    assert result.gap > 0
    assert result.gap == pytest.approx(relative_gap(result.objective, result.bound), rel=1e-9)
    w, p, c = testing.hard_knapsack_data(**testing.HARD_KNAPSACK_SIZE)
    x = np.array([float(result.values[f"x({j})"]) for j in range(p.size)])
    assert np.all(w @ np.round(x) <= c + 1e-6)
    assert float(p @ np.round(x)) == pytest.approx(result.objective, rel=1e-9)


# ---------------------------------------------------------------------------------------------
# readable names


@pytest.mark.parametrize("suffix", SUFFIXES)
def test_pyomo_names_are_readable(suffix, tmp_path):
    model = build_worker_placement(random_worker_placement(8, 4, seed=0))
    text = write_model(model, tmp_path / f"wp{suffix}").read_text()
    assert "y(0_1)" in text and "y(7_3)" in text
    assert "capacity(0_gpu)" in text and "capacity(3_mem)" in text
    assert "workers_limit(0)" in text and "workers_limit(7)" in text


@pytest.mark.parametrize("suffix", SUFFIXES)
def test_cvxpy_wrapper_names_are_readable(suffix, tmp_path):
    model = build_worker_placement_cvxpy(random_worker_placement(8, 4, seed=0))
    text = write_model(model, tmp_path / f"wp{suffix}").read_text()
    assert "y(0_1)" in text and "y(7_3)" in text
    assert "capacity" in text and "workers_limit" in text
    for name in ("workers_limit(0)", "workers_limit(7)"):
        assert name in text
    # 4 servers x 3 resources = 12 capacity rows, numbered
    assert "capacity(0)" in text and "capacity(11)" in text
    if suffix == ".mps":  # the LP format has no place for the model name
        assert text.startswith("NAME") and "worker_placement" in text.splitlines()[0]


@pytest.mark.parametrize("suffix", SUFFIXES)
def test_cvxpy_wrapper_constraint_names_are_used(suffix, tmp_path):
    text = write_model(testing.knapsack_milp_cvxpy(), tmp_path / f"k{suffix}").read_text()
    for name in ("capacity", "link", "z_range_0", "z_range_1", "x(0)", "x(3)"):
        assert name in text


# ---------------------------------------------------------------------------------------------
# refusals and errors


@pytest.mark.parametrize("suffix", SUFFIXES)
@pytest.mark.parametrize(
    ("build", "cone"),
    [
        (testing.entropy_cvxpy, "exponential cone"),
        (testing.norm_soc_cvxpy, "second-order cone"),
        (lambda: CvxpyModel(testing.entropy_cvxpy(), name="wrapped"), "exponential cone"),
    ],
)
def test_conic_problem_is_refused_naming_the_cone(build, cone, suffix, tmp_path):
    path = tmp_path / f"conic{suffix}"
    with pytest.raises(UnsuitableSolverError, match=cone) as info:
        write_model(build(), path)
    assert "clarabel" in str(info.value)  # says what to do instead
    assert not path.exists()


def test_quadratic_objective_is_refused(tmp_path):
    x = cp.Variable(2, name="x")
    problem = cp.Problem(cp.Minimize(cp.sum_squares(x - 1)), [cp.sum(x) == 1])
    with pytest.raises(UnsuitableSolverError, match="quadratic objective"):
        write_model(problem, tmp_path / "qp.lp")


@pytest.mark.parametrize("backend", ["pyomo", "cvxpy"])
@pytest.mark.parametrize("suffix", [".txt", ".gz", ""])
def test_unknown_suffix_is_a_value_error(backend, suffix, tmp_path):
    model = testing.get_problem("transport_lp", backend).build()
    with pytest.raises(ValueError, match="suffix"):
        write_model(model, tmp_path / f"model{suffix}")
    (tmp_path / "exists.txt").write_text("x")
    with pytest.raises(ValueError, match="suffix"):
        solve_file(tmp_path / "exists.txt")


@pytest.mark.parametrize("solver", [_file_solver(s) for s in FILE_SOLVERS])
@pytest.mark.parametrize("suffix", SUFFIXES)
def test_missing_file_is_file_not_found(solver, suffix, tmp_path):
    with pytest.raises(FileNotFoundError, match="missing"):
        solve_file(tmp_path / f"missing{suffix}", solver)


@pytest.mark.parametrize(("option", "value"), [("time_limit", -1), ("mip_gap", 2), ("threads", 0)])
def test_solve_file_validates_options(option, value, tmp_path):
    path = write_model(testing.transport_lp_cvxpy(), tmp_path / "t.lp")
    with pytest.raises(ValueError, match=option):
        solve_file(path, "highs", **{option: value})


def test_solve_file_refuses_threads_on_scip(tmp_path):
    if "scip" not in available_solvers("file"):
        pytest.skip("scip cannot read files here")
    path = write_model(testing.transport_lp_cvxpy(), tmp_path / "t.lp")
    with pytest.raises(UnsuitableSolverError, match="single-threaded"):
        solve_file(path, "scip", threads=2)
