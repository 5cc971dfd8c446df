"""The matrix fast path of LP-RS-MDE (paper 000, Alg. 2) builds the very same LPs as the Pyomo models.

Bars (DESIGN.md, Speed: "a fast path may build the solver's matrices directly, provided a test shows
it solves the very same model"): for the LP relaxation of (12)-(19) and the augmented LP (tree form),
on several presets, utilities, slots with and without earlier worker-slots and unusual trees, the
arrays equal what Pyomo's LinearStandardFormCompiler makes of the Pyomo model: the same columns in the
same order with the same bounds and objective coefficients, the same rows in the same order as
(name -> {column: coefficient}, lower, upper) up to 1e-12; the same optimum; the decomposition read
from the matrix solution equals the one read from the Pyomo model; lp_rs_mde gives the same
allocation with either builder.  The ILP itself (``relax=False``, the exact slot solver's model) is
the compiled Pyomo ILP with the same integer columns, and reaches the same proved optimum.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from pyomo.repn.plugins.standard_form import LinearStandardFormCompiler

from clusteropt.instances.gadget.instance import (
    Cluster,
    GadgetInstance,
    fat_tree_cluster,
    gadget_preset,
    random_gadget,
)
from clusteropt.models.gadget.embedding import build_embedding_lp, decompose_embedding
from clusteropt.models.gadget.gvne import allocation_from_solution, build_gvne, slot_problem
from clusteropt.models.gadget.matrix import (
    EmbeddingSolution,
    allocation_from_matrix,
    build_embedding_matrix,
    build_gvne_matrix,
    solve_matrix,
)
from clusteropt.rounding.gadget import lp_rs_mde, positive_gain, select_rings
from clusteropt.solvers.direct import solve_highs_direct

TOL = 1e-12


# -- the standard form of both routes ------------------------------------------------------------------


def _pyomo_form(model):
    """Columns and rows as Pyomo's standard-form compiler gives them (as solvers.direct calls it)."""
    repn = LinearStandardFormCompiler().write(model, mixed_form=True, set_sense=None)
    names = [v.name for v in repn.columns]
    lb = [-np.inf if v.lb is None else float(v.lb) for v in repn.columns]
    ub = [np.inf if v.ub is None else float(v.ub) for v in repn.columns]
    c = np.asarray(repn.c.toarray()).ravel() if names else np.zeros(0)
    a = repn.A.tocsr()
    rows = []
    for q, ((con, mult), rhs) in enumerate(zip(repn.rows, repn.rhs, strict=True)):
        sl = slice(a.indptr[q], a.indptr[q + 1])
        coefs = {names[j]: float(v) for j, v in zip(a.indices[sl], a.data[sl], strict=True)}
        lo = -np.inf if mult == 1 else float(rhs)
        hi = np.inf if mult == -1 else float(rhs)
        rows.append((con.name, coefs, lo, hi))
    return names, np.array(lb), np.array(ub), c, rows, float(repn.c_offset[0]) if len(repn.c_offset) else 0.0


def _matrix_form(lp):
    names = lp.col_names()
    a = lp.a.tocsr()
    rows = []
    for q, name in enumerate(lp.row_names()):
        sl = slice(a.indptr[q], a.indptr[q + 1])
        coefs = {names[j]: float(v) for j, v in zip(a.indices[sl], a.data[sl], strict=True)}
        rows.append((name, coefs, float(lp.row_lower[q]), float(lp.row_upper[q])))
    return names, lp.col_lower, lp.col_upper, lp.cost, rows


def _assert_same_model(lp, model) -> None:
    """The matrix LP is the compiled Pyomo model: same columns, bounds, costs, rows; same order."""
    p_names, p_lb, p_ub, p_c, p_rows, offset = _pyomo_form(model)
    m_names, m_lb, m_ub, m_c, m_rows = _matrix_form(lp)
    assert m_names == p_names  # same columns in the same order
    assert len(set(m_names)) == len(m_names)
    np.testing.assert_allclose(m_lb, p_lb, rtol=0, atol=TOL)
    np.testing.assert_allclose(m_ub, p_ub, rtol=0, atol=TOL)
    np.testing.assert_allclose(m_c, p_c, rtol=0, atol=TOL)
    assert offset == 0.0
    assert lp.maximize
    assert [r[0] for r in m_rows] == [r[0] for r in p_rows]  # same rows in the same order
    for (name, coefs, lo, hi), (_, p_coefs, p_lo, p_hi) in zip(m_rows, p_rows, strict=True):
        assert coefs.keys() == p_coefs.keys(), name
        assert all(abs(coefs[k] - p_coefs[k]) <= TOL for k in coefs), name
        assert (lo == p_lo or abs(lo - p_lo) <= TOL) and (hi == p_hi or abs(hi - p_hi) <= TOL), name
    # the matrix is canonical: what HiGHS gets has no explicit zeros and no duplicates
    assert lp.a.has_canonical_format and (lp.a.data != 0).all()


