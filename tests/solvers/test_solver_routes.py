"""The registry's routes to every solver, checked without the commercial ones installed: what an absent
solver says, how the common options are spelled natively, how native statuses map, and the labels of
CVXPY and file solves (HiGHS)."""

from __future__ import annotations

import importlib.util

import cvxpy as cp
import numpy as np
import pyomo.environ as pyo
import pytest

from clusteropt.instances import random_worker_placement
from clusteropt.models import CvxpyModel, build_worker_placement
from clusteropt.solvers import SOLVERS, SolverUnavailableError, Termination, solve, solve_file, write_model
from clusteropt.solvers import files as files_module
from clusteropt.solvers.registry import DEFAULTS, Capability

COMMERCIAL = ("gurobi", "cplex", "xpress", "copt")
PACKAGE = {"gurobi": "gurobipy", "cplex": "cplex", "xpress": "xpress", "copt": "coptpy"}


def _hide(monkeypatch, module: str) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == module else real(name, *a))


@pytest.mark.parametrize("solver", COMMERCIAL)
def test_an_absent_solver_names_its_package_and_what_is_installed(solver, monkeypatch):
    _hide(monkeypatch, PACKAGE[solver])
    model = build_worker_placement(random_worker_placement(3, 2, seed=0))
    backend = "pyomo" if "pyomo" in SOLVERS[solver].routes else "cvxpy"
    package = PACKAGE[solver]
    want = rf"needs {package}, which is not installed \(pip install {package} .*available here: .*highs"
    with pytest.raises(SolverUnavailableError, match=want):
        if backend == "pyomo":
            solve(model, solver)
        else:
            solve(cp.Problem(cp.Minimize(cp.Variable(name="x")), []), solver)


@pytest.mark.parametrize("solver", COMMERCIAL)
def test_an_absent_solver_cannot_read_files_either(solver, monkeypatch, tmp_path):
    _hide(monkeypatch, PACKAGE[solver])
    path = tmp_path / "t.lp"
    path.write_text("max\n obj: x\nst\n c: x <= 1\nend\n")
    with pytest.raises(SolverUnavailableError, match=rf"'{solver}' for file needs {PACKAGE[solver]}"):
        solve_file(path, solver)


def test_copt_declares_no_pyomo_route_and_no_exponential_cone():
    # Pyomo 6.10 has no COPT interface; COPT 8.0.7's exponential-cone solve through CVXPY ended the
    # process (an illegal instruction) on the test machine, so the registry does not offer it
    assert set(SOLVERS["copt"].routes) == {"cvxpy", "file"}
    assert Capability.EXP_CONE not in SOLVERS["copt"].capabilities
    assert "copt" not in DEFAULTS["EXP_CONE"]


@pytest.mark.parametrize(("solver", "backend", "want"), [
    ("gurobi", "cvxpy", {"TimeLimit": 5.0, "MIPGap": 0.01, "Threads": 2}),
    ("gurobi", "file", {"TimeLimit": 5.0, "MIPGap": 0.01, "Threads": 2}),
    ("cplex", "pyomo", {"solver_options": {"timelimit": 5.0, "mip_tolerances_mipgap": 0.01, "threads": 2}}),
    ("cplex", "cvxpy", {"cplex_params": {"timelimit": 5.0, "mip.tolerances.mipgap": 0.01, "threads": 2}}),
    ("cplex", "file", {"timelimit": 5.0, "mip.tolerances.mipgap": 0.01, "threads": 2}),
    ("xpress", "pyomo", {"solver_options": {"timelimit": 5.0, "miprelstop": 0.01, "threads": 2}}),
    ("xpress", "cvxpy", {"timelimit": 5.0, "miprelstop": 0.01, "threads": 2}),
    ("xpress", "file", {"timelimit": 5.0, "miprelstop": 0.01, "threads": 2}),
    ("copt", "cvxpy", {"TimeLimit": 5.0, "RelGap": 0.01, "Threads": 2}),
    ("copt", "file", {"TimeLimit": 5.0, "RelGap": 0.01, "Threads": 2}),
])
def test_common_options_are_spelled_natively(solver, backend, want):
    from clusteropt.solvers.core import _merge

    got: dict = {}
    for key, value in {"time_limit": 5, "mip_gap": 0.01, "threads": 2}.items():
        _merge(got, SOLVERS[solver].routes[backend].options[key](value))
    assert got == want


