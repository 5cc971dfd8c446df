"""Alg. 2 (LP-RS-MDE) of paper 000: LP ring selection (Lemma 7), randomized embedding, Theorem 8.

Bars: Lemma 7's 1/Gamma bound; LP relaxation >= ILP optimum >= every rounded allocation, each
verified by :func:`check_gadget_allocation`; the draws have the decomposition's marginals and are
independent across jobs; :func:`round_safe` never exceeds a capacity; results are reproducible.
"""

from __future__ import annotations

import dataclasses
import math
from types import SimpleNamespace

import numpy as np
import pyomo.environ as pyo
import pytest

from clusteropt.decisions.gadget import Mapping, Ring, SlotAllocation
from clusteropt.instances.gadget.instance import fat_tree_cluster, gadget_preset, random_gadget
from clusteropt.models.gadget.embedding import build_embedding_lp, decompose_embedding
from clusteropt.models.gadget.gvne import build_gvne, slot_problem, worker_bound
from clusteropt.rounding.gadget import (
    PaperRounding,
    draw_mappings,
    lp_rs_mde,
    round_paper,
    round_safe,
    select_from_chi,
    select_rings,
    slot_gain,
    theorem8_constants,
)
from clusteropt.solvers import solve
from clusteropt.verify import check_gadget_allocation

TIMING_KEYS = {"select_s", "build_s", "solve_s", "decompose_s", "round_s", "seconds"}  # at least these
VALUE_KEYS = {"objective", "drawn_value", "lp_value", "selected_value", "augmented_value", "jobs"}


def _tight(seed: int, n_jobs: int = 6, utility: str = "sqrt"):
    """A small tree where GPUs and bandwidth both bind (as in tests/models/test_gadget.py)."""
    cl = fat_tree_cluster(5, n_racks=2, gpus=(1, 2, 4), server_bw=(5, 10), rack_bw=(8, 14), seed=seed)
    return random_gadget(n_jobs, workers=(2, 5), cluster=cl, horizon=5, arrivals="zero", bandwidth=(3, 7),
                         utility=utility, seed=seed)


def _gain(problem, alloc) -> float:
    """Eq. (12) recomputed from the utility itself: mu(z_prev + workers) - mu(z_prev)."""
    inst = problem.inst
    w = np.asarray(alloc.workers).sum(axis=1)
    return float((inst.utility_of(problem.z_prev + w) - inst.utility_of(problem.z_prev)).sum())


def _assert_ok(problem, alloc) -> None:
    check = check_gadget_allocation(problem.inst, alloc, problem.t, used=problem.z_prev)
    assert check.ok, check.violations[:3]
    inactive = np.setdiff1d(np.arange(problem.inst.n_jobs), problem.jobs)
    assert not np.asarray(alloc.workers)[inactive].any()  # only active jobs (Alg. 1 line 3)


@dataclasses.dataclass
class Slot:
    seed: int
    p: object  # SlotProblem
    lp: float  # LP relaxation of (12)
    kappa: dict
    m: object  # the solved augmented LP
    dec: dict  # its decomposition


@pytest.fixture(scope="module")
def tight_slots():
    """Slot problems of tight instances with an augmented LP and its decomposition (solved once):
    ring sizes from Lemma 7 (what Alg. 2 does) or kmax (so that some x is fractional).
    """
    out = []
    for seed, z, sizes in ((0, 0.0, "lemma7"), (1, 0.0, "lemma7"), (3, 2.0, "lemma7"), (5, 0.0, "lemma7"),
                           (0, 0.0, "kmax"), (5, 0.0, "kmax")):
        inst = _tight(seed, utility="log" if seed == 1 else "sqrt")
        p = slot_problem(inst, 1, np.full(inst.n_jobs, z))
        sel, _ = select_rings(p)
        kappa = sel.kappa if sizes == "lemma7" else dict(zip(p.jobs.tolist(), p.kmax.tolist(), strict=True))
        m = build_embedding_lp(p, kappa)
        solve(m)
        out.append(Slot(seed, p, sel.lp_value, kappa, m, decompose_embedding(p, m)))
    xs = [pyo.value(s.m.x[i]) for s in out for i in s.m.I]
    assert any(1e-6 < x < 1 - 1e-6 for x in xs), "no fractional x: rejections are never drawn"
    return out


