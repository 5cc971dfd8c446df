"""The mlBroker checker (paper 003, (8a)-(8k), costs C1-C4), rule by rule and against brute-force loops.

* a hand-made 3-slot schedule on a hand-made instance (2 DCs, 2 resources, 2 jobs) is feasible, with
  every cost computed by hand below, including a discounted price, a PS migration and deployment
  costs from ``v(t - 1)``;
* one mutation per constraint (8a)-(8j) is flagged with that label (alone), naming slot, job, DC and
  the numbers; (8k) variants and the inactive-job rule too;
* slot-by-slot checks with ``prev_v`` agree with the whole-schedule check;
* C2 is recomputed from ``y, s`` and the price function, whatever ``x`` says;
* on random preset instances, a "process where the data is" placement is feasible and its costs agree
  with per-element loops.
"""

from __future__ import annotations

import copy
import math

import numpy as np
import pytest

from clusteropt.algorithms.broker import BrokerDecision, BrokerSchedule
from clusteropt.instances.broker import BrokerInstance, broker_preset
from clusteropt.verify import BrokerCheck, check_broker_decision, check_broker_schedule

# DC 0: a = (3, 1), b = (2, 0.5), l = (4, 10) -> e = (4, 5)
# DC 1: a = (4, 2), b = (3, 1),   l = (2, 6)  -> e = (2, 6)
# d^{01} = 0.1, d^{10} = 0.2
# job 0: slots 1-2, P = 10, n = (1, 2), m = (0, 1), B = 0.5, c = 4; D(1) = (25, 5) N = 3, D(2) = (0, 12) N = 2
# job 1: slots 2-3, P = 20, n = (2, 1), m = (0, 2), B = 1,   c = 3; D(2) = (10, 10) N = 1, D(3) = (40, 0) N = 2
INST = BrokerInstance(
    horizon=3, price_a=[[3.0, 1.0], [4.0, 2.0]], price_b=[[2.0, 0.5], [3.0, 1.0]],
    threshold=[[4.0, 10.0], [2.0, 6.0]], transfer_cost=[[0.0, 0.1], [0.2, 0.0]], arrival=[1, 2], last_slot=[2, 3],
    data=[[[25.0, 5.0], [0.0, 12.0], [0.0, 0.0]], [[0.0, 0.0], [10.0, 10.0], [40.0, 0.0]]],
    capacity=[10.0, 20.0], worker_demand=[[1.0, 2.0], [2.0, 1.0]], ps_demand=[[0.0, 1.0], [0.0, 2.0]],
    traffic=[0.5, 1.0], deploy_cost=[4.0, 3.0], resources=("gpu", "cpu"),
)


def decision(y=(), s=(), q=(), g=(), v=(), x=None, u1=()) -> BrokerDecision:
    """A decision from sparse dicts: ``y={(i, r): n}``, ``q={(i, r, r2): amount}``, ...; ``u1`` lists the
    (r, k) on the discounted segment (u2 = 1 - u1), ``x={(r, k): cost}``.
    """
    d = BrokerDecision.empty(2, 2, 2)
    d.q = d.q.astype(float)
    d.x = d.x.astype(float)
    for name, entries in (("y", y), ("s", s), ("q", q), ("g", g), ("v", v), ("x", x or {})):
        for idx, val in dict(entries).items():
            getattr(d, name)[idx] = val
    for idx in u1:
        d.u1[idx] = 1
    d.u2 = 1 - d.u1
    return d


# Slot 1: job 0: 3 workers in DC 0 (DC 1's 5 GB moved there), PS in DC 1.
#   h: DC 0 (gpu 3, cpu 6), DC 1 (cpu 1 from the PS)
#   C1 = 0.2 * 5 = 1; C2 = min(9, 10) + min(6, 8) + min(0, 2) + min(2, 7) = 17; C3 = 4 * 2 = 8;
#   C4 = 0.1 * 0.5 * 3 = 0.15
SLOT1 = decision(y={(0, 0): 3}, s={(0, 1): 1}, q={(0, 0, 0): 25, (0, 1, 0): 5}, g={(0, 0, 1): 3},
                 v={(0, 0): 1, (0, 1): 1}, x={(0, 0): 9, (0, 1): 6, (1, 0): 0, (1, 1): 2})
