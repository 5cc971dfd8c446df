"""The quotient tree of a fat-tree and the lift of its rings (clusteropt.algorithms.gadget.quotient).

Every lifted allocation is judged by clusteropt.verify on the fat-tree itself; the LP claim of the
module (the quotient's LP = the splittable LP on the fat-tree) is checked against the general-topology
(flow) form of the G-VNE model.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from clusteropt.algorithms.gadget.quotient import (
    check_bandwidths,
    fat_tree_groups,
    lift_allocation,
    quotient_tree,
)
from clusteropt.decisions.gadget import Ring, SlotAllocation
from clusteropt.instances.gadget.instance import Cluster, fat_tree_cluster, k_ary_fat_tree, random_gadget
from clusteropt.models.gadget.gvne import allocation_from_solution, build_gvne, slot_problem
from clusteropt.online import run_online
from clusteropt.online.gadget import Gadget
from clusteropt.solvers import solve
from clusteropt.verify import check_gadget_allocation, check_gadget_schedule


def _quotient(fat):
    return quotient_tree(fat, fat_tree_groups(fat))


@pytest.mark.parametrize("k", [2, 4, 6])
def test_quotient_of_a_k_ary_fat_tree(k):
    fat = k_ary_fat_tree(k, host_bw=100, fabric_bw=300, seed=0)
    q = _quotient(fat)
    h = k // 2
    assert q.tree.is_tree() and q.uniform
    assert q.tree.n_servers == fat.n_servers == k * h * h
    assert q.tree.n_switches == k * h + k + 1  # edge switches, one node per pod, one root
    np.testing.assert_array_equal(q.tree.capacity, fat.capacity)
    # the members partition the fat-tree's links, and each merged link sums its members
    every = np.sort(np.concatenate(q.members))
    np.testing.assert_array_equal(every, np.arange(fat.n_links))
    for e, m in enumerate(q.members):
        assert q.tree.bandwidth[e] == pytest.approx(fat.bandwidth[m].sum())
        tails, heads = q.node_group[fat.links[m, 0]], q.node_group[fat.links[m, 1]]
        assert (tails == q.tree.links[e, 0]).all() and (heads == q.tree.links[e, 1]).all()
    assert sorted(set(q.tree.bandwidth.tolist())) == sorted({100.0, h * 300.0, h * h * 300.0})


def test_quotient_of_a_tree_is_the_tree():
    tree = fat_tree_cluster(12, n_racks=3, seed=1)
    q = _quotient(tree)
    assert q.tree.n_switches == tree.n_switches and q.tree.n_links == tree.n_links
    assert all(m.size == 1 for m in q.members)


def test_bad_groups_and_topologies_are_named():
    fat = k_ary_fat_tree(4, seed=0)
    with pytest.raises(ValueError, match="not a tree"):
        quotient_tree(fat, np.arange(fat.n_nodes))  # every switch alone: the fat-tree itself
    with pytest.raises(ValueError, match=r"groups has shape \(3,\)"):
        quotient_tree(fat, [0, 1, 2])
    g = fat_tree_groups(fat)
    g[0] = 5
    with pytest.raises(ValueError, match=r"groups\[0\] = 5; expected 0"):
        quotient_tree(fat, g)
    g = fat_tree_groups(fat)
    g[fat.n_servers:] = fat.n_servers  # every switch in one group: edge - aggregation links inside it
    with pytest.raises(ValueError, match="joins two switches of group 16"):
        quotient_tree(fat, g)
    two = Cluster([[1], [1]], links=[[0, 2], [2, 0], [0, 1], [1, 0]], bandwidth=[1] * 4, n_switches=1)
    with pytest.raises(ValueError, match="server 0 is linked to 2 nodes"):
        fat_tree_groups(two)
    pair = Cluster([[1], [1]], links=[[0, 1], [1, 0]], bandwidth=[1, 1], n_switches=0)
    with pytest.raises(ValueError, match="server 0 is linked to server 1"):
        fat_tree_groups(pair)
    with pytest.raises(ValueError, match=r"bandwidth\[1\] = 60; expected at most 50"):
        check_bandwidths(_quotient(k_ary_fat_tree(4, fabric_bw=50, seed=0)), [40, 60])


def _tight_fat(seed, host_bw=100.0, fabric_bw=100.0):
    fat = k_ary_fat_tree(4, gpus=(1, 2), host_bw=host_bw, fabric_bw=fabric_bw, seed=seed)
    return random_gadget(6, cluster=fat, workers=(2, 5), horizon=2, arrivals="zero", seed=seed, utility="log",
                         bandwidth=(40, 100))


@pytest.mark.parametrize("seed", [0, pytest.param(1, marks=pytest.mark.slow)])
def test_quotient_lp_is_the_fat_tree_lp_and_its_ilp_bounds(seed):
    inst = _tight_fat(seed)
    q = _quotient(inst.cluster)
    tree_inst = dataclasses.replace(inst, cluster=q.tree)
    p, pt = slot_problem(inst, 1), slot_problem(tree_inst, 1)
    lp_fat = solve(build_gvne(p, form="flow", relax=True)).objective
    lp_tree = solve(build_gvne(pt, form="tree", relax=True)).objective
    assert lp_tree == pytest.approx(lp_fat, rel=1e-7)  # the even-split argument of the module
    m_fat, m_tree = build_gvne(p, form="flow"), build_gvne(pt, form="tree")
    ilp_fat, ilp_tree = solve(m_fat).objective, solve(m_tree).objective
    assert ilp_tree >= ilp_fat - 1e-6  # the quotient's ILP is a relaxation of the fat-tree's
    lift = lift_allocation(q, allocation_from_solution(pt, m_tree), inst.bandwidth)
    check = check_gadget_allocation(inst, lift.allocation, 1)
    assert check.ok, check.violations[:3]
    if not lift.dropped:  # all kept: the fat-tree reaches the quotient's optimum, so they are equal
        assert ilp_fat == pytest.approx(ilp_tree, rel=1e-7)


def _five_rings(host_bw=200.0, b=(60, 40, 40, 30, 30)):
    """Jobs with one worker on server 0 and one on a server of another edge switch each: their ring
    edges leave server 0's edge switch through its 2 uplinks of 100 Gbps.
    """
    fat = k_ary_fat_tree(4, gpus=(8,), host_bw=host_bw, fabric_bw=100, seed=0)
    inst = random_gadget(len(b), cluster=fat, workers=(2, 2), horizon=1, arrivals="zero", seed=0)
    inst = dataclasses.replace(inst, bandwidth=np.asarray(b, dtype=float))
    q = _quotient(fat)
    paths = q.tree.paths()
    far = [4, 8, 12, 6, 10]  # servers under five other edge switches
    alloc = SlotAllocation.empty(len(b), fat.n_servers)
    for i, t in enumerate(far[:len(b)]):
        alloc.workers[i, [0, t]] = 1
        alloc.rings[i] = Ring((0, t), (tuple(paths[0, t]), tuple(paths[t, 0])))
    return inst, q, alloc


def test_lift_milp_packs_what_the_greedy_cannot():
    inst, q, alloc = _five_rings()
    lift = lift_allocation(q, alloc, inst.bandwidth)
    # widest-first in decreasing b: 60 | 40, 40 | 30, then the last 30 finds 10 and 20 left;
    # the MILP packs 60 + 40 | 40 + 30 + 30
    assert lift.method == "milp" and lift.dropped == []
    np.testing.assert_array_equal(lift.allocation.workers, alloc.workers)
    check = check_gadget_allocation(inst, lift.allocation, 1)
    assert check.ok, check.violations[:3]


def test_lift_drops_what_no_routing_keeps_and_says_so(caplog):
    inst, q, alloc = _five_rings(b=(60, 60, 60))  # 180 of 200 Gbps merged, but one 60 per 100 Gbps link
    weight = np.array([1.0, 5.0, 2.0])
    lift = lift_allocation(q, alloc, inst.bandwidth, weight=weight)
    assert lift.method == "milp" and lift.dropped == [0]  # the least worth
    assert lift.allocation.workers[0].sum() == 0 and 0 not in lift.allocation.rings
    assert "dropped" in caplog.text
    check = check_gadget_allocation(inst, lift.allocation, 1)
    assert check.ok, check.violations[:3]


@pytest.mark.parametrize("options", [
    {"slot_solver": "greedy"}, {"slot_solver": "lp-rs-mde", "embed_route": "lp", "select_route": "full"},
    {"slot_solver": "lp-rs-mde"}, {"slot_solver": "exact"}])
def test_gadget_on_the_quotient_tree_is_verified_on_the_fat_tree(options):
    fat = k_ary_fat_tree(4, gpus=(1, 2), host_bw=100, fabric_bw=100, seed=1)
    inst = random_gadget(8, cluster=fat, workers=(2, 5), horizon=3, arrivals="zero", seed=1, utility="log",
                         bandwidth=(40, 100))
    horizon = 1 if options["slot_solver"] == "exact" else inst.horizon  # the exact ILPs take seconds a slot
    run = run_online(Gadget(quotient=True, **options), inst, horizon=horizon, seed=0)
    check = check_gadget_schedule(inst, run.schedule)
    assert check.ok, check.violations[:3]
    assert run.params["quotient"] is True
    if options == {"slot_solver": "lp-rs-mde"}:  # auto, resolved on the 16-server quotient tree
        assert (run.params["embed_route"], run.params["select_route"]) == ("colgen", "capacity")
    assert any(a.rings for a in run.schedule.slots)  # rings crossed the fabric
    for info in run.slot_info:
        assert info["lift_dropped"] == [] and info["lift_method"] in ("greedy", "milp", None)
    links = {int(e) for a in run.schedule.slots for r in a.rings.values() for p in r.paths for e in p}
    assert max(links) < fat.n_links and any(e >= 2 * fat.n_servers for e in links)  # fabric links used


def test_gadget_quotient_refusals():
    inst = _tight_fat(0)
    with pytest.raises(ValueError, match="hide"):
        run_online(Gadget("lp-rs-mde", rounding="paper", quotient=True), inst, horizon=1, seed=0)
    thin = dataclasses.replace(inst, cluster=k_ary_fat_tree(4, gpus=(1, 2), fabric_bw=50, seed=0))
    with pytest.raises(ValueError, match=r"bandwidth\[\d+\] = .*expected at most 50"):
        run_online(Gadget(quotient=True), thin, horizon=1, seed=0)
    ring_cluster = Cluster([[2]] * 3, links=[[0, 3], [3, 0], [1, 3], [3, 1], [2, 4], [4, 2], [3, 4], [4, 3],
                                             [0, 4], [4, 0]], bandwidth=[100] * 10, n_switches=2)
    with pytest.raises(ValueError, match="server 0 is linked to 2 nodes"):
        run_online(Gadget(quotient=True), dataclasses.replace(inst, cluster=ring_cluster), horizon=1, seed=0)


def test_unequal_parallel_links_are_flagged(caplog):
    fat = k_ary_fat_tree(4, gpus=(2,), seed=0)
    bandwidth = fat.bandwidth.copy()
    bandwidth[-2:] = 300.0  # one core link pair below the others' 400
    uneven = Cluster(capacity=fat.capacity, links=fat.links, bandwidth=bandwidth, n_switches=fat.n_switches,
                     rack=fat.rack)
    assert _quotient(fat).uniform and not _quotient(uneven).uniform
    inst = random_gadget(4, cluster=uneven, horizon=1, arrivals="zero", seed=0)
    run = run_online(Gadget(quotient=True), inst, horizon=1, seed=0)
    assert "need not equal them" in caplog.text
    assert check_gadget_schedule(inst, run.schedule).ok
