"""Experiments: paper figures and tables as parameters x seeds x policies, swept on this machine
or a Dask cluster, stored cell by cell in SQLite, reported as tables and figures.

>>> from clusteropt.experiments import EXPERIMENTS
>>> "worker-placement-gap" in EXPERIMENTS
True

Importing this package registers every system's experiments (each system adds its module to
the imports at the top).  Plots live in :mod:`clusteropt.experiments.plots`.
"""

# the systems' experiments (registering on import)
import clusteropt.experiments.broker  # (paper 003: registers on import)
import clusteropt.experiments.gadget  # (paper 000: registers on import)
import clusteropt.experiments.ring  # noqa: F401  (paper 004: registers on import)
from clusteropt.experiments import coflow, realtime, worker_placement
from clusteropt.experiments.report import ReportError, export_table, markdown_table, summarize, write_report
from clusteropt.experiments.runner import run_cell
from clusteropt.experiments.spec import (
    EXPERIMENTS,
    Cell,
    Experiment,
    cell_seed,
    code_version,
    get_experiment,
    register_experiment,
)
from clusteropt.experiments.store import ResultsStore, StoreError
from clusteropt.experiments.sweep import DEFAULT_STORE, run_sweep

__all__ = [
    "DEFAULT_STORE",
    "EXPERIMENTS",
    "Cell",
    "Experiment",
    "ReportError",
    "ResultsStore",
    "StoreError",
    "cell_seed",
    "code_version",
    "coflow",
    "export_table",
    "get_experiment",
    "markdown_table",
    "realtime",
    "register_experiment",
    "run_cell",
    "run_sweep",
    "summarize",
    "worker_placement",
    "write_report",
]
