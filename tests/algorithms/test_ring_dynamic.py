"""Paper 004, Sec. 3: the line MTS black boxes and the dynamic ring algorithm."""

from __future__ import annotations

import numpy as np
import pytest

from clusteropt.algorithms.ring.dynamic import DynamicRing
from clusteropt.algorithms.ring.mts import SoftWorkFunctionLine, WorkFunctionLine, chase, make_line_mts
from clusteropt.algorithms.ring.offline import line_mts_opt
from clusteropt.algorithms.ring.smoothmin import cdf_position, line_w1
from clusteropt.instances.ring import RingInstance, random_ring
from clusteropt.online.ring import run_ring
from clusteropt.verify.ring import check_ring_run

# ---------------------------------------------------------------------------------------------
# line MTS
# ---------------------------------------------------------------------------------------------


def _sequences(rng, N, T):
    yield "uniform", rng.integers(0, N, size=T).tolist()
    yield "hot", rng.integers(0, max(1, N // 3), size=T).tolist()
    yield "runs", np.repeat(rng.integers(0, N, size=T // 7 + 1), 7)[:T].tolist()
    yield "walk", (np.cumsum(rng.choice([-1, 1], size=T)) % N).tolist()


CASES = [(N, start) for N in (1, 2, 3, 5, 8, 13) for start in sorted({0, N // 2, N - 1})]


@pytest.mark.parametrize(("N", "start"), CASES)
def test_work_function_min_is_the_offline_line_optimum(N, start):
    rng = np.random.default_rng(N * 100 + start)
    for _, seq in _sequences(rng, N, 400):
        for mts in (WorkFunctionLine(), SoftWorkFunctionLine()):
            mts.reset(N, start, rng=1)
            for e in seq:
                mts.serve(e)
            assert mts.opt_ == line_mts_opt(N, start, seq)
            w = mts.work_function()
            assert w.min() == mts.opt_ and np.all(np.abs(np.diff(w)) <= 1)


def _brute_wfa(N, start, seq):
    """WFA with an O(N) numpy argmin of g(x) + |x - cur| (g: w with g(e) = w(e) + 1)."""
    x = np.arange(N)
    w = np.abs(x - start)
    cur, out = start, []
    for e in seq:
        g = w.copy()
        g[e] += 1
        val = g + np.abs(x - cur)
        best = np.flatnonzero(val == val.min())
        # ties: nearest to cur, then the left one
        cur = int(best[np.lexsort((best, np.abs(best - cur)))][0])
        w = np.array([min(g[y] + abs(y - z) for y in range(N)) for z in range(N)])
        out.append(cur)
    return out


@pytest.mark.parametrize(("N", "start"), [(1, 0), (2, 1), (5, 2), (8, 0), (9, 8)])
def test_wfa_incremental_argmin_matches_bruteforce(N, start):
    rng = np.random.default_rng(N)
    for _, seq in _sequences(rng, N, 150):
        mts = WorkFunctionLine()
        mts.reset(N, start)
        assert [mts.serve(e) for e in seq] == _brute_wfa(N, start, seq)


def _adaptive(N, start, T):
    """Always request the WFA's current state (oblivious for the randomized algorithms)."""
    wfa = WorkFunctionLine()
    wfa.reset(N, start)
    return chase(wfa, T)


@pytest.mark.parametrize(("N", "start"), CASES)
def test_wfa_competitive(N, start):
    """Move-then-pay cost <= (2N-1) OPT + c (BLS); pay-then-move cost <= 2 (2N-1) OPT + c."""
    rng = np.random.default_rng(7 * N + start)
    const = N * N + 2
    seqs = [seq for _, seq in _sequences(rng, N, 1500)] + [_adaptive(N, start, 1500)]
    for seq in seqs:
        mts = WorkFunctionLine()
        mts.reset(N, start)
        hits_after_move = 0
        for e in seq:
            hits_after_move += mts.serve(e) == e
        opt = line_mts_opt(N, start, seq)
        assert mts.opt_ == opt
        assert hits_after_move + mts.move_cost_ <= (2 * N - 1) * opt + const  # the classical WFA bound
        assert mts.cost_ <= 2 * (2 * N - 1) * opt + const  # the order of the ring problem
        assert mts.move_cost_ <= mts.hit_cost_
    # the factor 2 is needed: against the adaptive adversary the pay-then-move ratio is 3N - 2
    if N >= 2:
        seq = _adaptive(N, start, 40 * N)
        mts = WorkFunctionLine()
        mts.reset(N, start)
        for e in seq:
            mts.serve(e)
        assert mts.cost_ > (2 * N - 1) * line_mts_opt(N, start, seq)


def test_mts_validation():
    with pytest.raises(ValueError, match="n_states"):
        WorkFunctionLine().reset(0, 0)
    with pytest.raises(ValueError, match="start"):
        WorkFunctionLine().reset(3, 3)
    with pytest.raises(ValueError, match="theta"):
        SoftWorkFunctionLine(theta=0).reset(3, 0, rng=0)
    with pytest.raises(ValueError, match="theta"):
        make_line_mts("wfa", theta=2.0)


@pytest.mark.parametrize("theta", [None, 0.3, 2.0])
def test_soft_position_is_the_cdf_quantile(theta):
    """The Fenwick descent returns cdf_position(p, U) after every step (rebuilds included)."""
    rng = np.random.default_rng(3)
    N = 11
    for seed in range(5):
        mts = SoftWorkFunctionLine(theta=theta)
        mts.reset(N, 4, rng=seed)
        assert mts.position_ == cdf_position(mts.distribution(), mts.u_)
        for e in rng.integers(0, N, size=3000).tolist():
            mts.serve(e)
            assert mts.position_ == cdf_position(mts.distribution(), mts.u_)


def test_soft_marginal_and_expected_cost():
    """Position ~ p at every step; E[cost] = sum p_{t-1}(e_t) + sum W1(p_{t-1}, p_t) (the coupling)."""
    N, start, T, R = 7, 3, 40, 4000
    seq = np.random.default_rng(5).integers(0, N, size=T).tolist()
    ref = SoftWorkFunctionLine()
    ref.reset(N, start, rng=0)
    dists = [ref.distribution()]
    for e in seq:
        ref.serve(e)
        dists.append(ref.distribution())
    exp_hit = sum(dists[t][e] for t, e in enumerate(seq))
    exp_move = sum(line_w1(dists[t], dists[t + 1]) for t in range(T))
    finals = np.zeros(N)
    mid = np.zeros(N)
    hits = moves = 0.0
    seeds = np.random.SeedSequence(11).spawn(R)
    for r in range(R):
        mts = SoftWorkFunctionLine()
        mts.reset(N, start, rng=np.random.default_rng(seeds[r]))
        for t, e in enumerate(seq):
            mts.serve(e)
            if t == T // 2 - 1:
                mid[mts.position_] += 1
        finals[mts.position_] += 1
        hits += mts.hit_cost_
        moves += mts.move_cost_
    for emp, p in ((mid / R, dists[T // 2]), (finals / R, dists[T])):
        # each frequency within 4.5 standard errors
        assert np.all(np.abs(emp - p) <= 4.5 * np.sqrt(p * (1 - p) / R) + 1e-12)
    assert abs(hits / R - exp_hit) <= 0.1 * exp_hit + 0.1
    assert abs(moves / R - exp_move) <= 0.1 * exp_move + 0.1
    assert hits / R + moves / R >= line_mts_opt(N, start, seq) - 1  # sane: never below OPT (minus start move)


def test_soft_failure_mode_is_as_documented():
    """A request on a state whose neighbour has w one lower changes nothing: cost p(e) per request."""
    mts = SoftWorkFunctionLine()
    mts.reset(6, 0, rng=0)
    w0, p0 = mts.work_function(), mts.distribution()
    for _ in range(50):
        mts.serve(3)
    assert np.array_equal(mts.work_function(), w0) and np.allclose(mts.distribution(), p0)
    assert mts.move_cost_ == 0 and mts.opt_ == 0


# ---------------------------------------------------------------------------------------------
# the dynamic ring algorithm
# ---------------------------------------------------------------------------------------------


def _owner_from_slices(algo):
    """Server of every process according to the algorithm's slices (independent of state_)."""
    n = algo.n_
    out = np.full(n, -1)
    for j, (lo, hi) in enumerate(algo.slices()):
        for v in range(lo + 1, hi + 1):
            assert out[v % n] == -1, "two slices hold one process"
            out[v % n] = algo.perm_[j]
    assert np.all(out >= 0)
    return out


def _step_through(algo, inst, rng=0, check_every=1):
    """Run by hand, checking the structure and the load after every step; returns the crossings seen."""
    algo.start(inst, np.random.default_rng(rng))
    st = algo.state_
    n, L, m = inst.n, algo.L_, algo.m_
    cap = (2 + algo.epsilon) * inst.k
    load_cap = min(2 * L - 1, n) if m > 1 else n
    crossings = 0
    for t, e in enumerate(inst.requests.tolist()):
        st.now = t
        algo.serve(e)
        if t % check_every:
            continue
        cuts = algo.cut_edges()
        assert len(cuts) == m
        for c, (a, b) in zip(cuts, algo.intervals()):
            assert a <= c <= b  # one cut per interval, inside it
        if m > 1:
            crossings += cuts[-1] > cuts[0] + n
            assert np.array_equal(st.server_of, _owner_from_slices(algo))
        assert st.load.max() <= load_cap <= cap
    return crossings


def _replay_loads(inst, run):
    """Own replay of the migration log: max load after every step (index -1 included)."""
    so = np.array(inst.initial)
    load = np.bincount(so, minlength=inst.servers)
    worst = int(load.max())
    mig = run.migrations
    i = 0
    for t in range(-1, inst.n_requests):
        while i < len(mig) and mig[i, 0] == t:
            _, v, s = mig[i]
            load[so[v]] -= 1
            load[s] += 1
            so[v] = s
            i += 1
        worst = max(worst, int(load.max()))
    assert i == len(mig)
    return worst


@pytest.mark.parametrize("mts", ["soft", "wfa"])
@pytest.mark.parametrize("pattern", ["uniform", "hotspot", "moving-hotspot"])
def test_dynamic_run_is_feasible_and_costs_match(mts, pattern):
    inst = random_ring(48, 6, 3000, pattern, seed=2)
    eps = 0.5
    run = run_ring("dynamic-soft" if mts == "soft" else "dynamic-wfa", inst, seed=4, batch=700, epsilon=eps)
    chk = check_ring_run(inst, run)
    assert chk.feasible, chk.violations[:3]
    assert run.augmentation == 2 + eps
    assert _replay_loads(inst, run) <= (2 + eps) * inst.k
    c = run.costs
    assert chk.communication_cost == c["communication"]
    assert chk.n_migrations == c["moving"] + c["initial"] and chk.noop_migrations == 0
    assert c["communication"] <= c["interval_hit"] and c["moving"] <= c["interval_move"]  # Obs. 3.2
    assert c["initial"] <= inst.n


@pytest.mark.parametrize("mts", ["soft", "wfa"])
def test_dynamic_structure_invariants_every_step(mts):
    inst = random_ring(40, 5, 1500, "moving-hotspot", seed=3, step=20)
    for seed in range(3):
        _step_through(DynamicRing(mts=mts, epsilon=0.6), inst, rng=seed)


def test_wrap_overlap_crossing_is_handled():
    # n = 20, k = 5, eps = 1.6: L = 9, m = 3, I_2 overlaps I_0 on 7 edges; cuts there may cross.
    seen = 0
    for seed in range(12):
        rng = np.random.default_rng(seed)
        algo = DynamicRing(mts="soft", epsilon=1.6, cut_start="center")
        algo.start(RingInstance(n=20, servers=4, requests=[]), np.random.default_rng(seed))
        s = algo.shift_
        overlap = (s + np.arange(7)) % 20
        req = np.where(rng.random(800) < 0.8, rng.choice(overlap, 800), rng.integers(0, 20, 800))
        inst = RingInstance(n=20, servers=4, requests=req)
        assert (algo.L_, algo.m_) == (9, 3)
        seen += _step_through(DynamicRing(mts="soft", epsilon=1.6, cut_start="center"), inst, rng=seed)
    assert seen > 0


def test_same_seed_same_run_different_seeds_different_shifts():
    inst = random_ring(64, 4, 2000, "hotspot", seed=5)
    a = run_ring("dynamic", inst, seed=9)
    b = run_ring("dynamic", inst, seed=9)
    assert np.array_equal(a.migrations, b.migrations) and a.costs == b.costs
    shifts = set()
    for seed in range(12):
        algo = DynamicRing()
        algo.start(inst, np.random.default_rng(seed))
        shifts.add(algo.shift_)
    assert len(shifts) > 1


def test_one_server_never_migrates():
    inst = random_ring(16, 1, 500, seed=0)
    for name in ("dynamic", "dynamic-wfa"):
        run = run_ring(name, inst, seed=0)
        assert run.migrations.shape == (0, 3)
        assert run.costs["communication"] == 0 and run.costs["initial"] == 0


def test_single_interval_when_epsilon_is_large():
    inst = random_ring(12, 3, 300, seed=1)
    algo = DynamicRing(epsilon=10.0)
    algo.start(inst, 0)
    assert (algo.L_, algo.m_) == (12, 1) and algo.mts_ == []
    run = run_ring("dynamic", inst, seed=0, epsilon=10.0)
    assert check_ring_run(inst, run).feasible
    assert np.all(run.migrations[:, 0] == -1) and run.costs["communication"] == 0


SMALL = [(2, 2, 1.0), (3, 3, 0.0), (4, 2, 0.0), (6, 2, 3.0), (10, 5, 2.0)]


@pytest.mark.parametrize(("n", "servers", "eps"), SMALL)
def test_small_rings(n, servers, eps):
    rng = np.random.default_rng(n)
    inst = RingInstance(n=n, servers=servers, requests=rng.integers(0, n, 300))
    for mts in ("soft", "wfa"):
        _step_through(DynamicRing(mts=mts, epsilon=eps), inst, rng=1)
        run = run_ring("dynamic-soft" if mts == "soft" else "dynamic-wfa", inst, seed=1, epsilon=eps)
        assert check_ring_run(inst, run).feasible


def test_non_contiguous_initial_assignment():
    rng = np.random.default_rng(8)
    n, servers = 36, 4
    initial = rng.permutation(np.repeat(np.arange(servers), n // servers))
    inst = RingInstance(n=n, servers=servers, requests=rng.integers(0, n, 2000), initial=initial)
    for seed in range(3):
        _step_through(DynamicRing(epsilon=1.0), inst, rng=seed, check_every=7)
        run = run_ring("dynamic", inst, seed=seed)
        chk = check_ring_run(inst, run)
        assert chk.feasible and 0 < run.costs["initial"] <= n
        assert np.all(run.migrations[run.migrations[:, 0] >= 0, 0] < inst.n_requests)


def test_contiguous_start_keeps_initial_arcs_cheap():
    inst = random_ring(64, 4, 0, seed=0)
    # L = k: every interval holds one initial cut, the WFA starts on it (the soft MTS draws its
    # start from p_0 around it instead)
    algo = DynamicRing(mts="wfa", epsilon=0.0)
    algo.start(inst, 3)
    assert algo.m_ == 4 and algo.costs()["initial"] == 0
    algo = DynamicRing(mts="wfa", epsilon=0.0, cut_start="center")
    algo.start(inst, 3)
    assert algo.costs()["initial"] > 0


def test_parameters():
    algo = DynamicRing(mts="wfa", epsilon=0.25)
    assert algo.name == "dynamic-wfa" and algo.augmentation == 2.25
    assert algo.get_params() == {"mts": "wfa", "epsilon": 0.25, "theta": None, "cut_start": "initial"}
    inst = random_ring(8, 2, 5, seed=0)
    for bad, match in [({"mts": "nope"}, "mts"), ({"epsilon": -1.0}, "epsilon"), ({"cut_start": "x"}, "cut_start"),
                       ({"mts": "wfa", "theta": 3.0}, "theta")]:
        with pytest.raises(ValueError, match=match):
            DynamicRing(**bad).start(inst, 0)
