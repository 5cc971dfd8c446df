"""Paper 004: lower bounds on OPT_dyn: the window bound (:func:`dynamic_window_bound`) with its cut
relaxation, and the DP over cut sets (:func:`dynamic_cut_bound`).

Checked against brute force: :func:`gap_cut` is the cheapest edge set with circular gaps <= the
capacity (enumerated) and never above the cheapest capacity-feasible labelling (enumerated); the
window bound never exceeds the exact OPT_dyn of the DP at the same capacity, on random and on
adversarial tiny instances, and each of its windows is re-derived here from its end points.  The
cut-set DP lies between its definition enumerated here (every edge set, a full distance matrix)
without and with the min-move term, equals it on separated arcs, and never exceeds the exact OPT_dyn.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clusteropt.algorithms.ring.offline import (
    dynamic_cut_bound,
    dynamic_opt_value,
    dynamic_window_bound,
    feasible_labellings,
    gap_cut,
    static_opt_bruteforce,
)
from clusteropt.instances.ring import RingInstance, random_ring

TOL = 1e-9


def _gap_cut_bruteforce(w, cap):
    n = len(w)
    if cap >= n:
        return 0.0
    best = np.inf
    for size in range(1, n + 1):
        for cuts in itertools.combinations(range(n), size):
            gaps = np.diff(np.r_[cuts, cuts[0] + n])
            if gaps.max() <= cap:
                best = min(best, float(sum(w[e] for e in cuts)))
    return best


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 9), min_size=2, max_size=9), st.integers(1, 9))
def test_gap_cut_is_the_cheapest_edge_set_with_short_gaps(w, cap):
    assert gap_cut(w, cap) == pytest.approx(_gap_cut_bruteforce(w, cap))


@settings(max_examples=40, deadline=None)
@given(st.sampled_from([(4, 2), (6, 2), (6, 3), (8, 2), (8, 4), (9, 3)]), st.integers(0, 1),
       st.lists(st.integers(0, 9), min_size=9, max_size=9))
def test_gap_cut_never_exceeds_the_cheapest_labelling(shape, extra, w):
    n, servers = shape
    cap = n // servers + extra
    w = np.asarray(w[:n], dtype=float)
    S = feasible_labellings(n, servers, cap)
    exact = float(((S != np.roll(S, -1, axis=1)) @ w).min())
    assert gap_cut(w, cap) <= exact + TOL


def test_gap_cut_refuses_a_capacity_below_one():
    with pytest.raises(ValueError, match="capacity = 0"):
        gap_cut([1, 2, 3], 0)


def _check_windows(inst, b):
    """Re-derive every window's bound from its end points (an exact min over labellings)."""
    req = np.asarray(inst.requests)
    starts = np.r_[0, b.ends[:-1]]
    assert b.ends[-1] == len(req) or len(req) == 0
    assert np.all(np.diff(np.r_[0, b.ends]) > 0)
    S = feasible_labellings(inst.n, inst.servers, b.capacity)
    cut = S != np.roll(S, -1, axis=1)
    init = np.asarray(inst.initial)
    for i, (s, t) in enumerate(zip(starts, b.ends, strict=True)):
        counts = np.bincount(req[s:t], minlength=inst.n).astype(float)
        stay = float(counts @ (init != np.roll(init, -1))) if i == 0 else float((cut @ counts).min())
        assert b.bounds[i] <= min(b.min_move, stay) + TOL  # each window's claim holds exactly
        if i < len(b.ends) - 1:
            assert b.bounds[i] == b.min_move
    assert b.value == pytest.approx(b.bounds.sum())


@settings(max_examples=40, deadline=None)
@given(st.sampled_from([(4, 2), (6, 2), (6, 3), (8, 2), (8, 4)]),
       st.sampled_from(["uniform", "hotspot", "moving-hotspot", "zipf", "phases"]),
       st.integers(0, 10_000), st.integers(0, 1), st.sampled_from([0.5, 1.0, 3.0]))
def test_window_bound_never_exceeds_the_dynamic_optimum(shape, pattern, seed, extra, alpha):
    n, servers = shape
    inst = random_ring(n, servers, 12 * n, pattern, seed=seed, alpha=alpha)
    cap = n // servers + extra
    b = dynamic_window_bound(inst, cap)
    assert b.value <= dynamic_opt_value(inst, cap) + TOL
    _check_windows(inst, b)


