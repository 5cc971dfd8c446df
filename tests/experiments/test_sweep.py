"""run_sweep: identical tables on every backend, failures recorded, kill -9 and resume."""

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from clusteropt.experiments import ResultsStore, get_experiment, run_sweep
from tests.experiments import specs

ROOT = Path(__file__).resolve().parents[2]


def test_worker_placement_tables_identical_across_backends(tmp_path, dask_client):
    spec = get_experiment("worker-placement-gap")
    serial = run_sweep(spec, quick=True, n_jobs=1, store=tmp_path / "serial.sqlite", progress=False)
    loky = run_sweep(spec, quick=True, n_jobs=2, store=tmp_path / "loky.sqlite", progress=False)
    dask = run_sweep(spec, quick=True, scheduler=dask_client, store=tmp_path / "dask.sqlite", progress=False)
    assert len(serial) == len(spec.quick_variant().cells()) == 16
    assert (serial.status == "ok").all(), serial.error.tolist()
    pd.testing.assert_frame_equal(serial, loky)
    pd.testing.assert_frame_equal(serial, dask)
    # the table is in the spec's order and carries no timings by default
    assert list(serial.policy[:2]) == ["ilp", "lp-floor"]
    assert not any(c.endswith("seconds") for c in serial.columns)


def test_worker_placement_cells_obey_the_bounds(tmp_path):
    table = run_sweep("worker-placement-gap", quick=True, store=tmp_path / "s.sqlite", progress=False)
    assert table.verified.all()
    wide = table.pivot_table(index=["n_jobs", "demand_scale", "seed"], columns="policy",
                             values=["utility", "lp_bound"])
    # LP-floor <= ILP optimum <= LP bound (the relaxation bounds every integral placement)
    assert (wide["utility"]["lp-floor"] <= wide["utility"]["ilp"] + 1e-6).all()
    assert (wide["utility"]["ilp"] <= wide["lp_bound"]["ilp"] + 1e-6).all()
    # at scale 1 only GPUs bind and the LP is integral; at scale 3 rounding the LP loses
    scale1, scale3 = wide.xs(1.0, level="demand_scale"), wide.xs(3.0, level="demand_scale")
    assert (abs(scale1["utility"]["lp-floor"] - scale1["lp_bound"]["ilp"]) < 1e-6).all()
    assert (scale3["utility"]["lp-floor"] < scale3["utility"]["ilp"] - 1e-6).any()


def test_sample_spec_identical_on_dask_by_address(tmp_path, dask_client):
    a = run_sweep(specs.SAMPLE, n_jobs=2, store=tmp_path / "a.sqlite", progress=False)
    b = run_sweep(specs.SAMPLE, scheduler=dask_client.scheduler.address, store=tmp_path / "b.sqlite",
                  progress=False)
    pd.testing.assert_frame_equal(a, b)
    # the values are those of the cell's own seed, computed here independently
    row = a[(a.n == 10) & (a.seed == 2) & (a.policy == "max")].iloc[0]
    assert row.value == np.random.default_rng(int(row.cell_seed)).random(10).max()


def test_failing_hanging_and_crashing_cells_are_recorded(tmp_path):
    store = tmp_path / "m.sqlite"
    table = run_sweep(specs.MISBEHAVING, n_jobs=2, store=store, progress=False)
    assert len(table) == 14  # every cell recorded: the sweep went on
    status = dict(zip(zip(table.n, table.policy, strict=True), table.status, strict=True))
    for n in (1, 2):
        assert status[n, "ok"] == status[n, "print"] == status[n, "threads"] == "ok"
        assert status[n, "raise"] == status[n, "crash"] == status[n, "bad-metric"] == "failed"
        assert status[n, "hang"] == "timeout"
    errors = dict(zip(zip(table.n, table.policy, strict=True), table.error, strict=True))
    assert errors[1, "raise"] == "ValueError: bad cell n=1"
    assert "SIGSEGV" in errors[1, "crash"]
    assert "metric 'value' = list" in errors[1, "bad-metric"]
    assert "time limit of 2 s" in errors[1, "hang"]
    # solvers and BLAS are single-threaded inside workers
    threads = table[table.policy == "threads"]
    assert (threads.solver_threads == 1).all() and (threads.omp == "1").all()
    with ResultsStore(store) as db:
        failures = db.failures("test-misbehaving")
        timed = db.table(specs.MISBEHAVING, timing=True)
    assert "Traceback" in failures[failures.policy == "raise"].traceback.iloc[0]
    assert (timed[timed.policy == "hang"].seconds >= 2.0).all()


