"""GADGET's Alg. 1 and the FIFO / DRF / LAS baselines on the driver: every run verified."""

from __future__ import annotations

import numpy as np
import pytest

from clusteropt.algorithms.gadget.allocation import GadgetSchedule, SlotAllocation
from clusteropt.algorithms.gadget.greedy import future_density, greedy_slot
from clusteropt.instances.gadget import fat_tree_cluster, gadget_preset, random_gadget
from clusteropt.models.gadget import build_gvne, slot_problem
from clusteropt.online.driver import run_online
from clusteropt.online.gadget import POLICIES, GadgetEnvironment, make_policy
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
    from clusteropt.models.gadget import allocation_from_solution

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
        "from clusteropt.instances.gadget import gadget_preset\n"
        "from clusteropt.online import run_online\n"
        "from clusteropt.algorithms.gadget.allocation import SlotAllocation\n"
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
