"""Weighted pairwise dependent rounding, paper 003 (mlBroker) Alg. 3 (Round1_y / Round2_y).

Bars: (P1) the vector before the final round-up has the input as its mean (4 standard errors over
20000 seeded draws), and after it each mean lies in [v_i, v_i + P(i is last)]; with equal weights
and an integral sum of fractions the output itself has mean v; (P2) on every draw the weighted sum
rises by exactly w_L (1 - f_L) in [0, w_L); every entry is floor or ceil; steps <= m - 1; the
step rule is Alg. 3 lines 10-15 (known two-entry distribution); validation names index and bound.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clusteropt.rounding import DependentRoundingInfo, pairwise_dependent_round

N_DRAWS = 20000
TOL = 1e-9


def _vector(seed: int, n: int, *, equal_weights: bool = False):
    """Values in [0, 4) with some integral entries (exact and within tol) and weights in [0.5, 20)."""
    g = np.random.default_rng(seed)
    v = g.uniform(0.0, 4.0, n)
    v[g.choice(n, size=max(1, n // 5), replace=False)] = g.integers(0, 4, max(1, n // 5))
    w = np.ones(n) if equal_weights else g.uniform(0.5, 20.0, n)
    return v, w


def _draw(values, weights, n_draws: int, seed: int):
    """n_draws roundings from one Generator: outputs, last index (-1 if none), last fraction, steps."""
    gen = np.random.default_rng(seed)
    xs = np.empty((n_draws, len(values)), dtype=np.int64)
    last = np.full(n_draws, -1)
    frac = np.zeros(n_draws)
    steps = np.empty(n_draws, dtype=int)
    for d in range(n_draws):
        x, info = pairwise_dependent_round(values, weights, gen, return_info=True)
        xs[d] = x
        steps[d] = info.steps
        if info.last_index is not None:
            last[d], frac[d] = info.last_index, info.last_fraction
    return xs, last, frac, steps


CASES = {
    "n20-weighted": (*_vector(0, 20), 10),
    "n15-weighted": (*_vector(1, 15), 11),  # R = 15 data centers (Round1_y per job)
    "n20-weighted-b": (*_vector(2, 20), 12),
    "n15-equal": (*_vector(3, 15, equal_weights=True), 13),  # Round2_y: P_i for every data center
}


@pytest.fixture(scope="module", params=sorted(CASES))
def drawn(request):
    v, w, seed = CASES[request.param]
    return v, w, _draw(v, w, N_DRAWS, seed)


def _assert_mean(samples: np.ndarray, target: np.ndarray, what: str) -> None:
    """Column means of samples equal target within 4 standard errors (exactly if no variance)."""
    mean = samples.mean(axis=0)
    se = samples.std(axis=0, ddof=1) / math.sqrt(samples.shape[0])
    const = se == 0
    assert np.allclose(mean[const], target[const], rtol=0, atol=1e-12), what
    z = np.abs(mean - target)[~const] / se[~const]
    assert z.max(initial=0.0) < 4.0, f"{what}: worst z = {z.max():.2f} at {np.flatnonzero(~const)[z.argmax()]}"


# ---------------------------------------------------------------------------------------------
# (P1) marginals


def test_marginals_before_final_round_up(drawn):
    """E[Z] = v exactly, Z = the output with the last entry's round-up undone."""
    v, _, (xs, last, frac, _) = drawn
    z = xs.astype(float)
    has = last >= 0
    z[np.flatnonzero(has), last[has]] -= 1.0 - frac[has]
    _assert_mean(z, v, "E[Z] = values")


def test_marginals_after_final_round_up_are_bracketed(drawn):
    """values_i <= E[X_i] <= values_i + P[L = i] (within 4 standard errors on each side)."""
    v, _, (xs, last, _, _) = drawn
    n_draws, n = xs.shape
    mean = xs.mean(axis=0)
    se = np.maximum(xs.std(axis=0, ddof=1) / math.sqrt(n_draws), 1e-12)
    p_last = np.bincount(last[last >= 0], minlength=n) / n_draws
    assert np.all(mean >= v - 4 * se)
    assert np.all(mean <= v + p_last + 4 * se)
    never_last = p_last == 0  # the entries that are never rounded up at the end: exact P1
    assert never_last.any()
    _assert_mean(xs[:, never_last].astype(float), v[never_last], "E[X_i] for entries never last")


def test_equal_weights_with_integral_fraction_sum_has_exact_marginals():
    """Equal weights and fractions summing to an integer: no entry is ever left, E[X] = v."""
    v = np.array([0.3, 1.7, 2.0, 0.45, 3.25, 0.8, 0.5, 5.0, 0.1, 0.9])  # fractions sum to 5
    xs, last, _, steps = _draw(v, np.ones(v.size), N_DRAWS, 21)
    assert np.all(last == -1)
    assert np.all(xs.sum(axis=1) == 15)
    assert steps.max() <= 7  # 8 fractional entries
    _assert_mean(xs.astype(float), v, "E[X] = values")