# -- Lemma 7 ---------------------------------------------------------------------------------------


def _p(*pis):
    return SimpleNamespace(jobs=np.arange(len(pis)), pi=tuple(np.asarray(v, dtype=float) for v in pis))


def test_select_from_chi_unit_cases():
    # the largest pi * chi over the sizes with chi > 0 (size 3 has the largest pi but chi = 0)
    kappa, kept = select_from_chi(_p([1.0, 2.0, 9.0]), {(0, 1): 0.3, (0, 2): 0.4, (0, 3): 0.0})
    assert kappa == {0: 2} and kept == pytest.approx(0.8)
    # ties go to the larger size: 2 * 0.5 == 4 * 0.25
    kappa, kept = select_from_chi(_p([1.0, 2.0, 4.0]), {(0, 1): 0.0, (0, 2): 0.5, (0, 3): 0.25})
    assert kappa == {0: 3} and kept == pytest.approx(1.0)
    # underflowed gains (all pi = 0): every size ties, the largest with chi > 0 wins
    kappa, kept = select_from_chi(_p([0.0, 0.0, 0.0, 0.0]), {(0, 1): 0.2, (0, 3): 0.3, (0, 4): 0.0})
    assert kappa == {0: 3} and kept == 0.0
    # all-zero chi (rho = 0), missing keys and chi below the tolerance: no ring
    kappa, kept = select_from_chi(_p([1.0, 2.0], [3.0], [5.0]), {(0, 1): 0.0, (0, 2): 0.0, (2, 1): 1e-9})
    assert kappa == {} and kept == 0.0
    # several jobs: kept value is the sum of the chosen pi * chi
    kappa, kept = select_from_chi(_p([1.0, 3.0], [2.0]), {(0, 1): 0.5, (0, 2): 0.5, (1, 1): 0.25})
    assert kappa == {0: 2, 1: 1} and kept == pytest.approx(1.5 + 0.5)
    # job ids are the problem's, not positions
    p = SimpleNamespace(jobs=np.array([7, 3]), pi=(np.array([1.0]), np.array([1.0, 5.0])))
    assert select_from_chi(p, {(3, 2): 0.5, (7, 1): 1.0}) == ({7: 1, 3: 2}, pytest.approx(3.5))


@pytest.mark.parametrize("seed", range(4))
def test_lemma7_keeps_a_gamma_fraction(seed):
    inst = _tight(seed, utility="log" if seed % 2 else "sqrt")
    z = np.full(inst.n_jobs, float(seed))
    p = slot_problem(inst, 1, z)
    sel, res = select_rings(p)
    lp = solve(build_gvne(p, relax=True)).objective
    assert sel.lp_value == pytest.approx(lp, rel=1e-7, abs=1e-7)
    assert res.objective == pytest.approx(sel.lp_value)
    gamma = max(math.ceil(q - 1e-9) for q in worker_bound(inst, z, p.jobs))
    assert sel.selected_value >= sel.lp_value / gamma - 1e-6
    assert sel.selected_value <= sel.lp_value + 1e-6
    ilp = solve(build_gvne(p)).objective
    assert sel.selected_value >= ilp / gamma - 1e-6  # Lemma 7 as stated: against the optimum
    kmax = dict(zip(p.jobs.tolist(), p.kmax.tolist(), strict=True))
    assert sel.kappa and all(1 <= k <= kmax[i] for i, k in sel.kappa.items())


# -- the order LP >= ILP >= rounded, all verified ----------------------------------------------------


