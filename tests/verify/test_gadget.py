"""The GADGET schedule checker (paper 000, Eqs. (2)-(9)), rule by rule and against brute-force loops.

* a hand-made 4-slot schedule on a hand-made two-rack cluster (two resources, three sqrt-utility
  jobs, budgets met exactly, both accepted one-server ring forms) is feasible, with worker-slots,
  loads and total utility computed by hand;
* one mutation per rule is flagged with that rule alone, naming the slot, job, server / link and
  the numbers;
* slot-by-slot checks with ``used`` agree with the whole-schedule check;
* on random allocations (a generator written here, on a hand-made cluster and on
  ``fat_tree_cluster``), capacity, worker-limit and link-bandwidth verdicts and loads agree with
  per-element loops.
"""

from __future__ import annotations

import copy
import itertools
import math

import numpy as np
import pytest

from clusteropt.decisions.gadget import GadgetSchedule, PackedSlots, Ring, SlotAllocation
from clusteropt.instances.gadget.instance import Cluster, GadgetInstance, fat_tree_cluster
from clusteropt.verify import GadgetCheck, check_gadget_allocation, check_gadget_schedule

# Servers 0, 1 under rack switch 4; servers 2, 3 under rack switch 5; core switch 6.
# Resources (gpu, mem); server links 10 Gbps, rack-core links 25 Gbps, both directions.
EDGES = [(0, 4, 10.0), (1, 4, 10.0), (2, 5, 10.0), (3, 5, 10.0), (4, 6, 25.0), (5, 6, 25.0)]
CLUSTER = Cluster(
    capacity=[[4, 32], [2, 16], [4, 32], [1, 8]],
    links=[[u, v] for a, b, _ in EDGES for u, v in ((a, b), (b, a))],
    bandwidth=[w for *_, w in EDGES for _ in range(2)],
    n_switches=3, resources=("gpu", "mem"),
)
LINK = CLUSTER.link_index()


def walk(*nodes: int) -> tuple[int, ...]:
    """Link indices of the walk through ``nodes``."""
    return tuple(LINK[u, v] for u, v in itertools.pairwise(nodes))


# job 0: a=1, N=4, l=(1, 4), F=(12, 1000) -> budget 12, b=2, zeta=1,   mu = 2 sqrt(x)
# job 1: a=2, N=2, l=(1, 8), F=(4, 24)    -> budget 3,  b=5, zeta=2,   mu = sqrt(x)
# job 2: a=3, N=1, l=(1, 0), F=(2, 0)     -> budget 2,  b=0, zeta=0.5, mu = 3 sqrt(x)
INST = GadgetInstance(
    CLUSTER, horizon=5, arrival=[1, 2, 3], max_workers=[4, 2, 1],
    per_worker=[[1, 4], [1, 8], [1, 0]], limit=[[12, 1000], [4, 24], [2, 0]],
    bandwidth=[2.0, 5.0, 0.0], zeta=[1.0, 2.0, 0.5], utility="sqrt",
    utility_params=[[2.0, 0, 0], [1.0, 0, 0], [3.0, 0, 0]],
)
WORKER_SLOTS = [3 + 3 + 4 + 2, 2 + 1, 1 + 1]
UTILITY = [2 * math.sqrt(12), math.sqrt(2 * 3), 3 * math.sqrt(0.5 * 2)]


def slot(workers: dict[tuple[int, int], int], rings: dict[int, Ring]) -> SlotAllocation:
    a = SlotAllocation.empty(INST.n_jobs, CLUSTER.n_servers)
    for (i, s), n in workers.items():
        a.workers[i, s] = n
    a.rings.update(rings)
    return a