def test_two_halves_are_anticorrelated():
    xs, last, _, _ = _draw([0.5, 0.5], [3.0, 3.0], 4000, 5)
    assert np.all(xs.sum(axis=1) == 1) and np.all(last == -1)
    assert abs(xs[:, 0].mean() - 0.5) < 4 * 0.5 / math.sqrt(4000)


def test_step_rule_of_alg3_on_two_entries():
    """Alg. 3 lines 10-15 on p = (0.3, 0.6), omega = (1, 2): Psi1 = 0.7, Psi2 = 0.3.

    W.p. Psi2 / (Psi1 + Psi2) = 0.3: p1 -> 1, p2 -> 0.6 - 0.7 / 2 = 0.25; w.p. 0.7: p1 -> 0,
    p2 -> 0.6 + 0.3 / 2 = 0.75.  Entry 2 is left either way and rounded up.
    """
    xs, last, frac, steps = _draw([0.3, 0.6], [1.0, 2.0], N_DRAWS, 8)
    assert np.all(steps == 1) and np.all(last == 1) and np.all(xs[:, 1] == 1)
    up = xs[:, 0] == 1
    assert np.allclose(frac[up], 0.25) and np.allclose(frac[~up], 0.75)
    assert abs(up.mean() - 0.3) < 4 * math.sqrt(0.3 * 0.7 / N_DRAWS)


# ---------------------------------------------------------------------------------------------
# (P2), floor/ceil, steps


def test_weighted_sum_rises_by_exactly_the_final_round_up(drawn):
    v, w, (xs, last, frac, _) = drawn
    diff = xs @ w - v @ w
    eps = 1e-12 * float(np.abs(v) @ w + w.sum())
    has = last >= 0
    assert np.all(np.abs(diff[~has]) <= eps)
    w_last = w[last[has]]
    assert np.all(diff[has] >= 0) and np.all(diff[has] < w_last)
    assert np.allclose(diff[has], w_last * (1.0 - frac[has]), rtol=0, atol=eps)
    assert np.all((frac[has] > TOL) & (frac[has] < 1 - TOL))


def test_each_entry_is_floor_or_ceil(drawn):
    v, _, (xs, _, _, _) = drawn
    lo, hi = np.floor(v), np.ceil(v)
    assert np.all((xs == lo) | (xs == hi))
    integral = v == lo
    assert np.all(xs[:, integral] == v[integral])


def test_steps_at_most_fractional_count_minus_one(drawn):
    v, _, (_, _, _, steps) = drawn
    m = int(np.sum(v != np.floor(v)))
    assert 1 <= steps.min() and steps.max() <= m - 1 < v.size


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(st.floats(0.0, 50.0), st.floats(1e-3, 1e3)), min_size=0, max_size=25),
    st.integers(0, 2**32 - 1),
)
def test_properties_on_arbitrary_vectors(pairs, seed):
    v = np.array([a for a, _ in pairs], dtype=float)
    w = np.array([b for _, b in pairs], dtype=float)
    x, info = pairwise_dependent_round(v, w, seed, return_info=True)
    assert x.dtype == np.int64 and x.shape == v.shape
    snapped = np.abs(v - np.rint(v)) <= TOL
    lo = np.where(snapped, np.rint(v), np.floor(v))
    assert np.all((x == lo) | (x == lo + 1))
    m = int((~snapped).sum())
    assert info.steps <= max(m - 1, 0)
    # exact up to the snapping within tol and floating-point rounding
    slack = TOL * float(w.sum()) + 1e-12 * float(np.abs(v) @ w + w.sum())
    diff = float(x @ w - v @ w)
    if info.last_index is None:
        assert abs(diff) <= slack
    else:
        assert not snapped[info.last_index]
        w_l = w[info.last_index]
        assert abs(diff - w_l * (1 - info.last_fraction)) <= slack
        assert -slack <= diff <= w_l * (1 - TOL) + slack


def test_values_above_one_keep_integer_parts():
    v = np.array([7.25, 12.5, 3.75, 100.5])
    for seed in range(50):
        x = pairwise_dependent_round(v, [1.0, 2.0, 3.0, 4.0], seed)
        assert np.all(x - np.floor(v) >= 0) and np.all(x - np.floor(v) <= 1)


# ---------------------------------------------------------------------------------------------
# edge cases, randomness, validation


def test_empty_input():
    x, info = pairwise_dependent_round([], [], 0, return_info=True)
    assert x.dtype == np.int64 and x.shape == (0,)
    assert info == DependentRoundingInfo(0, None, None)
    assert pairwise_dependent_round(np.array([])).shape == (0,)


def test_integral_input_unchanged_and_draws_nothing():
    gen = np.random.default_rng(4)
    before = gen.bit_generator.state
    v = [3.0, 0.0, 1.0 + 1e-11, 2.0 - 1e-11, -1e-12, 12.0]
    x, info = pairwise_dependent_round(v, [1.0, 2.0, 3.0, 4.0, 5.0, 6.0], gen, return_info=True)
    assert x.tolist() == [3, 0, 1, 2, 0, 12] and x.dtype == np.int64
    assert info == DependentRoundingInfo(0, None, None)
    assert gen.bit_generator.state == before


