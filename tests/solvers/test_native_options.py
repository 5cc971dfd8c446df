"""Native options a Pyomo route would ignore are refused, naming the option and the closest valid name."""

import pytest

from clusteropt.instances import random_worker_placement
from clusteropt.models.worker_placement import build_worker_placement
from clusteropt.solvers import solve


@pytest.fixture
def model():
    return build_worker_placement(random_worker_placement(4, 3, seed=0))


@pytest.mark.parametrize("solver", ["highs", "scip"])
def test_an_unknown_top_level_key_is_refused(model, solver):
    with pytest.raises(ValueError, match=r"native option\(s\) 'bogus_opt' .* 'config' .* 'solver_options'"):
        solve(model, solver, options={"bogus_opt": 1})


def test_a_misspelled_highs_option_names_the_closest(model):
    with pytest.raises(ValueError, match=r"'presolv' is not a HiGHS option; did you mean 'presolve'\?"):
        solve(model, "highs", options={"solver_options": {"presolv": "off"}})
    assert solve(model, "highs", options={"solver_options": {"presolve": "off"}}).is_optimal


def test_a_misspelled_scip_parameter_names_the_closest(model):
    with pytest.raises(ValueError, match=r"'limits/tme' is not a SCIP parameter; did you mean 'limits/time'\?"):
        solve(model, "scip", options={"solver_options": {"limits/tme": 10}})
    assert solve(model, "scip", options={"solver_options": {"limits/time": 10}}).is_optimal


def test_an_unknown_config_key_is_refused(model):
    with pytest.raises(ValueError, match=r"config option 'time_limt' .*did you mean 'time_limit'\?"):
        solve(model, "highs", options={"config": {"time_limt": 5}})


def test_pyomo_and_cvxpy_solver_names_and_objects_are_taken(model):
    import pyomo.environ as pyo

    from clusteropt.solvers import UnknownSolverError, get_spec

    assert get_spec("scip_direct").name == "scip" and get_spec("appsi_highs").name == "highs"
    assert get_spec("GUROBI").name == "gurobi" and get_spec("gurobi_persistent").name == "gurobi"
    assert solve(model, pyo.SolverFactory("highs")).solver == "highs"
    with pytest.raises(TypeError, match="pass a solver's name"):
        solve(model, object())
    with pytest.raises(UnknownSolverError, match="did you mean 'highs'"):
        get_spec("hihgs")


@pytest.mark.parametrize(("option", "value", "message"), [
    ("time_limit", float("nan"), "time_limit = nan; expected a positive number of seconds"),
    ("time_limit", float("inf"), "time_limit = inf; expected a positive number of seconds"),
    ("time_limit", "10", "time_limit = '10'; expected a positive number of seconds"),  # was a TypeError
    ("time_limit", True, "time_limit = True; expected a positive number of seconds"),  # was 1 second
    ("time_limit", 10**400, "time_limit = <an integer of 401 digits>; expected a positive number"),
    ("mip_gap", float("nan"), "mip_gap = nan; expected a relative gap in [0, 1)"),
    ("mip_gap", "0.1", "mip_gap = '0.1'; expected a relative gap in [0, 1)"),  # was a TypeError
    ("threads", float("inf"), "threads = inf; expected a positive integer"),  # was an OverflowError
    ("threads", float("nan"), "threads = nan; expected a positive integer"),
    ("threads", "4", "threads = '4'; expected a positive integer"),  # was a TypeError
    ("threads", True, "threads = True; expected a positive integer"),
    ("threads", 2.5, "threads = 2.5; expected a positive integer"),
])
def test_the_common_options_refuse_what_is_not_a_number_in_range(model, option, value, message):
    with pytest.raises(ValueError) as info:
        solve(model, "highs", **{option: value})
    assert type(info.value) is ValueError and str(info.value).startswith(message)


def test_the_common_options_take_numpy_numbers_and_integral_floats(model):
    import numpy as np

    assert solve(model, "highs", time_limit=np.float64(30), mip_gap=np.float32(0.0), threads=1.0).is_optimal
