"""The coflow experiments run quick, verify every schedule, and never beat the LP bound."""

import pytest

from clusteropt.experiments import get_experiment, run_sweep, write_report


@pytest.mark.parametrize("name", ["coflow-ratios", "coflow-trace"])
def test_quick_coflow_experiments(tmp_path, name):
    spec = get_experiment(name).quick_variant()
    table = run_sweep(spec, store=tmp_path / "s.sqlite", progress=False)
    assert len(table) == len(spec.cells()) and (table.status == "ok").all(), table.error.tolist()
    assert table.verified.all() and table.bound_converged.all()
    assert (table.ratio >= 1 - 1e-9).all()  # the LP is a lower bound on every schedule
    # counted from release the same bound, shifted by the shared offset, is still a lower bound, and
    # the ratio can only grow: (A - o) / (B - o) >= A / B for A >= B > o >= 0
    late = table[table.lower_bound_from_release > 0]
    assert (late.cct_from_release >= late.lower_bound_from_release - 1e-6).all()
    assert (late.ratio_from_release >= late.ratio - 1e-9).all()
    # the policies of one instance share it: same bound for every policy of a (params, seed)
    keys = [c for c in ("n_coflows", "release", "trace") if c in table.columns] + ["seed"]
    assert (table.groupby(keys).lower_bound.nunique() == 1).all()
    files = {p.name for p in write_report(spec, table, tmp_path / "report")}
    assert {"ratio.csv", "ratio.md", "ratio-bars.png", "ratio-bars.svg"} <= files


def test_trace_parameter_is_replaced(tmp_path):
    spec = get_experiment("coflow-trace").with_grid(trace=[str(tmp_path / "missing.txt")])
    table = run_sweep(spec, store=tmp_path / "s.sqlite", progress=False, timeout=60)
    assert (table.status == "failed").all() and table.error.str.contains("missing.txt").all()
    with pytest.raises(ValueError, match="has no parameter nope"):
        spec.with_grid(nope=[1])


def test_quick_coflow_arrivals(tmp_path):
    spec = get_experiment("coflow-arrivals").quick_variant()
    table = run_sweep(spec, store=tmp_path / "s.sqlite", progress=False)
    assert len(table) == len(spec.cells()) and (table.status == "ok").all(), table.error.tolist()
    assert table.verified.all() and (table.ratio >= 1 - 1e-9).all()
    # +online runs are online; offline clairvoyant orderings are not; static sebf with the greedy is
    by = table.groupby("policy").online.all()
    assert by["primal-dual+online"] and by["sebf+greedy"] and not by["sincronia+greedy"]
    assert not by["primal-dual+paper"] and not by["sebf+madd"] and by["lp-order+online"]
    # all released at 0: re-planning once at slot 1 is the offline run
    at0 = table[table.arrivals == "at-0"].set_index("policy").mean_cct_slots
    assert at0["sebf+online"] == at0["sebf+greedy"] and at0["primal-dual+online"] == at0["sincronia+greedy"]
    files = {p.name for p in write_report(spec, table, tmp_path / "report")}
    assert {"arrivals.csv", "arrivals.md", "cct.png"} <= files