@pytest.mark.parametrize(("table", "limits", "infeasible", "unbounded", "either"), [
    (files_module.GUROBI_STATUS, ("TIME_LIMIT", "NODE_LIMIT", "SOLUTION_LIMIT", "ITERATION_LIMIT", "WORK_LIMIT"),
     "INFEASIBLE", "UNBOUNDED", "INF_OR_UNBD"),
    (files_module.CPLEX_STATUS, ("abort_time_limit", "MIP_time_limit_feasible", "node_limit_feasible",
                                 "solution_limit", "abort_iteration_limit"),
     "MIP_infeasible", "MIP_unbounded", "MIP_infeasible_or_unbounded"),
    (files_module.XPRESS_STOP, ("TIMELIMIT", "NODELIMIT", "SOLLIMIT", "ITERLIMIT", "WORKLIMIT"), None, None, None),
    (files_module.XPRESS_SOLSTATUS, (), "INFEASIBLE", "UNBOUNDED", None),
    (files_module.COPT_STATUS, ("TIMEOUT", "NODELIMIT", "ITERLIMIT"), "INFEASIBLE", None, "INF_OR_UNB"),
])
def test_a_limit_is_never_optimal_and_infeasible_is_not_unbounded(table, limits, infeasible, unbounded, either):
    # a limit's incumbent becomes FEASIBLE (settle), never OPTIMAL
    assert all(table[s] in (Termination.TIME_LIMIT, Termination.ITERATION_LIMIT) for s in limits)
    if infeasible:
        assert table[infeasible] is Termination.INFEASIBLE
    if unbounded:
        assert table[unbounded] is Termination.UNBOUNDED
    if either:
        assert table[either] is Termination.INFEASIBLE_OR_UNBOUNDED
    # COPT's "unbounded" rests on a ray alone (it says so of an infeasible LP)
    assert files_module.COPT_STATUS["UNBOUNDED"] is Termination.INFEASIBLE_OR_UNBOUNDED


# ---------------------------------------------------------------------------------------------
# labels of CVXPY models and of file solves


def _indexed_cvxpy() -> CvxpyModel:
    jobs, servers = ["j-a", "j-b", "j-c"], [10, 20]
    y = cp.Variable((3, 2), nonneg=True, name="y")
    cap = cp.sum(y, axis=0) <= np.array([1.0, 2.0])
    problem = cp.Problem(cp.Maximize(cp.sum(y @ np.array([1.0, 3.0])) - cp.sum(y[0, :]) + 0.5),
                         [cap, cp.sum(y, axis=1) <= 1.5])
    return CvxpyModel(problem, {"y": y}, {"cap": cap}, index={"y": {"J": jobs, "S": servers}})


def test_cvxpy_values_are_keyed_by_the_models_index():
    model = _indexed_cvxpy()
    result = solve(model, "highs")
    y = result.labelled("y")
    assert list(y)[:3] == [("j-a", 10), ("j-a", 20), ("j-b", 10)]
    assert dict(result.index_names) == {"y": ("J", "S")}
    for (i, job) in enumerate(["j-a", "j-b", "j-c"]):  # the bare array, one call away, in the same order
        for (s, server) in enumerate([10, 20]):
            assert y[(job, server)] == result.values["y"][i, s]
    assert result.series("y").loc[("j-b", 20)] == pytest.approx(y[("j-b", 20)])
    assert result.to_dict()["index_names"] == {"y": ["J", "S"]}


def test_an_index_of_the_wrong_length_is_refused():
    model = _indexed_cvxpy()
    bad = CvxpyModel(model.problem, dict(model.variables), index={"y": {"J": ["a", "b"], "S": [1, 2]}})
    with pytest.raises(ValueError, match=r"shape \(3, 2\), its index J, S has lengths \(2, 2\)"):
        solve(bad, "highs")


@pytest.mark.parametrize("suffix", [".lp", ".mps"])
@pytest.mark.parametrize("backend", ["pyomo", "cvxpy"])
def test_a_file_solve_given_its_model_has_the_models_values_and_keys(backend, suffix, tmp_path):
    inst = random_worker_placement(5, 3, seed=2)
    model = build_worker_placement(inst) if backend == "pyomo" else _indexed_cvxpy()
    direct = solve(model, "highs")
    path = write_model(model, tmp_path / f"m{suffix}")
    bare = solve_file(path)
    assert "y" not in bare.values and any(k.startswith("y(") for k in bare.values)  # the file's own names
    result = solve_file(path, model=model)
    assert result.objective == pytest.approx(direct.objective, rel=1e-9)
    assert set(result.values) == set(direct.values)
    for name, values in direct.values.items():
        assert result.values[name].shape == values.shape
        assert result.labelled(name) == pytest.approx(direct.labelled(name), abs=1e-9)
    assert dict(result.index_names) == dict(direct.index_names)
    assert result.raw["columns"].keys() == bare.values.keys()


def test_a_file_solve_given_another_model_is_refused(tmp_path):
    path = write_model(build_worker_placement(random_worker_placement(5, 3, seed=2)), tmp_path / "m.lp")
    other = pyo.ConcreteModel()
    other.z = pyo.Var(bounds=(0, 1))
    other.o = pyo.Objective(expr=other.z)
    with pytest.raises(ValueError, match=r"m.lp has columns the model does not write \(y\(0_0\), .* more\)"):
        solve_file(path, model=other)


def test_cvxpy_exports_carry_the_constant_as_a_fixed_column_and_no_empty_sections(tmp_path):
    model = _indexed_cvxpy()
    path = write_model(model, tmp_path / "m.lp")
    lines = path.read_text().splitlines()
    assert "ONE_VAR_CONSTANT" in path.read_text() and "semi" not in lines and "bin" not in lines
    result = solve_file(path)
    assert "ONE_VAR_CONSTANT" not in result.values
    assert result.objective == pytest.approx(solve(model, "highs").objective, rel=1e-9)
