"""The coflow schedule checker (paper 001), constraint by constraint and against a slot-by-slot expansion.

* a hand-made schedule (blocks overlapping in time on disjoint ports, intervals that only touch)
  is feasible with hand-computed completion times and weighted CCT;
* every kind of violation is flagged, alone, with the coflow id, ports, block and numbers;
* on random small instances, feasibility and completion times agree with a per-slot expansion
  written here, for greedy schedules and perturbed (mostly infeasible) copies;
* 10^6 block-flows verify in well under 5 s.
"""

from __future__ import annotations

import math
from collections import defaultdict

import numpy as np
import pytest

from clusteropt.decisions.coflow import CoflowSchedule
from clusteropt.instances.coflow.instance import CoflowInstance
from clusteropt.verify.base import Violation
from clusteropt.verify.coflow import CoflowCheck, NotListed, _previous_max_end, check_coflow_schedule, check_order


def make_instance(release=(0, 2, 0)) -> CoflowInstance:
    # coflow 0 (id 7, w 1): (0,0)x2, (1,2)x1; coflow 1 (id 8, w 2): (0,1)x1, (2,2)x2;
    # coflow 2 (id 9, w 0.5): (1,0)x1, (2,0)x3
    return CoflowInstance(
        3, 3,
        coflow=[0, 0, 1, 1, 2, 2], input=[0, 1, 0, 2, 1, 2], output=[0, 2, 1, 2, 0, 0],
        units=[2, 1, 1, 2, 1, 3], weight=[1.0, 2.0, 0.5], release=list(release), ids=[7, 8, 9],
    )


INST = make_instance()

# (start, length, [(coflow, input, output), ...])
BLOCKS = [
    (1, 2, [(0, 0, 0)]),
    (1, 1, [(0, 1, 2)]),             # overlaps block 0 in time, disjoint ports
    (3, 1, [(1, 0, 1), (2, 2, 0)]),  # coflow 1 released at 2: slot 3 is its first
    (4, 2, [(2, 2, 0)]),             # input 2 busy [4, 6) ...
    (6, 2, [(1, 2, 2)]),             # ... and again [6, 8): touching, not overlapping
    (6, 1, [(2, 1, 0)]),
]
# completion: coflow 0 -> 2, coflow 1 -> 7, coflow 2 -> 6
COMPLETION = [2, 7, 6]
WCCT = 1.0 * 2 + 2.0 * 7 + 0.5 * 6


def schedule(blocks) -> CoflowSchedule:
    """Arrays straight from a block list (no builder: zero lengths and bad values stay in)."""
    sizes = [len(f) for _, _, f in blocks]
    flows = np.array([x for _, _, f in blocks for x in f], dtype=np.int64).reshape(-1, 3)
    return CoflowSchedule(
        start=np.array([b[0] for b in blocks], dtype=np.int64),
        length=np.array([b[1] for b in blocks], dtype=np.int64),
        ptr=np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64),
        coflow=flows[:, 0], input=flows[:, 1], output=flows[:, 2],
    )


def replaced(**changes) -> list:
    """BLOCKS with block k replaced (``b2=...``), removed (``b5=None``) or appended (``b6=...``)."""
    blocks = list(BLOCKS)
    for key, block in sorted(changes.items(), key=lambda kv: int(kv[0][1:])):
        k = int(key[1:])
        if k < len(blocks):
            blocks[k] = block
        else:
            blocks.append(block)
    return [b for b in blocks if b is not None]


# -- feasible ------------------------------------------------------------------------------------


def test_hand_made_schedule_is_feasible_with_hand_computed_cost():
    check = check_coflow_schedule(INST, schedule(BLOCKS))
    assert isinstance(check, CoflowCheck)
    assert check.feasible and check.violations == () and check.n_violations == 0
    assert check.completion.tolist() == COMPLETION
    assert check.value == WCCT == 19.0
    assert check.makespan == 7
    check.raise_if_infeasible()


