"""Paper 004: the move LP, a lower bound on OPT_dyn that pays moved processes (:mod:`ring_move`, ours).

Its claim is that every labelling sequence within the capacity is a 0/1 point of its rows with
cost equal to the sequence's cost: checked on the DP's optimal schedules and on random schedules.
Its certified value lies below OPT_dyn and above the cut-set LP without min-move rows; the Pyomo
model and the arrays are one LP.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clusteropt.algorithms.ring.offline import (
    compress_requests,
    dynamic_opt_dp,
    feasible_labellings,
    schedule_cost,
)
from clusteropt.instances.ring import RingInstance, random_ring
from clusteropt.models.ring.cut import build_ring_cut_lp
from clusteropt.models.ring.move import (
    build_ring_move_lp,
    dynamic_move_lp_bound,
    move_lp_arrays,
    move_lp_point,
)
from clusteropt.solvers import solve
from clusteropt.verify.ring import box_lp_dual_bound

SHAPES = [(4, 2), (6, 2), (6, 3), (8, 2), (8, 4), (9, 3)]
PATTERNS = ["uniform", "hotspot", "moving-hotspot", "phases", "zipf"]


def _arrays(inst, cap):
    edges, weights, _ = compress_requests(inst.requests)
    y0 = (inst.initial != np.roll(inst.initial, -1)).astype(float)
    return move_lp_arrays(inst.n, cap, edges, weights, float(inst.alpha), y0)


def _assert_point(inst, cap, placements):
    cost, a, lower = _arrays(inst, cap)
    x = move_lp_point(inst, placements)
    assert ((a @ x) >= lower - 1e-9).all()
    edges, weights, _ = compress_requests(inst.requests)
    assert cost @ x == pytest.approx(schedule_cost(inst, placements, edges, weights))


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(SHAPES), st.sampled_from(PATTERNS), st.integers(0, 10_000),
       st.sampled_from([0.5, 1.0, 2.0]), st.booleans())
def test_every_schedule_is_a_point_of_the_lp_at_its_cost(shape, pattern, seed, alpha, augmented):
    n, servers = shape
    inst = random_ring(n, servers, 5 * n, pattern, seed=seed, alpha=alpha)
    cap = inst.k + 1 if augmented else inst.k
    _assert_point(inst, cap, dynamic_opt_dp(inst, capacity=cap).placements)
    # a random schedule that changes labelling anywhere, every labelling within the capacity
    rng = np.random.default_rng(seed)
    S = feasible_labellings(n, servers, cap)
    T = compress_requests(inst.requests)[0].size
    _assert_point(inst, cap, S[rng.integers(0, len(S), size=T)])


@settings(max_examples=25, deadline=None)
@given(st.sampled_from(SHAPES), st.sampled_from(PATTERNS), st.integers(0, 10_000), st.sampled_from([0.5, 1.0]))
def test_the_bound_lies_between_the_cut_set_lp_and_opt_dyn(shape, pattern, seed, alpha):
    n, servers = shape
    inst = random_ring(n, servers, 6 * n, pattern, seed=seed, alpha=alpha)
    bound = dynamic_move_lp_bound(inst)
    assert bound.value <= dynamic_opt_dp(inst).value + 1e-6
    assert bound.value == pytest.approx(bound.lp_value, abs=1e-5)  # the duals certify the optimum
    if inst.n_requests:
        cut_lp = solve(build_ring_cut_lp(inst, min_move=False)).objective
        assert bound.value >= cut_lp - 1e-5


def test_the_pyomo_model_is_the_array_lp():
    inst = random_ring(6, 3, 30, "moving-hotspot", seed=2)
    for cap in (2, 3):
        assert solve(build_ring_move_lp(inst, capacity=cap)).objective == pytest.approx(
            dynamic_move_lp_bound(inst, capacity=cap).lp_value, abs=1e-6)


def test_moving_a_cut_far_is_paid_by_the_processes():
    # n = 12 on 2 servers (k = 6), a hot arc 3 edges wide moving one edge every 10 requests: measured
    # here, OPT_dyn 12, the cut-set LP 7.0 (a cut moved any distance costs it alpha), the move LP 9.5
    inst = random_ring(12, 2, 120, "moving-hotspot", seed=0, width=3, step=10)
    opt = dynamic_opt_dp(inst).value
    cut_lp = solve(build_ring_cut_lp(inst, min_move=False)).objective
    move = dynamic_move_lp_bound(inst).value
    assert cut_lp + 2 <= move <= opt + 1e-6


def test_certificate_is_independent_of_the_duals():
    inst = random_ring(6, 2, 30, "hotspot", seed=1)
    cost, a, lower = _arrays(inst, inst.k)
    opt = dynamic_opt_dp(inst).value
    rng = np.random.default_rng(0)
    for _ in range(5):  # any non-negative multipliers give a value below OPT_dyn
        assert box_lp_dual_bound(cost, a, lower, rng.exponential(size=lower.size)) <= opt + 1e-9
    with pytest.raises(ValueError, match="multipliers: shape"):
        box_lp_dual_bound(cost, a, lower, np.ones(3))


def test_edge_cases_and_errors():
    empty = RingInstance(n=4, servers=2, requests=[])
    assert dynamic_move_lp_bound(empty).value == 0.0
    with pytest.raises(ValueError, match="servers = 1"):
        dynamic_move_lp_bound(RingInstance(n=4, servers=1, requests=[0]))
    inst = RingInstance(n=4, servers=2, requests=[1, 2])
    with pytest.raises(ValueError, match=r"capacity = 4; expected an integer in k..n-1 = 2..3"):
        dynamic_move_lp_bound(inst, capacity=4)
    with pytest.raises(ValueError, match="max_columns"):
        dynamic_move_lp_bound(inst, max_columns=10)