def valid_schedule() -> GadgetSchedule:
    """4 of the 5 slots (a partial run)."""
    return GadgetSchedule([
        # slot 1: job 0 across the core
        slot({(0, 0): 2, (0, 2): 1}, {0: Ring((0, 2), (walk(0, 4, 6, 5, 2), walk(2, 5, 6, 4, 0)))}),
        # slot 2: job 0 on three servers; job 1 (arrives now) on servers 2, 3 (server 3's mem exactly full);
        # links 2 -> 5 and 5 -> 2 carry 2 + 5 = 7 <= 10
        slot({(0, 0): 1, (0, 1): 1, (0, 2): 1, (1, 2): 1, (1, 3): 1},
             {0: Ring((0, 1, 2), (walk(0, 4, 1), walk(1, 4, 6, 5, 2), walk(2, 5, 6, 4, 0))),
              1: Ring((2, 3), (walk(2, 5, 3), walk(3, 5, 2)))}),
        # slot 3: job 0 fills server 0's gpus with a one-server ring without paths; jobs 1, 2 alone, no ring
        slot({(0, 0): 4, (1, 1): 1, (2, 3): 1}, {0: Ring((0,), ())}),
        # slot 4: job 0's last two worker-slots across racks; job 2 with a one-server ring, one empty path
        slot({(0, 1): 1, (0, 3): 1, (2, 0): 1},
             {0: Ring((3, 1), (walk(3, 5, 6, 4, 1), walk(1, 4, 6, 5, 3))), 2: Ring((0,), ((),))}),
    ])


def constraints(check: GadgetCheck) -> set[str]:
    return {v.constraint for v in check.violations}


def only(check: GadgetCheck, constraint: str):
    """The check's violations, all of kind ``constraint``."""
    assert constraints(check) == {constraint}, [str(v) for v in check.violations]
    return check.violations


# -- the valid schedule -------------------------------------------------------------------------------


def test_the_hand_schedule_is_feasible_with_the_hand_utility():
    check = check_gadget_schedule(INST, valid_schedule())
    assert check.ok and check.feasible and check.n_violations == 0 and check.violations == ()
    assert check.worker_slots.tolist() == WORKER_SLOTS
    assert check.worker_slots.dtype.kind == "i"
    assert np.allclose(check.utility, UTILITY)
    assert check.total_utility == pytest.approx(2 * math.sqrt(12) + math.sqrt(6) + 3)
    assert check.value == check.total_utility
    check.raise_if_infeasible()


def test_loads_are_recounted_by_hand():
    check = check_gadget_schedule(INST, valid_schedule())
    assert check.server_load.shape == (4, 4, 2) and check.link_load.shape == (4, CLUSTER.n_links)
    assert check.first_slot == 1
    assert check.server_load[1, 2].tolist() == [2.0, 12.0]   # job 0 (1, 4) + job 1 (1, 8)
    assert check.server_load[1, 3].tolist() == [1.0, 8.0]    # exactly full
    assert check.server_load[2, 0].tolist() == [4.0, 16.0]
    assert check.link_load[1, LINK[2, 5]] == 7.0 and check.link_load[1, LINK[5, 2]] == 7.0
    assert check.link_load[1, LINK[4, 6]] == 2.0              # only job 0 (1 -> 2) crosses 4 -> 6
    assert check.link_load[2].sum() == 0.0                   # no ring leaves a server in slot 3
    assert check.link_load[0].sum() == 2.0 * 8               # two 4-hop paths of job 0


def test_slot_by_slot_checks_agree_with_the_schedule_check():
    sched = valid_schedule()
    used = np.zeros(INST.n_jobs)
    for t, a in enumerate(sched.slots, start=1):
        check = check_gadget_allocation(INST, a, t, used=used)
        assert check.ok, [str(v) for v in check.violations]
        assert check.first_slot == t and check.server_load.shape == (1, 4, 2)
        used = used + a.workers.sum(axis=1)
        assert check.worker_slots.tolist() == used.tolist()
    assert check.total_utility == pytest.approx(check_gadget_schedule(INST, sched).total_utility)