def test_lp_ge_ilp_ge_every_rounding(tight_slots):
    n_alloc = 0
    for slot in tight_slots:
        seed, p, lp, dec = slot.seed, slot.p, slot.lp, slot.dec
        ilp = solve(build_gvne(p)).objective
        assert lp >= ilp - 1e-6
        allocs = []
        for fill in (True, False):
            r = round_safe(p, dec, rng=seed, fill=fill)
            allocs.append(r.allocation)
            assert r.value == pytest.approx(slot_gain(p, r.allocation))
            assert r.value >= r.drawn_value - 1e-9
            if not fill:
                assert r.value == pytest.approx(r.drawn_value)
        alloc, info = lp_rs_mde(p, rng=seed)
        allocs.append(alloc)
        assert info["lp_value"] == pytest.approx(lp, rel=1e-7)
        for a in allocs:
            _assert_ok(p, a)
            g = slot_gain(p, a)
            assert g == pytest.approx(_gain(p, a), rel=1e-9, abs=1e-9)
            assert g <= ilp + 1e-6, (seed, g, ilp)
            n_alloc += 1
    assert n_alloc == 3 * len(tight_slots)


def test_slot_gain_refuses_more_workers_than_q():
    inst = _tight(0)
    p = slot_problem(inst, 1)
    j, i = 0, int(p.jobs[0])
    a = SlotAllocation.empty(inst.n_jobs, inst.cluster.n_servers)
    a.workers[i, 0] = int(p.kmax[j]) + 1
    with pytest.raises(ValueError, match=f"job {i}"):
        slot_gain(p, a)
    assert slot_gain(p, SlotAllocation.empty(inst.n_jobs, inst.cluster.n_servers)) == 0.0


# -- draw_mappings: marginals and independence ---------------------------------------------------


def _mp(job, workers):
    return Mapping(job, tuple(workers), None)


def test_draw_mappings_marginals_and_independence():
    a, b, c = _mp(0, [(1, 2)]), _mp(0, [(2, 2)]), _mp(1, [(3, 1)])
    dec = {0: [(0.2, a), (0.5, b)], 1: [(0.3, c)], 2: []}
    n = 20000
    rng = np.random.default_rng(12345)
    counts = {"a": 0, "b": 0, "none0": 0, "c": 0, "none1": 0}
    joint = {}
    for _ in range(n):
        got = draw_mappings(dec, rng)
        assert set(got) <= {0, 1}  # job 2 has nothing to draw
        assert all(mp.job == i for i, mp in got.items())
        g0 = "a" if got.get(0) is a else "b" if got.get(0) is b else "none0"
        assert got.get(0) in (a, b, None)
        g1 = "c" if got.get(1) is c else "none1"
        counts[g0] += 1
        counts[g1] += 1
        joint[g0, g1] = joint.get((g0, g1), 0) + 1
    prob = {"a": 0.2, "b": 0.5, "none0": 0.3, "c": 0.3, "none1": 0.7}

    def within(count, p):
        se = math.sqrt(p * (1 - p) / n)
        return abs(count / n - p) <= 4 * se

    for key, p in prob.items():
        assert within(counts[key], p), (key, counts[key] / n, p)
    for (g0, g1), cnt in joint.items():  # jobs drawn independently: joint ~ product
        assert within(cnt, prob[g0] * prob[g1]), (g0, g1, cnt / n)
    assert len(joint) == 6


def test_draw_mappings_seeds_and_generators():
    dec = {0: [(0.5, _mp(0, [(0, 1)]))], 1: [(0.5, _mp(1, [(1, 1)]))]}
    assert draw_mappings(dec, rng=3) == draw_mappings(dec, rng=3)
    assert draw_mappings(dec, rng=3) == draw_mappings(dec, rng=np.random.default_rng(3))
    g = np.random.default_rng(0)
    draws = [sorted(draw_mappings(dec, g)) for _ in range(50)]
    assert len({tuple(d) for d in draws}) > 1  # a Generator advances between calls
    assert draw_mappings({0: [(1.0, _mp(0, [(0, 1)]))]}, rng=1) == {0: _mp(0, [(0, 1)])}
    assert draw_mappings({}, rng=1) == {}


