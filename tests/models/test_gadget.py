"""The per-slot G-VNE model (paper 000, (12)-(19)): both forms, LP >= ILP, verified allocations."""

from __future__ import annotations

import dataclasses
import itertools

import numpy as np
import pytest

from clusteropt.instances.gadget.instance import fat_tree_cluster, gadget_preset, k_ary_fat_tree, random_gadget
from clusteropt.models.gadget.gvne import (
    allocation_from_solution,
    build_gvne,
    slot_problem,
    tree_layout,
    worker_bound,
)
from clusteropt.solvers import solve
from clusteropt.verify import check_gadget_allocation


def _tight(seed: int, n_jobs: int = 6, utility: str = "log"):
    """A small tree where bandwidth and GPUs both bind."""
    cl = fat_tree_cluster(5, n_racks=2, gpus=(1, 2, 4), server_bw=(5, 10), rack_bw=(8, 14), seed=seed)
    return random_gadget(n_jobs, workers=(2, 5), cluster=cl, horizon=5, arrivals="zero", bandwidth=(3, 7),
                         utility=utility, seed=seed)


def _brute_force(problem) -> float:
    """Optimum of (10) by enumeration on a tree: every worker vector per job, ring in DFS order."""
    inst = problem.inst
    cl = inst.cluster
    lay = tree_layout(cl)
    cap = cl.capacity[:, 0]
    links = {c: min(cl.bandwidth[lay.up[c]], cl.bandwidth[lay.down[c]]) for c in lay.parent}
    options = []
    for j in range(problem.jobs.size):
        opts = [(0.0, np.zeros(cl.n_servers, dtype=int))]
        for k in range(1, int(problem.kmax[j]) + 1):
            for combo in itertools.combinations_with_replacement(range(cl.n_servers), k):
                y = np.bincount(combo, minlength=cl.n_servers)
                if (y <= cap).all():
                    opts.append((float(problem.pi[j][k - 1]), y))
        options.append(opts)
    best = 0.0
    for choice in itertools.product(*options):
        load = sum(y for _, y in choice)
        if (load > cap + 1e-9).any():
            continue
        value = sum(v for v, _ in choice)
        if value <= best:
            continue
        ok = True
        for c, capacity in links.items():
            below = set(lay.below[c])
            use = 0.0
            for (_, y), i in zip(choice, problem.jobs.tolist(), strict=True):
                on = set(np.flatnonzero(y).tolist())
                if on & below and on - below:
                    use += inst.bandwidth[i]
            if use > capacity + 1e-9:
                ok = False
                break
        if ok:
            best = value
    return best


@pytest.mark.parametrize("seed", range(3))
def test_tree_form_equals_brute_force(seed):
    inst = _tight(seed, n_jobs=3)
    p = slot_problem(inst, 1)
    res = solve(build_gvne(p, form="tree"))
    assert res.objective == pytest.approx(_brute_force(p), rel=1e-7, abs=1e-7)


@pytest.mark.parametrize("seed", range(4))
def test_flow_and_tree_forms_agree_and_bound(seed):
    inst = _tight(seed)
    p = slot_problem(inst, 1)
    values = {}
    for form in ("tree", "flow"):
        m = build_gvne(p, form=form)
        res = solve(m)
        alloc = allocation_from_solution(p, m)
        check = check_gadget_allocation(inst, alloc, 1)
        assert check.ok, check.violations[:3]
        gained = float((inst.utility_of(alloc.workers.sum(axis=1)) - inst.utility_of(np.zeros(inst.n_jobs))).sum())
        assert gained == pytest.approx(res.objective, rel=1e-7, abs=1e-7)
        values[form] = res.objective
        lp = solve(build_gvne(p, form=form, relax=True)).objective
        assert lp >= res.objective - 1e-6  # LP bound >= ILP optimum
    assert values["tree"] == pytest.approx(values["flow"], rel=1e-7)