def test_an_empty_schedule_has_zero_utility():
    check = check_gadget_schedule(INST, GadgetSchedule([]))
    assert check.ok and check.worker_slots.tolist() == [0, 0, 0] and check.total_utility == 0.0
    assert check.server_load.shape == (0, 4, 2) and check.link_load.shape == (0, CLUSTER.n_links)


def test_a_plain_list_of_slots_is_accepted():
    assert check_gadget_schedule(INST, valid_schedule().slots).ok


# -- structural errors ----------------------------------------------------------------------------------


def test_a_wrong_shape_is_a_value_error_naming_the_expected_shape():
    sched = valid_schedule()
    sched.slots[2] = SlotAllocation(np.zeros((3, 3), dtype=np.int64))
    with pytest.raises(ValueError, match=r"slot 3: workers has shape \(3, 3\); expected \(I, S\) = \(3, 4\)"):
        check_gadget_schedule(INST, sched)
    with pytest.raises(ValueError, match=r"expected \(I, S\) = \(3, 4\)"):
        check_gadget_allocation(INST, SlotAllocation(np.zeros(4)), 1)


def test_more_slots_than_the_horizon_is_a_value_error():
    sched = valid_schedule()
    sched.slots += [SlotAllocation.empty(3, 4), SlotAllocation.empty(3, 4)]
    with pytest.raises(ValueError, match="6 slots; expected at most T = 5"):
        check_gadget_schedule(INST, sched)


@pytest.mark.parametrize("t", [0, 6, 1.0])
def test_a_slot_outside_the_horizon_is_a_value_error(t):
    with pytest.raises(ValueError, match=r"expected a slot in 1 \.\. T = 5"):
        check_gadget_allocation(INST, SlotAllocation.empty(3, 4), t)


def test_used_of_the_wrong_shape_is_a_value_error():
    with pytest.raises(ValueError, match=r"used has shape \(2,\); expected \(I,\) = \(3,\)"):
        check_gadget_allocation(INST, SlotAllocation.empty(3, 4), 1, used=[0, 0])


# -- one mutation per rule ----------------------------------------------------------------------------


def test_negative_workers():
    sched = valid_schedule()
    sched.slots[2].workers[2, 1] = -1
    (v,) = only(check_gadget_schedule(INST, sched), "non-negativity")
    assert v.where == "slot 3, job 2, server 1: y = -1" and v.amount == 1.0


def test_fractional_and_non_finite_workers():
    sched = valid_schedule()
    w = sched.slots[2].workers.astype(float)
    w[1, 1], w[2, 3] = 0.5, np.nan
    sched.slots[2].workers = w
    check = check_gadget_schedule(INST, sched)
    assert constraints(check) == {"integrality"}
    assert [v.where for v in check.violations] == ["slot 3, job 1, server 1: y = 0.5",
                                                   "slot 3, job 2, server 3: y = nan"]
    assert [v.amount for v in check.violations] == [0.5, math.inf]
    assert check.worker_slots.dtype.kind == "f" and check.worker_slots.tolist() == [12, 2.5, 1]


def test_server_over_capacity():
    sched = valid_schedule()
    sched.slots[3].workers[0] = [0, 0, 0, 2]  # job 0's two slot-4 workers both on server 3 (1 gpu)
    del sched.slots[3].rings[0]
    (v,) = only(check_gadget_schedule(INST, sched), "(4) server capacity")
    assert v.where == "slot 4, server 3, gpu: load 2 > capacity 1" and v.amount == 1.0
    assert "(4) server capacity violated at slot 4, server 3" in str(v)


def test_too_many_workers():
    sched = valid_schedule()
    sched.slots[0].workers[0, 0] = 4  # 5 workers in slot 1 (N = 4) ...
    sched.slots[2].workers[0, 0] = 2  # ... and 2 fewer in slot 3: the budget still holds
    (v,) = only(check_gadget_schedule(INST, sched), "(2) worker limit")
    assert v.where == "slot 1, job 0: 5 workers > N_i = 4" and v.amount == 1.0