def test_blocks_overlapping_in_time_on_disjoint_ports_are_feasible():
    # two blocks over the same slots 1..2, and a third inside them, on pairwise disjoint ports
    inst = CoflowInstance(3, 3, [0, 1, 2], [0, 1, 2], [1, 2, 0], [2, 2, 1], [1.0, 1.0, 3.0], [0, 0, 0])
    check = check_coflow_schedule(inst, schedule([(1, 2, [(0, 0, 1)]), (1, 2, [(1, 1, 2)]), (2, 1, [(2, 2, 0)])]))
    assert check.feasible
    assert check.completion.tolist() == [2, 2, 2]
    assert check.value == 10.0


def test_touching_intervals_are_not_flagged_overlapping_are():
    inst = CoflowInstance(1, 1, [0, 1], [0, 0], [0, 0], [2, 2], [1.0, 1.0], [0, 0])
    # [1, 3) and [3, 5) on input 0 and output 0: feasible
    assert check_coflow_schedule(inst, schedule([(1, 2, [(0, 0, 0)]), (3, 2, [(1, 0, 0)])])).feasible
    check = check_coflow_schedule(inst, schedule([(1, 2, [(0, 0, 0)]), (2, 2, [(1, 0, 0)])]))  # [1,3) [2,4)
    assert [v.constraint for v in check.violations] == ["port capacity: input", "port capacity: output"]
    assert check.violations[0].where == (
        "input 0, slot 2: block 1 (coflow id 2, slots 2..3) and block 0 (coflow id 1, slots 1..2)"
    )
    assert check.violations[0].amount == 1


def test_coflow_without_flows_completes_at_release():
    inst = CoflowInstance(2, 2, [0], [0], [1], [3], [1.0, 4.0], [1, 5])
    check = check_coflow_schedule(inst, schedule([(2, 3, [(0, 0, 1)])]))
    assert check.feasible
    assert check.completion.tolist() == [4, 5]
    assert check.value == 4 + 4 * 5
    assert check.makespan == 5


def test_empty_schedule_of_empty_instance():
    inst = CoflowInstance(2, 2, [], [], [], [], [1.0], [3])
    check = check_coflow_schedule(inst, schedule([]))
    assert check.feasible and check.completion.tolist() == [3] and check.value == 3.0


def test_contained_interval_after_a_short_one_is_still_caught():
    # [1, 10) on input 0; [2, 3) and [5, 6) inside it: the last clashes with the first, not its neighbour
    inst = CoflowInstance(1, 3, [0, 1, 2], [0, 0, 0], [0, 1, 2], [9, 1, 1], [1.0, 1.0, 1.0], [0, 0, 0])
    check = check_coflow_schedule(inst, schedule([(1, 9, [(0, 0, 0)]), (2, 1, [(1, 0, 1)]), (5, 1, [(2, 0, 2)])]))
    assert check.n_violations == 2
    assert [v.where for v in check.violations] == [
        "input 0, slot 2: block 1 (coflow id 2, slot 2) and block 0 (coflow id 1, slots 1..9)",
        "input 0, slot 5: block 2 (coflow id 3, slot 5) and block 0 (coflow id 1, slots 1..9)",
    ]


# -- one violation at a time -----------------------------------------------------------------------