@pytest.mark.parametrize("pattern", ["uniform", "moving-hotspot", "phases"])
def test_window_bound_below_opt_dyn_below_opt_static(pattern):
    inst = random_ring(9, 3, 144, pattern, seed=3)
    b = dynamic_window_bound(inst)
    opt = dynamic_opt_value(inst)
    static, _ = static_opt_bruteforce(inst)
    assert b.value <= opt + TOL <= static + 2 * TOL
    assert b.value > 0.5 * opt  # a bound worth reporting (0.70-0.83 on these three)


def test_window_bound_min_move():
    inst = RingInstance(n=6, servers=3, requests=[1] * 7, alpha=1.5)  # edge 1 is cut initially
    assert dynamic_window_bound(inst).min_move == 3.0      # every server full: a swap at least
    assert dynamic_window_bound(inst, 3).min_move == 1.5   # room: one process may move
    assert dynamic_window_bound(inst, 6).value == 1.5      # one server may hold all: later windows cost 0


def test_window_bound_edge_cases():
    empty = RingInstance(n=4, servers=2, requests=[])
    assert dynamic_window_bound(empty).value == 0.0
    free = RingInstance(n=4, servers=2, requests=[1] * 9, alpha=0)
    assert dynamic_window_bound(free).value == 0.0 == dynamic_opt_value(free)
    # requests only on edges the initial arcs do not cut: the first window never closes
    quiet = RingInstance(n=8, servers=2, requests=[0, 1, 2] * 20)
    b = dynamic_window_bound(quiet)
    assert b.value == 0.0 and b.ends.tolist() == [60]
    with pytest.raises(ValueError, match="expected >= k"):
        dynamic_window_bound(quiet, capacity=3)


