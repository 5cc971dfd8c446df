"""The ring-partitioning run checker (paper 004): costs by hand, every violation, a slow replay.

* hand-computed runs on n = 8, l = 2 (communication, migration, no-op rows, end-of-step loads);
* one malformed run per violation kind, flagged with that kind and naming the row / process /
  step and server; malformed rows give ``value = nan`` and never raise;
* on random runs (hypothesis; several moves of one process at one index included, paid once per
  step as the Hamming distance of consecutive placements) every cost,
  the max load, the final assignment and the capacity verdicts agree with a plain loop replay;
* ``RingRun`` objects and ``out.json``-like dicts of lists give the same verdict; augmentation,
  alpha, an empty sequence and a 10^5-request run.
"""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from clusteropt.instances.ring import RingInstance, random_ring
from clusteropt.verify.base import Check
from clusteropt.verify.ring import RingCheck, check_ring_run

INST = RingInstance(n=8, servers=2, requests=[3, 3, 7, 1, 2, 2])  # initial [0,0,0,0,1,1,1,1]


def run_of(migrations, initial=None, **extra):
    return {"initial": INST.initial.tolist() if initial is None else initial, "migrations": migrations, **extra}


def constraints(check):
    return [v.constraint for v in check.violations]


def replay(inst: RingInstance, rows, c: float = 1.0, tol: float = 0.0):
    """Plain loop replay: costs, max load, final assignment and the (step, server) pairs over c k."""
    n, servers, k = inst.n, inst.servers, inst.k
    server = inst.initial.tolist()
    load = [server.count(s) for s in range(servers)]
    cap = c * k
    over = [(-2, s) for s in range(servers) if load[s] > cap + tol]
    max_load = max(load)
    rows = [tuple(int(x) for x in r) for r in rows]
    comm = moves = noops = 0
    j = 0

    def apply(step):
        nonlocal j, moves, noops, max_load
        touched = set()
        start = {}  # server of each process moved in this step, before its first row
        n_rows = 0
        while j < len(rows) and rows[j][0] == step:
            _, v, to = rows[j]
            j += 1
            n_rows += 1
            start.setdefault(v, server[v])
            if server[v] == to:
                continue
            load[server[v]] -= 1
            load[to] += 1
            touched |= {server[v], to}
            server[v] = to
        paid = sum(server[v] != s0 for v, s0 in start.items())  # one migration per process per step
        moves += paid
        noops += n_rows - paid
        if touched:
            max_load = max(max_load, max(load))
            over.extend((step, s) for s in sorted(touched) if load[s] > cap + tol)

    apply(-1)
    for t, e in enumerate(inst.requests.tolist()):
        comm += server[e] != server[(e + 1) % n]
        apply(t)
    assert j == len(rows)
    return {"communication_cost": comm, "migration_cost": inst.alpha * moves, "n_migrations": moves,
            "noop_migrations": noops, "max_load": max_load, "final": server, "over": over}


def over_pairs(check):
    """(step, server) of each capacity violation; step -2 is the initial placement."""
    out = []
    for v in check.violations:
        if v.constraint == "capacity c*k":
            m = re.match(r"(?:initial placement|step (-?\d+) .*), server (\d+):", v.where)
            out.append((-2 if m.group(1) is None else int(m.group(1)), int(m.group(2))))
    return out


def assert_matches_replay(inst, rows, c=1.0, tol=0.0):
    chk = check_ring_run(inst, {"initial": inst.initial, "migrations": rows}, augmentation=c, tol=tol,
                         max_violations=10**6)
    ref = replay(inst, rows, c, tol)
    assert chk.communication_cost == ref["communication_cost"]
    assert chk.migration_cost == pytest.approx(ref["migration_cost"])
    assert (chk.n_migrations, chk.noop_migrations) == (ref["n_migrations"], ref["noop_migrations"])
    assert chk.max_load == ref["max_load"]
    assert chk.final_assignment.tolist() == ref["final"]
    assert over_pairs(chk) == ref["over"]
    assert chk.value == pytest.approx(ref["communication_cost"] + ref["migration_cost"])
    assert chk.feasible == (not ref["over"])
    return chk


# -- hand-computed -------------------------------------------------------------------------------


