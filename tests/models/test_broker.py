"""Paper 003 (mlBroker): the MILP (8), its LP relaxation P_f (9) and the regularized slot problem (10).

Hand-computed optima on 1-2 job instances, LP <= MILP and LP(tight) >= LP(big-M), the structure of the
Pyomo model (names, index sets, bounds, windows, ``prev_v``), the read-back of decisions, problem (10)
recomputed in numpy, and the registry / CLI entry points.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pyomo.environ as pyo
import pytest

from clusteropt.cli import main
from clusteropt.instances.broker import BrokerInstance, broker_preset
from clusteropt.models import get_model
from clusteropt.models.broker.inputs import price_bound
from clusteropt.models.broker.milp import build_broker_milp, decisions_from_solution, schedule_from_solution
from clusteropt.models.broker.optimum import broker_lp_bound, broker_offline_optimum
from clusteropt.models.broker.regularized import build_broker_regularized, decision_from_regularized
from clusteropt.solvers import solve
from clusteropt.verify import check_broker_schedule

FORMS = ("bigm", "tight")


def _one_job(d: float, c: float) -> BrokerInstance:
    """1 job, 2 DCs, 1 resource, 1 slot: 10 units of data in DC 0, one worker (P = 10, N = 1).

    n = m = 1 (a worker and the PS take one unit each); a = 10 in DC 0, 1 in DC 1, thresholds 100 (never
    reached: F(h) = a h); transfer cost d both ways; B = 1; deployment cost c.
    """
    return BrokerInstance(horizon=1, price_a=[[10.0], [1.0]], price_b=[[5.0], [0.5]], threshold=[[100.0], [100.0]],
                          transfer_cost=[[0.0, d], [d, 0.0]], arrival=[1], last_slot=[1], data=[[[10.0, 0.0]]],
                          capacity=[10.0], worker_demand=[[1.0]], ps_demand=[[1.0]], traffic=[1.0],
                          deploy_cost=[c], resources=("gpu",))


def _two_jobs(threshold: float) -> BrokerInstance:
    """2 jobs, 2 identical DCs, 1 resource, 1 slot: job 0 has 10 units in DC 0, job 1 10 units in DC 1.

    P = 10 (N = 1), n = 2, m = 1 (a job alone: h = 3), a = 4, b = 1, d = 0.5, B = 1, c = 0.
    """
    return BrokerInstance(horizon=1, price_a=[[4.0], [4.0]], price_b=[[1.0], [1.0]],
                          threshold=[[threshold], [threshold]], transfer_cost=[[0.0, 0.5], [0.5, 0.0]],
                          arrival=[1, 1], last_slot=[1, 1], data=[[[10.0, 0.0]], [[0.0, 10.0]]],
                          capacity=[10.0, 10.0], worker_demand=[[2.0], [2.0]], ps_demand=[[1.0], [1.0]],
                          traffic=[1.0, 1.0], deploy_cost=[0.0, 0.0], resources=("gpu",))


def _moving_job(c: float) -> BrokerInstance:
    """1 job, 2 DCs, 1 resource, 2 slots: 10 units in DC 0 in slot 1, 10 units in DC 1 in slot 2.

    P = 10 (N = 1), n = m = 1, a = 1 in DC 0 and 1.2 in DC 1 (thresholds 100: F = a h), d = 1, B = 1,
    deployment cost c.
    """
    return BrokerInstance(horizon=2, price_a=[[1.0], [1.2]], price_b=[[0.5], [0.5]], threshold=[[100.0], [100.0]],
                          transfer_cost=[[0.0, 1.0], [1.0, 0.0]], arrival=[1], last_slot=[2],
                          data=[[[10.0, 0.0], [0.0, 10.0]]], capacity=[10.0], worker_demand=[[1.0]],
                          ps_demand=[[1.0]], traffic=[1.0], deploy_cost=[c], resources=("gpu",))


def _assert_optimum(inst: BrokerInstance, expected: float):
    """Both price forms reach ``expected`` and the schedule read back is checked at that cost."""
    schedules = []
    for form in FORMS:
        value, schedule, result = broker_offline_optimum(inst, price_form=form)
        assert result.is_optimal
        assert value == pytest.approx(expected, abs=1e-6)
        chk = check_broker_schedule(inst, schedule)
        assert chk.ok, chk.violations
        assert chk.total_cost == pytest.approx(expected, abs=1e-6)
        schedules.append(schedule)
    return schedules


# ---------------------------------------------------------------------------------------------
# 1. optima by hand


@pytest.mark.parametrize(("d", "expected"), [(0.5, 8.0), (3.0, 14.0)])
def test_move_data_or_process_locally(d, expected):
    # y in {0, 1}^2 (0 <= y <= N = 1), the PS in DC 0 or 1; c = 1 per DC used (C3):
    #   y = (1, 0), PS 0: C2 = 10 * 2 = 20, C3 = 1                          -> 21
    #   y = (0, 1), PS 1: C1 = 10 d, C2 = 1 * 2 = 2, C3 = 1                 -> 3 + 10 d  (move the data)
    #   y = (1, 0), PS 1: C2 = 10 + 1 = 11, C4 = B d = d, C3 = 2            -> 13 + d
    #   y = (0, 1), PS 0: C1 = 10 d, C2 = 1 + 10, C4 = d, C3 = 2            -> 13 + 11 d
    #   y = (1, 1), PS 1: C1 = 0 (data trained in DC 0), C2 = 10 + 1 + 1 = 12, C3 = 2, and C4 = 0: (8i)
    #       g^{00} = 1 and (8j) sum_r g^{r1} = g^{11} = 1 >= N s^1 -- the paper's (8i)/(8j) let the DC-0
    #       worker "connect" inside DC 0 although the PS is in DC 1, so one extra local worker in the
    #       PS's DC replaces the communication cost                          -> 14
    #   y = (1, 1), PS 0: C2 = 20 + 1 = 21, C3 = 2                          -> 23
    # d = 0.5: min(21, 8, 13.5, 18.5, 14, 23) = 8 (move);  d = 3: min(21, 33, 16, 46, 14, 23) = 14.
    inst = _one_job(d, 1.0)
    for schedule in _assert_optimum(inst, expected):
        dec = schedule.slots[0]
        assert dec.s[0].tolist() == [0, 1]
        if d == 0.5:
            assert dec.y[0].tolist() == [0, 1]
            assert dec.q[0, 0, 1] == pytest.approx(10.0)
        else:
            assert dec.y[0].tolist() == [1, 1]
            assert dec.g[0].tolist() == [[1, 0], [0, 1]]
            assert check_broker_schedule(inst, schedule).c4.sum() == 0.0


@pytest.mark.parametrize(("threshold", "expected"), [(3.0, 20.0), (100.0, 24.0)])
def test_volume_discount_consolidates_two_jobs(threshold, expected):
    # Each job: N = 1 worker (n = 2) and a PS (m = 1), h = 3 alone; both jobs in one DC: h = 6.
    # threshold l = 3: F(h) = min(4 h, h + 9): F(2) = 8, F(3) = 12, F(4) = 13, F(5) = 14, F(6) = 15.
    #   both local (h = 3, 3): 12 + 12 = 24
    #   both in DC 0 (h = 6, 0): F = 15, C1 = 10 * 0.5 = 5               -> 20 (symmetric: DC 1)
    #   h = (4, 2): 13 + 8 = 21 plus at least one C4 = 0.5 (a PS away from its worker) -> >= 21.5
    #   h = (5, 1): 14 + 4 = 18, two workers in one DC (C1 = 5) and a PS away (C4 = 0.5) -> 23.5
    # threshold l = 100: F(h) = 4 h, total rent 4 * 6 = 24 wherever; any move adds C1 or C4 -> local 24.
    inst = _two_jobs(threshold)
    schedule, _ = _assert_optimum(inst, expected)
    y = schedule.slots[0].y
    if threshold == 3.0:
        assert (y.sum(axis=0) == [2, 0]).all() or (y.sum(axis=0) == [0, 2]).all()
    else:
        assert y.tolist() == [[1, 0], [0, 1]]


@pytest.mark.parametrize(("c", "expected", "where"), [(20.0, 34.0, [0, 0]), (5.0, 14.4, [0, 1])])
def test_deployment_cost_stay_or_move(c, expected, where):
    # Slot 1 (data in DC 0): all in DC 0: C2 = 2, C3 = c.  Slot 2 (data in DC 1):
    #   stay in DC 0:  C1 = 10 * 1 = 10, C2 = 2, C3 = 0           -> 12
    #   move to DC 1:  C2 = 1.2 * 2 = 2.4, C3 = c                 -> 2.4 + c
    #   worker in DC 1, PS stays: C2 = 1.2 + 1, C4 = 1, C3 = c    -> 3.2 + c
    # c = 20: 22 + 12 = 34 (stay) vs 22 + 22.4; all in DC 1 both slots: 10 + 2.4 + 20 + 2.4 = 34.8.
    # c = 5:  7 + 7.4 = 14.4 (move) vs 7 + 12 = 19; all in DC 1: 19.8; both DCs in slot 1
    #         (worker 0, PS 1): 2.2 + 1 + 10, then 2.4 -> 15.6.
    inst = _moving_job(c)
    for schedule in _assert_optimum(inst, expected):
        assert schedule.slots[0].y[0].tolist() == [1, 0]
        assert schedule.slots[1].y[0].tolist() == [1 - where[1], where[1]]


# ---------------------------------------------------------------------------------------------
# 2., 3. LP bounds and the two price forms

SEEDED = [("tiny", s) for s in range(4)] + [("small", s) for s in range(2)]


@pytest.mark.parametrize(("preset", "seed"), SEEDED)
def test_tight_lp_is_never_weaker_than_big_m(preset, seed):
    inst = broker_preset(preset, seed=seed)
    lp_bigm, res_b = broker_lp_bound(inst, price_form="bigm")
    lp_tight, res_t = broker_lp_bound(inst, price_form="tight")
    assert res_b.is_optimal and res_t.is_optimal
    assert 0.0 <= lp_bigm <= lp_tight + 1e-7 * max(1.0, lp_tight)


@pytest.mark.parametrize("seed", range(4))
def test_lp_bounds_below_the_milp_and_both_forms_agree(seed):
    inst = broker_preset("tiny", seed=seed)
    opt = {form: broker_offline_optimum(inst, price_form=form) for form in FORMS}
    for _, _, res in opt.values():
        assert res.is_optimal
    value = opt["tight"][0]
    assert opt["bigm"][0] == pytest.approx(value, rel=1e-7, abs=1e-7)
    for form in FORMS:
        chk = check_broker_schedule(inst, opt[form][1])
        assert chk.ok and chk.total_cost == pytest.approx(value, rel=1e-7)
        assert broker_lp_bound(inst, price_form=form)[0] <= value * (1 + 1e-7) + 1e-7


def test_tight_lp_is_strictly_stronger_somewhere():
    # tiny seed 1: P_f (big-M) 108.20, LP(tight) 596.08, MILP 596.13 -- the big-M LP prices almost nothing.
    inst = broker_preset("tiny", seed=1)
    lp_bigm = broker_lp_bound(inst, price_form="bigm")[0]
    lp_tight = broker_lp_bound(inst, price_form="tight")[0]
    value = broker_offline_optimum(inst)[0]
    assert lp_tight > 2 * lp_bigm
    assert lp_tight <= value * (1 + 1e-7)
    assert (value - lp_tight) / value < 0.01


@pytest.mark.parametrize(("threshold", "lp_bigm", "lp_tight", "milp"), [(3.0, 15.0, 15.0, 20.0),
                                                                     (100.0, 15.0, 24.0, 24.0)])
def test_lp_bounds_of_hand_instance(threshold, lp_bigm, lp_tight, milp):
    # _two_jobs: in any fractional point each job has sum_r y >= D / P = 1 ((8a), (8b)) and sum_r s = 1
    # ((8f)), so the total amount is sum_r h^r >= 2 * (2 * 1 + 1) = 6, reached by the local placement
    # (C1 = C4 = C3 = 0).  Per DC the cheapest x for an amount h is linear in both relaxations, so each
    # LP value is 6 * (its slope):
    #   big-M: x >= max(0, ((a + b) h + e - M) / 2) at the best fractional u; M = big_m = (a - b) max(l, 6 - l)
    #          = e for both thresholds (6 - l <= l), so the slope is (a + b) / 2 = 2.5        -> 15
    #   tight: the chord h F(H) / H, H = price_bound = 6: l = 3: F(6) = 15, slope 2.5          -> 15
    #                                                   l = 100: F(6) = 24, slope 4          -> 24 (= MILP)
    inst = _two_jobs(threshold)
    assert price_bound(inst, 1).tolist() == [6.0]
    assert inst.big_m.ravel().tolist() == [3 * threshold] * 2
    assert broker_lp_bound(inst, price_form="bigm")[0] == pytest.approx(lp_bigm, abs=1e-7)
    assert broker_lp_bound(inst, price_form="tight")[0] == pytest.approx(lp_tight, abs=1e-7)
    assert broker_offline_optimum(inst, price_form="bigm")[0] == pytest.approx(milp, abs=1e-7)


# ---------------------------------------------------------------------------------------------
# 4. structure of the Pyomo model

ROWS = {"eq8a": "(8a)", "eq8b": "(8b)", "eq8e": "(8e)", "eq8f": "(8f)", "eq8g": "(8g)", "eq8h": "(8h)",
        "eq8i": "(8i)", "eq8j": "(8j)"}


@pytest.mark.parametrize("form", FORMS)
def test_component_names_and_docs(form):
    inst = broker_preset("tiny", seed=0)
    m = build_broker_milp(inst, price_form=form)
    price_rows = {"eq8c": "(8c)", "eq8d": "(8d)"} if form == "bigm" else {
        name: "(7)" for name in ("eq7_split", "eq7_first", "eq7_second", "eq7_hull")}
    for name, tag in {**ROWS, **price_rows}.items():
        comp = getattr(m, name)
        assert comp.ctype is pyo.Constraint and comp.doc.startswith(tag), name
    absent = ("eq7_split", "h_a", "h_b") if form == "bigm" else ("eq8c", "eq8d")
    assert all(m.find_component(name) is None for name in absent)
    for name, eq in (("C1", "(1)"), ("C2", "(7)"), ("C3", "(5)"), ("C4", "(6)"), ("h", "(3)")):
        comp = getattr(m, name)
        assert comp.ctype is pyo.Expression and eq in comp.doc, name
    assert set(m.C1.keys()) == set(range(1, inst.horizon + 1))
    assert m.eq8.sense == pyo.minimize
    assert (m.price_form, m.relaxed, m.slots) == (form, False, tuple(range(1, inst.horizon + 1)))


@pytest.mark.parametrize("relax", [False, True])
def test_variables_only_for_active_pairs_with_bounds(relax):
    inst = broker_preset("small", seed=1)
    m = build_broker_milp(inst, relax=relax)
    pairs = {(int(i), t) for t in range(1, inst.horizon + 1) for i in inst.active(t)}
    assert len(pairs) < inst.n_jobs * inst.horizon  # some job is inactive somewhere
    assert set(m.IT) == pairs
    for name in ("y", "s", "v", "z"):
        assert {(i, t) for i, t, _ in getattr(m, name).keys()} == pairs, name
    assert {(i, t) for i, t, _, _ in m.g.keys()} == pairs
    assert len(m.y) == len(pairs) * inst.n_dcs and len(m.g) == len(pairs) * inst.n_dcs ** 2
    for (i, t, _), var in m.y.items():
        assert var.bounds == (0, inst.required_workers(t)[i])
        assert var.is_integer() is not relax
    assert all(var.is_binary() is not relax for var in m.s.values())
    q_expected = {(i, t, r, r2) for i, t in pairs for r in range(inst.n_dcs) if inst.data[i, t - 1, r] > 0
                  for r2 in range(inst.n_dcs)}
    assert set(m.q.keys()) == q_expected
    assert len(q_expected) < len(pairs) * inst.n_dcs ** 2  # some D_i^r(t) = 0 left out
    assert {(i, t, r) for i, t, r in m.eq8b.keys()} == {(i, t, r) for i, t, r, _ in q_expected}
    assert len(m.x) == len(m.u1) == inst.horizon * inst.n_dcs * inst.n_resources


def test_slot_window():
    inst = broker_preset("tiny", seed=0)
    m = build_broker_milp(inst, slots=range(2, 4), price_form="tight")
    assert m.slots == (2, 3) and list(m.T) == [2, 3]
    assert set(m.IT) == {(int(i), t) for t in (2, 3) for i in inst.active(t)}
    assert set(m.C1.keys()) == {2, 3} and {t for t, _, _ in m.x.keys()} == {2, 3}
    single = build_broker_milp(inst, slots=3)
    assert single.slots == (3,) and set(single.IT) == {(int(i), 3) for i in inst.active(3)}
    assert single.name.endswith("-t3")
    assert build_broker_milp(inst, slots=np.int64(2)).slots == (2,)
    with pytest.raises(ValueError, match="starts at slot 2"):
        schedule_from_solution(m)


def test_window_decisions_match_the_slots_of_the_model():
    inst = _moving_job(5.0)
    m = build_broker_milp(inst, slots=[2])
    assert solve(m, "highs").is_optimal
    (dec,) = decisions_from_solution(m)
    assert dec.y.shape == (1, 2)
    # nothing deployed before slot 2 (prev_v = 0): move to DC 1 at 2.4 + 5 (module docstring of the window)
    assert pyo.value(m.eq8) == pytest.approx(7.4)
    assert dec.y[0].tolist() == [0, 1]


@pytest.mark.parametrize("form", FORMS)
def test_prev_v_staying_costs_no_deployment(form):
    # _moving_job(20), slot 2 alone: data in DC 1.
    #   prev_v = deployed in DC 0: stay (C1 = 10, C2 = 2, C3 = 0) -> 12; move 2.4 + 20; split 3.2 + 20 -> 12
    #   prev_v = deployed in DC 1: all in DC 1 (C2 = 2.4, C3 = 0)                                    -> 2.4
    #   prev_v = 0: every DC used pays 20: min(12 + 20, 2.4 + 20, 3.2 + 20 + 20)                        -> 22.4
    inst = _moving_job(20.0)
    for prev, expected, c3 in (([[1.0, 0.0]], 12.0, 0.0), ([[0.0, 1.0]], 2.4, 0.0), (None, 22.4, 20.0)):
        m = build_broker_milp(inst, slots=2, prev_v=prev, price_form=form)
        assert solve(m, "highs").is_optimal
        # within HiGHS's mip_feasibility_tolerance (1e-6): with the big-M rows highspy 1.16.0 returns
        # 11.999999 here (a binary 1e-6 inside its bound), 1.15.1 exactly 12
        assert pyo.value(m.eq8) == pytest.approx(expected, rel=1e-6, abs=1e-6)
        assert pyo.value(m.C3[2]) == pytest.approx(c3, rel=1e-6, abs=1e-6)
        expected_prev = np.zeros((1, 2)) if prev is None else np.asarray(prev)
        assert np.array_equal(m.prev_v, expected_prev)


def test_prev_v_is_ignored_after_the_first_slot_of_the_window():
    # window 1..2: prev_v applies to slot 1 only; deployed in DC 0 before slot 1 -> c = 20 is never paid.
    inst = _moving_job(20.0)
    m = build_broker_milp(inst, prev_v=[[1.0, 0.0]])
    assert solve(m, "highs").is_optimal
    assert pyo.value(m.eq8) == pytest.approx(2.0 + 12.0)
    assert pyo.value(m.C3[1] + m.C3[2]) == pytest.approx(0.0, abs=1e-9)


@pytest.mark.parametrize("seed", range(3))
def test_bounds_the_docstring_adds_do_not_change_the_optima(seed):
    # module docstring: y <= N_i(t) does not change the optimum of (8) or (9); the upper bounds 1 of the
    # relaxed s, v, z, u^1, u^2 of (9) lose nothing.  Remove them and solve again (big-M form: M stays valid
    # as an over-estimate only makes large amounts dearer).
    inst = broker_preset("tiny", seed=seed)
    for relax in (False, True):
        ref = build_broker_milp(inst, relax=relax)
        assert solve(ref, "highs").is_optimal
        free = build_broker_milp(inst, relax=relax)
        for var in free.y.values():
            var.setub(None)
        if relax:
            for name in ("s", "v", "z", "u1", "u2"):
                for var in getattr(free, name).values():
                    var.setub(None)
        assert solve(free, "highs").is_optimal
        assert pyo.value(free.eq8) == pytest.approx(pyo.value(ref.eq8), rel=1e-7, abs=1e-7)


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"slots": 0}, r"slot 0; expected slots in 1 \.\. T = 4"),
    ({"slots": 5}, r"slot 5; expected slots in 1 \.\. T = 4"),
    ({"slots": [1, 3]}, r"slots = \[1, 3\]; expected consecutive"),
    ({"slots": [3, 2]}, r"slots = \[3, 2\]; expected consecutive"),
    ({"slots": []}, "slots is empty"),
    ({"slots": "12"}, "slots = '12'"),
    ({"slots": True}, "slots = True"),
    ({"prev_v": np.zeros((3, 2))}, r"prev_v has shape \(3, 2\); expected \(I, R\) = \(3, 3\)"),
    ({"prev_v": np.zeros(3)}, "prev_v has shape"),
    ({"prev_v": -np.eye(3)}, "prev_v must be finite and >= 0"),
    ({"prev_v": np.full((3, 3), np.nan)}, "prev_v must be finite"),
    ({"price_form": "hull"}, "price_form = 'hull'; expected one of bigm, tight"),
])
def test_build_errors_name_the_field(kwargs, match):
    inst = broker_preset("tiny", seed=0)
    with pytest.raises(ValueError, match=match):
        build_broker_milp(inst, **kwargs)


def test_offline_functions_reject_bad_price_form():
    inst = _one_job(1.0, 1.0)
    with pytest.raises(ValueError, match="price_form"):
        broker_offline_optimum(inst, price_form="paper")
    with pytest.raises(ValueError, match="price_form"):
        broker_lp_bound(inst, price_form="convex")


# ---------------------------------------------------------------------------------------------
# 5. reading decisions back


def test_decisions_from_milp_are_int64_and_reject_fractions():
    inst = broker_preset("tiny", seed=2)
    m = build_broker_milp(inst)
    assert solve(m, "highs").is_optimal
    decisions = decisions_from_solution(m)
    assert len(decisions) == inst.horizon
    for t, dec in enumerate(decisions, start=1):
        for name in ("y", "s", "g", "v", "z", "u1", "u2"):
            assert getattr(dec, name).dtype == np.int64, name
        assert dec.q.dtype == dec.x.dtype == np.float64
        inactive = np.setdiff1d(np.arange(inst.n_jobs), inst.active(t))
        assert not dec.y[inactive].any() and not dec.s[inactive].any() and not dec.q[inactive].any()
    chk = check_broker_schedule(inst, schedule_from_solution(m))
    assert chk.ok and chk.total_cost == pytest.approx(pyo.value(m.eq8), rel=1e-7)
    i, t = next(iter(m.IT))
    m.y[i, t, 0].set_value(0.5, skip_validation=True)
    with pytest.raises(ValueError, match=rf"^y\[.*\(slot {t}\): the solution is fractional"):
        decisions_from_solution(m)
    assert decisions_from_solution(m, tol=0.6)[t - 1].y[i, 0] in (0, 1)


def test_fraction_message_is_readable():
    inst = _one_job(0.5, 1.0)
    m = build_broker_milp(inst)
    assert solve(m, "highs").is_optimal
    m.y[0, 1, 1].set_value(0.5, skip_validation=True)
    with pytest.raises(ValueError, match=r"^y\[0, 0, 1\] = 0\.5 \(slot 1\)"):
        decisions_from_solution(m)


def test_decisions_from_lp_keep_fractions():
    inst = broker_preset("tiny", seed=1)
    m = build_broker_milp(inst, relax=True)
    assert solve(m, "highs").is_optimal
    decisions = decisions_from_solution(m)
    ys = np.stack([d.y for d in decisions])
    assert ys.dtype == np.float64
    assert any((np.abs(getattr(d, n) - np.round(getattr(d, n))) > 1e-6).any()
               for d in decisions for n in ("y", "s", "v", "u1", "g"))


# ---------------------------------------------------------------------------------------------
# 6. the regularized one-slot problem (10)


def _prev(inst: BrokerInstance, seed: int = 0) -> np.ndarray:
    """A fractional v(t - 1) in [0, 1] (some entries exactly 0)."""
    rng = np.random.default_rng(seed)
    prev = rng.uniform(0.0, 1.0, (inst.n_jobs, inst.n_dcs))
    prev[rng.uniform(size=prev.shape) < 0.3] = 0.0
    return prev


def _objective_10(model, val: dict) -> float:
    """Eq. (10) recomputed from the solution values: C1 + sum x + C4 + the relative-entropy term."""
    inst, jobs, eps, sigma = model.instance, model.jobs, model.epsilon, model.sigma
    d = inst.transfer_cost
    c1 = float(np.einsum("jab,ab->", val["q"], d))
    c4 = float(np.einsum("jab,j,ab->", val["g"], inst.traffic[jobs], d))
    v, vp = np.maximum(val["v"], 0.0), model.prev_v[jobs]
    reg = (inst.deploy_cost[jobs][:, None] / sigma) * ((v + eps) * np.log((v + eps) / (vp + eps)) - v)
    return c1 + float(val["x"].sum()) + c4 + float(reg.sum())


def _check_relaxed_rows(model, val: dict, tol: float) -> None:
    """(8a), (8b), (8f), (8i), (8j) of slot t and y <= N, for the fractional solution (numpy)."""
    inst, jobs, t = model.instance, model.jobs, model.t
    data = inst.slot_data(t)[jobs]
    need = inst.required_workers(t)[jobs]
    scale = tol * max(1.0, float(data.max()))
    assert (inst.capacity[jobs][:, None] * val["y"] >= val["q"].sum(axis=1) - scale).all()  # (8a)
    assert np.allclose(val["q"].sum(axis=2), data, atol=scale)  # (8b)
    assert np.allclose(val["s"].sum(axis=1), 1.0, atol=tol)  # (8f)
    assert np.allclose(val["g"].sum(axis=2), val["y"], atol=tol * max(1, need.max()))  # (8i)
    assert (val["g"].sum(axis=1) >= need[:, None] * val["s"] - tol * max(1, need.max())).all()  # (8j)
    assert (val["y"] <= need[:, None] + tol).all()
    assert np.allclose(val["u1"] + val["u2"], 1.0, atol=tol)  # (8e)
    for name in ("y", "s", "v", "q", "g", "x"):
        assert val[name].min() >= -tol, name


@pytest.fixture(scope="module")
def regularized_solutions():
    """Slot 2 of tiny seed 0 with a fractional prev_v, solved by clarabel and scs (both price forms)."""
    inst = broker_preset("tiny", seed=0)
    prev = _prev(inst)
    out = {}
    for form in FORMS:
        for solver in ("clarabel", "scs"):
            model = build_broker_regularized(inst, 2, prev, price_form=form)
            res = solve(model, solver)
            val = {name: np.asarray(var.value, dtype=float) for name, var in model.variables.items()}
            out[form, solver] = (model, res, val)
    return out


@pytest.mark.parametrize("form", FORMS)
def test_regularized_solvers_agree(regularized_solutions, form):
    (_, res_c, _), (_, res_s, _) = regularized_solutions[form, "clarabel"], regularized_solutions[form, "scs"]
    assert res_c.termination.name == res_s.termination.name == "OPTIMAL"
    assert res_s.objective == pytest.approx(res_c.objective, rel=2e-3, abs=1e-3)


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize(("solver", "tol"), [("clarabel", 1e-6), ("scs", 1e-3)])
def test_regularized_objective_and_rows_recomputed(regularized_solutions, form, solver, tol):
    model, res, val = regularized_solutions[form, solver]
    assert model.t == 2 and model.price_form == form
    assert model.sigma == pytest.approx(math.log(1 + 1 / 0.1)) and model.epsilon == 0.1
    assert np.any(model.prev_v[model.jobs] > 0)
    assert res.objective == pytest.approx(_objective_10(model, val), rel=10 * tol, abs=10 * tol)
    _check_relaxed_rows(model, val, tol)
    # (8g): U v >= y + s
    assert (model.instance.big_u * val["v"] >= val["y"] + val["s"] - tol * model.instance.big_u).all()


def test_regularized_tight_price_is_at_least_big_m(regularized_solutions):
    bigm = regularized_solutions["bigm", "clarabel"][1].objective
    tight = regularized_solutions["tight", "clarabel"][1].objective
    assert tight >= bigm - 1e-6 * max(1.0, abs(bigm))


@pytest.mark.parametrize("seed", range(3))
def test_regularized_tight_vs_big_m_every_slot(seed):
    inst = broker_preset("tiny", seed=seed)
    for t in range(1, inst.horizon + 1):
        if not len(inst.active(t)):
            continue
        obj = {f: solve(build_broker_regularized(inst, t, price_form=f), "clarabel").objective for f in FORMS}
        assert obj["tight"] >= obj["bigm"] - 1e-6 * max(1.0, abs(obj["bigm"]))


@pytest.mark.parametrize(("form", "rent"), [("tight", 2.0), ("bigm", 1.5)])
def test_regularized_optimum_by_hand(form, rent):
    # _one_job(d = 0.5, c = 1), slot 1, prev_v = deployed in DC 1: v_prev = (0, 1), eps = 0.1,
    # sigma = ln 11.  The entropy term of each (r) is minimized at v = v_prev (derivative
    # (c / sigma) ln((v + eps) / (v_prev + eps))) with value -(c / sigma) v_prev: in total >= -1 / sigma,
    # reached with v = (0, 1) (which meets (8g): U v^1 = 2 >= y^1 + s^1 = 2).
    # The rest: the 10 units need one (fractional) worker in total; in DC 1 it costs C1 = 10 * 0.5 = 5 plus
    # the rent of h^1 = y + s = 2, in DC 0 it costs the rent at 10 per unit: DC 1 is cheaper in both forms.
    #   tight: H = n N + m = 2 <= l, so the chord is a h: rent 1 * 2 = 2                  -> 7 - 1 / sigma
    #   big-M: M = big_m = (a - b) max(l, 2 - l) = e, x >= ((a + b) h + e - M) / 2 = 0.75 h: rent 1.5
    #                                                                                     -> 6.5 - 1 / sigma
    inst = _one_job(0.5, 1.0)
    model = build_broker_regularized(inst, 1, [[0.0, 1.0]], price_form=form)
    res = solve(model, "clarabel")
    assert res.is_optimal
    assert res.objective == pytest.approx(5.0 + rent - 1.0 / math.log(11.0), abs=1e-5)
    val = {name: np.asarray(var.value, dtype=float) for name, var in model.variables.items()}
    assert res.objective == pytest.approx(_objective_10(model, val), abs=1e-6)
    assert val["y"][0] == pytest.approx([0.0, 1.0], abs=1e-4)
    assert val["v"][0] == pytest.approx([0.0, 1.0], abs=1e-3)


@pytest.mark.parametrize(("args", "kwargs", "match"), [
    ((0,), {}, r"t = 0; expected a slot in 1 \.\. T = 4"),
    ((5,), {}, r"t = 5; expected a slot in 1 \.\. T = 4"),
    ((2.0,), {}, r"t = 2\.0"),
    ((True,), {}, r"t = True"),
    ((2,), {"epsilon": 0.0}, r"epsilon = 0\.0; expected > 0"),
    ((2,), {"epsilon": -0.1}, r"epsilon = -0\.1; expected > 0"),
    ((2,), {"epsilon": math.nan}, r"epsilon = nan"),
    ((2,), {"sigma": 0.0}, r"sigma = 0\.0; expected > 0"),
    ((2,), {"sigma": -1.0}, r"sigma = -1\.0; expected > 0"),
    ((2, np.zeros((2, 3))), {}, r"prev_v has shape \(2, 3\)"),
    ((2, -np.ones((3, 3))), {}, r"prev_v must be finite and >= 0"),
    ((2,), {"price_form": "big-m"}, r"price_form = 'big-m'"),
    ((2,), {"transfers": "some"}, r"transfers = 'some'; expected one of all, sources"),
])
def test_regularized_errors(args, kwargs, match):
    inst = broker_preset("tiny", seed=0)
    with pytest.raises(ValueError, match=match):
        build_broker_regularized(inst, *args, **kwargs)


def test_regularized_model_structure():
    inst = broker_preset("tiny", seed=0)
    model = build_broker_regularized(inst, 2, price_form="tight", epsilon=0.5, sigma=2.0)
    assert model.jobs.tolist() == inst.active(2).tolist()
    assert (model.epsilon, model.sigma) == (0.5, 2.0)
    assert set(model.constraints) == {"8a", "8b", "8e", "8f", "8g", "8i", "8j", "y_bound", "7_split", "7_first",
                                      "7_second", "7_hull"}
    assert set(build_broker_regularized(inst, 2, price_form="bigm").constraints) == {
        "8a", "8b", "8c", "8d", "8e", "8f", "8g", "8i", "8j", "y_bound"}
    assert set(build_broker_regularized(inst, 2).constraints) == set(model.constraints)  # tight: the default
    n_j, n_r, n_k = len(model.jobs), inst.n_dcs, inst.n_resources
    shapes = {"y": (n_j, n_r), "s": (n_j, n_r), "v": (n_j, n_r), "q": (n_j, n_r, n_r), "g": (n_j, n_r, n_r),
              "x": (n_r, n_k), "u1": (n_r, n_k), "u2": (n_r, n_k), "h_a": (n_r, n_k), "h_b": (n_r, n_k)}
    assert {name: var.shape for name, var in model.variables.items()} == shapes
    assert model.problem.is_dcp()


@pytest.mark.parametrize(("preset", "seed"), [("tiny", 0), ("tiny", 3), ("small", 1), ("small", 2)])
@pytest.mark.parametrize("price_form", ["tight", "bigm"])
def test_transfers_from_the_sources_only_are_the_same_problem(preset, seed, price_form):
    """(8b) fixes every q from a DC without the job's data at 0: leaving those q out is the same problem
    (the same optimum; the decisions may be other optimal points: only v enters strictly convexly), with
    a previous deployment too."""
    inst = broker_preset(preset, seed=seed)
    rng = np.random.default_rng(seed)
    prev = rng.random((inst.n_jobs, inst.n_dcs)) * (rng.random((inst.n_jobs, inst.n_dcs)) < 0.5)
    for t in range(1, inst.horizon + 1, 2):
        full = build_broker_regularized(inst, t, prev, price_form=price_form)
        part = build_broker_regularized(inst, t, prev, price_form=price_form, transfers="sources")
        assert part.transfers == "sources" and full.transfers == "all" and full.sources is None
        data = inst.slot_data(t)[part.jobs]
        assert part.variables["q"].shape == (int((data > 0).sum()), inst.n_dcs)
        assert (data[part.sources] > 0).all()
        a, b = solve(full, "clarabel"), solve(part, "clarabel")
        assert a.is_optimal and b.is_optimal
        assert b.objective == pytest.approx(a.objective, rel=1e-6, abs=1e-6)
        da, db = decision_from_regularized(full), decision_from_regularized(part)
        data_all = inst.slot_data(t)
        for dec in (da, db):  # (8b) at the points read back, in the full (I, R, R) layout of both
            np.testing.assert_allclose(dec.q[part.jobs].sum(axis=2), data_all[part.jobs], rtol=1e-6, atol=1e-6)
        assert (db.q[data_all == 0] == 0).all()  # nothing moves from a DC without the data


def test_decision_from_regularized_shapes_and_inactive_rows():
    inst = broker_preset("tiny", seed=0)
    t = next(t for t in range(1, inst.horizon + 1) if 0 < len(inst.active(t)) < inst.n_jobs)
    model = build_broker_regularized(inst, t)
    with pytest.raises(ValueError, match="no solution; solve it first"):
        decision_from_regularized(model)
    assert solve(model, "clarabel").is_optimal
    dec = decision_from_regularized(model)
    n_i, n_r, n_k = inst.n_jobs, inst.n_dcs, inst.n_resources
    assert dec.y.shape == dec.s.shape == dec.v.shape == (n_i, n_r)
    assert dec.q.shape == dec.g.shape == (n_i, n_r, n_r)
    assert dec.x.shape == dec.u1.shape == dec.u2.shape == (n_r, n_k)
    inactive = np.setdiff1d(np.arange(n_i), inst.active(t))
    for name in ("y", "s", "v", "q", "g"):
        arr = getattr(dec, name)
        assert arr.min() >= 0.0 and not arr[inactive].any(), name
        assert np.allclose(arr[model.jobs], np.maximum(model.variables[name].value, 0.0)), name
    assert np.allclose(dec.s[model.jobs].sum(axis=1), 1.0, atol=1e-6)


# ---------------------------------------------------------------------------------------------
# 7. registry and CLI


def test_registry_builders():
    inst = broker_preset("tiny", seed=0)
    spec = get_model("broker-regularized")
    assert spec.backend == "cvxpy" and spec.kind == "broker"
    with pytest.raises(ValueError, match=r"--slot T, T in 1 \.\. 4"):
        spec.build(inst)
    model = spec.build(inst, slot=2, epsilon=0.2, price_form="tight")
    assert (model.t, model.epsilon, model.price_form) == (2, 0.2, "tight")
    milp = get_model("broker-milp")
    assert milp.backend == "pyomo"
    m = milp.build(inst)
    assert m.slots == (1, 2, 3, 4) and not m.relaxed and m.price_form == "tight"  # the default everywhere
    assert milp.build(inst, price_form="bigm").price_form == "bigm"
    assert milp.build(inst, relax=True).relaxed
    one = milp.build(inst, slot=3, price_form="tight")
    assert one.slots == (3,) and one.price_form == "tight" and not one.prev_v.any()
    lp = get_model("broker-lp").build(inst, slot=2)
    assert lp.relaxed and lp.slots == (2,)
    with pytest.raises(ValueError, match="slot 9"):
        get_model("broker-lp").build(inst, slot=9)
    with pytest.raises(ValueError, match="takes no option epsilon"):
        milp.build(inst, epsilon=0.1)


@pytest.fixture
def tiny_file(tmp_path) -> str:
    path = tmp_path / "tiny.json"
    assert main(["generate", "broker", "--preset", "tiny", "--seed", "0", "-o", str(path)]) == 0
    return str(path)


def _run(capsys, *args) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_build_and_export_milp(tiny_file, tmp_path, capsys):
    out_lp = tmp_path / "x.lp"
    code, out, err = _run(capsys, "build", tiny_file, "--model", "broker-milp", "--price-form", "bigm", "--export",
                          out_lp)
    assert code == 0, err
    assert "model broker-milp (pyomo)" in out and "eq8a" in out and f"wrote {out_lp}" in out
    text = out_lp.read_text()
    assert "\nbinary\n" in text and "\ngeneral\n" in text  # integrality sections
    assert "c_u_eq8a(" in text and "c_e_eq8b(" in text and "c_u_eq8c(" in text and "\neq8:\n" in text
    code, _, err = _run(capsys, "export", tiny_file, out_lp, "--model", "broker-milp")  # the default: the hull
    assert code == 0, err
    assert "c_u_eq8c(" not in out_lp.read_text() and "eq7_hull(" in out_lp.read_text()
    code, _, err = _run(capsys, "build", tiny_file, "--model", "broker-milp", "--price-form", "hull")
    assert code == 2 and "'hull' is not one of 'tight', 'bigm'" in err


def test_one_price_form_default_everywhere(tiny_file, tmp_path, capsys):
    from clusteropt.models.broker.inputs import DEFAULT_PRICE_FORM
    from clusteropt.online.broker import make_policy

    inst = broker_preset("tiny", seed=0)
    assert DEFAULT_PRICE_FORM == "tight"
    assert build_broker_milp(inst).price_form == build_broker_regularized(inst, 2).price_form == DEFAULT_PRICE_FORM
    assert make_policy("mlbroker").get_params()["price_form"] == DEFAULT_PRICE_FORM
    out = tmp_path / "r.json"
    for form, extra in (("tight", ()), ("bigm", ("--price-form", "bigm"))):
        code, _, err = _run(capsys, "solve", tiny_file, "--model", "broker-regularized", "--slot", "2", *extra,
                            "--json", out)
        assert code == 0, err
        assert json.loads(out.read_text())["price_form"] == form
    code, _, err = _run(capsys, "solve", tiny_file, "--model", "broker-lp", "--price-form", "bigm", "--json", out)
    assert code == 0 and json.loads(out.read_text())["price_form"] == "bigm"


def test_cli_build_and_export_lp_one_slot(tiny_file, tmp_path, capsys):
    inst = broker_preset("tiny", seed=0)
    out_mps = tmp_path / "x.mps"
    code, _, err = _run(capsys, "build", tiny_file, "--model", "broker-lp", "--slot", "2", "--export", out_mps)
    assert code == 0, err
    text = out_mps.read_text()
    assert "NAME broker-lp-tight-t2" in text
    assert "MARKER" not in text  # continuous
    # only slot 2's jobs: y columns for the active jobs, bounded by N_i(2)
    ups = {line.split()[2]: float(line.split()[3]) for line in text.splitlines()
           if line.startswith(" UP BOUND y(")}
    need = inst.required_workers(2)
    assert ups == {f"y({i}_2_{r})": float(need[i]) for i in inst.active(2) for r in range(inst.n_dcs)}


def test_cli_regularized_needs_slot_and_cannot_be_exported(tiny_file, tmp_path, capsys):
    code, _, err = _run(capsys, "build", tiny_file, "--model", "broker-regularized")
    assert code == 2 and "--slot" in err and "Traceback" not in err
    code, out, _ = _run(capsys, "build", tiny_file, "--model", "broker-regularized", "--slot", "2")
    assert code == 0 and "model broker-regularized (cvxpy)" in out
    target = tmp_path / "x.lp"
    code, _, err = _run(capsys, "build", tiny_file, "--model", "broker-regularized", "--slot", "2",
                        "--export", target)
    assert code == 2 and err.startswith("error:") and len(err.strip().splitlines()) == 1
    assert "exponential cone" in err and "clarabel" in err
    assert not target.exists()
    code, _, err = _run(capsys, "export", tiny_file, tmp_path / "x.mps", "--model", "broker-regularized",
                        "--slot", "2")
    assert code == 2 and "exponential cone" in err and not (tmp_path / "x.mps").exists()
