"""The paper-000 (GADGET) experiments run quick, verify every schedule, and stay within their bounds."""

import numpy as np
import pytest

from clusteropt.experiments import gadget as gx
from clusteropt.experiments import get_experiment, run_sweep, write_report

FILES = {
    "gadget-utility": {"utility.csv", "utility.md", "utility.png", "utility.svg"},
    "gadget-capacity": {"embedded-ratio.csv", "fig5-node.png", "fig5-node.svg", "fig6-edge.png", "fig6-edge.svg"},
    "gadget-slot-ratio": {"slot-ratio.csv", "slot-ratio.md", "slot-ratio.png", "slot-ratio.svg"},
    "gadget-slot-ratio-paper": {"slot-ratio.csv", "slot-ratio.md", "slot-ratio.png", "slot-ratio.svg"},
    "gadget-competitive": {"ratio.csv", "ratio.md", "ratio.png", "ratio.svg"},
}


def _quick(tmp_path, name):
    spec = get_experiment(name).quick_variant()
    table = run_sweep(spec, store=tmp_path / "s.sqlite", progress=False)
    assert len(table) == len(spec.cells()) and (table.status == "ok").all(), table.error.tolist()
    assert table.verified.astype(bool).all()
    files = {p.name for p in write_report(spec, table, tmp_path / "report")}
    assert FILES[name] <= files
    return table


def test_quick_utility(tmp_path):
    table = _quick(tmp_path, "gadget-utility")
    assert set(table.policy) == {"gadget", "gadget-lp-rs-mde", "fifo", "drf", "las"}
    assert (table.total_utility >= 0).all()  # sigmoid
    assert (table.total_utility <= table.utility_bound * (1 + 1e-9)).all()
    assert (table.total_utility <= table.alone_bound * (1 + 1e-9)).all()
    assert (table.alone_bound <= table.utility_bound * (1 + 1e-9)).all()
    # the policies of one (params, seed) meet the same instance
    assert (table.groupby(["n_jobs", "seed"]).utility_bound.nunique() == 1).all()


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
    assert (table.capacity_violations == 0).all() and (table.slots_not_optimal == 0).all()
    assert (table.slots == table.slots_counted + table.slots_negligible + table.slots_not_optimal).all()
    assert (table[table.utility == "sqrt"].slots_counted > 0).all()  # sqrt gains never vanish
    counted = table[table.slots_counted > 0]
    assert (counted.ratio_max <= 1 + 1e-6).all() and (counted.ratio_min > 0).all()
    assert (table.slots_above_one == 0).all()
    lp = counted[counted.policy == "gadget-lp-rs-mde"]
    assert not lp.empty and (lp.drawn_ratio_max <= 1 + 1e-6).all() and (lp.greedy_ratio_max <= 1 + 1e-6).all()
    # the scheduler's fill only adds gain to Alg. 2's rounding
    assert (lp.ratio_mean >= lp.drawn_ratio_mean - 1e-9).all()


def test_quick_slot_ratio_paper_scale(tmp_path):
    table = _quick(tmp_path, "gadget-slot-ratio-paper")
    assert (table.preset == "paper").all() and (table.slots_counted > 0).all()
    assert (table.ratio_max <= 1 + 1e-6).all() and (table.drawn_ratio_max <= 1 + 1e-6).all()
    assert (table.ratio_mean >= table.drawn_ratio_mean - 1e-9).all()


def test_quick_competitive(tmp_path):
    pytest.importorskip("clusteropt.models.gadget_offline")  # the offline DDLJS optimum
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
    pytest.importorskip("clusteropt.models.gadget_offline")
    params = {"n_jobs": 8, "horizon": 4, "utility": "sigmoid", "opt_time_limit": 60.0}
    out = gx.run_competitive_cell(params, 1, "gadget")
    assert out["degenerate"] and out["ratio"] is None and out["above_bound"] is None
    assert out["opt_value"] < gx.MIN_OPTIMUM and out["verified"]


def test_scale_cluster():
    from clusteropt.instances.gadget import fat_tree_cluster

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
    from clusteropt.algorithms.gadget.allocation import SlotAllocation

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
