"""The ring-selection LP of paper 000 made smaller without changing its optimum (issue 22 item 1):
over classes of interchangeable servers, and through its capacity relaxation with a certificate.

Bars: ``build_gvne_matrix(classes=True)`` has the full LP's optimal value on clusters with one
class per rack, with some classes, and with none (then it is the full LP, column for column); the
class LP's solution copied to every member of its class is feasible in the full LP with the same
objective (so the fold is the symmetric restriction, not merely a bound); LP-RS-MDE with
``select_classes=True`` gives allocations the verifier accepts with the same ``lp_value``; the
option is refused where it does not apply.  The capacity relaxation's value is never below the LP's;
where its extended solution is certified feasible the two values agree, and where it is not (an instance
built so that the link rows bind) LP-RS-MDE solves the full LP and reports the same ``lp_value``.
"""

from __future__ import annotations

import numpy as np
import pytest

from clusteropt.instances.gadget.instance import Cluster, fat_tree_cluster, random_gadget
from clusteropt.models.gadget.gvne import slot_problem
from clusteropt.models.gadget.matrix import (
    build_gvne_matrix,
    capacity_relaxation,
    certify_extension,
    extend_capacity_solution,
    server_classes,
    solve_matrix,
)
from clusteropt.online import run_online
from clusteropt.online.gadget import make_policy
from clusteropt.rounding.gadget import lp_rs_mde, select_rings
from clusteropt.verify import check_gadget_allocation, check_gadget_schedule


def _problem(kind: str, seed: int, n_jobs: int = 12, z: float = 0.0, utility: str = "sqrt"):
    if kind == "racks":  # every rack one class
        cl = fat_tree_cluster(16, n_racks=3, gpus=(8,), server_bw=(100, 100), seed=seed)
    elif kind == "mixed":  # a few classes per rack, some singletons
        cl = fat_tree_cluster(16, n_racks=2, gpus=(2, 8), server_bw=(40, 41), rack_bw=(60, 90), seed=seed)
    else:  # the paper's generator: hardly any two servers alike
        cl = fat_tree_cluster(12, seed=seed)
    inst = random_gadget(n_jobs, cluster=cl, horizon=4, arrivals="zero", bandwidth=(5, 30), utility=utility,
                         seed=seed)
    return slot_problem(inst, 1, np.full(inst.n_jobs, z))


def test_server_classes():
    c = fat_tree_cluster(8, n_racks=2, gpus=(8,), server_bw=(100, 100), seed=0)
    rep = server_classes(c)
    assert all(rep[s] == min(np.flatnonzero(c.rack == c.rack[s])) for s in range(8))
    het = fat_tree_cluster(30, seed=3)
    rep = server_classes(het)
    for s in np.flatnonzero(rep != np.arange(30)):  # any merge is a true twin
        r = rep[s]
        assert het.rack[s] == het.rack[r] and (het.capacity[s] == het.capacity[r]).all()
    # a server with children is never merged: servers 0 (inner) and 3 both hang below switch 4
    pairs = [(0, 1), (0, 2), (0, 4), (4, 3)]
    links = [[u, v] for u, v in pairs] + [[v, u] for u, v in pairs]
    tree = Cluster(capacity=np.array([[2.0], [2.0], [2.0], [2.0]]), links=np.array(links),
                   bandwidth=np.full(len(links), 10.0), n_switches=1, resources=("gpu",))
    assert server_classes(tree).tolist() == [0, 1, 1, 3]


def _expand(folded, full, x):
    """The class LP's solution copied to every member, as a vector of the full LP's columns."""
    rep = folded.meta["rep"]
    lay = folded.meta["layout"]
    tree_c = sorted(lay.parent)
    q = {c: k for k, c in enumerate(tree_c)}
    vals = folded.values(x)
    out = np.full(full.n_cols, np.nan)
    for block in full.col_blocks:
        v = vals[block.name].copy()
        if block.name in ("y", "x"):
            v = v.reshape(-1, rep.size)[:, rep].ravel()
        elif block.name in ("inside", "xbelow", "outside", "span"):
            src = np.array([q[int(rep[c])] if c < rep.size else q[c] for c in tree_c])
            v = v.reshape(-1, len(tree_c))[:, src].ravel()
        on = block.positions >= 0
        out[block.positions[on]] = v[on]
    return out


@pytest.mark.parametrize(("kind", "seed", "z", "utility"),
                         [("racks", 0, 0.0, "sqrt"), ("racks", 1, 2.0, "log"), ("mixed", 2, 0.0, "sqrt"),
                          ("mixed", 3, 1.0, "sigmoid"), ("paper", 4, 0.0, "sqrt")])
def test_class_lp_has_the_full_optimum_and_expands_to_a_full_solution(kind, seed, z, utility):
    p = _problem(kind, seed, z=z, utility=utility)
    full = build_gvne_matrix(p)
    folded = build_gvne_matrix(p, classes=True)
    n_classes = np.unique(folded.meta["rep"]).size
    if kind == "paper" and n_classes == p.inst.cluster.n_servers:
        assert (folded.n_rows, folded.n_cols) == (full.n_rows, full.n_cols)
    else:
        assert folded.n_cols < full.n_cols and folded.n_rows < full.n_rows
    res_full, _ = solve_matrix(full)
    res_fold, x = solve_matrix(folded)
    assert res_fold.objective == pytest.approx(res_full.objective, rel=1e-8, abs=1e-8)
    xf = _expand(folded, full, x)
    assert not np.isnan(xf).any()
    assert float(full.cost @ xf) == pytest.approx(res_full.objective, rel=1e-8, abs=1e-8)
    act = full.a @ xf
    tol = 1e-6 * np.maximum(1.0, np.abs(act))
    assert (act >= full.row_lower - tol).all() and (act <= full.row_upper + tol).all()
    assert (xf >= full.col_lower - 1e-9).all() and (xf <= full.col_upper + 1e-9).all()


