"""Coflow orderings and schedulers: invariants, bounds, and agreement with naive slot-by-slot versions."""

import numpy as np
import pytest

from clusteropt.algorithms.coflow.orderings import (
    fifo_order,
    lp_order,
    primal_dual_order,
    sebf_order,
    sincronia_order,
    size_order,
)
from clusteropt.algorithms.coflow.schedulers import (
    SCHEDULERS,
    decompose_into_matchings,
    greedy_schedule,
    paper_schedule,
)
from clusteropt.instances import CoflowInstance, random_coflows
from clusteropt.verify import check_coflow_schedule, check_order


def small(seed, release=True, n=6, ports=4):
    return random_coflows(n, ports, max_units=6, release=release, weights="random", seed=seed)


def naive_greedy_completion(inst, order):
    """Slot by slot: flows in priority order take a unit when both ports are still free."""
    rem = inst.units.astype(int).tolist()
    pos = {int(c): k for k, c in enumerate(order)}
    flows = sorted(range(inst.n_flows), key=lambda f: (pos[int(inst.coflow[f])], f))
    comp = inst.release.astype(int).copy()
    t = 0
    while any(rem):
        t += 1
        busy_in, busy_out = set(), set()
        for f in flows:
            c, u, v = int(inst.coflow[f]), int(inst.input[f]), int(inst.output[f])
            if rem[f] and inst.release[c] < t and u not in busy_in and v not in busy_out:
                rem[f] -= 1
                busy_in.add(u)
                busy_out.add(v)
                comp[c] = max(comp[c], t)
    return comp


def bssi(loads, weight):
    """Sincronia's BSSI written out independently (docs/algorithms/coflow.md B9)."""
    loads, w = np.asarray(loads, float), np.asarray(weight, float).copy()
    left, order = list(range(len(w))), []
    while left:
        port = int(np.argmax(loads[left].sum(axis=0)))
        cands = [j for j in left if loads[j, port] > 0]
        if not cands:
            order = left + order
            break
        best = min(cands, key=lambda j: (w[j] / loads[j, port], j))
        scale = w[best] / loads[best, port]
        for j in left:
            w[j] -= scale * loads[j, port]
        order.insert(0, best)
        left.remove(best)
    return order


@pytest.mark.parametrize("seed", range(40))
def test_greedy_equals_the_slot_by_slot_priority_greedy(seed):
    inst = small(seed, release=seed % 2 == 0)
    order = primal_dual_order(inst.loads(), inst.weight, inst.release).order
    check = check_coflow_schedule(inst, greedy_schedule(inst, order))
    assert check.feasible, check.violations
    assert (check.completion == naive_greedy_completion(inst, order)).all()


@pytest.mark.parametrize("seed", range(40))
def test_schedules_are_feasible_and_meet_the_prefix_bounds(seed):
    release = seed % 2 == 0
    inst = small(seed, release=release, n=8, ports=5)
    loads = inst.loads()
    for order in (primal_dual_order(loads, inst.weight, inst.release).order,
                  np.random.default_rng(seed).permutation(inst.n_coflows)):
        greedy = check_coflow_schedule(inst, greedy_schedule(inst, order))
        paper = check_coflow_schedule(inst, paper_schedule(inst, order))
        assert greedy.feasible and paper.feasible, (greedy.violations, paper.violations)
        for k in range(inst.n_coflows):
            j = order[k]
            delta = loads[order[: k + 1]].sum(axis=0).max()
            if delta == 0:
                continue
            # greedy: C_k <= r_k + 2 Delta(prefix) - 1 (docs/algorithms/coflow.md B7, list scheduling)
            assert greedy.completion[j] <= inst.release[j] + 2 * delta - 1
            if not release:
                # moved blocks: C_k <= sum_{p<=k} Delta(G'_p) <= 2 Delta(prefix) (slides' lemma)
                assert paper.completion[j] <= 2 * delta


def test_paper_schedule_moves_edges_back_as_on_the_slides():
    # the slides' example shape: coflow 2 fits beside coflow 1, so block 2 shrinks to nothing
    inst = CoflowInstance(3, 3, coflow=[0, 1, 2], input=[0, 1, 2], output=[0, 1, 2], units=[4, 3, 4],
                          weight=[1.0, 1.0, 1.0], release=[0, 0, 0])
    check = check_coflow_schedule(inst, paper_schedule(inst, [0, 1, 2]))
    assert check.feasible and check.completion.tolist() == [4, 3, 4]