def test_resume_skips_stored_cells_and_retry_reruns_chosen_statuses(tmp_path):
    store = tmp_path / "m.sqlite"
    spec = specs.MISBEHAVING
    run_sweep(spec, store=store, progress=False, timeout=0.5)
    with ResultsStore(store) as db:
        before = db.table(spec, timing=True).set_index(["n", "policy"]).finished_at
    run_sweep(spec, store=store, progress=False, timeout=0.5)  # nothing to do
    with ResultsStore(store) as db:
        assert db.table(spec, timing=True).set_index(["n", "policy"]).finished_at.equals(before)
    run_sweep(spec, store=store, progress=False, timeout=0.5, retry=["failed"])
    with ResultsStore(store) as db:
        after = db.table(spec, timing=True).set_index(["n", "policy"]).finished_at
        assert db.count("test-misbehaving") == 14
    changed = set(after.index[after != before])
    assert changed == {(n, p) for n in (1, 2) for p in ("raise", "crash", "bad-metric")}


def test_resume_false_reruns_and_versions_are_kept_apart(tmp_path):
    store = tmp_path / "s.sqlite"
    first = run_sweep(specs.SAMPLE, quick=True, store=store, progress=False, version="v1")
    again = run_sweep(specs.SAMPLE, quick=True, store=store, progress=False, version="v1", resume=False)
    pd.testing.assert_frame_equal(first, again)
    other = run_sweep(specs.SAMPLE, quick=True, store=store, progress=False, version="v2")
    assert set(other.code_version) == {"v2"}
    with ResultsStore(store) as db:
        assert db.count("test-sample") == 2 * len(first)
        assert list(db.versions("test-sample").code_version) == ["v2", "v1"]


def test_quick_cells_are_reused_by_the_full_sweep(tmp_path):
    store = tmp_path / "s.sqlite"
    quick = run_sweep(specs.SAMPLE, quick=True, store=store, progress=False)
    full = run_sweep(specs.SAMPLE, store=store, progress=False)
    assert len(quick) == 8 and len(full) == 18
    merged = full.merge(quick, on=["n", "seed", "policy"], suffixes=("", "_quick"))
    assert len(merged) == 8 and (merged.value == merged.value_quick).all()


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"n_jobs": 0}, "n_jobs = 0"),
        ({"n_jobs": True}, "n_jobs = True"),
        ({"backend": "ray"}, "backend = 'ray'"),
        ({"backend": "joblib", "scheduler": "tcp://127.0.0.1:1"}, "needs backend='dask'"),
        ({"timeout": -1}, "timeout = -1"),
        ({"retry": ["ok"]}, "retry = "),
    ],
)
def test_run_sweep_refuses_bad_arguments(tmp_path, kwargs, match):
    store = tmp_path / "s.sqlite"
    with pytest.raises(ValueError, match=match):
        run_sweep(specs.SAMPLE, store=store, progress=False, **kwargs)


def test_unknown_experiment_lists_registered():
    with pytest.raises(ValueError, match=r"unknown experiment 'nope'; registered: .*worker-placement-gap"):
        run_sweep("nope")


def _count(path: Path) -> int:
    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5) as conn:
            return conn.execute("SELECT COUNT(*) FROM cells").fetchone()[0]
    except sqlite3.OperationalError:
        return 0


def test_kill_minus_nine_then_resume_loses_and_duplicates_nothing(tmp_path):
    store = tmp_path / "killed.sqlite"
    cmd = [sys.executable, "-m", "clusteropt.cli", "experiment", "run", "test-slow",
           "--module", "tests.experiments.specs", "--store", str(store), "--jobs", "2"]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while _count(store) < 6:
            assert proc.poll() is None, "the sweep ended before it could be killed"
            assert time.monotonic() < deadline, "the sweep wrote no cells in 120 s"
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # its joblib workers, if they outlived it
        except ProcessLookupError:
            pass
    killed_at = _count(store)
    assert 6 <= killed_at < 40, killed_at
    with ResultsStore(store) as db:
        survivors = db.table(specs.SLOW, timing=True).set_index("n").finished_at

    resumed = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    assert f"{killed_at} in store" in resumed.stderr
    with ResultsStore(store) as db:
        final = db.table(specs.SLOW)
        timed = db.table(specs.SLOW, timing=True).set_index("n").finished_at
        assert db.count() == 40
    # cells finished before the kill were not run again
    assert timed.loc[survivors.index].equals(survivors)
    uninterrupted = run_sweep(specs.SLOW, n_jobs=2, store=tmp_path / "whole.sqlite", progress=False)
    assert not final.duplicated(["n", "seed", "policy"]).any()
    pd.testing.assert_frame_equal(final, uninterrupted)