# Slot 2: job 0: 2 workers in DC 0 (12 GB moved from DC 1), PS stays in DC 1;
#         job 1: 1 worker in DC 1 (10 GB moved from DC 0), PS in DC 1.
#   h: DC 0 (gpu 2, cpu 4), DC 1 (gpu 2, cpu 1 + 1 + 2 = 4)
#   C1 = 0.2 * 12 + 0.1 * 10 = 3.4; C2 = min(6, 8) + min(4, 7) + min(8, 8) + min(8, 10) = 26;
#   C3 = 3 (job 1 in DC 1; job 0 was deployed before); C4 = 0.1 * 0.5 * 2 = 0.1
SLOT2 = decision(y={(0, 0): 2, (1, 1): 1}, s={(0, 1): 1, (1, 1): 1},
                 q={(0, 1, 0): 12, (1, 0, 1): 10, (1, 1, 1): 10}, g={(0, 0, 1): 2, (1, 1, 1): 1},
                 v={(0, 0): 1, (0, 1): 1, (1, 1): 1}, x={(0, 0): 6, (0, 1): 4, (1, 0): 8, (1, 1): 8})
# Slot 3: job 1: 3 workers and the PS in DC 0 (the PS migrates); job 0 is gone.
#   h: DC 0 (gpu 6 > l = 4: discounted, cpu 3 + 2 = 5)
#   C1 = 0; C2 = min(18, 2 * 6 + 4 = 16) + min(5, 7.5) = 21; C3 = 3 (job 1 new in DC 0); C4 = 0
SLOT3 = decision(y={(1, 0): 3}, s={(1, 0): 1}, q={(1, 0, 0): 40}, g={(1, 0, 0): 3}, v={(1, 0): 1},
                 x={(0, 0): 16, (0, 1): 5}, u1=[(0, 0)])
C1, C2, C3, C4 = [1.0, 3.4, 0.0], [17.0, 26.0, 21.0], [8.0, 3.0, 3.0], [0.15, 0.1, 0.0]
TOTAL = 26.15 + 32.5 + 24.0


def schedule() -> BrokerSchedule:
    return BrokerSchedule([copy.deepcopy(SLOT1), copy.deepcopy(SLOT2), copy.deepcopy(SLOT3)])


def test_hand_made_schedule_is_feasible_with_hand_computed_costs():
    chk = check_broker_schedule(INST, schedule())
    assert isinstance(chk, BrokerCheck)
    assert chk.ok and chk.feasible and chk.n_violations == 0, chk.violations
    np.testing.assert_allclose(chk.c1, C1)
    np.testing.assert_allclose(chk.c2, C2)
    np.testing.assert_allclose(chk.c3, C3)
    np.testing.assert_allclose(chk.c4, C4)
    assert chk.total_cost == pytest.approx(TOTAL) == pytest.approx(82.65)
    np.testing.assert_allclose(chk.slot_cost, [26.15, 32.5, 24.0])
    np.testing.assert_allclose(chk.x_cost, C2)  # x states the price exactly here
    np.testing.assert_allclose(chk.resource_amount[2], [[6, 5], [0, 0]])
    assert chk.cost_totals() == pytest.approx({"C1": 4.4, "C2": 64.0, "C3": 14.0, "C4": 0.25, "total": 82.65})


def test_slot_checks_with_prev_v_agree_with_the_schedule():
    total, prev = 0.0, None
    for t, d in enumerate(schedule().slots, start=1):
        chk = check_broker_decision(INST, d, t, prev)
        assert chk.ok and chk.first_slot == t
        assert chk.c3[0] == pytest.approx(C3[t - 1])
        total += chk.total_cost
        prev = d.v
    assert total == pytest.approx(TOTAL)


def test_deployment_cost_from_previous_v():
    # slot 2 without history: job 0 pays again in both DCs (4 + 4) and job 1 in DC 1 (3)
    assert check_broker_decision(INST, SLOT2, 2).c3[0] == pytest.approx(11.0)
    assert check_broker_decision(INST, SLOT2, 2, SLOT1.v).c3[0] == pytest.approx(3.0)
    # job 0 kept deployed in both DCs: nothing; a DC dropped (1 -> 0) costs nothing either
    prev = SLOT2.v.copy()
    prev[1, 1] = 0
    assert check_broker_decision(INST, SLOT2, 2, prev).c3[0] == pytest.approx(3.0)
    # v = 1 with no worker or PS is allowed (8g) and keeps the deployment: no cost when it returns
    keep = schedule()
    keep.slots[1].v[1, 0] = 1  # job 1 keeps DC 0 in slot 2 without placing anything there
    chk = check_broker_schedule(INST, keep)
    assert chk.ok and chk.c3.tolist() == pytest.approx([8.0, 6.0, 0.0])
    # check_broker_decision takes prev_v as given ...
    assert check_broker_decision(INST, SLOT2, 2, np.ones((2, 2))).c3[0] == pytest.approx(0.0)
    # ... the schedule check reads v(t - 1) of jobs active in t - 1 only: job 1 (from slot 2) pays
    early = schedule()
    early.slots[0].v[1, 1] = 1
    chk = check_broker_schedule(INST, early)
    assert chk.labels() == ["inactive job"] and chk.c3.tolist() == pytest.approx(C3)


