"""The cut-set LP (``clusteropt.models.ring_cut``) and its certificate (``verify.ring.cut_lagrangian_bound``):
the Pyomo model and the arrays are the same LP, the certified bound never exceeds OPT_dyn, and the LP's 0/1
version is the DP over cut sets."""

from __future__ import annotations

import numpy as np
import pyomo.environ as pyo
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clusteropt.algorithms.ring.offline import _cut_dp, compress_requests, dynamic_cut_bound, dynamic_opt_value
from clusteropt.instances.ring import RingInstance, random_ring
from clusteropt.models.ring_cut import build_ring_cut_lp, cut_lp_arrays, dynamic_cut_lp_bound
from clusteropt.solvers import solve
from clusteropt.solvers.direct import run_highs
from clusteropt.solvers.result import NotOptimalError
from clusteropt.verify.ring import cut_lagrangian_bound

TOL = 1e-6
SHAPES = [(4, 2), (6, 2), (6, 3), (8, 2), (8, 4), (9, 3)]
PATTERNS = ["uniform", "hotspot", "moving-hotspot", "zipf", "phases"]


def _arrays_optimum(inst: RingInstance, cap: int) -> float:
    edges, weights, _ = compress_requests(inst.requests)
    init = np.asarray(inst.initial)
    cost, a, lower, upper = cut_lp_arrays(inst.n, cap, edges, weights, float(inst.alpha),
                                          (init != np.roll(init, -1)).astype(float))
    h, _, _ = run_highs(cost, np.zeros(cost.size), upper, a, lower, np.full(lower.size, np.inf), maximize=False)
    return float(h.getInfo().objective_function_value)


@pytest.mark.parametrize("pattern", PATTERNS)
@pytest.mark.parametrize(("n", "servers", "extra"), [(6, 2, 0), (8, 4, 1), (9, 3, 0)])
def test_the_pyomo_model_and_the_arrays_are_the_same_lp(pattern, n, servers, extra):
    inst = random_ring(n, servers, 5 * n, pattern, seed=3, alpha=1.5)
    cap = n // servers + extra
    m = build_ring_cut_lp(inst, capacity=cap)
    edges, _, _ = compress_requests(inst.requests)
    assert len(m.y) == len(m.d) == len(m.window) == len(m.move_up) == edges.size * n
    pyomo_value = solve(m).objective
    assert pyomo_value == pytest.approx(_arrays_optimum(inst, cap), abs=TOL)
    # one piece holding every request: the certified bound is the LP optimum (simplex duals; and the
    # default interior point without crossover, to its tolerance)
    assert dynamic_cut_lp_bound(inst, cap, options={}).value == pytest.approx(pyomo_value, abs=1e-6)
    assert dynamic_cut_lp_bound(inst, cap).value == pytest.approx(pyomo_value, rel=1e-4, abs=1e-4)


@settings(max_examples=30, deadline=None)
@given(st.sampled_from(SHAPES), st.sampled_from(PATTERNS), st.integers(0, 10_000), st.integers(0, 1),
       st.sampled_from([0.0, 0.5, 1.0, 3.0]), st.integers(1, 9), st.integers(0, 3))
def test_the_certified_bound_never_exceeds_the_lp_the_cut_dp_or_opt_dyn(shape, pattern, seed, extra, alpha, chunk,
                                                                        overlap):
    n, servers = shape
    inst = random_ring(n, servers, 6 * n, pattern, seed=seed, alpha=alpha)
    cap = min(n - 1, n // servers + extra)
    b = dynamic_cut_lp_bound(inst, cap, chunk=chunk, overlap=overlap, options={})
    assert b.value == pytest.approx(cut_lagrangian_bound(inst, b.multipliers, capacity=cap))
    assert (b.multipliers >= 0).all()
    lp = solve(build_ring_cut_lp(inst, capacity=cap)).objective
    assert b.value <= lp + TOL
    assert lp <= dynamic_cut_bound(inst, cap) + TOL <= dynamic_opt_value(inst, cap) + 2 * TOL


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(SHAPES), st.sampled_from(PATTERNS), st.integers(0, 10_000),
       st.sampled_from([0.5, 1.0, 2.0]), st.floats(0.0, 3.0))
