"""Paper 004, Sec. 4: smooth minimum, hitting game with interval growing, the static ring algorithm."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy import stats

from clusteropt.algorithms.ring.hitting import LineHittingGame
from clusteropt.algorithms.ring.offline import line_hitting_static_opt
from clusteropt.algorithms.ring.smoothmin import cdf_position, line_w1, smin_c, smin_c_grad
from clusteropt.algorithms.ring.static import StaticRing
from clusteropt.instances.ring import RingInstance, random_ring
from clusteropt.online.ring import run_ring
from clusteropt.verify.ring import check_ring_run

vectors = arrays(np.float64, st.integers(1, 12), elements=st.floats(-50, 50))
temps = st.floats(0.1, 20)


# -- smooth minimum (Appendix A; docs/algorithms/ring-partitioning.md A3) ----------------------------------

@settings(max_examples=200, deadline=None)
@given(vectors, temps)
def test_smin_bounds(x, c):
    s = smin_c(x, c)
    assert x.min() - c * math.log(x.size) - 1e-9 <= s <= x.min() + 1e-9


@settings(max_examples=200, deadline=None)
@given(vectors, temps)
def test_smin_gradient_is_softmin_and_matches_finite_differences(x, c):
    p = smin_c_grad(x, c)
    assert np.all(p >= 0) and math.isclose(p.sum(), 1.0, rel_tol=1e-12)
    h = 1e-6 * c
    for i in range(x.size):
        y = x.copy()
        y[i] += h
        assert (smin_c(y, c) - smin_c(x, c)) / h == pytest.approx(p[i], abs=1e-4)


@settings(max_examples=200, deadline=None)
@given(vectors, temps, st.data())
def test_smin_increase_pays_for_hitting_and_distribution_moves_little(x, c, data):
    y = data.draw(arrays(np.float64, x.size, elements=st.floats(0, 1)))
    y = y * c  # y in [0, c]^d
    p, q = smin_c_grad(x, c), smin_c_grad(x + y, c)
    assert smin_c(x + y, c) - smin_c(x, c) >= (1 - 1 / math.e) * float(p @ y) - 1e-9
    assert np.abs(q - p).sum() <= 2 / c * float(p @ y) + 1e-9


# -- CDF coupling (docs/algorithms/ring-partitioning.md A4) -----------------------------

def test_cdf_coupling_marginal_is_p():
    rng = np.random.default_rng(0)
    p = np.array([0.05, 0.3, 0.1, 0.25, 0.3])
    N = 20_000
    pos = cdf_position(p, 1.0 - rng.random(N))
    observed = np.bincount(pos, minlength=p.size)
    assert stats.chisquare(observed, N * p).pvalue > 1e-3


def _exact_coupled_move(p, q):
    """E|pos_p(U) - pos_q(U)| integrated exactly over U (piecewise constant between CDF values)."""
    br = np.unique(np.concatenate([[0.0], np.cumsum(p), np.cumsum(q), [1.0]]).clip(0, 1))
    mid = (br[:-1] + br[1:]) / 2
    return float((np.abs(cdf_position(p, mid) - cdf_position(q, mid)) * np.diff(br)).sum())


@settings(max_examples=100, deadline=None)
@given(arrays(np.float64, st.integers(1, 10), elements=st.floats(0.01, 1)), st.data())
def test_cdf_coupling_expected_move_equals_w1(a, data):
    b = data.draw(arrays(np.float64, a.size, elements=st.floats(0.01, 1)))
    p, q = a / a.sum(), b / b.sum()
    assert _exact_coupled_move(p, q) == pytest.approx(line_w1(p, q), abs=1e-9)


def test_cdf_coupling_expected_move_sampled():
    rng = np.random.default_rng(1)
    p, q = smin_c_grad([0, 1, 2, 0, 3], 1.0), smin_c_grad([2, 1, 0, 0, 3], 1.0)
    u = 1.0 - rng.random(50_000)
    moves = np.abs(cdf_position(p, u) - cdf_position(q, u))
    assert abs(moves.mean() - line_w1(p, q)) < 5 * moves.std() / math.sqrt(u.size)


# -- the hitting game (Sec. 4.1) -----------------------------------------------------------------------

def test_game_position_is_the_coupling_of_the_softmin():
    """The walked position always equals cdf_position(grad smin_c(r_I), U) recomputed from scratch."""
    rng = np.random.default_rng(2)
    for ring in (False, True):
        g = LineHittingGame(41, 20, ring=ring, max_edges=20, rng=3)
        for e in (20 + rng.integers(-12, 13, 5000)).tolist():
            g.request(e % 41)
            p = smin_c_grad(g.counts[g.edges()], g.c)
            assert g.position == g.edges()[cdf_position(p, g.u)]


def test_game_marginal_position_distribution_is_softmin():
    """Over many independent games (U draws) on one sequence the position is distributed as p."""
    seq = [3, 3, 2, 4, 3, 1, 5, 2, 0, 6, 3, 4, 4, 2, 1, 3, 5, 0, 6, 2] * 3
    games = [LineHittingGame(7, 3, rng=s) for s in range(3000)]
    for g in games:
        for e in seq:
            g.request(e)
    g0 = games[0]
    assert all(g.d == g0.d and g.left == g0.left for g in games)
    p = g0.distribution()
    observed = np.bincount([g.position - g0.left for g in games], minlength=g0.d)
    keep = p * len(games) >= 5
    expected = p * len(games)
    observed = np.append(observed[keep], observed[~keep].sum())
    expected = np.append(expected[keep], expected[~keep].sum())
    if expected[-1] == 0:
        observed, expected = observed[:-1], expected[:-1]
    assert stats.chisquare(observed, expected).pvalue > 1e-3


def test_interval_growth_rule():
    g = LineHittingGame(101, 50, rng=0)
    assert g.d == 1 and g.rank == 0 and not g.ready
    step = g.request(50)
    assert step.hit == 1 and step.grew == 1 and g.d == 3    # grows right after its first hit
    lengths = [g.d]
    while not g.final:
        lo, hi = g.interval()
        theta = g.theta
        for e in range(lo, hi + 1):                           # every edge up to theta(I) = d requests
            while g.counts[e] < theta:
                g.request(e)
        lengths.append(g.d)
    assert lengths == [3, 7, 15, 31, 63, 101]                  # 1, 3, 7, 15, ... capped by the line
    capped = LineHittingGame(101, 50, max_edges=10, rng=0)
    capped.request(50)
    for _ in range(3):
        lo, hi = capped.interval()
        for e in range(lo, hi + 1):
            while capped.counts[e] < capped.theta:
                capped.request(e)
    assert capped.d == 10 and capped.final


@pytest.mark.parametrize("N", [15, 63])
@pytest.mark.parametrize("kind", ["uniform", "local", "same"])
def test_hitting_cost_is_log_competitive_with_static_opt(N, kind):
    rng = np.random.default_rng(N)
    e0, T = N // 2, 2000
    if kind == "uniform":
        req = rng.integers(0, N, T)
    elif kind == "local":
        req = np.where(rng.random(T) < 0.8, e0 + rng.integers(-3, 4, T), rng.integers(0, N, T))
    else:
        req = np.full(T, e0)
    costs = []
    for seed in range(5):
        g = LineHittingGame(N, e0, rng=seed)
        for e in req.tolist():
            g.request(e)
        assert g.cost == g.hitting_cost + g.moving_cost
        costs.append(g.cost)
    opt = line_hitting_static_opt(g.counts, e0)
    assert np.mean(costs) <= 4 * math.log2(N) * opt


# -- the static ring algorithm (Sec. 4.2) --------------------------------------------------------------

def _check_structure(a: StaticRing) -> None:
    """Invariants: cuts = positions of the active intervals; colour clusters on their server."""
    assert a.cuts_ == sorted({c for c, alive in zip(a.cut_of_, a.alive_) if alive})
    assert set(a.slices_) == (set(a.cuts_) if a.cuts_ else {-1})
    for key, (cl, _home) in a.slices_.items():
        procs = a._slice_procs(key)
        if cl >= 0:
            assert (a.state_.server_of[procs] == cl).all()
            assert 2 * np.bincount(a.colour_[procs], minlength=a.servers_)[cl] > procs.size


def _replay_loads(inst: RingInstance, migrations: np.ndarray) -> int:
    """Max server load after every step, replaying the migration log with a plain loop."""
    server = np.array(inst.initial)
    load = np.bincount(server, minlength=inst.servers)
    top = int(load.max())
    i, M = 0, len(migrations)
    for t in range(-1, inst.n_requests):
        while i < M and migrations[i, 0] == t:
            _, v, s = migrations[i]
            load[server[v]] -= 1
            load[s] += 1
            server[v] = s
            i += 1
        top = max(top, int(load.max()))
    assert i == M
    return top


CASES = [
    ("contiguous-uniform", dict(n=64, servers=4), "uniform", False),
    ("contiguous-hotspot", dict(n=64, servers=8), "hotspot", False),
    ("random-init-zipf", dict(n=60, servers=5), "zipf", True),
    ("random-init-phases", dict(n=48, servers=3), "phases", True),
]


@pytest.mark.parametrize(("label", "shape", "pattern", "shuffled"), CASES, ids=[c[0] for c in CASES])
def test_static_runs_are_logged_feasible_and_within_the_promise(label, shape, pattern, shuffled):
    inst = random_ring(shape["n"], shape["servers"], 4000, pattern, seed=7)
    if shuffled:
        k = inst.k
        init = np.random.default_rng(3).permutation(np.repeat(np.arange(inst.servers), k))
        inst = RingInstance(n=inst.n, servers=inst.servers, requests=inst.requests, initial=init)
    run = run_ring("static", inst, seed=11, batch=997)
    check = check_ring_run(inst, run)
    assert check.feasible, check.violations[:3]
    assert run.augmentation == StaticRing().augmentation
    assert _replay_loads(inst, run.migrations) <= run.augmentation * inst.k
    # the algorithm's own accounting agrees with the replay
    assert run.costs["communication"] == check.communication_cost
    migrated = sum(run.costs[key] for key in ("moving", "merging", "colour_join", "rebalancing"))
    assert migrated == len(run.migrations) == check.migration_cost


def test_static_structure_invariants_step_by_step():
    rng = np.random.default_rng(4)
    for trial in range(12):
        servers = int(rng.choice([2, 3, 4, 6]))
        k = int(rng.integers(2, 8))
        n = servers * k
        inst = random_ring(n, servers, 1500, ["uniform", "hotspot", "zipf"][trial % 3], seed=trial)
        if trial % 2:
            init = rng.permutation(np.repeat(np.arange(servers), k))
            inst = RingInstance(n=n, servers=servers, requests=inst.requests, initial=init)
        a = StaticRing(cluster_cap=1.0 + trial % 2)
        a.start(inst, np.random.default_rng(trial))
        for t, e in enumerate(inst.requests.tolist()):
            a.state_.now = t
            a.serve(e)
            assert a.state_.load.max() <= a.augmentation * k
            if t % 50 == 0:
                _check_structure(a)
        _check_structure(a)


def test_static_same_seed_same_run():
    inst = random_ring(48, 4, 3000, "hotspot", seed=2)
    r1, r2 = run_ring("static", inst, seed=5), run_ring("static", inst, seed=5)
    assert np.array_equal(r1.migrations, r2.migrations) and r1.costs == r2.costs
    r3 = run_ring("static", inst, seed=6)
    assert r3.params == r1.params


def test_static_same_edge_forever_costs_little():
    """Always the same (initially cut) edge: the cut leaves it, the cost stops growing (~log)."""
    n, servers = 64, 4
    totals = []
    for T in (500, 5000, 20000):
        inst = RingInstance(n=n, servers=servers, requests=np.full(T, 15))
        run = run_ring("static", inst, seed=0)
        check = check_ring_run(inst, run)
        assert check.feasible
        totals.append(check.value)
    assert totals[-1] <= 4 * inst.k * math.log2(n)
    assert totals[-1] - totals[0] <= 0.01 * (20000 - 500)


def test_static_single_server_never_migrates():
    inst = random_ring(16, 1, 2000, "uniform", seed=0)
    run = run_ring("static", inst, seed=0)
    assert len(run.migrations) == 0 and run.costs["communication"] == 0


def test_static_non_contiguous_initial_starts_without_migrating():
    init = np.array([0, 1, 0, 1, 1, 0, 2, 2, 1, 2, 0, 2])
    inst = RingInstance(n=12, servers=3, requests=np.zeros(0, dtype=np.int64), initial=init)
    a = StaticRing()
    a.start(inst, np.random.default_rng(0))
    assert len(a.cuts_) == int((init != np.roll(init, -1)).sum())
    assert a.state_.migrations().shape == (0, 3)
    _check_structure(a)


def test_static_params_are_json_scalars_and_validated():
    params = StaticRing(epsilon=0.4).get_params()
    assert params["lam"] == pytest.approx(0.9) and params["max_interval"] is None
    assert all(isinstance(v, int | float | str | bool | type(None)) for v in params.values())
    with pytest.raises(ValueError, match="lam"):
        StaticRing(epsilon=2.5)
    with pytest.raises(ValueError, match="cluster_cap"):
        StaticRing(cluster_cap=0.5)


def test_static_rebalancing_keeps_the_tight_promise():
    """cluster_cap = 1 (T = 2.5 k): rebalancing really runs, and every step stays within T."""
    rng = np.random.default_rng(4)
    rebalances = 0
    for trial in range(20):
        servers = int(rng.choice([2, 3, 4, 6, 8]))
        k = int(rng.integers(2, 10))
        n = servers * k
        inst = random_ring(n, servers, 1000, ["uniform", "hotspot", "zipf", "phases"][trial % 4], seed=trial)
        if trial % 2:
            init = rng.permutation(np.repeat(np.arange(servers), k))
            inst = RingInstance(n=n, servers=servers, requests=inst.requests, initial=init)
        run = run_ring("static", inst, seed=trial, cluster_cap=1.0)
        assert run.augmentation == 2.5
        assert check_ring_run(inst, run).feasible
        rebalances += int(run.costs["rebalancing"] > 0)
    assert rebalances > 0
