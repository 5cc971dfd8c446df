"""The paper-003 (mlBroker) experiments run quick, verify every schedule, and respect their bounds."""

import math

import numpy as np
import pytest

from clusteropt.experiments import broker as bx
from clusteropt.experiments import get_experiment, run_sweep, write_report

FILES = {
    "broker-fractional": {"fractional-ratio.csv", "fractional-ratio.md", "fig5-fractional.png"},
    "broker-rounding": {"rounding-ratio.csv", "rounding-ratio.md", "fig6-rounding.png"},
    "broker-rounding-dcs": {"rounding-ratio.csv", "fig7-roundings.png"},
    "broker-cost": {"costs.csv", "costs.md", "totals.csv", "fig8-total.png", "fig11-cost1.png", "fig12-cost2.png",
                    "fig13-cost3.png", "fig14-cost4.png"},
    "broker-ratio": {"ratio.csv", "ratio.md", "fig9-slots.png", "fig10-jobs.png"},
    "broker-deploy": {"deploy.csv", "deploy.md", "deploy.png"},
}
TOL = 1e-3  # SCS puts A_fractional up to ~1e-4 (relative) below P_f


def _quick(tmp_path, name):
    spec = get_experiment(name).quick_variant()
    table = run_sweep(spec, store=tmp_path / "s.sqlite", progress=False)
    assert len(table) == len(spec.cells()) and (table.status == "ok").all(), table.error.tolist()
    files = {p.name for p in write_report(spec, table, tmp_path / "report")}
    assert FILES[name] <= files, files
    return table


def test_quick_fractional(tmp_path):
    table = _quick(tmp_path, "broker-fractional")
    assert set(table.price_form) == {"tight", "bigm"}
    # P_f is a lower bound on A_fractional's cost of (9) in the same price form; Theorem 3's r1 above it
    assert (table.ratio >= 1 - TOL).all() and table.within_r1.astype(bool).all()
    assert np.allclose(table.theorem3_r1, [bx.theorem3_r1(e) for e in table.epsilon])
    # the epsilons of one (DCs, price form) share the instance and P_f
    assert (table.groupby(["n_dcs", "price_form"]).lp_bound.nunique() == 1).all()
    # the big-M relaxation sees far less of the resource cost than the hull
    lp = table.groupby(["n_dcs", "price_form"]).lp_bound.first().unstack()
    assert (lp.bigm < lp.tight).all()


def test_quick_rounding(tmp_path):
    table = _quick(tmp_path, "broker-rounding")
    assert table.verified.astype(bool).all() and set(table.policy) == set(bx.ROUNDINGS)
    # rounding never goes below the fractional solution it rounds (same slot problems, integral)
    assert (table.ratio >= 1 - 1e-6).all()
    assert np.allclose(table.rounded_total, table[["C1", "C2", "C3", "C4"]].sum(axis=1))
    # the three roundings of one instance round the same fractional run
    assert (table.groupby(["capacity", "data_per_slot"]).fractional_total.nunique() == 1).all()


def test_quick_rounding_dcs(tmp_path):
    table = _quick(tmp_path, "broker-rounding-dcs")
    assert table.verified.astype(bool).all() and (table.ratio >= 1 - 1e-6).all()
    assert (table.groupby("n_dcs").fractional_total.nunique() == 1).all()


def test_quick_cost(tmp_path):
    table = _quick(tmp_path, "broker-cost")
    assert table[table.policy != "opt"].verified.astype(bool).all()
    assert table[table.policy == "opt"].verified.isna().all()  # an LP solution, not a schedule
    assert np.allclose(table.total, table[["C1", "C2", "C3", "C4"]].sum(axis=1))
    for size, here in table.groupby("data_per_slot"):
        opt = here[here.policy == "opt"].total.item()
        others = here[here.policy != "opt"]
        assert (others.total >= opt * (1 - 1e-6)).all(), size  # P_f (hull) is a lower bound
        assert here[here.policy == "local"].C1.item() == 0  # Local moves no data
        assert here[here.policy == "central"].C4.item() == 0  # Central keeps workers with the PS
        ml = here[here.policy == "mlbroker"]
        assert (ml.total >= ml.fractional_total * (1 - 1e-6)).all()
        # the paper-literal mlBroker: big-M rows, A_round as written; its run needed no repair (or it would fail)
        paper = here[here.policy == "mlbroker-paper"]
        assert paper[["price_form", "rounding_variant"]].values.tolist() == [["bigm", "paper"]]
        assert ml[["price_form", "rounding_variant"]].values.tolist() == [["tight", "package"]]
        assert (paper.workers_added == 0).all() and (paper.total >= paper.fractional_total).all()
        plus = here[here.policy == "mlbroker-plus"]  # the same A_fractional run, another integral step
        assert plus.fractional_total.item() == pytest.approx(ml.fractional_total.item(), rel=1e-9)
    from clusteropt.experiments.broker import _cost_table

    costs = _cost_table(table)
    assert costs.data_per_slot.unique().tolist() == [500.0]
    assert list(costs.policy) == list(bx.COST_POLICIES)
    assert costs.set_index("policy").loc["mlbroker", "mlbroker_saving"] == 0


