"""mlBroker rounding, paper 003: A_round (Alg. 2 / Alg. 3) and the Sec. 6.2 baselines IR and GR.

Bars: every output on random fractional inputs (relaxed (8a), (8b), (8f) hold) passes the
independent checker ``check_broker_decision`` and its reported costs equal the checker's; each
``ybar`` is floor or ceil of ``y~`` plus the workers the documented feasibility fix added (never
needed by A_round on valid input); ``E[ybar] >= y~`` (within 4 standard errors); Round1_y is the
generic pairwise rounding per DC, whose pre-round-up vector has ``y~`` as its mean; the PS
frequencies match ``s~`` within 4 sigma; integral input comes back unchanged; a seed reproduces;
an empty ``I_t`` gives an all-zero decision; the LP's status is checked.
"""

from __future__ import annotations

import logging
import math

import numpy as np
import pytest

from clusteropt.instances.broker import BrokerInstance, broker_preset
from clusteropt.rounding import (
    BROKER_ROUNDINGS,
    a_round,
    greedy_round,
    independent_round,
    pairwise_dependent_round,
    round1_y,
    round2_y,
    sample_ps,
)
from clusteropt.rounding.broker.placement import _solve_q
from clusteropt.solvers import NotOptimalError
from clusteropt.verify.broker import check_broker_decision

METHODS = sorted(BROKER_ROUNDINGS)
TOL = 1e-6


def fractional_input(inst: BrokerInstance, t: int, gen: np.random.Generator, *, slack=(0.0, 0.3), spread=0.5):
    """``y~, s~`` (I, R) satisfying the relaxed (8a), (8b), (8f) for the jobs active in t.

    ``y~_i`` is the D-proportional worker fraction ``D_i^r / P_i`` with a random share
    ``f <= spread`` of it moved to Dirichlet-random DCs, times ``1 + slack`` (slack 0: exactly
    ``sum_r P_i y~_i^r = sum_r D_i^r``); ``s~_i`` a Dirichlet distribution on a random subset of DCs.
    """
    data = inst.slot_data(t)
    n_jobs, n_dcs = data.shape
    base = data / inst.capacity[:, None]
    y = np.zeros((n_jobs, n_dcs))
    s = np.zeros((n_jobs, n_dcs))
    for i in inst.active(t):
        f = gen.uniform(0.0, spread)
        y[i] = base[i] * (1.0 - f) + f * base[i].sum() * gen.dirichlet(np.ones(n_dcs))
        y[i] *= 1.0 + gen.uniform(*slack)
        k = int(gen.integers(1, n_dcs + 1))
        idx = gen.choice(n_dcs, k, replace=False)
        s[i, idx] = gen.dirichlet(np.ones(k))
    return y, s


INSTANCES = {
    "tiny": [broker_preset("tiny", seed=s) for s in range(4)],
    "small": [broker_preset("small", seed=s) for s in range(3)],
    "paper": [broker_preset("paper", jobs=40, horizon=12, seed=s) for s in range(2)],
}


def _floor_ceil(y_frac: np.ndarray, tol: float = TOL):
    nearest = np.rint(y_frac)
    integral = np.abs(y_frac - nearest) <= tol
    return np.where(integral, nearest, np.floor(y_frac)), np.where(integral, nearest, np.ceil(y_frac))


# ---------------------------------------------------------------------------------------------
# feasibility on random inputs


