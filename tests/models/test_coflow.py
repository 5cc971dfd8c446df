"""Paper 001's concurrent-open-shop LP (row generation), its separation, and the exact MILPs.

Checks, all on seeded random instances built directly with the instance constructors or on
hand instances whose optimum is worked out in the comments:

* row generation converges, and then *no* parallel inequality over *any* subset is violated
  (brute force over all subsets, <= 8 jobs);
* LP bound <= exact optimum (time-indexed MILP), for concurrent open shop and coflows, with and
  without release times; single-machine closed forms (the LP is exact there);
* the separation finds the known violated set of a hand example and the most violated subset
  found by brute force;
* the 526 x 300 size of the paper's Facebook trace converges (times printed, not asserted).
"""

from __future__ import annotations

import itertools
import time

import numpy as np
import pyomo.environ as pyo
import pytest

from clusteropt.instances.coflow.instance import CoflowInstance, ConcurrentOpenShopInstance
from clusteropt.models.coflow.bound import cos_lower_bound
from clusteropt.models.coflow.open_shop import (
    CosData,
    build_coflow_milp,
    build_cos_lp,
    build_cos_milp,
    cos_data,
    full_set_rows,
    parallel_cut_rows,
    parallel_rhs,
    separate_parallel_inequalities,
)
from clusteropt.models.registry import get_model
from clusteropt.solvers import solve

REL = 1e-6


# ---------------------------------------------------------------------------------------------
# instances


def random_cos(rng, n_machines, n_jobs, *, density=0.6, max_p=4, max_release=0, weights=True):
    p = rng.integers(1, max_p + 1, size=(n_machines, n_jobs)) * (rng.random((n_machines, n_jobs)) < density)
    empty = ~p.any(axis=0)
    p[rng.integers(0, n_machines, size=int(empty.sum())), np.flatnonzero(empty)] = 1  # every job has work
    w = rng.integers(1, 6, n_jobs).astype(float) if weights else np.ones(n_jobs)
    r = rng.integers(0, max_release + 1, n_jobs)
    return ConcurrentOpenShopInstance(p, w, r)


def random_coflow(rng, n_in, n_out, n_coflows, *, flows=3, max_units=3, max_release=0):
    rows = []
    for j in range(n_coflows):
        k = int(rng.integers(1, flows + 1))
        pairs = {(int(rng.integers(n_in)), int(rng.integers(n_out))) for _ in range(k)}
        rows += [(j, a, b, int(rng.integers(1, max_units + 1))) for a, b in sorted(pairs)]
    c, a, b, u = map(list, zip(*rows))
    return CoflowInstance(n_in, n_out, c, a, b, u, rng.integers(1, 5, n_coflows).astype(float),
                          rng.integers(0, max_release + 1, n_coflows))


def exact(model) -> float:
    return solve(model, "highs", mip_gap=0.0).objective


def violated_subsets(loads: np.ndarray, C: np.ndarray, rel: float = 1e-6):
    """Every (machine, subset) whose parallel inequality ``C`` violates by more than ``rel * f``."""
    n_m, n = loads.shape
    masks = np.array(list(itertools.product([0, 1], repeat=n)), dtype=bool)[1:]  # (2^n - 1, n)
    out = []
    for i in range(n_m):
        L = loads[i] * masks  # (2^n - 1, n)
        f = 0.5 * ((L * L).sum(axis=1) + L.sum(axis=1) ** 2)
        lhs = L @ C
        bad = np.flatnonzero(f - lhs > rel * np.maximum(f, 1.0))
        out += [(i, tuple(np.flatnonzero(masks[k] & (loads[i] > 0)).tolist())) for k in bad]
    return out


# ---------------------------------------------------------------------------------------------
# the LP and its row generation


