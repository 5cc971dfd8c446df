"""Reports: files written, byte-identical on a second run, failures kept apart."""

import pandas as pd
import pytest

from clusteropt.experiments import get_experiment, markdown_table, run_sweep, summarize, write_report
from tests.experiments import specs


@pytest.fixture(scope="module")
def placement_table(tmp_path_factory):
    store = tmp_path_factory.mktemp("store") / "s.sqlite"
    return run_sweep("worker-placement-gap", quick=True, store=store, progress=False)


def test_report_files_are_byte_identical_across_runs(placement_table, tmp_path):
    spec = get_experiment("worker-placement-gap").quick_variant()
    first = write_report(spec, placement_table, tmp_path / "a")
    second = write_report(spec, placement_table.copy(), tmp_path / "b")
    names = sorted(p.name for p in first)
    assert names == sorted(p.name for p in second) == sorted(
        ["results.csv", "summary.csv", "summary.md", "mean-ratio.csv", "mean-ratio.md", "ratio.png", "ratio.svg"])
    for a in first:
        assert a.read_bytes() == (tmp_path / "b" / a.name).read_bytes(), a.name
    assert (tmp_path / "a" / "ratio.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert b"<svg" in (tmp_path / "a" / "ratio.svg").read_bytes()


def test_summary_means_match_the_table(placement_table):
    summary = summarize(placement_table)
    row = summary[(summary.n_jobs == 16) & (summary.demand_scale == 3.0) & (summary.policy == "ilp")].iloc[0]
    cells = placement_table[(placement_table.n_jobs == 16) & (placement_table.demand_scale == 3.0)
                            & (placement_table.policy == "ilp")]
    assert row.cells == row.ok == len(cells) == 2
    assert row.utility_mean == pytest.approx(cells.utility.mean())
    assert row.utility_std == pytest.approx(cells.utility.std())


def test_summary_counts_failures_and_keeps_their_metrics_out(tmp_path):
    table = run_sweep(specs.MISBEHAVING, store=tmp_path / "m.sqlite", progress=False, timeout=0.5)
    summary = summarize(table).set_index(["n", "policy"])
    assert summary.loc[(1, "raise"), ["cells", "ok", "failed", "timeout"]].tolist() == [1, 0, 1, 0]
    assert summary.loc[(1, "hang"), "timeout"] == 1
    assert pd.isna(summary.loc[(1, "raise"), "value_mean"])
    assert summary.loc[(2, "ok"), "value_mean"] == table[(table.n == 2) & (table.policy == "ok")].value.iloc[0]


def test_a_failing_figure_is_reported_and_the_rest_written(placement_table, tmp_path):
    spec = get_experiment("worker-placement-gap")
    broken = type(spec)(**{**spec.__dict__, "figures": {"bad": specs.broken_figure, **spec.figures}})
    with pytest.raises(RuntimeError, match="except: figure bad: KeyError"):
        write_report(broken, placement_table, tmp_path)
    assert (tmp_path / "ratio.png").is_file() and (tmp_path / "summary.md").is_file()


def test_empty_table_is_refused(tmp_path):
    spec = get_experiment("worker-placement-gap")
    with pytest.raises(ValueError, match="no results for experiment 'worker-placement-gap'"):
        write_report(spec, pd.DataFrame(), tmp_path)


def test_markdown_escapes_pipes_and_blanks_missing():
    text = markdown_table(pd.DataFrame({"a": ["x|y", None], "b": [1.0, float("nan")]}))
    assert text.splitlines()[2] == "| x\\|y |   1 |"
    assert text.splitlines()[3].startswith("|      |")
