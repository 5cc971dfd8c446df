"""Per-frame decisions of paper 002: exact max-weight against brute force, Lemma 12, Examples 6 and 11."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from clusteropt.algorithms.realtime import (
    frame_masks,
    greedy_packing,
    max_weight_packing,
    packing_value,
    sqrt_greedy_packing,
)


def brute_force(weights, masks) -> float:
    best = 0.0
    n = len(weights)
    for k in range(n + 1):
        for subset in itertools.combinations(range(n), k):
            used, ok = 0, True
            for i in subset:
                if not masks[i] or masks[i] & used:
                    ok = False
                    break
                used |= masks[i]
            if ok:
                best = max(best, sum(weights[i] for i in subset))
    return best


def interference_free(chosen, masks) -> bool:
    used = 0
    for i in chosen:
        if not masks[i] or masks[i] & used:
            return False
        used |= masks[i]
    return True


def random_frame(rng, n_max=9, m_max=7):
    n, m = int(rng.integers(1, n_max + 1)), int(rng.integers(1, m_max + 1))
    jobs = rng.random((n, m)) < rng.uniform(0.1, 0.7)
    q = rng.exponential(1.0, n) * (rng.random(n) < 0.85)
    p = rng.uniform(0.3, 1.0, (n, m))
    weights = q * np.where(jobs, p, 1.0).prod(axis=1) * jobs.any(axis=1)
    return weights, frame_masks(jobs).tolist(), jobs


def test_examples_6_and_11():
    masks = [0b0011, 0b1110]  # A_1: W_1, W_2; A_2: W_2, W_3, W_4 (Fig. 1)
    weights = [0.48 * 0.8**2, 0.5 * 0.9**3]  # Q(1) = r
    assert weights[0] == pytest.approx(0.3072) and weights[1] == pytest.approx(0.3645)
    value, chosen = max_weight_packing(weights, masks)
    assert chosen == [1] and value == pytest.approx(0.3645)  # Example 6: Alg. 1 runs J_2
    keys = [weights[0] / math.sqrt(2), weights[1] / math.sqrt(3)]
    assert keys[0] == pytest.approx(0.2172, abs=5e-5) and keys[1] == pytest.approx(0.2104, abs=5e-5)
    assert sqrt_greedy_packing(weights, masks) == [0]  # Example 11: Alg. 2 runs J_1


def test_max_weight_equals_brute_force_on_random_frames():
    rng = np.random.default_rng(2002)
    for _ in range(1500):
        weights, masks, _ = random_frame(rng)
        value, chosen = max_weight_packing(weights, masks, fill=False)
        assert value == pytest.approx(brute_force(weights, masks), rel=1e-12, abs=1e-12)
        assert interference_free(chosen, masks)
        assert packing_value(weights, chosen) == pytest.approx(value, rel=1e-12, abs=1e-12)


def test_fill_keeps_the_value_and_only_adds_zero_weight_jobs():
    rng = np.random.default_rng(7)
    for _ in range(300):
        weights, masks, _ = random_frame(rng)
        v0, plain = max_weight_packing(weights, masks, fill=False)
        v1, filled = max_weight_packing(weights, masks, fill=True)
        assert v1 == v0 and set(plain) <= set(filled) and interference_free(filled, masks)
        assert all(weights[i] == 0 for i in set(filled) - set(plain))
        # maximal: nothing else fits
        used = 0
        for i in filled:
            used |= masks[i]
        assert all(not masks[i] or masks[i] & used for i in range(len(masks)) if i not in filled)


def test_lemma_12_sqrt_m_approximation_on_random_frames():
    rng = np.random.default_rng(12)
    worst = 1.0
    for _ in range(3000):
        weights, masks, jobs = random_frame(rng, n_max=10, m_max=8)
        opt = brute_force(weights, masks)
        chosen = sqrt_greedy_packing(weights, masks)
        assert interference_free(chosen, masks)
        apx = packing_value(weights, chosen)
        m = jobs.shape[1]
        assert opt <= math.sqrt(m) * apx + 1e-12, (weights, masks)
        if opt > 0:
            worst = min(worst, apx / opt)
    assert worst < 1.0  # the greedy is not always optimal: the check above is not vacuous


def test_lemma_12_is_tight_in_shape_on_a_star():
    # one job on all M workers, slightly heavier per sqrt than M single-worker jobs
    m = 9
    masks = [(1 << m) - 1] + [1 << j for j in range(m)]
    weights = [math.sqrt(m) * 1.001] + [1.0] * m
    apx = packing_value(weights, sqrt_greedy_packing(weights, masks))
    opt = brute_force(weights, masks)
    assert opt == pytest.approx(m) and apx == pytest.approx(math.sqrt(m) * 1.001)
    assert opt / apx == pytest.approx(math.sqrt(m) / 1.001)


def test_greedy_packing_skips_missing_and_conflicting_jobs():
    assert greedy_packing([0, 1, 2, 3], [0, 0b01, 0b11, 0b10]) == [1, 3]


def test_frame_masks_beyond_62_workers():
    rng = np.random.default_rng(0)
    jobs = rng.random((4, 70)) < 0.5
    got = frame_masks(jobs).tolist()
    assert got == [sum(1 << j for j in range(70) if jobs[i, j]) for i in range(4)]
    assert frame_masks(jobs[:, :10]).tolist() == [sum(1 << j for j in range(10) if jobs[i, j]) for i in range(4)]


@pytest.mark.parametrize(("weights", "masks", "match"), [
    ([1.0], [1, 2], "1 weights for 2 masks"),
    ([-1.0], [1], r"weights\[0\] = -1.0"),
    ([float("nan")], [1], r"weights\[0\] = nan"),
    ([1.0], [-3], r"masks\[0\] = -3"),
])
def test_bad_input_names_the_entry(weights, masks, match):
    with pytest.raises(ValueError, match=match):
        max_weight_packing(weights, masks)
    with pytest.raises(ValueError, match=match):
        sqrt_greedy_packing(weights, masks)