# -- round_paper, Theorem 8 ---------------------------------------------------------------------------


def _ratios(p, chosen):
    inst = p.inst
    cl = inst.cluster
    node = np.zeros(cl.capacity.shape)
    link = np.zeros(cl.n_links)
    for i, mp in chosen.items():
        for s, k in mp.workers:
            node[s] += k * inst.per_worker[i]
        if mp.ring is not None:
            for path in mp.ring.paths:
                for e in path:
                    link[e] += inst.bandwidth[i]
    return node / cl.capacity, link / cl.bandwidth


def test_round_paper_result_is_consistent(tight_slots):
    accepted = 0
    strict = []
    for slot in tight_slots:
        seed, p, dec = slot.seed, slot.p, slot.dec
        lp = float(pyo.value(slot.m.eq12))
        pos = {int(i): j for j, i in enumerate(p.jobs.tolist())}
        for s in range(3):
            r = round_paper(p, dec, lp, rng=100 * seed + s)
            assert isinstance(r, PaperRounding)
            assert 1 <= r.rounds <= 100
            assert r.alpha == pytest.approx(1 / 3)
            for i, mp in r.chosen.items():
                assert any(mp == q for _, q in dec[i])
            assert r.value == pytest.approx(sum(float(p.pi[pos[i]][mp.size - 1]) for i, mp in r.chosen.items()))
            nr, lr = _ratios(p, r.chosen)
            np.testing.assert_allclose(r.node_ratio, nr, atol=1e-12)
            np.testing.assert_allclose(r.link_ratio, lr, atol=1e-12)
            assert r.violations == int((nr > 1 + 1e-9).sum() + (lr > 1 + 1e-9).sum())
            if r.accepted:
                accepted += 1
                assert r.value >= r.alpha * lp - 1e-9
                assert (r.node_ratio <= r.beta[None, :] + 1e-9).all()
                assert (r.link_ratio <= r.gamma + 1e-9).all()
            else:
                assert r.rounds == 100
        r = round_paper(p, dec, lp, rng=seed, rounds=1, alpha=10.0)
        assert not r.accepted and r.rounds == 1 and r.alpha == 10.0
        for s in range(4):  # epsilon = 0: beta = gamma = 1, so only a draw within capacity is accepted
            r = round_paper(p, dec, lp, rng=s, epsilon=0)
            np.testing.assert_array_equal(r.beta, 1.0)
            assert r.gamma == 1.0
            assert r.accepted == (r.violations == 0 and r.value >= lp / 3 - 1e-9)
            if r.accepted:
                strict.append(r.rounds)
            else:
                assert r.rounds == 100
    assert accepted >= 1
    assert strict and max(strict) > 1, "epsilon = 0 never needed a second draw"
    with pytest.raises(ValueError, match="rounds"):
        round_paper(p, dec, lp, rounds=0)