def test_any_nonnegative_multipliers_certify_a_lower_bound(shape, pattern, seed, alpha, scale):
    """Weak duality: random multipliers, however poor, never give more than OPT_dyn."""
    n, servers = shape
    inst = random_ring(n, servers, 4 * n, pattern, seed=seed, alpha=alpha)
    T = compress_requests(inst.requests)[0].size
    lam = scale * np.random.default_rng(seed).random((T, n))
    assert cut_lagrangian_bound(inst, lam) <= dynamic_opt_value(inst) + TOL


@pytest.mark.parametrize("pattern", PATTERNS)
@pytest.mark.parametrize(("n", "servers", "extra"), [(6, 3, 0), (8, 4, 0), (9, 3, 1)])
def test_the_lp_with_binary_cuts_is_the_cut_set_dp_without_its_min_move_term(pattern, n, servers, extra):
    """With y binary the LP's rows are the DP's cut sets (three or more servers: no parity condition;
    K < n: the windows already forbid a single cut) and its cost the DP's alpha / 2 per change."""
    inst = random_ring(n, servers, 5 * n, pattern, seed=11, alpha=1.0)
    cap = n // servers + extra
    m = build_ring_cut_lp(inst, capacity=cap)
    for v in m.y.values():
        v.domain = pyo.Binary
    init = np.asarray(inst.initial)
    dp = _cut_dp(n, cap, init != np.roll(init, -1), np.asarray(inst.requests), 0.5, ring=True, servers=servers)
    assert solve(m).objective == pytest.approx(dp, abs=TOL)


def test_pieces_lose_little_on_a_longer_sequence():
    """Pieces of 40 compressed requests (overlap 10) against one piece, and both against OPT_dyn."""
    inst = random_ring(8, 4, 600, "moving-hotspot", seed=2)
    whole = dynamic_cut_lp_bound(inst, chunk=10_000, options={})
    pieces = dynamic_cut_lp_bound(inst, chunk=40, overlap=10, options={})
    assert pieces.piece_values.size > 5
    assert whole.value - 0.05 * whole.value <= pieces.value <= whole.value + TOL
    assert whole.value <= dynamic_opt_value(inst) + TOL


def test_bad_input_is_named():
    inst = RingInstance(n=4, servers=2, requests=[1, 1, 2])
    with pytest.raises(ValueError, match=r"multipliers has shape \(1, 4\); expected \(T', n\) = \(2, 4\)"):
        cut_lagrangian_bound(inst, np.zeros((1, 4)))
    lam = np.zeros((2, 4))
    lam[1, 3] = -0.5
    with pytest.raises(ValueError, match=r"multipliers\[1, 3\] = -0.5; expected a finite number >= 0"):
        cut_lagrangian_bound(inst, lam)
    lam[1, 3] = np.nan
    with pytest.raises(ValueError, match=r"multipliers\[1, 3\] = nan"):
        cut_lagrangian_bound(inst, lam)
    with pytest.raises(ValueError, match=r"capacity = 4; expected an integer in 1\.\.n-1"):
        cut_lagrangian_bound(inst, np.zeros((2, 4)), capacity=4)
    with pytest.raises(ValueError, match=r"capacity = 1; expected an integer in k\.\.n-1 = 2\.\.3"):
        dynamic_cut_lp_bound(inst, capacity=1)
    with pytest.raises(ValueError, match="capacity = 4"):
        build_ring_cut_lp(inst, capacity=4)
    with pytest.raises(ValueError, match="chunk = 0; expected an integer >= 1"):
        dynamic_cut_lp_bound(inst, chunk=0)
    with pytest.raises(ValueError, match="overlap = -1; expected an integer >= 0"):
        dynamic_cut_lp_bound(inst, overlap=-1)


def test_one_server_is_refused():
    inst = RingInstance(n=4, servers=1, requests=[1, 2])
    with pytest.raises(ValueError, match="servers = 1: one server holds every process"):
        dynamic_cut_lp_bound(inst)
    with pytest.raises(ValueError, match=r"capacity = 4 \(k\); expected an integer in 1\.\.n-1"):
        cut_lagrangian_bound(inst, np.zeros((2, 4)))


def test_a_piece_that_does_not_solve_raises():
    inst = random_ring(8, 4, 200, "uniform", seed=1)
    with pytest.raises(NotOptimalError, match=r"cut-set LP piece 0\.\.") as info:
        dynamic_cut_lp_bound(inst, time_limit=1e-9)
    assert not info.value.result.has_solution


def test_no_requests():
    inst = RingInstance(n=4, servers=2, requests=[])
    assert dynamic_cut_lp_bound(inst).value == 0.0 == cut_lagrangian_bound(inst, np.zeros((0, 4)))