def test_budget_exceeded():
    sched = valid_schedule()
    sched.slots[2].workers[1, 1] = 2  # job 1: 4 worker-slots, mem 8 * 4 = 32 > 24 (gpu 4 <= 4 holds)
    check = check_gadget_schedule(INST, sched)
    (v,) = only(check, "(3) resource limit")
    assert v.where == "job 1, mem: l_i^r z_i = 8 * 4 = 32 > F_i^r = 24 (first exceeded at slot 3)"
    assert v.amount == 8.0
    assert check.worker_slots.tolist() == [12, 4, 2]


def test_budget_exceeded_in_a_single_slot_check_counts_used():
    a = valid_schedule().slots[3]
    assert check_gadget_allocation(INST, a, 4, used=[10, 3, 1]).ok
    (v,) = only(check_gadget_allocation(INST, a, 4, used=[11, 3, 1]), "(3) resource limit")
    assert v.where == "job 0, gpu: l_i^r z_i = 1 * 13 = 13 > F_i^r = 12 (first exceeded at slot 4)"


def test_workers_before_arrival():
    sched = valid_schedule()
    sched.slots[1].workers[2, 1] = 1  # job 2 arrives at slot 3 ...
    sched.slots[3].workers[2, 0] = 0  # ... (its budget still holds)
    del sched.slots[3].rings[2]
    (v,) = only(check_gadget_schedule(INST, sched), "(6) arrival")
    assert v.where == "slot 2, job 2, server 1: y = 1 before arrival a_i = 3" and v.amount == 1.0


def test_ring_missing():
    sched = valid_schedule()
    del sched.slots[1].rings[1]
    (v,) = only(check_gadget_schedule(INST, sched), "(9) ring missing")
    assert v.where == "slot 2, job 1: workers on servers [2, 3], no ring"


def test_ring_with_a_wrong_server_set():
    sched = valid_schedule()  # slot 2: job 0 is on servers 0, 1, 2; the ring visits 0, 1, 3
    sched.slots[1].rings[0] = Ring((0, 1, 3), (walk(0, 4, 1), walk(1, 4, 6, 5, 3), walk(3, 5, 6, 4, 0)))
    (v,) = only(check_gadget_schedule(INST, sched), "(7)-(9) ring servers")
    assert v.where == ("slot 2, job 0: ring on servers [0, 1, 3], workers on servers [0, 1, 2] "
                       "(missing [2], extra [3])")
    assert v.amount == 2.0


def test_ring_on_two_servers_for_a_job_on_one():
    sched = valid_schedule()
    sched.slots[2].rings[1] = Ring((1, 2), (walk(1, 4, 6, 5, 2), walk(2, 5, 6, 4, 1)))
    (v,) = only(check_gadget_schedule(INST, sched), "(7)-(9) ring servers")
    assert v.where.startswith("slot 3, job 1: ring on servers [1, 2], workers on servers [1]")


def test_ring_listing_a_server_twice():
    sched = valid_schedule()  # two small cycles 0-1 and 1-2 through server 1, every link within bandwidth
    sched.slots[1].rings[0] = Ring((0, 1, 2, 1), (walk(0, 4, 1), walk(1, 4, 6, 5, 2), walk(2, 5, 6, 4, 1),
                                                  walk(1, 4, 0)))
    (v,) = only(check_gadget_schedule(INST, sched), "(9) ring repeats a server")
    assert v.where == "slot 2, job 0: ring [0, 1, 2, 1] lists servers [1] more than once" and v.amount == 1.0


