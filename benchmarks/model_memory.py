"""Memory per unit of the size guards: bytes per Pyomo variable, bytes per real-time frame cell.

The guards refuse a model or a simulation before building it (``clusteropt.models.size``:
variables; ``clusteropt.online.realtime.policies.MAX_FRAME_CELLS``: frames x N x M).  Their limits rest on
two numbers measured here with ``tracemalloc`` (which sees Python objects and numpy buffers):

``bytes_per_variable``
    peak memory of ``build_coflow_milp`` (one binary per flow and slot, a completion row per
    variable, capacity and demand rows) divided by its variable count, at growing sizes;
``bytes_per_frame_cell``
    peak memory of ``RealtimeEnvironment`` (every frame's jobs and task outcomes drawn up front)
    divided by frames x N x M.

Run ``python -m benchmarks.model_memory`` (writes ``benchmarks/results/``) or ``--quick``.
"""

from __future__ import annotations

import gc
import sys
import tracemalloc

import numpy as np

from benchmarks._report import header, output_dir, parser, write_results
from clusteropt.instances import random_coflows
from clusteropt.instances.realtime import random_realtime
from clusteropt.models.coflow.open_shop import build_coflow_milp
from clusteropt.online.realtime.policies import RealtimeEnvironment

NAME = "model_memory"
FULL = {"coflows": [4, 8, 12], "ports": 10, "frames": [100_000, 1_000_000], "apps": 3, "workers": 3}
QUICK = {"coflows": [3], "ports": 6, "frames": [10_000], "apps": 2, "workers": 2}


def peak_bytes(fn):
    """(result, peak bytes allocated while ``fn()`` ran)."""
    gc.collect()
    tracemalloc.start()
    try:
        out = fn()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return out, peak


def measure(params: dict) -> dict:
    coflow = []
    for n in params["coflows"]:
        inst = random_coflows(n, params["ports"], seed=0)
        model, peak = peak_bytes(lambda inst=inst: build_coflow_milp(inst))
        n_vars = len(model.x) + len(model.C)
        coflow.append({"coflows": n, "flows": inst.n_flows, "variables": n_vars, "peak_bytes": peak,
                       "bytes_per_variable": peak / n_vars})
        del model
    realtime = []
    inst = random_realtime(params["apps"], params["workers"], seed=0)
    for frames in params["frames"]:
        _, peak = peak_bytes(lambda frames=frames: RealtimeEnvironment(inst, frames, np.random.default_rng(0)))
        cells = frames * inst.n_apps * inst.n_workers
        realtime.append({"frames": frames, "cells": cells, "peak_bytes": peak,
                         "bytes_per_frame_cell": peak / cells})
    return {"coflow_milp": coflow, "realtime_environment": realtime}


def to_markdown(report: dict) -> str:
    lines = [f"# {NAME}", "", "| coflows | flows | variables | peak MB | bytes / variable |",
             "|---|---|---|---|---|"]
    for r in report["results"]["coflow_milp"]:
        lines.append(f"| {r['coflows']} | {r['flows']} | {r['variables']} | {r['peak_bytes'] / 1e6:.1f} | "
                     f"{r['bytes_per_variable']:.0f} |")
    lines += ["", "| frames | cells | peak MB | bytes / cell |", "|---|---|---|---|"]
    for r in report["results"]["realtime_environment"]:
        lines.append(f"| {r['frames']} | {r['cells']} | {r['peak_bytes'] / 1e6:.1f} | "
                     f"{r['bytes_per_frame_cell']:.1f} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    args = parser(NAME, __doc__, "tiny sizes, nothing written").parse_args(argv)
    params = QUICK if args.quick else FULL
    report = header(NAME, ("clusteropt", "pyomo", "numpy"))
    report["params"] = params
    report["results"] = measure(params)
    write_results(NAME, report, to_markdown(report), output_dir(args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
