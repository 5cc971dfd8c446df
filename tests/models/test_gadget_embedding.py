"""The augmented LP of Alg. 2 line 4 (paper 000, Sec. V-C) and its decomposition (lines 5-6), tree form.

Bars: the decomposition reproduces the LP (weights and loads), every mapping is a valid ring of the
right size routed on link walks and passes the checker on its own, LP >= ILP with the same ring sizes
(and ILP == brute force on a tiny instance), loose capacities embed everything, bad input is refused.
"""

from __future__ import annotations

import dataclasses
import itertools

import numpy as np
import pyomo.environ as pyo
import pytest

from clusteropt.decisions.gadget import Mapping, Ring, SlotAllocation
from clusteropt.instances.gadget.instance import (
    Cluster,
    GadgetInstance,
    fat_tree_cluster,
    gadget_preset,
    k_ary_fat_tree,
    random_gadget,
)
from clusteropt.models.gadget.embedding import build_embedding_lp, decompose_embedding
from clusteropt.models.gadget.gvne import build_gvne, slot_problem, tree_layout
from clusteropt.models.gadget.trees import check_kappa, server_fit
from clusteropt.solvers import solve
from clusteropt.verify import check_gadget_allocation

TOL = 1e-6


def _tight(seed: int, n_jobs: int = 6, utility: str = "sqrt", n_servers: int = 5, resources: int = 1):
    """A small tree where GPUs and bandwidth both bind (as in tests/models/test_gadget.py).

    ``resources=2`` adds a second resource (``"cpu"``) with its own capacities and per-worker
    demands, so that the node loads ``h[i, s, r]`` are checked per resource.
    """
    cl = fat_tree_cluster(n_servers, n_racks=2, gpus=(1, 2, 4), server_bw=(5, 10), rack_bw=(8, 14), seed=seed)
    inst = random_gadget(n_jobs, workers=(2, 5), cluster=cl, horizon=5, arrivals="zero", bandwidth=(3, 7),
                         utility=utility, seed=seed)
    if resources == 2:
        rng = np.random.default_rng(1000 + seed)
        cap = np.column_stack([cl.capacity[:, 0], rng.integers(2, 9, cl.n_servers).astype(float)])
        cl = dataclasses.replace(cl, capacity=cap, resources=("gpu", "cpu"))
        pw = np.column_stack([np.ones(n_jobs), rng.choice([0.5, 1.0, 2.0], n_jobs)])
        inst = dataclasses.replace(inst, cluster=cl, per_worker=pw, limit=pw * 1000.0)
    return inst


def _kappa(problem, rng=None) -> dict[int, int]:
    """Ring sizes: ``kmax`` per job, or uniform in ``1 .. kmax`` with ``rng``."""
    if rng is None:
        return {int(i): int(k) for i, k in zip(problem.jobs, problem.kmax, strict=True)}
    return {int(i): int(rng.integers(1, k + 1)) for i, k in zip(problem.jobs, problem.kmax, strict=True)}


def _solved(problem, kappa, **kw):
    m = build_embedding_lp(problem, kappa, **kw)
    res = solve(m)
    return m, res


def _assert_ring_walks(cl, mp: Mapping, order) -> None:
    """A mapping's ring: its servers once each, in DFS order, every path a link walk between them."""
    links = np.asarray(cl.links)
    servers = [s for s, _ in mp.workers]
    assert all(n >= 1 for _, n in mp.workers)
    assert servers == sorted(set(servers))
    if len(servers) < 2:
        assert mp.ring is None
        return
    ring = mp.ring
    assert ring is not None
    assert sorted(ring.servers) == servers
    assert list(ring.servers) == [s for s in order if s in set(servers)]  # the tree form's ring order
    assert len(ring.paths) == len(ring.servers)
    m = len(ring.servers)
    for k, p in enumerate(ring.paths):
        assert len(p) >= 1
        assert links[p[0], 0] == ring.servers[k]
        for a, b in itertools.pairwise(p):
            assert links[a, 1] == links[b, 0]
        assert links[p[-1], 1] == ring.servers[(k + 1) % m]


def _lp_loads(problem, m):
    cl = problem.inst.cluster
    h = {i: np.array([[pyo.value(m.h[i, s, r]) for r in range(len(cl.resources))] for s in range(cl.n_servers)])
         for i in m.I}
    o = {i: np.array([pyo.value(m.o[i, e]) for e in range(cl.n_links)]) for i in m.I}
    return h, o


