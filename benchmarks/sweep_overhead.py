"""What the experiments harness costs around the cells it runs.

Measured here, each separately:

``cell_process_start_s``
    first cell of a fresh worker thread: starting its cell process (a new interpreter importing
    ``clusteropt.experiments.runner``), importing the cell's module, one no-op cell, the reply;
``round_trip_s``
    a further no-op cell in the same cell process (JSON out, call, JSON back);
``store_record_s``
    one ``ResultsStore.record`` (its own transaction, WAL, ``synchronous=FULL``);
``sweep``
    wall time of a sweep of no-op cells and of ``worker-placement-gap --quick`` (real HiGHS
    solves) with ``n_jobs=1``, joblib ``n_jobs=2`` and a local Dask cluster of 2 workers, pool
    or cluster start-up included; every sweep's table must equal the serial one.

Run ``python -m benchmarks.sweep_overhead`` (writes ``benchmarks/results/``) or ``--quick``.
"""

from __future__ import annotations

import statistics
import tempfile
import threading
import time
from pathlib import Path

from benchmarks._report import header, machine_info, output_dir, parser, write_results
from clusteropt.experiments import Experiment, ResultsStore, get_experiment, run_sweep
from clusteropt.experiments.runner import execute_cell

NAME = "sweep_overhead"
FULL = {"starts": 8, "round_trips": 200, "records": 500, "noop_cells": 200, "dask": True}
QUICK = {"starts": 2, "round_trips": 20, "records": 50, "noop_cells": 20, "dask": False}


def noop_cell(params, seed, policy):
    """A cell that does nothing: what is left is the harness."""
    return {"value": float(seed % 7)}


def _noop_spec(cells: int) -> Experiment:
    return Experiment(name="bench-noop", run=noop_cell, grid={"i": list(range(cells))}, seeds=[0],
                      policies=["noop"])


def _task() -> dict:
    return {"function": _noop_spec(1).function, "params": {"i": 0}, "seed": 1, "policy": "noop",
            "timeout": None, "sys_path": []}


def measure_cell_process(starts: int, round_trips: int) -> dict:
    firsts, trips = [], []

    def fresh_thread() -> None:  # a new thread has no cell process yet
        t0 = time.perf_counter()
        assert execute_cell(_task())["status"] == "ok"
        firsts.append(time.perf_counter() - t0)
        for _ in range(round_trips // starts):
            t0 = time.perf_counter()
            execute_cell(_task())
            trips.append(time.perf_counter() - t0)

    for _ in range(starts):
        thread = threading.Thread(target=fresh_thread)
        thread.start()
        thread.join()
    return {"cell_process_start_s": statistics.median(firsts), "round_trip_s": statistics.median(trips),
            "starts": len(firsts), "round_trips": len(trips)}


def measure_store(records: int, tmp: Path) -> dict:
    cells = _noop_spec(records).cells()
    with ResultsStore(tmp / "records.sqlite") as db:
        t0 = time.perf_counter()
        for cell in cells:
            db.record("bench-noop", "v", cell, {"status": "ok", "metrics": {"value": 1.0}})
        elapsed = time.perf_counter() - t0
    return {"store_record_s": elapsed / records, "records": records}


def measure_sweeps(spec, tmp: Path, dask: bool, quick: bool = False) -> dict:
    ways = {"serial": {"n_jobs": 1}, "joblib-2": {"n_jobs": 2}}
    if dask:
        ways["dask-local-2"] = {"n_jobs": 2, "backend": "dask"}
    out, reference = {}, None
    for label, kwargs in ways.items():
        t0 = time.perf_counter()
        table = run_sweep(spec, quick=quick, store=tmp / f"{spec.name}-{label}.sqlite", progress=False, **kwargs)
        elapsed = time.perf_counter() - t0
        if reference is None:
            reference = table
        elif not table.equals(reference):
            raise AssertionError(f"{spec.name}: the {label} table differs from the serial one")
        if not (table.status == "ok").all():
            raise AssertionError(f"{spec.name} {label}: cells failed: {table.error.unique().tolist()}")
        out[label] = {"wall_s": elapsed, "cells": len(table), "cells_per_s": len(table) / elapsed}
    return out


def to_markdown(report: dict) -> str:
    c = report["cell_process"]
    lines = [
        "# sweep_overhead",
        "",
        f"recorded {report['created']} on {report['machine']['platform']}, "
        f"{report['machine']['cpu_count']} CPUs; medians",
        "",
        "| what | time |",
        "| :--- | ---: |",
        f"| cell process start + first no-op cell | {c['cell_process_start_s']:.3f} s |",
        f"| further no-op cell (round trip) | {c['round_trip_s'] * 1e3:.2f} ms |",
        f"| store record (one transaction) | {report['store']['store_record_s'] * 1e3:.2f} ms |",
        "",
        "| sweep | backend | cells | wall s | cells/s |",
        "| :--- | :--- | ---: | ---: | ---: |",
    ]
    for sweep, ways in report["sweeps"].items():
        for label, r in ways.items():
            lines.append(f"| {sweep} | {label} | {r['cells']} | {r['wall_s']:.2f} | {r['cells_per_s']:.1f} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    args = parser(NAME, __doc__, "few repetitions, no Dask; print only").parse_args(argv)
    params = dict(QUICK if args.quick else FULL)
    out = output_dir(args)
    report = {**header(NAME, ("clusteropt", "joblib", "dask", "distributed", "highspy")), "parameters": params}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        report["cell_process"] = measure_cell_process(params["starts"], params["round_trips"])
        report["store"] = measure_store(params["records"], tmp)
        noop, placement = _noop_spec(params["noop_cells"]), get_experiment("worker-placement-gap")
        report["sweeps"] = {
            f"no-op x{params['noop_cells']}": measure_sweeps(noop, tmp, params["dask"]),
            "worker-placement-gap --quick": measure_sweeps(placement, tmp, params["dask"], quick=True),
        }
    report["machine"]["load_average_after"] = machine_info()["load_average_1_5_15"]
    write_results(NAME, report, to_markdown(report), out)
    return 0


if __name__ == "__main__":  # run the importable copy, so workers can import noop_cell
    from benchmarks.sweep_overhead import main as _main

    raise SystemExit(_main())
