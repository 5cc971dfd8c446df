"""CombinedLine: several line MTS run side by side, followed by exponential weights with lazy switching.

Bars: one expert is that expert (stream layout ``rng.spawn(m + 1)`` included); two copies of the
WFA are the WFA; after every request the position is the followed expert's, the costs match the
trace, the weights are ``softmax(-eta L)`` and ``opt_`` is the line optimum; the lazy coupling keeps
the marginal ``P(J_t = i) = p_i(t)`` and switches with probability ``TV(p, p')`` (4 standard
errors over seeded runs); the expected cost over the switching coins (computed exactly from the
experts' trajectories) is at most :meth:`CombinedLine.bound` for every seed; huge rates follow the
leader; validation names the field; ``DynamicRing(mts="mix")`` runs feasible.
"""

from __future__ import annotations

import itertools
import math
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clusteropt.algorithms.ring.dynamic import DynamicRing
from clusteropt.algorithms.ring.mts import MTS_CLASSES, WorkFunctionLine, chase, make_line_mts
from clusteropt.algorithms.ring.mts.hst import EntropicHSTLine
from clusteropt.algorithms.ring.mts.mix import DEFAULT_EXPERTS, DEFAULT_RATE, CombinedLine
from clusteropt.algorithms.ring.offline import line_mts_opt
from clusteropt.instances.ring import random_ring
from clusteropt.online.ring import make_policy, run_ring
from clusteropt.verify import check_ring_run


def _wfa_adversary(N, start, T):
    """Always request the WFA's current state (oblivious for the randomized algorithms)."""
    wfa = WorkFunctionLine()
    wfa.reset(N, start)
    return chase(wfa, T)