def test_broken_path():
    sched = valid_schedule()
    p = walk(0, 4, 6, 5, 2)
    sched.slots[0].rings[0] = Ring((0, 2), (p[:1] + p[2:], walk(2, 5, 6, 4, 0)))  # link 4 -> 6 left out
    (v,) = only(check_gadget_schedule(INST, sched), "(7) ring path: not a walk")
    assert v.where == (f"slot 1, job 0, ring edge 0 (0 -> 2): link {LINK[0, 4]} (0 -> 4) then "
                       f"link {LINK[6, 5]} (6 -> 5)")


def test_path_ending_at_the_wrong_server():
    sched = valid_schedule()
    sched.slots[0].rings[0] = Ring((0, 2), (walk(0, 4, 6, 5, 3), walk(2, 5, 6, 4, 0)))
    (v,) = only(check_gadget_schedule(INST, sched), "(7) ring path: wrong end")
    assert v.where == "slot 1, job 0, ring edge 0 (0 -> 2): ends at node 3, not server 2"


def test_path_starting_at_the_wrong_server():
    sched = valid_schedule()
    sched.slots[0].rings[0] = Ring((0, 2), (walk(0, 4, 6, 5, 2), walk(3, 5, 6, 4, 0)))
    (v,) = only(check_gadget_schedule(INST, sched), "(7) ring path: wrong start")
    assert v.where.startswith("slot 1, job 0, ring edge 1 (2 -> 0): first link")


def test_empty_path_between_distinct_servers():
    sched = valid_schedule()
    sched.slots[0].rings[0] = Ring((0, 2), ((), walk(2, 5, 6, 4, 0)))
    (v,) = only(check_gadget_schedule(INST, sched), "(7) ring path: empty")
    assert v.where == "slot 1, job 0, ring edge 0 (0 -> 2): no link between distinct servers"


def test_unknown_link():
    sched = valid_schedule()
    sched.slots[0].rings[0] = Ring((0, 2), ((0, 99), walk(2, 5, 6, 4, 0)))
    (v,) = only(check_gadget_schedule(INST, sched), "(7) ring path: unknown link")
    assert v.where == "slot 1, job 0, ring edge 0 (0 -> 2): link 99 not in [0, 12)"


def test_paths_and_servers_of_different_lengths():
    sched = valid_schedule()
    sched.slots[0].rings[0] = Ring((0, 2), (walk(0, 4, 6, 5, 2),))
    (v,) = only(check_gadget_schedule(INST, sched), "(7) ring structure")
    assert v.where == "slot 1, job 0: 2 servers but 1 paths"


def test_link_over_bandwidth():
    sched = valid_schedule()  # slot 2: job 1 goes 2 -> 5 -> 2 -> 5 -> 3: links 2 <-> 5 carry 5 more
    sched.slots[1].rings[1] = Ring((2, 3), (walk(2, 5, 2, 5, 3), walk(3, 5, 2)))
    check = check_gadget_schedule(INST, sched)
    vs = only(check, "(8)/(19) link bandwidth")
    assert [v.where for v in vs] == [f"slot 2, link {LINK[2, 5]} (2 -> 5): load 12 > bandwidth 10",
                                     f"slot 2, link {LINK[5, 2]} (5 -> 2): load 12 > bandwidth 10"]
    assert [v.amount for v in vs] == [2.0, 2.0]
    assert check.link_load[1, LINK[2, 5]] == 12.0


def test_ring_for_a_job_without_workers():
    sched = valid_schedule()
    sched.slots[0].rings[1] = Ring((2, 3), (walk(2, 5, 3), walk(3, 5, 2)))
    check = check_gadget_schedule(INST, sched)
    (v,) = only(check, "(7) ring without workers")
    assert v.where == "slot 1, job 1: ring on servers [2, 3], no worker"
    assert check.link_load[0, LINK[5, 3]] == 5.0  # its reservation still counts


def test_ring_of_an_unknown_job():
    sched = valid_schedule()
    sched.slots[0].rings[7] = Ring((2, 3), (walk(2, 5, 3), walk(3, 5, 2)))
    (v,) = only(check_gadget_schedule(INST, sched), "(7) ring of an unknown job")
    assert v.where == "slot 1, ring key 7; expected a job in [0, 3)"


