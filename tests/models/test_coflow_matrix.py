"""The concurrent-open-shop LP's row generation on one live HiGHS model (issue 22) is the Pyomo loop's LP.

Checked: the starting rows are the compiled Pyomo model of ``build_cos_lp`` row by row; on random
concurrent-open-shop and coflow instances (with and without releases, purging, several cuts per
machine) both routes converge to the same bound, and the matrix route's point violates no parallel
inequality over any subset (brute force); a stopped loop reports a lower bound; purging drops cuts
without moving the optimum; bad options are refused.
"""

from __future__ import annotations

import numpy as np
import pytest
from pyomo.repn.plugins.standard_form import LinearStandardFormCompiler

from clusteropt.models.coflow.bound import cos_lower_bound
from clusteropt.models.coflow.matrix import cos_lower_bound_matrix, cos_start_rows
from clusteropt.models.coflow.open_shop import build_cos_lp, cos_data, separate_parallel_inequalities
from tests.models.test_coflow import random_coflow, random_cos, trace_sized_cos, violated_subsets

REL = 1e-7


@pytest.mark.parametrize("initial", ["singletons+full", "full", "none"])
@pytest.mark.parametrize("seed", range(3))
def test_start_rows_are_the_compiled_pyomo_model(seed, initial):
    cos = random_cos(np.random.default_rng(500 + seed), 4, 7, max_release=3)
    A, lower = cos_start_rows(cos_data(cos), initial)
    model = build_cos_lp(cos, initial=initial)  # held: the columns' names need their model alive
    repn = LinearStandardFormCompiler().write(model, mixed_form=True, set_sense=None)
    assert [v.name for v in repn.columns] == [f"C[{j}]" for j in range(cos.n_jobs)]
    # Pyomo writes a >= row as (row, -1) with its right-hand side; the same rows in the same order
    assert [mult for _, mult in repn.rows] == [-1] * lower.size
    np.testing.assert_allclose(np.asarray(repn.rhs, dtype=float), lower, rtol=0, atol=1e-12)
    np.testing.assert_allclose(repn.A.toarray(), A.toarray(), rtol=0, atol=1e-12)


@pytest.mark.parametrize(("per_machine", "purge_after"), [(1, 6), (5, None), (2, 1)])
@pytest.mark.parametrize("seed", range(4))
def test_both_routes_reach_the_same_lp_optimum(seed, per_machine, purge_after):
    rng = np.random.default_rng(600 + seed)
    cos = random_cos(rng, 3, 8, max_release=4 * (seed % 2))
    m = cos_lower_bound(cos, builder="matrix", per_machine=per_machine, purge_after=purge_after)
    p = cos_lower_bound(cos, builder="pyomo", per_machine=per_machine, purge_after=purge_after)
    assert m[2].converged and p[2].converged and m[2].result.backend == "matrix"
    assert m[0] == pytest.approx(p[0], rel=REL)
    bound, C, rg = m
    assert bound == pytest.approx(float(cos.weight @ C), rel=REL)
    assert not violated_subsets(cos_data(cos).loads, C)
    assert np.all(C >= cos_data(cos).release_bound() - 1e-6)
    assert rg.n_cuts >= rg.n_rows and len(rg.cuts_per_round) == rg.rounds - 1


@pytest.mark.parametrize("seed", range(3))
def test_coflows_and_the_default_route(seed):
    inst = random_coflow(np.random.default_rng(700 + seed), 3, 3, 7, max_release=3 * (seed % 2))
    auto = cos_lower_bound(inst)
    assert auto[2].result.backend == "matrix"  # HiGHS, persistent: the live model
    assert auto[0] == pytest.approx(cos_lower_bound(inst, builder="pyomo")[0], rel=REL)
    assert cos_lower_bound(inst, persistent=False)[2].result.backend != "matrix"


def test_stopped_loop_is_a_lower_bound_and_purging_keeps_the_optimum():
    cos = trace_sized_cos(n_machines=60, n_jobs=120)
    full = cos_lower_bound_matrix(cos)
    one = cos_lower_bound_matrix(cos, max_rounds=1)
    assert full[2].converged and one[2].status == "max_rounds" and "lower bound" in one[2].message
    assert one[0] <= full[0] + 1e-9 and one[0] == pytest.approx(cos_lower_bound(cos, builder="pyomo",
                                                                                 max_rounds=1)[0], rel=REL)
    keep = cos_lower_bound_matrix(cos, purge_after=None)
    eager = cos_lower_bound_matrix(cos, purge_after=1)
    assert sum(eager[2].removed_per_round) > 0 and sum(keep[2].removed_per_round) == 0
    assert eager[2].n_rows == eager[2].n_cuts - sum(eager[2].removed_per_round)
    for other in (keep, eager):
        assert other[2].converged and other[0] == pytest.approx(full[0], rel=REL)
    assert separate_parallel_inequalities(cos, full[1]).n_cuts == 0


def test_bad_options_are_refused():
    cos = random_cos(np.random.default_rng(1), 2, 4)
    with pytest.raises(ValueError, match="builder = 'numpy'"):
        cos_lower_bound(cos, builder="numpy")
    with pytest.raises(ValueError, match="builder = 'matrix' keeps a HiGHS model"):
        cos_lower_bound(cos, builder="matrix", solver="scip")
    for kwargs, match in (({"tol": -1.0}, "tol"), ({"max_rounds": 0}, "max_rounds"),
                          ({"time_limit": 0.0}, "time_limit"), ({"purge_after": 0}, "purge_after"),
                          ({"initial": "singletons"}, "initial")):
        with pytest.raises(ValueError, match=match):
            cos_lower_bound_matrix(cos, **kwargs)
