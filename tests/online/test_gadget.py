"""GADGET's Alg. 1 and the FIFO / DRF / LAS baselines on the driver: every run verified."""

from __future__ import annotations

import json

import numpy as np
import pytest

from clusteropt.algorithms.gadget.greedy import future_density, greedy_slot
from clusteropt.decisions.gadget import GadgetSchedule, SlotAllocation
from clusteropt.instances.gadget.instance import fat_tree_cluster, gadget_preset, random_gadget
from clusteropt.models.gadget.gvne import build_gvne, slot_problem
from clusteropt.online.driver import run_online
from clusteropt.online.gadget import EXACT_MIP_GAP, EXACT_TIME_LIMIT, POLICIES, GadgetEnvironment, make_policy
from clusteropt.solvers import solve
from clusteropt.verify import check_gadget_allocation, check_gadget_schedule


@pytest.mark.parametrize("name, options", [("gadget", {"slot_solver": "greedy"}),
                                           ("gadget", {"slot_solver": "exact"}),
                                           ("fifo", {}), ("drf", {}), ("las", {})])
def test_every_policy_produces_a_verified_schedule(name, options):
    inst = gadget_preset("small", jobs=10, seed=4, horizon=8)
    run = run_online(make_policy(name, **options), inst, horizon=inst.horizon, seed=0)
    check = check_gadget_schedule(inst, run.schedule)
    assert check.ok, check.violations[:3]
    assert check.total_utility == pytest.approx(run.total_utility)
    np.testing.assert_array_equal(check.worker_slots, run.worker_slots)
    assert len(run.schedule.slots) == inst.horizon


def test_nothing_before_arrival_and_budget_respected():
    inst = random_gadget(8, cluster=fat_tree_cluster(6, n_racks=2, seed=1), horizon=12, limit=(3, 9),
                         arrivals="uniform", seed=5)
    run = run_online(make_policy("gadget"), inst, horizon=12, seed=0)
    w = run.schedule.workers.sum(axis=2)  # (T, I)
    for i in range(inst.n_jobs):
        assert w[: inst.arrival[i] - 1, i].sum() == 0
    assert (run.worker_slots <= inst.budget).all()


def test_exact_slot_is_optimal_for_problem_10_and_greedy_is_not_better():
    inst = gadget_preset("small", jobs=8, seed=7, utility="log", horizon=6)
    p = slot_problem(inst, inst.horizon)
    opt = solve(build_gvne(p)).objective
    alloc, gain = greedy_slot(p)
    assert check_gadget_allocation(inst, alloc, inst.horizon).ok
    assert gain <= opt + 1e-6


def test_greedy_fill_keeps_an_optimum_and_only_adds():
    from clusteropt.models.gadget.gvne import allocation_from_solution

    inst = gadget_preset("small", jobs=12, seed=3, horizon=6)
    p = slot_problem(inst, inst.horizon)
    m = build_gvne(p)
    solve(m)
    base = allocation_from_solution(p, m)
    filled, extra = greedy_slot(p, start=base)
    assert extra >= 0
    placed = base.workers.sum(axis=1) > 0
    np.testing.assert_array_equal(filled.workers[placed], base.workers[placed])
    assert check_gadget_allocation(inst, filled, inst.horizon).ok


def test_future_density_is_zero_for_a_saturated_job():
    inst = gadget_preset("small", jobs=3, seed=0, utility="sqrt")
    z = inst.budget.astype(float) - 1
    p = slot_problem(inst, 1, np.where(inst.arrival <= 1, z, 0))
    d = future_density(p)
    assert (d >= 0).all() and d.shape == p.jobs.shape


def test_gadget_beats_fifo_and_drf_under_contention():
    inst = gadget_preset("paper", jobs=150, seed=1, horizon=60)
    total = {}
    for name in POLICIES:
        run = run_online(make_policy(name), inst, horizon=inst.horizon, seed=0)
        assert check_gadget_schedule(inst, run.schedule).ok
        total[name] = run.total_utility
    assert total["gadget"] > total["fifo"]
    assert total["gadget"] > total["drf"]
    assert total["gadget"] >= total["las"] - 1e-9


def test_environment_rejects_bad_decisions():
    inst = gadget_preset("small", jobs=2, seed=0)
    env = GadgetEnvironment(inst, inst.horizon)
    env.observe(1)
    with pytest.raises(TypeError, match="SlotAllocation"):
        env.apply(1, np.zeros((2, 8)))
    with pytest.raises(ValueError, match="shape"):
        env.apply(1, SlotAllocation(np.zeros((3, 8), dtype=int)))
    with pytest.raises(ValueError, match="horizon"):
        GadgetEnvironment(inst, inst.horizon + 1)


