"""Migration cost alpha in the ring policies (paper 004; docs/algorithms/ring-partitioning.md A1).

* every line MTS keeps the work function of the metric ``alpha |x - y|`` (against a brute-force
  min-plus DP), its cost is ``hits + alpha * moves`` recomputed from its positions, and the WFA's
  O(1) move rule is the brute-force ``argmin g(x) + alpha |x - cur|``;
* the hitting game's thresholds and temperature scale with ``alpha d``;
* on the ring every paper policy (the package's variants and the component-based peer) migrates less as alpha grows
  (1, 4, 16), every run replays under the checker, and no process is logged twice in one step.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import clusteropt as co
from clusteropt.algorithms.ring.dynamic import mts_alpha
from clusteropt.algorithms.ring.hitting import LineHittingGame
from clusteropt.algorithms.ring.mts import WorkFunctionLine, make_line_mts
from clusteropt.algorithms.ring.mts.line import check_alpha
from clusteropt.instances.ring import random_ring
from clusteropt.verify.ring import check_ring_run

ALPHAS = [0.5, 1, 2.5, 4, 16]  # dyadic, so the float work function is exact


def _seqs(N, T, seed):
    rng = np.random.default_rng(seed)
    yield rng.integers(0, N, size=T).tolist()
    yield np.repeat(rng.integers(0, N, size=T // 9 + 1), 9)[:T].tolist()
    yield (np.cumsum(rng.choice([-1, 1], size=T)) % N).tolist()


def _brute_w(N, start, seq, alpha):
    """``w_t(x) = min_y w_{t-1}(y) + [y = e_t] + alpha |x - y|``, ``w_0 = alpha |x - start|``."""
    x = np.arange(N, dtype=float)
    D = alpha * np.abs(x[:, None] - x[None, :])
    w = alpha * np.abs(x - start)
    for e in seq:
        g = w.copy()
        g[e] += 1
        w = (g[:, None] + D).min(axis=0)
    return w


@pytest.mark.parametrize("name", ["wfa", "soft", "hst", "mix"])
@pytest.mark.parametrize("alpha", ALPHAS)
@pytest.mark.parametrize(("N", "start"), [(1, 0), (2, 1), (5, 2), (9, 0)])
def test_every_line_mts_keeps_the_alpha_work_function_and_pays_alpha_per_state(name, alpha, N, start):
    for i, seq in enumerate(_seqs(N, 300, N * 31 + start)):
        mts = make_line_mts(name)
        mts.reset(N, start, rng=i, alpha=alpha)
        pos, hits, moves = mts.position_, 0, 0  # the soft MTS starts at its coupling's quantile
        for e in seq:
            hits += pos == e  # a request is paid on the state the server is on when it arrives
            new = mts.serve(e)
            moves += abs(new - pos)
            pos = new
        w = mts.work_function()
        assert np.array_equal(w, _brute_w(N, start, seq, alpha))
        assert mts.opt_ == w.min()
        assert np.all(np.abs(np.diff(w)) <= alpha)  # alpha-Lipschitz
        assert (mts.hit_cost_, mts.move_cost_) == (hits, moves)
        assert mts.cost_ == pytest.approx(hits + alpha * moves)
        if float(alpha).is_integer():
            assert w.dtype == np.int64


def _brute_wfa(N, start, seq, alpha):
    """WFA by an O(N) argmin of ``g(x) + alpha |x - cur|`` (ties: nearest to cur, then left)."""
    x = np.arange(N)
    w = _brute_w(N, start, [], alpha)
    cur, out = start, []
    for e in seq:
        g = w.copy()
        g[e] += 1
        val = g + alpha * np.abs(x - cur)
        best = np.flatnonzero(val == val.min())
        cur = int(best[np.lexsort((best, np.abs(best - cur)))][0])
        w = (g[:, None] + alpha * np.abs(x[:, None] - x[None, :])).min(axis=0)
        out.append(cur)
    return out


@pytest.mark.parametrize("alpha", ALPHAS)
@pytest.mark.parametrize(("N", "start"), [(2, 0), (5, 2), (8, 7)])
def test_wfa_o1_rule_is_the_bruteforce_argmin_for_every_alpha(alpha, N, start):
    for seq in _seqs(N, 200, N + 7 * start):
        mts = WorkFunctionLine()
        mts.reset(N, start, alpha=alpha)
        assert [mts.serve(e) for e in seq] == _brute_wfa(N, start, seq, alpha)


@pytest.mark.parametrize("alpha", [1, 4, 16])
@pytest.mark.parametrize("N", [3, 8])
def test_wfa_cost_within_its_bound_for_alpha(alpha, N):
    """``cost <= (1 + 1/alpha)(2N - 1) OPT + const`` (WorkFunctionLine docstring), and the WFA waits
    about ``alpha`` hits before a move: moves <= hits / alpha + N."""
    for seq in _seqs(N, 3000, 5 * N + alpha):
        mts = WorkFunctionLine()
        mts.reset(N, 0, alpha=alpha)
        for e in seq:
            mts.serve(e)
        assert mts.cost_ <= (1 + 1 / alpha) * (2 * N - 1) * mts.opt_ + alpha * N * N + 2
        assert mts.move_cost_ <= mts.hit_cost_ / alpha + N


def test_alpha_is_checked_by_name():
    assert check_alpha(4.0) == 4 and isinstance(check_alpha(4.0), int)
    for bad in (0, -1, float("nan"), float("inf"), True, "2"):
        with pytest.raises(ValueError, match="alpha"):
            check_alpha(bad)
    with pytest.raises(ValueError, match="alpha"):
        WorkFunctionLine().reset(3, 0, alpha=0)
    # the ring's alpha may be 0 (free migrations); the line metric then uses one state's worth of a hit
    assert mts_alpha(0.0, 8) == check_alpha(1 / 8) and mts_alpha(4.0, 8) == 4


@pytest.mark.parametrize("alpha", [0.0, 0.25, 1.0, 3.0])
def test_hitting_game_scales_theta_and_temperature_with_alpha_d(alpha):
    g = LineHittingGame(31, 15, rng=0, alpha=alpha)
    scale = max(alpha * g.d, 1.0)
    assert g.theta == math.ceil(scale) and g.c == pytest.approx(scale)
    rng = np.random.default_rng(1)
    for e in rng.integers(10, 21, size=600).tolist():
        g.request(int(e))
        scale = max(alpha * g.d, 1.0)
        assert g.theta == math.ceil(scale) and g.c == pytest.approx(scale)
    assert g.cost == pytest.approx(g.hitting_cost + alpha * g.moving_cost)
    with pytest.raises(ValueError, match="alpha"):
        LineHittingGame(5, 2, alpha=-1)


def test_hitting_game_grows_later_as_alpha_grows():
    ranks = []
    for alpha in (1, 4, 16):
        g = LineHittingGame(63, 31, rng=3, alpha=alpha)
        for e in np.random.default_rng(2).integers(0, 63, size=4000).tolist():
            g.request(int(e))
        ranks.append(g.rank)
    assert ranks[0] > ranks[1] > ranks[2]


PAPER_AND_VARIANTS = ["dynamic", "dynamic-wfa", "dynamic-mix", "dynamic-soft", "static", "component"]


def _migrations(run):
    log = np.asarray(run.out["migrations"], dtype=np.int64).reshape(-1, 3)
    return log


@pytest.mark.parametrize("pattern", ["uniform", "moving-hotspot", "zipf"])
@pytest.mark.parametrize("policy", PAPER_AND_VARIANTS)
def test_every_policy_migrates_less_as_alpha_grows_and_logs_one_move_per_process_per_step(policy, pattern):
    """Mean migrations over 4 seeds at alpha 1, 4, 16 (one seed is noisy: static's re-draws after a
    growth can add a few); every run replays, with no process logged twice in one step."""
    counts = []
    for alpha in (1, 4, 16):
        total = 0
        for seed in range(4):
            inst = random_ring(16, 4, 1200, pattern, seed=seed, alpha=alpha)
            run = co.run(inst, policy, seed=seed)
            assert run.ok
            log = _migrations(run)
            chk = check_ring_run(inst, {"initial": inst.initial, "migrations": log},
                                 augmentation=run.costs["capacity"] / inst.k)
            assert chk.feasible and chk.noop_migrations == 0
            assert chk.value == pytest.approx(run.costs["total"])
            keys = log[:, 0] * inst.n + log[:, 1]
            assert np.unique(keys).size == keys.size  # one migration per process per step
            total += chk.n_migrations
        counts.append(total / 4)
    assert counts[0] > counts[1] > counts[2], counts
