"""`clusteropt experiment run --all` / `report --all`: every experiment, and an index page (issue 19)."""

from __future__ import annotations

import pytest

import clusteropt.experiments
from clusteropt.cli import main
from tests.experiments import specs


@pytest.fixture
def two_experiments(monkeypatch):
    """The registry seen by --all: two small test experiments."""
    monkeypatch.setattr(clusteropt.experiments, "EXPERIMENTS", {"test-sample": specs.SAMPLE,
                                                                "worker-placement-gap": clusteropt.experiments.
                                                                EXPERIMENTS["worker-placement-gap"]})


def test_run_all_quick_reports_every_experiment_and_writes_the_index(tmp_path, capsys, two_experiments):
    store, out = tmp_path / "s.sqlite", tmp_path / "report"
    code = main(["experiment", "run", "--all", "--quick", "--store", str(store), "--out", str(out)])
    text = capsys.readouterr().out
    assert code == 0, text
    assert (out / "test-sample" / "summary.md").is_file()
    assert (out / "worker-placement-gap" / "results.csv").is_file()
    index = (out / "index.md").read_text()
    rows = [line for line in index.splitlines() if line.startswith("| [")]
    assert [r.split("]")[0] for r in rows] == ["| [test-sample", "| [worker-placement-gap"]
    version = clusteropt.experiments.code_version()
    assert all(f"| {version} |" in r for r in rows[1:])  # the package's own experiment at this version
    assert "| 0, 1 | 8 / 8 |" in rows[0]  # quick: seeds 0 and 1, 2 n x 2 policies x 2 seeds


def test_report_all_lists_experiments_without_results(tmp_path, capsys, two_experiments):
    store, out = tmp_path / "s.sqlite", tmp_path / "report"
    assert main(["experiment", "run", "test-sample", "--quick", "--store", str(store), "--module",
                 "tests.experiments.specs"]) == 0
    assert main(["experiment", "report", "--all", "--quick", "--store", str(store), "--out", str(out)]) == 0
    capsys.readouterr()
    index = (out / "index.md").read_text()
    assert "No results in the store for: worker-placement-gap." in index
    assert not (out / "worker-placement-gap").exists()


@pytest.mark.parametrize("argv", [["experiment", "run", "--quick"], ["experiment", "run", "test-sample", "--all"],
                                  ["experiment", "run", "--all", "--param", "n=1"]])
def test_name_and_all_exclude_each_other(tmp_path, capsys, argv):
    code = main([*argv, "--store", str(tmp_path / "s.sqlite")])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1 and ("--all" in err)


def test_report_all_writes_every_report_when_one_fails_and_names_it(tmp_path, capsys, monkeypatch):
    """A report that fails in part (here a broken figure) neither stops the reports after it nor the
    index; the index and the exit code name it.
    """
    gap = clusteropt.experiments.EXPERIMENTS["worker-placement-gap"]
    monkeypatch.setattr(clusteropt.experiments, "EXPERIMENTS", {"test-broken-report": specs.BROKEN_REPORT,
                                                                "worker-placement-gap": gap})
    store, out = tmp_path / "s.sqlite", tmp_path / "report"
    code = main(["experiment", "run", "--all", "--quick", "--store", str(store), "--out", str(out)])
    captured = capsys.readouterr()
    assert code == 2, captured.out
    assert "report of test-broken-report written to" in captured.err and "figure bad: KeyError" in captured.err
    assert (out / "test-broken-report" / "summary.md").is_file()  # the rest of the broken report
    assert (out / "worker-placement-gap" / "ratio.png").is_file()  # the report after it
    index = (out / "index.md").read_text()
    assert "| [worker-placement-gap](worker-placement-gap/summary.md) |" in index
    assert "Reports written only in part" in index and "- report of test-broken-report written to" in index
    # report --all alone does the same from the store
    again = tmp_path / "again"
    assert main(["experiment", "report", "--all", "--quick", "--store", str(store), "--out", str(again)]) == 2
    assert (again / "worker-placement-gap" / "ratio.png").is_file()


def test_failed_cells_and_a_failed_report_exit_4_and_name_both(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(clusteropt.experiments, "EXPERIMENTS", {"test-broken-report": specs.BROKEN_REPORT,
                                                                "test-misbehaving": specs.MISBEHAVING})
    store, out = tmp_path / "s.sqlite", tmp_path / "report"
    code = main(["experiment", "run", "--all", "--quick", "--store", str(store), "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 4, err
    assert "test-misbehaving: " in err and "cells did not finish ok" in err
    assert "report: report of test-broken-report written to" in err
    assert (out / "index.md").is_file() and (out / "test-misbehaving" / "summary.md").is_file()
