"""Gurobi, CPLEX, Xpress and COPT for real, with the size-limited licences their pip editions bundle.

Every test here is marked ``commercial`` and skips, naming the package, where the solver is not
installed; ``make test-solvers`` installs the ``solvers`` extra and runs them.  The models are one
or more registered models of each system, on instances small enough for the smallest licence
(CPLEX Community Edition: 1,000 variables and 1,000 constraints); each is solved through its
backend and, exported to LP and MPS, read by the solver itself, to HiGHS's objective.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from clusteropt import instances as inst
from clusteropt import testing
from clusteropt.models.registry import get_model
from clusteropt.solvers import (
    SOLVERS,
    NotOptimalError,
    SolveResult,
    Termination,
    UnsuitableSolverError,
    solve,
    solve_file,
    write_model,
)

pytestmark = [
    pytest.mark.commercial,
    pytest.mark.filterwarnings("ignore:Using the Community license"),  # Xpress's notice, at every first use
    pytest.mark.filterwarnings("ignore:Solution may be inaccurate"),
]

COMMERCIAL = ("gurobi", "cplex", "xpress", "copt")

OBJ_RTOL = 1e-6
"""Objectives agree with HiGHS's to this relative tolerance (of ``max(1, |objective|)``), or within
the two solves' proven gaps where those are wider."""

MIP_GAP = 1e-9
"""Every MILP here is solved to this relative gap (the solvers' defaults are 1e-4)."""


@dataclass(frozen=True)
class Case:
    """A registered model on a small instance."""

    id: str
    model: str
    instance: Callable[[], Any]
    options: tuple[tuple[str, Any], ...] = ()

    def build(self):
        return get_model(self.model).build(self.instance(), **dict(self.options))

    @property
    def backend(self) -> str:
        return get_model(self.model).backend


CASES = (
    Case("coflow-lp", "coflow-lp", lambda: inst.random_coflows(6, 4, seed=0)),
    Case("coflow-milp", "coflow-milp", lambda: inst.random_coflows(3, 2, max_units=3, seed=0)),
    Case("gadget-ddljs", "ddljs", lambda: inst.gadget_preset("tiny", jobs=3, seed=0, horizon=4)),
    Case("realtime-region", "realtime-region", lambda: inst.random_realtime(2, 3, seed=0)),
    Case("broker-milp", "broker-milp", lambda: inst.broker_preset("tiny", seed=1)),
    Case("broker-lp", "broker-lp", lambda: inst.broker_preset("tiny", seed=1)),
    Case("ring-dynamic-opt", "ring-dynamic-opt", lambda: inst.random_ring(6, 2, 20, seed=0)),
    Case("ring-static-opt", "ring-static-opt", lambda: inst.random_ring(6, 2, 30, seed=0)),
    Case("worker-placement", "worker-placement", lambda: inst.random_worker_placement(8, 4, seed=0)),
    Case("worker-placement-cvxpy", "worker-placement-cvxpy", lambda: inst.random_worker_placement(8, 4, seed=0)),
)
"""One model of every system or more (the only CVXPY model that is linear is worker placement's;
broker-regularized needs the exponential cone: :func:`test_the_entropy_model_names_the_solvers_that_take_it`)."""

CASE = {case.id: case for case in CASES}


def _installed(solver: str, backend: str):
    route = SOLVERS[solver].routes.get(backend)
    missing = route.missing() if route is not None else ["a route"]
    return pytest.mark.skipif(bool(missing), reason=f"{solver} for {backend} needs {', '.join(missing)}")


def _pairs(backend_of_case: Callable[[Case], str]):
    for case in CASES:
        backend = backend_of_case(case)
        for solver in COMMERCIAL:
            if backend in SOLVERS[solver].routes:
                yield pytest.param(case.id, solver, id=f"{case.id}-{solver}", marks=_installed(solver, backend))


@functools.cache
def reference(case_id: str) -> SolveResult:
    """HiGHS's solve of the case, to the gap :data:`MIP_GAP`."""
    return solve(CASE[case_id].build(), "highs", mip_gap=MIP_GAP)


def assert_same_objective(result: SolveResult, want: SolveResult) -> None:
    assert result.termination is Termination.OPTIMAL, result.summary()
    assert result.objective is not None and want.objective is not None
    band = OBJ_RTOL * max(1.0, abs(want.objective))
    for r in (result, want):  # a MILP proven to within its gap may differ by that much
        if r.bound is not None:
            band = max(band, abs(r.objective - r.bound))
    assert abs(result.objective - want.objective) <= band, (
        f"{result.summary()}; HiGHS: {want.summary()}")


