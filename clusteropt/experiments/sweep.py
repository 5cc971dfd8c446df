"""``run_sweep``: run an experiment's cells on this machine (joblib) or a Dask cluster.

The process calling :func:`run_sweep` is the only one that writes the results store: it hands
cells to workers, and records each outcome the moment it comes back (see
:mod:`clusteropt.experiments.store`).  Workers run cells in cell processes
(:mod:`clusteropt.experiments.runner`), so a cell can be stopped at its time limit and solvers
run single-threaded.  Results depend on neither the backend nor the worker count: every cell's
seed is fixed by the spec (:func:`clusteropt.experiments.spec.cell_seed`).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import socket
import sys
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pandas as pd

from clusteropt.experiments.spec import Cell, Experiment, code_version, get_experiment
from clusteropt.experiments.store import ResultsStore, StoreError, versions_text
from clusteropt.progress import Progress

__all__ = ["DEFAULT_STORE", "run_sweep"]

log = logging.getLogger(__name__)

#: The store used when none is given.
DEFAULT_STORE = "experiments.sqlite"
BACKENDS = ("joblib", "dask")


def _owner() -> list[Any]:
    """The sweep's process as its workers know it, ``[host, pid]``: they exit when it dies."""
    return [socket.gethostname(), os.getpid()]


def _tasks(spec: Experiment, cells: list[Cell], timeout: float | None) -> list[dict[str, Any]]:
    path, owner = list(sys.path), _owner()
    return [
        {"function": spec.function, "params": dict(c.params), "seed": c.cell_seed, "policy": c.policy,
         "timeout": timeout, "sys_path": path, "owner": owner, "index": i}
        for i, c in enumerate(cells)
    ]


