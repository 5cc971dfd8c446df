"""Native options through CVXPY whose names are also keywords of ``Problem.solve`` (HiGHS's ``solver``)."""

import cvxpy as cp
import pytest

from clusteropt.models.cvxpy_model import CvxpyModel
from clusteropt.solvers import solve


def _lp():
    x = cp.Variable(2, nonneg=True)
    problem = cp.Problem(cp.Minimize(x[0] + 2 * x[1]), [x[0] + x[1] >= 1])
    return CvxpyModel(problem=problem, variables={"x": x}, constraints={}, name="lp")


@pytest.mark.parametrize("algorithm", ["simplex", "ipm"])
def test_highs_solver_option_reaches_highs(algorithm):
    res = solve(_lp(), "highs", options={"solver": algorithm})
    assert res.is_optimal and res.objective == pytest.approx(1.0)


def test_a_bad_highs_solver_option_is_refused_by_highs_not_by_cvxpy():
    # the value reaches HiGHS (which names it), instead of CVXPY's "multiple values for keyword 'solver'"
    with pytest.raises(ValueError, match=r"\(solver, bogus\)"):
        solve(_lp(), "highs", options={"solver": "bogus"})


def test_a_clashing_option_of_another_solver_is_named():
    with pytest.raises(ValueError, match="'verbose' of clarabel share a name with a keyword"):
        solve(_lp(), "clarabel", options={"verbose": True})
