"""A solver that refuses or fails on a model reports ERROR with its reason, never another model's
answer or a traceback (issue 42: coefficients beyond the solvers' range).
"""

from __future__ import annotations

import pyomo.environ as pyo
import pytest

from clusteropt.solvers import NotOptimalError, available_solvers, solve
from clusteropt.solvers.result import Termination


def _huge_row_model(coef: float) -> pyo.ConcreteModel:
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0, 10))
    m.y = pyo.Var(bounds=(0, 10))
    m.c = pyo.Constraint(expr=coef * m.x + m.y >= 2)  # feasible: y = 2
    m.o = pyo.Objective(expr=m.x + m.y)
    return m


def test_highs_refusing_a_row_is_an_error_not_the_optimum_of_the_rest():
    res = solve(_huge_row_model(1e16), "highs", raise_on_nonoptimal=False)
    assert res.termination is Termination.ERROR and not res.has_solution
    assert "took 0 of the model's 1 constraints" in res.raw["status"]
    with pytest.raises(NotOptimalError, match="took 0 of the model's 1 constraints"):
        solve(_huge_row_model(1e16), "highs")
    ok = solve(_huge_row_model(1e3), "highs")  # the same model in range: solved
    assert ok.termination is Termination.OPTIMAL and ok.objective == pytest.approx(2e-3)


@pytest.mark.skipif("scip" not in available_solvers(), reason="pyscipopt is not installed")
def test_a_scip_failure_is_an_error_result(monkeypatch):
    from clusteropt.solvers import pyomo_backend

    real = pyomo_backend.make_contrib_solver

    def breaking(native):
        opt = real(native)

        def broken(model, **kwargs):
            raise Exception("SCIP: error in LP solver!")  # what PySCIPOpt raises when SCIP's LP fails

        opt.solve = broken
        return opt

    monkeypatch.setattr(pyomo_backend, "make_contrib_solver", breaking)
    res = solve(_huge_row_model(1.0), "scip", raise_on_nonoptimal=False)
    assert res.termination is Termination.ERROR and res.raw["status"] == "error: SCIP: error in LP solver!"
