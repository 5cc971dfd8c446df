"""Stopped solves never pass off an infeasible point as a solution (issue 18, items 1, 6 and 8).

CVXPY hands back whatever point a solver held when a limit stopped it (``user_limit``,
``optimal_inaccurate``).  The backend accepts it as ``FEASIBLE`` only after checking it; these
tests re-check every accepted point here with numpy, independently of
:func:`clusteropt.solvers.cvxpy_backend.max_violation`.
"""

from __future__ import annotations

import warnings

import cvxpy as cp
import numpy as np
import pyomo.environ as pyo
import pytest

from clusteropt.solvers import Termination, available_solvers, solve, solve_file, write_model
from clusteropt.solvers.cvxpy_backend import max_violation
from clusteropt.solvers.pyomo_backend import constant_model_status

CVXPY_SOLVERS = available_solvers("cvxpy")
LP_SOLVERS = [s for s in ("highs", "clarabel", "scs", "scip") if s in CVXPY_SOLVERS]
MILP_SOLVERS = [s for s in ("highs", "scip") if s in CVXPY_SOLVERS]
FILE_SOLVERS = [s for s in ("highs", "scip") if s in available_solvers("file")]

pytestmark = pytest.mark.filterwarnings("ignore:Solution may be inaccurate")


def transport(n: int, seed: int = 0):
    """A transport LP with supplies >= demands (feasible) and its data, for independent checks."""
    rng = np.random.default_rng(seed)
    supply = rng.uniform(1, 10, n)
    demand = rng.uniform(1, 10, n)
    demand *= 0.99 * supply.sum() / demand.sum()
    cost = rng.uniform(1, 100, (n, n))
    x = cp.Variable((n, n), nonneg=True, name="x")
    prob = cp.Problem(cp.Minimize(cp.sum(cp.multiply(cost, x))),
                      [cp.sum(x, axis=1) <= supply, cp.sum(x, axis=0) >= demand])
    return prob, x, supply, demand


def transport_violation(x: np.ndarray, supply, demand) -> float:
    return max(float(np.max(x.sum(1) - supply)), float(np.max(demand - x.sum(0))), float(np.max(-x)), 0.0)


def market_split(m: int = 5, n: int = 40, seed: int = 1):
    """A market-split MILP (Cornuejols-Dawande): ``A x = b`` over binaries, hard for branch and bound."""
    rng = np.random.default_rng(seed)
    A = rng.integers(0, 100, (m, n))
    b = A.sum(1) // 2
    x = cp.Variable(n, boolean=True, name="x")
    return cp.Problem(cp.Minimize(0), [A @ x == b]), x, A, b


# ---------------------------------------------------------------------------------------------
# iteration limits: deterministic stops at an infeasible point


@pytest.mark.parametrize(("solver", "options"), [
    ("highs", {"simplex_iteration_limit": 3}),
    ("clarabel", {"max_iter": 2}),
    ("scs", {"max_iters": 3}),
])
def test_a_point_from_a_stopped_solver_is_no_solution_unless_feasible(solver, options):
    if solver not in CVXPY_SOLVERS:
        pytest.skip(f"{solver} is not installed")
    prob, x, supply, demand = transport(30)
    result = solve(prob, solver, raise_on_nonoptimal=False, options=options)
    # without the check these were FEASIBLE with violations of 0.1 .. 1 (scaled)
    assert transport_violation(x.value, supply, demand) > 1e-3
    assert not result.has_solution and result.objective is None and result.values == {}
    assert result.termination is Termination.UNKNOWN  # no time limit was set
    assert "point rejected" in result.raw["status"]
    assert result.raw["max_violation"] > 1e-4


@pytest.mark.parametrize("solver", LP_SOLVERS)
def test_time_limited_lp_is_feasible_only_with_a_feasible_point(solver):
    prob, _, supply, demand = transport(120)
    result = solve(prob, solver, time_limit=0.01, raise_on_nonoptimal=False)
    assert result.termination in (Termination.OPTIMAL, Termination.FEASIBLE, Termination.TIME_LIMIT)
    if result.has_solution:
        tol = 1e-3 if solver == "scs" else 1e-5
        assert transport_violation(result.values["x"], supply, demand) <= tol * (1 + supply.max())
    else:
        assert result.termination is Termination.TIME_LIMIT and result.objective is None


