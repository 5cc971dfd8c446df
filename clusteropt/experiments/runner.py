"""Running one cell: in a long-lived child interpreter (a *cell process*) that can be stopped.

Every worker thread, whichever backend it belongs to (the sweep's own process for ``n_jobs=1``,
a joblib/loky worker, a Dask worker), hands its cells to a cell process of its own: a
``python -c "...runner._main()"`` child started on first use and kept for the next
cells.  Requests and replies are JSON lines on the child's stdin and a private copy of its
stdout (the cell's own prints and solver logs go to stderr).  This buys three things a plain
function call in the worker cannot give:

- a per-cell time limit that really stops the cell, C code (a solver) included: the child's
  process group is killed and the next cell gets a fresh child;
- a crash (segfault, ``os._exit``, out of memory) becomes a failed cell, not a lost worker;
- solvers and BLAS are single-threaded in every cell (``CLUSTEROPT_THREADS=1``,
  ``OMP_NUM_THREADS=1``, ...), whatever the worker's own environment.

The cost is one interpreter start per worker thread (plus one per timed-out or crashed cell)
and a JSON round trip per cell.  A child exits when its stdin closes or its parent dies.
"""

from __future__ import annotations

import atexit
import importlib
import json
import logging
import os
import queue
import signal
import socket
import subprocess
import sys
import threading
import time
import traceback
from collections.abc import Mapping
from typing import Any

from clusteropt.experiments.spec import RESERVED_COLUMNS

__all__ = ["MAX_STRING", "check_metrics", "execute_cell", "run_cell"]

log = logging.getLogger(__name__)

#: Longest string a metric may hold.
MAX_STRING = 200
#: Environment of a cell process: one thread for solvers (read by ``solve``) and for BLAS.
CELL_ENV = {
    "CLUSTEROPT_THREADS": "1",
    "OMP_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "VECLIB_MAXIMUM_THREADS": "1",
    "NUMEXPR_NUM_THREADS": "1",
}
_LOAD_SECONDS = 600.0  # importing a cell's module is not part of its time limit, but is bounded


def check_metrics(metrics: Any, params: Mapping[str, Any]) -> dict[str, Any]:
    """Validate a cell's return value: a flat dict of numbers, bools, short strings or None.

    NumPy scalars become Python numbers.  Raises ``TypeError`` / ``ValueError`` naming the
    offending metric.

    Examples
    --------
    >>> import numpy as np
    >>> check_metrics({"cost": np.float64(2.5), "solver": "highs"}, {"n": 3})
    {'cost': 2.5, 'solver': 'highs'}
    >>> check_metrics({"n": 1}, {"n": 3})
    Traceback (most recent call last):
    ...
    ValueError: metric 'n' has the name of a parameter; rename it
    """
    if not isinstance(metrics, Mapping):
        raise TypeError(f"the cell returned {type(metrics).__name__}; expected a dict of metrics")
    out: dict[str, Any] = {}
    for key, value in metrics.items():
        if not isinstance(key, str) or not key:
            raise TypeError(f"metric name {key!r}; expected a non-empty string")
        if key in params:
            raise ValueError(f"metric {key!r} has the name of a parameter; rename it")
        if key in RESERVED_COLUMNS:
            raise ValueError(f"metric {key!r} is a reserved column name; rename it")
        if hasattr(value, "item") and getattr(value, "ndim", 1) == 0:
            value = value.item()  # numpy scalar
        if value is None or isinstance(value, bool | int | float):
            out[key] = value
        elif isinstance(value, str):
            if len(value) > MAX_STRING:
                raise ValueError(f"metric {key!r} is a string of {len(value)} characters; at most {MAX_STRING}")
            out[key] = value
        else:
            raise TypeError(
                f"metric {key!r} = {type(value).__name__}; expected a number, bool, short string or None"
            )
    return out


def _import(ref: str):
    module, _, qualname = ref.partition(":")
    obj = importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


def run_cell(function: str, params: Mapping[str, Any], seed: int, policy: str) -> dict[str, Any]:
    """Run one cell here, in this process, and return its outcome dict (what a worker records).

    Exceptions from the cell become ``status="failed"`` with the error text and traceback; use
    it to debug a cell in a notebook (``function`` is ``Experiment.function``).
    """
    start = time.perf_counter()
    try:
        metrics = check_metrics(_import(function)(dict(params), int(seed), policy), params)
    except Exception as exc:
        return {
            "status": "failed", "metrics": {}, "error": f"{type(exc).__name__}: {exc}",
            "traceback": "".join(traceback.format_exception(exc)), "seconds": time.perf_counter() - start,
        }
    return {"status": "ok", "metrics": metrics, "seconds": time.perf_counter() - start}


# -- the worker's side -------------------------------------------------------------------------


