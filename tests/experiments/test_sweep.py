"""run_sweep: identical tables on every backend, failures recorded, kill -9 and resume."""

import contextlib
import logging
import os
import signal
import sqlite3
import subprocess
import sys
import time
import uuid
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from clusteropt.experiments import ResultsStore, get_experiment, run_sweep
from tests.experiments import specs

ROOT = Path(__file__).resolve().parents[2]
log = logging.getLogger(__name__)


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


def test_a_store_that_cannot_be_written_runs_no_cell(tmp_path, monkeypatch):
    from clusteropt.experiments import StoreError
    from clusteropt.experiments import sweep as sweep_module

    path = tmp_path / "s.sqlite"
    run_sweep(specs.SAMPLE, quick=True, store=path, progress=False, version="v1")
    ran = []
    monkeypatch.setattr(sweep_module, "_run_joblib", lambda tasks, n_jobs: ran.append(tasks) or iter(()))
    with ResultsStore(path, read_only=True) as db:  # a read-only disk, as SQLite sees it
        # nothing to run: the finished results are read
        assert len(run_sweep(specs.SAMPLE, quick=True, store=db, progress=False, version="v1")) == 8
        # cells to run: refused before any runs (they would be lost at the first write)
        with pytest.raises(StoreError, match=r"cannot write to results store .*: opened read-only"):
            run_sweep(specs.SAMPLE, store=db, progress=False, version="v1")
    assert ran == []


def test_a_full_disk_mid_sweep_stops_it_and_keeps_the_stored_cells(tmp_path):
    from clusteropt.experiments import Experiment, StoreError

    # cells failing with a long policy name: rows of several KB (error, traceback, key) fill pages fast
    spec = Experiment(name="test-big-rows", run=specs.sample_cell, grid={"n": list(range(1, 13))}, seeds=[0],
                      policies=["x" * 2000])
    path = tmp_path / "s.sqlite"
    with ResultsStore(path) as db:
        pages = db._conn.execute("PRAGMA page_count").fetchone()[0]
        db._conn.execute(f"PRAGMA max_page_count = {pages + 12}")  # SQLite's own "database or disk is full"
        full = r"database or disk is full; the sweep stopped, the \d+ cells it stored"
        with pytest.raises(StoreError, match=full):
            run_sweep(spec, store=db, progress=False)
        stored = db.count()
    assert 0 < stored < 12
    with ResultsStore(path) as db:
        assert len(db.table(spec)) == stored
    assert sqlite3.connect(path).execute("PRAGMA integrity_check").fetchone()[0] == "ok"


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


# -- kill -9 of a sweep leaves nothing it started behind ---------------------------------------

_GIL_CELLS = '''
import ctypes
import os

from clusteropt.experiments import Experiment, register_experiment

PIDS = {pids!r}


def hold_the_gil(params, seed, policy):
    """Record this cell process's pid, then sleep in C without releasing the GIL (PyDLL)."""
    with open(os.path.join(PIDS, f"cell-{{os.getpid()}}"), "w"):
        pass
    ctypes.PyDLL(None).sleep(600)
    return {{"value": 0.0}}


register_experiment(Experiment(name="test-gil-orphans", run=hold_the_gil, grid={{"k": list(range({cells}))}},
                               seeds=[0], policies=["hold"], description="cells that hold the GIL in a C call"))
'''
#: Every process a sweep starts inherits its environment, this variable included; the cell
#: processes start sessions of their own and orphans are re-parented, so the variable (read from
#: /proc/<pid>/environ) finds them where the sweep's session id does not.
_MARKER = "CLUSTEROPT_TEST_SWEEP"
#: What a worker process's command line holds: loky's process name, multiprocessing's spawn (Dask)
_WORKER = {"joblib": "LokyProcess", "dask": "spawn_main"}