# -- instances --------------------------------------------------------------------------------------


def _with_z(inst, t, seed):
    """Slot t after some worker-slots already spent (z_prev), some jobs at their budget."""
    rng = np.random.default_rng(seed)
    z = np.floor(rng.uniform(0, 1.2, inst.n_jobs) * inst.budget)
    return slot_problem(inst, t, np.minimum(z, inst.budget))


def _empty_rack():
    """A fat-tree with an extra rack switch that has no servers, and a switch below it with none either."""
    cl = fat_tree_cluster(6, n_racks=2, gpus=(1, 2, 4), server_bw=(5, 10), rack_bw=(8, 14), seed=3)
    core = cl.n_nodes - 1
    empty, deeper = cl.n_nodes, cl.n_nodes + 1
    links = np.vstack([cl.links, [[empty, core], [core, empty], [deeper, empty], [empty, deeper]]])
    bw = np.concatenate([cl.bandwidth, [9.0, 9.0, 4.0, 4.0]])
    cl = Cluster(cl.capacity, links=links, bandwidth=bw, n_switches=cl.n_switches + 2)
    return random_gadget(7, workers=(2, 5), cluster=cl, horizon=5, arrivals="zero", bandwidth=(3, 7),
                         utility="sqrt", seed=3)


def _two_resources():
    """Two resources, some jobs needing none of the second one, one job with no bandwidth."""
    cl = fat_tree_cluster(5, n_racks=2, gpus=(1, 2, 4), server_bw=(5, 10), rack_bw=(8, 14), seed=4)
    inst = random_gadget(6, workers=(2, 5), cluster=cl, horizon=5, arrivals="zero", bandwidth=(3, 7),
                         utility="log", seed=4)
    rng = np.random.default_rng(4)
    cap = np.column_stack([cl.capacity[:, 0], rng.integers(2, 9, cl.n_servers).astype(float)])
    cap[0, 1] = 0.0  # a server with none of the second resource
    cl = dataclasses.replace(cl, capacity=cap, resources=("gpu", "cpu"))
    pw = np.column_stack([np.ones(6), [0.0, 0.5, 1.0, 0.0, 2.0, 1.0]])
    bw = inst.bandwidth.copy()
    bw[2] = 0.0
    return dataclasses.replace(inst, cluster=cl, per_worker=pw, limit=np.maximum(pw, 1.0) * 1000.0, bandwidth=bw)


def _server_tree():
    """No switches: a line of servers (servers forward ring traffic; the root is a server)."""
    links, bw = [], []
    for u, v, b in ((0, 1, 10.0), (1, 2, 6.0), (2, 3, 8.0)):
        links += [[u, v], [v, u]]
        bw += [b, b]
    cl = Cluster(np.array([[2.0], [1.0], [3.0], [2.0]]), links=links, bandwidth=bw)
    n = 4
    return GadgetInstance(cl, horizon=2, arrival=[1] * n, max_workers=[4, 3, 5, 2], per_worker=[[1.0]] * n,
                          limit=[[100.0]] * n, bandwidth=[3.0, 4.0, 2.0, 5.0], zeta=[1.0] * n, utility="sqrt",
                          utility_params=[[10.0, 0, 0], [7.0, 0, 0], [12.0, 0, 0], [4.0, 0, 0]])


