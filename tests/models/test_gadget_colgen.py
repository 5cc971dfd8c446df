"""Alg. 2 lines 4-6 of paper 000 by column generation (:mod:`clusteropt.models.gadget.colgen`).

Bars: the pricing DP finds the cheapest placement, checked against brute force over every placement
on small trees (random prices, servers with their own children included); column generation reaches
the tree LP's optimum (:func:`build_embedding_matrix`, solved by HiGHS) on tight and loose slots;
its Lagrangian bound is never below the optimum; its decomposition is a valid one (weights add to
``x`` <= 1, every mapping places ``kappa`` workers within the per-server fit, the weighted loads recomputed
by :class:`Mapping` stay within every capacity); LP-RS-MDE through it gives allocations the verifier
accepts and the same augmented value; the options are checked.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clusteropt.instances.gadget.instance import Cluster, fat_tree_cluster, gadget_preset, random_gadget
from clusteropt.models.gadget.colgen import price_placements, solve_embedding_colgen
from clusteropt.models.gadget.gvne import slot_problem, tree_layout
from clusteropt.models.gadget.matrix import build_embedding_matrix, solve_matrix
from clusteropt.models.gadget.trees import server_fit
from clusteropt.online import run_online
from clusteropt.online.gadget import make_policy
from clusteropt.rounding.gadget import lp_rs_mde, positive_gain, select_rings
from clusteropt.solvers.result import NotOptimalError
from clusteropt.verify import check_gadget_allocation, check_gadget_schedule


def _tight(seed: int, n_jobs: int = 6, utility: str = "sqrt"):
    """A small tree where GPUs and bandwidth both bind (as in tests/rounding/test_gadget.py)."""
    cl = fat_tree_cluster(5, n_racks=2, gpus=(1, 2, 4), server_bw=(5, 10), rack_bw=(8, 14), seed=seed)
    return random_gadget(n_jobs, workers=(2, 5), cluster=cl, horizon=5, arrivals="zero", bandwidth=(3, 7),
                         utility=utility, seed=seed)


def _brute_cost(lay, n_srv, kappa, unit, link, own_cap):
    """Cheapest placement by enumeration: every vector of per-server counts summing to kappa."""
    best = np.inf
    below = {n: list(lay.below[n]) for n in lay.parent}
    for counts in itertools.product(*(range(int(c) + 1) for c in own_cap)):
        if sum(counts) != kappa:
            continue
        cost = float(np.dot(counts, unit))
        for c, srv in below.items():
            held = sum(counts[s] for s in srv)
            if 0 < held < kappa:
                cost += link[c]
        best = min(best, cost)
    return best


def _server_with_children(dangling: bool = False) -> Cluster:
    """Servers 0..3 and switch 4, links 0-1, 0-2, 0-4, 4-3: server 0 is an inner node of the tree, with
    its own workers and children; ``dangling`` adds switch 5 below switch 4 with nothing below it (a
    tree node without parts)."""
    pairs = [(0, 1), (0, 2), (0, 4), (4, 3)] + ([(4, 5)] if dangling else [])
    links = [[u, v] for u, v in pairs] + [[v, u] for u, v in pairs]
    return Cluster(capacity=np.array([[2.0], [1.0], [3.0], [2.0]]), links=np.array(links),
                   bandwidth=np.full(len(links), 10.0), n_switches=2 if dangling else 1, resources=("gpu",))


def test_pricing_without_jobs_is_empty():
    lay = tree_layout(fat_tree_cluster(4, n_racks=2, seed=0))
    p = price_placements(lay, np.zeros(0, dtype=int), np.zeros((0, 4)), np.zeros((0, 7)), np.zeros((0, 4), int))
    assert p.cost.shape == (0,) and p.counts.shape == (0, 4) and p.below.shape == (0, 7)


@pytest.mark.parametrize("seed", range(7))
def test_pricing_matches_brute_force(seed):
    rng = np.random.default_rng(seed)
    cl = _server_with_children(dangling=seed == 6) if seed >= 5 else fat_tree_cluster(5, n_racks=2, seed=seed)
    lay = tree_layout(cl)
    J = 4
    kappa = rng.integers(1, 6, J)
    unit = rng.uniform(0, 3, (J, cl.n_servers)).round(2)
    link = rng.uniform(0, 4, (J, cl.n_nodes)).round(2)
    own_cap = rng.integers(0, 4, (J, cl.n_servers))
    got = price_placements(lay, kappa, unit, link, own_cap)
    for j in range(J):
        want = _brute_cost(lay, cl.n_servers, int(kappa[j]), unit[j], link[j], own_cap[j])
        assert got.cost[j] == pytest.approx(want, abs=1e-9)
        if np.isfinite(want):  # the placement returned costs what the DP says
            counts = got.counts[j]
            assert counts.sum() == kappa[j] and (counts <= own_cap[j]).all()
            cost = float(np.dot(counts, unit[j]))
            for c in lay.parent:
                held = int(counts[list(lay.below[c])].sum())
                assert got.below[j, c] == held
                cost += link[j, c] if 0 < held < kappa[j] else 0.0
            assert cost == pytest.approx(want, abs=1e-9)


@pytest.mark.parametrize("compiled", [False, True])
def test_min_plus_matches_the_definition(compiled):
    from clusteropt.models.gadget.colgen import _min_plus

    rng = np.random.default_rng(7)
    K = 9
    for m in (1, 3, 5, K + 1):  # parts holding at most m - 1 workers (a server), and wide ones
        f = rng.uniform(0, 5, (4, K + 1)).round(1)  # rounded: ties occur
        f[rng.random(f.shape) < 0.2] = np.inf
        g = np.full((4, K + 1), np.inf)
        g[:, :m] = rng.uniform(0, 5, (4, m)).round(1)
        h, b = _min_plus(f, g, compiled=compiled)
        for j in range(4):
            for c in range(K + 1):
                sums = [f[j, c - q] + g[j, q] for q in range(c + 1)]
                want = min(sums)
                assert h[j, c] == pytest.approx(want) if np.isfinite(want) else np.isinf(h[j, c])
                if np.isfinite(want):  # the largest minimising b
                    assert b[j, c] == max(q for q in range(c + 1) if sums[q] == want)


@settings(max_examples=80, deadline=None)
@given(J=st.integers(1, 12), width=st.integers(1, 20), seed=st.integers(0, 10**6))
def test_compiled_min_plus_equals_numpy(J, width, seed):
    """The numba kernel gives the numpy reference's ``h`` and ``b`` exactly (ties, infinities, empty ``g``)."""
    from clusteropt.models.gadget.colgen import _min_plus

    rng = np.random.default_rng(seed)
    f = rng.integers(0, 6, (J, width)).astype(float) + (rng.random((J, width)) if seed % 2 else 0.0)
    g = rng.integers(0, 6, (J, width)).astype(float)
    f[rng.random(f.shape) < 0.3] = np.inf
    g[rng.random(g.shape) < 0.4] = np.inf
    if seed % 7 == 0:
        g[:] = np.inf
    want, got = _min_plus(f, g), _min_plus(f, g, compiled=True)
    assert np.array_equal(want[0], got[0]) and np.array_equal(want[1], got[1]) and got[1].dtype == np.int16