@pytest.mark.parametrize(("case_id", "solver"), list(_pairs(lambda c: c.backend)))
def test_model_solves_to_the_highs_objective(case_id, solver):
    case = CASE[case_id]
    result = solve(case.build(), solver, mip_gap=MIP_GAP, threads=1)
    assert (result.solver, result.backend) == (solver, case.backend)
    assert_same_objective(result, reference(case_id))
    # keyed by the model's own index, as HiGHS's are
    want = reference(case_id)
    assert set(result.values) == set(want.values)
    for name in want.values:
        assert list(result.labelled(name)) == list(want.labelled(name))
    assert dict(result.index_names) == dict(want.index_names)


@pytest.mark.parametrize("suffix", [".lp", ".mps"])
@pytest.mark.parametrize(("case_id", "solver"), list(_pairs(lambda c: "file")))
def test_exported_model_read_by_the_solver_to_the_highs_objective(case_id, solver, suffix, tmp_path):
    case = CASE[case_id]
    model = case.build()
    path = write_model(model, tmp_path / f"{case_id}{suffix}")
    result = solve_file(path, solver, mip_gap=MIP_GAP, threads=1, model=model)
    assert (result.solver, result.backend) == (solver, "file")
    assert_same_objective(result, reference(case_id))
    want = reference(case_id)
    for name, values in want.values.items():  # the file's columns back as the model's variables
        assert result.values[name].shape == values.shape
        assert list(result.labelled(name)) == list(want.labelled(name))
    assert result.raw["columns"]  # the file's own names stay at hand


# ---------------------------------------------------------------------------------------------
# statuses, through every route


@pytest.mark.parametrize("suffix", [".lp", ".mps"])
@pytest.mark.parametrize(("problem", "solver"), [
    pytest.param(p, s, id=f"{p.id}-{s}", marks=_installed(s, "file"))
    for p in testing.PROBLEMS if p.backend == "pyomo" and p.id != "empty_lp-pyomo"
    for s in COMMERCIAL])
def test_known_answers_from_files(problem, solver, suffix, tmp_path):
    """The battery's optimal, infeasible, unbounded and time-limited problems as files: the same
    verdicts as through the backends (a time-limited incumbent FEASIBLE, never OPTIMAL)."""
    model = problem.build()
    path = write_model(model, tmp_path / f"p{suffix}")
    result = solve_file(path, solver, raise_on_nonoptimal=False, model=model, **problem.solve_options())
    testing.assert_result_matches(result, problem)


def test_a_time_limited_incumbent_is_feasible_with_its_bound_through_every_route(tmp_path):
    hard = testing.get_problem("hard_knapsack", "pyomo")
    ran = 0
    for solver in COMMERCIAL:
        for backend in ("pyomo", "cvxpy", "file"):
            if not SOLVERS[solver].available(backend):
                continue
            ran += 1
            if backend == "file":
                path = write_model(hard.build(), tmp_path / f"{solver}.mps")
                result = solve_file(path, solver, raise_on_nonoptimal=False, **hard.solve_options())
            else:
                model = testing.get_problem("hard_knapsack", backend).build()
                result = solve(model, solver, raise_on_nonoptimal=False, **hard.solve_options())
            assert result.termination is Termination.FEASIBLE and result.has_solution, result.summary()
            if SOLVERS[solver].routes[backend].reports_bound:
                assert result.bound is not None and result.gap is not None and result.gap > 0, result.summary()
            with pytest.raises(NotOptimalError, match="feasible point"):
                if backend == "file":
                    solve_file(path, solver, **hard.solve_options())
                else:
                    solve(testing.get_problem("hard_knapsack", backend).build(), solver, **hard.solve_options())
    if not ran:
        pytest.skip("no commercial solver is installed")


# ---------------------------------------------------------------------------------------------
# the licences' size limits


LIMITS = {"gurobi": (60, 40), "cplex": (40, 30), "copt": (60, 40), "xpress": (100, 60)}
"""Worker-placement sizes (jobs, servers) just past each pip licence: Gurobi's and COPT's 2,000
variables, CPLEX's 1,000, Xpress's 5,000 rows and columns together."""