def _assert_reproduces(problem, m, dec) -> tuple[int, int]:
    """Decomposition bars: weights add up to x, weighted loads to h and o, every mapping a valid
    ring of size kappa_i on link walks.  Returns (fractional x count, multi-server mappings).
    """
    inst = problem.inst
    cl = inst.cluster
    order = tree_layout(cl).dfs_order
    x = {i: float(pyo.value(m.x[i])) for i in m.I}
    h, o = _lp_loads(problem, m)
    assert sorted(dec) == sorted(m.kappa)
    multi = 0
    for i, maps in dec.items():
        phis = [phi for phi, _ in maps]
        assert all(phi > 0 for phi in phis)
        assert sum(phis) == pytest.approx(x[i], abs=TOL), i
        node = np.zeros((cl.n_servers, len(cl.resources)))
        link = np.zeros(cl.n_links)
        for phi, mp in maps:
            assert isinstance(mp, Mapping) and mp.job == i
            assert mp.size == m.kappa[i]
            assert mp.valid
            _assert_ring_walks(cl, mp, order)
            multi += mp.ring is not None
            node += phi * mp.node_load(inst.per_worker[i], cl.n_servers)
            link += phi * mp.link_load(float(inst.bandwidth[i]), cl.n_links)
        np.testing.assert_allclose(node, h[i], atol=TOL, err_msg=f"job {i}: h")
        np.testing.assert_allclose(link, o[i], atol=TOL, err_msg=f"job {i}: o")
        # distinct mappings (a decomposition that repeats one is not wrong, but would be odd)
        assert len({(mp.workers, mp.ring) for _, mp in maps}) == len(maps)
    return sum(TOL < v < 1 - TOL for v in x.values()), multi


CASES = [  # (seed, z_prev of every job, random kappa?, resources)
    (0, 0, False, 1), (1, 0, False, 1), (3, 0, False, 1), (4, 0, True, 1), (5, 0, False, 1),
    (2, 3, True, 1), (6, 0, True, 2), (7, 2, False, 2),
]


def test_decomposition_reproduces_the_lp():
    fractional = 0
    multi_server = 0
    for seed, zscale, random_kappa, n_res in CASES:
        inst = _tight(seed, resources=n_res)
        p = slot_problem(inst, 1, np.full(inst.n_jobs, float(zscale)))
        kappa = _kappa(p, np.random.default_rng(seed) if random_kappa else None)
        m, res = _solved(p, kappa, form="tree")
        assert m.form == "tree"
        assert m.kappa == kappa
        pos = {int(i): j for j, i in enumerate(p.jobs.tolist())}
        # objective (12) with the sizes fixed
        assert res.objective == pytest.approx(
            sum(float(p.pi[pos[i]][kappa[i] - 1]) * float(pyo.value(m.x[i])) for i in m.I), abs=1e-6)
        frac, multi = _assert_reproduces(p, m, decompose_embedding(p, m))
        fractional += frac
        multi_server += multi
    # the "small" preset at later slots (bursty arrivals), bandwidth cut so that rings compete
    for seed, t in ((0, 10), (1, 20), (2, 15)):
        inst = gadget_preset("small", jobs=8, seed=seed, utility="log")
        cl = inst.cluster
        inst = dataclasses.replace(inst, cluster=dataclasses.replace(cl, bandwidth=cl.bandwidth / 10),
                                   bandwidth=inst.bandwidth * 2)
        p = slot_problem(inst, t, np.random.default_rng(seed).integers(0, 4, inst.n_jobs).astype(float))
        assert p.jobs.size >= 2
        m, _ = _solved(p, _kappa(p))
        frac, multi = _assert_reproduces(p, m, decompose_embedding(p, m))
        fractional += frac
        multi_server += multi
    assert fractional >= 1, "no instance had a fractional x: the test proves little"
    assert multi_server >= 1, "no mapping spans two servers: the ring paths were never exercised"


def _custom(cap, pairs, link_bw, n_switches, job_bw, max_workers):
    """A hand-made tree (links both ways) with sqrt-utility jobs of one GPU per worker."""
    links, bw = [], []
    for (u, v), b in zip(pairs, link_bw, strict=True):
        links += [[u, v], [v, u]]
        bw += [b, b]
    cl = Cluster(np.asarray(cap, dtype=float)[:, None], links=links, bandwidth=bw, n_switches=n_switches)
    n = len(job_bw)
    return GadgetInstance(cl, horizon=2, arrival=[1] * n, max_workers=max_workers, per_worker=[[1.0]] * n,
                          limit=[[100.0]] * n, bandwidth=job_bw, zeta=[1.0] * n, utility="sqrt",
                          utility_params=[[10.0, 0, 0]] * n)


