"""The paper-002 experiments run quick, verify every run, and land near the exact region."""

import math

import numpy as np
import pytest
from matplotlib.figure import Figure

from clusteropt.experiments import get_experiment, run_sweep, write_report
from clusteropt.experiments.realtime import _area_table, _fig3_regions, run_region_cell

# the exact boundary on the axes, by hand: one application alone runs every job it generates,
# so its rate is sum over job sizes s of P[|J| = s] * P^s (two workers)
APP1_ALONE = 2 * 0.5 * 0.5 * 0.9 + 0.25 * 0.81                     # P[J_1j] = 0.5, P_1j = 0.9
APP2_ALONE = {("generation2", 0.3): 2 * 0.3 * 0.7 * 0.9 + 0.09 * 0.81, ("generation2", 0.5): APP1_ALONE,
              ("success2", 0.7): 0.5 * 0.7 + 0.25 * 0.49, ("success2", 0.9): APP1_ALONE}


@pytest.mark.parametrize("name, setting", [("realtime-fig3", "generation2"), ("realtime-fig4", "success2")])
def test_quick_region_experiments(tmp_path, name, setting):
    spec = get_experiment(name).quick_variant()
    table = run_sweep(spec, store=tmp_path / "s.sqlite", n_jobs=1, progress=False)
    assert len(table) == len(spec.cells()) == 12 and (table.status == "ok").all(), table.error.tolist()
    assert table.verified.all()
    # the paper's test holds on the verified run at theta, and theta * d is the boundary point
    assert (table.rate1 >= table.r1 - 0.01 - 1e-12).all() and (table.rate2 >= table.r2 - 0.01 - 1e-12).all()
    assert np.allclose(table.r1, table.theta * table.d1) and np.allclose(table.r2, table.theta * table.d2)
    # the slack only enlarges the exact region; both policies land near the slack-matched one
    assert (table.exact_theta >= table.exact_theta_strict).all()
    assert table.ratio.between(0.8, 1.05).all(), table[["policy", "direction", "ratio"]]
    for value, grp in table.groupby(setting):
        assert grp.exact_theta_strict[grp.direction == 0].iloc[0] == pytest.approx(APP1_ALONE, abs=1e-9)
        assert grp.exact_theta_strict[grp.direction == 2].iloc[0] == pytest.approx(
            APP2_ALONE[setting, value], abs=1e-9)
        # the policies of one setting and direction share the exact numbers
        assert (grp.groupby("direction").exact_theta.nunique() == 1).all()
    areas = _area_table(table, setting)
    assert len(areas) == 4 and (areas.cells == 3).all()
    assert areas.area_ratio.between(0.8, 1.05).all() and (areas.area_ratio_strict >= areas.area_ratio).all()
    files = {p.name for p in write_report(spec, table, tmp_path / "report")}
    assert {"area-ratio.csv", "area-ratio.md", "regions.png", "regions.svg"} <= files


def test_quick_fig5(tmp_path):
    spec = get_experiment("realtime-fig5").quick_variant()
    table = run_sweep(spec, store=tmp_path / "s.sqlite", n_jobs=1, progress=False)
    assert len(table) == len(spec.cells()) == 18 and (table.status == "ok").all(), table.error.tolist()
    assert table.verified.all() and (table.min_rate >= table.theta - 0.01 - 1e-12).all()
    small, large = table[table.n <= 3], table[table.n > 3]
    assert small.ratio.between(0.8, 1.05).all(), small[["n", "generation", "policy", "ratio"]]
    assert large.exact_theta.isna().all()  # no LP above EXACT_MAX_N
    theta = table.groupby(["n", "generation"]).theta.mean()
    # the paper's reading of Fig. 5: at N = 2 more generation is better, at larger N worse
    assert theta[2, 0.3] < theta[2, 0.5] and theta[4, 0.3] > theta[4, 0.5]
    assert theta[2, 0.5] > theta[3, 0.5] > theta[4, 0.5]
    files = {p.name for p in write_report(spec, table, tmp_path / "report")}
    assert {"r-vs-n.csv", "r-vs-n.md", "r-vs-n.png", "r-vs-n.svg"} <= files


def test_region_figure_and_table_on_a_partial_table():
    import pandas as pd

    rows = [{"status": "ok", "generation2": 0.3, "policy": "sqrt-greedy", "directions": 3, "direction": i,
             "theta": t, "exact_theta": t, "exact_theta_strict": t - 0.01, "ratio": 1.0, "d1": d1, "d2": d2,
             "r1": t * d1, "r2": t * d2}
            for i, (t, d1, d2) in enumerate([(0.6, 1.0, 0.0), (0.5, 0.7071, 0.7071), (0.4, 0.0, 1.0)])]
    table = pd.DataFrame([*rows, {**rows[0], "status": "failed", "policy": "max-weight"}])
    assert isinstance(_fig3_regions(table), Figure)
    areas = _area_table(table, "generation2")
    assert areas.area_ratio.tolist() == [1.0] and areas.area_ratio_strict.iloc[0] > 1.0
    partial = _area_table(table.drop(index=1), "generation2")       # a direction missing: no area
    assert math.isnan(partial.area_ratio.iloc[0]) and partial.cells.iloc[0] == 2
    with pytest.raises(ValueError, match="no cell with status 'ok'"):
        _area_table(table.assign(status="failed"), "generation2")


def test_bad_direction_index():
    with pytest.raises(ValueError, match=r"expected an index in 0\.\.2"):
        run_region_cell({"generation2": 0.3, "directions": 3, "direction": 3, "frames": 10, "tol": 0.01}, 0,
                        "sqrt-greedy")
