"""The paper-000 (GADGET) experiments run quick, verify every schedule, and stay within their bounds."""

import numpy as np
import pytest

from clusteropt.experiments import gadget as gx
from clusteropt.experiments import get_experiment, run_sweep, write_report

FILES = {
    "gadget-utility": {"utility.csv", "utility.md", "utility.png", "utility.svg"},
    "gadget-utility-settings": {"utility.csv", "utility.md", "utility.png", "utility.svg"},
    "gadget-capacity": {"embedded-ratio.csv", "fig5-node.png", "fig5-node.svg", "fig6-edge.png", "fig6-edge.svg"},
    "gadget-slot-ratio": {"slot-ratio.csv", "slot-ratio.md", "slot-ratio.png", "slot-ratio.svg"},
    "gadget-slot-ratio-paper": {"slot-ratio.csv", "slot-ratio.md", "slot-ratio.png", "slot-ratio.svg"},
    "gadget-competitive": {"ratio.csv", "ratio.md", "ratio.png", "ratio.svg"},
}


def _quick(tmp_path, name):
    spec = get_experiment(name).quick_variant()
    table = run_sweep(spec, store=tmp_path / "s.sqlite", progress=False)
    assert len(table) == len(spec.cells()) and (table.status == "ok").all(), table.error.tolist()
    files = {p.name for p in write_report(spec, table, tmp_path / "report")}
    assert FILES[name] <= files
    # every schedule is feasible, but the paper rounding's, which reports what it overloads
    feasible = ~table.policy.isin(gx.PAPER_ROUNDING_POLICIES)
    assert table[feasible].verified.astype(bool).all()
    if "capacity_violations" not in table.columns:  # gadget-capacity runs the greedy GADGET only
        return table
    assert (table[feasible].capacity_violations == 0).all()
    paper = table[~feasible]
    assert (paper.verified.astype(bool) == (paper.capacity_violations == 0)).all()
    assert ((paper.capacity_violations > 0) == (paper.max_load_ratio > 1 + 1e-9)).all()
    return table


def test_quick_utility(tmp_path):
    table = _quick(tmp_path, "gadget-utility")
    assert set(table.policy) == {"gadget", "gadget-lp-rs-mde", "gadget-nofill", "gadget-lp-rs-mde-paper",
                                 "fifo", "drf", "las"}
    assert (table.total_utility >= 0).all()  # sigmoid
    ok = table[table.verified.astype(bool)]
    assert (ok.total_utility <= ok.utility_bound * (1 + 1e-9)).all()
    assert (ok.total_utility <= ok.pooled_bound * (1 + 1e-7)).all()
    assert (table.pooled_bound <= table.alone_bound * (1 + 1e-7)).all()
    assert (table.alone_bound <= table.utility_bound * (1 + 1e-9)).all()
    # the policies of one (params, seed) meet the same instance
    assert (table.groupby(["n_jobs", "seed"]).utility_bound.nunique() == 1).all()


@pytest.mark.slow  # about 10 s; a smoke run (at 12 jobs the loaded sigmoid's bound is 0)
def test_quick_utility_settings(tmp_path):
    table = _quick(tmp_path, "gadget-utility-settings")
    assert set(table.utility) == {"sqrt", "log", "sigmoid-loaded"}
    ok = table[table.verified.astype(bool)]
    assert (ok.total_utility <= ok.pooled_bound * (1 + 1e-7)).all()
    assert (table.pooled_bound <= table.alone_bound * (1 + 1e-7)).all()
    assert (table.groupby(["utility", "seed"]).pooled_bound.nunique() == 1).all()  # one instance per cell
    fill = table[table.policy.isin(["gadget", "gadget-lp-rs-mde"])]
    assert (fill.fill_gain >= -1e-9).all()
    assert (table[table.policy == "gadget-nofill"].fill_gain == 0).all()