def test_no_migrations_pays_the_cut_edges():
    chk = check_ring_run(INST, run_of([]))
    # cut edges of [0,0,0,0,1,1,1,1]: 3 = (3,4) and 7 = (7,0); requests 3, 3, 7 hit them
    assert isinstance(chk, RingCheck) and isinstance(chk, Check)
    assert (chk.feasible, chk.communication_cost, chk.migration_cost, chk.value) == (True, 3, 0.0, 3.0)
    assert (chk.n_migrations, chk.noop_migrations, chk.max_load, chk.capacity, chk.max_load_ratio) == \
        (0, 0, 4, 4.0, 1.0)


def test_a_swap_after_request_zero():
    # after request 0: 3 -> server 1, 7 -> server 0 (server 1 holds 5 in between: not a step end)
    # placement {0,1,2,7} {3,4,5,6}: requests 3, 7, 1 are inside; 2 = (2,3) is cut, twice
    chk = check_ring_run(INST, run_of([[0, 3, 1], [0, 7, 0]]))
    assert (chk.feasible, chk.communication_cost, chk.migration_cost, chk.value, chk.max_load) == \
        (True, 1 + 2, 2.0, 5.0, 4)
    assert chk.final_assignment.tolist() == [0, 0, 0, 1, 1, 1, 1, 0]


def test_migrations_before_the_first_request_and_noops():
    # index -1: rotate by one (0 -> 1 is not needed: 4 -> 0, 0 -> 1); 5 -> 1 is a no-op (cost 0, counted)
    chk = check_ring_run(INST, run_of([[-1, 4, 0], [-1, 0, 1], [-1, 5, 1]]))
    # placement {1,2,3,4} {5,6,7,0}: cut edges 0 = (0,1) and 4 = (4,5): no request hits them
    assert (chk.communication_cost, chk.n_migrations, chk.noop_migrations, chk.migration_cost) == (0, 2, 1, 2.0)
    assert chk.feasible and chk.value == 2.0


def test_a_process_moved_out_and_back_within_one_step_pays_nothing():
    # after request 1: 3 -> 1 -> 0 (back home): placement unchanged, so no migration is paid
    # (migrations are the Hamming distance of consecutive placements); both rows are no-ops
    chk = check_ring_run(INST, run_of([[1, 3, 1], [1, 3, 0]]))
    assert (chk.n_migrations, chk.noop_migrations, chk.migration_cost, chk.communication_cost) == (0, 2, 0.0, 3)
    assert chk.max_load == 4  # 5 in between does not count


def test_a_process_moved_twice_within_one_step_pays_once():
    # three servers: 0 -> 1 -> 2 after request 0 is one migration, the other row a no-op
    inst = RingInstance(n=6, servers=3, requests=[0, 2], alpha=3.0)  # initial [0,0,1,1,2,2]
    chk = check_ring_run(inst, {"initial": inst.initial.tolist(), "migrations": [[0, 1, 1], [0, 1, 2]]},
                         augmentation=1.5)
    assert (chk.n_migrations, chk.noop_migrations, chk.migration_cost) == (1, 1, 3.0)
    assert chk.final_assignment.tolist() == [0, 2, 1, 1, 2, 2]
    # the same process in the next step is another migration
    chk = check_ring_run(inst, {"initial": inst.initial.tolist(), "migrations": [[0, 1, 1], [1, 1, 2]]},
                         augmentation=1.5)
    assert (chk.n_migrations, chk.noop_migrations, chk.migration_cost) == (2, 0, 6.0)


def test_migration_applies_after_its_request():
    # 3 -> 1 after request 0 (edge 3 cut: paid); request 1 on edge 3 is then inside
    base = check_ring_run(INST, run_of([]))
    moved = check_ring_run(INST, run_of([[0, 3, 1], [0, 4, 0]]), augmentation=1)
    # placement {0,1,2,4} {3,5,6,7}: edges 2 (2,3), 3 (3,4), 4 (4,5) cut; 7 (7,0) cut
    # requests: 3 (before: cut) 3 (cut) 7 (cut) 1 (in) 2 (cut) 2 (cut)
    assert base.communication_cost == 3 and moved.communication_cost == 5


def test_alpha_scales_migration_cost_only():
    inst = RingInstance(n=8, servers=2, requests=INST.requests, alpha=2.5)
    chk = check_ring_run(inst, run_of([[0, 3, 1], [0, 7, 0], [0, 2, 0]]))
    assert (chk.migration_cost, chk.communication_cost, chk.noop_migrations, chk.value) == (5.0, 3, 1, 8.0)
    zero = check_ring_run(RingInstance(n=8, servers=2, requests=INST.requests, alpha=0), run_of([[0, 3, 1],
                                                                                               [0, 7, 0]]))
    assert zero.migration_cost == 0.0 and zero.n_migrations == 2