def _indexed(task: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    from clusteropt.experiments.runner import execute_cell

    return task["index"], execute_cell(task)


def _run_joblib(tasks: list[dict[str, Any]], n_jobs: int) -> Iterator[tuple[int, dict[str, Any]]]:
    from clusteropt.experiments.runner import init_worker, reaper

    with reaper():  # this process dies: what it started goes too
        if n_jobs == 1:  # in this process (its cell process does the work): no pool to start
            yield from map(_indexed, tasks)
            return
        from joblib import Parallel, delayed

        # Parallel passes initializer and initargs on to loky's executor (its backend_kwargs): a
        # worker, busy or idle, exits when this process dies.  Equal initargs keep the executor reused.
        parallel = Parallel(n_jobs=n_jobs, backend="loky", return_as="generator_unordered", batch_size=1,
                            pre_dispatch="2*n_jobs", initializer=init_worker, initargs=(_owner(),))
        yield from parallel(delayed(_indexed)(t) for t in tasks)


def _run_dask(tasks: list[dict[str, Any]], n_jobs: int, scheduler: Any) -> Iterator[tuple[int, dict[str, Any]]]:
    from clusteropt.experiments.runner import reaper

    # a local cluster's processes are this process's to reap; a scheduler's workers are not
    with reaper() if scheduler is None else contextlib.nullcontext():
        yield from _dask_outcomes(tasks, n_jobs, scheduler)


def _dask_outcomes(
    tasks: list[dict[str, Any]], n_jobs: int, scheduler: Any
) -> Iterator[tuple[int, dict[str, Any]]]:
    try:
        from distributed import Client, LocalCluster, as_completed
    except ImportError:
        raise ImportError(
            "the dask backend needs dask.distributed, which is not installed here "
            "(pip install 'clusteropt[dask]')"
        ) from None
    owned: list[Any] = []
    if isinstance(scheduler, Client):
        client = scheduler
    elif scheduler is None:
        try:
            cluster = LocalCluster(n_workers=n_jobs, threads_per_worker=1, host="127.0.0.1",
                                   dashboard_address=None, processes=True)
        except Exception as exc:  # every start failure gets the same advice
            raise RuntimeError(
                f"could not start the local Dask cluster ({type(exc).__name__}: {exc}).  Its worker processes "
                "start by importing the script that called run_sweep; called at a script's top level, that "
                "import runs the sweep again.  Put the call under `if __name__ == \"__main__\":`, or pass "
                "scheduler= (a running cluster), or use backend='joblib'"
            ) from exc
        owned.append(cluster)
        client = Client(cluster)
        owned.insert(0, client)
    elif isinstance(scheduler, str):
        client = Client(scheduler, timeout="30s")
        owned.append(client)
    else:
        raise TypeError(
            f"scheduler = {scheduler!r}; expected an address such as 'tcp://host:8786', a "
            "distributed.Client, or None for a local cluster"
        )
    try:
        futures = client.map(_indexed, tasks, pure=False)
        for future in as_completed(futures):
            yield future.result()
    finally:
        for thing in owned:
            thing.close()


class _Progress:
    """The cells done: :class:`clusteropt.progress.Progress` (a bar on a terminal, a line a minute
    otherwise), plus a log line per cell when there is no bar (INFO, WARNING for a failed cell).
    """

    def __init__(self, name: str, total: int, enabled: bool) -> None:
        self.name, self.total = name, total
        self.progress = Progress(name, total, "cell", enabled=enabled and bool(total))
        self.level = logging.INFO if enabled else logging.DEBUG

    @property
    def done(self) -> int:
        return self.progress.done

    def update(self, cell: Cell, outcome: dict[str, Any]) -> None:
        self.progress.update()
        if self.progress.has_bar:
            if outcome["status"] != "ok":
                log.warning("%s %s: %s", self.name, _describe(cell), outcome.get("error", ""))
            return
        log.log(
            logging.WARNING if outcome["status"] != "ok" else self.level,
            "%s [%d/%d] %s: %s (%.2f s)%s", self.name, self.done, self.total, _describe(cell),
            outcome["status"], outcome.get("seconds") or 0.0,
            f" {outcome.get('error', '')}" if outcome["status"] != "ok" else "",
        )

    def close(self) -> None:
        self.progress.close()


def _describe(cell: Cell) -> str:
    params = " ".join(f"{k}={v}" for k, v in cell.params.items())
    return f"{params} seed={cell.seed} policy={cell.policy}"


def run_sweep(
    spec: Experiment | str,
    *,
    n_jobs: int = 1,
    backend: str | None = None,
    scheduler: Any = None,
    store: str | Path | ResultsStore = DEFAULT_STORE,
    resume: bool = True,
    progress: bool = True,
    quick: bool = False,
    timeout: float | None = None,
    retry: Iterable[str] = (),
    version: str | None = None,
) -> pd.DataFrame:
    """Run every cell of ``spec`` not yet in ``store``; return the experiment's results table.

    Parameters
    ----------
    spec : Experiment or str
        The experiment or its registered name.
    n_jobs : int
        Worker processes on this machine (``-1``: one per core).  With a ``scheduler`` the
        cluster's workers set the parallelism and ``n_jobs`` is not used.
    backend : {"joblib", "dask"}, optional
        Default: ``"dask"`` when a ``scheduler`` is given, else ``"joblib"`` (loky processes).
        ``"dask"`` without a scheduler starts a local cluster of ``n_jobs`` workers on 127.0.0.1;
        its worker processes import the calling script, so a script must make the call under
        ``if __name__ == "__main__":`` (a ``RuntimeError`` says so when the cluster cannot start).
    scheduler : str or distributed.Client, optional
        A Dask scheduler address (``"tcp://host:8786"``) or a connected client.  The workers need
        clusteropt (and the module defining the cell function) importable.
    store : path or ResultsStore
        The results store; each finished cell is written to it at once.
    resume : bool
        Skip cells already stored for this code version and environment (the versions of Python,
        the solvers and the numerical libraries, :func:`clusteropt.provenance.environment_id`);
        cells stored under another environment are not reused (the log says how many), they stay
        in the store beside the new ones.  ``False`` runs and overwrites them all.
    progress : bool
        A progress bar on a terminal, else a log line (INFO) per cell.
    quick : bool
        Run the spec's quick variant.
    timeout : float, optional
        Per-cell time limit in seconds (default: the spec's); a cell past it is stopped and
        recorded as ``timeout``.
    retry : iterable of {"failed", "timeout"}
        With ``resume``, run stored cells of these statuses again.
    version : str, optional
        Code version to key the results by (default :func:`~clusteropt.experiments.spec.code_version`).

    Returns
    -------
    pandas.DataFrame
        The table of every cell of the spec now in the store (see
        :meth:`ResultsStore.table`), in the spec's order; failed and timed-out cells included
        with their ``status`` and ``error``.

    Raises
    ------
    ValueError
        For an unknown experiment, backend or bad ``n_jobs`` / ``timeout``.
    StoreError
        The store cannot be opened, or cannot be written while cells are to run (checked before
        any runs), or a write failed mid-sweep (a full disk): the sweep stops there and the cells
        stored so far stay.

    Notes
    -----
    A cell that raises, crashes or runs past the time limit is recorded and the sweep goes on.
    Interrupting the sweep (Ctrl-C, ``kill -9``) loses only the cells then running.
    """
    if isinstance(spec, str):
        spec = get_experiment(spec)
    if quick:
        spec = spec.quick_variant()
    if backend is None:
        backend = "dask" if scheduler is not None else "joblib"
    if backend not in BACKENDS:
        raise ValueError(f"backend = {backend!r}; expected one of {', '.join(BACKENDS)}")
    if backend == "joblib" and scheduler is not None:
        raise ValueError("scheduler is given but backend = 'joblib'; a scheduler needs backend='dask'")
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, int) or (n_jobs < 1 and n_jobs != -1):
        raise ValueError(f"n_jobs = {n_jobs!r}; expected a positive integer or -1 (one per core)")
    if n_jobs == -1:
        n_jobs = os.cpu_count() or 1
    timeout = spec.timeout if timeout is None else timeout
    if timeout is not None and not (isinstance(timeout, int | float) and timeout > 0):
        raise ValueError(f"timeout = {timeout!r}; expected a positive number of seconds")
    retry = tuple(retry)
    if set(retry) - {"failed", "timeout"}:
        raise ValueError(f"retry = {retry!r}; expected statuses among 'failed', 'timeout'")
    version = version or code_version(spec)
    from clusteropt.provenance import environment, environment_id, environment_text, git_commit

    env = environment()
    env_key = (environment_id(env), json.dumps(env, separators=(",", ":")))
    commit = git_commit()

    owns_store = not isinstance(store, ResultsStore)
    db = store if isinstance(store, ResultsStore) else ResultsStore(store)
    try:
        cells = spec.cells()
        keep = {"ok", "failed", "timeout"} - set(retry)
        done = db.finished(spec.name, version, keep, environment=env_key[0]) if resume else set()
        todo = [c for c in cells if c.key not in done]
        others = db.elsewhere(spec.name, version, env_key[0]) if resume and todo else None
        if others is not None and not others.empty:
            log.warning("%s: %d cells of this code version are stored under other library versions and are not "
                        "reused (%s); running under %s", spec.name, int(others.cells.sum()),
                        "; ".join(f"{n} under {versions_text(v) or 'versions not recorded'}"
                                  for n, v in zip(others.cells, others.versions, strict=True)),
                        environment_text(env))
        log.info(
            "%s (%s): %d cells, %d in store %s, %d to run on %s%s", spec.name, spec.variant, len(cells),
            len(cells) - len(todo), db.path, len(todo), backend,
            f" at {scheduler}" if isinstance(scheduler, str) else f" with n_jobs={n_jobs}",
        )
        start, counts = time.perf_counter(), dict.fromkeys(("ok", "failed", "timeout"), 0)
        if todo:
            db.check_writable()  # before computing anything that could not be stored
            tasks = _tasks(spec, todo, timeout)
            stream = (_run_joblib(tasks, n_jobs) if backend == "joblib"
                      else _run_dask(tasks, n_jobs, scheduler))
            bar = _Progress(spec.name, len(todo), progress)
            try:
                for index, outcome in stream:
                    try:
                        db.record(spec.name, version, todo[index], outcome, environment=env_key,
                                  git_commit=commit)
                    except StoreError as exc:  # a full disk: stop; what is stored stays
                        raise StoreError(
                            f"{exc}; the sweep stopped, the {sum(counts.values())} cells it stored before are "
                            "kept (run it again to resume)"
                        ) from None
                    counts[outcome["status"]] += 1
                    bar.update(todo[index], outcome)
            finally:
                bar.close()
                close = getattr(stream, "close", None)
                if close is not None:
                    close()
        log.info(
            "%s: ran %d cells in %.1f s (%d ok, %d failed, %d timed out)", spec.name, len(todo),
            time.perf_counter() - start, counts["ok"], counts["failed"], counts["timeout"],
        )
        return db.table(spec, code_version=version, environment=env_key[0])
    finally:
        if owns_store:
            db.close()