def test_c2_is_recomputed_from_the_placement_not_from_x():
    sched = schedule()
    sched.slots[0].x = sched.slots[0].x + 100.0  # overpaying is allowed by (8c)-(8d)
    sched.slots[0].u1[:] = 1
    sched.slots[0].u2[:] = 0
    chk = check_broker_schedule(INST, sched)
    assert chk.ok
    np.testing.assert_allclose(chk.c2, C2)
    assert chk.x_cost[0] == pytest.approx(17.0 + 400.0)


def test_from_placement_fills_v_tiers_and_x():
    for d in (SLOT1, SLOT2, SLOT3):
        built = BrokerDecision.from_placement(INST, d.y, d.s, d.q, d.g)
        np.testing.assert_array_equal(built.v, d.v)
        np.testing.assert_allclose(built.x, d.x)
    assert BrokerDecision.from_placement(INST, SLOT3.y, SLOT3.s, SLOT3.q, SLOT3.g).u1[0, 0] == 1
    built = [BrokerDecision.from_placement(INST, d.y, d.s, d.q, d.g) for d in (SLOT1, SLOT2, SLOT3)]
    assert check_broker_schedule(INST, built).total_cost == pytest.approx(TOTAL)


# -- one mutation per rule -------------------------------------------------------------------------------


def _set(slot: int, name: str, idx, value):
    def mutate(sched: BrokerSchedule):
        getattr(sched.slots[slot - 1], name)[idx] = value
    return mutate


def _move(slot: int, name: str, src, dst):
    def mutate(sched: BrokerSchedule):
        arr = getattr(sched.slots[slot - 1], name)
        arr[dst] += arr[src]
        arr[src] = 0
    return mutate


MUTATIONS = [
    # DC 1's 5 GB stays in DC 1, where job 0 has no worker
    ("(8a) worker capacity", _move(1, "q", (0, 1, 0), (0, 1, 1)),
     "slot 1, job 0, DC 1: data in 5 > P_i y = 10 * 0 = 0", 5.0),
    ("(8b) data conservation", _set(1, "q", (0, 0, 0), 20.0),
     "slot 1, job 0, DC 0: sum_r' q = 20 != D = 25", 5.0),
    ("(8c) first-tier price", _set(1, "x", (0, 0), 8.0),
     "slot 1, DC 0, gpu: u1 = 0, x = 8 < a h = 3 * 3 = 9", 1.0),
    ("(8d) second-tier price", _set(3, "x", (0, 0), 15.0),
     "slot 3, DC 0, gpu: u2 = 0, x = 15 < b h + e = 2 * 6 + 4 = 16", 1.0),
    ("(8e) one tier", _set(1, "u1", (1, 1), 1), "slot 1, DC 1, cpu: u1 + u2 = 2", 1.0),
    ("(8f) one PS", _set(1, "s", (0, 1), 0), "slot 1, job 0: sum_r s = 0", 1.0),
    ("(8g) deployment indicator", _set(2, "v", (1, 1), 0), "slot 2, job 1, DC 1: y + s = 2 with v = 0", 2.0),
    ("(8i) connections from r", _set(2, "g", (0, 0, 1), 3), "slot 2, job 0, DC 0: sum_r' g = 3 != y = 2", 1.0),
    ("(8j) connections to the PS", _move(2, "g", (0, 0, 1), (0, 0, 0)),
     "slot 2, job 0, DC 1: sum_r g = 0 < s * ceil(sum D / P) = 1 * 2", 2.0),
    ("(8k) binary", _set(1, "v", (0, 0), 2), "slot 1, job 0, DC 0: v = 2", 1.0),
    ("inactive job", _set(1, "y", (1, 0), 1), "slot 1, job 1 (active 2 .. 3): non-zero y", 1.0),
]