def test_lp_components_cite_the_slides():
    cos = ConcurrentOpenShopInstance([[1, 3], [2, 0]], [1.0, 2.0], [0, 1])
    m = build_cos_lp(cos)
    # every variable, parameter, set, constraint and objective has a doc, in every builder
    models = (m, build_cos_lp(cos, release_rows="all"), build_cos_milp(cos), build_coflow_milp(cos.to_coflow()))
    for model in models:
        for comp in model.component_objects((pyo.Var, pyo.Param, pyo.Constraint, pyo.Objective, pyo.Set)):
            assert comp.doc, (model.name, comp.name)
    assert "slides' LP" in m.release.doc and "r_j + L_ij" in m.release.doc
    assert "parallel constraint" in m.parallel_full.doc and "f_i(S)" in m.parallel_full.doc
    assert "B8" in m.rowgen_cuts.doc
    assert "C_j" in m.C.doc
    assert isinstance(m.cos_data, CosData)
    # machine 1 has one job: its full set is a singleton, implied by the release rows
    assert list(m.parallel_full.keys()) == [0]
    assert [pyo.value(m.release[j].lower) for j in range(2)] == [2.0, 1 + 3.0]


def test_single_machine_order_sums_equal_f():
    """The slot convention: back-to-back completions p1, p1 + p2, ... give sum p C = f(S)."""
    rng = np.random.default_rng(1)
    for _ in range(20):
        p = rng.integers(1, 10, rng.integers(1, 7))
        order = rng.permutation(p.size)
        completion = np.cumsum(p[order])
        assert float(p[order] @ completion) == pytest.approx(parallel_rhs(p))


def test_single_machine_w_equals_p_closed_form():
    # with w_j = p_j, sum p_j C_j is the same for every order: f(J) = (sum p^2 + (sum p)^2) / 2
    p = np.array([3, 1, 4, 1, 5, 9, 2, 6])
    cos = ConcurrentOpenShopInstance(p[None, :], p.astype(float), np.zeros(p.size, dtype=int))
    want = 0.5 * (np.sum(p**2) + np.sum(p) ** 2)
    assert want == (173 + 31**2) / 2 == 567
    bound, _, rg = cos_lower_bound(cos)
    assert rg.converged and bound == pytest.approx(want, rel=REL)
    small = ConcurrentOpenShopInstance([[3, 1, 2]], [3.0, 1.0, 2.0], [0, 0, 0])
    assert exact(build_cos_milp(small)) == pytest.approx((14 + 36) / 2)


@pytest.mark.parametrize("seed", range(4))
def test_single_machine_lp_is_exact_smith_rule(seed):
    """With r = 0 on one machine the parallel inequalities describe the scheduling polyhedron
    (Queyranne): the LP optimum is Smith's rule (order by w/p decreasing)."""
    rng = np.random.default_rng(seed)
    n = 7
    p = rng.integers(1, 9, n)
    w = rng.integers(1, 9, n).astype(float) + rng.random(n)  # no ties in w/p
    order = np.argsort(-w / p, kind="stable")
    smith = float(w[order] @ np.cumsum(p[order]))
    cos = ConcurrentOpenShopInstance(p[None, :], w, np.zeros(n, dtype=int))
    bound, _, rg = cos_lower_bound(cos)
    assert rg.converged and bound == pytest.approx(smith, rel=REL)
    small = ConcurrentOpenShopInstance(p[None, :4], w[:4], np.zeros(4, dtype=int))
    order = np.argsort(-w[:4] / p[:4], kind="stable")
    assert exact(build_cos_milp(small)) == pytest.approx(float(w[:4][order] @ np.cumsum(p[:4][order])))


@pytest.mark.parametrize("release", [0, 6], ids=["r=0", "release"])
@pytest.mark.parametrize("seed", range(5))
def test_row_generation_converges_no_subset_violated(seed, release):
    rng = np.random.default_rng(100 + seed)
    cos = random_cos(rng, 3, 8, max_release=release)
    bound, C, rg = cos_lower_bound(cos, per_machine=1)
    assert rg.converged and rg.status == "converged"
    assert bound == pytest.approx(float(cos.weight @ C), rel=REL)
    assert not violated_subsets(cos_data(cos).loads, C)
    assert np.all(C >= cos_data(cos).release_bound() - 1e-6)
    # the objective never fell and the starting model alone gives a weaker bound
    start = solve(build_cos_lp(cos)).objective
    assert start <= bound + 1e-6