def _mixed_sequence(N, start, T, seed, block=20):
    """Blocks of requests on the WFA's own state alternating with blocks of uniform requests."""
    rng = np.random.default_rng(seed)
    w = WorkFunctionLine()
    w.reset(N, start)
    seq = []
    for t in range(T):
        e = w.position_ if (t // block) % 2 == 0 else int(rng.integers(N))
        seq.append(e)
        w.serve(e)
    return seq


def _softmax_neg(eta, costs):
    c = np.asarray(costs, dtype=float)
    z = np.exp(-eta * (c - c.min()))
    return z / z.sum()


def _exact_expected_cost(mix, seq):
    """Serve ``seq``; return E[cost] over the switching coins given the experts' trajectories.

    Before a request the followed expert ``J`` has law ``p``; it pays ``[x_J == e]``; then ``J`` is
    kept with probability ``min(1, p'_J / p_J)``, else replaced by ``b ~ (p' - p)^+``, and the
    server moves from ``x_J`` to the new position of the expert followed afterwards.
    """
    m = len(mix.experts_)
    x = [ex.position_ for ex in mix.experts_]
    p = mix.weights().tolist()
    hit = move = 0.0
    for e in seq:
        mix.serve(e)
        x2 = [ex.position_ for ex in mix.experts_]
        p2 = mix.weights().tolist()
        hit += sum(pa for pa, xa in zip(p, x, strict=True) if xa == e)
        gain = [max(0.0, b - a) for a, b in zip(p, p2, strict=True)]
        g = sum(gain)
        for a in range(m):
            if p[a] == 0.0:
                continue
            r = min(1.0, p2[a] / p[a])
            step = r * abs(x2[a] - x[a])
            if r < 1.0 and g > 0.0:
                step += (1.0 - r) * sum(gain[b] / g * abs(x2[b] - x[a]) for b in range(m))
            move += p[a] * step
        x, p = x2, p2
    return hit + move


@st.composite
def _line_cases(draw, max_n=12, max_t=200):
    N = draw(st.integers(1, max_n))
    start = draw(st.integers(0, N - 1))
    if draw(st.booleans()):
        seq = draw(st.lists(st.integers(0, N - 1), max_size=max_t))
    else:
        seq = _mixed_sequence(N, start, draw(st.integers(0, max_t)), draw(st.integers(0, 2**16)),
                              block=draw(st.integers(1, 40)))
    return N, start, seq


# ---------------------------------------------------------------------------------------------
# one expert, two identical experts, the stream layout
# ---------------------------------------------------------------------------------------------


@settings(max_examples=50, deadline=None)
@given(case=_line_cases(), seed=st.integers(0, 2**32 - 1))
def test_one_expert_is_that_expert(case, seed):
    N, start, seq = case
    mix, ref = CombinedLine(experts=("wfa",)), WorkFunctionLine()
    mix.reset(N, start, rng=seed)
    ref.reset(N, start)
    hst, ref_hst = CombinedLine(experts=("hst",)), EntropicHSTLine()
    hst.reset(N, start, rng=seed)
    ref_hst.reset(N, start, rng=np.random.default_rng(seed).spawn(2)[0])  # expert 0 draws from stream 0
    assert (hst.experts_[0].shift_, hst.experts_[0].u_) == (ref_hst.shift_, ref_hst.u_)
    assert mix.position_ == ref.position_ == start and hst.position_ == ref_hst.position_
    for e in seq:
        assert mix.serve(e) == ref.serve(e)
        assert hst.serve(e) == ref_hst.serve(e)
        assert (mix.hit_cost_, mix.move_cost_) == (ref.hit_cost_, ref.move_cost_)
        assert (hst.hit_cost_, hst.move_cost_) == (ref_hst.hit_cost_, ref_hst.move_cost_)
    for one in (mix, hst):
        assert one.following_ == 0 and one.switches_ == 0 and one.weights().tolist() == [1.0]
        assert one.expert_costs_ == [one.cost_] and one.bound() == float(one.cost_)
    assert mix.opt_ == ref.opt_ == hst.opt_


@settings(max_examples=40, deadline=None)
@given(case=_line_cases(), seed=st.integers(0, 2**32 - 1))
def test_two_copies_of_the_wfa_are_the_wfa(case, seed):
    N, start, seq = case
    mix, ref = CombinedLine(experts=("wfa", "wfa")), WorkFunctionLine()
    mix.reset(N, start, rng=seed)
    ref.reset(N, start)
    assert mix.position_ == start
    for e in seq:
        assert mix.serve(e) == ref.serve(e) == mix.position_
        assert (mix.hit_cost_, mix.move_cost_) == (ref.hit_cost_, ref.move_cost_)
    assert mix.expert_costs_ == [ref.cost_, ref.cost_]
    # equal costs keep p = (1/2, 1/2): p' = p never switches (P(switch) = TV(p, p') = 0)
    assert mix.weights().tolist() == [0.5, 0.5] and mix.switches_ == 0
    assert mix.opt_ == ref.opt_


def test_stream_layout_with_two_experts():
    """Replay ("hst", "wfa") from rng.spawn(3): experts from streams 0 and 1, the coins from stream 2.

    Reference: the switching rule of the module docstring, written out with numpy.
    """
    N, start = 9, 4
    seq = _mixed_sequence(N, start, 300, seed=3, block=15)
    switched = 0
    for seed in range(8):
        mix = CombinedLine(rate=1.0)
        mix.reset(N, start, rng=seed)
        streams = np.random.default_rng(seed).spawn(3)
        experts = [EntropicHSTLine(), WorkFunctionLine()]
        for ex, stream in zip(experts, streams[:2], strict=True):
            ex.reset(N, start, stream)
        coins = streams[2]
        eta = 1.0 / (N - 1)
        assert mix.eta_ == eta
        j = int(coins.choice(2))
        assert mix.following_ == j
        costs = np.zeros(2)
        p = np.full(2, 0.5)
        for e in seq:
            for i, ex in enumerate(experts):
                old = ex.position_
                costs[i] += (old == e) + abs(ex.serve(e) - old)
            q = _softmax_neg(eta, costs)
            if q[j] < p[j] and coins.random() >= q[j] / p[j]:
                gain = np.maximum(q - p, 0.0)
                j = int(coins.choice(2, p=gain / gain.sum()))
            p = q
            mix.serve(e)
            assert mix.following_ == j and mix.position_ == experts[j].position_
        assert mix.expert_costs_ == [ex.cost_ for ex in experts]
        switched += mix.switches_ > 0
    assert switched > 0  # the replay exercised the switching branch


# ---------------------------------------------------------------------------------------------
# invariants of a run with the default experts
# ---------------------------------------------------------------------------------------------


@settings(max_examples=40, deadline=None)
@given(case=_line_cases(), seed=st.integers(0, 2**32 - 1), rate=st.sampled_from([0.25, 0.5, 1.0, 4.0]))
def test_invariants_every_request(case, seed, rate):
    N, start, seq = case
    mix = CombinedLine(rate=rate)
    mix.reset(N, start, rng=seed)
    ref = WorkFunctionLine()
    ref.reset(N, start)
    assert tuple(mix.experts) == DEFAULT_EXPERTS == ("hst", "wfa")
    assert [type(ex) for ex in mix.experts_] == [EntropicHSTLine, WorkFunctionLine]
    assert mix.eta_ == rate / max(1, N - 1)
    # both default experts start on ``start``, so the (uncharged) initial position is ``start``
    assert mix.position_ == start == mix.experts_[mix.following_].position_
    assert mix.weights().tolist() == [0.5, 0.5] and mix.switches_ == 0
    trace = [mix.position_]
    hits = switches = 0
    for t, e in enumerate(seq):
        before = mix.following_
        hits += trace[-1] == e
        pos = mix.serve(e)
        trace.append(pos)
        ref.serve(e)
        switches += mix.following_ != before
        assert 0 <= pos < N and pos == mix.position_ == mix.experts_[mix.following_].position_
        assert mix.requests_ == t + 1
        assert mix.hit_cost_ == hits
        assert mix.move_cost_ == sum(abs(b - a) for a, b in itertools.pairwise(trace))
        assert mix.cost_ == mix.hit_cost_ + mix.move_cost_
        assert mix.expert_costs_ == [ex.cost_ for ex in mix.experts_]
        p = mix.weights()
        assert p.shape == (2,) and np.all(p > 0) and abs(p.sum() - 1) < 1e-12
        assert np.allclose(p, _softmax_neg(mix.eta_, mix.expert_costs_), rtol=1e-12, atol=0)
        assert mix.opt_ == ref.opt_
        # w_0(x) = |x - start| charges the start move and relaxes "pay, then move": no run beats it
        assert mix.cost_ >= mix.opt_
        assert mix.cost_ <= N * (t + 1)  # a hit plus a move (jumps included) of at most N - 1 per request
    assert mix.switches_ == switches
    assert mix.opt_ == line_mts_opt(N, start, seq)
    # bound() recomputed from its documented formula
    L = min(mix.expert_costs_)
    if N == 1:
        assert mix.bound() == float(L) == float(mix.cost_) == float(len(seq))
    else:
        eta, D, B = mix.eta_, N - 1, N
        expect = (1 + eta * D) * eta * B / (1 - math.exp(-eta * B)) * (L + math.log(2) / eta)
        assert mix.bound() == pytest.approx(expect, rel=1e-12)
        assert mix.bound() <= (1 + rate) * (1 + rate + rate**2 / 3) * (L + math.log(2) * D / rate) * (1 + 1e-12)


def test_soft_expert_starts_off_start_uncharged():
    """With a soft expert the start is drawn; ``cost_ + |start position - start| >= opt_`` still holds."""
    N, start = 7, 3
    seq = _mixed_sequence(N, start, 200, seed=1)
    off = 0
    for seed in range(20):
        mix = CombinedLine(experts=("soft", "wfa"), theta=2.0)
        mix.reset(N, start, rng=seed)
        assert mix.experts_[0].theta_ == 2.0
        p0 = mix.position_
        off += p0 != start
        for t, e in enumerate(seq):
            mix.serve(e)
            assert mix.cost_ + abs(p0 - start) >= line_mts_opt(N, start, seq[: t + 1]) == mix.opt_
    assert off > 0


# ---------------------------------------------------------------------------------------------
# the lazy coupling
# ---------------------------------------------------------------------------------------------


def test_lazy_coupling_keeps_the_marginal_and_switches_tv():
    N, start, T, R = 6, 2, 60, 3000
    seq = _mixed_sequence(N, start, T, seed=0, block=10)
    follow = np.empty((R, T), dtype=np.int64)
    p1 = np.empty((R, T))
    switches = np.empty(R)
    tv = np.empty(R)
    costs = np.empty(R)
    exact = np.empty(R)
    for r in range(R):
        mix = CombinedLine(rate=0.5)
        mix.reset(N, start, rng=r)
        p = mix.weights()
        total_tv = 0.0
        if r < 300:  # the exact conditional expectation (pure Python, slower) on a subset
            exact[r] = _exact_expected_cost(mix, seq)
            costs[r] = mix.cost_
            switches[r] = tv[r] = np.nan
            continue
        for t, e in enumerate(seq):
            mix.serve(e)
            q = mix.weights()
            total_tv += 0.5 * np.abs(q - p).sum()
            p = q
            follow[r, t] = mix.following_
            p1[r, t] = q[1]
        switches[r], tv[r], costs[r] = mix.switches_, total_tv, mix.cost_
    sub = slice(300, R)
    n = R - 300
    f, w = follow[sub], p1[sub]
    spread = 0
    for t in (0, 14, 29, 44, 59):
        freq, mean = (f[:, t] == 1).mean(), w[:, t].mean()
        se = math.sqrt(max(freq * (1 - freq), 1e-4) / n)
        assert abs(freq - mean) <= 4 * se, (t, freq, mean, se)
        assert 0.05 < mean < 0.95  # not a degenerate marginal
        spread += w[:, t].std() > 0.01  # the experts' draws matter: p_t differs between seeds
    assert spread >= 4
    # P(switch at a step) = TV(p, p') exactly, so E[switches_] = E[sum_t TV(p_t, p_t+1)]
    d = switches[sub] - tv[sub]
    assert abs(d.mean()) <= 4 * d.std() / math.sqrt(n) + 1e-12, (switches[sub].mean(), tv[sub].mean())
    assert switches[sub].mean() > 0.5
    # the realized cost has the exact conditional expectation as its mean (same seeds 0..299)
    d = costs[:300] - exact[:300]
    assert abs(d.mean()) <= 4 * d.std() / math.sqrt(300), (costs[:300].mean(), exact[:300].mean())


# ---------------------------------------------------------------------------------------------
# the guarantee and the learning rate
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["adversarial", "random"])
@pytest.mark.parametrize("rate", [0.25, 1.0, 4.0])
def test_guarantee(kind, rate):
    N, start, T = 16, 8, 400
    if kind == "adversarial":
        seq = _wfa_adversary(N, start, T)
    else:
        seq = np.random.default_rng(1).integers(0, N, T).tolist()
    wfa = WorkFunctionLine()
    wfa.reset(N, start)
    for e in seq:
        wfa.serve(e)
    cost, bound = [], []
    for seed in range(40):
        mix = CombinedLine(rate=rate)
        mix.reset(N, start, rng=seed)
        if seed < 8:
            # for every outcome of the experts' draws: E over the switching coins <= bound()
            exp_cost = _exact_expected_cost(mix, seq)
            assert exp_cost <= mix.bound(), (seed, exp_cost, mix.bound())
        else:
            for e in seq:
                mix.serve(e)
        assert mix.expert_costs_[1] == wfa.cost_
        cost.append(mix.cost_)
        bound.append(mix.bound())
    cost, bound = np.array(cost, dtype=float), np.array(bound)
    d = cost - bound
    assert d.mean() <= 4 * d.std() / math.sqrt(len(d)), (cost.mean(), bound.mean())
    if kind == "adversarial":
        assert wfa.hit_cost_ == T  # the WFA pays every request
        assert cost.mean() < 0.5 * wfa.cost_, (cost.mean(), wfa.cost_)


