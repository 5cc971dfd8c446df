"""The ring policy ``follow`` (ours): the cheapest of whole ring policies, lazily followed.

* with one expert it is that expert, cost for cost and placement for placement;
* every run replays under the checker at the experts' largest capacity, and the checker's cost
  is the policy's own accounting;
* a switch moves at most ``n - n / l`` processes (the relabelling keeps the best-matched labels);
* averaged over the switching coins it stays within the guarantee of
  :mod:`clusteropt.algorithms.ring.experts`, and it follows the expert that is clearly cheapest;
* the shared follower: lazy switching keeps the followed expert distributed as the weights.
"""

from __future__ import annotations

import numpy as np
import pytest

from clusteropt.algorithms.ring.experts import LazyFollower, follow_bound
from clusteropt.algorithms.ring.follow import FollowRing
from clusteropt.instances.ring import RingInstance, random_ring
from clusteropt.online.ring import make_policy, run_ring
from clusteropt.verify.ring import check_ring_run


def _run(inst, seed=0, **params):
    run = run_ring(make_policy("follow", **params), inst, seed=seed)
    chk = check_ring_run(inst, run)
    assert chk.feasible, chk.violations[:3]
    return run, chk


def _drive(algo, inst, rng):
    algo.start(inst, rng)
    for t, e in enumerate(inst.requests.tolist()):
        algo.state_.now = t
        algo.serve(e)
    run = {"initial": inst.initial.tolist(), "migrations": algo.state_.migrations().tolist(),
           "augmentation": algo.augmentation}
    chk = check_ring_run(inst, run)
    assert chk.feasible, chk.violations[:3]
    return chk


@pytest.mark.parametrize("expert", ["never", "greedy", "dynamic-wfa", "dynamic-mix"])
def test_one_expert_is_that_expert(expert):
    inst = random_ring(16, 4, 800, "moving-hotspot", seed=4, alpha=2.0)
    follow = FollowRing(experts=(expert,))
    got = _drive(follow, inst, np.random.default_rng(0))
    # alone, on the stream FollowRing gives its first expert (stream 0 of rng.spawn(m + 1))
    want = _drive(make_policy(expert).algorithm, inst, np.random.default_rng(0).spawn(2)[0])
    assert got.value == pytest.approx(want.value)
    assert follow.switches_ == 0 and follow.expert_costs_[expert] == pytest.approx(want.value)


@pytest.mark.parametrize("pattern", ["uniform", "hotspot", "moving-hotspot", "phases", "zipf"])
@pytest.mark.parametrize("alpha", [1.0, 4.0])
def test_runs_replay_and_account(pattern, alpha):
    inst = random_ring(32, 4, 3000, pattern, seed=1, alpha=alpha)
    run, chk = _run(inst, seed=3, rate=2.0)
    assert run.augmentation == 3.0   # dynamic-mix's 2 + epsilon at its default epsilon 1
    assert chk.communication_cost == run.costs["communication"]
    assert chk.migration_cost == pytest.approx(run.costs["migration"])
    switches = run.costs["switches"]
    assert run.costs["switch_migration"] <= alpha * (switches + 1) * (inst.n - inst.k) + 1e-9
    # the experts' own costs are what they would pay alone: never's is the requests on initial cuts
    init = inst.initial
    cut = init != np.roll(init, -1)
    assert run.costs["expert_never"] == cut[inst.requests].sum()


def test_follows_the_clearly_cheapest_and_meets_the_bound():
    # a hot spot on an edge the initial placement cuts: never pays every request, greedy moves away
    k = 4
    inst = RingInstance(n=16, servers=4, requests=[k - 1] * 3000)
    costs, bounds = [], []
    for seed in range(8):
        algo = FollowRing(rate=1.0)
        algo.start(inst, np.random.default_rng(seed))
        for t, e in enumerate(inst.requests.tolist()):
            algo.state_.now = t
            algo.serve(e)
        assert algo.following_ != "never"
        costs.append(algo.costs()["communication"] + algo.costs()["migration"])
        bounds.append(algo.bound())
    assert np.mean(costs) <= np.mean(bounds)
    assert np.mean(costs) < 0.05 * 3000   # never pays 3000


def test_lazy_switching_keeps_the_weights_distribution():
    # two experts whose costs alternate: P(follow expert 0) after the steps equals its weight
    steps = [[1, 0], [0, 2], [3, 0], [0, 1]]
    hits = 0
    trials = 4000
    rng = np.random.default_rng(7)
    for _ in range(trials):
        f = LazyFollower(2, eta=0.4, coins=rng)
        for s in steps:
            f.update(s)
        hits += f.following == 0
    p0 = f.weights()[0]
    assert abs(hits / trials - p0) < 4 * np.sqrt(p0 * (1 - p0) / trials)
    assert follow_bound([5.0], 0.1, 3.0, 4.0) == 5.0


def test_bad_parameters_name_the_field():
    inst = random_ring(8, 2, 10, seed=0)
    for experts, match in [(("never", "nope"), r"experts\[1\] = 'nope'"), (("static-best",), r"experts\[0\]"),
                           (("follow",), r"experts\[0\]"), ((), "non-empty"), ("never", "non-empty"),
                           (("never", "never"), "each policy once")]:
        with pytest.raises(ValueError, match=match):
            FollowRing(experts).start(inst, np.random.default_rng(0))
    with pytest.raises(ValueError, match="rate"):
        FollowRing(rate=0).start(inst, np.random.default_rng(0))


def test_epsilon_reaches_the_experts_that_take_one():
    inst = random_ring(16, 4, 50, seed=0)
    algo = FollowRing(epsilon=0.5)
    algo.start(inst, np.random.default_rng(0))
    by_name = dict(zip(algo.experts, algo.experts_, strict=True))
    assert by_name["dynamic-mix"].epsilon == 0.5 and by_name["greedy"].epsilon == 0.5
    assert algo.augmentation == 2.5
    assert algo.get_params() == {"experts": ["dynamic-mix", "greedy", "never"], "rate": 0.5, "epsilon": 0.5,
                                 "scale": "adaptive"}


def test_same_seed_same_run():
    inst = random_ring(16, 4, 500, "phases", seed=2)
    a, _ = _run(inst, seed=5)
    b, _ = _run(inst, seed=5)
    assert np.array_equal(a.migrations, b.migrations)