def test_flow_form_on_a_k_ary_fat_tree_is_verified():
    inst = random_gadget(5, cluster=k_ary_fat_tree(4, gpus=(1, 2), seed=0), workers=(3, 5), horizon=2,
                         arrivals="zero", seed=1, utility="log", bandwidth=(50, 150))
    p = slot_problem(inst, 1)
    with pytest.raises(ValueError, match="tree"):
        build_gvne(p, form="tree")
    m = build_gvne(p)
    assert m.form == "flow"
    solve(m)
    alloc = allocation_from_solution(p, m)
    assert check_gadget_allocation(inst, alloc, 1).ok
    assert any(len(r.servers) >= 2 for r in alloc.rings.values())  # rings are exercised


def test_worker_bound_and_active_set():
    inst = gadget_preset("small", jobs=6, seed=2)
    z = np.zeros(inst.n_jobs)
    z[0] = inst.budget[0]  # job 0 is done: not active
    p = slot_problem(inst, inst.horizon, z)
    assert 0 not in p.jobs.tolist()
    q = worker_bound(inst, z, p.jobs)
    assert (p.kmax == np.floor(q)).all()
    assert (p.kmax <= inst.max_workers[p.jobs]).all()
    early = slot_problem(inst, 1)
    assert (inst.arrival[early.jobs] <= 1).all()  # Alg. 1 line 3: only arrived jobs


def test_pi_is_the_utility_gain():
    inst = gadget_preset("small", jobs=4, seed=0, utility="sqrt")
    z = np.full(inst.n_jobs, 3.0)
    p = slot_problem(inst, inst.horizon, z)
    for j, i in enumerate(p.jobs.tolist()):
        k = len(p.pi[j])
        lam = inst.utility_params[i, 0]
        expect = lam * np.sqrt(inst.zeta[i] * (3 + np.arange(1, k + 1))) - lam * np.sqrt(inst.zeta[i] * 3)
        np.testing.assert_allclose(p.pi[j], expect)


def test_fractional_solution_is_refused():
    inst = _tight(1)
    p = slot_problem(inst, 1)
    m = build_gvne(p, relax=True)
    solve(m)
    values = [v.value for v in m.y.values()]
    if all(abs(v - round(v)) < 1e-6 for v in values):
        pytest.skip("this LP happened to be integral")
    with pytest.raises(ValueError, match="fractional"):
        allocation_from_solution(p, m)


def test_empty_slot_builds():
    inst = gadget_preset("small", jobs=2, seed=0)
    p = slot_problem(inst, 1, inst.budget.astype(float))  # every job done: nothing active
    assert p.jobs.size == 0
    for form in ("tree", "flow"):
        m = build_gvne(p, form=form)
        assert len(m.chi) == 0 and len(m.eq18) == 0  # no job, no row (an empty sum is not a constraint)


def test_bad_arguments():
    inst = gadget_preset("small", jobs=2, seed=0)
    with pytest.raises(ValueError, match="slot"):
        slot_problem(inst, 0)
    with pytest.raises(ValueError, match="shape"):
        slot_problem(inst, 1, np.zeros(5))
    with pytest.raises(ValueError, match="form"):
        build_gvne(slot_problem(inst, inst.horizon), form="dense")


@pytest.mark.parametrize("make", ["_chain", "_cycle", "_star", "_racks"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_gvne_forms_equal_the_one_slot_offline_optimum(make, seed):
    """A server inside the tree (chain) and paths through servers (cycle): both forms of (12)-(19)
    at slot 1 with nothing earlier equal DDLJS over one slot (sqrt: mu(0) = 0), which
    tests/models/test_gadget_offline.py checks against brute force.
    """
    from clusteropt.models.gadget.ddljs import ddljs_optimum
    from tests.models import test_gadget_offline as off

    cluster = getattr(off, make)()
    inst = off._bf_instance(cluster, seed, "sqrt", n_jobs=3, horizon=1)
    inst = dataclasses.replace(inst, bandwidth=inst.bandwidth * 0 + 3.5)  # every pair of servers binds a link
    best, _, _ = ddljs_optimum(inst)
    p = slot_problem(inst, 1)
    forms = ["flow"] + (["tree"] if cluster.is_tree() else [])
    for form in forms:
        m = build_gvne(p, form=form)
        res = solve(m)
        assert res.objective == pytest.approx(best, abs=1e-6), form
        assert check_gadget_allocation(inst, allocation_from_solution(p, m), 1).ok
