"""The concurrent-open-shop LP bound: exact at convergence, below the true optimum."""

import itertools

import numpy as np
import pytest

from clusteropt.instances import ConcurrentOpenShopInstance, random_coflows
from clusteropt.models.coflow.bound import cos_lower_bound
from clusteropt.models.coflow.open_shop import build_coflow_milp, build_cos_milp
from clusteropt.solvers import solve


def tiny_cos(seed, release):
    rng = np.random.default_rng(seed)
    return ConcurrentOpenShopInstance(rng.integers(0, 4, (2, 4)), rng.integers(1, 4, 4).astype(float),
                                      rng.integers(0, 4, 4) if release else np.zeros(4, int))


@pytest.mark.parametrize("seed", range(8))
def test_no_parallel_inequality_is_violated_at_convergence(seed):
    cos = tiny_cos(seed, release=seed % 2 == 1)
    _bound, C, rowgen = cos_lower_bound(cos)
    assert rowgen.converged
    p = cos.processing
    for i in range(cos.n_machines):
        jobs = np.flatnonzero(p[i])
        for k in range(1, jobs.size + 1):
            for subset in itertools.combinations(jobs, k):
                s = np.array(subset)
                f = 0.5 * (float(p[i, s] @ p[i, s]) + float(p[i, s].sum()) ** 2)
                assert p[i, s] @ C[s] >= f - 1e-6 * max(1.0, f)
    assert (C >= cos.release + p.max(axis=0) - 1e-6).all()


@pytest.mark.parametrize("seed", range(6))
def test_lp_bound_never_beats_the_exact_cos_milp(seed):
    cos = tiny_cos(seed, release=seed % 2 == 0)
    bound, _, _ = cos_lower_bound(cos)
    assert bound <= solve(build_cos_milp(cos)).objective + 1e-6


@pytest.mark.parametrize("seed", range(4))
def test_lp_bound_never_beats_the_exact_coflow_milp(seed):
    inst = random_coflows(3, 2, max_units=2, release=seed % 2 == 0, weights="random", seed=seed)
    bound, _, _ = cos_lower_bound(inst)
    exact = solve(build_coflow_milp(inst), time_limit=60).objective
    assert bound <= exact + 1e-6


def test_single_machine_lp_is_smiths_rule():
    # one machine, no releases: the LP is exact and equals Smith's rule (w/p decreasing)
    p, w = np.array([3, 1, 2]), np.array([1.0, 4.0, 1.0])
    bound, _C, _ = cos_lower_bound(ConcurrentOpenShopInstance(p[None, :], w, np.zeros(3, int)))
    order = np.argsort(-w / p, kind="stable")
    smith = float(w[order] @ np.cumsum(p[order]))
    assert bound == pytest.approx(smith)


@pytest.mark.parametrize("seed", range(4))
def test_no_schedule_beats_the_exact_coflow_milp(seed):
    from clusteropt.algorithms.coflow.pipeline import POLICIES, run_coflow

    inst = random_coflows(3, 2, max_units=2, release=seed % 2 == 1, weights="random", seed=10 + seed)
    exact = solve(build_coflow_milp(inst), time_limit=60).objective
    for policy in POLICIES:
        for scheduler in ("greedy", "paper"):
            run = run_coflow(inst, policy, scheduler)
            assert run.verified and run.total_weighted_cct >= exact - 1e-6, (policy, scheduler)
