"""Greedy ring placement (clusteropt.algorithms.gadget.placement), checked by the independent verifier."""

from __future__ import annotations

import numpy as np
import pytest

from clusteropt.algorithms.gadget.placement import Residual, place_ring
from clusteropt.decisions.gadget import Ring, SlotAllocation
from clusteropt.instances.gadget.instance import Cluster, GadgetInstance, fat_tree_cluster, k_ary_fat_tree
from clusteropt.verify.gadget import check_gadget_allocation


def two_racks(cap, server_bw=10.0, rack_bw=100.0) -> Cluster:
    """Servers 0, 1 under rack switch 4, servers 2, 3 under rack switch 5, both under core switch 6."""
    links, bw = [], []
    for s in range(4):
        links += [[s, 4 + s // 2], [4 + s // 2, s]]
        bw += [server_bw, server_bw]
    for r in (4, 5):
        links += [[r, 6], [6, r]]
        bw += [rack_bw, rack_bw]
    return Cluster(capacity=[[c] for c in cap], links=links, bandwidth=bw, n_switches=3, rack=[0, 0, 1, 1])


def check_ring(cluster: Cluster, res: Residual, workers: dict, ring: Ring, bandwidth: float):
    """The ring visits exactly the used servers once, each path walks servers[k] -> servers[k+1 mod m]."""
    assert sorted(ring.servers) == sorted(workers) and len(set(ring.servers)) == len(ring.servers)
    m = len(ring.servers)
    assert m >= 2 and len(ring.paths) == m
    need = np.zeros(cluster.n_links)
    for k, p in enumerate(ring.paths):
        ends = cluster.links[list(p)]
        assert ends[0, 0] == ring.servers[k] and ends[-1, 1] == ring.servers[(k + 1) % m]
        assert (ends[:-1, 1] == ends[1:, 0]).all()
        np.add.at(need, list(p), bandwidth)
    assert (need <= res.link + 1e-9).all()


def test_one_server_best_fit():
    c = two_racks([2, 4, 3, 1])
    res = Residual.full(c)
    assert place_ring(res, 2, [1.0], 5.0) == ({0: 2}, None)  # fullest server that still fits
    assert place_ring(res, 3, [1.0], 5.0) == ({2: 3}, None)
    assert place_ring(res, 4, [1.0], 5.0) == ({1: 4}, None)
    assert place_ring(res, 1, [1.0], 5.0) == ({3: 1}, None)
    assert place_ring(res, 2, [2.0], 5.0) == ({1: 2}, None)  # two GPUs per worker: only server 1 holds 4
    # bandwidth does not matter on one server
    res.link[:] = 0.0
    assert place_ring(res, 3, [1.0], 1e6) == ({2: 3}, None)
    with pytest.raises(ValueError, match="k = 0"):
        place_ring(res, 0, [1.0], 1.0)


def test_one_rack_ring_when_no_server_fits():
    c = two_racks([2, 3, 3, 1])
    res = Residual.full(c)
    before = (res.server.copy(), res.link.copy())
    workers, ring = place_ring(res, 5, [1.0], 2.0)
    assert workers == {1: 3, 0: 2} and ring.servers == (0, 1)  # rack 0 has 5 free GPUs, rack 1 only 4
    assert ring.paths == ((0, 3), (2, 1))  # 0 -> 4 -> 1 and 1 -> 4 -> 0
    check_ring(c, res, workers, ring, 2.0)
    assert np.array_equal(res.server, before[0]) and np.array_equal(res.link, before[1])  # not modified
    workers, ring = place_ring(Residual.full(two_racks([1, 1, 3, 3])), 5, [1.0], 2.0)
    assert workers == {2: 3, 3: 2} and ring.servers == (2, 3)
    # three servers of one rack
    c3 = fat_tree_cluster(6, n_racks=1, gpus=(2,), seed=0)
    res3 = Residual.full(c3)
    workers, ring = place_ring(res3, 5, [1.0], 1.0)
    assert sum(workers.values()) == 5 and len(workers) == 3
    check_ring(c3, res3, workers, ring, 1.0)


def test_ring_across_racks():
    c = two_racks([2, 2, 2, 2])
    res = Residual.full(c)
    workers, ring = place_ring(res, 6, [1.0], 3.0)
    assert workers == {0: 2, 1: 2, 2: 2} and ring.servers == (0, 1, 2)
    assert [len(p) for p in ring.paths] == [2, 4, 4]
    check_ring(c, res, workers, ring, 3.0)
    assert place_ring(res, 9, [1.0], 3.0) is None  # 8 GPUs in all


def test_bandwidth_is_respected():
    c = two_racks([2, 3, 3, 1])
    res = Residual.full(c)
    res.link[c.link_index()[0, 4]] = 1.5  # server 0's uplink cannot carry b = 2
    workers, ring = place_ring(res, 5, [1.0], 2.0)
    assert workers == {1: 3, 2: 2} and ring.servers == (1, 2)  # avoids server 0, crosses racks
    check_ring(c, res, workers, ring, 2.0)
    assert c.link_index()[0, 4] not in {e for p in ring.paths for e in p}
    # exactly enough bandwidth is fine, a little less is not
    res = Residual.full(two_racks([1, 1, 1, 1], server_bw=2.0, rack_bw=2.0))
    workers, ring = place_ring(res, 4, [1.0], 2.0)
    assert workers == {0: 1, 1: 1, 2: 1, 3: 1} and ring.servers == (0, 1, 2, 3)
    assert place_ring(res, 4, [1.0], 2.0 + 1e-6) is None
    # no multi-server ring fits: None, while a one-server placement still works
    res = Residual.full(two_racks([2, 3, 3, 1], server_bw=1.0))
    assert place_ring(res, 4, [1.0], 1.5) is None
    assert place_ring(res, 3, [1.0], 1.5) == ({1: 3}, None)
    assert place_ring(res, 4, [1.0], 1.0) is not None


def test_residual_take():
    c = two_racks([2, 3, 3, 1])
    res = Residual.full(c)
    assert res.paths == c.paths() and res.rack.tolist() == [0, 0, 1, 1]
    workers, ring = place_ring(res, 6, [1.0], 2.5)
    assert workers == {1: 3, 2: 3}
    res.take(workers, np.array([1.0]), ring, 2.5)
    assert res.server.ravel().tolist() == [2, 0, 0, 1]
    want = c.bandwidth.copy()
    idx = c.link_index()
    for u, v in [(1, 4), (4, 6), (6, 5), (5, 2), (2, 5), (5, 6), (6, 4), (4, 1)]:
        want[idx[u, v]] -= 2.5
    assert res.link.tolist() == want.tolist()
    assert c.capacity.ravel().tolist() == [2, 3, 3, 1]  # the cluster is untouched
    # a one-server placement takes no bandwidth; several resources are subtracted per worker
    c2 = Cluster([[4, 8], [4, 8]], links=[[0, 2], [2, 0], [1, 2], [2, 1]], bandwidth=[10] * 4, n_switches=1,
                 resources=("gpu", "cpu"))
    res2 = Residual.full(c2)
    assert res2.rack.tolist() == [0, 0]  # no rack labels: one group
    res2.take({1: 2}, np.array([1.0, 3.0]), None, 9.0)
    assert res2.server.tolist() == [[4, 8], [2, 2]] and res2.link.tolist() == [10] * 4
    # server 0 holds min(4 / 1, 8 / 3) = 2 such workers, server 1 min(2 / 1, 2 / 3) = 0
    assert place_ring(res2, 2, [1.0, 3.0], 1.0) == ({0: 2}, None)
    assert place_ring(res2, 3, [1.0, 3.0], 1.0) is None


def _place_all(cluster: Cluster, seed: int, n_jobs=(4, 10), workers=(1, 6)):
    """Random jobs placed one after another; returns the instance, the allocation, the placements, the residual."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(n_jobs[0], n_jobs[1] + 1))
    k = rng.integers(workers[0], workers[1] + 1, n)
    pw = rng.choice([1.0, 2.0], size=(n, 1), p=[0.7, 0.3])
    b = np.round(rng.uniform(0.0, 60.0, n), 2)
    inst = GadgetInstance(cluster=cluster, horizon=3, arrival=np.ones(n, dtype=int), max_workers=k, per_worker=pw,
                          limit=np.full((n, 1), 1e6), bandwidth=b, zeta=np.ones(n), utility="sqrt")
    res = Residual.full(cluster)
    alloc = SlotAllocation.empty(n, cluster.n_servers)
    placed = []
    for i in range(n):
        got = place_ring(res, int(k[i]), pw[i], float(b[i]))
        placed.append(got)
        if got is None:
            # nothing fits: not even on one server
            fit = np.floor((res.server[:, 0] + 1e-9) / pw[i, 0])
            assert fit.max() < k[i]
            continue
        workers, ring = got
        assert sum(workers.values()) == k[i] and all(v > 0 for v in workers.values())
        if ring is None:
            assert len(workers) == 1
        else:
            check_ring(cluster, res, workers, ring, float(b[i]))
            alloc.rings[i] = ring
        for s, w in workers.items():
            alloc.workers[i, s] = w
        res.take(workers, pw[i], ring, float(b[i]))
        assert (res.server >= -1e-9).all() and (res.link >= -1e-9).all()
    return inst, alloc, placed, res


@pytest.mark.parametrize("topology", ["fat_tree", "k_ary"])
def test_greedy_placements_pass_the_verifier(topology):
    multi = cross = 0
    for seed in range(30):
        if topology == "fat_tree":
            cluster = fat_tree_cluster(8, n_racks=2, seed=seed)
            inst, alloc, placed, res = _place_all(cluster, seed)
        else:  # 16 servers in 4 pods, several paths between pods: more and larger jobs
            cluster = k_ary_fat_tree(4, seed=seed)
            inst, alloc, placed, res = _place_all(cluster, seed, n_jobs=(10, 25), workers=(1, 10))
        chk = check_gadget_allocation(inst, alloc, t=1)
        assert chk.ok, [str(v) for v in chk.violations]
        # the verifier's loads agree with what the residual lost
        assert chk.server_load[0] == pytest.approx(cluster.capacity - res.server)
        assert chk.link_load[0] == pytest.approx(cluster.bandwidth - res.link)
        assert chk.worker_slots.tolist() == [0 if p is None else inst.max_workers[i] for i, p in enumerate(placed)]
        rings = [p[1] for p in placed if p is not None and p[1] is not None]
        multi += len(rings)
        cross += sum(len(set(cluster.rack[list(r.servers)].tolist())) > 1 for r in rings)
    # the property covers multi-server rings, some across racks / pods, not only one-server placements
    assert multi >= 10 and cross >= 3


def test_a_job_without_resource_use_fits_on_one_server():
    from clusteropt.algorithms.gadget.placement import Residual as _Residual
    from clusteropt.algorithms.gadget.placement import place_ring as _place_ring
    from clusteropt.instances.gadget.instance import fat_tree_cluster as _fat_tree

    got = _place_ring(_Residual.full(_fat_tree(4, n_racks=2, gpus=(2,), seed=0)), 2, [0.0], 0.0)
    assert got is not None and sum(got[0].values()) == 2 and got[1] is None