def test_make_policy_errors():
    with pytest.raises(ValueError, match="unknown policy"):
        make_policy("srtf")
    with pytest.raises(ValueError, match="no options"):
        make_policy("fifo", slot_solver="exact")
    inst = gadget_preset("small", jobs=2, seed=0)
    with pytest.raises(ValueError, match="slot_solver"):
        run_online(make_policy("gadget", slot_solver="magic"), inst, horizon=1, seed=0)


def test_schedule_json_round_trip():
    inst = gadget_preset("small", jobs=6, seed=2, horizon=5)
    run = run_online(make_policy("gadget"), inst, horizon=5, seed=0)
    data = run.to_json_dict(inst)
    back = GadgetSchedule.from_json_list(data["slots"], inst.n_jobs, inst.cluster.n_servers)
    np.testing.assert_array_equal(back.workers, run.schedule.workers)
    assert check_gadget_schedule(inst, back).total_utility == pytest.approx(data["total_utility"])


def test_run_online_finds_the_gadget_environment_in_a_fresh_interpreter():
    # a policy of one's own, without importing clusteropt.online.gadget first
    import subprocess
    import sys

    script = (
        "from clusteropt.instances.gadget.instance import gadget_preset\n"
        "from clusteropt.online import run_online\n"
        "from clusteropt.decisions.gadget import SlotAllocation\n"
        "class Idle:\n"
        "    name = 'idle'\n"
        "    def reset(self, instance, rng=None):\n"
        "        self.inst_ = instance\n"
        "    def step(self, t, obs):\n"
        "        return SlotAllocation.empty(self.inst_.n_jobs, self.inst_.cluster.n_servers)\n"
        "run = run_online(Idle(), gadget_preset('tiny', jobs=3, seed=0), horizon=2)\n"
        "print(len(run.schedule.slots))\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "2"


# -- issue 19: fill none / greedy, paper rounding, what a run records -------------------------------


def _blocking_instance():
    """Two servers (2 and 1 GPUs) behind one switch with 1 Gbps links.  Job 0 gains only from a
    3-ring (its 1- and 2-worker gains underflow to 0), which needs both servers and 5 Gbps: it
    never fits.  Job 1 (b = 0) gains more from 2 workers than from 1.  A greedy that let job 0
    take a zero-gain 2-worker ring on server 0 first would leave job 1 only server 1.
    """
    from clusteropt.instances.gadget.instance import Cluster, GadgetInstance

    cl = Cluster([[2.0], [1.0]], links=[[0, 2], [2, 0], [1, 2], [2, 1]], bandwidth=[1.0] * 4, n_switches=1)
    return GadgetInstance(cl, horizon=2, arrival=[1, 1], max_workers=[3, 2], per_worker=[[1.0], [1.0]],
                          limit=[[10.0], [10.0]], bandwidth=[5.0, 0.0], zeta=[100.0, 1.0], utility="sigmoid",
                          utility_params=[[100.0, 1.0, 250.0], [10.0, 0.5, 0.0]])


def _slot(policy, inst, t=1, z_prev=None, seed=0):
    from clusteropt.online.gadget import GadgetObservation

    policy.reset(inst, seed)
    z = np.zeros(inst.n_jobs, dtype=np.int64) if z_prev is None else np.asarray(z_prev)
    return policy.step(t, GadgetObservation(t, z, np.flatnonzero(inst.arrival <= t)))


def test_greedy_fill_never_lowers_the_slot_gain_of_the_greedy_slot_solver():
    # regression: the greedy slot solver placed zero-gain rings in the same pass as the gaining
    # ones, so the fill could take capacity a gaining job needed (here: gain 1.22 instead of 2.31)
    inst = _blocking_instance()
    p = slot_problem(inst, 1)
    assert p.pi[0][1] < 1e-12 and p.pi[0][2] > 50  # job 0: only a 3-ring gains
    none, info_none = _slot(make_policy("gadget", fill="none"), inst)
    filled, info_fill = _slot(make_policy("gadget"), inst)
    assert none.workers[1].sum() == 2 and none.workers[0].sum() == 0
    assert info_fill["gain"] >= info_none["gain"] - 1e-12
    assert info_fill["gain"] == pytest.approx(float(p.pi[1][1]))
    np.testing.assert_array_equal(filled.workers[1], none.workers[1])  # the fill only adds
    assert filled.workers[0].sum() == 1 and info_fill["fill_gain"] == pytest.approx(0.0, abs=1e-12)
    for alloc in (none, filled):
        assert check_gadget_allocation(inst, alloc, 1).ok


@pytest.mark.parametrize("slot_solver", ["greedy", "exact", "lp-rs-mde"])
@pytest.mark.parametrize("utility, seed", [("sigmoid", 3), ("sqrt", 5), ("log", 8)])
def test_fill_greedy_never_has_less_gain_than_none_on_the_same_slot(slot_solver, utility, seed):
    inst = gadget_preset("small", jobs=12, seed=seed, utility=utility, horizon=6)
    rng = np.random.default_rng(seed)
    z = np.where(inst.arrival <= 6, rng.integers(0, 4, inst.n_jobs), 0)
    p = slot_problem(inst, 6, z)
    from clusteropt.rounding.gadget import slot_gain

    none, info_none = _slot(make_policy("gadget", slot_solver=slot_solver, fill="none"), inst, 6, z, seed)
    filled, info_fill = _slot(make_policy("gadget", slot_solver=slot_solver), inst, 6, z, seed)
    assert slot_gain(p, filled) >= slot_gain(p, none) - 1e-9
    assert info_fill["gain"] == pytest.approx(slot_gain(p, filled))
    assert info_none["gain"] == pytest.approx(slot_gain(p, none)) and info_none["fill_gain"] == 0.0
    assert info_fill["gain"] == pytest.approx(info_none["gain"] + info_fill["fill_gain"])
    placed = none.workers.sum(axis=1) > 0
    np.testing.assert_array_equal(filled.workers[placed], none.workers[placed])
    assert filled.workers.sum() >= none.workers.sum()
    for alloc in (none, filled):
        assert check_gadget_allocation(inst, alloc, 6, used=z).ok
    assert info_fill["active"] == p.jobs.tolist() == info_none["active"]


def test_fill_none_is_alg1_line_by_line():
    # Alg. 1 as written, each line by hand: I[t], problem (10) solved exactly, z updated.  Problem (10)
    # may have several optima (highspy 1.15.1 and 1.16.0 return different ones on this instance, by
    # the policy's array route and the Pyomo route alike): line 4 holds when the policy's allocation
    # is feasible and attains the optimum, and line 5 then adds the policy's own allocation.
    from clusteropt.rounding.gadget import slot_gain

    inst = gadget_preset("tiny", jobs=5, seed=2, utility="sqrt")
    run = run_online(make_policy("gadget", slot_solver="exact", fill="none"), inst, horizon=inst.horizon, seed=0)
    z = np.zeros(inst.n_jobs, dtype=np.int64)  # line 1
    for t in range(1, inst.horizon + 1):  # line 2
        active = [i for i in range(inst.n_jobs) if t >= inst.arrival[i] and z[i] < inst.budget[i]]  # line 3
        info = run.slot_info[t - 1]
        assert info["active"] == active
        p = slot_problem(inst, t, z)
        assert p.jobs.tolist() == active  # every tiny job fits on some server
        y = run.schedule.slots[t - 1]
        assert check_gadget_allocation(inst, y, t, used=z).ok
        if active:
            model = build_gvne(p)  # line 4: problem (10) as the G-VNE ILP
            res = solve(model)
            assert info["objective"] == pytest.approx(res.objective) and info["fill_gain"] == 0.0
            assert slot_gain(p, y) == pytest.approx(res.objective)  # an optimum of (10)
        else:
            assert not y.workers.any()
        z = z + y.workers.sum(axis=1)  # line 5
    np.testing.assert_array_equal(run.worker_slots, z)
    assert run.total_utility == pytest.approx(float(inst.utility_of(z).sum()))


def test_paper_rounding_reports_the_capacity_it_overloads():
    from clusteropt.online.gadget import CAPACITY_CONSTRAINTS, capacity_overload

    cl = fat_tree_cluster(5, n_racks=2, gpus=(1, 2, 4), server_bw=(5, 10), rack_bw=(8, 14), seed=1)
    inst = random_gadget(6, workers=(2, 5), cluster=cl, horizon=3, arrivals="zero", bandwidth=(3, 7),
                         utility="sqrt", seed=1)
    for fill in ("none", "greedy"):
        run = run_online(make_policy("gadget", slot_solver="lp-rs-mde", rounding="paper", fill=fill), inst,
                         horizon=inst.horizon, seed=0)
        check = check_gadget_schedule(inst, run.schedule)
        assert {v.constraint for v in check.violations} <= set(CAPACITY_CONSTRAINTS)
        total = capacity_overload(inst, check)
        assert total["capacity_violations"] > 0  # this instance and seed overload
        assert sum(d["capacity_violations"] for d in run.slot_info) == total["capacity_violations"]
        assert max(d["max_load_ratio"] for d in run.slot_info) == pytest.approx(total["max_load_ratio"])
        assert total["max_load_ratio"] > 1
        z = np.zeros(inst.n_jobs)
        for t, (alloc, info) in enumerate(zip(run.schedule.slots, run.slot_info, strict=True), start=1):
            own = check_gadget_allocation(inst, alloc, t, used=z)
            assert info["capacity_violations"] == own.n_violations  # the record matches the checker
            assert info["rounding"] == "paper" and info["accepted"] in (True, False)
            z = z + alloc.workers.sum(axis=1)
    safe = run_online(make_policy("gadget", slot_solver="lp-rs-mde"), inst, horizon=inst.horizon, seed=0)
    assert check_gadget_schedule(inst, safe.schedule).ok
    assert all(d["capacity_violations"] == 0 and d["max_load_ratio"] <= 1 + 1e-9 for d in safe.slot_info)


def test_gadget_params_and_bad_options():
    pol = make_policy("gadget", slot_solver="exact", fill="none", time_limit=5.0, mip_gap=0.01)
    p = pol.get_params()
    assert p == {"slot_solver": "exact", "fill": "none", "rounding": None, "form": "auto", "solver": "highs",
                 "time_limit": 5.0, "mip_gap": 0.01, "rounds": None, "alpha": None, "epsilon": None,
                 "samples": None, "passes": None, "warm": None, "builder": "auto", "embed_route": None,
                 "select_algorithm": None, "select_classes": None, "select_route": None, "route_requested": None,
                 "quotient": False}
    p = make_policy("gadget", slot_solver="exact").get_params()
    assert p["time_limit"] == EXACT_TIME_LIMIT == 60.0 and p["mip_gap"] == EXACT_MIP_GAP == 1e-4
    p = make_policy("gadget", slot_solver="lp-rs-mde", rounding="paper").get_params()
    assert p["rounding"] == "paper" and p["rounds"] == 100 and p["alpha"] == pytest.approx(1 / 3)
    assert p["warm"] is False and p["embed_route"] == "auto" and p["select_algorithm"] == "simplex"  # before reset
    assert p["samples"] is None and p["time_limit"] is None
    assert make_policy("las").get_params() == {"order": "las", "workers": "N_i"}
    inst = gadget_preset("tiny", jobs=2, seed=0)
    for options, match in (({"fill": "some"}, "fill"), ({"rounding": "exact"}, "rounding"),
                           ({"rounding": "paper"}, "lp-rs-mde"), ({"builder": "numpy"}, "builder"),
                           ({"slot_solver": "lp-rs-mde", "embed_route": "dw"}, "embed_route"),
                           ({"slot_solver": "lp-rs-mde", "select_algorithm": "pdlp"}, "select_algorithm"),
                           ({"slot_solver": "lp-rs-mde", "select_algorithm": "ipm", "warm": True}, "warm"),
                           ({"slot_solver": "lp-rs-mde", "select_route": "dual"}, "select_route")):
        with pytest.raises(ValueError, match=match):
            run_online(make_policy("gadget", **options), inst, horizon=1, seed=0)
    run = run_online(make_policy("gadget", fill="none"), inst, horizon=2, seed=0)
    assert run.params["fill"] == "none" and run.to_json_dict(inst)["params"] == run.params


def test_exact_slot_solver_same_optimum_from_arrays_and_from_pyomo():
    # issue 22: the exact slot ILP built as arrays (default on a tree with HiGHS) and as the Pyomo model
    inst = gadget_preset("small", jobs=8, seed=4, utility="sqrt", horizon=5)
    runs = {b: run_online(make_policy("gadget", slot_solver="exact", fill="none", mip_gap=0.0, builder=b), inst,
                          horizon=inst.horizon, seed=0) for b in ("auto", "pyomo")}
    for b, run in runs.items():
        assert check_gadget_schedule(inst, run.schedule).ok
        assert run.params["builder"] == b and run.params["time_limit"] == EXACT_TIME_LIMIT
    slots = [(a, p) for a, p in zip(runs["auto"].slot_info, runs["pyomo"].slot_info, strict=True) if a["jobs"]]
    assert slots
    for a, p in slots:
        assert a["builder"] == "matrix" and p["builder"] == "pyomo"
        assert a["termination"] == p["termination"] == "OPTIMAL"
        assert a["objective"] == pytest.approx(p["objective"], rel=1e-9, abs=1e-9)
    with pytest.raises(ValueError, match="builder='matrix' builds the tree form"):
        pol = make_policy("gadget", slot_solver="exact", builder="matrix", form="flow")
        run_online(pol, inst, horizon=1, seed=0)


def test_exact_without_a_time_limit_is_recorded_as_null():
    inst = gadget_preset("tiny", jobs=3, seed=0)
    for limit in (None, float("inf")):
        run = run_online(make_policy("gadget", slot_solver="exact", time_limit=limit), inst, horizon=2, seed=0)
        assert run.params["time_limit"] is None
        json.dumps(run.to_json_dict(inst), allow_nan=False)  # strict JSON