def _cases():
    """(label, SlotProblem) pairs: presets, utilities, slots with and without z_prev, unusual trees."""
    out = []
    small = gadget_preset("small", jobs=8, seed=0, utility="sqrt")
    out.append(("small-sqrt-t10", slot_problem(small, 10)))
    out.append(("small-sqrt-t15-z", _with_z(small, 15, 1)))
    small_log = gadget_preset("small", jobs=10, seed=1, utility="log")
    out.append(("small-log-t12-z", _with_z(small_log, 12, 2)))
    tiny = gadget_preset("tiny", jobs=6, seed=2, utility="sigmoid")
    out.append(("tiny-sigmoid-t3", slot_problem(tiny, 3)))
    out.append(("tiny-sigmoid-t4-z", _with_z(tiny, 4, 3)))
    paper = gadget_preset("paper", jobs=40, seed=0, utility="sqrt")
    out.append(("paper-sqrt-t90-z", _with_z(paper, 90, 4)))
    paper_sig = gadget_preset("paper", jobs=40, seed=5, utility="sigmoid")
    out.append(("paper-sigmoid-t120", slot_problem(paper_sig, 120)))
    out.append(("empty-rack", slot_problem(_empty_rack(), 1)))
    out.append(("two-resources", slot_problem(_two_resources(), 1)))
    out.append(("server-line", slot_problem(_server_tree(), 1)))
    return [(label, p) for label, p in out if p.jobs.size]


CASES = _cases()


def _kappas(problem, seed):
    """Ring sizes: kmax, Lemma 7's selection, and random sizes."""
    rng = np.random.default_rng(seed)
    kmax = {int(i): int(k) for i, k in zip(problem.jobs, problem.kmax, strict=True)}
    rand = {int(i): int(rng.integers(1, k + 1)) for i, k in zip(problem.jobs, problem.kmax, strict=True)}
    out = [("kmax", kmax), ("random", rand)]
    gaining = positive_gain(problem)
    if gaining.jobs.size:
        sel, _ = select_rings(gaining, builder="pyomo")
        if sel.kappa:
            out.append(("lemma7", sel.kappa))
    return out


def test_cases_cover_what_they_claim():
    labels = {label for label, _ in CASES}
    assert len(labels) == 10  # every case has active jobs
    assert any(p.z_prev.any() for _, p in CASES) and any(not p.z_prev.any() for _, p in CASES)
    assert {p.inst.utility for _, p in CASES} >= {"sqrt", "log", "sigmoid"}
    assert max(p.jobs.size for _, p in CASES) >= 10  # a medium one


# -- the same model -----------------------------------------------------------------------------------


@pytest.mark.parametrize(("label", "problem"), CASES, ids=[c[0] for c in CASES])
def test_ring_selection_lp_is_the_pyomo_model(label, problem):
    lp = build_gvne_matrix(problem)
    model = build_gvne(problem, form="tree", relax=True)
    _assert_same_model(lp, model)
    res_p = solve_highs_direct(model)
    res_m, x = solve_matrix(lp)
    assert res_m.objective == pytest.approx(res_p.objective, rel=1e-9, abs=1e-9)
    assert res_m.backend == "matrix" and res_m.termination.name == "OPTIMAL"
    # same input to HiGHS, same vertex: the values read back agree with the Pyomo variables
    chi = lp.values_by_key(x, "chi")
    assert chi.keys() == set(model.chi.keys())
    assert all(abs(chi[k] - model.chi[k].value) <= 1e-9 for k in chi)
    y = res_m.values["y"].reshape(problem.jobs.size, problem.inst.cluster.n_servers)
    np.testing.assert_allclose(y, res_p.values["y"], atol=1e-9)


ILP_CASES = [c for c in CASES if c[1].jobs.size <= 12]  # the paper-preset slots take minutes as ILPs