def test_pooled_bound_lies_between_the_ddljs_lp_relaxation_and_the_alone_bound():
    # a relaxation of DDLJS's LP relaxation: above it (so above every schedule), below the alone bound
    from clusteropt.instances.gadget.instance import gadget_preset
    from clusteropt.models.gadget.ddljs import build_ddljs
    from clusteropt.solvers import solve

    for utility, seed in (("sqrt", 0), ("log", 1), ("sigmoid", 2), ("sqrt", 3)):
        inst = gadget_preset("tiny", jobs=6, seed=seed, utility=utility)
        if utility == "sigmoid":
            inst = gx.loaded_sigmoid(inst, seed, share=(0.1, 0.5))
        pooled = gx.pooled_bound(inst)["pooled_bound"]
        relaxed = solve(build_ddljs(inst, relax=True)).objective
        assert relaxed <= pooled * (1 + 1e-7) + 1e-9
        assert pooled <= inst.alone_bound() * (1 + 1e-7) + 1e-9
    # the capacity rows bite: 12 jobs on the tiny cluster's few GPUs
    inst = gadget_preset("tiny", jobs=12, seed=4, utility="sqrt")
    assert gx.pooled_bound(inst)["pooled_bound"] < 0.99 * inst.alone_bound()


def test_pooled_bound_of_issue_19():
    # the instance issue 19 measured (paper preset, 100 jobs, seed 11, sqrt): GADGET's greedy
    # reached 1,246,190, LAS 1,190,006, DRF 1,077,914, FIFO 954,362; the alone bound is 1,307,301
    from clusteropt.instances.gadget.instance import gadget_preset

    inst = gadget_preset("paper", jobs=100, seed=11, utility="sqrt")
    pooled = gx.pooled_bound(inst)["pooled_bound"]
    assert 1_246_190 <= pooled < inst.alone_bound()
    assert pooled == pytest.approx(1_246_255, rel=1e-4)


def test_loaded_sigmoid():
    from clusteropt.instances.gadget.instance import gadget_preset

    inst = gadget_preset("paper", jobs=30, seed=5)
    a, b = gx.loaded_sigmoid(inst, 7), gx.loaded_sigmoid(inst, 7)
    np.testing.assert_array_equal(a.utility_params, b.utility_params)  # seeded
    assert not np.array_equal(a.utility_params[:, 2], gx.loaded_sigmoid(inst, 8).utility_params[:, 2])
    share = a.utility_params[:, 2] / (a.zeta * a.budget)
    lo, hi = gx.LOADED_SHARE
    assert ((share >= lo - 1e-3) & (share <= hi + 1e-3)).all()
    np.testing.assert_array_equal(a.utility_params[:, :2], inst.utility_params[:, :2])  # only lambda_3 moves
    np.testing.assert_array_equal(a.arrival, inst.arrival)
    cell = gx.utility_instance({"n_jobs": 30, "horizon": 200, "utility": "sigmoid-loaded"}, 5)
    np.testing.assert_array_equal(cell.utility_params, gx.loaded_sigmoid(inst, 5).utility_params)
    with pytest.raises(ValueError, match="sigmoid"):
        gx.loaded_sigmoid(gadget_preset("tiny", jobs=2, seed=0, utility="sqrt"), 0)


def test_quick_capacity(tmp_path):
    table = _quick(tmp_path, "gadget-capacity")
    assert table.embedded_ratio.between(0, 1).all()
    assert table.multi_server_share.between(0, 1).all() and table.gpu_utilization.between(0, 1 + 1e-9).all()
    node, edge = table[table.resource == "node"], table[table.resource == "edge"]
    assert np.allclose(node.total_gpus, 100 * node.units) and np.allclose(node.edge_units_actual, 1.0)
    assert np.allclose(edge.rack_bandwidth, 200 * edge.units) and np.allclose(edge.node_units_actual, 1.0)
    # one instance per trial, whatever the capacity (only the cluster is scaled)
    assert (table.groupby("trial").mean_active.nunique() == 1).all()


def test_quick_slot_ratio(tmp_path):
    table = _quick(tmp_path, "gadget-slot-ratio")
    assert set(table.policy) == {"gadget-lp-rs-mde", "gadget", "gadget-lp-rs-mde-paper", "gadget-nofill"}
    assert (table.slots_not_optimal == 0).all()
    assert (table.slots == table.slots_counted + table.slots_negligible + table.slots_not_optimal).all()
    assert (table[table.utility == "sqrt"].slots_counted > 0).all()  # sqrt gains never vanish
    feasible = table[table.policy != "gadget-lp-rs-mde-paper"]
    counted = feasible[feasible.slots_counted > 0]
    assert (counted.ratio_max <= 1 + 1e-6).all() and (counted.ratio_min > 0).all()
    assert (feasible.slots_above_one == 0).all()
    lp = counted[counted.policy == "gadget-lp-rs-mde"]
    assert not lp.empty and (lp.drawn_ratio_max <= 1 + 1e-6).all() and (lp.greedy_ratio_max <= 1 + 1e-6).all()
    # the scheduler's fill only adds gain to Alg. 2's rounding
    assert (lp.ratio_mean >= lp.drawn_ratio_mean - 1e-9).all()