class _CellProcess:
    """A child interpreter running cells for one worker thread."""

    def __init__(self) -> None:
        env = {**os.environ, **CELL_ENV}
        self.popen = subprocess.Popen(
            [sys.executable, "-c", "from clusteropt.experiments.runner import _main; _main()"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env,
            start_new_session=hasattr(os, "killpg"),
        )
        self.replies: queue.Queue[bytes | None] = queue.Queue()
        self.loaded: set[str] = set()
        threading.Thread(target=self._read, daemon=True, name="cell-process-reader").start()
        _LIVE.add(self)

    def _read(self) -> None:
        for line in self.popen.stdout:
            self.replies.put(line)
        self.replies.put(None)

    def ask(self, request: dict[str, Any], timeout: float | None) -> dict[str, Any] | None:
        """Send one request; the reply, or None when the time limit passed (child then killed).

        Raises ``ChildProcessError`` when the child died without replying.
        """
        self.popen.stdin.write((json.dumps(request) + "\n").encode())
        self.popen.stdin.flush()
        try:
            line = self.replies.get(timeout=timeout)
        except queue.Empty:
            self.kill()
            return None
        if line is None:
            code = self.popen.wait()
            self.kill()
            how = f"signal {signal.Signals(-code).name}" if code < 0 else f"exit code {code}"
            raise ChildProcessError(f"the cell process died ({how})")
        return json.loads(line)

    def kill(self) -> None:
        """Stop the child and everything it started (its process group)."""
        _LIVE.discard(self)
        if self.popen.poll() is None:
            try:
                if hasattr(os, "killpg"):
                    os.killpg(self.popen.pid, signal.SIGKILL)
                else:  # pragma: no cover - Windows
                    self.popen.kill()
            except ProcessLookupError:
                pass
        self.popen.wait()
        for pipe in (self.popen.stdin, self.popen.stdout):
            try:
                pipe.close()
            except OSError:
                pass

    @property
    def alive(self) -> bool:
        return self.popen.poll() is None


_LOCAL = threading.local()  # this thread's cell process
_LIVE: set[_CellProcess] = set()  # every cell process of this worker, stopped at exit


@atexit.register
def _stop_all() -> None:
    for child in list(_LIVE):
        child.kill()


def _worker_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def execute_cell(task: Mapping[str, Any]) -> dict[str, Any]:
    """Run one cell in this thread's cell process; the outcome dict to record.

    ``task`` holds ``function`` (``module:qualname``), ``params``, ``seed`` (the derived cell
    seed the function receives), ``policy``, ``timeout`` (seconds or None) and ``sys_path``.
    Importing the function's module is done first and does not count against the time limit.
    Never raises for a cell's own failure: that is ``status="failed"`` (or ``"timeout"``).
    """
    child: _CellProcess | None = getattr(_LOCAL, "child", None)
    if child is None or not child.alive:
        child = _LOCAL.child = _CellProcess()
    worker = _worker_name()
    start = time.perf_counter()
    try:
        if task["function"] not in child.loaded:
            path = list(sys.path)  # the worker's own path, then the sweep's (a test module, say)
            path += [p for p in task.get("sys_path", ()) if p not in path]
            reply = child.ask({"op": "load", "function": task["function"], "sys_path": path}, _LOAD_SECONDS)
            if reply is None:
                raise ChildProcessError(f"importing {task['function']} took over {_LOAD_SECONDS:g} s")
            if reply["status"] != "ok":
                return {**reply, "worker": worker}
            child.loaded.add(task["function"])
        start = time.perf_counter()
        reply = child.ask({"op": "run", **{k: task[k] for k in ("function", "params", "seed", "policy")}},
                          task.get("timeout"))
    except (ChildProcessError, BrokenPipeError) as exc:
        _LOCAL.child = None
        return {"status": "failed", "metrics": {}, "error": str(exc), "worker": worker,
                "seconds": time.perf_counter() - start}
    if reply is None:
        _LOCAL.child = None
        return {"status": "timeout", "metrics": {}, "worker": worker, "seconds": time.perf_counter() - start,
                "error": f"stopped at the per-cell time limit of {task['timeout']:g} s"}
    return {**reply, "worker": worker}


# -- the child's side --------------------------------------------------------------------------


def _watch_parent(parent: int) -> None:
    while True:
        time.sleep(1.0)
        if os.getppid() != parent:
            os._exit(0)  # the worker is gone: nobody will read this cell's result


def _main() -> None:
    reply_to = os.fdopen(os.dup(1), "wb", buffering=0)
    os.dup2(2, 1)  # the cell's prints and solver output go to stderr, never into the protocol
    threading.Thread(target=_watch_parent, args=(os.getppid(),), daemon=True).start()
    for line in sys.stdin.buffer:
        request = json.loads(line)
        if request["op"] == "load":
            worker_path = [p for p in request["sys_path"] if isinstance(p, str)]
            sys.path[:] = worker_path + [p for p in sys.path if p not in worker_path]
            try:
                _import(request["function"])
                reply: dict[str, Any] = {"status": "ok"}
            except Exception as exc:
                reply = {"status": "failed", "metrics": {},
                         "error": f"cannot import {request['function']}: {type(exc).__name__}: {exc}",
                         "traceback": "".join(traceback.format_exception(exc))}
        else:
            reply = run_cell(request["function"], request["params"], request["seed"], request["policy"])
        try:
            text = json.dumps(reply, allow_nan=True)
        except (TypeError, ValueError) as exc:  # pragma: no cover - check_metrics prevents it
            text = json.dumps({"status": "failed", "metrics": {}, "error": f"unserializable: {exc}"})
        reply_to.write(text.encode() + b"\n")