def _alive(pid: int) -> bool:
    """Running (a zombie waiting for its parent to reap it runs nothing and counts as dead)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return False
    return stat.rpartition(")")[2].split()[0] != "Z"


def _started_by(session: int, marker: str) -> dict[int, str]:
    """The running processes of ``session`` or with ``marker`` in their environment: pid -> command."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if os.getsid(int(entry.name)) != session and marker.encode() not in (entry / "environ").read_bytes():
                continue
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:  # gone meanwhile, or another user's
            continue
        if _alive(int(entry.name)):
            found[int(entry.name)] = command[:120]
    return found


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG and /proc are Linux's")
@pytest.mark.parametrize(("jobs", "backend", "cells", "kill_when"), [
    ("1", "joblib", 1, "cells"),  # the sweep's own cell process
    ("2", "joblib", 1, "cells"),  # a loky worker waits for its cell, the other one for work
    ("2", "joblib", 4, "workers"),  # the loky workers are starting: neither has taken a task yet
    ("2", "dask", 2, "workers"),  # its own LocalCluster's workers are starting (seconds of imports)
    pytest.param("2", "dask", 2, "cells", marks=pytest.mark.slow),  # a LocalCluster up and running: ~10 s more
    ("2", "scheduler", 2, "cells"),  # the session's cluster: workers the sweep did not start, "another machine"
])
def test_kill_minus_nine_leaves_nothing_the_sweep_started(request, tmp_path, jobs, backend, cells, kill_when):
    """``kill -9`` of the sweep: its loky workers (busy, idle or starting) and resource trackers, its
    local Dask cluster, and its cells (stuck in a C call holding the GIL; on the scheduler's workers
    too) are all gone soon after."""
    where = ["--backend", backend]
    if backend == "dask":
        pytest.importorskip("distributed")
    if backend == "scheduler":
        where = ["--scheduler", request.getfixturevalue("dask_client").scheduler.address]
    pids_dir = tmp_path / "pids"
    pids_dir.mkdir()
    (tmp_path / "gil_cells.py").write_text(_GIL_CELLS.format(pids=str(pids_dir), cells=cells))
    cmd = [sys.executable, "-m", "clusteropt.cli", "experiment", "run", "test-gil-orphans", "--module",
           "gil_cells", "--store", str(tmp_path / "s.sqlite"), "--jobs", jobs, *where]
    token = uuid.uuid4().hex
    marker = f"{_MARKER}={token}"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
           _MARKER: token}
    proc = subprocess.Popen(cmd, cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    running: list[int] = []
    left: dict[int, str] = {}
    try:
        deadline = time.monotonic() + 120
        while True:  # every worker has a cell inside the C call, or every worker is starting
            assert proc.poll() is None, "the sweep ended before it could be killed"
            assert time.monotonic() < deadline, f"no {kill_when} in 120 s"
            time.sleep(0.05)
            if kill_when == "cells" and len(list(pids_dir.iterdir())) >= min(int(jobs), cells):
                time.sleep(0.2)  # the cells are in the C sleep now
                break
            if kill_when == "workers" and sum(
                    _WORKER[backend] in c for c in _started_by(proc.pid, marker).values()) >= int(jobs):
                break
        running = [int(p.name.split("-")[1]) for p in pids_dir.iterdir()]
        started = _started_by(proc.pid, marker)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        killed = time.monotonic()
        while time.monotonic() < killed + 15:  # generous for a busy machine; 2 s is what it takes here
            left = _started_by(proc.pid, marker)
            left.update({pid: "a cell" for pid in running if _alive(pid)})
            if not left:
                break
            time.sleep(0.1)
        log.info("kill -9 of the sweep (%s, %s jobs, %d cells running, %d processes): all gone after %.1f s",
                 backend, jobs, len(running), len(started), time.monotonic() - killed)
        assert left == {}
        # the search saw them: the sweep, and the cells (in sessions of their own) by their environment
        assert proc.pid in started and (backend == "scheduler" or set(running) <= set(started)), started
    finally:
        groups = [proc.pid, *running]  # the sweep's and the cells' process groups
        for pid, kill in [*((p, os.killpg) for p in groups), *((p, os.kill) for p in left)]:
            try:
                kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass


def _dies_with(proc: subprocess.Popen, pid: int) -> bool:
    """``kill -9`` of ``proc``; whether ``pid`` ends within 15 s after (generous for a busy machine)."""
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    deadline = time.monotonic() + 15
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not _alive(pid)


def _kill(*pids: int) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


_REAPED = """
import subprocess, sys, time
from clusteropt.experiments.runner import reaper

with reaper():
    sleepers = [subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)", name])
                for name in ("plain", "resource_tracker")]  # a child that outlives its parent, and a tracker
    print(*(p.pid for p in sleepers), flush=True)
    time.sleep(600)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the reaper reads /proc")
def test_the_reaper_kills_what_a_dead_process_started_but_resource_trackers():
    """A child that ignores its parent's death goes with it; one named a resource tracker is left
    to exit by itself (a tracker cleans up after the dead once its pipe closes)."""
    proc = subprocess.Popen([sys.executable, "-c", _REAPED], cwd=ROOT, stdout=subprocess.PIPE, text=True,
                            start_new_session=True)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line, "the script stopped before it started its children"
    plain, tracker = map(int, line.split())
    try:
        assert _dies_with(proc, plain)
        time.sleep(0.5)  # the reaper's passes are over
        assert _alive(tracker)
    finally:
        _kill(plain, tracker)


_WATCHED = """
import os, socket, subprocess, sys, time

worker = '''
import os, socket, time
from clusteropt.experiments.runner import init_worker

init_worker([socket.gethostname(), os.getppid()])  # what loky runs first in a worker of this sweep
print("watching", flush=True)
time.sleep(600)  # an idle worker, waiting for work
'''
child = subprocess.Popen([sys.executable, "-c", worker])
print(child.pid, flush=True)
time.sleep(600)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc tells whether a process runs")
def test_a_worker_started_by_init_worker_exits_when_its_sweep_dies():
    """Elsewhere than on Linux the only line: an idle loky worker runs no cell, its watch starts
    in loky's initializer."""
    proc = subprocess.Popen([sys.executable, "-c", _WATCHED], cwd=ROOT, stdout=subprocess.PIPE, text=True,
                            start_new_session=True)
    assert proc.stdout is not None
    worker = int(proc.stdout.readline())
    try:
        assert proc.stdout.readline() == "watching\n"
        assert _dies_with(proc, worker)
    finally:
        _kill(worker)


@pytest.mark.slow  # starts (and fails to start) a local Dask cluster: about 10 s
def test_unguarded_script_on_a_local_dask_cluster_says_what_to_do(tmp_path):
    script = tmp_path / "unguarded.py"
    script.write_text(
        "from clusteropt.experiments import get_experiment, run_sweep\n"
        "spec = get_experiment('worker-placement-gap').quick_variant()\n"
        f"run_sweep(spec, n_jobs=1, backend='dask', store={str(tmp_path / 's.sqlite')!r}, progress=False)\n")
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300,
                          cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode != 0
    assert 'Put the call under `if __name__ == "__main__":`' in proc.stderr