def test_augmentation_from_run_argument_and_default():
    rows = [[0, 3, 1], [2, 2, 1]]  # server 1 holds 6 after step 2
    assert check_ring_run(INST, run_of(rows)).capacity == 4.0
    chk = check_ring_run(INST, run_of(rows))
    assert constraints(chk) == ["capacity c*k", "capacity c*k"] and chk.max_load == 6
    assert [v.amount for v in chk.violations] == [1.0, 2.0]
    assert "step 2 (after request 2), server 1: load 6 > capacity 4" in chk.violations[1].where
    assert check_ring_run(INST, run_of(rows, augmentation=1.5)).feasible
    assert check_ring_run(INST, run_of(rows, augmentation=1.5)).capacity == 6.0
    over = check_ring_run(INST, run_of(rows, augmentation=1.5), augmentation=1.25)  # the argument wins
    assert over.capacity == 5.0 and over_pairs(over) == [(2, 1)] and over.violations[0].amount == 1.0
    assert check_ring_run(INST, run_of(rows, augmentation=1.25), tol=1).feasible
    assert check_ring_run(INST, run_of(rows), augmentation=1.5).max_load_ratio == 1.5


def test_augmentation_below_one_flags_the_initial_placement():
    chk = check_ring_run(INST, run_of([]), augmentation=0.5)
    assert over_pairs(chk) == [(-2, 0), (-2, 1)]
    assert chk.violations[0].where.startswith("initial placement, server 0: load 4 > capacity 2")


def test_step_minus_one_is_named():
    chk = check_ring_run(INST, run_of([[-1, 0, 1]]))
    assert over_pairs(chk) == [(-1, 1)]
    assert "step -1 (before the first request), server 1" in chk.violations[0].where


def test_empty_request_sequence():
    inst = RingInstance(n=8, servers=2, requests=[])
    chk = check_ring_run(inst, run_of([[-1, 0, 1], [-1, 4, 0]]))
    assert (chk.feasible, chk.value, chk.communication_cost, chk.n_migrations) == (True, 2.0, 0, 2)
    bad = check_ring_run(inst, run_of([[0, 0, 1]]))
    assert constraints(bad) == ["migration index in -1..T-1"] and "not in -1..-1" in bad.violations[0].where
    assert check_ring_run(inst, run_of([])).value == 0.0


def test_one_server_never_pays_communication():
    inst = RingInstance(n=5, servers=1, requests=[0, 1, 4, 4])
    chk = check_ring_run(inst, {"initial": [0] * 5, "migrations": [[1, 2, 0]]})
    assert (chk.value, chk.noop_migrations, chk.max_load) == (0.0, 1, 5)


# -- violations ------------------------------------------------------------------------------------


@pytest.mark.parametrize(("rows", "constraint", "where"), [
    ([[0, 3, 1, 0]], "migration row", "shape (1, 4); expected (M, 3)"),
    ([0, 3, 1], "migration row", "shape (3,)"),
    ([[0, 3, 1], [1, 2]], "migration row", "not an (M, 3) array"),
    ([[0, 3.5, 1]], "migration row", "row 0 [0.0, 3.5, 1.0]: not integers"),
    ([[0, 3, 1], [1, None, 1]], "migration row", "row 1 [1, None, 1]: not integers"),
    ([[0, float("nan"), 1]], "migration row", "row 0"),
    (np.array([[True, False, True]]), "migration row", "not integers"),
    ([[0, 3, 1], [6, 4, 0]], "migration index in -1..T-1", "row 1 [6, 4, 0]: index 6 not in -1..5"),
    ([[-2, 4, 0]], "migration index in -1..T-1", "index -2"),
    ([[2, 3, 1], [1, 4, 0]], "migration order (non-decreasing index)", "row 1 [1, 4, 0]: index 1 after index 2"),
    ([[0, 8, 1]], "migration process in 0..n-1", "row 0 [0, 8, 1]: process 8 not in 0..7"),
    ([[0, -1, 1]], "migration process in 0..n-1", "process -1"),
    ([[0, 3, 2]], "migration server in 0..l-1", "row 0 [0, 3, 2]: server 2 not in 0..1"),
    ([[0, 3, -1]], "migration server in 0..l-1", "server -1"),
])
def test_malformed_rows_are_named_and_stop_the_costs(rows, constraint, where):
    chk = check_ring_run(INST, run_of(rows))
    assert constraints(chk) == [constraint]
    assert where in chk.violations[0].where
    assert math.isnan(chk.value) and chk.communication_cost is None and chk.max_load is None
    assert not chk.feasible
    with pytest.raises(AssertionError, match=re.escape(constraint)):
        chk.raise_if_infeasible()