@pytest.mark.parametrize(("label", "problem"), ILP_CASES, ids=[c[0] for c in ILP_CASES])
def test_gvne_ilp_is_the_pyomo_ilp(label, problem):
    lp = build_gvne_matrix(problem, relax=False)
    model = build_gvne(problem, form="tree")
    _assert_same_model(lp, model)
    repn = LinearStandardFormCompiler().write(model, mixed_form=True, set_sense=None)
    flags = np.array([v.is_integer() or v.is_binary() for v in repn.columns])
    sums = np.array([v.parent_component().name in ("xbelow", "xsum") for v in repn.columns])
    assert lp.integer is not None and sums.any() and (flags == ~sums).all()  # only the running sums are real
    np.testing.assert_array_equal(lp.integer, flags)
    assert build_gvne_matrix(problem).integer is None  # the relaxation stays an LP
    res_p = solve_highs_direct(model, mip_gap=0.0)
    res_m, x = solve_matrix(lp, mip_gap=0.0)
    assert res_m.termination.name == "OPTIMAL" and res_m.objective == pytest.approx(res_p.objective, rel=1e-9)
    assert res_m.bound is not None and res_m.bound >= res_m.objective - 1e-6 * max(1.0, abs(res_m.objective))
    # both readers give allocations of the same gain, and the matrix one is the verifier's feasible
    from clusteropt.rounding.gadget import slot_gain
    from clusteropt.verify import check_gadget_allocation

    alloc = allocation_from_matrix(problem, lp, x)
    assert slot_gain(problem, alloc) == pytest.approx(res_m.objective, rel=1e-9, abs=1e-9)
    assert slot_gain(problem, allocation_from_solution(problem, model)) == pytest.approx(res_p.objective, rel=1e-9)
    assert check_gadget_allocation(problem.inst, alloc, problem.t, used=problem.z_prev).ok


def test_matrix_ilp_limits_and_readers():
    problem = dict(CASES)["small-sqrt-t10"]
    lp = build_gvne_matrix(problem, relax=False)
    res, x = solve_matrix(lp, time_limit=1e-6, raise_on_nonoptimal=False)
    assert res.termination.name in ("FEASIBLE", "TIME_LIMIT")  # stopped at once: an incumbent or none
    assert (x is not None) == res.has_solution
    from clusteropt.solvers.direct import WarmHighs

    with pytest.raises(ValueError, match="integer columns"):
        solve_matrix(lp, warm=WarmHighs())
    # a fractional y is refused by the reader, naming it
    _, xi = solve_matrix(lp)
    y_block = next(b for b in lp.col_blocks if b.name == "y")
    q = int(np.flatnonzero(y_block.positions >= 0)[0])
    j, srv = divmod(q, problem.inst.cluster.n_servers)
    frac = xi.copy()
    frac[y_block.positions[q]] += 0.5
    with pytest.raises(ValueError, match=rf"y\[{int(problem.jobs[j])},{srv}\] = .*fractional"):
        allocation_from_matrix(problem, lp, frac)


@pytest.mark.parametrize(("label", "problem"), CASES, ids=[c[0] for c in CASES])
def test_augmented_lp_is_the_pyomo_model(label, problem):
    for seed, (how, kappa) in enumerate(_kappas(problem, seed=len(label))):
        lp = build_embedding_matrix(problem, kappa)
        model = build_embedding_lp(problem, kappa, form="tree")
        _assert_same_model(lp, model)
        res_p = solve_highs_direct(model)
        res_m, x = solve_matrix(lp)
        assert res_m.objective == pytest.approx(res_p.objective, rel=1e-9, abs=1e-9), (how, seed)
        # the decomposition (Alg. 2 lines 5-6) reads the matrix solution like the Pyomo model
        sol = EmbeddingSolution(lp, x)
        assert sol.kappa == model.kappa and sol.form == "tree"
        for i in model.I:
            assert sol.x[i] == pytest.approx(model.x[i].value, abs=1e-9)
        assert set(sol.lam) == set(model.lam.keys()) and set(sol.omega) == set(model.omega.keys())
        assert len(sol.mu) == len(model.mu)
        assert decompose_embedding(problem, sol) == decompose_embedding(problem, model)


def test_a_ring_that_fits_nowhere_has_no_column():
    """Servers with 1.5 GPUs (as in test_gadget_embedding): x is fixed at 0 in Pyomo, and the
    compiler drops fixed columns; the matrix has no x for that job either."""
    cl = fat_tree_cluster(4, n_racks=2, gpus=(1,), seed=0)
    cl = dataclasses.replace(cl, capacity=np.full((4, 1), 1.5))
    inst = random_gadget(3, workers=(6, 6), cluster=cl, horizon=2, arrivals="zero", bandwidth=(0.1, 0.2),
                         utility="sqrt", seed=0)
    p = slot_problem(inst, 1)
    i_bad, i_ok = int(p.jobs[0]), int(p.jobs[1])
    kappa = {i_bad: 5, i_ok: 3}
    lp = build_embedding_matrix(p, kappa)
    model = build_embedding_lp(p, kappa)
    _assert_same_model(lp, model)
    assert f"x[{i_bad}]" not in lp.col_names()
    _, x = solve_matrix(lp)
    sol = EmbeddingSolution(lp, x)
    assert sol.x[i_bad] == 0.0
    solve_highs_direct(model)
    assert decompose_embedding(p, sol) == decompose_embedding(p, model)