@pytest.mark.parametrize("seed", range(3))
def test_row_generation_converges_on_coflows(seed):
    rng = np.random.default_rng(200 + seed)
    inst = random_coflow(rng, 3, 3, 7, max_release=3 * (seed % 2))
    bound, C, rg = cos_lower_bound(inst)
    assert rg.converged
    assert not violated_subsets(inst.loads().T.astype(float), C)
    # the coflow LP is the LP of its concurrent-open-shop relaxation
    assert cos_lower_bound(inst.to_concurrent_open_shop())[0] == pytest.approx(bound, rel=REL)


@pytest.mark.parametrize("seed", range(3))
def test_persistent_and_rebuild_give_the_same_bound(seed):
    cos = random_cos(np.random.default_rng(300 + seed), 4, 8, max_release=4)
    a = cos_lower_bound(cos, persistent=True)
    b = cos_lower_bound(cos, persistent=False)
    c = cos_lower_bound(cos, purge_after=None, per_machine=5)
    assert a[2].converged and b[2].converged and c[2].converged
    assert a[0] == pytest.approx(b[0], rel=REL) and a[0] == pytest.approx(c[0], rel=REL)


def test_max_rounds_one_is_a_lower_bound_not_the_optimum():
    cos = random_cos(np.random.default_rng(7), 4, 8)
    full, _, rg_full = cos_lower_bound(cos)
    one, _, rg_one = cos_lower_bound(cos, max_rounds=1)
    assert rg_full.converged and rg_full.rounds > 1
    assert rg_one.status == "max_rounds" and not rg_one.converged
    assert one <= full + 1e-9
    assert "lower bound" in rg_one.message
    assert rg_one.model_build_seconds > 0


def test_starting_rows_do_not_change_the_optimum():
    cos = random_cos(np.random.default_rng(11), 3, 8, max_release=5)
    values = [cos_lower_bound(cos, initial=init)[0] for init in ("singletons+full", "full", "none")]
    assert values == pytest.approx([values[0]] * 3, rel=REL)
    a, b = build_cos_lp(cos), build_cos_lp(cos, release_rows="all")
    assert len(b.release) == np.count_nonzero(cos.processing) and len(b.release_any) == cos.n_jobs
    assert solve(a).objective == pytest.approx(solve(b).objective, rel=REL)
    with pytest.raises(ValueError, match="initial"):
        build_cos_lp(cos, initial="singletons")
    with pytest.raises(ValueError, match="release_rows"):
        build_cos_lp(cos, release_rows="some")


def test_jobs_without_load_complete_at_release():
    cos = ConcurrentOpenShopInstance([[2, 0, 1]], [1.0, 5.0, 1.0], [0, 4, 0])
    bound, C, rg = cos_lower_bound(cos)
    assert rg.converged and C[1] == pytest.approx(4.0)
    assert exact(build_cos_milp(cos)) == pytest.approx(bound)  # 1 * 3 + 5 * 4 + 1 * 1


# ---------------------------------------------------------------------------------------------
# LP <= exact optimum


@pytest.mark.parametrize("release", [0, 3], ids=["r=0", "release"])
@pytest.mark.parametrize("seed", range(4))
def test_lp_bound_below_cos_optimum(seed, release):
    cos = random_cos(np.random.default_rng(400 + seed), 2, 4, max_p=3, max_release=release)
    bound, _, rg = cos_lower_bound(cos)
    opt = exact(build_cos_milp(cos))
    assert rg.converged
    assert bound <= opt + 1e-6
    assert solve(build_cos_milp(cos, relax=True)).objective <= opt + 1e-6


@pytest.mark.parametrize("release", [0, 3], ids=["r=0", "release"])
@pytest.mark.parametrize("seed", range(4))
def test_lp_bound_below_coflow_optimum(seed, release):
    inst = random_coflow(np.random.default_rng(500 + seed), 2, 2, 4, flows=2, max_units=2, max_release=release)
    bound, _, rg = cos_lower_bound(inst)
    coflow_opt = exact(build_coflow_milp(inst))
    cos_opt = exact(build_cos_milp(inst.to_concurrent_open_shop()))
    assert rg.converged
    assert bound <= cos_opt + 1e-6 <= coflow_opt + 2e-6  # LP <= COS relaxation <= coflow


