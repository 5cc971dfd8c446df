"""The compiled fill of the coflow greedy schedulers equals the pure-Python reference.

``_numba_kernels.fill`` against ``schedulers._fill_reference`` on random flows (few ports, scattered
first slots and an optional end, so ports hold many busy intervals and their storage grows), and
the offline greedy and online schedules with ``CLUSTEROPT_JIT=1`` against ``CLUSTEROPT_JIT=0``,
every array of the schedule; the schedules pass the outside checker.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from clusteropt.algorithms.coflow import _numba_kernels as kernels
from clusteropt.algorithms.coflow.online import online_greedy_schedule
from clusteropt.algorithms.coflow.schedulers import _fill_reference, greedy_schedule
from clusteropt.instances.coflow import random_coflows
from clusteropt.verify.coflow import check_coflow_schedule

FIELDS = ("start", "length", "ptr", "coflow", "input", "output", "order")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n_in=st.integers(1, 4), n_out=st.integers(1, 4), flows=st.integers(0, 120), span=st.integers(1, 200),
       need=st.integers(0, 30), end=st.one_of(st.none(), st.integers(0, 250)), seed=st.integers(0, 10**6))
def test_fill_equals_reference(n_in, n_out, flows, span, need, end, seed):
    rng = np.random.default_rng(seed)
    u = rng.integers(0, n_in, flows)
    v = rng.integers(0, n_out, flows)
    d = rng.integers(0, need + 1, flows)
    first = rng.integers(0, span, flows)
    want = _fill_reference(u, v, d, first, end, n_in, n_out)
    got = kernels.fill(u, v, d, first, -1 if end is None else end, n_in, n_out)
    for w, g in zip(want, got, strict=True):
        assert np.array_equal(w, g)


def test_fill_grows_a_port_past_its_storage():
    """One port pair, unit flows at every other slot: hundreds of intervals on each port."""
    k = 600
    u, v = np.zeros(k, dtype=np.int64), np.zeros(k, dtype=np.int64)
    first = np.arange(k, dtype=np.int64)[::-1] * 2  # latest first: each insert lands at the front
    d = np.ones(k, dtype=np.int64)
    want = _fill_reference(u, v, d, first, None, 1, 1)
    got = kernels.fill(u, v, d, first, -1, 1, 1)
    assert all(np.array_equal(w, g) for w, g in zip(want, got, strict=True))
    assert got[1].size == k


def _same(a, b):
    for name in FIELDS:
        assert np.array_equal(getattr(a, name), getattr(b, name)), name


@pytest.mark.parametrize("release", [True, False])
def test_schedules_same_with_and_without_jit(release, monkeypatch):
    inst = random_coflows(80, 12, load=0.9, max_units=200, seed=3, release=release)
    monkeypatch.setenv("CLUSTEROPT_JIT", "1")
    fast = [greedy_schedule(inst, np.arange(inst.n_coflows)),
            online_greedy_schedule(inst, "sebf").schedule,
            online_greedy_schedule(inst, "primal-dual", epoch=5).schedule]
    monkeypatch.setenv("CLUSTEROPT_JIT", "0")
    ref = [greedy_schedule(inst, np.arange(inst.n_coflows)),
           online_greedy_schedule(inst, "sebf").schedule,
           online_greedy_schedule(inst, "primal-dual", epoch=5).schedule]
    for a, b in zip(fast, ref, strict=True):
        _same(a, b)
        check_coflow_schedule(inst, a).raise_if_infeasible()