def test_quick_slot_ratio_paper_scale(tmp_path):
    table = _quick(tmp_path, "gadget-slot-ratio-paper")
    assert (table.preset == "paper").all() and (table.slots_counted > 0).all()
    default = table[table.policy == "gadget-lp-rs-mde"]
    assert (default.ratio_max <= 1 + 1e-6).all() and (default.drawn_ratio_max <= 1 + 1e-6).all()
    assert (default.ratio_mean >= default.drawn_ratio_mean - 1e-9).all()
    paper = table[table.policy == "gadget-lp-rs-mde-paper"]  # no fill: the slot's gain is the draw's
    assert len(paper) == 1 and np.allclose(paper.ratio_mean, paper.drawn_ratio_mean)


def test_quick_competitive(tmp_path):
    pytest.importorskip("clusteropt.models.gadget.ddljs")  # the offline DDLJS optimum
    table = _quick(tmp_path, "gadget-competitive")
    assert table.opt_optimal.astype(bool).all()
    ok = table[~table.degenerate.astype(bool)]
    assert not ok.empty
    assert (ok.ratio <= 1 + 1e-6).all() and (ok.ratio >= ok.theorem10_bound).all()
    assert np.allclose(ok.theorem10_bound, 1 / (3 * ok.gamma + 1))
    # one offline optimum per instance, shared by the policies
    assert (table.groupby(["n_jobs", "utility", "seed"]).opt_value.nunique() == 1).all()


def test_degenerate_sigmoid_instance_has_no_ratio():
    # every sigmoid job of this tiny instance stays far below its inflection: utilities ~1e-20,
    # under the MILP solver's tolerances, so its "optimum" is not divided by
    pytest.importorskip("clusteropt.models.gadget.ddljs")
    params = {"n_jobs": 8, "horizon": 4, "utility": "sigmoid", "opt_time_limit": 60.0}
    out = gx.run_competitive_cell(params, 1, "gadget")
    assert out["degenerate"] and out["ratio"] is None and out["above_bound"] is None
    assert out["opt_value"] < gx.MIN_OPTIMUM and out["verified"]


def test_scale_cluster():
    from clusteropt.instances.gadget.instance import fat_tree_cluster

    c = fat_tree_cluster(50, seed=3)
    for units in (0.25, 1.0, 3.0):
        s = gx.scale_cluster(c, node_units=units)
        assert s.capacity.sum() == round(100 * units) and np.array_equal(s.capacity, np.round(s.capacity))
        assert np.array_equal(s.bandwidth, c.bandwidth)
    s = gx.scale_cluster(c, edge_units=2.0)
    rack = (c.links >= c.n_servers).all(axis=1)
    assert s.bandwidth[rack].mean() == pytest.approx(400.0)
    assert np.allclose(s.bandwidth / c.bandwidth, s.bandwidth[0] / c.bandwidth[0])  # one factor for all links
    with pytest.raises(ValueError, match="node_units"):
        gx.scale_cluster(c, node_units=0)


def test_a_schedule_failing_verification_raises(monkeypatch):
    from clusteropt.decisions.gadget import SlotAllocation

    class Overbook:
        name = "overbook"

        def reset(self, instance, rng=None):
            self.instance_ = instance

        def step(self, t, obs):
            inst = self.instance_
            alloc = SlotAllocation.empty(inst.n_jobs, inst.cluster.n_servers)
            if obs.arrived.size:
                alloc.workers[obs.arrived[0], 0] = int(inst.cluster.capacity[0, 0]) + 1
            return alloc

    monkeypatch.setattr(gx, "make_gadget_policy", lambda policy: Overbook())
    with pytest.raises(RuntimeError, match="failed verification"):
        gx.run_utility_cell({"n_jobs": 10, "horizon": 20, "utility": "sigmoid"}, 0, "gadget")
