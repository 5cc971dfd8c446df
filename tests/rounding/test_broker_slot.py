"""The cost-aware integral step (``clusteropt.rounding.broker.slot_milp``) and the ``mlbroker-plus`` policy.

Properties: every decision passes the independent checker; in every slot the kept decision costs no
more than A_round's from the same state and the same draws; at gap 0 it costs exactly the slot's
integral optimum, computed here from the paper's big-M form of (8) (the rounding solves the
convex-hull form), so the two formulations are cross-checked too.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from clusteropt.instances.broker import broker_preset
from clusteropt.models.broker.milp import build_broker_milp
from clusteropt.online import run_online
from clusteropt.online.broker import decision_cost, make_policy, trace_json
from clusteropt.rounding.broker.placement import a_round
from clusteropt.rounding.broker.slot_milp import DEFAULT_SLOT_GAP, slot_milp_round
from clusteropt.solvers import solve
from clusteropt.verify.broker import check_broker_decision, check_broker_schedule
from tests.rounding.test_broker import fractional_input


def _cost(inst, decision, prev, t) -> float:
    return float(math.fsum(decision_cost(inst, decision, prev, t)))


@pytest.mark.parametrize("preset,seed", [("tiny", 0), ("tiny", 1), ("small", 0)])
def test_never_worse_than_a_round_from_the_same_state(preset, seed):
    inst = broker_preset(preset, seed=seed)
    gen = np.random.default_rng(5)
    prev = np.zeros((inst.n_jobs, inst.n_dcs))
    kept = {"milp": 0, "a_round": 0}
    for t in range(1, inst.horizon + 1):
        y_frac, s_frac = fractional_input(inst, t, gen)
        draw = int(gen.integers(2**31))
        d, info = slot_milp_round(inst, t, y_frac, s_frac, prev, rng=draw, return_info=True)
        chk = check_broker_decision(inst, d, t, prev)
        assert chk.ok, [str(v) for v in chk.violations[:3]]
        assert chk.cost_totals()["total"] == pytest.approx(_cost(inst, d, prev, t), rel=1e-9, abs=1e-9)
        reference = a_round(inst, t, y_frac, s_frac, prev, rng=draw)  # the same draws: the same incumbent
        assert info.a_round_cost == pytest.approx(_cost(inst, reference, prev, t), rel=1e-12, abs=1e-12)
        assert _cost(inst, d, prev, t) <= info.a_round_cost + 1e-9
        if inst.active(t).size:
            assert info.milp_status == "OPTIMAL"
            assert info.milp_bound <= info.milp_cost + 1e-6 * (1 + abs(info.milp_cost))
            assert info.milp_cost <= info.milp_bound * (1 + DEFAULT_SLOT_GAP) + 1e-6
        kept[info.chosen] += 1
        prev = d.v
    assert sum(kept.values()) == inst.horizon
    assert kept["milp"] >= 2  # measured: 2 of 4 (tiny, 0), 4 of 4 (tiny, 1), 10 of 10 (small, 0)


@pytest.mark.parametrize("seed", range(3))
def test_gap_zero_is_the_slot_optimum_of_the_paper_form(seed):
    inst = broker_preset("tiny", seed=seed)
    gen = np.random.default_rng(seed)
    prev = np.zeros((inst.n_jobs, inst.n_dcs))
    for t in range(1, inst.horizon + 1):
        y_frac, s_frac = fractional_input(inst, t, gen)
        d = slot_milp_round(inst, t, y_frac, s_frac, prev, rng=seed, mip_gap=0.0)
        if inst.active(t).size:
            paper = build_broker_milp(inst, slots=t, prev_v=prev, price_form="bigm")
            res = solve(paper, "highs", mip_gap=0.0)
            assert res.is_optimal
            assert _cost(inst, d, prev, t) == pytest.approx(res.objective, rel=1e-7, abs=1e-7)
        prev = d.v


@pytest.mark.parametrize("fix", ["ps", "integral"])
def test_fixing_keeps_what_a_fractional_decided(fix):
    inst = broker_preset("small", seed=1)
    gen = np.random.default_rng(8)
    prev = np.zeros((inst.n_jobs, inst.n_dcs))
    n_fixed_ps = 0
    for t in range(1, inst.horizon + 1):
        y_frac, s_frac = fractional_input(inst, t, gen)
        jobs = inst.active(t)
        s_frac[jobs[::2]] = np.eye(inst.n_dcs)[gen.integers(inst.n_dcs, size=len(jobs[::2]))]  # some decided
        d, info = slot_milp_round(inst, t, y_frac, s_frac, prev, rng=1, fix=fix, return_info=True)
        chk = check_broker_decision(inst, d, t, prev)
        assert chk.ok and _cost(inst, d, prev, t) <= info.a_round_cost + 1e-9
        if info.chosen == "milp":
            for i in jobs[::2]:
                assert np.array_equal(d.s[i], s_frac[i])  # the decided PS stays
                n_fixed_ps += 1
            if fix == "integral":
                decided = np.abs(y_frac - np.rint(y_frac)) <= 1e-5
                assert np.array_equal(d.y[jobs][decided[jobs]], np.rint(y_frac[jobs][decided[jobs]]))
        prev = d.v
    assert n_fixed_ps > 0


def test_mlbroker_plus_runs_verified_and_never_above_a_round_per_slot():
    inst = broker_preset("small", seed=2)
    policy = make_policy("mlbroker-plus")
    assert policy.name == "mlbroker-plus"
    params = policy.get_params()
    assert params["rounding"] == "slot-milp" and params["slot_gap"] == DEFAULT_SLOT_GAP
    assert params["slot_time_limit"] is None and params["slot_solver"] == "highs"
    assert params["slot_fix"] == "ps"
    run = run_online(policy, inst, horizon=inst.horizon, seed=3)
    chk = check_broker_schedule(inst, run.schedule)
    assert chk.ok and chk.total_cost == pytest.approx(run.total_cost, rel=1e-9)
    for k, info in enumerate(run.slot_info):
        assert math.fsum(run.costs[k]) <= info["slot_milp_a_round_cost"] + 1e-9
        assert info["slot_milp_chosen"] in ("milp", "a_round")
        assert info["fractional_C2"] >= 0


def test_the_trace_holds_a_rounds_candidates_only_where_its_decision_was_kept():
    inst = broker_preset("small", seed=2)
    policy = make_policy("mlbroker-plus", keep_trace=True)
    run = run_online(policy, inst, horizon=inst.horizon, seed=1)
    slots = trace_json(inst, policy)["slots"]
    chosen = [info["slot_milp_chosen"] for info in run.slot_info]
    assert {"milp", "a_round"} <= set(chosen)  # measured: both occur on this instance
    for slot, which in zip(slots, chosen, strict=True):
        assert (slot["rounding"] is None) == (which == "milp")


def test_bad_options_are_named():
    inst = broker_preset("tiny", seed=0)
    y, s = fractional_input(inst, 1, np.random.default_rng(0))
    with pytest.raises(ValueError, match=r"mip_gap = 1\.5"):
        slot_milp_round(inst, 1, y, s, mip_gap=1.5)
    with pytest.raises(ValueError, match="time_limit = 0"):
        slot_milp_round(inst, 1, y, s, time_limit=0)
    with pytest.raises(ValueError, match="variant = 'paper'"):
        slot_milp_round(inst, 1, y, s, variant="paper")
    with pytest.raises(ValueError, match="fix = 'all'"):
        slot_milp_round(inst, 1, y, s, fix="all")
    with pytest.raises(ValueError, match="slot_fix = 'all'"):
        make_policy("mlbroker-plus", slot_fix="all")
    with pytest.raises(ValueError, match="takes no rounding"):
        make_policy("mlbroker-plus", rounding="ir")
    with pytest.raises(ValueError, match="slot_gap / slot_time_limit / slot_fix belong to rounding = 'slot-milp'"):
        make_policy("mlbroker", slot_gap=0.01)
    with pytest.raises(ValueError, match="rounding_variant = 'paper' is not available"):
        make_policy("mlbroker-plus", rounding_variant="paper")
