"""mlBroker's MILP (8) and P_f (9) built as arrays are the Pyomo models (issue 22).

For tiny and small presets, both price forms, the MILP and its relaxation, the whole horizon and
windows with a given ``v(t - 1)``: the same columns (by Pyomo name) with the same bounds, costs and
integrality, the same rows (by name; a row may be written with the opposite sign) with the same
coefficients and bounds; the same optimum from HiGHS; the same decisions read back, which the
verifier prices at the optimum.
"""

from __future__ import annotations

import numpy as np
import pytest
from pyomo.repn.plugins.standard_form import LinearStandardFormCompiler

from clusteropt.instances.broker import broker_preset
from clusteropt.models.broker.matrix import (
    build_broker_arrays,
    decisions_from_arrays,
    schedule_from_arrays,
    solve_broker_arrays,
)
from clusteropt.models.broker.milp import build_broker_milp, decisions_from_solution
from clusteropt.models.broker.optimum import broker_lp_bound, broker_offline_optimum
from clusteropt.solvers.direct import solve_highs_direct
from clusteropt.verify import check_broker_schedule

TOL = 1e-9


def _canonical(coefs: dict, lo: float, hi: float):
    """A row with the sign that makes its first coefficient (by column name) positive."""
    first = min(coefs)
    if coefs[first] < 0:
        return {k: -v for k, v in coefs.items()}, -hi, -lo
    return coefs, lo, hi


def _pyomo(model):
    repn = LinearStandardFormCompiler().write(model, mixed_form=True, set_sense=None)
    names = [v.name for v in repn.columns]
    cols = {v.name: (-np.inf if v.lb is None else float(v.lb), np.inf if v.ub is None else float(v.ub),
                     bool(v.is_integer() or v.is_binary())) for v in repn.columns}
    c = np.asarray(repn.c.toarray()).ravel()
    cost = {n: float(x) for n, x in zip(names, c, strict=True) if x != 0}
    a = repn.A.tocsr()
    rows = {}
    for q, ((con, mult), rhs) in enumerate(zip(repn.rows, repn.rhs, strict=True)):
        sl = slice(a.indptr[q], a.indptr[q + 1])
        coefs = {names[j]: float(v) for j, v in zip(a.indices[sl], a.data[sl], strict=True)}
        lo = -np.inf if mult == 1 else float(rhs)
        hi = np.inf if mult == -1 else float(rhs)
        rows[con.name] = _canonical(coefs, lo, hi)
    return cols, cost, rows


def _arrays(lp):
    names = lp.col_names()
    integer = lp.integer if lp.integer is not None else np.zeros(lp.n_cols, bool)
    cols = {n: (float(lo), float(hi), bool(i)) for n, lo, hi, i in
            zip(names, lp.col_lower, lp.col_upper, integer, strict=True)}
    cost = {n: float(x) for n, x in zip(names, lp.cost, strict=True) if x != 0}
    a = lp.a.tocsr()
    rows = {}
    for q, name in enumerate(lp.row_names()):
        sl = slice(a.indptr[q], a.indptr[q + 1])
        coefs = {names[j]: float(v) for j, v in zip(a.indices[sl], a.data[sl], strict=True)}
        rows[name] = _canonical(coefs, float(lp.row_lower[q]), float(lp.row_upper[q]))
    return cols, cost, rows


def _assert_same(lp, model):
    p_cols, p_cost, p_rows = _pyomo(model)
    m_cols, m_cost, m_rows = _arrays(lp)
    assert m_cols == p_cols
    assert m_cost.keys() == p_cost.keys() and all(abs(m_cost[k] - p_cost[k]) <= TOL for k in m_cost)
    assert m_rows.keys() == p_rows.keys()
    for name, (coefs, lo, hi) in m_rows.items():
        p_coefs, p_lo, p_hi = p_rows[name]
        assert coefs.keys() == p_coefs.keys(), name
        assert all(abs(coefs[k] - p_coefs[k]) <= TOL * max(1.0, abs(p_coefs[k])) for k in coefs), name
        assert (lo == p_lo or abs(lo - p_lo) <= TOL) and (hi == p_hi or abs(hi - p_hi) <= TOL), name


CASES = [("tiny", 0), ("tiny", 3), ("small", 1)]


@pytest.mark.parametrize("relax", [True, False])
@pytest.mark.parametrize("price_form", ["tight", "bigm"])
@pytest.mark.parametrize(("preset", "seed"), CASES)
def test_arrays_are_the_pyomo_model(preset, seed, price_form, relax):
    inst = broker_preset(preset, seed=seed)
    lp = build_broker_arrays(inst, price_form=price_form, relax=relax)
    model = build_broker_milp(inst, price_form=price_form, relax=relax)
    _assert_same(lp, model)
    assert (lp.integer is None) == relax


@pytest.mark.parametrize("price_form", ["tight", "bigm"])
def test_windows_with_a_previous_deployment(price_form):
    inst = broker_preset("small", seed=2)
    rng = np.random.default_rng(0)
    prev = (rng.random((inst.n_jobs, inst.n_dcs)) < 0.3).astype(float)
    for slots in (3, range(2, 5), inst.horizon):
        lp = build_broker_arrays(inst, slots=slots, prev_v=prev, price_form=price_form)
        model = build_broker_milp(inst, slots=slots, prev_v=prev, price_form=price_form)
        _assert_same(lp, model)
        assert lp.name == model.name


@pytest.mark.parametrize(("preset", "seed"), CASES)
def test_same_optimum_and_decisions(preset, seed):
    inst = broker_preset(preset, seed=seed)
    for relax in (True, False):
        lp = build_broker_arrays(inst, relax=relax)
        model = build_broker_milp(inst, relax=relax)
        res_p = solve_highs_direct(model, mip_gap=0.0)
        res_m, x = solve_broker_arrays(lp, mip_gap=0.0)
        assert res_m.termination.name == res_p.termination.name == "OPTIMAL"
        assert res_m.objective == pytest.approx(res_p.objective, rel=1e-7)
        got = decisions_from_arrays(lp, x)
        assert len(got) == inst.horizon
        if relax:
            continue
        # HiGHS got the same model in another column order: an optimum, maybe another one
        want = decisions_from_solution(model)
        assert [d.y.dtype for d in got] == [d.y.dtype for d in want]
        check = check_broker_schedule(inst, schedule_from_arrays(lp, x))
        assert check.ok and check.total_cost == pytest.approx(res_m.objective, rel=1e-6)


def test_entry_points_take_the_array_route_by_default():
    inst = broker_preset("tiny", seed=1)
    for builder in ("auto", "matrix", "pyomo"):
        value, schedule, res = broker_offline_optimum(inst, builder=builder)
        assert res.backend == ("pyomo" if builder == "pyomo" else "matrix")
        assert check_broker_schedule(inst, schedule).ok
        lp_value, lp_res = broker_lp_bound(inst, builder=builder)
        assert lp_value <= value + 1e-6 and lp_res.backend == res.backend
    a = broker_offline_optimum(inst)[0]
    assert a == pytest.approx(broker_offline_optimum(inst, builder="pyomo")[0], rel=1e-7)
    with pytest.raises(ValueError, match="builder"):
        broker_lp_bound(inst, builder="numpy")
    with pytest.raises(ValueError, match="BrokerSchedule starts at slot 1"):
        schedule_from_arrays(build_broker_arrays(inst, slots=2), np.zeros(1))