@pytest.mark.parametrize("seed", range(3))
def test_diagonal_coflow_is_concurrent_open_shop(seed):
    cos = random_cos(np.random.default_rng(600 + seed), 2, 4, max_p=2, max_release=2)
    assert exact(build_coflow_milp(cos.to_coflow())) == pytest.approx(exact(build_cos_milp(cos)))


# ---------------------------------------------------------------------------------------------
# exact MILPs on hand instances


def test_cos_milp_one_machine_smith():
    # p = (2, 1), w = (1, 3): job 1 first (w/p = 3 > 1/2): C = (3, 1), 3 + 3 = 6; else 2 + 9 = 11
    cos = ConcurrentOpenShopInstance([[2, 1]], [1.0, 3.0], [0, 0])
    assert exact(build_cos_milp(cos)) == pytest.approx(6.0)
    assert cos_lower_bound(cos)[0] == pytest.approx(6.0)  # one machine, r = 0: the LP is exact


def test_cos_milp_two_machines():
    # p = [[1, 2], [2, 1]], unit weights: the same job first on both machines gives C = (2, 3) or
    # (3, 2): 5; different jobs first give C = (3, 3): 6
    cos = ConcurrentOpenShopInstance([[1, 2], [2, 1]], [1.0, 1.0], [0, 0])
    assert exact(build_cos_milp(cos)) == pytest.approx(5.0)
    # LP: per machine C_0 + 2 C_1 >= f = (1 + 4 + 9) / 2 = 7 and 2 C_0 + C_1 >= 7; summed,
    # C_0 + C_1 >= 14/3, reached at C = (7/3, 7/3) (>= 2 = r + max L): 14/3 < 5
    assert cos_lower_bound(cos)[0] == pytest.approx(14 / 3)


def test_cos_milp_release_needs_preemption():
    # p = (2, 1), w = (1, 3), r = (0, 1): job 1 may use slots 2.. ; job 0 in slots 1 and 3, job 1 in
    # slot 2: C = (3, 2), 3 + 6 = 9; without preemption the best is 2 + 3 * 3 = 11
    cos = ConcurrentOpenShopInstance([[2, 1]], [1.0, 3.0], [0, 1])
    m = build_cos_milp(cos)
    assert exact(m) == pytest.approx(9.0)
    x = {k: round(pyo.value(v)) for k, v in m.x.items()}
    assert x[0, 1, 2] == 1 and x[0, 0, 1] == 1 and x[0, 0, 3] == 1
    assert all(t > 1 for (i, j, t) in m.x if j == 1)  # no variable before the release
    assert cos_lower_bound(cos)[0] <= 9.0 + 1e-6


def test_coflow_milp_hand_instances():
    # one coflow, demand [[1, 1], [1, 1]]: two matchings, C = 2
    one = CoflowInstance(2, 2, [0, 0, 0, 0], [0, 0, 1, 1], [0, 1, 0, 1], [1, 1, 1, 1], [1.0], [0])
    assert exact(build_coflow_milp(one)) == pytest.approx(2.0)
    assert cos_lower_bound(one)[0] == pytest.approx(2.0)
    # two unit flows sharing input 0, weights (1, 2): the heavier first, 2 * 1 + 1 * 2 = 4
    two = CoflowInstance(1, 2, [0, 1], [0, 0], [0, 1], [1, 1], [1.0, 2.0], [0, 0])
    assert exact(build_coflow_milp(two)) == pytest.approx(4.0)
    # release: coflow 0 moves 2 units 0 -> 0 (r = 0), coflow 1 one unit 0 -> 1 (r = 1), w = (1, 3):
    # slots 1, 3 for coflow 0 and 2 for coflow 1: 3 + 3 * 2 = 9
    rel = CoflowInstance(1, 2, [0, 1], [0, 0], [0, 1], [2, 1], [1.0, 3.0], [0, 1])
    assert exact(build_coflow_milp(rel)) == pytest.approx(9.0)
    # ports are not shared: both complete at once, 1 + 1
    apart = CoflowInstance(2, 2, [0, 1], [0, 1], [0, 1], [1, 1], [1.0, 1.0], [0, 0])
    assert exact(build_coflow_milp(apart)) == pytest.approx(2.0)


