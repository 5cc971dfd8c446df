"""Paper 002 online: the driver, virtual queues, the policies, and the regions (exact and simulated)."""

from __future__ import annotations

import numpy as np
import pytest

from clusteropt.algorithms.realtime import max_weight_packing, packing_value
from clusteropt.instances import random_realtime, realtime_preset
from clusteropt.online import run_online
from clusteropt.online.realtime.policies import (
    POLICIES,
    MaxWeight,
    RealtimeEnvironment,
    SqrtGreedy,
    make_policy,
)
from clusteropt.online.realtime.regions import estimate_theta, exact_region, quadrant_directions, region_fraction
from clusteropt.verify import check_realtime_run


def test_examples_6_and_11_frame_one():
    inst = realtime_preset("paper")
    mw = run_online(MaxWeight(), inst, horizon=1, seed=0)
    sg = run_online(SqrtGreedy(), inst, horizon=1, seed=0)
    assert mw.decisions[0].tolist() == [False, True]   # Example 6
    assert sg.decisions[0].tolist() == [True, False]   # Example 11
    assert mw.queues[0].tolist() == [0.48, 0.5]        # Q(1) = r


@pytest.mark.parametrize("name", list(POLICIES))
def test_every_policy_passes_verify_and_queues_follow_the_dynamics(name):
    inst = random_realtime(5, 4, seed=1).with_requirement(np.full(5, 0.1))
    run = run_online(make_policy(name), inst, horizon=3000, seed=2)
    check = check_realtime_run(inst, run)
    check.raise_if_infeasible()
    assert np.array_equal(check.completed, run.completed)
    q, r, e = run.queues, inst.requirement, run.completed.astype(float)
    assert np.allclose(q[1:], np.maximum(q[:-1] - e[:-1], 0.0) + r)  # Sec. III-A, Alg. 1 lines 4, 8-10
    assert np.allclose(q[0], r)


def test_common_random_numbers_across_policies():
    inst = random_realtime(4, 4, seed=3)
    a = run_online(make_policy("max-weight"), inst, horizon=500, seed=9)
    b = run_online(make_policy("random"), inst, horizon=500, seed=9)
    assert np.array_equal(a.jobs, b.jobs) and np.array_equal(a.task_done, b.task_done)
    c = run_online(make_policy("max-weight"), inst, horizon=500, seed=10)
    assert not np.array_equal(a.jobs, c.jobs)


def test_max_weight_maximizes_eq2_every_frame_and_beats_sqrt_greedy_on_the_same_states():
    inst = realtime_preset("fig5", n=6, generation=0.4).with_requirement(np.full(6, 0.12))
    run = run_online(MaxWeight(), inst, horizon=400, seed=4)
    comp = inst.completion_probability(run.jobs)
    masks = (run.jobs.astype(np.int64) @ (1 << np.arange(6))).tolist()
    for t in range(run.frames):
        w = run.queues[t] * comp[t]
        chosen = np.flatnonzero(run.decisions[t]).tolist()
        assert packing_value(w, chosen) == pytest.approx(max_weight_packing(w, masks[t])[0], abs=1e-12)


def test_ilp_and_search_reach_the_same_value_each_frame():
    inst = random_realtime(5, 4, seed=8).with_requirement(np.full(5, 0.15))
    ilp = run_online(MaxWeight(method="ilp"), inst, horizon=60, seed=1)
    comp = inst.completion_probability(ilp.jobs)
    masks = (ilp.jobs.astype(np.int64) @ (1 << np.arange(4))).tolist()
    for t in range(ilp.frames):
        w = ilp.queues[t] * comp[t]
        got = packing_value(w, np.flatnonzero(ilp.decisions[t]).tolist())
        assert got == pytest.approx(max_weight_packing(w, masks[t])[0], rel=1e-7, abs=1e-9)
    check_realtime_run(inst, ilp).raise_if_infeasible()


def test_ilp_routes_make_the_same_run():
    # the live HiGHS model (default with HiGHS) and a Pyomo model per frame: the same Eq. (2) value
    # each frame and here (no ties) the same decisions, hence the same run; both verified
    inst = random_realtime(6, 5, seed=3).with_requirement(np.full(6, 0.12))
    runs = {b: run_online(MaxWeight(method="ilp", builder=b), inst, horizon=80, seed=2)
            for b in ("matrix", "pyomo")}
    comp = inst.completion_probability(runs["matrix"].jobs)
    for t in range(80):
        values = [packing_value(r.queues[t] * comp[t], np.flatnonzero(r.decisions[t]).tolist())
                  for r in runs.values()]
        assert values[0] == pytest.approx(values[1], rel=1e-9, abs=1e-12)
    assert np.array_equal(runs["matrix"].decisions, runs["pyomo"].decisions)
    for run in runs.values():
        check_realtime_run(inst, run).raise_if_infeasible()
    with pytest.raises(ValueError, match="builder = 'matrix' keeps a HiGHS model"):
        MaxWeight(method="ilp", builder="matrix", solver="scip")
    with pytest.raises(ValueError, match="builder = 'arrays'"):
        MaxWeight(builder="arrays")