@pytest.mark.parametrize("preset", sorted(INSTANCES))
@pytest.mark.parametrize("method", METHODS)
def test_random_inputs_feasible_and_floor_or_ceil(preset, method):
    fn = BROKER_ROUNDINGS[method]
    gen = np.random.default_rng(123)
    n_jobs = n_fixed = 0
    for inst in INSTANCES[preset]:
        prev = np.zeros((inst.n_jobs, inst.n_dcs))
        for t in range(1, inst.horizon + 1):
            slack = (0.0, 0.0) if t % 3 == 0 else (0.0, 0.3)  # every third slot: sum P y~ = sum D exactly
            y_frac, s_frac = fractional_input(inst, t, gen, slack=slack)
            d, info = fn(inst, t, y_frac, s_frac, prev, rng=gen, return_info=True)
            chk = check_broker_decision(inst, d, t, prev)
            assert chk.ok, (preset, method, t, [str(v) for v in chk.violations[:3]])
            totals = chk.cost_totals()
            for name in ("C1", "C2", "C3", "C4", "total"):
                assert info.costs[name] == pytest.approx(totals[name], rel=1e-9, abs=1e-9)
            assert info.input_short == 0
            jobs = info.jobs
            assert np.array_equal(jobs, inst.active(t))
            lo, hi = _floor_ceil(y_frac[jobs])
            cand = info.candidates
            assert ((cand >= lo) & (cand <= hi)).all()  # each candidate: floor or ceil (Alg. 3 lines 17, 20, 24)
            ybar = cand.max(axis=0)  # Alg. 2 line 5
            extra = d.y[jobs] - ybar
            assert (extra >= 0).all()
            assert np.array_equal(extra.sum(axis=1), info.added_workers)  # above ceil only by the fix
            assert (d.y[jobs].sum(axis=1) >= inst.required_workers(t)[jobs]).all()
            assert np.array_equal(d.s[jobs].argmax(axis=1), info.ps_dc)
            n_jobs += jobs.size
            n_fixed += info.jobs_fixed
            if method == "a_round":
                assert cand.shape[0] == inst.n_resources + 1
                assert info.workers_added == 0  # Lemma 1's argument: never needed on valid input
                assert info.candidate_short[-1] == 0  # Round2_y alone has >= N_i workers
            prev = d.v
    assert n_jobs > 0
    if method == "ir" and preset != "tiny":
        assert n_fixed > 0  # nearest rounding does drop below N_i; the fix is exercised


def test_broken_input_gets_the_feasibility_fix(caplog):
    inst = broker_preset("small", seed=5)
    t = 4
    y_frac, s_frac = fractional_input(inst, t, np.random.default_rng(0), slack=(0.0, 0.0))
    y_frac *= 0.5  # breaks the relaxed (8a)/(8b): half the capacity
    with caplog.at_level(logging.WARNING, logger="clusteropt.rounding.broker.placement"):
        d, info = a_round(inst, t, y_frac, s_frac, rng=1, return_info=True)
    assert check_broker_decision(inst, d, t).ok
    assert info.input_short == inst.active(t).size
    assert info.jobs_fixed > 0 and info.workers_added > 0
    assert any("breaks the relaxed (8a)/(8b)" in r.getMessage() for r in caplog.records)
    jobs = info.jobs
    assert np.array_equal(d.y[jobs].sum(axis=1),
                          np.maximum(inst.required_workers(t)[jobs], info.candidates.max(axis=0).sum(axis=1)))


def test_fix_covers_the_noise_snapping_edge():
    """``sum D / P`` just above an integer: snapping ``y~`` within tol drops the extra worker; the fix adds it."""
    inst = _two_dc_instance(data=[[[20.000005, 0.0]]])  # N = ceil(2.0000005) = 3
    d, info = a_round(inst, 1, [[2.0000005, 0.0]], [[1.0, 0.0]], rng=0, return_info=True)
    assert info.input_short == 0 and info.candidates.max(axis=0).tolist() == [[2, 0]]
    assert info.workers_added == 1 and d.y.sum() == 3
    assert check_broker_decision(inst, d, 1).ok
    d2, info2 = a_round(inst, 1, [[2.0000005, 0.0]], [[1.0, 0.0]], rng=0, tol=1e-9, return_info=True)
    assert info2.workers_added == 0 and d2.y.tolist() == [[3, 0]]  # a tighter tol rounds the fraction up


def _two_dc_instance(**over) -> BrokerInstance:
    """One job, data only in DC 0; DC 1 is cheaper to rent by far."""
    args = dict(horizon=1, price_a=[[10.0], [1.0]], price_b=[[9.0], [0.9]], threshold=[[100.0], [100.0]],
                transfer_cost=[[0, 0.01], [0.01, 0]], arrival=[1], last_slot=[1], data=[[[30.0, 0.0]]],
                capacity=[10.0], worker_demand=[[1.0]], ps_demand=[[0.0]], traffic=[0.0], deploy_cost=[0.0],
                resources=("gpu",))
    args.update(over)
    return BrokerInstance(**args)