def test_coflow_milp_matching_per_slot():
    inst = random_coflow(np.random.default_rng(9), 2, 2, 3, flows=3, max_units=2)
    m = build_coflow_milp(inst)
    exact(m)
    used = [(f, t) for (f, t), v in m.x.items() if pyo.value(v) > 0.5]
    for t in {t for _, t in used}:
        flows = [f for f, s in used if s == t]
        assert len({int(inst.input[f]) for f in flows}) == len(flows)
        assert len({int(inst.output[f]) for f in flows}) == len(flows)
    for f in range(inst.n_flows):
        assert sum(1 for g, _ in used if g == f) == inst.units[f]


def test_milp_horizon_checks():
    cos = ConcurrentOpenShopInstance([[2, 1]], [1.0, 3.0], [0, 1])
    assert len(build_cos_milp(cos).T) == 1 + 3  # max r + max machine load
    assert exact(build_cos_milp(cos, horizon=10)) == pytest.approx(9.0)
    with pytest.raises(ValueError, match="horizon"):
        build_cos_milp(cos, horizon=1)
    with pytest.raises(ValueError, match="horizon"):
        build_cos_milp(cos, horizon=2.5)
    with pytest.raises(TypeError, match="ConcurrentOpenShopInstance"):
        build_cos_milp(cos.to_coflow())
    inst = cos.to_coflow()
    assert len(build_coflow_milp(inst).T) == 1 + 3  # max r + total units
    with pytest.raises(ValueError, match="horizon"):
        build_coflow_milp(inst, horizon=1)
    with pytest.raises(TypeError, match="CoflowInstance"):
        build_coflow_milp(cos)


# ---------------------------------------------------------------------------------------------
# separation


def test_separation_hand_example():
    # machine 0: loads (2, 1, 3); C* = (2, 3, 3): satisfies C_j >= L_j.
    # {0}: 4 >= 4 ok; level set {0, 1, 2} (1 and 2 tie at 3): 4 + 3 + 9 = 16 < f = (4 + 1 + 9 + 36)/2 = 25
    # also {0, 1} as a prefix inside the tie is not a level set, so it is not offered
    loads = np.array([[2.0, 1.0, 3.0]])
    cuts = separate_parallel_inequalities(loads, [2.0, 3.0, 3.0], per_machine=None)
    assert cuts.n_cuts == 1
    assert cuts.job_set(0).tolist() == [0, 1, 2]
    assert cuts.rhs[0] == 25.0 and cuts.lhs[0] == 16.0 and cuts.load[0] == 6.0
    assert cuts.violation[0] == 9.0 and cuts.relative[0] == pytest.approx(9 / 25)
    # machine 1 sees the same order but only jobs 1 and 2: {1, 2} with loads (4, 4) at C = (3, 3):
    # 24 < f = (16 + 16 + 64) / 2 = 48; machine 2 has no load and no cut
    loads = np.array([[2.0, 1.0, 3.0], [0.0, 4.0, 4.0], [0.0, 0.0, 0.0]])
    cuts = separate_parallel_inequalities(loads, [2.0, 3.0, 3.0])
    assert cuts.machine.tolist() == [0, 1]
    assert cuts.job_set(1).tolist() == [1, 2] and cuts.coef[cuts.ptr[1]:cuts.ptr[2]].tolist() == [4.0, 4.0]
    assert cuts.rhs[1] == 48.0 and cuts.lhs[1] == 24.0