def test_theorem8_constants(tight_slots):
    for slot in tight_slots:
        p, dec = slot.p, slot.dec
        cl = p.inst.cluster
        beta, gamma, eps = theorem8_constants(p, dec)
        assert np.shape(beta) == (len(cl.resources),)
        assert (np.asarray(beta) >= 1).all() and gamma >= 1 and eps >= 0
        beta0, gamma0, eps0 = theorem8_constants(p, dec, epsilon=0)
        assert eps0 == 0 and gamma0 == 1.0
        np.testing.assert_array_equal(beta0, np.ones(len(cl.resources)))
        # the formula of the docstring, recomputed from the decomposition
        delta_v = np.zeros((cl.n_servers, len(cl.resources)))
        delta_e = np.zeros(cl.n_links)
        for i, maps in dec.items():
            if not maps:
                continue
            pw, b = p.inst.per_worker[i], float(p.inst.bandwidth[i])
            cmax_v = np.max([mp.node_load(pw, cl.n_servers) for _, mp in maps], axis=0)
            cmax_e = np.max([mp.link_load(b, cl.n_links) for _, mp in maps], axis=0)
            delta_v += np.where(cmax_v > 0, (cmax_v / pw) ** 2, 0.0)
            delta_e += np.where(cmax_e > 0, (cmax_e / b) ** 2, 0.0)
        e = 0.25
        beta_e, gamma_e, _ = theorem8_constants(p, dec, epsilon=e)
        np.testing.assert_allclose(beta_e, 1 + e * np.sqrt(2 * delta_v.max(axis=0) * math.log(cl.n_servers)))
        assert gamma_e == pytest.approx(1 + e * math.sqrt(2 * delta_e.max() * math.log(cl.n_links)))
    assert theorem8_constants(p, {}, epsilon=None)[1] == 1.0  # nothing drawn: no slack needed


# -- round_safe: never violates ------------------------------------------------------------------------


def test_round_safe_never_violates(tight_slots):
    for slot in tight_slots:
        seed, p, dec = slot.seed, slot.p, slot.dec
        for s in range(12):
            for fill in (True, False):
                r = round_safe(p, dec, rng=1000 * seed + s, fill=fill, samples=2, passes=2)
                _assert_ok(p, r.allocation)
                assert r.samples == 2
                if fill:
                    continue
                w = np.asarray(r.allocation.workers)
                for i in np.flatnonzero(w.sum(axis=1)).tolist():  # only drawn mappings of the decomposition
                    got = (tuple((int(sv), int(k)) for sv, k in enumerate(w[i]) if k), r.allocation.rings.get(i))
                    assert any(got == (mp.workers, mp.ring) for _, mp in dec.get(i, [])), (i, got)
                assert set(r.allocation.rings) <= set(np.flatnonzero(w.sum(axis=1)).tolist())


def test_round_safe_refuses_what_does_not_fit():
    inst = _tight(0)
    cl = inst.cluster
    p = slot_problem(inst, 1)
    i, j = int(p.jobs[0]), int(p.jobs[1])
    paths = cl.paths()
    s0, s1 = 0, cl.n_servers - 1  # different racks: the ring crosses the core
    ring = Ring((s0, s1), (tuple(paths[s0, s1]), tuple(paths[s1, s0])))
    twice = Ring((s0, s1, s0), (tuple(paths[s0, s1]), tuple(paths[s1, s0]), ()))
    too_big = Mapping(i, ((s0, int(cl.capacity[s0, 0]) + 1),), None)
    invalid = Mapping(j, ((s0, 1), (s1, 1)), twice)
    assert not invalid.valid
    fat = dataclasses.replace(inst, bandwidth=np.full(inst.n_jobs, 1e6))
    pf = slot_problem(fat, 1)
    for prob, dec in ((p, {i: [(1.0, too_big)], j: [(1.0, invalid)]}),
                      (pf, {i: [(1.0, Mapping(i, ((s0, 1), (s1, 1)), ring))]})):
        for s in range(3):
            r = round_safe(prob, dec, rng=s, fill=False)
            assert not np.asarray(r.allocation.workers).any() and r.value == 0.0
            _assert_ok(prob, r.allocation)


def test_round_safe_bad_arguments(tight_slots):
    p, dec = tight_slots[0].p, tight_slots[0].dec
    for kw in ({"samples": 0}, {"passes": -1}, {"samples": -3}):
        with pytest.raises(ValueError, match="samples"):
            round_safe(p, dec, rng=0, **kw)
    r = round_safe(p, dec, rng=0, passes=0, samples=1)  # the smallest legal call
    _assert_ok(p, r.allocation)