def test_primal_dual_without_release_is_bssi():
    for seed in range(30):
        inst = small(seed, release=False, n=9, ports=5)
        pd = primal_dual_order(inst.loads(), inst.weight).order.tolist()
        assert pd == bssi(inst.loads(), inst.weight)
        assert sincronia_order(inst.loads(), inst.weight).tolist() == pd


def test_primal_dual_release_branch_puts_a_late_coflow_last():
    loads = np.array([[5, 0], [0, 5], [1, 1]])
    res = primal_dual_order(loads, [1.0, 1.0, 1.0], [0, 0, 100], kappa=0.5)
    assert res.order[-1] == 2 and res.alpha_steps >= 1
    assert primal_dual_order(loads, [1.0, 1.0, 1.0], [0, 0, 100], kappa=1000).alpha_steps == 0


def test_primal_dual_is_fifo_when_releases_outweigh_port_loads():
    # coflow j: 2 units through port pair j % 4, released at 10 j; the busiest port's load of any
    # release-prefix stays below r_jhat / kappa, so the release branch fires at every step
    n = 20
    loads = np.zeros((n, 8))
    for j in range(n):
        loads[j, j % 4] = loads[j, 4 + j % 4] = 2
    release = 10.0 * np.arange(n) + 10
    res = primal_dual_order(loads, np.ones(n), release, kappa=0.5)
    assert res.order.tolist() == list(range(n)) and res.alpha_steps == n
    # with every release at 0 the same coflows are ordered by load (BSSI), not by index
    assert primal_dual_order(loads, np.ones(n), np.zeros(n)).order.tolist() != list(range(n))


@pytest.mark.parametrize(("load", "kappa", "low", "high"), [(0.9, 0.5, 0.9, 1.0), (0.9, 2.0, 0.0, 0.5),
                                                           (3.0, 0.5, 0.3, 0.7)])
def test_primal_dual_on_trace_like_arrivals_is_mostly_fifo_below_load_one_over_kappa(load, kappa, low, high):
    # the mechanism in primal_dual_order's docstring, on Poisson arrivals with heavy-tailed sizes
    # (measured: 284 of 300 positions at load 0.9, 64 with kappa 2, 142 at load 3)
    inst = random_coflows(300, 40, load=load, seed=1)
    order = primal_dual_order(inst.loads(), inst.weight, inst.release, kappa=kappa).order
    fifo = np.argsort(inst.release, kind="stable")
    assert low <= float(np.mean(order == fifo)) <= high


def test_orders_are_permutations_and_sorted_as_named():
    inst = random_coflows(30, 8, seed=3, weights="random")
    loads, total = inst.loads(), inst.total_units()
    orders = {
        "pd": primal_dual_order(loads, inst.weight, inst.release).order,
        "sebf": sebf_order(loads, inst.weight, inst.release),
        "fifo": fifo_order(inst.release, inst.ids),
        "small": size_order(total),
        "large": size_order(total, largest_first=True),
        "lp": lp_order(np.random.default_rng(0).random(30)),
    }
    for name, order in orders.items():
        assert check_order(order, 30).feasible, name
    assert np.all(np.diff(loads.max(axis=1)[orders["sebf"]]) >= 0)
    assert np.all(np.diff(inst.release[orders["fifo"]]) >= 0)
    assert np.all(np.diff(total[orders["small"]]) >= 0) and np.all(np.diff(total[orders["large"]]) <= 0)


def test_bad_inputs_raise():
    inst = small(0)
    with pytest.raises(ValueError, match="permutation"):
        greedy_schedule(inst, [0, 0, 1, 2, 3, 4])
    with pytest.raises(ValueError, match="kappa"):
        primal_dual_order(inst.loads(), inst.weight, kappa=0)
    with pytest.raises(ValueError, match=r"weight\.shape"):
        primal_dual_order(inst.loads(), [1.0])


@pytest.mark.parametrize("seed", range(50))
def test_decomposition_covers_each_edge_once_in_delta_matchings(seed):
    rng = np.random.default_rng(seed)
    m = rng.integers(0, 6, size=(rng.integers(1, 6), rng.integers(1, 6))) * (rng.random((1, 1)) < 2)
    parts = decompose_into_matchings(m)
    acc = np.zeros_like(m)
    for count, rows, cols in parts:
        assert len(set(rows.tolist())) == rows.size and len(set(cols.tolist())) == cols.size
        acc[rows, cols] += count
    assert (acc == m).all()
    assert sum(c for c, _, _ in parts) == max(m.sum(axis=0).max(initial=0), m.sum(axis=1).max(initial=0))


def test_registry_names():
    assert set(SCHEDULERS) == {"paper", "greedy", "madd"}
