"""Paper 004 online: the batch environment, every registered ring policy, hit-the-cut, the baselines."""

from __future__ import annotations

import importlib.util
import itertools

import numpy as np
import pytest

from clusteropt.algorithms.ring.baselines import (
    GreedyCut,
    NeverMigrate,
    StaticBestArcs,
    arc_rotations,
    rotation_assignment,
)
from clusteropt.instances.ring import RingInstance, random_ring
from clusteropt.online.ring import POLICIES, RingObservation, RingPolicy, hit_the_cut, make_policy, run_ring
from clusteropt.verify.ring import check_ring_run

#: Policies whose runs do not depend on the seed.
DETERMINISTIC = ("never", "static-best", "greedy", "dynamic-wfa")


def need(policy: str) -> str:
    """Skip when the policy's module is not there (yet)."""
    pytest.importorskip(POLICIES[policy][0])
    return policy


def shuffled(n: int, servers: int, seed: int) -> np.ndarray:
    """A random balanced initial assignment (not contiguous arcs)."""
    rng = np.random.default_rng(seed)
    return rng.permutation(np.repeat(np.arange(servers), n // servers))


def cut_edges(assignment: np.ndarray) -> np.ndarray:
    return np.flatnonzero(assignment != np.roll(assignment, -1))


def instances():
    """Small instances covering the patterns, one server, k = 1 and a shuffled start."""
    yield random_ring(12, 3, 300, "hotspot", seed=1)
    yield random_ring(16, 4, 400, "moving-hotspot", seed=2, step=20)
    yield random_ring(10, 2, 200, "uniform", seed=3, alpha=0.5)
    yield random_ring(12, 2, 300, "zipf", seed=4)
    inst = random_ring(12, 3, 300, "phases", seed=5, phase=60)
    yield RingInstance(n=12, servers=3, requests=inst.requests, initial=shuffled(12, 3, 5), alpha=2.0)
    yield random_ring(6, 1, 50, "uniform", seed=6)
    yield random_ring(6, 6, 50, "uniform", seed=7)
    yield RingInstance(n=8, servers=2, requests=[])


INSTANCES = list(instances())


def verified(instance, run):
    check = check_ring_run(instance, run)
    assert check.feasible, check.violations[:3]
    assert check.max_load <= run.augmentation * instance.k + 1e-9
    return check


# -- the environment ---------------------------------------------------------------------------


@pytest.mark.parametrize("policy", sorted(POLICIES))
def test_batches_do_not_change_the_run(policy):
    need(policy)
    inst = RingInstance(n=12, servers=3, requests=random_ring(12, 3, 97, "hotspot", seed=8).requests,
                        initial=shuffled(12, 3, 8))
    runs = [run_ring(policy, inst, seed=4, batch=b) for b in (1, 10, 97, 1000)]
    assert [r.batches for r in runs] == [97, 10, 1, 1]
    for r in runs[1:]:
        np.testing.assert_array_equal(r.migrations, runs[0].migrations)
        assert r.costs == runs[0].costs
    empty = inst.with_requests([])
    runs = [run_ring(policy, empty, seed=4, batch=b) for b in (1, 5)]
    assert runs[0].batches == runs[1].batches == 1 and runs[0].n_requests == 0
    np.testing.assert_array_equal(runs[0].migrations, runs[1].migrations)
    assert (runs[0].migrations[:, 0] == -1).all()
    verified(empty, runs[0])


def test_policy_returns_the_initial_rearrangement_with_the_first_batch():
    inst = RingInstance(n=8, servers=2, requests=[0, 1, 2, 3, 4, 5], initial=[0, 1, 0, 1, 0, 1, 0, 1])
    for name in ("greedy", "static-best"):
        policy = make_policy(name)
        policy.reset(inst, np.random.default_rng(0))
        first = policy.step(1, RingObservation(0, inst.requests[:3]))
        assert (first[:, 0] == -1).sum() >= 4  # a perfect alternation is 4 migrations from any two arcs
        assert (first[:, 0] >= -1).all() and (first[:, 0] < 3).all()
        second = policy.step(2, RingObservation(3, inst.requests[3:]))
        assert (second[:, 0] >= 3).all()
    # the environment keeps them in front of the log
    run = run_ring("greedy", inst, seed=0, batch=2)
    assert run.migrations[0, 0] == -1 and (np.diff(run.migrations[:, 0]) >= 0).all()
    verified(inst, run)


def test_the_environment_rejects_a_bad_decision():
    from clusteropt.online.ring import RingEnvironment

    env = RingEnvironment(INSTANCES[0], 2, np.random.default_rng(0))
    with pytest.raises(ValueError, match=r"shape \(3,\); expected \(M, 3\)"):
        env.apply(1, np.zeros(3))
    with pytest.raises(TypeError, match="ring instances"):
        make_policy("never").reset(object(), np.random.default_rng(0))


# -- every registered policy -------------------------------------------------------------------


@pytest.mark.parametrize("policy", sorted(POLICIES))
@pytest.mark.parametrize("index", range(len(INSTANCES)))
def test_every_policy_runs_verified(policy, index):
    need(policy)
    inst = INSTANCES[index]
    run = run_ring(policy, inst, seed=11, batch=64)
    assert run.policy == policy and run.n_requests == inst.n_requests and run.seed == 11
    np.testing.assert_array_equal(run.initial, inst.initial)
    check = verified(inst, run)
    # the algorithm's own accounting of communication agrees with the verifier when it keeps one
    if "communication" in run.costs:
        assert run.costs["communication"] == pytest.approx(check.communication_cost)
    again = run_ring(policy, inst, seed=11, batch=64)
    np.testing.assert_array_equal(again.migrations, run.migrations)
    data = run.to_dict(check)
    assert data["verified"] is True and data["total_cost"] == pytest.approx(check.value)


@pytest.mark.parametrize("policy", DETERMINISTIC)
def test_deterministic_policies_ignore_the_seed(policy):
    need(policy)
    inst = INSTANCES[1]
    one, two = run_ring(policy, inst, seed=1), run_ring(policy, inst, seed=2)
    np.testing.assert_array_equal(one.migrations, two.migrations)


def test_make_policy_errors():
    with pytest.raises(ValueError, match="unknown ring policy 'nope'; registered: component, dynamic, "
                                         "dynamic-mix, dynamic-soft, dynamic-wfa, follow, greedy"):
        make_policy("nope")
    with pytest.raises(ValueError, match="has no parameter 'epsilon'; its parameters: none"):
        make_policy("never", epsilon=0.1)
    with pytest.raises(ValueError, match="'bogus'; its parameters: epsilon, half_life, hysteresis, radius"):
        make_policy("greedy", bogus=1)
    if importlib.util.find_spec(POLICIES["dynamic"][0]) is not None:
        with pytest.raises(ValueError, match="policy 'dynamic' fixes mts"):
            make_policy("dynamic", mts="wfa")
    with pytest.raises(ValueError, match="parameters go with a policy name"):
        run_ring(make_policy("never"), INSTANCES[0], epsilon=0.1)
    with pytest.raises(ValueError, match="batch = 0"):
        run_ring("never", INSTANCES[0], batch=0)
    with pytest.raises(ValueError, match="epsilon = -1"):
        run_ring("greedy", INSTANCES[0], epsilon=-1)
    with pytest.raises(ValueError, match="radius = 0"):
        run_ring("greedy", INSTANCES[0], radius=0)
    with pytest.raises(ValueError, match="half_life = 0"):
        run_ring("greedy", INSTANCES[0], half_life=0)
    with pytest.raises(ValueError, match="hysteresis = -1"):
        run_ring("greedy", INSTANCES[0], hysteresis=-1)


# -- hit the cut -------------------------------------------------------------------------------


@pytest.mark.parametrize("against", ["never", "greedy", "dynamic-wfa", "dynamic", "static"])
def test_hit_the_cut_pays_every_request_in_the_replay(against):
    need(against)
    base = RingInstance(n=16, servers=4, requests=[], initial=shuffled(16, 4, 2))
    inst = hit_the_cut(base, 150, against=against, seed=9)
    assert inst.n_requests == 150
    assert inst.generated_by == {"generator": "hit_the_cut", "against": against, "seed": 9, "requests": 150,
                                 "params": {}, "n": 16, "servers": 4}
    run = run_ring(against, inst, seed=9, batch=7)
    check = verified(inst, run)
    assert check.communication_cost == 150
    # request t is a cut edge of the placement the run had when it was served
    placement = np.array(inst.initial)
    rows = run.migrations
    i = 0
    for t, e in enumerate(inst.requests.tolist()):
        while i < len(rows) and rows[i, 0] < t:
            placement[rows[i, 1]] = rows[i, 2]
            i += 1
        assert placement[e] != placement[(e + 1) % inst.n]
        assert e == cut_edges(placement)[0]


def test_hit_the_cut_records_parameters_and_refuses_offline_policies():
    base = RingInstance(n=12, servers=3, requests=[])
    inst = hit_the_cut(base, 40, against="greedy", seed=1, epsilon=1.0, radius=2)
    assert inst.generated_by["params"] == {"epsilon": 1.0, "radius": 2}
    assert check_ring_run(inst, run_ring("greedy", inst, seed=1, epsilon=1.0, radius=2)).communication_cost == 40
    with pytest.raises(ValueError, match="needs an online policy"):
        hit_the_cut(base, 5, against="static-best")
    with pytest.raises(ValueError, match="requests = -1"):
        hit_the_cut(base, -1, against="never")
    single = hit_the_cut(RingInstance(n=4, servers=1, requests=[]), 3, against="never")
    assert single.requests.tolist() == [0, 0, 0]


# -- the baselines -----------------------------------------------------------------------------


def test_never_migrate_pays_the_requests_on_initially_cut_edges():
    for inst in INSTANCES:
        run = run_ring("never", inst, seed=0)
        assert run.migrations.shape == (0, 3)
        cut = np.zeros(inst.n, dtype=bool)
        cut[cut_edges(inst.initial)] = True
        expected = int(cut[inst.requests].sum())
        assert check_ring_run(inst, run).value == expected == run.costs["communication"]


def brute_force_arcs(inst: RingInstance) -> float:
    """min over rotations s and all labellings of alpha * migrations + requests on the cut edges."""
    n, ell, k = inst.n, inst.servers, inst.k
    r = inst.request_counts()
    best = np.inf
    for s in range(k):
        for perm in itertools.permutations(range(ell)):
            target = rotation_assignment(n, ell, s, perm)
            cost = inst.alpha * int((target != inst.initial).sum())
            cost += int(r[cut_edges(target)].sum()) if ell > 1 else 0
            best = min(best, cost)
    return float(best)


@pytest.mark.parametrize("seed", range(6))
def test_static_best_arcs_is_the_best_rotation(seed):
    rng = np.random.default_rng(seed)
    ell = int(rng.integers(1, 4))
    k = int(rng.integers(1, 5))
    n = ell * k
    if n < 2:
        n, k = 2 * ell, 2
    inst = RingInstance(n=n, servers=ell, requests=rng.integers(0, n, size=60), initial=shuffled(n, ell, seed),
                        alpha=float(rng.choice([0.0, 0.5, 1.0, 3.0])))
    run = run_ring("static-best", inst, seed=0)
    check = verified(inst, run)
    assert check.value == pytest.approx(brute_force_arcs(inst))
    assert check.value == pytest.approx(run.costs["planned"])
    assert (run.migrations[:, 0] == -1).all()


def test_arc_rotations_match_a_brute_force():
    for seed in range(5):
        initial = shuffled(12, 3, seed)
        migrations, labels = arc_rotations(initial, 3)
        for s in range(4):
            fewest = min(int((rotation_assignment(12, 3, s, p) != initial).sum())
                         for p in itertools.permutations(range(3)))
            assert migrations[s] == fewest
            assert int((rotation_assignment(12, 3, s, labels[s]) != initial).sum()) == fewest
    with pytest.raises(ValueError, match="a divisor of n = 5"):
        arc_rotations(np.zeros(5, dtype=int), 2)


def test_greedy_keeps_contiguous_arcs_within_its_slack():
    inst = random_ring(40, 4, 3000, "moving-hotspot", seed=3, step=30)
    for eps in (0.0, 0.25, 1.0):
        algo = GreedyCut(epsilon=eps)
        policy = RingPolicy("greedy", algo)
        run = run_ring(policy, inst, seed=0, batch=500)
        check = verified(inst, run)
        assert check.max_load <= int((1 + eps) * inst.k)
        final = check.final_assignment
        assert cut_edges(final).size == inst.servers  # still one arc per server
        np.testing.assert_array_equal(np.sort(algo.cuts_), cut_edges(final))
        if eps == 0.0:
            assert run.migrations.shape == (0, 3)  # no slack: nothing can move
    # hysteresis: a cut moves only when the count drops by more than alpha * distance
    inst = RingInstance(n=8, servers=2, requests=[3] * 10, alpha=20.0)
    assert run_ring("greedy", inst, seed=0).migrations.shape == (0, 3)
    assert run_ring("greedy", inst, seed=0, radius=2).migrations.shape == (0, 3)
    assert run_ring("greedy", inst, seed=0, hysteresis=0.0).migrations.shape[0] > 0  # h = 0: free moves
    cheap = RingInstance(n=8, servers=2, requests=[3] * 10, alpha=1.0)
    run = run_ring("greedy", cheap, seed=0, epsilon=0.5)
    assert check_ring_run(cheap, run).communication_cost == 2  # moved away after the second hit


def test_greedy_decay_forgets_old_requests():
    # edges 2 and 4 (next to the cut at 3) were hot long ago: with a long memory the cut stays at 3
    # and pays every request on it; with a short half-life it moves after the second one
    reqs = [2] * 20 + [4] * 20 + [0] * 200 + [3] * 10
    inst = RingInstance(n=8, servers=2, requests=reqs, alpha=1.0)
    short = run_ring("greedy", inst, seed=0, half_life=10)
    long = run_ring("greedy", inst, seed=0, half_life=1e6)
    assert check_ring_run(inst, short).communication_cost == 2
    assert check_ring_run(inst, long).communication_cost == 10
    for run in (short, long):
        verified(inst, run)


def test_baselines_store_parameters_only():
    assert GreedyCut().get_params() == {"epsilon": 0.5, "radius": None, "half_life": None, "hysteresis": 1.0}
    assert GreedyCut(epsilon=1.0).augmentation == 2.0
    assert NeverMigrate().get_params() == StaticBestArcs().get_params() == {}
    assert not hasattr(GreedyCut(), "state_")