def test_quick_ratio(tmp_path):
    table = _quick(tmp_path, "broker-ratio")
    assert table.verified.astype(bool).all()
    assert table.opt_optimal.astype(bool).all() and (table.denominator == "milp").all()
    # the MILP optimum is a lower bound on every schedule and P_f on the MILP
    assert (table.ratio >= 1 - 1e-6).all() and (table.ratio_lp >= table.ratio - 1e-9).all()
    assert (table.lp_bound <= table.opt_value * (1 + 1e-6)).all()
    assert (table.n_jobs_actual == table.horizon * table.jobs_per_slot).all()
    assert (table.groupby(["horizon", "jobs_per_slot"]).opt_value.nunique() == 1).all()
    assert set(table.policy) == {"mlbroker", "mlbroker-paper", "mlbroker-plus", "local", "central", "oasis"}
    assert (table[table.policy.str.startswith("mlbroker")].workers_added == 0).all()


def test_quick_deploy(tmp_path):
    table = _quick(tmp_path, "broker-deploy")
    assert table.verified.astype(bool).all() and (table.ratio >= 1 - 1e-6).all()
    assert set(table.deploy_per) == {"model", "data"}
    share = (table.C3 / table.total).groupby(table.deploy_per).mean()
    assert share["data"] > 10 * share["model"]  # the reading moves C3 from negligible to a real share
    # one instance per (T, jobs per slot) but for the deployment costs: the same data, other optima
    opt = table.groupby(["horizon", "jobs_per_slot", "deploy_per"]).opt_value.first().unstack()
    assert (opt["data"] > opt["model"]).all()


def test_deploy_per_changes_only_the_deployment_cost():
    base = {"preset": "small", "jobs_per_slot": 2, "horizon": 6, "trial": 0}
    a = bx.broker_instance({**base, "deploy_per": "model"})
    b = bx.broker_instance({**base, "deploy_per": "data"})
    for field in ("price_a", "threshold", "transfer_cost", "arrival", "data", "capacity", "traffic"):
        assert np.array_equal(getattr(a, field), getattr(b, field)), field
    assert np.array_equal(a.deploy_cost, bx.broker_instance(base).deploy_cost)  # model: the default
    assert (b.deploy_cost > 100 * a.deploy_cost).all()


def test_instance_matches_the_presets():
    from clusteropt.instances.broker import broker_preset

    for preset, kw in (("paper", {"n_jobs": 5, "horizon": 6}), ("small", {"n_jobs": 8, "horizon": 10})):
        params = {"preset": preset, **kw, "trial": 1}
        a = bx.broker_instance(params)
        b = broker_preset(preset, jobs=kw["n_jobs"], horizon=kw["horizon"], seed=bx.instance_seed(params))
        fields = ("price_a", "price_b", "threshold", "transfer_cost", "arrival", "data", "capacity", "traffic")
        for field in fields:
            assert np.array_equal(getattr(a, field), getattr(b, field)), (preset, field)


def test_data_and_capacity_keep_the_instance():
    base = {"preset": "paper", "n_jobs": 6, "horizon": 5, "trial": 0}
    a = bx.broker_instance({**base, "data_per_slot": 100.0, "capacity": 16.0})
    b = bx.broker_instance({**base, "data_per_slot": 700.0, "capacity": 66.0})
    assert np.array_equal(a.arrival, b.arrival) and np.array_equal(a.price_a, b.price_a)
    assert np.allclose(7 * a.data, b.data)  # the same split, scaled
    assert np.all(a.capacity == 16.0) and np.all(b.capacity == 66.0)
    c = bx.broker_instance({**base, "trial": 1})
    assert not np.array_equal(bx.broker_instance(base).data, c.data)


def test_theorem3_r1():
    assert bx.theorem3_r1(1.0) == pytest.approx(2 + 2 * math.log(2))
    assert bx.theorem3_r1(0.1) > bx.theorem3_r1(1.0)  # worse with smaller epsilon


def test_a_schedule_failing_verification_raises(monkeypatch):
    from clusteropt.online.broker import Local

    class Short(Local):
        def step(self, t, obs):
            dec, info = super().step(t, obs)
            dec.y[:] = 0  # no workers: (8a) fails wherever there are data
            return dec, info

    monkeypatch.setattr("clusteropt.online.broker.make_policy", lambda name, **kw: Short())
    with pytest.raises(RuntimeError, match="failed verification"):
        bx.run_cost_cell({"preset": "small", "n_jobs": 4, "horizon": 4, "data_per_slot": 500.0, "trial": 0}, 0,
                         "local")