def test_pricing_same_with_and_without_jit(monkeypatch):
    rng = np.random.default_rng(3)
    cl = fat_tree_cluster(40, n_racks=4, seed=1)
    lay = tree_layout(cl)
    J = 30
    kappa = rng.integers(1, 9, J)
    unit = rng.uniform(0, 3, (J, cl.n_servers)).round(2)
    link = rng.uniform(0, 4, (J, cl.n_nodes)).round(2)
    own_cap = rng.integers(0, 5, (J, cl.n_servers))
    monkeypatch.setenv("CLUSTEROPT_JIT", "1")
    fast = price_placements(lay, kappa, unit, link, own_cap)
    monkeypatch.setenv("CLUSTEROPT_JIT", "0")
    ref = price_placements(lay, kappa, unit, link, own_cap)
    for name in ("cost", "counts", "below"):
        assert np.array_equal(getattr(fast, name), getattr(ref, name))


def _slots():
    out = []
    for seed, sizes in ((0, "lemma7"), (1, "kmax"), (3, "kmax"), (5, "lemma7")):
        inst = _tight(seed, utility="log" if seed == 1 else "sqrt")
        p = slot_problem(inst, 1)
        if sizes == "lemma7":
            kappa = select_rings(p)[0].kappa
        else:
            kappa = dict(zip(p.jobs.tolist(), p.kmax.tolist(), strict=True))
        out.append((p, kappa))
    inst = gadget_preset("paper", jobs=30, seed=4, utility="sqrt")
    p = positive_gain(slot_problem(inst, inst.horizon))
    out.append((p, select_rings(p)[0].kappa))
    return out