def test_fix_adds_workers_where_the_marginal_cost_is_least():
    inst = _two_dc_instance()
    # N = 3; IR rounds y~ = [1.2, 1.3] (25 < 30: a broken input) to [1, 1]; one worker is missing
    d, info = independent_round(inst, 1, [[1.2, 1.3]], [[1.0, 0.0]], return_info=True)
    assert check_broker_decision(inst, d, 1).ok
    assert d.y.tolist() == [[1, 2]] and info.workers_added == 1  # the cheap DC 1 (10 * 1 vs 1 * 1 + 0.01 * 10)
    # a deployment cost tips it: DC 1 not yet deployed, DC 0 is
    inst2 = _two_dc_instance(deploy_cost=[50.0])
    d2, info2 = independent_round(inst2, 1, [[1.2, 0.4]], [[1.0, 0.0]], return_info=True)
    assert d2.y.tolist() == [[3, 0]] and info2.workers_added == 2
    assert check_broker_decision(inst2, d2, 1).ok


# ---------------------------------------------------------------------------------------------
# expectations and marginals


def test_expected_ybar_at_least_y_frac():
    inst = broker_preset("small", seed=2)
    t = 5
    y_frac, s_frac = fractional_input(inst, t, np.random.default_rng(7))
    jobs = inst.active(t)
    gen = np.random.default_rng(11)
    n = 1500
    total = np.zeros((jobs.size, inst.n_dcs))
    for _ in range(n):
        total += a_round(inst, t, y_frac, s_frac, rng=gen).y[jobs]
    mean = total / n
    # each entry is floor or floor + 1, so its standard deviation is at most 1/2
    assert (mean >= y_frac[jobs] - 4 * 0.5 / math.sqrt(n)).all()
    # and it is strictly above on average: the max of K + 1 roundings, each keeping the marginals
    assert mean.sum() > y_frac[jobs].sum()


def _replay_round1(y_col, w, seed):
    """Round1_y of one column through the generic function with the same draws, and its info."""
    return pairwise_dependent_round(y_col, w, np.random.default_rng(seed), tol=TOL, return_info=True)


def test_round1_y_is_the_generic_rounding_per_dc():
    gen = np.random.default_rng(3)
    y = gen.uniform(0, 3, (20, 1))
    w = gen.integers(1, 11, 20).astype(float)  # n_{i,vcpu} in 1 .. 10 (all positive)
    for seed in range(50):
        out = round1_y(y, w, rng=seed, tol=TOL)
        x, _ = _replay_round1(y[:, 0], w, seed)
        assert np.array_equal(out[:, 0], x)


def test_round1_y_marginals_before_the_round_up():
    """(P1) per rounding: the vector before Alg. 3 lines 23-25 has mean y~ (4 standard errors)."""
    gen = np.random.default_rng(4)
    y = gen.uniform(0, 3, 20)
    w = gen.integers(1, 11, 20).astype(float)
    n = 20000
    z = np.zeros((n, y.size))
    for seed in range(n):
        x, info = _replay_round1(y, w, seed)
        z[seed] = x
        if info.last_index is not None:
            z[seed, info.last_index] -= 1 - info.last_fraction
        weighted = float(x @ w - y @ w)
        assert -1e-6 <= weighted < w.max() + 1e-6  # (P2) up to the round-up
    se = z.std(axis=0) / math.sqrt(n) + 1e-12
    assert (np.abs(z.mean(axis=0) - y) <= 4 * se).all()


def test_round1_y_zero_weights_are_independent_with_their_marginal():
    y = np.array([[0.3, 1.7], [0.6, 0.25], [0.5, 2.0], [0.1, 0.9]])
    w = np.array([0.0, 2.0, 0.0, 3.0])  # jobs 0, 2 use none of this resource (n_{i,k} = 0)
    n = 20000
    gen = np.random.default_rng(5)
    draws = np.stack([round1_y(y, w, gen) for _ in range(n)])
    lo, hi = np.floor(y), np.ceil(y)
    assert ((draws >= lo) & (draws <= hi)).all()
    mean = draws.mean(axis=0)
    p = y - np.floor(y)
    sigma = np.sqrt(p * (1 - p) / n) + 1e-12
    assert (np.abs(mean[[0, 2]] - y[[0, 2]]) <= 4 * sigma[[0, 2]]).all()  # exact marginals
    assert (mean[[1, 3]] >= y[[1, 3]] - 4 * sigma[[1, 3]]).all()  # >= with the final round-up
    assert (draws[:, 2, 1] == 2).all()  # integral entries stay
    with pytest.raises(ValueError, match="weights"):
        round1_y(y, [1.0, -1.0, 1.0, 1.0])