CASES = {
    "input twice in a block": (
        replaced(b2=(3, 1, [(1, 0, 1), (2, 2, 0), (1, 2, 2)]), b4=(6, 1, [(1, 2, 2)])),
        "matching: input", "block 2 (slot 3), input 2: coflow ids 9 and 8", 1),
    "output twice in a block": (
        replaced(b2=(3, 1, [(1, 0, 1), (2, 2, 0), (2, 1, 0)]), b5=None),
        "matching: output", "block 2 (slot 3), output 0: coflow ids 9 and 9", 1),
    "input across blocks": (
        replaced(b4=(5, 2, [(1, 2, 2)])),
        "port capacity: input",
        "input 2, slot 5: block 4 (coflow id 8, slots 5..6) and block 3 (coflow id 9, slots 4..5)", 1),
    "output across blocks": (
        replaced(b5=(5, 1, [(2, 1, 0)])),
        "port capacity: output",
        "output 0, slot 5: block 5 (coflow id 9, slot 5) and block 3 (coflow id 9, slots 4..5)", 1),
    "under-served": (
        replaced(b3=(4, 1, [(2, 2, 0)])),
        "demand: under-served", "coflow id 9, input 2, output 0: served 2, demanded 3", 1),
    "over-served": (
        replaced(b4=(6, 3, [(1, 2, 2)])),
        "demand: over-served", "coflow id 8, input 2, output 2: served 3, demanded 2", 1),
    "unserved": (
        replaced(b1=None),
        "demand: under-served", "coflow id 7, input 1, output 2: served 0, demanded 1", 1),
    "not a flow": (
        replaced(b6=(9, 2, [(0, 2, 1)])),
        "demand: not a flow", "coflow id 7, input 2, output 1: served 2, demanded 0 (first in block 6)", 2),
    "coflow index": (
        replaced(b6=(9, 1, [(3, 0, 0)])),
        "coflow index", "coflow[7] = 3 (block 6); expected in [0, 3)", 1),
    "negative coflow index": (
        replaced(b6=(9, 1, [(-2, 0, 0)])),
        "coflow index", "coflow[7] = -2 (block 6); expected in [0, 3)", 2),
    "input port": (
        replaced(b6=(9, 1, [(0, 3, 0)])),
        "input port", "input[7] = 3 (block 6); expected in [0, 3)", 1),
    "output port": (
        replaced(b6=(9, 1, [(0, 0, -1)])),
        "output port", "output[7] = -1 (block 6); expected in [0, 3)", 1),
    "start 0": (
        replaced(b6=(0, 1, [(0, 0, 0)])),
        "start >= 1", "block 6: start = 0", 1),
    "length 0": (
        replaced(b6=(9, 0, [(0, 0, 0)])),
        "length >= 1", "block 6: length = 0", 1),
    "negative length": (
        replaced(b6=(9, -3, [(0, 0, 0)])),
        "length >= 1", "block 6: length = -3", 4),
}


@pytest.mark.parametrize(("blocks", "constraint", "where", "amount"), list(CASES.values()), ids=list(CASES))
def test_each_violation_alone(blocks, constraint, where, amount):
    check = check_coflow_schedule(INST, schedule(blocks))
    assert not check.feasible
    assert check.violations == (Violation(constraint, where, amount),), check.violations
    assert check.n_violations == 1
    assert len(check.completion) == 3 and math.isfinite(check.value)
    with pytest.raises(AssertionError, match=r"^1 violation\(s\): "):
        check.raise_if_infeasible()


@pytest.mark.parametrize(("release", "ok"), [(2, True), (3, False)])
def test_release(release, ok):
    # coflow 1 (id 8) first runs in slot 3: fine for r = 2 (start = r + 1), not for r = 3 (start = r)
    check = check_coflow_schedule(make_instance((0, release, 0)), schedule(BLOCKS))
    assert check.feasible == ok
    if not ok:
        assert [str(v) for v in check.violations] == [
            "release violated at block 2 (coflow id 8, slot 3), input 0, output 1: release 3, "
            "first allowed slot 4 by 1"
        ]


def test_release_amount_counts_early_slots():
    check = check_coflow_schedule(make_instance((0, 2, 4)), schedule(BLOCKS))
    # coflow 2 (r = 4) runs in blocks 2 (slot 3), 3 (slot 4) and 5 (slot 6): two are early
    assert [(v.constraint, v.amount) for v in check.violations] == [("release", 2.0), ("release", 1.0)]


def test_bad_entries_are_left_out_of_the_other_checks_and_completion():
    # block 6 at slot 0 would clash with nothing; it must not add to the served units or C_j
    check = check_coflow_schedule(INST, schedule(replaced(b6=(0, 20, [(1, 0, 1)]))))
    assert [v.constraint for v in check.violations] == ["start >= 1"]
    assert check.completion.tolist() == COMPLETION


def bad_structure(**arrays) -> CoflowSchedule:
    base = schedule(BLOCKS)
    fields = {k: getattr(base, k) for k in ("start", "length", "ptr", "coflow", "input", "output")}
    fields.update(arrays)
    return CoflowSchedule(**fields)