def test_several_bad_rows_are_listed_up_to_the_limit():
    rows = [[0, 3, 1]] + [[1, 9 + i, 0] for i in range(10)] + [[0, 2, 7]]
    chk = check_ring_run(INST, run_of(rows), max_violations=3)
    assert constraints(chk) == ["migration order (non-decreasing index)"] + ["migration process in 0..n-1"] * 4 \
        + ["migration server in 0..l-1"]
    assert chk.violations[4].where == "7 more rows" and chk.violations[4].amount == 7.0


def test_initial_assignment_mismatch_names_the_first_process_and_costs_still_count():
    initial = [0, 0, 0, 1, 0, 1, 1, 1]
    chk = check_ring_run(INST, run_of([], initial=initial))
    assert constraints(chk) == ["initial assignment"]
    assert chk.violations[0].where.startswith("process 3: run has server 1, the instance 0 (2 processes differ)")
    assert chk.violations[0].amount == 2.0
    assert chk.value == 3.0  # replayed from the instance's initial assignment
    short = check_ring_run(INST, run_of([], initial=[0, 1]))
    assert constraints(short) == ["initial assignment"] and "shape (2,)" in short.violations[0].where
    junk = check_ring_run(INST, run_of([], initial=["a"] * 8))
    assert constraints(junk) == ["initial assignment"] and "process 0" in junk.violations[0].where
    ragged = check_ring_run(INST, run_of([], initial=[[0], [1, 2]]))
    assert constraints(ragged) == ["initial assignment"]


def test_missing_fields_bad_count_and_bad_run_augmentation():
    assert constraints(check_ring_run(INST, {"initial": INST.initial})) == ["run fields"]
    assert math.isnan(check_ring_run(INST, {"initial": INST.initial}).value)
    no_init = check_ring_run(INST, {"migrations": []})
    assert constraints(no_init) == ["run fields"] and no_init.value == 3.0
    count = check_ring_run(INST, run_of([], n_requests=5))
    assert constraints(count) == ["request count"] and "T = 6" in count.violations[0].where
    assert check_ring_run(INST, run_of([], n_requests=6)).feasible
    for c in (-1, 0, float("nan"), "two", True):
        chk = check_ring_run(INST, run_of([[0, 3, 1]], augmentation=c))
        assert constraints(chk) == ["augmentation"] and math.isnan(chk.capacity)
        assert chk.value == 4 + 1  # costs are still recounted: requests 0, 2, 4, 5 cut, one move


def test_bad_arguments_raise():
    with pytest.raises(TypeError, match="RingInstance"):
        check_ring_run({"n": 8}, run_of([]))
    for c in (0, -1.0, float("inf"), "x"):
        with pytest.raises(ValueError, match="augmentation"):
            check_ring_run(INST, run_of([]), augmentation=c)
    with pytest.raises(ValueError, match="tol"):
        check_ring_run(INST, run_of([]), tol=-1)
    with pytest.raises(ValueError, match="max_violations"):
        check_ring_run(INST, run_of([]), max_violations=0)


# -- against the loop replay ----------------------------------------------------------------------