def test_round2_y_sums_to_the_ceiling():
    gen = np.random.default_rng(6)
    for _ in range(200):
        y = gen.uniform(0, 2, (3, 15)) * (gen.random((3, 15)) < 0.4)
        out = round2_y(y, gen)
        assert np.array_equal(out.sum(axis=1), np.ceil(y.sum(axis=1) - 1e-9).astype(int))
        assert ((out >= np.floor(y)) & (out <= np.ceil(y))).all()


def test_ps_frequencies_match_s_frac():
    s = np.array([[0.1, 0.0, 0.6, 0.3], [0.25, 0.25, 0.25, 0.25], [0.0, 0.0, 1.0, 0.0], [0.97, 0.0, 0.0, 0.03]])
    n = 20000
    gen = np.random.default_rng(8)
    picks = np.stack([sample_ps(s, gen) for _ in range(n)])
    for j in range(s.shape[0]):
        freq = np.bincount(picks[:, j], minlength=4) / n
        sigma = np.sqrt(s[j] * (1 - s[j]) / n)
        assert (np.abs(freq - s[j]) <= 4 * sigma + 1e-12).all(), (j, freq)
        assert (freq[s[j] == 0] == 0).all()


def test_ps_frequencies_through_a_round_and_ir():
    inst = broker_preset("tiny", seed=3)
    t = int(next(t for t in range(1, inst.horizon + 1) if inst.active(t).size >= 2))
    y_frac, _ = fractional_input(inst, t, np.random.default_rng(0))
    jobs = inst.active(t)
    s_frac = np.zeros_like(y_frac)
    s_frac[jobs] = [0.2, 0.5, 0.3]
    n = 600
    for fn in (a_round, independent_round):
        gen = np.random.default_rng(9)
        counts = np.zeros((jobs.size, inst.n_dcs))
        for _ in range(n):
            counts += fn(inst, t, y_frac, s_frac, rng=gen).s[jobs]
        sigma = np.sqrt(s_frac[jobs] * (1 - s_frac[jobs]) / n)
        assert (np.abs(counts / n - s_frac[jobs]) <= 4 * sigma).all(), fn.__name__


# ---------------------------------------------------------------------------------------------
# special inputs


@pytest.mark.parametrize("method", METHODS)
def test_integral_input_is_returned_unchanged(method):
    inst = broker_preset("small", seed=1)
    gen = np.random.default_rng(10)
    for t in (2, 5, 8):
        jobs = inst.active(t)
        y_frac, s_frac = fractional_input(inst, t, gen)
        y_int = np.ceil(y_frac)  # integral and >= N_i in total
        s_int = np.zeros_like(s_frac)
        s_int[jobs, s_frac[jobs].argmax(axis=1)] = 1.0
        noisy_y = y_int + gen.uniform(-1e-8, 1e-8, y_int.shape) * (y_int > 0)  # solver noise within tol
        noisy_y[jobs[0], np.flatnonzero(y_int[jobs[0]] == 0)[:1]] = -1e-9
        noisy_s = s_int + 1e-9 * (s_int == 0)
        d = BROKER_ROUNDINGS[method](inst, t, noisy_y, noisy_s, rng=gen)
        assert np.array_equal(d.y[jobs], y_int[jobs])
        assert np.array_equal(d.s[jobs], s_int[jobs])
        assert check_broker_decision(inst, d, t).ok
        # rounding the result again, with it as v(t - 1), deploys nothing new
        d2, info = BROKER_ROUNDINGS[method](inst, t, d.y, d.s, d.v, rng=gen, return_info=True)
        assert np.array_equal(d2.y, d.y) and np.array_equal(d2.s, d.s)
        assert info.costs["C3"] == 0.0 and not d2.z.any()


@pytest.mark.parametrize("method", METHODS)
def test_reproducible_with_a_seed(method):
    inst = broker_preset("paper", jobs=40, horizon=12, seed=0)
    t = 10
    y_frac, s_frac = fractional_input(inst, t, np.random.default_rng(1))
    fn = BROKER_ROUNDINGS[method]
    d1 = fn(inst, t, y_frac, s_frac, rng=42)
    d2 = fn(inst, t, y_frac, s_frac, rng=np.random.default_rng(42))
    for name in ("y", "s", "q", "g", "v", "u1", "u2", "x", "z"):
        assert np.array_equal(getattr(d1, name), getattr(d2, name)), name
    others = [fn(inst, t, y_frac, s_frac, rng=seed) for seed in range(5)]
    differ = any(not np.array_equal(o.y, d1.y) or not np.array_equal(o.s, d1.s) for o in others)
    assert differ == (method != "gr")  # GR is deterministic