UNUSUAL_TREES = {  # trees where servers are inner nodes (they forward ring traffic) or the root
    "line of servers": ([2, 2, 2], [(0, 1), (1, 2)], [10, 10], 0, [3.0, 4.0], [4, 4]),
    "server hub": ([1, 2, 2, 2], [(0, 1), (0, 2), (0, 3)], [5, 5, 5], 0, [3.0, 4.0, 2.0], [3, 3, 4]),
    "server below a server": ([1, 2, 2], [(0, 3), (1, 0), (2, 3)], [6, 6, 6], 1, [3.0, 5.0], [4, 5]),
}


@pytest.mark.parametrize("name", sorted(UNUSUAL_TREES))
def test_decomposition_on_unusual_trees(name):
    inst = _custom(*UNUSUAL_TREES[name])
    assert inst.cluster.is_tree()
    p = slot_problem(inst, 1)
    kappa = _kappa(p)
    m, res = _solved(p, kappa)
    frac, multi = _assert_reproduces(p, m, decompose_embedding(p, m))
    assert frac >= 1 and multi >= 1
    assert res.objective >= _ilp_fixed(p, kappa) - 1e-6


def test_decomposition_with_a_switch_without_servers():
    # servers 0, 1 under rack switch 4, server 2 and an empty switch 5 under the core switch 3
    inst = _custom([2, 2, 2], [(0, 4), (1, 4), (4, 3), (3, 5), (2, 3)], [6, 6, 9, 9, 6], 3, [3.0, 5.0], [4, 5])
    assert inst.cluster.is_tree()
    p = slot_problem(inst, 1)
    m, _ = _solved(p, _kappa(p))
    assert any(pyo.value(m.x[i]) > TOL for i in m.I)
    _assert_reproduces(p, m, decompose_embedding(p, m))


@pytest.mark.parametrize("seed", [0, 3, 5])
def test_every_mapping_alone_passes_the_checker(seed):
    inst = _tight(seed)
    p = slot_problem(inst, 1)
    m, _ = _solved(p, _kappa(p))
    dec = decompose_embedding(p, m)
    cl = inst.cluster
    n_checked = 0
    for i, maps in dec.items():
        for _, mp in maps:
            alloc = SlotAllocation.empty(inst.n_jobs, cl.n_servers)
            for s, n in mp.workers:
                alloc.workers[i, s] = n
            if mp.ring is not None:
                alloc.rings[i] = mp.ring
            node = mp.node_load(inst.per_worker[i], cl.n_servers)
            link = mp.link_load(float(inst.bandwidth[i]), cl.n_links)
            fits = bool((node <= cl.capacity + 1e-9).all() and (link <= cl.bandwidth + 1e-9).all())
            check = check_gadget_allocation(inst, alloc, 1, used=p.z_prev)
            if fits:
                assert check.ok, (i, mp, check.violations[:3])
                n_checked += 1
            else:  # a mapping the LP uses fractionally may overload a link alone; nothing else is wrong
                assert {v.constraint for v in check.violations} <= {"(8)/(19) link bandwidth"}
    assert n_checked >= 3


def _ilp_fixed(problem, kappa):
    """The optimum of build_gvne(form="tree") with chi[i, k] fixed to 0 for k != kappa_i."""
    m = build_gvne(problem, form="tree")
    for i, k in m.K:
        if i not in kappa or k != kappa[i]:
            m.chi[i, k].fix(0)
    return solve(m).objective


@pytest.mark.parametrize("seed", range(5))
def test_lp_bounds_the_ilp_with_the_same_ring_sizes(seed):
    inst = _tight(seed, utility="log" if seed % 2 else "sqrt")
    p = slot_problem(inst, 1)
    kappa = _kappa(p, np.random.default_rng(seed) if seed >= 3 else None)
    _, res = _solved(p, kappa)
    ilp = _ilp_fixed(p, kappa)
    assert res.objective >= ilp - 1e-6
    # and the fixed sizes cost something only through capacity: the loose LP is the plain sum
    pos = {int(i): j for j, i in enumerate(p.jobs.tolist())}
    assert res.objective <= sum(float(p.pi[pos[i]][k - 1]) for i, k in kappa.items()) + 1e-6