def test_zero_gains_keep_the_column_order():
    """The compiler meets a variable with a zero objective coefficient in the objective all the same:
    the column order does not depend on which gains are 0."""
    p = CASES[0][1]
    for pi in (tuple(np.zeros_like(v) for v in p.pi),
               tuple(np.where(np.arange(v.size) == 0, 0.0, v) for v in p.pi)):
        q = dataclasses.replace(p, pi=pi)
        kappa = {int(i): 1 for i in q.jobs}
        _assert_same_model(build_gvne_matrix(q), build_gvne(q, form="tree", relax=True))
        _assert_same_model(build_embedding_matrix(q, kappa), build_embedding_lp(q, kappa, form="tree"))


# -- LP-RS-MDE with either builder ----------------------------------------------------------------------


@pytest.mark.parametrize(("label", "problem"), CASES, ids=[c[0] for c in CASES])
def test_lp_rs_mde_same_allocation_with_either_builder(label, problem):
    """Identical HiGHS input gives the identical solution, so the whole slot is the same."""
    for seed in (0, 1):
        a_m, i_m = lp_rs_mde(problem, rng=seed, builder="matrix")
        a_p, i_p = lp_rs_mde(problem, rng=seed, builder="pyomo")
        assert i_m["builder"] == "matrix" and i_p["builder"] == "pyomo"
        if i_m["lp_jobs"]:
            assert i_m["select_builder"] == "matrix" and i_p["select_builder"] == "pyomo"
        for key in ("lp_value", "selected_value", "augmented_value", "objective", "drawn_value"):
            assert i_m[key] == pytest.approx(i_p[key], rel=1e-9, abs=1e-9), key
        np.testing.assert_array_equal(a_m.workers, a_p.workers)
        assert a_m.rings == a_p.rings
        for key in ("select_build_s", "select_handoff_s", "select_solve_s", "build_s", "handoff_s", "solve_s"):
            assert i_m[key] >= 0 and i_p[key] >= 0


def test_builder_choice_and_errors():
    tree = CASES[0][1]
    _, info = lp_rs_mde(tree, rng=0)  # auto: the matrix on a tree with HiGHS
    assert info["builder"] == "matrix" and info["select_builder"] == "matrix"
    _, info = lp_rs_mde(tree, rng=0, form="flow")  # the flow form is Pyomo-only; auto falls back
    assert info["select_builder"] == "pyomo" and info["builder"] == "matrix"
    with pytest.raises(ValueError, match="builder='matrix'"):
        lp_rs_mde(tree, rng=0, form="flow", builder="matrix")
    with pytest.raises(ValueError, match="builder"):
        lp_rs_mde(tree, rng=0, builder="cvxpy")
    from clusteropt.instances.gadget.instance import k_ary_fat_tree

    inst = random_gadget(3, cluster=k_ary_fat_tree(4, gpus=(1, 2), seed=0), workers=(2, 3), horizon=2,
                         arrivals="zero", seed=1, utility="sqrt")
    p = slot_problem(inst, 1)
    with pytest.raises(ValueError, match="tree"):
        build_gvne_matrix(p)
    with pytest.raises(ValueError, match="tree"):
        build_embedding_matrix(p, {int(p.jobs[0]): 1})
    with pytest.raises(ValueError, match="builder='matrix'"):
        select_rings(p, builder="matrix")


def test_names_and_values():
    p = CASES[0][1]
    lp = build_gvne_matrix(p)
    assert lp.col_names()[0] == f"chi[{int(p.jobs[0])},1]" and lp.row_names()[-1].startswith("eq19[")
    assert (lp.n_rows, lp.n_cols) == lp.a.shape and lp.nnz == lp.a.nnz
    vals = lp.values(np.arange(lp.n_cols, dtype=float))
    assert list(vals) == ["chi", "rho", "y", "x", "inside", "xbelow", "xsum", "outside", "span"]
    assert sum(v.size for v in vals.values()) == lp.n_cols
    assert np.array_equal(np.sort(np.concatenate(list(vals.values()))), np.arange(lp.n_cols))