def test_every_violation_is_counted_and_reported():
    sched = valid_schedule()
    sched.slots[2].workers[2, 1] = -1
    del sched.slots[1].rings[1]
    check = check_gadget_schedule(INST, sched)
    assert not check.ok and check.n_violations == 2
    assert constraints(check) == {"non-negativity", "(9) ring missing"}
    with pytest.raises(AssertionError, match="2 violation"):
        check.raise_if_infeasible()


def test_the_verdict_does_not_modify_the_schedule():
    sched = valid_schedule()
    before = copy.deepcopy(sched)
    check_gadget_schedule(INST, sched)
    assert all(np.array_equal(a.workers, b.workers) and a.rings == b.rings
               for a, b in zip(sched.slots, before.slots, strict=True))


# -- property test: random allocations against per-element loops ---------------------------------------


def random_instance(rng, cluster: Cluster, n_jobs: int, horizon: int) -> GadgetInstance:
    n_res = len(cluster.resources)
    per_worker = rng.choice([0.0, 0.5, 1.0, 2.0], size=(n_jobs, n_res))
    per_worker[:, 0] = rng.choice([0.5, 1.0, 2.0], size=n_jobs)  # at least one positive resource
    return GadgetInstance(
        cluster, horizon=horizon, arrival=rng.integers(1, horizon + 1, n_jobs),
        max_workers=rng.integers(1, 5, n_jobs), per_worker=per_worker,
        limit=rng.integers(0, 20, (n_jobs, n_res)).astype(float),
        bandwidth=rng.choice([0.0, 1.0, 4.0, 8.0], n_jobs),
        zeta=rng.choice([0.5, 1.0, 3.0], n_jobs), utility="log", utility_params=np.tile([1.5, 0, 0], (n_jobs, 1)),
    )


def random_schedule(rng, inst: GadgetInstance, n_slots: int) -> GadgetSchedule:
    """Workers mostly in 0..3 (sometimes -1), rings on shortest paths over the job's servers, in random order."""
    cl = inst.cluster
    paths = cl.paths()
    slots = []
    for _ in range(n_slots):
        w = rng.choice([-1, 0, 0, 0, 1, 2, 3], p=[0.03, 0.37, 0.2, 0.1, 0.15, 0.1, 0.05],
                       size=(inst.n_jobs, cl.n_servers))
        rings = {}
        for i in range(inst.n_jobs):
            srv = [int(s) for s in rng.permutation(np.flatnonzero(w[i] > 0))]
            if len(srv) >= 2:
                m = len(srv)
                rings[i] = Ring(tuple(srv), tuple(tuple(paths[srv[k], srv[(k + 1) % m]]) for k in range(m)))
        slots.append(SlotAllocation(w.astype(np.int64), rings))
    return GadgetSchedule(slots)


def brute_force(inst: GadgetInstance, sched: GadgetSchedule, tol: float = 1e-9):
    """(slot, server, r) over capacity, (slot, job) over N_i, (slot, link) over bandwidth, link loads."""
    cl = inst.cluster
    over_cap, over_n, over_bw = set(), set(), set()
    loads = np.zeros((len(sched.slots), cl.n_links))
    for t, a in enumerate(sched.slots, start=1):
        for s in range(cl.n_servers):
            for r in range(len(cl.resources)):
                total = 0.0
                for i in range(inst.n_jobs):
                    total += inst.per_worker[i, r] * a.workers[i, s]
                if total > cl.capacity[s, r] + tol:
                    over_cap.add(f"slot {t}, server {s}, {cl.resources[r]}")
        for i in range(inst.n_jobs):
            if sum(int(a.workers[i, s]) for s in range(cl.n_servers)) > inst.max_workers[i]:
                over_n.add(f"slot {t}, job {i}")
        for i, ring in a.rings.items():
            for p in ring.paths:
                for e in p:
                    loads[t - 1, e] += inst.bandwidth[i]
        for e in range(cl.n_links):
            if loads[t - 1, e] > cl.bandwidth[e] + tol:
                over_bw.add(f"slot {t}, link {e}")
    return over_cap, over_n, over_bw, loads


