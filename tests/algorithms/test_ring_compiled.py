"""The compiled paths of the ring policies equal the pure-Python reference bit for bit.

``serve_block`` (numba, :mod:`clusteropt.algorithms.ring.compiled`) against ``serve`` request by
request: for ``DynamicRing`` with the HST MTS (policy ``dynamic``) and the combined MTS
(``dynamic-mix``), the migration log, the cost split, every interval MTS's state (conditionals,
work functions, counters, fractional costs; the follower's costs, weights, expert and switches)
and where each coin generator stands afterwards; for ``FollowRing`` (``follow``), the log, the
reasons, the experts' and the follower's costs, weights, switches, phases, scale and coins; for
``NeverMigrate``, the count.  Over random shapes, patterns, ``alpha`` (integral and not),
``epsilon``, the follower's scale and rate, and block sizes.  ``run_ring`` with
``CLUSTEROPT_JIT=0`` gives the same run as the default, and the outside checker accepts it.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from clusteropt.algorithms.ring import _numba_kernels as _kernels
from clusteropt.algorithms.ring import compiled
from clusteropt.algorithms.ring.baselines import NeverMigrate
from clusteropt.algorithms.ring.dynamic import DynamicRing
from clusteropt.algorithms.ring.follow import FollowRing
from clusteropt.algorithms.ring.state import RingAssignment
from clusteropt.instances.ring import random_ring
from clusteropt.online.ring import hit_the_cut, run_ring
from clusteropt.verify.ring import check_ring_run

PATTERNS = ("uniform", "zipf", "hotspot", "moving-hotspot", "phases")


@pytest.fixture(autouse=True)
def _always_compiled(monkeypatch):
    """The compiled path for every block, however small (the default mode leaves small ones to the reference)."""
    monkeypatch.setenv("CLUSTEROPT_JIT", "1")


def _hst_state(x) -> tuple:
    return (x._theta, x._w, x.position_, x.requests_, x.hit_cost_, x.move_cost_, x.frac_hit_, x.frac_service_,
            x.frac_move_)


def _mts_state(x) -> tuple:
    if type(x).name == "hst":
        return _hst_state(x)
    wfa = x.experts_[1]
    return (_hst_state(x.experts_[0]), wfa._w, wfa.position_, wfa.requests_, wfa.hit_cost_, wfa.move_cost_,
            x._w, x.position_, x.requests_, x.hit_cost_, x.move_cost_, list(x.expert_costs_), x._follow._p,
            x.following_, x.switches_, x._follow.coins.bit_generator.state)


def _pair(inst, mts, seed, eps=1.0):
    fast, ref = DynamicRing(mts=mts, epsilon=eps), DynamicRing(mts=mts, epsilon=eps)
    fast.start(inst, np.random.default_rng(seed))
    ref.start(inst, np.random.default_rng(seed))
    return fast, ref


def _assert_same(fast, ref):
    a, b = fast.state_.migrations(), ref.state_.migrations()
    assert a.shape == b.shape and np.array_equal(a, b)
    assert fast.costs() == ref.costs()
    assert fast.state_.by_reason() == ref.state_.by_reason()
    assert fast.state_.moved == ref.state_.moved
    assert np.array_equal(fast.state_.server_of, ref.state_.server_of)
    assert np.array_equal(fast.state_.load, ref.state_.load)
    assert fast.cut_edges() == ref.cut_edges() and fast.slices() == ref.slices()
    for x, y in zip(fast.mts_, ref.mts_, strict=True):
        assert _mts_state(x) == _mts_state(y)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(k=st.integers(1, 16), servers=st.integers(1, 6), T=st.integers(0, 600), pattern=st.sampled_from(PATTERNS),
       alpha=st.sampled_from([1, 1, 2, 4, 16, 0.3, 2.5]), eps=st.sampled_from([0.0, 0.5, 1.0, 3.0]),
       mts=st.sampled_from(["hst", "mix"]), block=st.integers(1, 700), seed=st.integers(0, 10**6))
def test_block_equals_reference(k, servers, T, pattern, alpha, eps, mts, block, seed):
    n = max(2, k * servers)
    if n % servers:
        servers = 1
    inst = random_ring(n, servers, T, pattern, seed=seed, alpha=alpha)
    fast, ref = _pair(inst, mts, seed, eps)
    for a in range(0, T, block):
        assert fast.serve_block(a, inst.requests[a:a + block])
    ref.state_.serve_all(0, inst.requests.tolist(), ref.serve)
    _assert_same(fast, ref)


@pytest.mark.parametrize("mts", ["hst", "mix"])
def test_block_then_reference_continues_alike(mts):
    """Blocks and single requests interleave: the objects stay the authority between blocks."""
    inst = random_ring(96, 4, 3000, "moving-hotspot", seed=3, alpha=2)
    fast, ref = _pair(inst, mts, 3)
    req = inst.requests.tolist()
    assert fast.serve_block(0, inst.requests[:1000])
    for t in range(1000, 1500):
        fast.state_.now = t
        fast.serve(req[t])
    assert fast.serve_block(1500, inst.requests[1500:])
    ref.state_.serve_all(0, req, ref.serve)
    _assert_same(fast, ref)


def test_hit_the_cut_sequences_agree():
    """The adversarial sequence built against the reference (every request on a cut edge)."""
    base = random_ring(64, 4, 0, "uniform", seed=0)
    for mts, policy in (("hst", "dynamic"), ("mix", "dynamic-mix")):
        inst = hit_the_cut(base, 2000, against=policy, seed=1)
        fast, ref = _pair(inst, mts, 5)
        assert fast.serve_block(0, inst.requests)
        ref.state_.serve_all(0, inst.requests.tolist(), ref.serve)
        _assert_same(fast, ref)


def _follow_state(a) -> tuple:
    f = a._follow
    return (list(a._costs), list(f.costs), f._p, f.following, f.switches, a.hits_, a.switch_moves_, a.phases_,
            a.scale_, a.eta_, a._extra, a._prior_log, a._sigma.tolist(), f.coins.bit_generator.state,
            a.state_.by_reason(), a.state_.moved, a.costs(), a.following_, a.switches_)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(k=st.integers(1, 16), servers=st.integers(1, 5), T=st.integers(0, 800), pattern=st.sampled_from(PATTERNS),
       alpha=st.sampled_from([1, 1, 4, 16, 0.3]), scale=st.sampled_from(["adaptive", "adaptive", "diameter"]),
       rate=st.sampled_from([0.5, 0.5, 3.0]), block=st.integers(1, 900), seed=st.integers(0, 10**6))
def test_follow_block_equals_reference(k, servers, T, pattern, alpha, scale, rate, block, seed):
    n = max(2, k * servers)
    if n % servers:
        servers = 1
    inst = random_ring(n, servers, T, pattern, seed=seed, alpha=alpha)
    fast, ref = FollowRing(scale=scale, rate=rate), FollowRing(scale=scale, rate=rate)
    fast.start(inst, np.random.default_rng(seed))
    ref.start(inst, np.random.default_rng(seed))
    for a in range(0, T, block):
        assert fast.serve_block(a, inst.requests[a:a + block])
    ref.state_.serve_all(0, inst.requests.tolist(), ref.serve)
    a, b = fast.state_.migrations(), ref.state_.migrations()
    assert a.shape == b.shape and np.array_equal(a, b)
    assert _follow_state(fast) == _follow_state(ref)
    for x, y in zip(fast.experts_, ref.experts_, strict=True):
        assert x.costs() == y.costs()
        assert np.array_equal(x.state_.migrations(), y.state_.migrations())


def test_follow_switches_and_restarts_on_the_compiled_path():
    """A moving hot spot makes the follower switch and grow its scale inside blocks (events 1 and 2)."""
    inst = random_ring(64, 4, 20000, "moving-hotspot", seed=3, alpha=0.3)
    fast, ref = FollowRing(rate=3.0), FollowRing(rate=3.0)
    fast.start(inst, np.random.default_rng(1))
    ref.start(inst, np.random.default_rng(1))
    assert fast.serve_block(0, inst.requests)
    ref.state_.serve_all(0, inst.requests.tolist(), ref.serve)
    assert fast.switches_ >= 10 and fast.phases_ >= 2
    assert _follow_state(fast) == _follow_state(ref)
    assert np.array_equal(fast.state_.migrations(), ref.state_.migrations())


def test_follow_scale_growth_without_a_switch(monkeypatch):
    """Event 2 (an expert's step costs more than ``1 + D`` while the follower keeps its expert).

    The registered experts rarely migrate more than ``k`` processes in one step, so the scale is
    set below one migration, in both runs alike, to make the path run often.
    """
    inst = random_ring(64, 4, 6000, "moving-hotspot", seed=2)
    fast, ref = FollowRing(), FollowRing()
    fast.start(inst, np.random.default_rng(4))
    ref.start(inst, np.random.default_rng(4))
    fast.scale_ = ref.scale_ = 0.25
    events = []
    kernel = _kernels.follow_block

    def spy(*args):
        out = kernel(*args)
        events.append(int(out[1]))
        return out

    monkeypatch.setattr(_kernels, "follow_block", spy)
    assert fast.serve_block(0, inst.requests[:2500]) and fast.serve_block(2500, inst.requests[2500:])
    ref.state_.serve_all(0, inst.requests.tolist(), ref.serve)
    assert 2 in events and fast.phases_ >= 3
    assert _follow_state(fast) == _follow_state(ref)
    assert np.array_equal(fast.state_.migrations(), ref.state_.migrations())


def test_never_block_counts_like_serve():
    inst = random_ring(64, 4, 5000, "zipf", seed=1)
    fast, ref = NeverMigrate(), NeverMigrate()
    fast.start(inst, None)
    ref.start(inst, None)
    assert fast.serve_block(0, inst.requests[:3000]) and fast.serve_block(3000, inst.requests[3000:])
    ref.state_.serve_all(0, inst.requests.tolist(), ref.serve)
    assert fast.costs() == ref.costs() and fast.state_.now == ref.state_.now == 4999


@pytest.mark.parametrize("policy", ["dynamic", "dynamic-mix", "follow", "never", "static-best"])
def test_run_ring_same_with_and_without_jit(policy, monkeypatch):
    inst = random_ring(128, 4, 5000, "zipf", seed=2, alpha=4)
    fast = run_ring(policy, inst, seed=7, batch=1024)
    monkeypatch.setenv("CLUSTEROPT_JIT", "0")
    assert not compiled.enabled()
    ref = run_ring(policy, inst, seed=7, batch=1024)
    assert np.array_equal(fast.migrations, ref.migrations)
    assert fast.costs == ref.costs
    check = check_ring_run(inst, fast)
    check.raise_if_infeasible()
    assert check.migration_cost == inst.alpha * len(fast.migrations)


def test_other_mts_and_mid_step_use_the_reference():
    inst = random_ring(32, 4, 100, "uniform", seed=0)
    for mts in ("wfa", "soft"):
        algo = DynamicRing(mts=mts)
        algo.start(inst, 0)
        assert not algo.serve_block(0, inst.requests)
    algo = DynamicRing()
    algo.start(inst, 0)
    algo.state_.now = 0
    algo.state_.assign_one(0, (int(algo.state_.server_of[0]) + 1) % 4)  # a move not yet logged
    assert algo.state_.pending
    assert not algo.serve_block(0, inst.requests)
    with pytest.raises(ValueError, match=r"requests\[1\] = 32; expected an edge in 0..31"):
        _started(inst).serve_block(0, np.array([0, 32]))


def _started(inst):
    algo = DynamicRing()
    algo.start(inst, 0)
    return algo


def test_record_block_checks_its_rows():
    a = RingAssignment(np.array([0, 0, 1, 1]), 2)
    with pytest.raises(ValueError, match="2 rows for 1 migrations"):
        a.record_block(5, np.array([[5, 0, 1], [5, 1, 1]]), 1)
    a.now = 0
    a.assign_one(0, 1)
    with pytest.raises(RuntimeError, match="unlogged moves"):
        a.record_block(5, np.zeros((0, 3)), 0)


def test_auto_mode_leaves_small_blocks_to_the_reference(monkeypatch):
    """``"auto"``: a small block runs compiled only once the kernels are loaded; ``"off"`` never."""
    import sys

    monkeypatch.delenv("CLUSTEROPT_JIT")
    assert compiled.mode() == "auto"
    assert compiled.use_compiled(compiled.JIT_MIN_REQUESTS)
    monkeypatch.delitem(sys.modules, "clusteropt.algorithms.ring._numba_kernels")
    assert not compiled.use_compiled(compiled.JIT_MIN_REQUESTS - 1)
    inst = random_ring(32, 4, 100, "uniform", seed=0)
    assert not _started(inst).serve_block(0, inst.requests)
    monkeypatch.setenv("CLUSTEROPT_JIT", "off")
    assert compiled.mode() == "off" and not compiled.use_compiled(10**9)
    monkeypatch.setenv("CLUSTEROPT_JIT", "yes")
    assert compiled.mode() == "on" and compiled.use_compiled(1)


def test_compiled_log_exp_equal_cpython():
    assert compiled._check_math()