@pytest.mark.parametrize(("label", "mutate", "where", "amount"), MUTATIONS, ids=[m[0] for m in MUTATIONS])
def test_each_rule_is_flagged_alone(label, mutate, where, amount):
    sched = schedule()
    mutate(sched)
    chk = check_broker_schedule(INST, sched)
    assert [v.constraint for v in chk.violations] == [label], chk.violations
    (v,) = chk.violations
    assert v.where == where and v.amount == pytest.approx(amount)
    assert not chk.ok
    with pytest.raises(AssertionError, match=label.replace("(", r"\(").replace(")", r"\)")):
        chk.raise_if_infeasible()


def test_8h_is_checked_when_z_is_given():
    sched = schedule()
    for d in sched.slots:
        d.z = np.zeros((2, 2), dtype=np.int64)
    sched.slots[0].z[0] = [1, 1]
    sched.slots[1].z[1, 1] = 1
    sched.slots[2].z[1, 0] = 1
    assert check_broker_schedule(INST, sched).ok  # the right z
    sched.slots[2].z[:] = 0  # job 1 enters DC 0 in slot 3 without z = 1
    chk = check_broker_schedule(INST, sched)
    assert [(v.constraint, v.where) for v in chk.violations] == [
        ("(8h) deployment cost", "slot 3, job 1, DC 0: z = 0 < v(t) - v(t-1) = 1 - 0")]
    # the cost does not trust z: C3 follows v
    assert chk.c3.tolist() == pytest.approx(C3)


def test_8k_integrality_non_negativity_and_finiteness():
    sched = schedule()
    sched.slots[0].y = sched.slots[0].y.astype(float)
    sched.slots[0].y[0, 0] = 2.5
    labels = check_broker_schedule(INST, sched).labels()
    assert labels[0] == "(8k) integrality" and "(8a) worker capacity" in labels
    sched = schedule()
    sched.slots[1].x[1, 0] = -1.0
    chk = check_broker_schedule(INST, sched)
    assert chk.violations[0].constraint == "(8k) non-negativity"
    assert chk.violations[0].where == "slot 2, DC 1, gpu: x = -1"
    sched = schedule()
    sched.slots[0].q[0, 0, 1] = math.nan
    chk = check_broker_schedule(INST, sched)
    assert chk.violations[0].constraint == "(8k) finite" and math.isfinite(chk.total_cost)


def test_fractional_decision_is_reported_not_rejected():
    d = copy.deepcopy(SLOT1)
    d.y = d.y.astype(float) * 1.0
    d.g = d.g.astype(float)
    assert check_broker_decision(INST, d, 1).ok  # float arrays holding whole numbers are fine
    d.s = np.array([[0.0, 0.5], [0.0, 0.0]])
    labels = check_broker_decision(INST, d, 1).labels()
    assert labels[:2] == ["(8k) integrality", "(8f) one PS"]


def test_tolerance_is_relative_for_large_volumes():
    d = copy.deepcopy(SLOT1)
    d.q[0, 0, 0] = 25.0 * (1 + 1e-9)
    assert check_broker_decision(INST, d, 1).ok
    d.q[0, 0, 0] = 25.0 * (1 + 1e-4)
    # DC 0 is also full (30 GB for 3 workers of 10 GB), so (8a) goes too
    assert check_broker_decision(INST, d, 1).labels() == ["(8a) worker capacity", "(8b) data conservation"]


def test_bad_shapes_and_slots_raise():
    with pytest.raises(ValueError, match=r"1 \.\. T = 3"):
        check_broker_decision(INST, SLOT1, 4)
    with pytest.raises(ValueError, match=r"prev_v has shape"):
        check_broker_decision(INST, SLOT1, 1, np.zeros(2))
    bad = copy.deepcopy(SLOT1)
    bad.q = np.zeros((2, 2))
    with pytest.raises(ValueError, match=r"slot 1: q has shape \(2, 2\); expected \(I, R, R\) = \(2, 2, 2\)"):
        check_broker_decision(INST, bad, 1)
    with pytest.raises(ValueError, match="at most T = 3"):
        check_broker_schedule(INST, [SLOT1] * 4)
    empty = check_broker_schedule(INST, [])
    assert empty.ok and empty.total_cost == 0.0