@pytest.mark.parametrize("method", METHODS)
def test_empty_active_set_gives_an_all_zero_decision(method):
    inst = broker_preset("paper", jobs=40, seed=0)
    t = 1
    assert inst.active(t).size == 0
    zeros = np.zeros((inst.n_jobs, inst.n_dcs))
    d, info = BROKER_ROUNDINGS[method](inst, t, zeros, zeros, rng=0, return_info=True)
    for name in ("y", "s", "q", "g", "v", "u1", "x", "z"):
        assert not np.asarray(getattr(d, name)).any(), name
    assert (d.u2 == 1).all()  # (8e): one tier, the first at h = 0
    assert check_broker_decision(inst, d, t).ok
    assert info.lp is None and info.costs["total"] == 0.0 and info.jobs.size == 0
    d_rows = BROKER_ROUNDINGS[method](inst, t, np.zeros((0, inst.n_dcs)), np.zeros((0, inst.n_dcs)), rng=0)
    assert not d_rows.y.any()


def test_active_rows_input_equals_all_rows_input():
    inst = broker_preset("small", seed=0)
    t = 6
    y_frac, s_frac = fractional_input(inst, t, np.random.default_rng(2))
    jobs = inst.active(t)
    garbage = y_frac.copy()
    garbage[np.setdiff1d(np.arange(inst.n_jobs), jobs)] = 7.5  # rows of inactive jobs are ignored
    d1 = a_round(inst, t, garbage, s_frac, rng=3)
    d2 = a_round(inst, t, y_frac[jobs], s_frac[jobs], rng=3)
    assert np.array_equal(d1.y, d2.y) and np.array_equal(d1.s, d2.s) and np.allclose(d1.q, d2.q)


def test_baselines_are_what_sec_6_2_says():
    inst = _two_dc_instance(data=[[[30.0, 20.0]]])  # N = 5
    y = [[2.5, 2.6]]
    s = [[0.4, 0.6]]
    gr = greedy_round(inst, 1, y, s)
    assert gr.y.tolist() == [[3, 3]] and gr.s.tolist() == [[0, 1]]  # round up; arg max s
    ir = independent_round(inst, 1, y, s, rng=0)
    assert ir.y.tolist() == [[3, 3]]  # nearest, halves up: 2.5 -> 3, 2.6 -> 3
    ir2, info = independent_round(inst, 1, [[2.2, 2.1]], s, rng=0, return_info=True)
    assert info.candidates.tolist() == [[[2, 2]]] and info.workers_added == 1  # 4 < N = 5: the fix
    assert ir2.y.sum() == 5
    tie = greedy_round(inst, 1, y, [[0.5, 0.5]])
    assert tie.s.tolist() == [[1, 0]]  # ties: the lowest DC


# ---------------------------------------------------------------------------------------------
# validation and the LP


def test_noise_and_validation():
    inst = _two_dc_instance(data=[[[30.0, 20.0]]])
    d = a_round(inst, 1, [[5.0, -1e-8]], [[1.0 + 1e-7, -1e-9]], rng=0, tol=TOL)
    assert d.s.tolist() == [[1, 0]] and check_broker_decision(inst, d, 1).ok
    with pytest.raises(ValueError, match=r"y_frac\[job 0, DC 1\] = -0.01"):
        a_round(inst, 1, [[2.5, -0.01]], [[1.0, 0.0]])
    with pytest.raises(ValueError, match=r"s_frac\[job 0\] sums to 0.9"):
        a_round(inst, 1, [[2.5, 2.5]], [[0.5, 0.4]])
    with pytest.raises(ValueError, match=r"s_frac\[job 0, DC 0\] = nan"):
        a_round(inst, 1, [[2.5, 2.5]], [[np.nan, 1.0]])
    with pytest.raises(ValueError, match="expected"):
        a_round(inst, 1, [[2.5, 2.5, 0.0]], [[1.0, 0.0]])
    with pytest.raises(ValueError, match="t = 2"):
        a_round(inst, 2, [[2.5, 2.5]], [[1.0, 0.0]])
    with pytest.raises(ValueError, match="builder"):
        a_round(inst, 1, [[2.5, 2.5]], [[1.0, 0.0]], builder="nope")
    with pytest.raises(ValueError, match="prev_v"):
        a_round(inst, 1, [[2.5, 2.5]], [[1.0, 0.0]], np.zeros(3))
    with pytest.raises(ValueError, match=r"prev_v\[0, 1\] = 0.5; expected 0 or 1"):
        a_round(inst, 1, [[2.5, 2.5]], [[1.0, 0.0]], [[1.0, 0.5]])