def test_separation_satisfied_point_gives_nothing():
    # a permutation schedule on each machine satisfies every parallel inequality (tight on prefixes)
    loads = np.array([[2.0, 1.0, 3.0]])
    assert separate_parallel_inequalities(loads, [2.0, 3.0, 6.0]).n_cuts == 0
    assert separate_parallel_inequalities(loads, [2.0, 3.0, 6.0 - 1e-3]).n_cuts == 1


@pytest.mark.parametrize("seed", range(10))
def test_separation_finds_the_most_violated_subset(seed):
    rng = np.random.default_rng(700 + seed)
    n = 7
    loads = rng.integers(0, 5, (3, n)).astype(float)
    C = rng.integers(1, 12, n).astype(float)  # integer values: ties happen
    cuts = separate_parallel_inequalities(loads, C, per_machine=None, tol=0.0)
    masks = np.array(list(itertools.product([0, 1], repeat=n)), dtype=bool)[1:]
    for i in range(loads.shape[0]):
        L = loads[i] * masks
        viol = 0.5 * ((L * L).sum(1) + L.sum(1) ** 2) - L @ C
        best = viol.max()
        mine = cuts.violation[cuts.machine == i]
        if best <= 0:
            assert mine.size == 0
        else:
            assert mine.max() == pytest.approx(best)
    # the per-machine limit keeps the most violated (relative)
    top = separate_parallel_inequalities(loads, C, per_machine=1, tol=0.0)
    for i in np.unique(top.machine):
        rel_all = cuts.relative[cuts.machine == i]
        assert top.relative[top.machine == i][0] == pytest.approx(rel_all.max())


def test_separation_rows_are_the_inequality_divided_by_load():
    cos = ConcurrentOpenShopInstance([[2, 1, 3]], [1.0, 1.0, 1.0], [0, 0, 0])
    m = build_cos_lp(cos)
    cuts = separate_parallel_inequalities(m, [2.0, 3.0, 3.0])
    (cut,) = parallel_cut_rows(m, cuts)
    assert cut.scale == pytest.approx(25 / 6) and cut.violation == pytest.approx(9 / 6)
    assert cut.key[0] == 0
    for j, c in enumerate([2.0, 3.0, 3.0]):
        m.C[j].value = c
    assert pyo.value(cut.expr.args[1]) == pytest.approx(16 / 6)  # body at C*: lhs / L(S)


def test_separation_argument_checks():
    with pytest.raises(ValueError, match="one per job"):
        separate_parallel_inequalities(np.ones((2, 3)), [1.0, 2.0])
    with pytest.raises(ValueError, match="per_machine"):
        separate_parallel_inequalities(np.ones((2, 3)), [1.0, 2.0, 3.0], per_machine=0)
    with pytest.raises(TypeError, match="cannot read LP data"):
        cos_data("loads")
    with pytest.raises(ValueError, match="nonnegative"):
        cos_data(-np.ones((2, 2)))


# ---------------------------------------------------------------------------------------------
# registry


def test_registered_models():
    cos = random_cos(np.random.default_rng(1), 2, 3, max_p=2)
    inst = cos.to_coflow()
    for name, kind, arg in [("cos-lp", "concurrent-open-shop", cos), ("coflow-lp", "coflow", inst),
                            ("cos-milp", "concurrent-open-shop", cos), ("coflow-milp", "coflow", inst)]:
        spec = get_model(name)
        assert spec.kind == kind and spec.backend == "pyomo" and "001" in spec.description
        assert isinstance(spec.build(arg), pyo.ConcreteModel)
    assert "row generation" in get_model("cos-lp").description
    lp = solve(get_model("coflow-lp").build(inst)).objective
    assert lp <= cos_lower_bound(inst)[0] + 1e-6
    relaxed = solve(get_model("cos-milp").build(cos, relax=True)).objective
    assert relaxed <= exact(get_model("cos-milp").build(cos)) + 1e-6
    with pytest.raises(ValueError, match="takes instances of kind"):
        get_model("cos-milp").build(inst)


def test_builders_do_not_solve():
    cos = random_cos(np.random.default_rng(2), 2, 3, max_p=2)
    for m in (build_cos_lp(cos), build_cos_milp(cos), build_coflow_milp(cos.to_coflow())):
        assert all(v.value is None for v in m.component_data_objects(pyo.Var))