STRUCTURE = {
    "ptr[0]": (dict(ptr=np.array([1, 1, 2, 4, 5, 6, 7])), "ptr[0] = 1; expected 0"),
    "ptr[-1]": (dict(ptr=np.array([0, 1, 2, 4, 5, 6, 6])), "ptr[-1] = 6; expected 7 (the number of block-flows)"),
    "ptr decreasing": (dict(ptr=np.array([0, 2, 1, 4, 5, 6, 7])),
                       "ptr[2] = 1 < ptr[1] = 2; expected non-decreasing"),
    "ptr size": (dict(ptr=np.array([0, 1, 2, 4, 5, 7])), "ptr.shape = (6,); expected (7,) (blocks + 1)"),
    "length size": (dict(length=np.array([2, 1, 1, 2, 2])), "length.shape = (5,); expected (6,) as start"),
    "input size": (dict(input=np.array([0, 1, 0, 2, 2, 2])), "input.shape = (6,); expected (7,) as coflow"),
    "2-D": (dict(output=np.zeros((7, 1), dtype=int)), "output.ndim = 2; expected 1"),
    "fractional": (dict(start=np.array([1, 1, 3, 4, 6, 6.5])), "start[5] = np.float64(6.5); expected an integer"),
    "strings": (dict(coflow=np.array(list("0011222"))), "coflow.dtype = <U1; expected integers"),
}


@pytest.mark.parametrize(("arrays", "where"), list(STRUCTURE.values()), ids=list(STRUCTURE))
def test_bad_structure_is_fatal(arrays, where):
    check = check_coflow_schedule(INST, bad_structure(**arrays))
    assert [(v.constraint, v.where) for v in check.violations] == [("structure", where)]
    assert math.isnan(check.value) and check.completion is None and check.makespan is None


def test_integral_floats_are_accepted():
    assert check_coflow_schedule(INST, bad_structure(start=np.array([1.0, 1, 3, 4, 6, 6]))).feasible


def test_many_violations_are_counted_and_capped():
    blocks = replaced(**{f"b{k}": (9 + k, 1, [(0, 2, 1)]) for k in range(6, 36)})  # 30 stray flows ...
    check = check_coflow_schedule(INST, schedule(blocks), max_violations=5)
    # ... but one (coflow, input, output): a single "not a flow" with 30 units
    assert check.n_violations == 1 and check.violations[0].amount == 30
    blocks = replaced(**{f"b{k}": (9, 1, [(0, 2, 1)]) for k in range(6, 36)})  # 30 blocks in slot 9
    check = check_coflow_schedule(INST, schedule(blocks), max_violations=5)
    assert check.n_violations == 29 + 29 + 1  # 29 clashes on input 2, 29 on output 1, one stray triple
    assert len(check.violations) == 6
    assert isinstance(check.violations[-1], NotListed) and check.violations[-1].amount == 54
    assert str(check.violations[-1]) == "... and 54 more violation(s) not listed (max_violations=5)"
    with pytest.raises(AssertionError, match=r"^59 violation\(s\): .* \(and 54 more\)$"):
        check.raise_if_infeasible()
    none_listed = check_coflow_schedule(INST, schedule(blocks), max_violations=0)
    assert not none_listed.feasible and len(none_listed.violations) == 1 and none_listed.n_violations == 59
    with pytest.raises(ValueError, match="max_violations"):
        check_coflow_schedule(INST, schedule(blocks), max_violations=-1)


@pytest.mark.parametrize("big", [10, 2**62])  # 2**62: per-port offsets would overflow int64
def test_previous_max_end_per_port(big):
    end, at = _previous_max_end(np.array([0, 0, 0, 1, 1]), np.array([big, 5, 7, 3, big - 1]))
    assert end.tolist() == [0, big, big, 0, 3]
    assert at.tolist()[1:3] == [0, 0] and at.tolist()[4] == 3


# -- random schedules against a slot-by-slot expansion ----------------------------------------------


