"""Online coflow orderings (:mod:`clusteropt.algorithms.coflow.online`, issue 23 item 3).

Every schedule goes through ``clusteropt.verify``.  The cut test: dropping the coflows released
after time t leaves every slot up to t + 1 (the first slot a dropped coflow could use) unchanged.
With every coflow released at 0 the online run equals the offline one; FIFO never re-orders, so
its online run equals the offline greedy on any input.
"""

from __future__ import annotations

import numpy as np
import pytest

from clusteropt.algorithms.coflow.online import ONLINE_POLICIES, online_greedy_schedule
from clusteropt.algorithms.coflow.pipeline import coflow_order
from clusteropt.algorithms.coflow.schedulers import greedy_schedule
from clusteropt.instances.coflow.generate import random_coflows
from clusteropt.instances.coflow.instance import CoflowInstance
from clusteropt.verify import check_coflow_schedule

FAST = [p for p in ONLINE_POLICIES if p != "lp-order"]


def _units(inst, schedule, upto=None):
    """``{(slot, coflow id, input, output)}`` of every unit sent (at slots <= upto)."""
    out = set()
    for start, length, flows in schedule.blocks():
        for c, i, o in flows.tolist():
            for t in range(start, start + length):
                if upto is None or t <= upto:
                    out.add((t, int(inst.ids[c]), i, o))
    return out


def _cut(inst, t):
    """The coflows released by time t (ids, flows and their order kept)."""
    keep = np.flatnonzero(inst.release <= t)
    flows = np.isin(inst.coflow, keep)
    local = np.full(inst.n_coflows, -1)
    local[keep] = np.arange(keep.size)
    return CoflowInstance(inst.n_inputs, inst.n_outputs, coflow=local[inst.coflow[flows]], input=inst.input[flows],
                          output=inst.output[flows], units=inst.units[flows], weight=inst.weight[keep],
                          release=inst.release[keep], ids=inst.ids[keep])


@pytest.mark.parametrize("policy", ONLINE_POLICIES)
@pytest.mark.parametrize("epoch", [None, 7])
def test_online_schedules_verify_and_pass_the_cut_test(policy, epoch):
    n = 12 if policy == "lp-order" else 40
    inst = random_coflows(n, 6, load=1.2, seed=5, max_units=30, weights="random")
    run = online_greedy_schedule(inst, policy, epoch=epoch)
    check = check_coflow_schedule(inst, run.schedule)
    assert check.feasible, check.violations[:3]
    assert run.replan_slots.size >= 1 and np.all(np.diff(run.replan_slots) > 0)
    for q in (0.25, 0.5, 0.75):
        t = int(np.quantile(inst.release, q))
        cut = _cut(inst, t)
        if cut.n_coflows == inst.n_coflows:
            continue
        part = online_greedy_schedule(cut, policy, epoch=epoch)
        assert check_coflow_schedule(cut, part.schedule).feasible
        assert _units(cut, part.schedule, t + 1) == _units(inst, run.schedule, t + 1), (policy, t)


@pytest.mark.parametrize("policy", FAST)
def test_all_released_at_zero_online_equals_offline(policy):
    inst = random_coflows(25, 6, release=False, seed=2, max_units=40, weights="random")
    online = online_greedy_schedule(inst, policy)
    offline = greedy_schedule(inst, coflow_order(inst, policy))
    assert online.replan_slots.tolist() == [1]
    assert _units(inst, online.schedule) == _units(inst, offline)


def test_fifo_online_is_the_offline_greedy():
    inst = random_coflows(60, 8, load=0.9, seed=11, max_units=50)
    online = online_greedy_schedule(inst, "fifo")
    assert _units(inst, online.schedule) == _units(inst, greedy_schedule(inst, coflow_order(inst, "fifo")))


def test_online_sebf_looks_at_the_remaining_demand():
    # coflow 0: 6 units from slot 1; coflow 1: 4 units from slot 5.  Static SEBF puts the smaller
    # coflow 1 first and preempts coflow 0 with 2 units left; on the remaining demand (2 < 4) the
    # online run lets coflow 0 finish first: completions 10 + 8 = 18 against 6 + 10 = 16
    inst = CoflowInstance(1, 1, coflow=[0, 1], input=[0, 0], output=[0, 0], units=[6, 4], weight=[1.0, 1.0],
                          release=[0, 4])
    online = check_coflow_schedule(inst, online_greedy_schedule(inst, "sebf").schedule)
    offline = check_coflow_schedule(inst, greedy_schedule(inst, coflow_order(inst, "sebf")))
    assert online.completion.tolist() == [6, 10] and offline.completion.tolist() == [10, 8]


def test_offline_sincronia_is_not_online():
    # why --online exists: the offline BSSI order of the full input changes an early slot when a
    # later coflow is dropped (found by search over seeds, kept fixed here)
    found = None
    for seed in range(40):
        inst = random_coflows(20, 4, load=1.5, seed=seed, max_units=20)
        t = int(np.median(inst.release))
        cut = _cut(inst, t)
        full = greedy_schedule(inst, coflow_order(inst, "sincronia"))
        part = greedy_schedule(cut, coflow_order(cut, "sincronia"))
        if _units(cut, part, t + 1) != _units(inst, full, t + 1):
            found = seed
            break
    assert found is not None


def test_epoch_replans_on_a_grid_and_bad_epochs_are_refused():
    inst = random_coflows(30, 5, load=1.0, seed=4, max_units=20)
    run = online_greedy_schedule(inst, "sebf", epoch=10)
    first = int(inst.release.min()) + 1
    assert all((s - first) % 10 == 0 for s in run.replan_slots.tolist())
    for bad in (0, -3, 2.5, True):
        with pytest.raises(ValueError, match="epoch"):
            online_greedy_schedule(inst, "sebf", epoch=bad)
    with pytest.raises(ValueError, match="policy"):
        online_greedy_schedule(inst, "srpt")


# -- MADD (issue 23 item 4) --------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(6))
def test_madd_is_feasible_and_keeps_the_first_coflows_completion(seed):
    from clusteropt.algorithms.coflow.schedulers import madd_schedule

    inst = random_coflows(30, 6, load=1.2, seed=seed, max_units=20, release=seed % 2 == 0)
    order = coflow_order(inst, "sebf")
    madd = check_coflow_schedule(inst, madd_schedule(inst, order))
    greedy = check_coflow_schedule(inst, greedy_schedule(inst, order))
    assert madd.feasible, madd.violations[:3]
    first = int(order[0])
    assert madd.completion[first] == greedy.completion[first]


def test_madd_leaves_early_slots_to_the_next_coflow():
    from clusteropt.algorithms.coflow.schedulers import madd_schedule

    inst = CoflowInstance(2, 2, coflow=[0, 0, 1], input=[0, 1, 1], output=[0, 1, 1], units=[3, 1, 1],
                          weight=[1.0, 1.0], release=[0, 0])
    madd = check_coflow_schedule(inst, madd_schedule(inst, [0, 1]))
    assert madd.completion.tolist() == [3, 1]
    # and through run_coflow / the CLI's --schedule madd
    from clusteropt.algorithms.coflow.pipeline import run_coflow

    run = run_coflow(inst, "fifo", "madd")
    assert run.verified and run.total_weighted_cct == 4.0