def test_round_safe_empty_decomposition_fills_greedily(tight_slots):
    p = tight_slots[0].p
    r = round_safe(p, {}, rng=0, fill=False)
    assert r.value == 0.0 and not np.asarray(r.allocation.workers).any()
    r = round_safe(p, {}, rng=0)
    _assert_ok(p, r.allocation)
    assert r.drawn_value == 0.0 and r.value == pytest.approx(slot_gain(p, r.allocation)) and r.value > 0


# -- lp_rs_mde -----------------------------------------------------------------------------------------


def test_lp_rs_mde_info_and_objective(tight_slots):
    for slot in tight_slots[:4]:  # the Lemma 7 ones (the others are the same slots)
        seed, p, kappa = slot.seed, slot.p, slot.kappa
        sel, _ = select_rings(p)
        assert sel.kappa == kappa
        for fill in (True, False):
            alloc, info = lp_rs_mde(p, rng=seed, fill=fill)
            _assert_ok(p, alloc)
            assert TIMING_KEYS | VALUE_KEYS <= set(info)
            assert all(v >= 0 for k, v in info.items() if k.endswith("_s") or k == "seconds")
            assert info["seconds"] >= info["select_s"] + info["round_s"] - 1e-9
            assert info["jobs"] == p.jobs.size
            assert info["objective"] == pytest.approx(slot_gain(p, alloc))
            assert info["objective"] >= info["drawn_value"] - 1e-9
            assert info["objective"] <= info["lp_value"] + 1e-6
            assert info["selected_value"] == pytest.approx(sel.selected_value, rel=1e-7)
            assert info["augmented_value"] == pytest.approx(float(pyo.value(slot.m.eq12)), rel=1e-7)
            assert info["augmented_value"] <= sum(
                float(p.pi[j][kappa[int(i)] - 1]) for j, i in enumerate(p.jobs.tolist()) if int(i) in kappa) + 1e-6
            if not fill:
                assert info["objective"] == pytest.approx(info["drawn_value"])


def test_lp_rs_mde_empty_slots():
    inst = gadget_preset("small", jobs=4, seed=3, utility="sqrt")
    empty = SlotAllocation.empty(inst.n_jobs, inst.cluster.n_servers)
    done = slot_problem(inst, inst.horizon, inst.budget.astype(float))  # every budget used
    assert done.jobs.size == 0
    problems = [done]
    late = dataclasses.replace(inst, arrival=np.full(inst.n_jobs, 2))  # nobody has arrived at t = 1
    problems.append(slot_problem(late, 1))
    for p in problems:
        assert p.jobs.size == 0
        alloc, info = lp_rs_mde(p, rng=0)
        np.testing.assert_array_equal(alloc.workers, empty.workers)
        assert alloc.rings == {} and info["jobs"] == 0
        _assert_ok(p, alloc)
        assert slot_gain(p, alloc) == 0.0


def test_lp_rs_mde_when_nothing_gains():
    """Sigmoid utilities far below their inflection: every pi underflows to 0; still a verified allocation."""
    inst = _tight(2, utility="sigmoid")
    inst = dataclasses.replace(inst, utility_params=np.tile([10.0, 1.0, 3000.0], (inst.n_jobs, 1)))
    assert (inst.zeta * inst.max_workers < 2600).all()  # zeta * workers stays far below the inflection
    p = slot_problem(inst, 1)
    scale = float(inst.utility_params[:, 0].max())
    assert p.jobs.size and all(float(np.max(pi)) < 1e-200 * scale for pi in p.pi)
    for fill in (True, False):
        alloc, info = lp_rs_mde(p, rng=0, fill=fill)
        _assert_ok(p, alloc)
        assert info["objective"] == pytest.approx(slot_gain(p, alloc), abs=1e-300)
        assert info["objective"] < 1e-200 * scale
        if fill:  # zero-gain jobs still run (the greedy fill): they must, to ever gain
            assert np.asarray(alloc.workers).any()


# -- reproducibility -------------------------------------------------------------------------------------