@pytest.mark.parametrize("case", range(5))
@pytest.mark.parametrize("master", ["primal", "dual"])
def test_colgen_reaches_the_tree_lp_optimum_with_a_valid_decomposition(case, master):
    p, kappa = _slots()[case]
    lp = build_embedding_matrix(p, kappa)
    res_lp, _ = solve_matrix(lp)
    res = solve_embedding_colgen(p, kappa, master=master)
    assert res.status == "converged"
    assert res.value == pytest.approx(res_lp.objective, rel=1e-7, abs=1e-7)
    assert res.bound >= res_lp.objective - 1e-6 * max(1.0, abs(res_lp.objective))
    inst, cl = p.inst, p.inst.cluster
    node, link = np.zeros(cl.capacity.shape), np.zeros(cl.n_links)
    for i, parts in res.decomposition.items():
        fit = server_fit(p, i)
        total = sum(w for w, _ in parts)
        assert total == pytest.approx(res.x[i]) and total <= 1 + 1e-7
        for w, mp in parts:
            assert w > 0 and mp.job == i and mp.size == kappa[i] and mp.valid
            assert all(n <= fit[s] for s, n in mp.workers)
            node += w * mp.node_load(inst.per_worker[i], cl.n_servers)
            link += w * mp.link_load(inst.bandwidth[i], cl.n_links)
    assert (node <= cl.capacity + 1e-6).all() and (link <= cl.bandwidth + 1e-6).all()
    gain = sum(w * float(p.pi[list(p.jobs).index(i)][kappa[i] - 1]) for i, parts in res.decomposition.items()
               for w, _ in parts)
    assert gain == pytest.approx(res.value, rel=1e-7, abs=1e-7)


def test_lp_rs_mde_through_colgen_is_verified_and_has_the_same_augmented_value():
    for seed in (0, 3):
        p = slot_problem(_tight(seed), 1)
        for rounding in ("safe", "paper"):
            _, i_lp = lp_rs_mde(p, rng=seed, rounding=rounding)
            a_cg, i_cg = lp_rs_mde(p, rng=seed, rounding=rounding, embed_route="colgen")
            assert i_cg["augmented_value"] == pytest.approx(i_lp["augmented_value"], rel=1e-7, abs=1e-7)
            assert i_cg["builder"] == "colgen" and i_cg["embed_route"] == "colgen" and i_cg["colgen_rounds"] >= 1
            assert i_cg["colgen_bound"] >= i_cg["augmented_value"] - 1e-6
            if rounding == "safe":
                check = check_gadget_allocation(p.inst, a_cg, p.t, used=p.z_prev)
                assert check.ok, check.violations[:3]


def test_online_run_with_colgen_passes_the_verifier():
    inst = gadget_preset("small", jobs=6, seed=2, utility="sqrt")
    run = run_online(make_policy("gadget", slot_solver="lp-rs-mde", embed_route="colgen"), inst,
                     horizon=inst.horizon, seed=1)
    assert check_gadget_schedule(inst, run.schedule).ok
    assert run.params["embed_route"] == "colgen"
    assert all(info.get("embed_route") == "colgen" for info in run.slot_info if info.get("jobs"))


def test_errors():
    p = slot_problem(_tight(0), 1)
    kappa = dict(zip(p.jobs.tolist(), p.kmax.tolist(), strict=True))
    with pytest.raises(ValueError, match="embed_route"):
        lp_rs_mde(p, embed_route="dw")
    with pytest.raises(ValueError, match="kappa"):
        solve_embedding_colgen(p, {int(p.jobs[0]): 99})
    with pytest.raises(NotOptimalError, match="max_rounds"):
        solve_embedding_colgen(p, kappa, max_rounds=0)
    with pytest.raises(ValueError, match="master = 'ipm'; expected one of"):
        solve_embedding_colgen(p, kappa, master="ipm")
    from clusteropt.instances.gadget.instance import k_ary_fat_tree

    inst = random_gadget(3, cluster=k_ary_fat_tree(4, seed=0), horizon=3, seed=0)
    q = slot_problem(inst, inst.horizon)
    with pytest.raises(ValueError, match="tree"):
        solve_embedding_colgen(q, dict(zip(q.jobs.tolist(), q.kmax.tolist(), strict=True)))
    with pytest.raises(ValueError, match="embed_route"):
        run_online(make_policy("gadget", slot_solver="lp-rs-mde", embed_route="colgen"), inst,
                   horizon=inst.horizon, seed=0)