@pytest.mark.parametrize("kind", ["adversarial", "random"])
def test_huge_rate_follows_the_leader(kind):
    N, start, T = 12, 5, 300
    if kind == "adversarial":
        seq = _wfa_adversary(N, start, T)
    else:
        seq = np.random.default_rng(2).integers(0, N, T).tolist()
    decided = 0
    for seed in range(10):
        mix = CombinedLine(rate=1e6)
        mix.reset(N, start, rng=seed)
        for e in seq:
            mix.serve(e)
            c = np.array(mix.expert_costs_)
            leaders = c == c.min()
            # exp(-eta) underflows to 0: p is uniform on the current leaders, and J is one of them
            assert np.array_equal(mix.weights(), leaders / leaders.sum())
            assert leaders[mix.following_]
        if mix.expert_costs_[0] != mix.expert_costs_[1]:
            decided += 1
            assert mix.following_ == int(np.argmin(mix.expert_costs_))
            assert sorted(mix.weights().tolist()) == [0.0, 1.0]
    assert decided >= 8
    if kind == "adversarial":
        assert mix.following_ == 0  # the HST MTS, far cheaper than the WFA here


def test_tiny_rate_barely_switches():
    N, start = 10, 4
    seq = _wfa_adversary(N, start, 300)
    for seed in range(5):
        mix = CombinedLine(rate=1e-9)
        mix.reset(N, start, rng=seed)
        for e in seq:
            mix.serve(e)
        assert np.abs(mix.weights() - 0.5).max() < 1e-6 and mix.switches_ == 0