def _cut_bound_bruteforce(inst, cap, block=None, min_move=0.0):
    """The cut-set DP of :func:`dynamic_cut_bound` by enumeration: every edge set of the whole ring
    tested against the docstring's conditions one by one (with ``block``: only the windows of
    ``cap`` edges inside one of the arcs), and a full matrix of ``alpha / 2 |C xor C'|`` (with
    ``min_move``: ``max(min_move, alpha / 2 |C xor C'|)`` for a change)."""
    n, ns = inst.n, inst.servers
    if block is not None and block < n:
        q = -(-n // block)
        sizes = [n // q + (i < n % q) for i in range(q)]
        arcs = np.repeat(np.arange(q), sizes)  # arc of each edge
    sets = []
    for size in range(n + 1):
        for cuts in itertools.combinations(range(n), size):
            cut = np.isin(np.arange(n), cuts)
            if block is not None and block < n:  # every window of cap edges inside one arc has a cut
                ok = all(cut[e0:e0 + cap].any() for e0 in range(n - cap + 1)
                         if arcs[e0] == arcs[e0 + cap - 1])
            elif size == 0:
                ok = cap >= n
            elif size == 1:
                ok = False
            else:
                ok = np.diff(np.r_[cuts, cuts[0] + n]).max() <= cap and ns > 1 and not (ns == 2 and size % 2)
            if ok:
                sets.append(cut)
    C = np.array(sets)
    init = np.asarray(inst.initial)
    start = init != np.roll(init, -1)
    w = np.where((C == start).all(axis=1), 0.0, np.inf)  # the initial labelling's cut set
    move = 0.5 * inst.alpha * (C[:, None, :] != C[None, :, :]).sum(axis=2)
    move = np.where(move > 0, np.maximum(move, min_move), 0.0)
    for e in np.asarray(inst.requests):
        w = (w[:, None] + move).min(axis=0) + C[:, e]
    return float(w.min())


@settings(max_examples=40, deadline=None)
@given(st.sampled_from([(4, 2), (6, 2), (6, 3), (8, 2), (8, 4), (9, 3)]),
       st.sampled_from(["uniform", "hotspot", "moving-hotspot", "zipf", "phases"]),
       st.integers(0, 10_000), st.integers(0, 2), st.sampled_from([0.0, 0.5, 1.0, 3.0]))
def test_cut_bound_is_the_cut_set_dp_and_never_exceeds_the_dynamic_optimum(shape, pattern, seed, extra, alpha):
    n, servers = shape
    inst = random_ring(n, servers, 6 * n, pattern, seed=seed, alpha=alpha)
    cap = min(n, n // servers + extra)
    value = dynamic_cut_bound(inst, cap)
    # between the DP without the min-move term and the DP with max(m, alpha / 2 |C xor C'|) per change
    min_move = alpha * (2.0 if n >= servers * cap else 1.0)
    assert _cut_bound_bruteforce(inst, cap) - TOL <= value
    assert value <= _cut_bound_bruteforce(inst, cap, None, min_move) + TOL
    assert value <= dynamic_opt_value(inst, cap) + TOL
    # the arcs' separated DPs (no min-move term): their definition, and below the whole ring's
    block = max(1, n // 2 - extra)
    separated = dynamic_cut_bound(inst, cap, block=block)
    assert separated == pytest.approx(_cut_bound_bruteforce(inst, cap, block))
    assert separated <= value + TOL


@pytest.mark.parametrize("pattern", ["uniform", "hotspot", "moving-hotspot", "phases", "zipf"])
def test_cut_bound_exact_when_moving_never_pays(pattern):
    """With alpha / 2 above the whole sequence's cost no solution moves: the bound, OPT_dyn and the
    initial placement's cost coincide."""
    base = random_ring(8, 4, 64, pattern, seed=5)
    inst = RingInstance(n=8, servers=4, requests=base.requests, alpha=2.0 * 64 + 2)
    init = np.asarray(inst.initial)
    stay = float(inst.request_counts() @ (init != np.roll(init, -1)))
    assert dynamic_cut_bound(inst) == stay == dynamic_opt_value(inst)


def test_cut_bound_against_the_window_bound():
    """Both are lower bounds; on these instances the cut-set DP is the larger, within 10% of OPT_dyn."""
    values = {}
    for pattern in ["uniform", "hotspot", "phases"]:
        inst = random_ring(9, 3, 144, pattern, seed=3)
        opt = dynamic_opt_value(inst)
        cut, window = dynamic_cut_bound(inst), dynamic_window_bound(inst).value
        assert window <= cut <= opt + TOL
        assert cut >= 0.9 * opt
        values[pattern] = (window, cut, opt)
    assert values["uniform"] == (25.0, 34.5, 35.0) and values["phases"] == (29.0, 33.0, 35.0)


def test_cut_bound_edge_cases():
    assert dynamic_cut_bound(RingInstance(n=4, servers=2, requests=[])) == 0.0
    assert dynamic_cut_bound(RingInstance(n=4, servers=2, requests=[1] * 9, alpha=0)) == 0.0
    # capacity 6 lets cut set {3, 5} hold: un-cutting edge 1 is one status change (alpha / 2), but a
    # change of labelling moves a process at least (alpha = 1.5), OPT_dyn's one move; without the
    # min-move term (blocks) the bound is alpha / 2
    room = RingInstance(n=6, servers=3, requests=[1] * 7, alpha=1.5)
    assert dynamic_cut_bound(room, capacity=6) == 1.5 == dynamic_opt_value(room, capacity=6)
    assert dynamic_cut_bound(room, capacity=6, block=3) == 0.75
    with pytest.raises(ValueError, match=r"n = 16 edges: 2\^16 cut sets; more than max_edges = 12; pass block"):
        dynamic_cut_bound(RingInstance(n=16, servers=4, requests=[1]), max_edges=12)
    with pytest.raises(ValueError, match="block = 14 edges"):
        dynamic_cut_bound(RingInstance(n=16, servers=4, requests=[1]), block=14, max_edges=12)
    with pytest.raises(ValueError, match="block = 0; expected an integer >= 1"):
        dynamic_cut_bound(RingInstance(n=16, servers=4, requests=[1]), block=0)
    big = RingInstance(n=16, servers=4, requests=[1] * 3)
    assert dynamic_cut_bound(big, block=16) == dynamic_cut_bound(big, block=40) == dynamic_cut_bound(big)
    with pytest.raises(ValueError, match="expected >= k"):
        dynamic_cut_bound(RingInstance(n=8, servers=2, requests=[1]), capacity=3)