def test_auto_uses_the_ilp_above_the_search_limit(monkeypatch):
    import clusteropt.online.realtime.policies as rt

    monkeypatch.setattr(rt, "SEARCH_MAX_JOBS", 0)
    policy = MaxWeight()
    inst = random_realtime(3, 3, seed=2).with_requirement(np.full(3, 0.2))
    run = run_online(policy, inst, horizon=20, seed=0)
    assert policy.ilp_frames_ > 0
    check_realtime_run(inst, run).raise_if_infeasible()


def test_inside_the_exact_region_max_weight_fulfils_the_requirement():
    inst = realtime_preset("fig3", generation=0.3)
    d = np.array([1.0, 1.0])
    reg = exact_region(inst, d)
    req = 0.9 * reg.theta * d
    run = run_online(MaxWeight(req), inst, horizon=20_000, seed=5)
    assert (run.rates >= req - 0.01).all()


def test_simulated_rates_lie_in_the_exact_region():
    # any policy's rate vector is feasible: theta along its own direction is >= 1 (up to noise)
    inst = random_realtime(3, 3, generation=(0.2, 0.5), seed=11)
    rng = np.random.default_rng(0)
    for name in POLICIES:
        req = rng.uniform(0.05, 0.3, 3)
        run = run_online(make_policy(name, req), inst, horizon=20_000, seed=int(rng.integers(1000)))
        rates = run.rates
        theta = exact_region(inst, rates).theta
        sigma = np.sqrt(rates * (1 - rates) / run.frames).max()
        assert theta >= 1.0 - 4 * sigma / rates.min(), (name, rates, theta)


def test_the_stationary_policy_attains_the_region_vertex():
    inst = realtime_preset("fig5", n=3, generation=0.4)
    d = np.array([1.0, 2.0, 0.5])
    reg = exact_region(inst, d)
    assert reg.n_states == 2**9
    assert (reg.rates >= reg.theta * d - 1e-7).all()
    run = run_online(reg.policy, inst, horizon=40_000, seed=3)
    check_realtime_run(inst, run).raise_if_infeasible()
    sigma = np.sqrt(reg.rates * (1 - reg.rates) / run.frames)
    assert (np.abs(run.rates - reg.rates) <= 4 * sigma).all(), (run.rates, reg.rates)


def test_estimated_theta_brackets_the_exact_one():
    inst = realtime_preset("fig4", success=0.7)
    d = np.array([1.0, 1.0])
    est = estimate_theta(inst, "sqrt-greedy", d, frames=5000, seed=1)
    strict = exact_region(inst, d).theta
    slack = exact_region(inst, d, slack=0.01).theta
    # the paper's test accepts 0.01 below: never much beyond the slack-matched LP, and close to it
    assert est <= slack + 0.02
    assert est >= 0.9 * strict


def test_region_fraction_on_a_paper_setting():
    rf = region_fraction(realtime_preset("fig3", generation=0.5), "sqrt-greedy", 3, frames=3000, seed=2)
    assert rf.directions.shape == (3, 2)
    assert (rf.exact_theta >= rf.exact_theta_strict).all()
    assert 0.85 <= rf.area_ratio <= 1.05
    assert quadrant_directions(2).tolist() == [[1.0, 0.0], [0.0, 1.0]]


def test_driver_and_environment_reject_bad_input():
    inst = realtime_preset("paper")
    with pytest.raises(ValueError, match="horizon = 0"):
        run_online(SqrtGreedy(), inst, horizon=0)
    with pytest.raises(ValueError, match="unknown environment 'nothing'"):
        run_online(SqrtGreedy(), type("X", (), {"kind": "nothing"})(), horizon=1)
    env = RealtimeEnvironment(inst, 2, np.random.default_rng(0))
    env.observe(1)
    with pytest.raises(ValueError, match=r"frame 1: decision has dtype int64 and shape \(3,\)"):
        env.apply(1, np.array([1, 0, 1]))
    with pytest.raises(ValueError, match="unknown realtime policy 'x'"):
        make_policy("x")
    with pytest.raises(ValueError, match="method"):
        MaxWeight(method="magic")
    with pytest.raises(ValueError, match="requirement"):
        run_online(SqrtGreedy([0.1]), inst, horizon=1)


def test_trace_to_frame_and_json():
    inst = realtime_preset("fig3")
    run = run_online(SqrtGreedy([0.2, 0.2]), inst, horizon=50, seed=0)
    df = run.to_frame()
    assert len(df) == 100 and set(df.columns) >= {"frame", "app", "scheduled", "completed", "queue"}
    out = run.to_json_dict()
    assert out["frames"] == 50 and len(out["decisions"]) == 50
    assert out["completion_rate"] == pytest.approx(run.rates.tolist())
