"""The paper-004 (ring partitioning) experiments run quick, verify every run, and keep the optima's order."""

import numpy as np
import pytest

from clusteropt.experiments import get_experiment, run_sweep, write_report
from clusteropt.experiments import ring as rx

FILES = {
    "ring-ratio": {"ratio.csv", "ratio.md", "growth.csv", "ratio-dynamic.png", "ratio-static.png",
                   "ratio-dynamic-bound.png"},
    "ring-ratio-exact": {"ratio.csv", "growth.csv", "ratio-dynamic.png", "bound.csv"},
    "ring-ratio-dp": {"exact.csv", "exact.md", "which.csv", "which.md"},
    "ring-load": {"load.csv", "load.png"},
    "ring-hit-the-cut": {"hit-the-cut.csv", "hit-the-cut.png"},
    "ring-cost-split": {"split.csv", "split.png"},
    "ring-sensitivity": {"sensitivity.csv"},
}


def _quick(tmp_path, name):
    spec = get_experiment(name).quick_variant()
    table = run_sweep(spec, store=tmp_path / "s.sqlite", progress=False)
    assert len(table) == len(spec.cells()) and (table.status == "ok").all(), table.error.tolist()
    files = {p.name for p in write_report(spec, table, tmp_path / "report")}
    assert FILES[name] <= files, files
    assert table.verified.astype(bool).all()
    assert (table.max_load_over_k <= table.augmentation + 1e-9).all()
    return table


def test_quick_ratio_exact(tmp_path):
    table = _quick(tmp_path, "ring-ratio-exact")
    assert set(table.dynamic_denominator) == {"dp"}
    # OPT_dyn <= OPT_static; no run beats OPT_dyn at its own capacity c k (the cell raises otherwise)
    assert (table.opt_dynamic <= table.opt_static + 1e-9).all()
    assert (table.total >= table.opt_dynamic_ck - 1e-9).all()
    assert (table.opt_dynamic_ck <= table.opt_dynamic + 1e-9).all()
    # the window bound is a lower bound on OPT_dyn, so ALG / bound is an upper bound on ALG / OPT_dyn
    assert (table.opt_dynamic_lb <= table.opt_dynamic + 1e-9).all() and (table.opt_dynamic_lb > 0).all()
    assert (table.ratio_dynamic_lb >= table.ratio_dynamic - 1e-9).all()
    # the unaugmented baselines cannot beat the optima at capacity k
    plain = table[table.policy.isin(["never", "static-best"])]
    assert (plain.total >= plain.opt_dynamic - 1e-9).all() and (plain.total >= plain.opt_static - 1e-9).all()
    # every promised capacity stays below n: no algorithm may put the whole ring on one server
    assert (table.augmentation * table.n / table.servers < table.n).all()


def test_quick_ratio_dp(tmp_path):
    table = _quick(tmp_path, "ring-ratio-dp")
    # every shape solved exactly; the shape parameter is spelled out in the metrics
    assert set(table.dynamic_denominator) == {"dp"}
    assert set(zip(table.n, table.servers, strict=True)) == {(8, 2), (6, 3)}
    assert set(table.policy) == set(rx.ALL_POLICIES)
    assert (table.total >= table.opt_dynamic_ck - 1e-9).all()
    exact = rx._exact_table(table)
    assert set(exact.servers) == {2, 3} and (exact.ratio_dynamic_ck >= exact.ratio_dynamic - 1e-9).all()
    which = rx._which_table(table)
    assert set(which.policy) == set(rx.ALL_POLICIES) and (which.groupby("pattern")["rank"].min() == 1).all()
    # the baselines' own ratio to the better of them is at least 1, and 1 for one of them
    base = which[which.policy.isin(["never", "greedy"])]
    assert (base.vs_baseline >= 1 - 1e-9).all()


def test_quick_ratio(tmp_path):
    table = _quick(tmp_path, "ring-ratio")
    # static-best is one of the static solutions, so never below the proved static OPT
    best = table[table.policy == "static-best"]
    assert (best.total >= best.opt_static - 1e-9).all()
    assert set(table.static_denominator) == {"milp"}
    # a bound on OPT_dyn at every n, never above the proved OPT_static
    assert (table.opt_dynamic_lb <= table.opt_static + 1e-9).all()
    assert np.isfinite(table.ratio_dynamic_lb).all()


def test_quick_hit_the_cut(tmp_path):
    table = _quick(tmp_path, "ring-hit-the-cut")
    # built against dynamic-wfa with the cell's seed: that run pays for every request
    wfa = table[table.policy == "dynamic-wfa"]
    assert np.allclose(wfa.communication, wfa.n_requests)


def test_quick_load_split_sensitivity(tmp_path):
    load = _quick(tmp_path, "ring-load")
    dyn = load[load.policy.isin(["dynamic", "dynamic-wfa", "dynamic-soft"])]
    assert np.allclose(dyn.augmentation, 2 + dyn.epsilon)
    split = _quick(tmp_path, "ring-cost-split")
    static = split[split.policy == "static"]
    parts = static[["alg_moving", "alg_merging", "alg_colour_join", "alg_rebalancing"]].sum(axis=1)
    assert np.allclose(parts, static.migration)  # the static algorithm's split adds up to its migrations
    sens = _quick(tmp_path, "ring-sensitivity")
    assert set(sens.knob) == {"default", "static.lam=0.9"}
    # one instance per trial, whatever the knob: the same static optimum in every cell
    assert (sens.groupby(["pattern", "trial"]).opt_static.nunique() == 1).all()
    # common random numbers: a knob of the static algorithm leaves dynamic-soft's run as it was
    spec = get_experiment("ring-sensitivity").quick_variant()
    params = {k: v[0] for k, v in spec.grid.items()}
    default = rx.run_ring_cell(params | {"knob": "default"}, 1, "dynamic-soft")
    other = rx.run_ring_cell(params | {"knob": "static.lam=0.9"}, 2, "dynamic-soft")
    assert default["total"] == other["total"] and default["migration"] == other["migration"]
    assert (load.groupby(["pattern", "trial", "policy"]).n_requests.nunique() == 1).all()


def test_fit_polylog():
    n = np.array([8.0, 16, 32, 64, 128])
    fit = rx.fit_polylog(n, 0.5 * np.log(n) ** 3)
    assert fit["p"] == pytest.approx(3.0) and fit["rss_log3"] < 1e-9 < fit["rss_log2"]
    assert fit["q"] < 1.0
    poly = rx.fit_polylog(n, n ** 0.9)
    assert poly["q"] == pytest.approx(0.9)


def test_instance_seed_ignores_the_algorithm_parameters():
    base = {"n": 16, "servers": 4, "requests_per_process": 4.0, "pattern": "uniform", "trial": 1}
    one = rx.instance_seed(base | {"epsilon": 0.5, "knob": "default"}, seed=11)
    two = rx.instance_seed(base | {"epsilon": 1.5, "knob": "static.lam=0.6"}, seed=99)
    assert one == two != rx.instance_seed(base | {"trial": 2}, seed=11)
    assert rx.instance_seed({"n": 16}, seed=7) == 7   # no trial: the harness's seed


def test_knob_parsing():
    assert rx._algo_params("static", {"knob": "static.lam=0.6", "epsilon": 1.0}) == {"epsilon": 1.0, "lam": 0.6}
    assert rx._algo_params("dynamic", {"knob": "static.lam=0.6"}) == {}
    assert rx._algo_params("static", {"knob": "static.max_interval=8"}) == {"max_interval": 8}
    assert rx._algo_params("never", {"epsilon": 1.0}) == {}