@st.composite
def runs(draw):
    servers = draw(st.integers(1, 4))
    k = draw(st.integers(1, 4))
    n = max(2, servers * k)
    k = n // servers
    T = draw(st.integers(0, 25))
    req = draw(st.lists(st.integers(0, n - 1), min_size=T, max_size=T))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    initial = rng.permutation(np.arange(n) // k)
    inst = RingInstance(n=n, servers=servers, requests=req, initial=initial, alpha=draw(st.sampled_from([1, 0.5])))
    M = draw(st.integers(0, 40))
    idx = np.sort(rng.integers(-1, max(T, 0), size=M)) if M else np.zeros(0, dtype=np.int64)
    hot = rng.integers(0, n, size=3)  # a few processes move often, several times at one index
    proc = np.where(rng.random(M) < 0.5, hot[rng.integers(0, 3, size=M)], rng.integers(0, n, size=M))
    rows = np.stack([idx, proc, rng.integers(0, servers, size=M)], axis=1).astype(np.int64).reshape(-1, 3)
    if T == 0:
        rows[:, 0] = -1
    c = draw(st.sampled_from([1.0, 1.25, 1.5, 2.0]))
    return inst, rows, c


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(runs())
def test_agrees_with_a_loop_replay(case):
    inst, rows, c = case
    assert_matches_replay(inst, rows, c)


def test_agrees_with_a_loop_replay_on_larger_random_runs():
    rng = np.random.default_rng(7)
    for n, servers, T, M in ((30, 3, 500, 800), (64, 8, 2000, 3000), (12, 6, 300, 600)):
        inst = random_ring(n, servers, T, "hotspot", seed=int(rng.integers(1000)))
        idx = np.sort(rng.integers(-1, T, size=M))
        rows = np.stack([idx, rng.integers(0, n, size=M), rng.integers(0, servers, size=M)], axis=1)
        for c in (1.0, 2.0, 4.0):
            assert_matches_replay(inst, rows, c)
        assert_matches_replay(inst, rows, 1.0, tol=2)


def test_balanced_swaps_stay_feasible():
    # every step swaps two processes of different servers: loads never change
    rng = np.random.default_rng(3)
    n, servers, T = 40, 4, 400
    inst = random_ring(n, servers, T, "moving-hotspot", seed=5)
    server = inst.initial.copy()
    rows = []
    for t in range(-1, T, 3):
        a, b = rng.choice(n, 2, replace=False)
        if server[a] != server[b]:
            rows += [[t, a, server[b]], [t, b, server[a]]]
            server[a], server[b] = server[b], server[a]
    chk = assert_matches_replay(inst, np.array(rows))
    assert chk.feasible and chk.max_load == inst.k and chk.n_migrations == len(rows)


# -- input forms -------------------------------------------------------------------------------------


def test_ring_run_object_and_out_json_dict_agree():
    from clusteropt.online.ring import RingRun

    inst = random_ring(16, 4, 300, "zipf", seed=2)
    rng = np.random.default_rng(0)
    idx = np.sort(rng.integers(-1, 300, size=100))
    rows = np.stack([idx, rng.integers(0, 16, size=100), rng.integers(0, 4, size=100)], axis=1)
    run = RingRun(policy="hand", params={}, seed=0, augmentation=2.0, initial=np.array(inst.initial),
                  migrations=rows, costs={}, n_requests=300, batches=1, seconds=0.0)
    chk = check_ring_run(inst, run)
    assert chk.capacity == 8.0
    back = json.loads(json.dumps(run.to_dict(chk)))
    again = check_ring_run(inst, back)
    assert again == chk and again.max_load == chk.max_load == back["max_load"]
    assert (back["communication_cost"], back["migration_cost"], back["total_cost"], back["verified"]) == \
        (chk.communication_cost, chk.migration_cost, chk.value, chk.feasible)
    assert check_ring_run(inst, {**back, "migrations": []}).n_migrations == 0


def test_a_policy_run_checks(tmp_path):
    pytest.importorskip("clusteropt.algorithms.ring.baselines")
    from clusteropt.online.ring import run_ring

    inst = random_ring(16, 4, 500, "hotspot", seed=1)
    run = run_ring("never", inst, seed=0)
    chk = check_ring_run(inst, run)
    cut = inst.initial != np.roll(inst.initial, -1)
    assert chk.feasible and chk.communication_cost == int(cut[inst.requests].sum()) and chk.n_migrations == 0


def test_a_long_run():
    n, servers, T, M = 256, 16, 150_000, 100_000
    inst = random_ring(n, servers, T, "phases", seed=11)
    rng = np.random.default_rng(1)
    rows = np.stack([np.sort(rng.integers(-1, T, size=M)), rng.integers(0, n, size=M),
                     rng.integers(0, servers, size=M)], axis=1)
    chk = check_ring_run(inst, {"initial": inst.initial, "migrations": rows}, augmentation=10)
    assert chk.n_migrations + chk.noop_migrations == M
    assert 0 < chk.communication_cost <= T and chk.max_load <= 10 * inst.k and chk.feasible
    # the same on a prefix, against the loop replay
    short = inst.with_requests(inst.requests[:5000])
    assert_matches_replay(short, rows[rows[:, 0] < 5000], 2.0)