def test_matrix_and_pyomo_lp_agree():
    inst = broker_preset("paper", jobs=40, horizon=12, seed=1)
    gen = np.random.default_rng(12)
    for t in (6, 11):
        y_frac, s_frac = fractional_input(inst, t, gen)
        d1, i1 = a_round(inst, t, y_frac, s_frac, rng=5, return_info=True)
        d2, i2 = a_round(inst, t, y_frac, s_frac, rng=5, builder="pyomo", return_info=True)
        assert np.array_equal(d1.y, d2.y)
        assert i1.lp.backend == "matrix" and i2.lp.backend == "pyomo"
        assert i1.costs["C1"] == pytest.approx(i2.costs["C1"], rel=1e-7, abs=1e-9)
        assert i1.lp.objective == pytest.approx(i2.lp.objective, rel=1e-7, abs=1e-9)
        assert check_broker_decision(inst, d2, t).ok
    with pytest.raises(ValueError, match="HiGHS only"):
        a_round(inst, 6, y_frac, s_frac, builder="matrix", solver="glpk")


def test_a_failing_lp_raises():
    inst = _two_dc_instance(data=[[[30.0, 20.0]]])
    jobs = inst.active(1)
    with pytest.raises(NotOptimalError, match="INFEASIBLE"):
        _solve_q(inst, 1, jobs, np.array([[1, 1]]), "highs", "matrix")  # 2 workers for 50 / 10 = 5


# ---------------------------------------------------------------------------------------------
# variant="paper": Alg. 2 as written, without the package's repair


def test_paper_variant_refuses_what_the_package_repairs():
    from clusteropt.rounding.broker.placement import RoundingShortError

    inst = _two_dc_instance(data=[[[20.000005, 0.0]]])  # the snapping edge: N = 3, the candidates give 2
    with pytest.raises(RoundingShortError, match=r"job 0 with 2 workers; \(8a\)/\(8b\) need N_i\(t\) = 3"):
        a_round(inst, 1, [[2.0000005, 0.0]], [[1.0, 0.0]], rng=0, variant="paper")
    d, info = a_round(inst, 1, [[2.0000005, 0.0]], [[1.0, 0.0]], rng=0, return_info=True)
    assert info.workers_added == 1 and info.variant == "package" and d.y.sum() == 3
    with pytest.raises(RoundingShortError, match="ir as the paper writes it"):
        independent_round(inst, 1, [[1.2, 1.3]], [[1.0, 0.0]], variant="paper")


@pytest.mark.parametrize("method", METHODS)
def test_paper_variant_is_the_package_variant_when_nothing_is_short(method):
    inst = INSTANCES["small"][1]
    gen = np.random.default_rng(7)
    for t in range(1, inst.horizon + 1):
        y_frac, s_frac = fractional_input(inst, t, gen)
        a, ia = BROKER_ROUNDINGS[method](inst, t, y_frac, s_frac, rng=t, return_info=True)
        if ia.workers_added:
            continue  # IR: nearest rounding left a job short; the paper variant would raise
        b, ib = BROKER_ROUNDINGS[method](inst, t, y_frac, s_frac, rng=t, return_info=True, variant="paper")
        assert ib.variant == "paper" and np.array_equal(a.y, b.y) and np.array_equal(a.s, b.s)
        assert np.allclose(a.q, b.q)


def test_unknown_variant_is_named():
    inst = _two_dc_instance()
    with pytest.raises(ValueError, match="variant = 'literal'; expected one of package, paper"):
        a_round(inst, 1, [[3.0, 0.0]], [[1.0, 0.0]], variant="literal")