def _brute_force_fixed(problem, kappa) -> float:
    """Best gain with job i either off or on exactly kappa_i workers, rings in DFS order, every
    candidate (in decreasing order of gain) accepted only if check_gadget_allocation passes it.
    """
    inst = problem.inst
    cl = inst.cluster
    order = tree_layout(cl).dfs_order
    paths = cl.paths()
    pos = {int(i): j for j, i in enumerate(problem.jobs.tolist())}
    jobs = sorted(kappa)
    options = []
    for i in jobs:
        opts = [None]
        for combo in itertools.combinations_with_replacement(range(cl.n_servers), kappa[i]):
            y = np.bincount(combo, minlength=cl.n_servers)
            if (y[:, None] * inst.per_worker[i][None, :] <= cl.capacity + 1e-9).all():
                opts.append(y)
        options.append(opts)

    def gain(choice):
        return sum(float(problem.pi[pos[i]][kappa[i] - 1]) for i, y in zip(jobs, choice, strict=True)
                   if y is not None)

    candidates = sorted(itertools.product(*options), key=gain, reverse=True)
    for choice in candidates:
        load = sum((y[:, None] * inst.per_worker[i][None, :] for i, y in zip(jobs, choice, strict=True)
                    if y is not None), np.zeros_like(cl.capacity))
        if (load > cl.capacity + 1e-9).any():  # necessary; the checker decides the rest
            continue
        alloc = SlotAllocation.empty(inst.n_jobs, cl.n_servers)
        for i, y in zip(jobs, choice, strict=True):
            if y is None:
                continue
            alloc.workers[i] = y
            used = [s for s in order if y[s] > 0]
            if len(used) >= 2:
                alloc.rings[i] = Ring(tuple(used), tuple(tuple(paths[used[k], used[(k + 1) % len(used)]])
                                                         for k in range(len(used))))
        if check_gadget_allocation(inst, alloc, problem.t, used=problem.z_prev).ok:
            return gain(choice)
    return 0.0


def test_ilp_equals_brute_force_and_lp_bounds_it_on_tiny_instances():
    binding = 0
    for seed in range(4):
        cl = fat_tree_cluster(4, n_racks=2, gpus=(1, 2), server_bw=(3, 8), rack_bw=(4, 9), seed=seed)
        inst = random_gadget(3, workers=(2, 4), cluster=cl, horizon=3, arrivals="zero", bandwidth=(2, 6),
                             utility="sqrt", seed=seed)
        p = slot_problem(inst, 1)
        assert p.jobs.size >= 2
        kappa = {int(i): int(min(k, 3)) for i, k in zip(p.jobs, p.kmax, strict=True)}
        brute = _brute_force_fixed(p, kappa)
        ilp = _ilp_fixed(p, kappa)
        _, res = _solved(p, kappa)
        assert ilp == pytest.approx(brute, rel=1e-7, abs=1e-7), seed
        assert res.objective >= brute - 1e-6, seed
        pos = {int(i): j for j, i in enumerate(p.jobs.tolist())}
        binding += brute < sum(float(p.pi[pos[i]][k - 1]) for i, k in kappa.items()) - 1e-6
    assert binding >= 2, "capacities did not bind: the brute force proves little"


def test_loose_capacities_embed_every_job():
    inst = _tight(2, n_jobs=5)
    cl = inst.cluster
    loose = dataclasses.replace(cl, capacity=cl.capacity * 100, bandwidth=cl.bandwidth * 100)
    inst = dataclasses.replace(inst, cluster=loose)
    p = slot_problem(inst, 1, np.full(inst.n_jobs, 2.0))
    pos = {int(i): j for j, i in enumerate(p.jobs.tolist())}
    for kappa in (_kappa(p), _kappa(p, np.random.default_rng(0))):
        m, res = _solved(p, kappa)
        assert res.objective == pytest.approx(sum(float(p.pi[pos[i]][k - 1]) for i, k in kappa.items()),
                                              rel=1e-9)
        for i in m.I:
            assert pyo.value(m.x[i]) == pytest.approx(1.0, abs=1e-7)
        dec = decompose_embedding(p, m)
        assert all(sum(phi for phi, _ in dec[i]) == pytest.approx(1.0, abs=TOL) for i in kappa)


def test_a_subset_of_jobs_can_be_embedded():
    inst = _tight(0)
    p = slot_problem(inst, 1)
    i0 = int(p.jobs[0])
    m, res = _solved(p, {i0: 1})
    assert list(m.I) == [i0]
    assert res.objective == pytest.approx(float(p.pi[0][0]))  # one worker always fits