# ---------------------------------------------------------------------------------------------
# speed at the size of the paper's Facebook trace (526 coflows, 150 racks -> 300 ports)


def trace_sized_cos(
    seed: int = 0, n_machines: int = 300, n_jobs: int = 526, mean_width: float = 12.5
) -> ConcurrentOpenShopInstance:
    """Sparse random loads: each job on a geometric number of machines, 1..99 units each."""
    rng = np.random.default_rng(seed)
    p = np.zeros((n_machines, n_jobs), dtype=np.int64)
    width = np.minimum(rng.geometric(1 / mean_width, n_jobs), n_machines)
    for j in range(n_jobs):
        machines = rng.choice(n_machines, width[j], replace=False)
        p[machines, j] = rng.integers(1, 100, width[j])
    return ConcurrentOpenShopInstance(p, rng.uniform(0.5, 2.0, n_jobs).round(3), np.zeros(n_jobs, dtype=np.int64))


def run_and_report(cos, capsys):
    start = time.perf_counter()
    bound, C, rg = cos_lower_bound(cos)
    total = time.perf_counter() - start
    with capsys.disabled():
        print(
            f"\n526 x 300 COS LP ({np.count_nonzero(cos.processing)} nonzero loads): {rg.status} in "
            f"{rg.rounds} rounds, {rg.n_cuts} cuts ({sum(rg.removed_per_round)} purged, {rg.n_rows} left); "
            f"model build {rg.model_build_seconds:.2f} s, cut build + hand-off {rg.build_seconds:.2f} s, "
            f"solve {rg.solve_seconds:.2f} s, separation {rg.separation_seconds:.2f} s, total {total:.2f} s"
        )
    return bound, C, rg, total


def test_cos_lp_at_526_jobs_300_machines(capsys):
    cos = trace_sized_cos()
    m = build_cos_lp(cos)
    assert len(m.C) == 526
    bound, C, rg, _ = run_and_report(cos, capsys)
    assert rg.converged  # its time is printed, and measured in benchmarks.coflow_scale: no wall-clock assert
    assert bound == pytest.approx(float(cos.weight @ C), rel=REL)
    # a point check of the final LP: the separation finds nothing on any machine
    assert separate_parallel_inequalities(cos, C).n_cuts == 0


@pytest.mark.slow
def test_cos_lp_at_526_jobs_300_machines_dense(capsys):
    """Four times the loads per job (about 28k nonzero loads): about 40 s here, mostly HiGHS."""
    cos = trace_sized_cos(mean_width=50.0)
    _, C, rg, _ = run_and_report(cos, capsys)
    assert rg.converged
    assert separate_parallel_inequalities(cos, C).n_cuts == 0


def _full_set_by_machine(loads):
    """The full-set rows machine by machine, as the slides state them (the reference of full_set_arrays)."""
    for i in range(loads.shape[0]):
        jobs = np.flatnonzero(loads[i])
        if jobs.size < 2:
            continue
        li = loads[i, jobs]
        total = float(li.sum())
        yield i, jobs, li / total, parallel_rhs(li) / total


@pytest.mark.parametrize("seed", range(6))
def test_full_set_rows_are_the_per_machine_rows_to_the_last_bit(seed):
    rng = np.random.default_rng(900 + seed)
    loads = rng.integers(0, 10 ** (2 + seed), size=(rng.integers(1, 30), rng.integers(1, 200))).astype(float)
    loads[rng.random(loads.shape) < rng.random()] = 0.0
    got, want = list(full_set_rows(loads)), list(_full_set_by_machine(loads))
    assert len(got) == len(want)
    for (i, jobs, coef, rhs), (wi, wjobs, wcoef, wrhs) in zip(got, want, strict=True):
        assert i == wi and rhs == wrhs  # equal, not close: the LP's rows are unchanged
        np.testing.assert_array_equal(jobs, wjobs)
        np.testing.assert_array_equal(coef, wcoef)