def random_instance(rng) -> CoflowInstance:
    n_in, n_out, n = int(rng.integers(2, 5)), int(rng.integers(2, 5)), int(rng.integers(1, 5))
    rows = {}
    for _ in range(int(rng.integers(1, 9))):
        rows[(int(rng.integers(n)), int(rng.integers(n_in)), int(rng.integers(n_out)))] = int(rng.integers(1, 4))
    keys = sorted(rows)
    return CoflowInstance(
        n_in, n_out, [k[0] for k in keys], [k[1] for k in keys], [k[2] for k in keys], [rows[k] for k in keys],
        weight=np.round(rng.uniform(0, 3, n), 2), release=rng.integers(0, 4, n),
    )


def greedy_blocks(inst: CoflowInstance, rng) -> list:
    """Slot-by-slot random greedy, then runs of consecutive slots grouped into random blocks."""
    remaining = {(int(c), int(i), int(o)): int(u)
                 for c, i, o, u in zip(inst.coflow, inst.input, inst.output, inst.units)}
    slots = defaultdict(list)  # flow -> slots it moves in
    t = 0
    while any(remaining.values()):
        t += 1
        busy_in, busy_out = set(), set()
        flows = [f for f, u in remaining.items() if u]
        for k in rng.permutation(len(flows)):
            c, i, o = flows[k]
            if t >= inst.release[c] + 1 and i not in busy_in and o not in busy_out and rng.random() < 0.8:
                busy_in.add(i)
                busy_out.add(o)
                remaining[flows[k]] -= 1
                slots[flows[k]].append(t)
    runs = defaultdict(list)  # (start, length) -> flows
    for f, ts in slots.items():
        lo = ts[0]
        for a, b in zip(ts, [*ts[1:], None]):
            if b != a + 1:
                runs[(lo, a - lo + 1)].append(f)
                lo = b
    blocks = []
    for (s, n), fs in runs.items():
        fs = [fs[k] for k in rng.permutation(len(fs))]
        cut = int(rng.integers(0, len(fs) + 1))
        blocks += [(s, n, part) for part in (fs[:cut], fs[cut:]) if part]
    return [blocks[k] for k in rng.permutation(len(blocks))]


def perturb(blocks: list, inst: CoflowInstance, rng) -> list:
    blocks = [(s, n, list(fs)) for s, n, fs in blocks]
    b = int(rng.integers(len(blocks)))
    s, n, fs = blocks[b]
    kind = rng.integers(7)
    if kind == 0:
        blocks[b] = (s, n + 1, fs)
    elif kind == 1:
        blocks[b] = (s + int(rng.choice([-1, 1])), n, fs)
    elif kind == 2:
        blocks[b] = (s, n - 1, fs)  # may become length 0
    elif kind == 3:
        del blocks[b]
    elif kind == 4:
        blocks.append((s + n, n, fs))  # a repeat right after: over-served
    elif kind == 5:  # move one flow into another block
        other = int(rng.integers(len(blocks)))
        f = fs.pop()
        blocks[other][2].append(f)
        blocks = [x for x in blocks if x[2]]
    else:  # a flow of a random coflow on random ports
        c, i, o = (int(rng.integers(inst.n_coflows)), int(rng.integers(inst.n_inputs)),
                   int(rng.integers(inst.n_outputs)))
        blocks[b] = (s, n, [*fs, (c, i, o)])
    return blocks


def expand(inst: CoflowInstance, blocks: list) -> tuple[bool, list[int]]:
    """Feasibility and completion times from the slot-by-slot expansion."""
    ok = True
    use = defaultdict(int)
    served = defaultdict(int)
    last = defaultdict(int)
    for s, n, fs in blocks:
        ok &= s >= 1 and n >= 1
        for c, i, o in fs:
            ok &= s >= inst.release[c] + 1
            for t in range(s, s + n):
                use["in", i, t] += 1
                use["out", o, t] += 1
                served[c, i, o] += 1
                last[c] = max(last[c], t)
    ok &= all(u <= 1 for u in use.values())
    demand = {(int(c), int(i), int(o)): int(u)
              for c, i, o, u in zip(inst.coflow, inst.input, inst.output, inst.units)}
    ok &= all(served.get(f, 0) == u for f, u in demand.items()) and set(served) <= set(demand)
    completion = [last[j] if j in last else int(inst.release[j]) for j in range(inst.n_coflows)]
    return ok, completion


