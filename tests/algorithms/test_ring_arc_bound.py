"""Paper 004: the moving-arcs upper bound on OPT_dyn (:func:`dynamic_arc_bound`, ours).

The restricted DP (:func:`dynamic_opt_restricted`) is checked against brute force over every path
through its candidate set, and against the full DP when the candidates are all labellings; the arc
bound is bracketed by the exact OPT_dyn below and by the ``static-best`` baseline's cost (and the
static optimum, when its placement is added) above; its schedule is replayed by the verifier.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clusteropt.algorithms.ring.offline import (
    arc_labellings,
    compress_requests,
    dynamic_arc_bound,
    dynamic_opt_dp,
    dynamic_opt_restricted,
    feasible_labellings,
    static_opt_bruteforce,
)
from clusteropt.instances.ring import RingInstance, random_ring
from clusteropt.online.ring import run_ring
from clusteropt.verify import check_ring_run

TOL = 1e-9
SHAPES = [(4, 2), (6, 2), (6, 3), (8, 2), (8, 4), (9, 3)]


@pytest.mark.parametrize(("n", "servers"), [(4, 2), (6, 3), (8, 4), (12, 3), (3, 3), (64, 4), (40, 8), (7, 1)])
def test_arc_labellings_are_the_rotated_arc_partitions(n, servers):
    S = arc_labellings(n, servers)
    k = n // servers
    perms = math.factorial(servers) if math.factorial(servers) <= 24 else servers
    expected = 1 if servers == 1 else (k * perms if k > 1 else perms)  # one server: all offsets alike
    assert S.shape == (expected, n)
    assert np.unique(S, axis=0).shape[0] == S.shape[0]
    for row in S:
        assert np.bincount(row, minlength=servers).tolist() == [k] * servers
        cuts = np.flatnonzero(row != np.roll(row, -1))
        if servers > 1:  # l cuts, k apart: one arc per server
            assert cuts.size == servers and set(np.diff(np.r_[cuts, cuts[0] + n]).tolist()) == {k}
    # the contiguous initial assignment is among them
    assert (S == np.repeat(np.arange(servers), k)).all(axis=1).any()


def _paths_bruteforce(inst, candidates):
    """min over every sequence of candidate placements (one per compressed request)."""
    init = np.asarray(inst.initial)
    S = np.unique(np.vstack([init[None, :], np.asarray(candidates).reshape(-1, inst.n)]), axis=0)
    edges, weights, _ = compress_requests(inst.requests)
    best = np.inf
    for seq in itertools.product(range(S.shape[0]), repeat=edges.size):
        cost, prev = 0.0, init
        for t, i in enumerate(seq):
            p = S[i]
            cost += inst.alpha * (p != prev).sum() + weights[t] * (p[edges[t]] != p[(edges[t] + 1) % inst.n])
            prev = p
        best = min(best, cost)
    return best


@settings(max_examples=30, deadline=None)
@given(st.sampled_from(SHAPES), st.integers(0, 10_000), st.integers(1, 3), st.sampled_from([0.5, 1.0, 3.0]))
def test_restricted_dp_is_the_best_path_through_its_candidates(shape, seed, m, alpha):
    n, servers = shape
    rng = np.random.default_rng(seed)
    S = feasible_labellings(n, servers)
    cand = S[rng.choice(S.shape[0], size=min(m, S.shape[0]), replace=False)]
    requests = rng.integers(0, n, size=int(rng.integers(1, 6)))
    inst = RingInstance(n=n, servers=servers, requests=requests, alpha=alpha)
    sol = dynamic_opt_restricted(inst, cand)
    assert sol.value == pytest.approx(_paths_bruteforce(inst, cand), abs=TOL)
    check = check_ring_run(inst, sol)
    assert check.feasible and check.value == pytest.approx(sol.value, abs=TOL)


@pytest.mark.parametrize(("n", "servers"), [(6, 2), (6, 3), (8, 4)])
def test_restricted_dp_over_every_labelling_is_the_exact_dp(n, servers):
    for seed in range(3):
        inst = random_ring(n, servers, 12 * n, "moving-hotspot" if seed else "uniform", seed=seed, alpha=1.5)
        full = dynamic_opt_restricted(inst, feasible_labellings(n, servers))
        assert full.value == pytest.approx(dynamic_opt_dp(inst).value, abs=TOL)


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(SHAPES), st.sampled_from(["uniform", "hotspot", "moving-hotspot", "phases", "zipf"]),
       st.integers(0, 10_000), st.sampled_from([0.5, 1.0, 2.0]))
def test_arc_bound_sits_between_opt_dyn_and_the_static_baselines(shape, pattern, seed, alpha):
    n, servers = shape
    inst = random_ring(n, servers, 10 * n, pattern, seed=seed, alpha=alpha)
    bound = dynamic_arc_bound(inst)
    check = check_ring_run(inst, bound)
    assert check.feasible and check.max_load_ratio <= 1 + TOL
    assert check.value == pytest.approx(bound.value, abs=TOL)
    assert dynamic_opt_dp(inst).value <= bound.value + TOL
    # static-best (best contiguous arcs in hindsight) is one path of the class; never-migrate another
    assert bound.value <= check_ring_run(inst, run_ring("static-best", inst)).value + TOL
    assert bound.value <= check_ring_run(inst, run_ring("never", inst)).value + TOL
    # with the static optimum's placement among the candidates it is at most OPT_static
    static, placement = static_opt_bruteforce(inst)
    assert dynamic_arc_bound(inst, extra=placement).value <= static + TOL


def test_arc_bound_moves_where_no_static_placement_is_free():
    # three phases, each avoided by a different rotation of two arcs of 3: OPT_dyn = 4 = two rotations
    inst = RingInstance(n=6, servers=2, requests=[0, 1, 3, 4] * 3 + [1, 2, 4, 5] * 3 + [0, 2, 3, 5] * 3)
    bound = dynamic_arc_bound(inst)
    assert bound.value == 4 == dynamic_opt_dp(inst).value
    assert static_opt_bruteforce(inst)[0] > 4


def test_restricted_dp_edge_cases_and_errors():
    inst = RingInstance(n=4, servers=2, requests=[1] * 5)
    assert dynamic_opt_restricted(RingInstance(n=4, servers=2, requests=[]), [[0, 1, 1, 0]]).value == 0
    assert dynamic_opt_restricted(inst, np.zeros((0, 4), dtype=int)).value == 5  # only the initial labelling
    assert dynamic_arc_bound(RingInstance(n=4, servers=1, requests=[0, 1, 2])).value == 0
    with pytest.raises(ValueError, match=r"candidates: shape \(1, 3\); expected \(m, n = 4\)"):
        dynamic_opt_restricted(inst, [[0, 1, 1]])
    with pytest.raises(ValueError, match=r"candidates\[1\]: labels \[0, 2, 1, 1\]; expected servers 0..1"):
        dynamic_opt_restricted(inst, [[0, 1, 1, 0], [0, 2, 1, 1]])
    overload = r"candidates\[0\]: server 1 holds 3 processes; expected at most capacity 2"
    with pytest.raises(ValueError, match=overload):
        dynamic_opt_restricted(inst, [[0, 1, 1, 1]])
    assert dynamic_opt_restricted(inst, [[0, 1, 1, 1]], capacity=3).value == 1  # move process 2 only
    with pytest.raises(ValueError, match="max_table"):
        dynamic_arc_bound(random_ring(8, 2, 400, "uniform", seed=0), max_table=100)
    with pytest.raises(ValueError, match="n = 6, servers = 4"):
        arc_labellings(6, 4)