@pytest.mark.parametrize("solver", MILP_SOLVERS)
def test_time_limited_milp_is_feasible_only_with_a_feasible_point(solver):
    prob, _, A, b = market_split()
    result = solve(prob, solver, time_limit=0.3, raise_on_nonoptimal=False)
    assert result.termination in (Termination.OPTIMAL, Termination.FEASIBLE, Termination.TIME_LIMIT)
    if result.has_solution:
        v = result.values["x"]
        assert np.allclose(v, np.round(v), atol=1e-5) and np.abs(A @ np.round(v) - b).max() == 0
    else:
        # SCIP's time limit without an incumbent reached us as a CVXPY solver error: TIME_LIMIT
        assert result.termination is Termination.TIME_LIMIT and result.objective is None


def test_solver_error_without_a_time_limit_stays_an_error():
    # an SCS failure that is not a time limit must not be relabelled: an NaN in the data
    if "scs" not in CVXPY_SOLVERS:
        pytest.skip("scs is not installed")
    x = cp.Variable(2)
    prob = cp.Problem(cp.Minimize(cp.sum(x)), [x >= np.array([np.inf, 0.0])])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            result = solve(prob, "scs", raise_on_nonoptimal=False)
        except ValueError:
            pytest.skip("CVXPY refuses the data before the solver")
    assert result.termination is not Termination.TIME_LIMIT


@pytest.mark.parametrize("solver", [s for s in ("scs", "clarabel") if s in CVXPY_SOLVERS])
def test_a_ray_alone_is_infeasible_or_unbounded(solver):
    x = cp.Variable(nonneg=True)
    y = cp.Variable(nonneg=True)
    result = solve(cp.Problem(cp.Maximize(x + y), [x - y <= 1]), solver, raise_on_nonoptimal=False)
    assert result.termination is Termination.INFEASIBLE_OR_UNBOUNDED
    assert not result.has_solution


# ---------------------------------------------------------------------------------------------
# SCIP's own limits through CVXPY (issue 42): the limit, and the incumbent when SCIP has one


