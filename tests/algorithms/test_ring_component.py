"""The component-based peer (Avin, Bienkowski, Loukas, Pacut, Schmid; policy ``component``).

* the ring rule (merge the arcs at ``e`` when ``c_e >= alpha``, end the epoch when the cycle
  qualifies or a merged arc would exceed ``k``) makes the decisions of the general rule, checked
  by enumerating every set of components of the current partition at every request;
* between requests every component is an arc on one server of at most ``k`` processes, and no set
  of components reaches ``w(S) >= (|S| - 1) alpha``;
* every run replays under the checker at ``(2 + eps) k``, and capacity ``2k`` (``eps = 0``) is
  always enough for a merged arc;
* a merge spends ``alpha`` paid requests, so ``merges * alpha <= paid requests``;
* deterministic: the hit-the-cut sequence built against it makes it pay every request.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clusteropt.algorithms.ring.component import ComponentRing
from clusteropt.instances.ring import RingInstance, random_ring
from clusteropt.online.ring import hit_the_cut, run_ring
from clusteropt.verify.ring import check_ring_run


def _components(algo) -> set[frozenset[int]]:
    groups: dict[int, set[int]] = {}
    for v, h in enumerate(algo.arc_heads().tolist()):
        groups.setdefault(h, set()).add(v)
    return {frozenset(g) for g in groups.values()}


class _GeneralRule:
    """The rule on any request graph, by enumeration (no ring structure used): the reference."""

    def __init__(self, n, k, alpha):
        self.n, self.k, self.alpha = n, k, alpha
        self.reset()

    def reset(self):
        self.parts = [frozenset([v]) for v in range(self.n)]
        self.w: dict[tuple[int, int], int] = {}

    def weight(self, sets):
        members = {v: i for i, s in enumerate(sets) for v in s}
        return sum(c for (u, v), c in self.w.items() if u in members and v in members and members[u] != members[v])

    def request(self, u, v, paid):
        if not paid:
            return
        key = (min(u, v), max(u, v))
        self.w[key] = self.w.get(key, 0) + 1
        best = None
        for r in range(2, len(self.parts) + 1):
            for sets in itertools.combinations(self.parts, r):
                f = self.weight(sets) - (r - 1) * self.alpha
                if f >= 0 and (best is None or (f, r) > best[:2]):
                    best = (f, r, sets)
        if best is None:
            return
        merged = frozenset().union(*best[2])
        if len(merged) > self.k:
            self.reset()
            return
        self.parts = [p for p in self.parts if p not in best[2]] + [merged]
        self.w = {(a, b): c for (a, b), c in self.w.items() if not (a in merged and b in merged)}

    def check_invariant(self):
        for r in range(2, len(self.parts) + 1):
            for sets in itertools.combinations(self.parts, r):
                assert self.weight(sets) < (r - 1) * self.alpha


def _drive(algo, inst, *, reference=None, check_every_step=True):
    algo.start(inst, np.random.default_rng(0))
    n, k = inst.n, inst.k
    state = algo.state_
    for t, e in enumerate(inst.requests.tolist()):
        paid = bool(state.server_of[e] != state.server_of[(e + 1) % n])
        state.now = t
        algo.serve(e)
        if reference is not None:
            reference.request(e, (e + 1) % n, paid)
            assert _components(algo) == set(reference.parts), t
        if check_every_step:
            so = state.server_of
            for comp in _components(algo):
                assert len(comp) <= k
                assert len({int(so[v]) for v in comp}) == 1, (t, sorted(comp))
                heads = [v for v in comp if (v - 1) % n not in comp]
                assert len(heads) == 1, (t, sorted(comp))   # an arc
            assert state.load.max() <= algo.cap_
    run = {"initial": inst.initial.tolist(), "migrations": state.migrations().tolist(),
           "augmentation": algo.augmentation}
    chk = check_ring_run(inst, run)
    assert chk.feasible, chk.violations[:3]
    return chk


@settings(max_examples=200, deadline=None)
@given(
    shape=st.sampled_from([(2, 2), (4, 1), (4, 2), (6, 2), (6, 3), (8, 2), (8, 4)]),
    alpha=st.sampled_from([0.5, 1.0, 2.0, 3.0]),
    epsilon=st.sampled_from([0.0, 0.5, 1.0]),
    data=st.data(),
)
def test_ring_rule_is_the_general_rule(shape, alpha, epsilon, data):
    n, servers = shape
    T = data.draw(st.integers(1, 60))
    edges = data.draw(st.lists(st.integers(0, n - 1), min_size=T, max_size=T))
    initial = data.draw(st.permutations([v // (n // servers) for v in range(n)]))  # arcs or scattered
    inst = RingInstance(n=n, servers=servers, requests=edges, alpha=alpha, initial=initial)
    ref = _GeneralRule(n, inst.k, alpha)
    algo = ComponentRing(epsilon=epsilon)
    _drive(algo, inst, reference=ref)
    ref.check_invariant()
    assert algo.merges_ * alpha <= algo.hits_


@pytest.mark.parametrize("pattern", ["uniform", "hotspot", "moving-hotspot", "phases", "zipf"])
@pytest.mark.parametrize("alpha", [1.0, 4.0])
def test_runs_replay_and_account(pattern, alpha):
    inst = random_ring(32, 4, 3000, pattern, seed=2, alpha=alpha)
    run = run_ring("component", inst)
    chk = check_ring_run(inst, run)
    assert chk.feasible, chk.violations[:3]
    assert run.augmentation == 3.0 and chk.max_load <= 3 * inst.k
    assert chk.communication_cost == run.costs["communication"]
    assert chk.migration_cost == pytest.approx(run.costs["migration"])
    assert run.costs["merges"] * alpha <= run.costs["communication"]
    logged = {(int(t), int(v)) for t, v, _ in run.migrations}
    assert len(logged) == len(run.migrations)   # one migration per process per step


@pytest.mark.parametrize("pattern", ["uniform", "moving-hotspot", "phases"])
@pytest.mark.parametrize(("n", "servers"), [(24, 4), (16, 2), (32, 8)])
def test_capacity_two_k_is_enough(pattern, n, servers):
    """At eps = 0 (capacity 2k) every merge finds a server: the least loaded holds <= k."""
    inst = random_ring(n, servers, 3000, pattern, seed=n + servers, alpha=1.0)
    algo = ComponentRing(epsilon=0.0)
    chk = _drive(algo, inst)
    assert algo.merges_ > 0 and chk.max_load <= 2 * inst.k


def test_epoch_ends_when_a_merge_would_exceed_k():
    # n = 4 on 2 servers (k = 2): processes 1, 2 merge after alpha = 1 paid request on edge 1; then
    # edge 2 joins {1, 2} and {3} (3 > k): the epoch ends, every process alone again, nothing moves
    inst = RingInstance(n=4, servers=2, requests=[1, 2], alpha=1.0, initial=[0, 0, 1, 1])
    algo = ComponentRing()
    _drive(algo, inst)
    assert algo.merges_ == 1 and algo.epochs_ == 2
    assert _components(algo) == {frozenset([v]) for v in range(4)}
    assert algo.state_.migrations().tolist() == [[0, 2, 0]]


def test_alpha_zero_never_moves():
    inst = random_ring(16, 4, 500, "hotspot", seed=0, alpha=0.0)
    run = run_ring("component", inst)
    assert len(run.migrations) == 0 and run.costs["epochs"] == run.costs["communication"] + 1


def test_hit_the_cut_makes_it_pay_every_request():
    inst = hit_the_cut(random_ring(32, 4, 0, "uniform", seed=0), 2000, against="component")
    run = run_ring("component", inst)
    chk = check_ring_run(inst, run)
    assert chk.feasible and chk.communication_cost == 2000


def test_bad_epsilon():
    inst = random_ring(8, 2, 10, "uniform", seed=0)
    for bad in (-0.5, float("nan"), "1", True):
        with pytest.raises(ValueError, match=r"epsilon = .*expected a finite number >= 0"):
            ComponentRing(epsilon=bad).start(inst, np.random.default_rng(0))