def test_single_fractional_entry_is_rounded_up_deterministically():
    gen = np.random.default_rng(4)
    before = gen.bit_generator.state
    x, info = pairwise_dependent_round([2.0, 1.01, 4.0], [1.0, 1.0, 1.0], gen, return_info=True)
    assert x.tolist() == [2, 2, 4]
    assert info.steps == 0 and info.last_index == 1 and info.last_fraction == pytest.approx(0.01)
    assert gen.bit_generator.state == before


@pytest.mark.parametrize("v", [[0.5, 0.5, 0.5, 0.5], [0.1, 0.2, 0.3, 0.4], [0.9, 2.5, 0.999, 3.0, 0.01]])
def test_randomness_used_depends_only_on_fractional_count(v):
    m = sum(1 for a in v if a != math.floor(a))
    gen, ref = np.random.default_rng(9), np.random.default_rng(9)
    pairwise_dependent_round(v, np.arange(1.0, len(v) + 1), gen)
    ref.random(3 * (m - 1))
    assert gen.bit_generator.state == ref.bit_generator.state


def test_reproducible_and_rng_kinds():
    v, w = _vector(7, 20)
    a = pairwise_dependent_round(v, w, 123)
    assert np.array_equal(a, pairwise_dependent_round(v, w, 123))
    assert np.array_equal(a, pairwise_dependent_round(v, w, np.random.default_rng(123)))
    gen = np.random.default_rng(5)
    seq = [pairwise_dependent_round(v, w, gen) for _ in range(5)]
    gen = np.random.default_rng(5)
    assert all(np.array_equal(s, pairwise_dependent_round(v, w, gen)) for s in seq)
    assert len({s.tobytes() for s in seq}) > 1  # a Generator is advanced between calls
    state = np.random.get_state()  # noqa: NPY002 - checking that the legacy global state is untouched
    x = pairwise_dependent_round(v, w, None)
    assert np.all((x == np.floor(v)) | (x == np.ceil(v)))
    after = np.random.get_state()  # noqa: NPY002
    assert all(np.array_equal(s, t) if isinstance(s, np.ndarray) else s == t for s, t in zip(state, after))


def test_default_weights_are_ones():
    v = [0.2, 1.4, 0.9, 2.5, 0.0, 0.33]
    assert np.array_equal(pairwise_dependent_round(v, None, 3), pairwise_dependent_round(v, np.ones(6), 3))


def test_tolerance_keyword():
    assert pairwise_dependent_round([1 + 1e-7, 0.0], tol=1e-6).tolist() == [1, 0]
    x, info = pairwise_dependent_round([1 + 1e-7, 0.0], tol=0.0, return_info=True)
    assert x.tolist() == [2, 0] and info.last_index == 0  # fractional now, alone, rounded up
    with pytest.raises(ValueError, match=r"tol = 0\.5; expected 0 <= tol < 0\.5"):
        pairwise_dependent_round([0.5], tol=0.5)
    with pytest.raises(ValueError, match="tol = -1"):
        pairwise_dependent_round([0.5], tol=-1)


@pytest.mark.parametrize(
    ("values", "weights", "pattern"),
    [
        ([0.5, 0.2, -0.3], [1, 1, 1], r"values\[2\] = -0\.3; expected a finite number >= 0"),
        ([0.5, float("nan")], [1, 1], r"values\[1\] = nan; expected a finite number >= 0"),
        ([float("inf"), 0.5], [1, 1], r"values\[0\] = inf; expected a finite number"),
        ([-1.0, -2.0, 0.5], [1, 1, 1], r"values\[0\] = -1\.0; .*\(1 more such entries\)"),
        ([0.5, 0.5], [1.0, 0.0], r"weights\[1\] = 0\.0; expected a finite number > 0"),
        ([0.5, 0.5, 0.1], [1.0, 2.0, -3.0], r"weights\[2\] = -3\.0; expected a finite number > 0"),
        ([0.5, 0.5], [float("inf"), 1.0], r"weights\[0\] = inf; expected a finite number > 0"),
        ([0.5, 0.5], [1.0, float("nan")], r"weights\[1\] = nan; expected a finite number > 0"),
        ([0.5, 0.5, 0.5], [1.0, 1.0], r"weights has 2 entries but values has 3; expected one weight per value"),
        ([[0.5, 0.5]], [1.0, 1.0], r"values has shape \(1, 2\); expected a 1-D array"),
        (0.5, None, r"values has shape \(\); expected a 1-D array"),
        (["a", "b"], [1.0, 1.0], r"values = \['a', 'b'\]; expected a 1-D array of real numbers"),
        ([0.5], [[1.0]], r"weights has shape \(1, 1\); expected a 1-D array"),
    ],
)
def test_bad_input_names_argument_index_and_expectation(values, weights, pattern):
    with pytest.raises(ValueError, match=pattern):
        pairwise_dependent_round(values, weights, 0)


def test_solver_noise_below_zero_counts_as_zero():
    assert pairwise_dependent_round([-5e-10, 1.0], [1.0, 1.0], 0).tolist() == [0, 1]
