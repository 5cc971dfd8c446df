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
and a JSON round trip per cell.

No cell outlives its sweep, even one stuck in C code that holds the GIL (a solver):

- on Linux the child asks the kernel, first thing after it starts, for ``SIGKILL`` when its parent
  dies (``prctl(PR_SET_PDEATHSIG)``; then checks the parent did not die before that).  The kernel
  sends it when the *thread* that started the child ends, which is right here: a child belongs to
  the thread that started it and serves no other.  Elsewhere a thread of the child polls
  ``getppid()`` (which needs the GIL: the fallback);
- a worker process the sweep started (a joblib/loky worker, a local Dask worker) watches the
  sweep's process from a thread of its own (the worker's thread waits for the cell without
  holding the GIL) and, when the sweep is gone, kills its cell processes' groups and exits, so a
  worker that would have waited for its cell does not keep the cell alive.  A loky worker starts
  that thread in loky's ``initializer`` (:func:`init_worker`), before its first task: an idle
  worker runs no cell that would start it, and would wait on loky's call queue for the idle
  timeout (joblib's default: 300 s);
- in a Dask task, the waiting thread also stops the cell when the scheduler cancels the task
  (its client, the sweep, went away), which covers workers on other machines.

Nothing else a sweep starts outlives it either (Linux): while a sweep runs, every process it
starts, and everything those start, carries the sweep's mark in its environment
(:data:`SWEEP_ENV`), and a small process of its own, the *reaper* (:func:`reaper`), waits on a
pipe from the sweep.  When the sweep dies without its word of goodbye on that pipe (``kill -9``,
``SIGTERM``, a crash), the reaper kills every marked process: a loky or Dask worker still starting
(a second or more of imports before it can run any code of ours), an idle one, a cell's own
children.  The resource trackers that loky and multiprocessing start are spared: they exit by
themselves once every process holding their pipe is gone, after cleaning up what the dead left
behind (semaphores, joblib's memory-mapping folders), which a killed tracker could not.  A
worker's own watch (above) is the second line, and the only one elsewhere.  Measured on a busy
2-core machine: 0.5 s after ``kill -9`` of a sweep, nothing it started was left (8 of 8 runs for
``n_jobs=1``, loky with 2 busy, 1 busy and 1 idle, or 2 starting workers, a local Dask cluster
running or starting).  Before, an idle loky worker lived on for loky's idle timeout (300 s), a
starting one ran the cells queued before the kill first, and both trackers waited for them (8 of
8 runs each); a starting Dask worker lived 3 to 5 s.
"""

from __future__ import annotations

import atexit
import contextlib
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
import uuid
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from clusteropt.experiments.spec import RESERVED_COLUMNS

__all__ = ["MAX_STRING", "SWEEP_ENV", "check_metrics", "execute_cell", "init_worker", "reaper", "run_cell"]

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
_POLL_SECONDS = 0.2  # how often a waiting worker looks whether its sweep is still there

#: The cell process's program (``python -c``; argv[1] is the pid of the process starting it).  It
#: arms the parent-death signal before importing anything (the import takes a second), so the
#: child cannot outlive its parent by more than the interpreter's start.
_BOOT = """\
import os, sys
armed = False
if sys.platform.startswith("linux"):
    try:
        import ctypes
        armed = ctypes.CDLL(None, use_errno=True).prctl(1, 9, 0, 0, 0) == 0  # PR_SET_PDEATHSIG, SIGKILL
    except (OSError, AttributeError):
        pass
if os.getppid() != int(sys.argv[1]):
    os._exit(0)  # the parent died before the signal was armed
from clusteropt.experiments.runner import _main
_main(int(sys.argv[1]), armed)
"""


#: The environment variable that marks every process a sweep starts (see :func:`reaper`).
SWEEP_ENV = "CLUSTEROPT_SWEEP"
_REAP_PASSES = 5  # the reaper's passes over /proc: a process forked during one is found by the next

#: The reaper's program (``python -c``; argv[1] is the mark, ``NAME=token``).  It reads its stdin
#: to the end: the sweep writes a word before it closes the pipe, a dead sweep cannot.
_REAPER = """\
import os, signal, sys, time
if sys.stdin.buffer.read():
    sys.exit(0)  # the sweep ended in its own time: what it started is its business
mark, me = b"\\0" + sys.argv[1].encode() + b"\\0", os.getpid()
for _ in range(int(sys.argv[2])):
    killed = 0
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == me:
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as file:
                environ = b"\\0" + file.read()  # a zombie's reads empty
            with open(f"/proc/{name}/cmdline", "rb") as file:
                tracker = b"resource_tracker" in file.read()
            if mark in environ and not tracker:  # a tracker exits, cleaning up, once the rest is gone
                os.kill(int(name), signal.SIGKILL)
                killed += 1
        except OSError:  # gone meanwhile, or another user's
            pass
    if not killed:
        break
    time.sleep(0.05)
"""


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
            [sys.executable, "-c", _BOOT, str(os.getpid())],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env,
            start_new_session=hasattr(os, "killpg"),
        )
        self.replies: queue.Queue[bytes | None] = queue.Queue()
        self.loaded: set[str] = set()
        threading.Thread(target=self._read, daemon=True, name="cell-process-reader").start()
        _LIVE.add(self)

    def _read(self) -> None:
        stdout = self.popen.stdout
        assert stdout is not None  # opened with stdout=PIPE
        for line in stdout:
            self.replies.put(line)
        self.replies.put(None)

    def ask(
        self, request: dict[str, Any], timeout: float | None, abandoned: Callable[[], bool] | None = None
    ) -> dict[str, Any] | None:
        """Send one request; the reply, or None when the time limit passed (child then killed).

        ``abandoned`` is looked at while waiting; when it returns True the child is killed and
        ``_Abandoned`` raised.  Raises ``ChildProcessError`` when the child died without replying.
        """
        stdin = self.popen.stdin
        assert stdin is not None  # opened with stdin=PIPE
        stdin.write((json.dumps(request) + "\n").encode())
        stdin.flush()
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            wait = None if abandoned is None else _POLL_SECONDS
            if deadline is not None:
                left = max(deadline - time.monotonic(), 0.0)
                wait = left if wait is None else min(wait, left)
            try:
                line = self.replies.get(timeout=wait)
                break
            except queue.Empty:
                pass
            if deadline is not None and time.monotonic() >= deadline:
                self.kill()
                return None
            if abandoned is not None and abandoned():
                self.kill()
                raise _Abandoned("the sweep that asked for this cell is gone; the cell was stopped")
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
            assert pipe is not None  # both opened with PIPE
            try:
                pipe.close()
            except OSError:
                pass

    @property
    def alive(self) -> bool:
        return self.popen.poll() is None


class _Abandoned(Exception):
    """Nobody waits for the cell's result any more (its sweep is gone)."""


_LOCAL = threading.local()  # this thread's cell process
_LIVE: set[_CellProcess] = set()  # every cell process of this worker, stopped at exit
_WATCHED: set[int] = set()  # sweeps (pids) this worker process watches
_WATCH_LOCK = threading.Lock()


@atexit.register
def _stop_all() -> None:
    for child in list(_LIVE):
        child.kill()


def _worker_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def _watch_owner(owner: Any) -> None:
    """In a worker process that the sweep ``owner`` (``[host, pid]``) started, start (once) the
    thread that stops this worker's cell processes and exits when the sweep dies.
    """
    pid = _local_pid(owner)
    if pid is None or pid == os.getpid() or pid != os.getppid():
        return  # the sweep itself (n_jobs=1), or a worker the sweep did not start (a Dask cluster's)
    _start_watch(pid)


def _local_pid(owner: Any) -> int | None:
    """The pid of the sweep ``owner`` (``[host, pid]``) when it runs on this machine, else None."""
    if not isinstance(owner, list | tuple) or len(owner) != 2 or owner[0] != socket.gethostname():
        return None
    return int(owner[1])


def _start_watch(pid: int) -> None:
    """Start (once per sweep) the thread that exits this worker when its parent ``pid`` is gone."""
    with _WATCH_LOCK:
        if pid in _WATCHED:
            return
        _WATCHED.add(pid)
    threading.Thread(target=_exit_with_owner, args=(pid,), daemon=True, name="sweep-watch").start()


def _exit_with_owner(pid: int) -> None:
    while os.getppid() == pid:
        time.sleep(_POLL_SECONDS)
    try:
        _stop_all()  # their process groups: whatever the cells started too
    finally:
        os._exit(0)  # an orphaned worker: nobody will read its results


def init_worker(owner: Any) -> None:
    """Start a loky worker of the sweep ``owner`` (``[host, pid]``): loky's ``initializer``.

    loky runs it in each new worker before the worker takes its first task
    (``get_reusable_executor(initializer=..., initargs=...)``; joblib's ``Parallel`` passes both
    on).  A worker whose parent is no longer the sweep exits at once (the sweep died while it
    started: nobody will read its results); any other starts the thread that makes it exit within
    ``_POLL_SECONDS`` of the sweep's death, whether it waits for work or for a cell.  Before loky
    calls it (the interpreter's start and the imports, seconds on a busy machine) a worker can do
    nothing; :func:`reaper` covers that time.

    The worker does not ask the kernel for a parent-death signal instead: ``PR_SET_PDEATHSIG``
    fires when the *thread* that started the process ends (prctl(2)), and loky starts a
    replacement worker from its executor manager thread, so the signal could kill a worker of a
    live sweep.  Polling ``getppid()`` costs one GIL switch every ``_POLL_SECONDS``.

    Parameters
    ----------
    owner : list
        ``[hostname, pid]`` of the process calling :func:`~clusteropt.experiments.run_sweep`, the
        parent of every loky worker it starts; another machine's is ignored.
    """
    pid = _local_pid(owner)
    if pid is None:
        return
    if pid != os.getppid():
        os._exit(0)  # orphaned before it could take a task
    _start_watch(pid)  # from here on the thread sees the sweep die, whenever it does


_MARK_LOCK = threading.Lock()
_MARK: dict[str, Any] = {"pid": None, "token": "", "sweeps": 0, "before": None}  # this process's mark


def _mark_environment() -> str:
    """Put this process's mark in its environment (for every process started from now on); the mark."""
    with _MARK_LOCK:
        if _MARK["pid"] != os.getpid():  # a forked child is a sweep of its own
            _MARK.update(pid=os.getpid(), token=f"{os.getpid()}-{uuid.uuid4().hex}", sweeps=0)
        if _MARK["sweeps"] == 0:
            _MARK["before"] = os.environ.get(SWEEP_ENV)  # a sweep started by a sweep: our own mark
            os.environ[SWEEP_ENV] = _MARK["token"]
        _MARK["sweeps"] += 1
        return f"{SWEEP_ENV}={_MARK['token']}"


def _unmark_environment() -> None:
    """Undo one :func:`_mark_environment`; the last one of overlapping sweeps removes the mark."""
    with _MARK_LOCK:
        _MARK["sweeps"] -= 1
        if _MARK["sweeps"] == 0:
            if _MARK["before"] is None:
                os.environ.pop(SWEEP_ENV, None)
            else:
                os.environ[SWEEP_ENV] = _MARK["before"]


@contextlib.contextmanager
def reaper() -> Iterator[None]:
    """While the block runs, kill whatever this process starts if this process dies (Linux).

    Every process started in the block inherits the mark ``SWEEP_ENV=<pid>-<uuid>`` through its
    environment (and passes it on to its own children).  A reaper process, in a session of its
    own (so that neither Ctrl-C nor a kill of this process's group stops it), waits for the end
    of its stdin.  At the block's end this process writes to it and closes it: the reaper exits.
    When this process dies instead (``kill -9``, ``SIGTERM``, a crash), the kernel closes the
    pipe and the reaper makes up to ``_REAP_PASSES`` passes over ``/proc``, killing (``SIGKILL``)
    every process whose environment holds the mark, except resource trackers (multiprocessing's
    and loky's, told by ``resource_tracker`` in their command line: a tracker exits by itself once
    every holder of its pipe is gone, after unlinking what the dead left behind, Python's
    multiprocessing documentation, "Contexts and start methods").  Overlapping blocks share the
    mark.

    Limits: ``/proc/<pid>/environ`` holds a process's environment as it was at its start, so a
    process that was started while the mark was set is found, whatever it did to its environment
    since, and only those (a process started by another thread during the block too).  A
    process this one forks without exec (``os.fork``) inherits the pipe's write end and delays
    the reaper until it exits too.  Elsewhere than on Linux, or when the reaper cannot start (a
    warning says so), the block runs without it.

    Examples
    --------
    >>> import os, sys
    >>> with reaper():
    ...     marked = os.environ.get(SWEEP_ENV, "").startswith(f"{os.getpid()}-")
    >>> marked == sys.platform.startswith("linux"), SWEEP_ENV in os.environ
    (True, False)
    """
    if not sys.platform.startswith("linux"):
        yield
        return
    mark = _mark_environment()
    try:
        env = {k: v for k, v in os.environ.items() if k != SWEEP_ENV}
        try:
            guard = subprocess.Popen(
                [sys.executable, "-I", "-c", _REAPER, mark, str(_REAP_PASSES)], stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL, env=env, start_new_session=True,
            )
        except OSError as exc:
            log.warning("no reaper for this sweep (%s): a worker still starting when it dies may outlive it", exc)
            yield
            return
        try:
            yield
        finally:
            stdin = guard.stdin
            assert stdin is not None  # opened with stdin=PIPE
            try:
                stdin.write(b"done")
                stdin.close()
            except OSError:  # the reaper is gone (killed): nothing to tell it
                pass
            # it exits on reading the word; reaped in the background, this process need not wait
            threading.Thread(target=guard.wait, daemon=True, name="reaper-wait").start()
    finally:
        _unmark_environment()


def _dask_cancelled() -> Callable[[], bool] | None:
    """In a Dask task: a probe telling whether the scheduler dropped this task (its client, the
    sweep, went away); None elsewhere.
    """
    module = sys.modules.get("distributed.worker")
    if module is None:
        return None
    try:
        worker = module.get_worker()
        key = module.thread_state.key
        tasks = worker.state.tasks
    except (ValueError, AttributeError):  # not in a task, or another distributed
        return None

    def cancelled() -> bool:
        task = tasks.get(key)
        return task is None or task.state in ("cancelled", "released", "forgotten")

    return cancelled


def execute_cell(task: Mapping[str, Any]) -> dict[str, Any]:
    """Run one cell in this thread's cell process; the outcome dict to record.

    ``task`` holds ``function`` (``module:qualname``), ``params``, ``seed`` (the derived cell
    seed the function receives), ``policy``, ``timeout`` (seconds or None) and ``sys_path``.
    Importing the function's module is done first and does not count against the time limit.
    Never raises for a cell's own failure: that is ``status="failed"`` (or ``"timeout"``).
    """
    _watch_owner(task.get("owner"))
    abandoned = _dask_cancelled()
    child: _CellProcess | None = getattr(_LOCAL, "child", None)
    if child is None or not child.alive:
        child = _LOCAL.child = _CellProcess()
    worker = _worker_name()
    start = time.perf_counter()
    try:
        if task["function"] not in child.loaded:
            path = list(sys.path)  # the worker's own path, then the sweep's (a test module, say)
            path += [p for p in task.get("sys_path", ()) if p not in path]
            reply = child.ask({"op": "load", "function": task["function"], "sys_path": path}, _LOAD_SECONDS,
                              abandoned)
            if reply is None:
                raise ChildProcessError(f"importing {task['function']} took over {_LOAD_SECONDS:g} s")
            if reply["status"] != "ok":
                return {**reply, "worker": worker}
            child.loaded.add(task["function"])
        start = time.perf_counter()
        reply = child.ask({"op": "run", **{k: task[k] for k in ("function", "params", "seed", "policy")}},
                          task.get("timeout"), abandoned)
    except (ChildProcessError, BrokenPipeError, _Abandoned) as exc:
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


def _main(parent: int | None = None, parent_death_signal: bool = False) -> None:
    """The cell process's loop (started by :data:`_BOOT`): requests on stdin, replies on stdout.

    Without the kernel's parent-death signal, a thread polls ``getppid()`` (it needs the GIL, so a
    C call that holds it delays the exit).
    """
    reply_to = os.fdopen(os.dup(1), "wb", buffering=0)
    os.dup2(2, 1)  # the cell's prints and solver output go to stderr, never into the protocol
    if not parent_death_signal:
        threading.Thread(target=_watch_parent, args=(parent or os.getppid(),), daemon=True).start()
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