def _same(a: SlotAllocation, b: SlotAllocation) -> bool:
    return np.array_equal(a.workers, b.workers) and a.rings == b.rings


def test_same_seed_same_result(tight_slots):
    for slot in (tight_slots[0], tight_slots[-1]):
        seed, p, m, dec = slot.seed, slot.p, slot.m, slot.dec
        a1, i1 = lp_rs_mde(p, rng=seed + 7)
        a2, i2 = lp_rs_mde(p, rng=seed + 7)
        assert _same(a1, a2) and i1["objective"] == i2["objective"]
        a3, _ = lp_rs_mde(p, rng=np.random.default_rng(seed + 7))
        assert _same(a1, a3)
        assert _same(round_safe(p, dec, rng=5).allocation, round_safe(p, dec, rng=5).allocation)
        lp = float(pyo.value(m.eq12))
        r1, r2 = round_paper(p, dec, lp, rng=9), round_paper(p, dec, lp, rng=9)
        assert r1.chosen == r2.chosen and r1.rounds == r2.rounds


# -- rounding="paper" in lp_rs_mde (issue 19) ---------------------------------------------------------


def _capacity_violations(p, alloc) -> int:
    check = check_gadget_allocation(p.inst, alloc, p.t, used=p.z_prev)
    assert {v.constraint for v in check.violations} <= {"(4) server capacity", "(8)/(19) link bandwidth"}
    return check.n_violations


def test_lp_rs_mde_paper_rounding_reports_its_overload(tight_slots):
    seen = 0
    for slot in tight_slots[:4]:
        p = slot.p
        for s in range(4):
            nofill, info = lp_rs_mde(p, rng=s, rounding="paper", fill=False)
            filled, info_f = lp_rs_mde(p, rng=s, rounding="paper", fill=True)
            for alloc, inf in ((nofill, info), (filled, info_f)):
                assert inf["rounding"] == "paper" and {"accepted", "draws", "beta", "gamma", "epsilon"} <= set(inf)
                assert inf["capacity_violations"] == _capacity_violations(p, alloc)  # the checker agrees
                assert inf["objective"] == pytest.approx(slot_gain(p, alloc))
                assert 1 <= inf["draws"] <= 100 and inf["invalid_dropped"] == 0  # tree: valid mappings
            # the same draw; the fill adds workers only where capacity is left, so it overloads nothing more
            assert info_f["capacity_violations"] == info["capacity_violations"]
            assert info_f["max_load_ratio"] == pytest.approx(info["max_load_ratio"])
            assert info_f["objective"] >= info["objective"] - 1e-9 and info["fill_gain"] == 0.0
            seen += info["capacity_violations"] > 0
            _, safe = lp_rs_mde(p, rng=s)
            assert safe["rounding"] == "safe" and safe["capacity_violations"] == 0 and safe["max_load_ratio"] <= 1
    assert seen, "the paper rounding never overloaded: the test shows nothing"
    with pytest.raises(ValueError, match="rounding"):
        lp_rs_mde(tight_slots[0].p, rounding="paperish")


def test_overload_and_load_ratios_match_round_paper(tight_slots):
    from clusteropt.rounding.gadget import load_ratios, mappings_allocation, overload

    for slot in tight_slots:
        p, dec = slot.p, slot.dec
        r = round_paper(p, dec, float(pyo.value(slot.m.eq12)), rng=slot.seed)
        alloc = mappings_allocation(p.inst, r.chosen)
        nr, lr = load_ratios(p.inst, alloc)
        np.testing.assert_allclose(nr, r.node_ratio, atol=1e-12)
        np.testing.assert_allclose(lr, r.link_ratio, atol=1e-12)
        count, worst = overload(p.inst, alloc)
        assert count == r.violations == _capacity_violations(p, alloc)
        assert worst == pytest.approx(max(r.node_ratio.max(initial=0), r.link_ratio.max(initial=0)))
        assert np.isfinite(r.epsilon) and r.epsilon >= 0