# ---------------------------------------------------------------------------------------------
# validation and registration
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("kw", "match"), [
    ({"experts": ()}, "experts = ()"),
    ({"experts": "wfa"}, "experts = 'wfa'"),
    ({"experts": ["wfa", "nope"]}, "experts[1] = 'nope'"),
    ({"experts": ("hst", "wfa", "mix")}, "experts[2] = 'mix'"),
    ({"rate": 0}, "rate = 0;"),
    ({"rate": -1}, "rate = -1;"),
    ({"rate": float("inf")}, "rate = inf;"),
    ({"rate": float("nan")}, "rate = nan;"),
    ({"rate": True}, "rate = True;"),
    ({"rate": "1"}, "rate = '1';"),
    ({"theta": 2.0}, "theta = 2.0 is the soft expert's temperature; experts = ('hst', 'wfa') has no 'soft'"),
])
def test_validation_names_the_field(kw, match):
    with pytest.raises(ValueError, match=re.escape(match)):
        CombinedLine(**kw).reset(5, 0, rng=0)


def test_a_refused_reset_leaves_the_last_run_intact():
    mix = CombinedLine()
    mix.reset(6, 2, rng=0)
    for e in (2, 2, 3, 2):
        mix.serve(e)
    def state():
        return mix.n_states_, mix.position_, mix.cost_, list(mix.expert_costs_), mix.work_function().tolist()

    before = state()
    mix.rate = 0
    with pytest.raises(ValueError, match="rate = 0;"):
        mix.reset(9, 0, rng=1)
    assert state() == before