def test_lp_rs_mde_with_classes_is_verified_and_keeps_the_lp_value():
    for seed in (0, 1):
        p = _problem("racks", seed)
        a, info = lp_rs_mde(p, rng=seed, select_classes=True)
        _, ref = lp_rs_mde(p, rng=seed)
        assert info["select_classes"] is True and info["lp_value"] == pytest.approx(ref["lp_value"], rel=1e-8)
        check = check_gadget_allocation(p.inst, a, p.t, used=p.z_prev)
        assert check.ok, check.violations[:3]
    inst = _problem("racks", 2).inst
    run = run_online(make_policy("gadget", slot_solver="lp-rs-mde", select_classes=True, embed_route="colgen"),
                     inst, horizon=inst.horizon, seed=0)
    assert check_gadget_schedule(inst, run.schedule).ok and run.params["select_classes"] is True


def test_classes_refused_where_they_do_not_apply():
    p = _problem("racks", 0)
    with pytest.raises(ValueError, match="ILP"):
        build_gvne_matrix(p, relax=False, classes=True)
    with pytest.raises(ValueError, match="select_classes"):
        lp_rs_mde(p, select_classes=True, builder="pyomo")
    with pytest.raises(ValueError, match="select_classes"):
        run_online(make_policy("gadget", slot_solver="lp-rs-mde", select_classes=True, form="flow"), p.inst,
                   horizon=1, seed=0)
    assert select_rings(p)[0].lp_value > 0  # the default route untouched


def _links_bind():
    """Two 2-GPU servers on 1-Gbps links and jobs of 4 workers at 10 Gbps: the capacity relaxation
    fills both servers, and its extension loads each link 5 Gbps."""
    pairs = [(0, 2), (1, 2)]
    links = [[u, v] for u, v in pairs] + [[v, u] for u, v in pairs]
    cl = Cluster(capacity=np.array([[2.0], [2.0]]), links=np.array(links), bandwidth=np.full(4, 1.0), n_switches=1,
                 resources=("gpu",))
    inst = random_gadget(2, workers=(4, 4), cluster=cl, horizon=3, arrivals="zero", bandwidth=(10, 10),
                         utility="sqrt", seed=0)
    return slot_problem(inst, 1)


@pytest.mark.parametrize(("kind", "seed", "classes"), [("racks", 0, False), ("racks", 1, True), ("mixed", 2, True),
                                                       ("paper", 4, False), ("binding", 0, False)])
def test_capacity_relaxation_certificate(kind, seed, classes):
    p = _links_bind() if kind == "binding" else _problem(kind, seed)
    lp = build_gvne_matrix(p, classes=classes)
    sub = capacity_relaxation(lp)
    assert sub.n_cols < lp.n_cols and sub.n_rows < lp.n_rows
    res_sub, x_sub = solve_matrix(sub)
    res_full, _ = solve_matrix(lp)
    assert res_sub.objective >= res_full.objective - 1e-7 * max(1.0, abs(res_full.objective))
    x = extend_capacity_solution(p, lp, sub, x_sub)
    assert float(lp.cost @ x) == pytest.approx(res_sub.objective, rel=1e-9)  # the objective reads chi only
    ok, violation = certify_extension(lp, x)
    if kind == "binding":
        assert not ok and violation > 1 and res_sub.objective > res_full.objective + 1
    else:
        assert ok, violation
        assert res_sub.objective == pytest.approx(res_full.objective, rel=1e-8)


def test_lp_rs_mde_capacity_route_certifies_or_falls_back():
    for p, certified in ((_problem("racks", 0), True), (_links_bind(), False)):
        alloc, info = lp_rs_mde(p, rng=0, select_route="capacity")
        _, ref = lp_rs_mde(p, rng=0, select_route="full")
        assert info["select_certified"] is certified and info["select_route"] == "capacity"
        assert info["lp_value"] == pytest.approx(ref["lp_value"], rel=1e-8)
        check = check_gadget_allocation(p.inst, alloc, p.t, used=p.z_prev)
        assert check.ok, check.violations[:3]
    assert "select_certified" not in lp_rs_mde(_problem("racks", 0), rng=0, select_route="full")[1]
    with pytest.raises(ValueError, match="select_route"):
        lp_rs_mde(_problem("racks", 0), select_route="lagrange")
    with pytest.raises(ValueError, match="select_route"):
        lp_rs_mde(_problem("racks", 0), select_route="capacity", builder="pyomo")


def test_capacity_route_with_warm_resolves():
    inst = _problem("racks", 3).inst
    cold = run_online(make_policy("gadget", slot_solver="lp-rs-mde", select_route="capacity"), inst,
                      horizon=inst.horizon, seed=0)
    warm = run_online(make_policy("gadget", slot_solver="lp-rs-mde", select_route="capacity", warm=True), inst,
                      horizon=inst.horizon, seed=0)
    for a, b in zip(cold.slot_info, warm.slot_info, strict=True):
        if a.get("lp_jobs"):
            assert a["select_certified"] and b["select_certified"]
            assert b["lp_value"] == pytest.approx(a["lp_value"], rel=1e-8)
    assert any(i.get("select_warm") for i in warm.slot_info)
    assert check_gadget_schedule(inst, warm.schedule).ok
