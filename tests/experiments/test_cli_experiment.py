"""``clusteropt experiment list|run|report``, here and against real ``dask scheduler`` / ``dask worker``."""

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from clusteropt.cli import main
from clusteropt.experiments import ResultsStore

ROOT = Path(__file__).resolve().parents[2]
MODULE = ("--module", "tests.experiments.specs")


def run(capsys, *args):
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def test_list_shows_registered_and_module_experiments(capsys):
    code, out, _ = run(capsys, "experiment", "list", *MODULE)
    assert code == 0
    lines = {line.split()[0]: line for line in out.splitlines()[2:]}
    assert "worker-placement-gap" in lines and "test-sample" in lines
    assert "  320  " in lines["worker-placement-gap"] and "  16  " in lines["worker-placement-gap"]


def test_run_quick_with_two_jobs_writes_store_and_report(capsys, caplog, tmp_path):
    store, out_dir = tmp_path / "s.sqlite", tmp_path / "report"
    code, out, err = run(capsys, "experiment", "run", "worker-placement-gap", "--quick", "--jobs", "2",
                         "--store", store, "--out", out_dir)
    assert code == 0, err
    assert "worker-placement-gap (quick): 16 cells in" in out and "16 ok, 0 failed, 0 timed out" in out
    assert "[16/16]" in caplog.text  # not a terminal: one log line per cell
    assert {p.name for p in out_dir.iterdir()} >= {"results.csv", "summary.md", "ratio.png", "ratio.svg"}
    results = pd.read_csv(out_dir / "results.csv")
    assert len(results) == 16 and (results.status == "ok").all()
    # a second run finds everything stored; report alone rewrites the same bytes
    before = {p.name: p.read_bytes() for p in out_dir.iterdir()}
    code, out, err = run(capsys, "experiment", "run", "worker-placement-gap", "--quick", "--store", store)
    assert code == 0 and "16 in store" in caplog.text and "0 to run" in caplog.text
    code, out, err = run(capsys, "experiment", "report", "worker-placement-gap", "--quick", "--store", store,
                         "--out", out_dir)
    assert code == 0, err
    assert {p.name: p.read_bytes() for p in out_dir.iterdir()} == before


def test_failed_cells_give_exit_code_4(capsys, tmp_path):
    code, out, err = run(capsys, "experiment", "run", "test-misbehaving", *MODULE,
                         "--store", tmp_path / "m.sqlite", "--timeout", "0.5")
    assert code == 4
    assert "14 cells in" in out and "6 ok, 6 failed, 2 timed out" in out
    last = err.strip().splitlines()[-1]
    assert last.startswith("error: 8 cells did not finish ok; first: seed=3 policy=raise: ValueError")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("experiment", "run", "nope"), "unknown experiment 'nope'; registered:"),
        (("experiment", "run", "test-sample", *MODULE, "--jobs", "0"), "n_jobs = 0"),
        (("experiment", "run", "test-sample", "--module", "no_such_module_x"),
         "--module no_such_module_x: cannot"),
        (("experiment", "report", "worker-placement-gap", "--store", "missing.sqlite", "--out", "r"),
         "no such results store: missing.sqlite"),
    ],
)
def test_bad_input_is_one_line(capsys, tmp_path, monkeypatch, args, message):
    monkeypatch.chdir(tmp_path)
    code, _out, err = run(capsys, *args)
    assert code == 2 and "Traceback" not in err
    lines = err.strip().splitlines()
    assert lines[-1].startswith("error: ") and message in lines[-1], err


def test_report_of_a_store_without_the_experiment(capsys, tmp_path):
    store = tmp_path / "s.sqlite"
    ResultsStore(store).close()
    code, _out, err = run(capsys, "experiment", "report", "worker-placement-gap", "--store", store, "--out",
                         tmp_path / "r")
    assert code == 2 and "no results for experiment 'worker-placement-gap'" in err


def _start(args, **kw):
    return subprocess.Popen(args, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True, **kw)


