"""Experiments registered for the harness's tests (imported by tests and by ``--module``)."""

from __future__ import annotations

import os
import signal
import time

import numpy as np

from clusteropt.experiments import Experiment, register_experiment
from clusteropt.solvers import default_threads  # imported when the cell process loads this module


def sample_cell(params, seed, policy):
    """A seconds-free cell: statistics of ``n`` uniform draws from the cell's seed."""
    rng = np.random.default_rng(seed)
    x = rng.random(int(params["n"]))
    if params.get("delay", 0.0):
        time.sleep(float(params["delay"]))
    value = {"mean": x.mean(), "max": x.max()}[policy]
    return {"value": value, "n_draws": int(params["n"]), "label": f"{policy}-{params['n']}",
            "draw_seconds": 0.001}


def misbehaving_cell(params, seed, policy):
    """Cells that fail in every way the harness must survive."""
    if policy == "raise":
        raise ValueError(f"bad cell n={params['n']}")
    if policy == "hang":
        time.sleep(600)
    if policy == "crash":
        os.kill(os.getpid(), signal.SIGSEGV)
    if policy == "bad-metric":
        return {"value": [1, 2, 3]}
    if policy == "print":
        print("noise on stdout that must not break the protocol")
    if policy == "threads":
        return {"value": 0.0, "solver_threads": default_threads(), "omp": os.environ.get("OMP_NUM_THREADS", "")}
    return {"value": float(seed % 1000) + params["n"]}


SAMPLE = register_experiment(
    Experiment(
        name="test-sample",
        run=sample_cell,
        grid={"n": [1, 10, 100], "delay": [0.0]},
        seeds=[0, 1, 2],
        policies=["mean", "max"],
        description="harness test: sample statistics",
        quick={"grid": {"n": [1, 10]}, "seeds": [0, 1]},
    )
)

SLOW = register_experiment(
    Experiment(
        name="test-slow",
        run=sample_cell,
        grid={"n": list(range(1, 41)), "delay": [0.1]},
        seeds=[0],
        policies=["mean"],
        description="harness test: 40 cells of 0.1 s for the kill-and-resume test",
    )
)

MISBEHAVING = register_experiment(
    Experiment(
        name="test-misbehaving",
        run=misbehaving_cell,
        grid={"n": [1, 2]},
        seeds=[3],
        policies=["ok", "raise", "hang", "crash", "bad-metric", "print", "threads"],
        description="harness test: failing, hanging, crashing cells",
        timeout=2.0,
    )
)


def broken_figure(table):
    """A figure function that fails (for the report's error handling)."""
    return table["no-such-column"]


BROKEN_REPORT = register_experiment(
    Experiment(
        name="test-broken-report",
        run=sample_cell,
        grid={"n": [1, 10], "delay": [0.0]},
        seeds=[0],
        policies=["mean"],
        description="harness test: a report whose figure fails",
        figures={"bad": broken_figure},
    )
)
