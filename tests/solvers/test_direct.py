"""solve_highs_direct agrees with the persistent route and reports failures."""

from __future__ import annotations

import pyomo.environ as pyo
import pytest

from clusteropt.instances.gadget.instance import gadget_preset
from clusteropt.models.gadget.gvne import build_gvne, slot_problem
from clusteropt.solvers import NotOptimalError, Termination, solve
from clusteropt.solvers.direct import solve_highs_direct


def _knapsack(sense=pyo.maximize, integer=True):
    m = pyo.ConcreteModel()
    m.I = pyo.RangeSet(0, 5)
    w = [3, 4, 5, 6, 2, 7]
    v = [4, 5, 7, 8, 1, 9]
    m.x = pyo.Var(m.I, domain=pyo.Binary if integer else pyo.UnitInterval)
    m.cap = pyo.Constraint(expr=sum(w[i] * m.x[i] for i in m.I) <= 13)
    m.two = pyo.Constraint(expr=m.x[0] + m.x[1] >= 1)
    sign = 1 if sense == pyo.maximize else -1
    m.obj = pyo.Objective(expr=sign * sum(v[i] * m.x[i] for i in m.I) + 2.5, sense=sense)
    return m


@pytest.mark.parametrize("sense", [pyo.maximize, pyo.minimize])
@pytest.mark.parametrize("integer", [True, False])
def test_direct_matches_persistent(sense, integer):
    a, b = _knapsack(sense, integer), _knapsack(sense, integer)
    ra, rb = solve_highs_direct(a), solve(b, "highs")
    assert ra.termination is Termination.OPTIMAL
    assert ra.objective == pytest.approx(rb.objective, abs=1e-6)
    assert pyo.value(a.obj) == pytest.approx(ra.objective, abs=1e-6)  # values were loaded into the model
    assert a.cap.body() <= 13 + 1e-6 and a.two.body() >= 1 - 1e-6


def test_direct_on_a_gadget_slot_model():
    p = slot_problem(gadget_preset("small", jobs=8, seed=1, utility="sqrt"), 10)
    for relax in (True, False):
        ra = solve_highs_direct(build_gvne(p, relax=relax))
        rb = solve(build_gvne(p, relax=relax))
        assert ra.objective == pytest.approx(rb.objective, rel=1e-7)


def test_fixed_variables_and_infeasible_models():
    m = _knapsack()
    m.x[2].fix(1)  # weight 5 fixed in: 8 left, x0 + x1 (weight 7, value 9) is best
    r = solve_highs_direct(m)
    assert r.objective == pytest.approx(7 + 9 + 2.5)
    assert m.x[2].value == 1 and m.x[2].fixed
    bad = _knapsack()
    bad.more = pyo.Constraint(expr=sum(bad.x[i] for i in bad.I) >= 6)
    with pytest.raises(NotOptimalError, match="INFEASIBLE"):
        solve_highs_direct(bad)
    res = solve_highs_direct(_knapsack(), raise_on_nonoptimal=True)
    assert res.build_seconds >= 0 and res.solve_seconds >= 0


def test_two_objectives_rejected():
    m = _knapsack()
    m.obj2 = pyo.Objective(expr=m.x[0])
    with pytest.raises(ValueError, match="2 active objectives"):
        solve_highs_direct(m)