def _stop(proc):
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def test_run_on_dask_scheduler_and_worker_processes(tmp_path):
    """The README's cluster recipe: `dask scheduler`, `dask worker`, then `--scheduler ADDR`."""
    dask = shutil.which("dask", path=str(Path(sys.executable).parent)) or shutil.which("dask")
    if dask is None:
        pytest.skip("the dask command is not installed (pip install 'clusteropt[dask]')")
    info = tmp_path / "scheduler.json"
    scheduler = _start([dask, "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                        "--scheduler-file", str(info)])
    worker = None
    try:
        deadline = time.monotonic() + 60
        while not info.is_file() or not info.read_text().strip():
            assert scheduler.poll() is None and time.monotonic() < deadline, "dask scheduler did not start"
            time.sleep(0.1)
        address = json.loads(info.read_text())["address"]
        worker = _start([dask, "worker", address, "--nworkers", "2", "--nthreads", "1", "--no-dashboard",
                         "--host", "127.0.0.1"])
        store, out_dir = tmp_path / "s.sqlite", tmp_path / "report"
        cmd = [sys.executable, "-m", "clusteropt.cli", "experiment", "run", "worker-placement-gap", "--quick",
               "--scheduler", address, "--store", str(store), "--out", str(out_dir)]
        done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        assert "16 ok, 0 failed, 0 timed out" in done.stdout
        assert f"on dask at {address}" in done.stderr
        with ResultsStore(store) as db:
            table = db.table("worker-placement-gap", timing=True)
        assert len(table) == 16 and table.worker.nunique() >= 1
        assert (out_dir / "ratio.svg").is_file()
    finally:
        for proc in (worker, scheduler):
            if proc is not None:
                _stop(proc)


# -- hostile paths: checked before any cell runs -----------------------------------------------------------


def _one_line(code, err):
    assert code == 2 and "Traceback" not in err, err
    lines = err.strip().splitlines()
    assert lines[-1].startswith("error: "), err
    return lines[-1]


@pytest.mark.parametrize("command", ["run", "report"])
def test_store_that_is_a_directory_is_one_line(capsys, tmp_path, command):
    args = ["experiment", command, "test-sample", *MODULE, "--quick", "--store", tmp_path]
    if command == "report":
        args += ["--out", tmp_path / "r"]
    code, _out, err = run(capsys, *args)
    assert f"results store {tmp_path} is a directory" in _one_line(code, err)


@pytest.mark.parametrize("command", ["run", "report"])
@pytest.mark.parametrize("where", ["file", "under a file"])
def test_out_that_cannot_be_a_directory_is_refused_before_any_cell_runs(capsys, tmp_path, command, where):
    store, existing = tmp_path / "s.sqlite", tmp_path / "existing.txt"
    existing.write_text("not a directory")
    if command == "report":
        ResultsStore(store).close()
    out = existing if where == "file" else existing / "report"
    code, _out, err = run(capsys, "experiment", command, "test-sample", *MODULE, "--quick", "--store", store,
                          "--out", out)
    line = _one_line(code, err)
    assert (f"--out {out} exists and is not a directory" if where == "file"
            else f"--out {out}: {existing} is not a directory") in line
    if command == "run":
        assert not store.exists()  # nothing ran
    assert existing.read_text() == "not a directory"


def test_a_full_disk_mid_sweep_is_one_line(capsys, tmp_path, monkeypatch):
    from clusteropt.experiments import StoreError
    from clusteropt.experiments import store as store_module

    record = store_module.ResultsStore.record
    calls = []

    def fills_up(self, *args, **kw):
        calls.append(1)
        if len(calls) > 3:
            raise StoreError(f"cannot write to results store {self.path}: database or disk is full")
        return record(self, *args, **kw)

    monkeypatch.setattr(store_module.ResultsStore, "record", fills_up)
    store = tmp_path / "s.sqlite"
    code, _out, err = run(capsys, "experiment", "run", "test-sample", *MODULE, "--quick", "--store", store)
    line = _one_line(code, err)
    assert line == (f"error: cannot write to results store {store}: database or disk is full; the sweep stopped, "
                    "the 3 cells it stored before are kept (run it again to resume)")
    monkeypatch.undo()
    with ResultsStore(store) as db:
        assert db.count() == 3


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root writes read-only files")
def test_read_only_store_is_reported_and_not_run_into(capsys, tmp_path):
    store, out_dir = tmp_path / "ro" / "s.sqlite", tmp_path / "report"
    code, _out, err = run(capsys, "experiment", "run", "test-sample", *MODULE, "--quick", "--store", store)
    assert code == 0, err
    store.chmod(0o444)
    store.parent.chmod(0o555)
    try:
        code, _out, err = run(capsys, "experiment", "report", "test-sample", *MODULE, "--quick", "--store", store,
                              "--out", out_dir)
        assert code == 0, err
        assert len(pd.read_csv(out_dir / "results.csv")) == 8
        # the full variant has cells missing: refused before one runs
        code, _out, err = run(capsys, "experiment", "run", "test-sample", *MODULE, "--store", store)
        assert "cannot write to results store" in _one_line(code, err) and "readonly database" in err
    finally:
        store.parent.chmod(0o755)
        store.chmod(0o644)