def test_bad_kappa_names_the_job():
    inst = gadget_preset("small", jobs=4, seed=1, utility="sqrt")
    z = np.zeros(inst.n_jobs)
    z[0] = inst.budget[0]  # job 0 done: inactive
    p = slot_problem(inst, inst.horizon, z)
    assert 0 not in p.jobs.tolist() and p.jobs.size
    j = int(p.jobs[0])
    kmax = int(p.kmax[0])
    with pytest.raises(ValueError, match=r"kappa\[0\].*job 0"):
        build_embedding_lp(p, {0: 1})
    with pytest.raises(ValueError, match=rf"kappa\[{j}\]"):
        build_embedding_lp(p, {j: kmax + 1})
    with pytest.raises(ValueError, match=rf"kappa\[{j}\]"):
        build_embedding_lp(p, {j: 0})
    with pytest.raises(ValueError, match=rf"kappa\[{j}\]"):
        check_kappa(p, {j: -1})
    with pytest.raises(ValueError, match="kappa\\[99\\]"):
        check_kappa(p, {99: 1})
    assert check_kappa(p, {np.int64(j): np.int64(kmax)}) == {j: kmax}


def test_bad_form():
    inst = random_gadget(3, cluster=k_ary_fat_tree(4, gpus=(1, 2), seed=0), workers=(2, 3), horizon=2,
                         arrivals="zero", seed=1, utility="sqrt")
    p = slot_problem(inst, 1)
    with pytest.raises(ValueError, match="tree"):
        build_embedding_lp(p, _kappa(p), form="tree")
    tree = _tight(0)
    pt = slot_problem(tree, 1)
    for form in ("flow", "dense", ""):
        with pytest.raises(ValueError, match="form"):
            build_embedding_lp(pt, _kappa(pt), form=form)
    m = build_embedding_lp(pt, _kappa(pt))  # auto on a tree
    assert m.form == "tree"


def test_a_ring_that_fits_nowhere_gets_x_zero():
    """Servers with 1.5 GPUs: q_i counts 1.5 per server, but each holds one whole worker only."""
    cl = fat_tree_cluster(4, n_racks=2, gpus=(1,), seed=0)
    cl = dataclasses.replace(cl, capacity=np.full((4, 1), 1.5))
    inst = random_gadget(3, workers=(6, 6), cluster=cl, horizon=2, arrivals="zero", bandwidth=(0.1, 0.2),
                         utility="sqrt", seed=0)
    p = slot_problem(inst, 1)
    assert (p.kmax == 6).all()  # floor(4 * 1.5)
    assert server_fit(p, int(p.jobs[0])).tolist() == [1, 1, 1, 1]
    i_bad, i_ok = int(p.jobs[0]), int(p.jobs[1])
    m, res = _solved(p, {i_bad: 5, i_ok: 3})
    assert m.x[i_bad].fixed and pyo.value(m.x[i_bad]) == 0
    dec = decompose_embedding(p, m)
    assert dec[i_bad] == []
    assert sum(phi for phi, _ in dec[i_ok]) == pytest.approx(1.0, abs=TOL)
    assert res.objective == pytest.approx(float(p.pi[1][2]), rel=1e-9)


def test_nothing_fits_at_all_still_builds_and_solves():
    cl = fat_tree_cluster(4, n_racks=2, gpus=(1,), seed=0)
    cl = dataclasses.replace(cl, capacity=np.full((4, 1), 1.5))
    inst = random_gadget(2, workers=(6, 6), cluster=cl, horizon=2, arrivals="zero", utility="sqrt", seed=0)
    p = slot_problem(inst, 1)
    m, res = _solved(p, {int(i): 6 for i in p.jobs})
    assert res.objective == pytest.approx(0.0, abs=1e-9)
    assert all(v == [] for v in decompose_embedding(p, m).values())


def test_fractional_ring_size_and_unsolved_model_are_refused():
    p = slot_problem(gadget_preset("small", jobs=6, seed=3, utility="sqrt"), 10)
    i = int(p.jobs[0])
    with pytest.raises(ValueError, match="integer ring size"):
        build_embedding_lp(p, {i: 1.7})
    m = build_embedding_lp(p, {i: 1})
    with pytest.raises(ValueError, match="solve the model"):
        decompose_embedding(p, m)