def test_validation_of_states_and_requests():
    with pytest.raises(ValueError, match="n_states"):
        CombinedLine().reset(0, 0, rng=0)
    with pytest.raises(ValueError, match="start"):
        CombinedLine().reset(4, 4, rng=0)
    mix = CombinedLine()
    mix.reset(4, 1, rng=0)
    for bad in (4, -1):
        with pytest.raises(ValueError, match="request on state"):
            mix.serve(bad)
    assert mix.requests_ == 0 and mix.cost_ == 0


def test_registered_and_make_line_mts():
    assert MTS_CLASSES["mix"] is CombinedLine and CombinedLine.name == "mix"
    mix = make_line_mts("mix", rate=0.25)
    assert isinstance(mix, CombinedLine) and mix.rate == 0.25
    assert make_line_mts("mix").rate == DEFAULT_RATE == CombinedLine().rate
    mix.reset(5, 2, rng=0)
    assert mix.eta_ == 0.25 / 4
    with pytest.raises(ValueError, match=re.escape("rate = 1 ")):
        make_line_mts("wfa", rate=1)
    # reset with the same seed twice: the same run
    seq = _mixed_sequence(8, 3, 200, seed=4)
    runs = []
    for _ in range(2):
        m = CombinedLine()
        m.reset(8, 3, rng=7)
        runs.append(([m.serve(e) for e in seq], m.switches_, m.expert_costs_))
    assert runs[0] == runs[1]