def multi_knapsack(n: int = 60, m: int = 10, seed: int = 0):
    """A multi-dimensional knapsack SCIP does not close at its root node (it has an incumbent there)."""
    rng = np.random.default_rng(seed)
    W, v = rng.integers(1, 100, (m, n)), rng.integers(1, 100, n)
    y = cp.Variable(n, boolean=True, name="y")
    return cp.Problem(cp.Maximize(v @ y), [W @ y <= W.sum(1) // 2]), W, v


needs_scip = pytest.mark.skipif("scip" not in CVXPY_SOLVERS, reason="scip is not installed")


@needs_scip
@pytest.mark.parametrize(("which", "limit", "termination", "scip_status"), [
    ("market", {"limits/nodes": 1}, Termination.ITERATION_LIMIT, "nodelimit"),  # was KeyError: 'value'
    ("market", {"limits/totalnodes": 1}, Termination.ITERATION_LIMIT, "totalnodelimit"),  # the same
    ("market", {"limits/stallnodes": 1}, Termination.ITERATION_LIMIT, "stallnodelimit"),  # was ERROR
    ("knapsack", {"limits/nodes": 1}, Termination.FEASIBLE, "nodelimit"),
    ("knapsack", {"limits/solutions": 1}, Termination.FEASIBLE, "sollimit"),  # was ERROR, incumbent dropped
])
def test_scip_limits_through_cvxpy_give_the_limit_and_the_incumbent(which, limit, termination, scip_status):
    prob, A, v = (market_split()[0], None, None) if which == "market" else multi_knapsack()
    result = solve(prob, "scip", options={**limit, "limits/time": 60}, raise_on_nonoptimal=False)
    assert result.termination is termination and scip_status in result.raw["status"], result.raw["status"]
    if termination is Termination.FEASIBLE:
        y = result.values["y"]
        assert np.array_equal(y, np.round(y)) and set(np.unique(y)) <= {0.0, 1.0}
        assert (A @ y <= A.sum(1) // 2).all() and result.objective == pytest.approx(float(v @ y))
        assert result.bound >= result.objective - 1e-6 and result.max_violation == 0.0
    else:
        assert not result.has_solution and result.objective is None and result.values == {}


@needs_scip
def test_a_scip_status_cvxpy_cannot_read_is_an_error_that_says_so():
    prob, _, _ = multi_knapsack(40, 5, seed=3)
    first = solve(prob, "scip")
    assert first.is_optimal and "scip: optimal" in first.raw["status"]
    # SCIP stops at its primal limit, a status CVXPY 1.9's SCIP table lacks (was KeyError: 'primallimit')
    result = solve(prob, "scip", options={"limits/primal": 1.0}, raise_on_nonoptimal=False)
    assert result.termination is Termination.ERROR and not result.has_solution and result.values == {}
    assert result.raw["status"].startswith("primallimit (scip): a status CVXPY's SCIP interface cannot read")
    assert result.raw["native"] is None  # not the first solve's statistics, which the problem still holds


# ---------------------------------------------------------------------------------------------
# the measured violation and its tolerance are printed with every CVXPY result (issue 42)


@pytest.mark.parametrize(("solver", "tolerance"), [(s, "1e-04" if s == "scs" else "1e-06") for s in LP_SOLVERS])
def test_a_cvxpy_result_carries_its_measured_violation_and_tolerance(solver, tolerance):
    prob, *_ = transport(20)
    result = solve(prob, solver, raise_on_nonoptimal=False)
    assert result.has_solution
    assert result.max_violation == max_violation(prob)[0] and result.max_violation <= result.feasibility_tol
    assert result.summary().endswith(f", max violation {result.max_violation:.3g} (tolerance {tolerance})")
    data = result.to_dict()
    assert data["max_violation"] == result.max_violation and data["feasibility_tol"] == float(tolerance)


def test_results_of_other_backends_have_no_violation_fields():
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0, 4))
    m.obj = pyo.Objective(expr=m.x, sense=pyo.maximize)
    result = solve(m, "highs")
    assert result.max_violation is None and "violation" not in result.summary()
    assert "max_violation" not in result.to_dict()


# ---------------------------------------------------------------------------------------------
# the independent feasibility check itself


def test_max_violation_checks_domains_integrality_and_booleans():
    b = cp.Variable(2, boolean=True, name="b")
    z = cp.Variable(integer=True, bounds=[0, 5], name="z")
    prob = cp.Problem(cp.Minimize(cp.sum(b) + z), [cp.sum(b) + z >= 1])
    b.value, z.value = np.array([1.0, 0.0]), np.array(0.0)
    assert max_violation(prob) == (0.0, "")
    # solvers' points reach the variables through save_value, without CVXPY's domain check
    b.save_value(np.array([0.5, 0.5]))
    assert max_violation(prob)[0] == np.inf and "integrality of b" in max_violation(prob)[1]
    b.save_value(np.array([2.0, 0.0]))
    assert max_violation(prob)[0] == pytest.approx(1.0)
    b.value = np.array([1.0, 0.0])
    z.save_value(np.array(7.0))
    viol, where = max_violation(prob)
    assert viol == pytest.approx(2.0 / 8.0) and "z" in where  # z <= 5, scaled by 1 + 7
    z.value = None
    assert max_violation(prob) == (np.inf, "z")


# ---------------------------------------------------------------------------------------------
# models without variables (a slot with no job active)


@pytest.mark.parametrize("solver", available_solvers("pyomo"))
def test_a_model_without_variables_is_solved_by_evaluation(solver):
    m = pyo.ConcreteModel()
    m.J = pyo.Set(initialize=[])
    m.x = pyo.Var(m.J)
    m.obj = pyo.Objective(expr=sum(m.x[j] for j in m.J) + 1.5, sense=pyo.maximize)
    result = solve(m, solver)
    assert result.termination is Termination.OPTIMAL and result.objective == 1.5


def test_a_constant_model_with_a_violated_row_is_infeasible():
    m = pyo.ConcreteModel()
    m.J = pyo.Set(initialize=[])
    m.x = pyo.Var(m.J)
    m.obj = pyo.Objective(expr=sum(m.x[j] for j in m.J))
    m.p = pyo.Param(mutable=True, initialize=0.0)
    m.c = pyo.Constraint(expr=sum(m.x[j] for j in m.J) + m.p <= 0)
    assert constant_model_status(m, m.obj) == (Termination.OPTIMAL, 0.0)
    m.p = 1.0  # a mutable parameter: Pyomo refuses a trivially infeasible row at construction only
    assert constant_model_status(m, m.obj) == (Termination.INFEASIBLE, None)
    m.y = pyo.Var()
    m.d = pyo.Constraint(expr=m.y <= 1)
    assert constant_model_status(m, m.obj) is None


# ---------------------------------------------------------------------------------------------
# solve_file: damaged files are refused, a time limit does not stop the reading


@pytest.fixture
def lp_text():
    return "max\n obj: x + 2 y\nst\n c1: x + y <= 3\nbounds\n y <= 1\nend\n"


@pytest.mark.parametrize("solver", FILE_SOLVERS)
@pytest.mark.parametrize(("name", "damage"), [
    ("truncated.lp", lambda t: t.encode()[: len(t) - 5]),
    ("cut_early.lp", lambda t: t.encode()[:30]),
    ("binary.lp", lambda t: b"\x00\x01\x02garbage\xff"),
    ("latin1.lp", lambda t: t.replace("obj", "obj\xe9").encode("latin-1")),
])
def test_damaged_files_are_refused_with_the_file_name(tmp_path, lp_text, solver, name, damage):
    path = tmp_path / name
    path.write_bytes(damage(lp_text))
    # SCIP solved these as a different model (OPTIMAL 6 or 0 instead of 4)
    with pytest.raises(ValueError, match=str(path)):
        solve_file(path, solver)


@pytest.mark.parametrize("solver", FILE_SOLVERS)
def test_a_complete_file_with_a_bom_and_comments_is_read(tmp_path, lp_text, solver):
    path = tmp_path / "ok.lp"
    path.write_bytes(b"\xef\xbb\xbf\\ a comment\n" + lp_text.encode() + b"\\ trailing comment\n\n")
    assert solve_file(path, solver).objective == pytest.approx(4.0)


@pytest.mark.parametrize("solver", FILE_SOLVERS)
def test_mps_files_end_with_endata(tmp_path, solver):
    x = cp.Variable(2, integer=True, name="x")
    path = write_model(cp.Problem(cp.Maximize(x[0] + 2 * x[1]), [x >= 0, x[0] + x[1] <= 3.5]),
                       tmp_path / "k.mps")
    assert solve_file(path, solver).objective == pytest.approx(6.0)
    text = path.read_text()
    cut = tmp_path / "cut.mps"
    cut.write_text(text[: text.rindex("ENDATA")])
    with pytest.raises(ValueError, match="ENDATA"):
        solve_file(cut, solver)


def test_highs_reads_the_whole_file_before_the_time_limit_runs(tmp_path):
    prob, *_ = transport(150)
    path = write_model(prob, tmp_path / "big.lp")
    result = solve_file(path, "highs", time_limit=1e-6, raise_on_nonoptimal=False)
    # was ValueError "could not read": the limit ran out while HiGHS was still reading
    assert result.termination in (Termination.TIME_LIMIT, Termination.FEASIBLE, Termination.OPTIMAL)


@pytest.mark.parametrize("solver", FILE_SOLVERS)
def test_solve_file_prints_nothing_on_stdout(tmp_path, lp_text, solver):
    # checked at the file-descriptor level: a C solver's banner bypasses sys.stdout
    import subprocess
    import sys

    path = tmp_path / "ok.lp"
    path.write_text(lp_text)
    code = ("import sys; from clusteropt.solvers import solve_file; "
            f"r = solve_file(sys.argv[1], {solver!r}, time_limit=5, threads=1); "
            "sys.stderr.write(str(r.objective))")
    done = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, check=True)
    assert done.stdout == "" and done.stderr.strip().endswith("4.0")