def test_against_slot_by_slot_expansion():
    rng = np.random.default_rng(2024)
    verdicts = defaultdict(int)
    for case in range(60):
        inst = random_instance(rng)
        blocks = greedy_blocks(inst, rng)
        if case % 3:
            blocks = perturb(blocks, inst, rng)
        ok, completion = expand(inst, blocks)
        check = check_coflow_schedule(inst, schedule(blocks), max_violations=3)
        assert check.feasible == ok, (case, blocks, check.violations)
        assert (check.n_violations == 0) == ok
        if case % 3 == 0:
            assert ok  # the greedy is feasible
        if all(s >= 1 and n >= 1 for s, n, _ in blocks):  # nothing left out: completion agrees
            assert check.completion.tolist() == completion, (case, blocks)
            assert check.value == pytest.approx(float(np.dot(inst.weight, completion)))
            assert check.makespan == max(completion)
        verdicts[ok] += 1
    assert verdicts[True] >= 20 and verdicts[False] >= 20


# -- orderings ------------------------------------------------------------------------------------


def test_check_order():
    assert check_order([2, 0, 1], 3).feasible
    assert check_order(np.arange(5), 5).feasible
    assert check_order([], 0).feasible
    assert [str(v) for v in check_order([0, 3, 0, -1], 3).violations] == [
        "structure violated at len(order) = 4; expected 3 by 1",
        "order index violated at order[1] = 3; expected in [0, 3) by 1",
        "order index violated at order[3] = -1; expected in [0, 3) by 1",
        "order duplicate violated at index 0 at positions 0 and 2 by 1",
        "order missing violated at index 1 by 1",
        "order missing violated at index 2 by 1",
    ]
    assert [v.where for v in check_order([1, 1, 1], 3).violations] == [
        "index 1 at positions 0 and 1", "index 1 at positions 0 and 2", "index 0", "index 2"]
    assert check_order([[0, 1]], 2).violations[0].where == "order.ndim = 2; expected 1"
    capped = check_order(np.zeros(100, dtype=int), 100, max_violations=2)
    assert len(capped.violations) == 3 and capped.violations[-1].amount == 99 + 99 - 2


# -- speed ----------------------------------------------------------------------------------------


def big_schedule(m: int = 150, n_blocks: int = 6667, seed: int = 0):
    """One coflow per block, each block a random perfect matching over m ports (10^6 block-flows)."""
    rng = np.random.default_rng(seed)
    length = rng.integers(1, 6, n_blocks)
    start = np.concatenate([[1], 1 + np.cumsum(length)[:-1]])
    coflow = np.repeat(np.arange(n_blocks), m)
    inp = np.tile(np.arange(m), n_blocks)
    out = np.argsort(rng.random((n_blocks, m)), axis=1).ravel()
    inst = CoflowInstance(m, m, coflow, inp, out, np.repeat(length, m), np.ones(n_blocks),
                          np.zeros(n_blocks, dtype=np.int64))
    sched = CoflowSchedule(start, length, np.arange(n_blocks + 1) * m, coflow, inp, out)
    return inst, sched


def test_a_million_block_flows_are_checked_and_clashes_counted():
    inst, sched = big_schedule()
    assert sched.coflow.size >= 10**6
    check = check_coflow_schedule(inst, sched)
    assert check.feasible
    assert check.completion.tolist() == (sched.start + sched.length - 1).tolist()
    # all blocks in slot 1 onward: ~2 * 10^6 clashes, counted, not listed
    crowded = CoflowSchedule(np.ones_like(sched.start), sched.length, sched.ptr, sched.coflow, sched.input,
                             sched.output)
    check = check_coflow_schedule(inst, crowded)
    assert check.n_violations == 2 * 150 * (6667 - 1)
    assert len(check.violations) == 21