def flagged(check: GadgetCheck, constraint: str) -> set[str]:
    return {v.where.split(":")[0] for v in check.violations if v.constraint == constraint}


def agrees_with_brute_force(inst: GadgetInstance, sched: GadgetSchedule) -> GadgetCheck:
    check = check_gadget_schedule(inst, sched)
    over_cap, over_n, over_bw, loads = brute_force(inst, sched)
    assert flagged(check, "(4) server capacity") == over_cap
    assert flagged(check, "(2) worker limit") == over_n
    assert {" ".join(w.split()[:4]) for w in flagged(check, "(8)/(19) link bandwidth")} == over_bw
    assert np.allclose(check.link_load, loads)
    workers = np.stack([a.workers for a in sched.slots])
    assert check.worker_slots.tolist() == workers.sum(axis=(0, 2)).tolist()
    assert np.allclose(check.server_load, np.einsum("ir,tis->tsr", inst.per_worker, workers))
    # rings built from shortest paths over exactly the job's servers are never flagged
    assert not {c for c in constraints(check) if "ring" in c}
    return check


@pytest.mark.parametrize("seed", range(40))
def test_random_allocations_on_the_hand_cluster_agree_with_loops(seed):
    rng = np.random.default_rng(seed)
    inst = random_instance(rng, CLUSTER, n_jobs=int(rng.integers(1, 6)), horizon=6)
    agrees_with_brute_force(inst, random_schedule(rng, inst, int(rng.integers(1, 7))))


@pytest.mark.parametrize("seed", range(20))
def test_random_allocations_on_a_fat_tree_agree_with_loops(seed):
    rng = np.random.default_rng(seed)
    cluster = fat_tree_cluster(4, n_racks=2, seed=seed)
    inst = random_instance(rng, cluster, n_jobs=int(rng.integers(1, 6)), horizon=4)
    sched = random_schedule(rng, inst, 4)
    check = agrees_with_brute_force(inst, sched)
    # slot by slot with the running worker-slots gives the same capacity verdicts and final utility
    used = np.zeros(inst.n_jobs)
    per_slot = set()
    for t, a in enumerate(sched.slots, start=1):
        c = check_gadget_allocation(inst, a, t, used=used)
        per_slot |= {str(v) for v in c.violations if v.constraint != "(3) resource limit"}
        used = used + a.workers.sum(axis=1)
    assert per_slot == {str(v) for v in check.violations if v.constraint != "(3) resource limit"}
    assert c.total_utility == pytest.approx(check.total_utility)


def test_random_generator_produces_both_verdicts():
    """The property tests see feasible and infeasible cases of each rule (the generator is not degenerate)."""
    rules = ("(4) server capacity", "(2) worker limit", "(8)/(19) link bandwidth")
    verdicts = {rule: set() for rule in rules}
    for seed in range(40):
        rng = np.random.default_rng(seed)
        inst = random_instance(rng, CLUSTER, n_jobs=int(rng.integers(1, 6)), horizon=6)
        check = check_gadget_schedule(inst, random_schedule(rng, inst, int(rng.integers(1, 7))))
        for rule in rules:
            verdicts[rule].add(bool(flagged(check, rule)))
    assert all(v == {True, False} for v in verdicts.values()), verdicts


# -- a long schedule on a large instance: checked block by block ----------------------------------------