def test_schedule_json_round_trip_checks_the_same(tmp_path):
    sched = schedule()
    sched.slots[2].z = np.zeros((2, 2), dtype=np.int64)
    sched.slots[2].z[1, 0] = 1
    path = tmp_path / "sched.json"
    sched.to_json(path)
    back = BrokerSchedule.from_json(path.read_text())
    for name in ("y", "s", "q", "g", "v", "u1", "u2", "x"):
        np.testing.assert_array_equal(back.stack(name), sched.stack(name))
    assert back.slots[0].z is None and back.slots[2].z.tolist() == [[0, 0], [1, 0]]
    assert back.slots[0].y.dtype == np.int64 and back.slots[0].q.dtype == float
    assert check_broker_schedule(INST, back) == check_broker_schedule(INST, sched)
    data = sched.to_dict()
    assert data["kind"] == "broker-schedule" and (data["n_jobs"], data["n_dcs"], data["n_resources"]) == (2, 2, 2)
    assert data["slots"][0]["y"] == [[0, 0, 3]]
    with pytest.raises(ValueError, match="unknown decision field"):
        BrokerSchedule.from_dict({**data, "slots": [{"slot": 1, "w": []}]})
    with pytest.raises(ValueError, match="outside the shape"):
        BrokerSchedule.from_dict({**data, "slots": [{"slot": 1, "y": [[5, 0, 1]]}]})


# -- random instances against loops ---------------------------------------------------------------------


def local_placement(inst: BrokerInstance, t: int, prev_v) -> BrokerDecision:
    """Process data where it is (Sec. 6.3's Local), PS in the DC with most data, all connections to the PS."""
    n, r_n = inst.n_jobs, inst.n_dcs
    y = np.zeros((n, r_n), dtype=np.int64)
    s = np.zeros((n, r_n), dtype=np.int64)
    q = np.zeros((n, r_n, r_n))
    g = np.zeros((n, r_n, r_n), dtype=np.int64)
    data = inst.slot_data(t)
    for i in inst.active(t):
        for r in range(r_n):
            q[i, r, r] = data[i, r]
            y[i, r] = math.ceil(data[i, r] / inst.capacity[i] - 1e-9)
        ps = int(np.argmax(data[i]))
        s[i, ps] = 1
        g[i, :, ps] = y[i]
    return BrokerDecision.from_placement(inst, y, s, q, g)


def loop_costs(inst: BrokerInstance, decisions) -> np.ndarray:
    out = []
    prev = np.zeros((inst.n_jobs, inst.n_dcs))
    for t, d in enumerate(decisions, start=1):
        c = [0.0, 0.0, 0.0, 0.0]
        for r in range(inst.n_dcs):
            for k in range(inst.n_resources):
                h = sum(inst.worker_demand[i, k] * d.y[i, r] + inst.ps_demand[i, k] * d.s[i, r]
                        for i in inst.active(t))
                a, b, ell = inst.price_a[r, k], inst.price_b[r, k], inst.threshold[r, k]
                c[1] += a * h if h <= ell else b * h + a * ell - b * ell  # Eq. (2)
        for i in inst.active(t):
            for r in range(inst.n_dcs):
                c[2] += inst.deploy_cost[i] * max(d.v[i, r] - prev[i, r], 0)
                for r2 in range(inst.n_dcs):
                    c[0] += inst.transfer_cost[r, r2] * d.q[i, r, r2]
                    c[3] += inst.transfer_cost[r, r2] * inst.traffic[i] * d.g[i, r, r2]
        out.append(c)
        prev = d.v
    return np.array(out)


@pytest.mark.parametrize(("preset", "seed"), [("tiny", 0), ("tiny", 1), ("small", 2), ("small", 3)])
def test_local_placement_is_feasible_and_costs_match_loops(preset, seed):
    inst = broker_preset(preset, seed=seed)
    decisions, prev = [], None
    for t in range(1, inst.horizon + 1):
        decisions.append(local_placement(inst, t, prev))
        prev = decisions[-1].v
    chk = check_broker_schedule(inst, decisions)
    assert chk.ok, chk.violations[:3]
    loops = loop_costs(inst, decisions)
    np.testing.assert_allclose(np.column_stack([chk.c1, chk.c2, chk.c3, chk.c4]), loops, rtol=1e-12, atol=1e-9)
    assert chk.c1.sum() == 0.0  # Local moves no data
    np.testing.assert_allclose(chk.x_cost, chk.c2)
