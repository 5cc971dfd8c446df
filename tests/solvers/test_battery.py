"""The known-answer battery (clusteropt.testing) against every installed solver, and solve()'s errors.

Parametrized over every (problem, backend, solver) whose solver has the problem's capability and
a route for the backend; combinations whose solver is not installed here are skipped (and show
up as skips in the report), never failed.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import math

import numpy as np
import pyomo.environ as pyo
import pytest

from clusteropt import testing
from clusteropt.instances import random_worker_placement
from clusteropt.models import build_worker_placement, build_worker_placement_cvxpy
from clusteropt.solvers import (
    SOLVERS,
    Capability,
    NotOptimalError,
    SolverError,
    SolverUnavailableError,
    Termination,
    UnknownSolverError,
    UnsuitableSolverError,
    available_solvers,
    solve,
)
from clusteropt.testing import PROBLEMS, assert_result_matches, get_problem


def _cases():
    for problem in PROBLEMS:
        for solver in testing.candidate_solvers(problem):
            installed = SOLVERS[solver].available(problem.backend)
            yield pytest.param(
                problem,
                solver,
                id=f"{problem.id}-{solver}",
                marks=pytest.mark.skipif(
                    not installed, reason=f"{solver} is not installed for {problem.backend}"
                ),
            )


def _needs(solver: str, backend: str):
    return pytest.mark.skipif(
        solver not in available_solvers(backend), reason=f"{solver} is not installed for {backend}"
    )


BACKENDS = ("pyomo", "cvxpy")


# ---------------------------------------------------------------------------------------------
# the battery


# CVXPY warns "Solution may be inaccurate" when SCIP stops at its time limit; that is expected here
@pytest.mark.filterwarnings("ignore:Solution may be inaccurate")
@pytest.mark.parametrize(("problem", "solver"), list(_cases()))
def test_known_answer(problem, solver):
    model = problem.build()
    result = solve(model, solver, raise_on_nonoptimal=False, **problem.solve_options())
    assert result.solver == solver
    assert result.backend == problem.backend
    assert result.build_seconds >= 0 and result.solve_seconds >= 0
    assert_result_matches(result, problem)
    json.dumps(result.to_dict())  # plain data all the way down


def test_battery_covers_every_class_and_backend():
    pairs = {(p.problem_class, p.backend) for p in PROBLEMS}
    for cls, backend in itertools.product((Capability.LP, Capability.MILP), BACKENDS):
        assert (cls, backend) in pairs
    assert (Capability.EXP_CONE, "cvxpy") in pairs
    # every installed solver has at least one problem to answer
    for backend in BACKENDS:
        tested = {s for p in testing.known_problems(backend) for s in testing.installed_solvers(p)}
        assert tested == set(available_solvers(backend))


def test_candidate_solvers_follow_the_registry():
    milp = get_problem("knapsack_milp", "cvxpy")
    assert "clarabel" not in testing.candidate_solvers(milp)  # no MILP capability
    assert "highs" in testing.candidate_solvers(milp)
    lp = get_problem("transport_lp", "pyomo")
    assert "clarabel" not in testing.candidate_solvers(lp)  # no Pyomo route
    assert set(testing.installed_solvers(lp)) <= set(available_solvers("pyomo"))
    with pytest.raises(KeyError, match="known: "):
        get_problem("transport_lp", "julia")


def test_tolerances_are_ordered_by_algorithm():
    assert testing.OBJ_RTOL_EXACT < testing.OBJ_RTOL_CONIC < testing.OBJ_RTOL_FIRST_ORDER
    assert testing.tolerance_for("highs") is testing.EXACT
    assert testing.tolerance_for("clarabel") is testing.CONIC
    assert testing.tolerance_for("scs") is testing.FIRST_ORDER
    assert testing.tolerance_for("some-new-solver") is testing.FIRST_ORDER
    # a registered solver without a tolerance would silently get the loosest one
    assert set(SOLVERS) <= set(testing.SOLVER_TOLERANCES)


# ---------------------------------------------------------------------------------------------
# the battery's answers, checked without any solver


def test_knapsack_milp_answer_by_enumeration():
    profit, weight = np.array([8.0, 11.0, 6.0, 4.0]), np.array([5.0, 7.0, 4.0, 3.0])
    scores = []
    for x in itertools.product((0, 1), repeat=4):
        for z in range(4):
            if weight @ x + 3 * z > 14 or z > 2.5:
                continue
            w = min(1.0, 2.5 - z)  # the best continuous w for this z
            scores.append((profit @ x + 3 * z + 1.5 * w, x, z, w))
    scores.sort(reverse=True)
    best, runner_up = scores[0], scores[1]
    want = get_problem("knapsack_milp", "pyomo")
    assert best[0] == want.objective and runner_up[0] < best[0] - 0.5
    np.testing.assert_array_equal(best[1], want.values["x"])
    assert (best[2], best[3]) == (want.values["z"], want.values["w"])


def test_transport_lp_answer_by_parametrization():
    # feasible set x = [[a, 3-a], [2-a, a]], a in [0, 2], cost 18 - 4a
    cost = np.array([[1.0, 4.0], [3.0, 2.0]])
    costs = {a: float((cost * np.array([[a, 3 - a], [2 - a, a]])).sum()) for a in np.linspace(0, 2, 21)}
    best = min(costs, key=costs.get)
    want = get_problem("transport_lp", "cvxpy")
    assert best == 2 and costs[best] == want.objective
    assert sorted(costs.values())[1] > want.objective  # unique


def test_hard_knapsack_relaxation_is_fractional():
    w, p, c = testing.hard_knapsack_data(**testing.HARD_KNAPSACK_SIZE)
    assert w.shape == (10, 500)
    bound = testing.hard_knapsack_lp_bound(**testing.HARD_KNAPSACK_SIZE)
    greedy = np.zeros_like(p)
    for j in np.argsort(-p / w.sum(axis=0)):  # a feasible point: greedy by profit density
        if np.all(w @ greedy + w[:, j] <= c):
            greedy[j] = 1
    assert p @ greedy < bound
    # same seed, same instance; another seed, another instance
    np.testing.assert_array_equal(testing.hard_knapsack_data(seed=1)[1], p)
    assert not np.array_equal(testing.hard_knapsack_data(seed=2)[1], p)


# ---------------------------------------------------------------------------------------------
# raise_on_nonoptimal and defaults


@pytest.mark.parametrize("backend", BACKENDS)
def test_infeasible_raises_not_optimal_by_default(backend):
    problem = get_problem("infeasible_lp", backend)
    with pytest.raises(NotOptimalError, match="infeasible") as info:
        solve(problem.build(), "highs")
    result = info.value.result
    assert result.termination is Termination.INFEASIBLE
    assert not result.has_solution
    assert isinstance(info.value, SolverError)


@_needs("highs", "cvxpy")
@pytest.mark.filterwarnings("ignore:Solution may be inaccurate")
def test_time_limit_raises_not_optimal_with_the_incumbent():
    problem = get_problem("hard_knapsack", "cvxpy")
    with pytest.raises(NotOptimalError, match="time_limit") as info:
        solve(problem.build(), "highs", time_limit=testing.TIME_LIMIT)
    result = info.value.result
    assert result.termination is Termination.FEASIBLE and result.has_solution
    assert result.gap > 0


@pytest.mark.parametrize(
    ("problem_name", "backend", "expected"),
    [
        ("transport_lp", "pyomo", "highs"),
        ("transport_lp", "cvxpy", "highs"),
        ("knapsack_milp", "cvxpy", "highs"),
        ("entropy", "cvxpy", "clarabel"),
    ],
)
def test_default_solver(problem_name, backend, expected):
    problem = get_problem(problem_name, backend)
    result = solve(problem.build())
    assert result.solver == expected
    assert_result_matches(result, problem)


# ---------------------------------------------------------------------------------------------
# errors that list the alternatives


@pytest.mark.parametrize("backend", BACKENDS)
def test_unknown_solver_lists_the_available_ones(backend):
    model = get_problem("transport_lp", backend).build()
    with pytest.raises(UnknownSolverError, match="available:") as info:
        solve(model, "hihgs")
    message = str(info.value)
    assert "'hihgs'" in message
    for name in available_solvers():
        assert name in message
    assert isinstance(info.value, ValueError)


def test_highs_on_exponential_cone_is_unsuitable():
    with pytest.raises(UnsuitableSolverError, match="EXP_CONE") as info:
        solve(testing.entropy_cvxpy(), "highs")
    message = str(info.value)
    for name in available_solvers("cvxpy"):
        if Capability.EXP_CONE in SOLVERS[name].capabilities:
            assert name in message  # clarabel, scs
    assert "highs" not in message.split(":", 1)[1]


@pytest.mark.parametrize("solver", ["clarabel", "scs"])
def test_conic_solver_on_milp_is_unsuitable(solver):
    with pytest.raises(UnsuitableSolverError, match="MILP") as info:
        solve(testing.knapsack_milp_cvxpy(), solver)
    assert "highs" in str(info.value)


def test_clarabel_on_a_pyomo_model_names_the_pyomo_solvers():
    with pytest.raises((UnsuitableSolverError, SolverUnavailableError)) as info:
        solve(testing.transport_lp_pyomo(), "clarabel")
    message = str(info.value)
    assert "clarabel" in message and "pyomo" in message
    for name in available_solvers("pyomo"):
        assert name in message


def test_missing_solver_is_unavailable_not_a_crash():
    missing = [n for n in SOLVERS if not SOLVERS[n].available("pyomo") and "pyomo" in SOLVERS[n].routes]
    if not missing:
        pytest.skip("every registered Pyomo solver is installed here")
    with pytest.raises(SolverUnavailableError, match="available here: ") as info:
        solve(testing.transport_lp_pyomo(), missing[0])
    assert "highs" in str(info.value)


def test_not_a_model_is_a_type_error():
    with pytest.raises(TypeError, match="ConcreteModel"):
        solve(42)


# ---------------------------------------------------------------------------------------------
# option validation


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("time_limit", -1),
        ("time_limit", 0),
        ("time_limit", math.inf),
        ("time_limit", math.nan),
        ("mip_gap", 2),
        ("mip_gap", 1),
        ("mip_gap", -0.1),
        ("threads", 0),
        ("threads", -2),
        ("threads", 1.5),
    ],
)
def test_bad_option_values_name_the_option(backend, option, value):
    model = get_problem("knapsack_milp", backend).build()
    with pytest.raises(ValueError, match=option):
        solve(model, "highs", **{option: value})


@pytest.mark.parametrize("solver", ["scs", "scip"])
def test_threads_on_single_threaded_solver_raises(solver):
    if solver not in available_solvers("cvxpy"):
        pytest.skip(f"{solver} is not installed")
    with pytest.raises(UnsuitableSolverError, match="threads") as info:
        solve(testing.transport_lp_cvxpy(), solver, threads=2)
    assert "single-threaded" in str(info.value)
    # one thread is always fine
    result = solve(testing.transport_lp_cvxpy(), solver, threads=1)
    assert_result_matches(result, get_problem("transport_lp", "cvxpy"))


def test_option_a_solver_does_not_take_names_the_option():
    with pytest.raises(UnsuitableSolverError, match="mip_gap"):
        solve(testing.entropy_cvxpy(), "scs", mip_gap=0.01)


@pytest.mark.parametrize("backend", BACKENDS)
def test_threads_on_highs_work(backend):
    # a user solves as usual, then asks for 2 threads, then for 1: every solve must succeed
    # (HiGHS keeps one global thread pool per process; its size must not leak between solves)
    problem = get_problem("knapsack_milp", backend)
    for threads in (None, 2, 1):
        result = solve(problem.build(), "highs", threads=threads, raise_on_nonoptimal=False)
        assert result.termination is Termination.OPTIMAL, f"threads={threads}: {result.summary()}"
        assert_result_matches(result, problem)


@pytest.mark.parametrize("backend", BACKENDS)
def test_mip_gap_and_time_limit_on_highs_work(backend):
    problem = get_problem("knapsack_milp", backend)
    result = solve(problem.build(), "highs", mip_gap=0.0, time_limit=30)
    assert_result_matches(result, problem)
    assert result.gap == pytest.approx(0.0, abs=1e-9)


# ---------------------------------------------------------------------------------------------
# the SolveResult object


@pytest.fixture(scope="module")
def lp_result():
    return solve(testing.transport_lp_pyomo(), "highs")


def test_solve_result_is_frozen(lp_result):
    with pytest.raises(dataclasses.FrozenInstanceError):
        lp_result.objective = 0.0
    with pytest.raises(dataclasses.FrozenInstanceError):
        lp_result.termination = Termination.ERROR
    with pytest.raises(TypeError):
        lp_result.values["x"] = np.zeros((2, 2))
    with pytest.raises(TypeError):
        lp_result.raw["status"] = "changed"


def test_solve_result_summary_and_dict(lp_result):
    assert lp_result.is_optimal
    assert lp_result.summary().startswith("highs/pyomo: optimal, objective 10")
    d = lp_result.to_dict()
    assert d["termination"] == "optimal" and d["values"]["x"] == [[2.0, 1.0], [0.0, 2.0]]


@pytest.mark.parametrize("backend", BACKENDS)
def test_values_are_numpy_arrays(backend):
    problem = get_problem("knapsack_milp", backend)
    result = solve(problem.build(), "highs")
    assert set(result.values) == {"x", "z", "w"}
    for value in result.values.values():
        assert isinstance(value, np.ndarray)
    assert result.values["x"].shape == (4,)
    assert result.values["z"].shape == () and result.values["w"].shape == ()


def test_pyomo_values_over_a_product_set_are_2d_in_set_order():
    inst = random_worker_placement(8, 4, seed=3)
    model = build_worker_placement(inst)
    result = solve(model, "highs")
    y = result.values["y"]
    assert isinstance(y, np.ndarray) and y.shape == (8, 4)
    for i, s in itertools.product(range(8), range(4)):
        assert y[i, s] == pytest.approx(pyo.value(model.y[i, s]))
    # the same model in CVXPY: the same optimum, the same shape
    cvx = solve(build_worker_placement_cvxpy(inst), "highs")
    assert cvx.values["y"].shape == (8, 4)
    assert cvx.objective == pytest.approx(result.objective, rel=1e-9)


def test_pyomo_values_over_a_sparse_index_are_1d():
    m = pyo.ConcreteModel()
    m.pairs = pyo.Set(initialize=[(0, 1), (1, 0), (2, 2)], dimen=2)
    m.x = pyo.Var(m.pairs, bounds=(0, 1))
    m.obj = pyo.Objective(expr=sum(m.x[p] for p in m.pairs), sense=pyo.maximize)
    result = solve(m, "highs")
    np.testing.assert_array_equal(result.values["x"], np.ones(3))


def test_cvxpy_values_are_also_loaded_into_the_variables():
    model = testing.knapsack_milp_cvxpy()
    result = solve(model, "highs")
    np.testing.assert_allclose(model.variables["x"].value, result.values["x"])