# ---------------------------------------------------------------------------------------------
# the dynamic ring algorithm with mts="mix"
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("pattern", ["uniform", "phases", "hotspot"])
def test_dynamic_mix_run_is_feasible(pattern):
    inst = random_ring(48, 6, 2000, pattern, seed=2, phase=300)
    eps = 0.5
    policy = make_policy("dynamic-mix", epsilon=eps)
    run = run_ring(policy, inst, seed=4, batch=700)
    algo = policy.algorithm
    chk = check_ring_run(inst, run)
    assert chk.feasible, chk.violations[:3]
    assert run.policy == "dynamic-mix" and run.params["rate"] == DEFAULT_RATE and run.augmentation == 2 + eps
    L, m = algo.L_, algo.m_
    assert m > 1 and all(isinstance(x, CombinedLine) for x in algo.mts_)
    assert chk.max_load <= min(2 * L - 1, inst.n) <= (2 + eps) * inst.k
    for mts, (a, b), c in zip(algo.mts_, algo.intervals(), algo.cut_edges(), strict=True):
        assert a <= c <= b and c - a == mts.position_ == mts.experts_[mts.following_].position_
        assert mts.eta_ == DEFAULT_RATE / (L - 1)
    costs = run.costs
    assert chk.communication_cost == costs["communication"]
    assert chk.n_migrations == costs["moving"] + costs["initial"]
    assert costs["interval_hit"] == sum(x.hit_cost_ for x in algo.mts_)
    assert costs["interval_move"] == sum(x.move_cost_ for x in algo.mts_)
    assert costs["communication"] <= costs["interval_hit"] and costs["moving"] <= costs["interval_move"]
    # the same seed gives the same run
    again = run_ring("dynamic-mix", inst, seed=4, batch=700, epsilon=eps)
    assert np.array_equal(again.migrations, run.migrations) and again.costs == run.costs


def test_dynamic_mix_step_by_step_and_rate():
    inst = random_ring(40, 5, 1200, "moving-hotspot", seed=3, step=20)
    algo = DynamicRing(mts="mix", epsilon=0.6, rate=2.0)
    assert algo.name == "dynamic-mix"
    algo.start(inst, np.random.default_rng(1))
    L, m, st_ = algo.L_, algo.m_, algo.state_
    assert m > 1 and all(x.rate == 2.0 and x.eta_ == 2.0 / (L - 1) for x in algo.mts_)
    for t, e in enumerate(inst.requests.tolist()):
        st_.now = t
        algo.serve(e)
        assert st_.load.max() <= min(2 * L - 1, inst.n)
        for mts, a, c in zip(algo.mts_, [a for a, _ in algo.intervals()], algo.cut_edges(), strict=True):
            assert c - a == mts.position_


def test_dynamic_mix_parameters():
    assert make_policy("dynamic-mix").name == "dynamic-mix"
    mix = make_policy("dynamic-mix").algorithm
    assert mix.name == "dynamic-mix" and mix.get_params() == {
        "mts": "mix", "epsilon": 1.0, "theta": None, "cut_start": "initial", "rate": DEFAULT_RATE}
    assert make_policy("dynamic-mix", rate=0.125).algorithm.get_params()["rate"] == 0.125
    assert "rate" not in make_policy("dynamic").algorithm.get_params()
    inst = random_ring(16, 2, 10, seed=0)
    with pytest.raises(ValueError, match=re.escape("rate = 1.0 ")):
        DynamicRing(mts="hst", rate=1.0).start(inst, 0)
    for bad in (0, -1.0, float("inf"), True):
        with pytest.raises(ValueError, match=re.escape(f"rate = {bad!r}")):
            DynamicRing(mts="mix", rate=bad).start(inst, 0)