@pytest.mark.parametrize("seed", range(12))
def test_block_by_block_equals_the_one_block_verdict(seed, monkeypatch):
    """The same violations in the same order, worker-slots, utility and loads when the slots are
    checked in blocks of the jobs they use (as for a trace too large for one (T, I, S) array), from
    dense slots and from packed ones, with (3) and its first exceeding slot found across blocks;
    broken rings, a ring without workers and a ring of no job included."""
    import clusteropt.verify.gadget as vg

    rng = np.random.default_rng(100 + seed)
    inst = random_instance(rng, CLUSTER, n_jobs=int(rng.integers(2, 6)), horizon=8)
    sched = random_schedule(rng, inst, int(rng.integers(3, 9)))
    if seed % 3 == 0 and len(sched.slots[1].rings):  # a ring error in a later block
        i = next(iter(sched.slots[1].rings))
        sched.slots[1].rings[i] = Ring(sched.slots[1].rings[i].servers, ())
    if seed % 3 == 1:  # a ring for a job without workers, and one keyed by no job
        last = sched.slots[-1]
        last.workers[0] = 0
        last.rings[0] = Ring((0, 1), (walk(0, 4, 1), walk(1, 4, 0)))
        last.rings[inst.n_jobs] = Ring((0,), ())
    whole = check_gadget_schedule(inst, sched)
    assert whole.violations  # the generator's schedules violate something
    packed = PackedSlots(inst.n_jobs, CLUSTER.n_servers)
    for a in sched.slots:
        packed.append(a)
    per_slot = inst.n_jobs * CLUSTER.n_servers * 8
    for block, slots in itertools.product((1, 2, 3), (sched, GadgetSchedule(packed))):
        monkeypatch.setattr(vg, "BLOCK_BYTES", block * per_slot)
        parts = check_gadget_schedule(inst, slots)
        assert [str(v) for v in parts.violations] == [str(v) for v in whole.violations]
        assert parts.worker_slots.tolist() == whole.worker_slots.tolist()
        assert parts.total_utility == whole.total_utility
        np.testing.assert_array_equal(parts.server_load, whole.server_load)
        np.testing.assert_array_equal(parts.link_load, whole.link_load)


def test_a_limit_first_exceeded_in_an_earlier_block_names_that_slot(monkeypatch):
    import clusteropt.verify.gadget as vg

    sched = valid_schedule()
    sched.slots[0].workers[2, 3] = 0  # nothing
    sched.slots[2].workers[1, 1] = 2  # job 1's budget (3) exceeded at slot 3: 2 + 2
    monkeypatch.setattr(vg, "BLOCK_BYTES", INST.n_jobs * CLUSTER.n_servers * 8)  # one slot a block
    (v,) = [v for v in check_gadget_schedule(INST, sched).violations if v.constraint == "(3) resource limit"]
    assert v.where == "job 1, mem: l_i^r z_i = 8 * 4 = 32 > F_i^r = 24 (first exceeded at slot 3)"


def test_packed_slots_give_back_what_was_stored():
    sched = valid_schedule()
    packed = PackedSlots(INST.n_jobs, CLUSTER.n_servers)
    for a in sched.slots:
        packed.append(a)
    again = GadgetSchedule(packed)
    assert len(packed) == len(sched.slots)
    for a, b in zip(sched.slots, packed, strict=True):
        np.testing.assert_array_equal(a.workers, b.workers)
        assert a.rings == b.rings
    assert again.worker_slots().tolist() == sched.worker_slots().tolist() == WORKER_SLOTS
    assert again.to_json_list(CLUSTER.links) == sched.to_json_list(CLUSTER.links)
    assert str(check_gadget_schedule(INST, again)) == str(check_gadget_schedule(INST, sched))
    packed[0].workers[0, 0] = 99  # a read is a copy
    assert packed[0].workers[0, 0] == 2
    with pytest.raises(ValueError, match="expected \\(3, 4\\)"):
        packed.append(SlotAllocation(np.zeros((2, 4), dtype=np.int64), {}))