@pytest.mark.parametrize("backend", ["pyomo", "cvxpy", "file"])
@pytest.mark.parametrize("solver", COMMERCIAL)
def test_a_model_past_the_licence_is_an_error_not_a_crash(solver, backend, tmp_path):
    if backend not in SOLVERS[solver].routes:
        pytest.skip(f"{solver} has no {backend} route")
    if not SOLVERS[solver].available(backend):
        pytest.skip(f"{solver} is not installed for {backend}")
    big = inst.random_worker_placement(*LIMITS[solver], seed=0)
    model = get_model("worker-placement-cvxpy" if backend == "cvxpy" else "worker-placement").build(big)
    if backend == "file":
        result = solve_file(write_model(model, tmp_path / "big.mps"), solver, raise_on_nonoptimal=False)
    else:
        result = solve(model, solver, raise_on_nonoptimal=False)
    assert result.termination is Termination.ERROR and not result.has_solution, result.summary()
    assert result.values == {} and result.objective is None
    if backend != "cvxpy":  # CVXPY hands over "Solver 'GUROBI' failed", not the library's text
        assert any(w in str(result.raw["status"]).lower() for w in ("licen", "limit", "too many", "too large"))


# ---------------------------------------------------------------------------------------------
# what a route cannot take


def test_the_entropy_model_names_the_solvers_that_take_it():
    model = get_model("broker-regularized").build(inst.broker_preset("tiny", seed=1), slot=1)
    for solver in COMMERCIAL:
        if not SOLVERS[solver].available("cvxpy"):
            continue
        with pytest.raises(UnsuitableSolverError, match=r"EXP_CONE.*clarabel"):
            solve(model, solver)


@pytest.mark.parametrize("solver", [pytest.param("copt", marks=_installed("copt", "cvxpy"))])
def test_copt_has_no_pyomo_route_and_says_which_do(solver):
    from clusteropt.solvers import SolverUnavailableError

    with pytest.raises(SolverUnavailableError, match=r"no pyomo route; solvers for pyomo models here: .*highs"):
        solve(CASE["worker-placement"].build(), solver)


@pytest.mark.parametrize("solver", COMMERCIAL)
def test_common_options_reach_the_solver_natively(solver, tmp_path):
    if not SOLVERS[solver].available("file"):
        pytest.skip(f"{solver} cannot read files here")
    path = write_model(CASE["worker-placement"].build(), tmp_path / "w.lp")
    # read back, whatever the solve's outcome (COPT took 3 to 5 s on this 32-variable MILP and ran into a 7.5 s
    # limit on a loaded machine)
    result = solve_file(path, solver, time_limit=7.5, mip_gap=0.25, threads=1, raise_on_nonoptimal=False)
    native = result.raw["native"]
    read = {
        "gurobi": lambda m: (m.Params.TimeLimit, m.Params.MIPGap, m.Params.Threads),
        "cplex": lambda m: (m.parameters.timelimit.get(), m.parameters.mip.tolerances.mipgap.get(),
                            m.parameters.threads.get()),
        "xpress": lambda m: (m.controls.timelimit, m.controls.miprelstop, m.controls.threads),
        "copt": lambda m: (m.getParam("TimeLimit"), m.getParam("RelGap"), m.getParam("Threads")),
    }[solver]
    assert tuple(read(native)) == pytest.approx((7.5, 0.25, 1))


@pytest.mark.parametrize("backend", ["pyomo", "cvxpy"])
@pytest.mark.parametrize("solver", ["gurobi", "cplex", "xpress"])
def test_a_quadratic_objective_solves_where_qp_is_declared(solver, backend):
    import cvxpy as cp
    import numpy as np
    import pyomo.environ as pyo

    if not SOLVERS[solver].available(backend):
        pytest.skip(f"{solver} is not installed for {backend}")
    if backend == "pyomo":
        m = pyo.ConcreteModel()
        m.x = pyo.Var([0, 1])
        m.c = pyo.Constraint(expr=m.x[0] + m.x[1] <= 2)
        m.o = pyo.Objective(expr=(m.x[0] - 1) ** 2 + (m.x[1] - 2) ** 2 + m.x[0])
        model: Any = m
    else:
        x = cp.Variable(2, name="x")
        model = cp.Problem(cp.Minimize(cp.sum_squares(x - np.array([1.0, 2.0])) + x[0]), [cp.sum(x) <= 2])
    result = solve(model, solver)
    # x = (0.25, 1.75): the projection of (0.5, 2) on x0 + x1 <= 2; Xpress's barrier stops at 5e-6
    assert result.objective == pytest.approx(0.875, rel=1e-5), result.summary()
