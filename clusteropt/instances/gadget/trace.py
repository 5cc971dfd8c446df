"""GPU job traces as GADGET instances (paper 000): Philly-derived and Alibaba 2023 CSV files.

Two formats, one job per row (times in seconds):

* **Philly-derived** (as kept by public simulators)::

      timestamp,duration,num_gpus,gpu_time,cluster

* **Alibaba GPU cluster 2023** pod list (``cluster-trace-gpu-v2023``)::

      name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time

  ``gpu_milli`` is the share of each GPU the pod asks for (1000 = a whole GPU).

and the same trace's **node list** (``openb_node_list_gpu_node.csv``, one server a row), read by
:func:`read_alibaba_nodes` into a :class:`~clusteropt.instances.gadget.instance.Cluster`::

      sn,cpu_milli,memory_mib,gpu,model

:func:`read_philly_jobs` and :func:`read_alibaba_jobs` turn a file into a
:class:`~clusteropt.instances.gadget.instance.GadgetInstance`.  **From the trace**: the arrival slot
``a_i`` (from the time stamp), the most concurrent workers ``N_i`` (from the GPU count) and the
worker-slot limit ``F_i`` (from the run time).  **Drawn** with the seed, exactly as
:func:`~clusteropt.instances.gadget.instance.random_gadget` draws them (the paper's Sec. VI-1 ranges):
the per-worker efficiency ``zeta_i`` (integer in [50, 500]), the ring bandwidth ``b_i``
(uniform in [0.1, 5] Gbps) and the utility parameters ``lambda_{i,1..3}``; also ``F_i`` where
the trace has no run time (integer in [1000, 6000], the paper's range), and the cluster when
none is given (:func:`~clusteropt.instances.gadget.instance.fat_tree_cluster`).

A malformed row raises :class:`~clusteropt.instances.readers.TraceError`, whose message
starts with ``<file>:<line>:`` (line 1 is the header).  Whatever the file holds, the readers return
an instance or raise that one error (see :mod:`~clusteropt.instances.coflow.trace`, "Hostile input"):
files are read as UTF-8 (a byte-order mark is accepted), CSV syntax errors such as a field longer
than ``csv.field_size_limit()`` are reported with their line, and numbers are range-checked:

* ``num_gpus`` / ``num_gpu`` at most :data:`MAX_GPUS` (10**6) per job;
* the worker-slot limit ``F_i`` at most :data:`~clusteropt.instances.base.MAX_MAGNITUDE` (1e7,
  the magnitude rule of every real-valued field): a longer job needs a larger ``slot_seconds``;
* a node's capacity (``cpu_milli / 1000``, ``memory_mib / 1024``) at most ``MAX_MAGNITUDE`` too;
* without an explicit ``horizon``, the last arrival slot (which becomes ``T``) at most
  :data:`MAX_HORIZON` (10**6 slots): a single outlier time stamp would otherwise make a horizon of
  10**18 slots that no online run finishes.  The error names the line and time stamp; pass
  ``horizon=`` (later jobs are dropped) or ``max_jobs=`` to read such a file.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from clusteropt.instances.base import MAX_MAGNITUDE
from clusteropt.instances.gadget.instance import (
    MAX_HORIZON,
    UTILITIES,
    Cluster,
    GadgetInstance,
    _draw_job_params,
    fat_tree_cluster,
    k_ary_fat_tree,
)
from clusteropt.instances.readers import CsvRow, TraceError, csv_rows, positive, snap

__all__ = ["MAX_GPUS", "MAX_HORIZON", "read_alibaba_jobs", "read_alibaba_nodes", "read_philly_jobs"]

log = logging.getLogger(__name__)

#: Columns each reader needs (others are allowed and ignored).
PHILLY_COLUMNS = ("timestamp", "duration", "num_gpus")
ALIBABA_COLUMNS = ("num_gpu", "gpu_milli", "creation_time", "deletion_time", "scheduled_time")
ALIBABA_NODE_COLUMNS = ("sn", "cpu_milli", "memory_mib", "gpu", "model")
#: Resources :func:`read_alibaba_nodes` can give a server, and the unit of each.
NODE_RESOURCES = {"gpu": "GPUs", "cpu": "cores (cpu_milli / 1000)", "memory": "GiB (memory_mib / 1024)"}

#: ``F_i`` range (worker-slots) drawn for a job whose run time the trace does not give.
_LIMIT_RANGE = (1000, 6000)

#: Most GPUs (workers) one job of a trace may ask for.
MAX_GPUS = 10**6
# MAX_HORIZON (from instances.gadget, the largest T of an instance) also bounds the span from the first to the
# last arrival when the caller gives no ``horizon`` (which then is the last arrival slot): a longer span needs an
# explicit ``horizon=`` (or ``max_jobs=``).


#: Columns whose value names a job, tried in this order (the first present one is used); without
#: any of them a job is named after its CSV line, ``"line N"``.
ID_COLUMNS = ("job_id", "jobid", "name")


@dataclass(frozen=True)
class _Job:
    lineno: int
    time: float
    workers: int
    duration: float | None  # seconds; None: not in the trace, F_i is drawn
    name: str = ""


def _job_name(row: CsvRow) -> str:
    """The row's job id (:data:`ID_COLUMNS`), or ``"line N"`` when the file has none or it is empty."""
    for col in ID_COLUMNS:
        if col in row.row:
            text = row.row[col].strip()
            return text if text else f"line {row.lineno}"
    return f"line {row.lineno}"



def _check_budget(row: CsvRow, col: str, duration: float, workers: int, slot_seconds: float) -> None:
    """Raise unless ``F_i = ceil(duration / slot_seconds) * workers`` is at most ``MAX_MAGNITUDE``."""
    q = duration / slot_seconds  # inf when it overflows
    slots = math.ceil(snap(np.array([q]))[0]) if math.isfinite(q) else math.inf
    if not slots * workers <= MAX_MAGNITUDE:
        raise row.error(col, row.row[col].strip(), f"a run time of at most MAX_MAGNITUDE = 1e7 worker-slots "
                         f"(the limit F_i is a field): ceil(run time / slot_seconds) * {workers} GPUs = "
                         f"{slots * workers:.3g} with slot_seconds = {slot_seconds!r}; a larger slot_seconds "
                         "reads a longer job")


def _check_options(slot_seconds, horizon, max_jobs, utility) -> float:
    slot_seconds = positive("slot_seconds", slot_seconds)
    for name, value in (("horizon", horizon), ("max_jobs", max_jobs)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int | np.integer)
                                  or value < 1):
            raise ValueError(f"{name} = {value!r}; expected None or an integer >= 1")
    if utility not in UTILITIES:
        raise ValueError(f"utility = {utility!r}; expected one of {sorted(UTILITIES)}")
    return slot_seconds


def _build(path: Path, jobs: list[_Job], *, source: str, time_column: str, cluster: Cluster | None,
           slot_seconds: float, horizon: int | None, max_jobs: int | None, utility: str, seed) -> GadgetInstance:
    """Arrivals, budgets and drawn parameters for parsed jobs (see the readers' docstrings)."""
    if not jobs:
        raise TraceError(path, 1, "job rows", 0, "at least one GPU job; no GPU jobs to schedule (every row was "
                         "skipped)")
    rng = np.random.default_rng(seed)
    if cluster is None:
        cluster = fat_tree_cluster(seed=rng)
    if "gpu" not in cluster.resources:
        raise ValueError(f"cluster resources {cluster.resources}; expected one named 'gpu'")
    jobs = sorted(jobs, key=lambda j: j.time)  # stable: ties keep file order
    t0 = jobs[0].time
    with np.errstate(over="ignore", invalid="ignore"):  # a huge span: inf slots, refused below
        arrival = 1 + np.floor(snap(np.array([j.time - t0 for j in jobs]) / slot_seconds))
    n_read = len(jobs)
    if max_jobs is not None and n_read > max_jobs:
        jobs, arrival = jobs[:max_jobs], arrival[:max_jobs]
        log.info("%s: kept the first %d of %d jobs (max_jobs)", path, max_jobs, n_read)
    if horizon is None:
        late = ~(arrival <= MAX_HORIZON)
        if late.any():
            k = int(np.flatnonzero(late)[0])
            raise TraceError(path, jobs[k].lineno, time_column, jobs[k].time,
                             f"a time at most MAX_HORIZON = {MAX_HORIZON} slots of slot_seconds = {slot_seconds!r}"
                             f" after the earliest {time_column} {t0!r} (line {jobs[0].lineno}), as the horizon "
                             f"defaults to the last arrival slot; this one arrives in slot {arrival[k]:.3g}: "
                             "pass horizon= to drop later jobs (or max_jobs=)")
        horizon = int(arrival.max())
    else:
        keep = arrival <= horizon
        if not keep.all():
            log.info("%s: dropped %d jobs arriving after the horizon T = %d (slots %.0f..%.0f)", path,
                     int((~keep).sum()), horizon, arrival[~keep].min(), arrival[~keep].max())  # maybe inf
            jobs = [j for j, k in zip(jobs, keep, strict=True) if k]
            arrival = arrival[keep]
        if not jobs:
            raise ValueError(f"{path}: every job arrives after the horizon T = {horizon}")
    arrival = arrival.astype(np.int64)
    n = len(jobs)
    nmax = np.array([j.workers for j in jobs], dtype=np.int64)
    limit = np.empty(n)
    known = np.array([j.duration is not None for j in jobs])
    dur = np.array([j.duration if j.duration is not None else 0.0 for j in jobs])
    limit[known] = np.maximum(np.ceil(snap(dur[known] / slot_seconds)) * nmax[known], 1)
    n_drawn = int((~known).sum())
    if n_drawn:
        limit[~known] = rng.integers(_LIMIT_RANGE[0], _LIMIT_RANGE[1] + 1, n_drawn).astype(float)
        log.info("%s: %d jobs have no run time; their F_i is drawn from %s worker-slots", path, n_drawn,
                 list(_LIMIT_RANGE))
    zeta, bw, params = _draw_job_params(rng, limit, utility)
    gpu = cluster.resources.index("gpu")
    per_worker = np.zeros((n, len(cluster.resources)))
    per_worker[:, gpu] = 1.0
    lim = np.zeros((n, len(cluster.resources)))
    lim[:, gpu] = limit
    names = [j.name for j in jobs]
    seen: dict[str, int] = {}
    for k, j in enumerate(jobs):  # a repeated id (a restarted job) keeps its line to stay distinct
        if j.name in seen:
            names[k] = f"{j.name} (line {j.lineno})"
            first = seen[j.name]
            names[first] = f"{jobs[first].name} (line {jobs[first].lineno})"
        else:
            seen[j.name] = k
    inst = GadgetInstance(cluster=cluster, horizon=horizon, arrival=arrival, max_workers=nmax,
                          per_worker=per_worker, limit=lim, bandwidth=bw, zeta=zeta, utility=utility,
                          utility_params=params, name=f"{source}-{path.stem}", job_ids=tuple(names))
    log.info("read %s: %d jobs, arrivals 1..%d, T = %d, workers %d..%d, F %d..%d worker-slots", path, n,
             int(arrival.max()), horizon, int(nmax.min()), int(nmax.max()), int(limit.min()), int(limit.max()))
    return inst


def read_philly_jobs(path: str | Path, *, cluster: Cluster | None = None, slot_seconds: float = 60.0,
                     horizon: int | None = None, max_jobs: int | None = None, utility: str = "sigmoid",
                     seed=None) -> GadgetInstance:
    """Read a Philly-derived job CSV (``timestamp,duration,num_gpus,gpu_time,cluster``) as GADGET jobs.

    Only ``timestamp``, ``duration`` and ``num_gpus`` are read (other columns, e.g. ``gpu_time``
    and ``cluster``, may be present, in any order, and are ignored), and a job id column if there
    is one (:data:`ID_COLUMNS`).  Per job i (a row):

    * **Id**: ``job_ids[i]`` is the row's ``job_id`` / ``jobid`` / ``name``, else ``"line N"``
      (its line in the file); a repeated id gets its line appended.  Jobs are ordered by
      arrival, so ``job_ids`` maps the models' job positions back to the file.

    * **Arrival**: ``a_i = 1 + floor((timestamp - t0) / slot_seconds)``, ``t0`` the smallest
      timestamp in the file, so the first job arrives in slot 1.
    * **Workers**: ``N_i = num_gpus`` (a whole number >= 1), one GPU per worker.
    * **Limit**: ``F_i = max(1, ceil(duration / slot_seconds) * N_i)`` on the resource ``"gpu"``
      (``l_i^gpu = 1``), i.e. the worker-slots the job used in the trace.  Other resources of a
      given cluster get ``l_i^r = F_i^r = 0``.
    * **Drawn** with ``seed`` (as :func:`~clusteropt.instances.gadget.instance.random_gadget`): ``zeta_i``,
      ``b_i`` and the ``utility`` parameters; and the cluster, when ``cluster`` is None, is
      :func:`~clusteropt.instances.gadget.instance.fat_tree_cluster` drawn first from the same generator.

    The jobs are sorted by timestamp (stable: ties keep file order); ``max_jobs`` keeps the first
    ones.  ``horizon`` defaults to the last arrival slot, which must then be at most
    :data:`MAX_HORIZON` (10**6 slots; a farther time stamp is a :class:`TraceError` naming its line,
    so one outlier cannot make a horizon no run finishes); with a given horizon, later jobs are
    dropped (logged at INFO).

    Parameters
    ----------
    path : str or Path
    cluster : Cluster, optional
        Must have a resource named ``"gpu"``.
    slot_seconds : float, default 60.0
        Seconds per slot; positive and finite.
    horizon : int, optional
        ``T`` >= 1; default the last arrival slot (at most :data:`MAX_HORIZON`).
    max_jobs : int, optional
        Keep at most this many (the earliest) jobs; >= 1.
    utility : str, default "sigmoid"
        One of :data:`~clusteropt.instances.gadget.instance.UTILITIES`.
    seed : int or numpy Generator, optional

    Returns
    -------
    GadgetInstance
        Named ``philly-<file stem>``.

    Raises
    ------
    TraceError
        Message ``<file>:<line>:`` (line 1 is the header): an empty file or one without job rows;
        a header missing a required column (named in the message) or repeating one; a row whose
        column count differs from the header's; a non-numeric, NaN, infinite or negative
        timestamp, duration or num_gpus; num_gpus below 1, not whole or above :data:`MAX_GPUS`;
        ``F_i`` above :data:`~clusteropt.instances.base.MAX_MAGNITUDE` (reported at the duration);
        without ``horizon``, a timestamp more than :data:`MAX_HORIZON` slots after the first; bytes
        that are not UTF-8; CSV syntax errors (e.g. a field longer than ``csv.field_size_limit()``).
    ValueError
        Bad keyword arguments, a cluster without ``"gpu"``, or no job left in the horizon.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "philly.csv"
    >>> _ = p.write_text("timestamp,duration,num_gpus,gpu_time,cluster\\n"
    ...                  "600,3600,4,14400,0\\n0,30,1,30,0\\n90,0,2,0,0\\n")
    >>> inst = read_philly_jobs(p, seed=0)
    >>> inst.arrival.tolist(), inst.max_workers.tolist(), inst.budget.tolist(), inst.horizon
    ([1, 2, 11], [1, 2, 4], [1, 1, 240], 11)
    >>> inst.job_ids                       # no id column: each job's line in the file
    ('line 3', 'line 4', 'line 2')
    >>> _ = p.write_text("timestamp,duration,num_gpus,gpu_time,cluster\\n0,30,0,0,0\\n")
    >>> read_philly_jobs(p)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    clusteropt.instances.readers.TraceError: ...philly.csv:2: num_gpus = '0'; expected a whole number >= 1
    """
    slot_seconds = _check_options(slot_seconds, horizon, max_jobs, utility)
    path = Path(path)
    jobs = []
    for row in csv_rows(path, PHILLY_COLUMNS):
        time = row.number("timestamp")
        duration = row.number("duration")
        workers = row.count("num_gpus", minimum=1, maximum=MAX_GPUS, why="MAX_GPUS")
        _check_budget(row, "duration", duration, workers, slot_seconds)
        jobs.append(_Job(row.lineno, time, workers, duration, _job_name(row)))
    return _build(path, jobs, source="philly", time_column="timestamp", cluster=cluster, slot_seconds=slot_seconds,
                  horizon=horizon, max_jobs=max_jobs, utility=utility, seed=seed)


@dataclass(frozen=True)
class NodeList:
    """What :func:`read_alibaba_nodes` read besides the cluster: each server's name and GPU model."""

    names: tuple[str, ...]
    models: tuple[str, ...]


def read_alibaba_nodes(path: str | Path, *, rack_size: int = 16, server_bw: float = 100.0,
                       rack_bw: float = 800.0, resources=("gpu",), skip_gpuless: bool = True,
                       group_by: str = "model", topology: str = "tree") -> tuple[Cluster, NodeList]:
    """Read the Alibaba GPU cluster 2023 node list as a GADGET cluster (paper 000's substrate).

    Per node row (``sn,cpu_milli,memory_mib,gpu,model``; other columns are ignored): one server
    with capacity ``gpu`` GPUs and, when asked for in ``resources``, ``cpu_milli / 1000`` cores
    and ``memory_mib / 1024`` GiB (:data:`NODE_RESOURCES`).  Nodes without a GPU are skipped when
    ``skip_gpuless`` (a GADGET worker is one GPU), else kept with capacity 0.

    **The topology is not in the trace** (no racks, no links), so a documented two-level tree is
    built over the servers, like the paper's Sec. VI-1 cluster
    (:func:`~clusteropt.instances.gadget.instance.fat_tree_cluster`) but deterministic: servers are
    grouped by GPU model (``group_by="model"``, the default: a rack holds one model, as clusters
    are usually built) or in file order (``"file"``), cut into racks of at most ``rack_size``;
    each server links to its rack switch both ways at ``server_bw`` Gbps, each rack switch to one
    core switch both ways at ``rack_bw`` Gbps.  Servers are numbered in the order of the racks,
    within a rack in file order; :class:`NodeList` gives each one's ``sn`` and model, and
    ``Cluster.rack`` its rack.

    ``topology="fat-tree"`` builds the standard k-ary fat-tree (Al-Fares et al.;
    :func:`~clusteropt.instances.gadget.instance.k_ary_fat_tree`) instead, with the smallest even ``k``
    whose ``k^3 / 4`` host ports hold the servers: the servers, in the same order, fill the ports
    edge switch by edge switch (``k / 2`` servers each, so ``rack_size`` is not used), host links
    at ``server_bw``, every switch-to-switch link at ``rack_bw``; ``Cluster.rack`` is the pod.  Not
    a tree: GADGET runs it through its quotient tree (``Gadget(quotient=True)``,
    ``clusteropt run --quotient-tree``).

    Returns
    -------
    (Cluster, NodeList)

    Raises
    ------
    TraceError
        ``<file>:<line>:`` and the field: a header without the five columns or with repeats, a
        row with another column count, ``gpu`` not a whole number in [0, MAX_GPUS], a negative or
        non-numeric ``cpu_milli`` / ``memory_mib`` (or, for a resource read, a capacity above
        :data:`~clusteropt.instances.base.MAX_MAGNITUDE`), a repeated ``sn``, or no node with a GPU.
    ValueError
        ``rack_size`` < 1, a bandwidth not > 0, an unknown resource, ``group_by`` or ``topology``.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> rows = ["sn,cpu_milli,memory_mib,gpu,model", "a,64000,262144,2,P100", "b,96000,393216,8,G2",
    ...         "c,8000,1024,0,"]
    >>> with tempfile.TemporaryDirectory() as d:
    ...     f = pathlib.Path(d) / "nodes.csv"
    ...     _ = f.write_text(chr(10).join(rows))
    ...     cluster, nodes = read_alibaba_nodes(f, resources=("gpu", "cpu"))
    >>> cluster.capacity.tolist(), nodes.models, cluster.n_switches, cluster.is_tree()   # node c has no GPU
    ([[2.0, 64.0], [8.0, 96.0]], ('P100', 'G2'), 3, True)
    """
    path = Path(path)
    if int(rack_size) != rack_size or rack_size < 1:
        raise ValueError(f"rack_size = {rack_size!r}; expected a whole number >= 1")
    for name, bw in (("server_bw", server_bw), ("rack_bw", rack_bw)):
        if not (math.isfinite(bw) and bw > 0):
            raise ValueError(f"{name} = {bw!r}; expected a bandwidth > 0 (Gbps)")
    resources = tuple(resources)
    unknown = [r for r in resources if r not in NODE_RESOURCES]
    if unknown or not resources or len(set(resources)) != len(resources):
        raise ValueError(f"resources = {resources!r}; expected distinct names among {tuple(NODE_RESOURCES)}")
    if group_by not in ("model", "file"):
        raise ValueError(f"group_by = {group_by!r}; expected 'model' or 'file'")
    if topology not in ("tree", "fat-tree"):
        raise ValueError(f"topology = {topology!r}; expected 'tree' or 'fat-tree'")
    names: list[str] = []
    models: list[str] = []
    caps: list[list[float]] = []
    seen: dict[str, int] = {}
    skipped = 0
    for row in csv_rows(path, ALIBABA_NODE_COLUMNS, "at least one node row"):
        sn = row.row["sn"].strip()
        if sn in seen:
            raise row.error("sn", sn, f"a node listed once (line {seen[sn]} has it)")
        seen[sn] = row.lineno
        gpu = row.count("gpu", minimum=0, maximum=MAX_GPUS, why=f"MAX_GPUS = {MAX_GPUS}")
        cpu, mem = row.number("cpu_milli"), row.number("memory_mib")
        assert cpu is not None and mem is not None  # not optional
        if gpu == 0 and skip_gpuless:
            skipped += 1
            continue
        value = {"gpu": float(gpu), "cpu": cpu / 1000.0, "memory": mem / 1024.0}
        for res, col in (("cpu", "cpu_milli"), ("memory", "memory_mib")):
            if res in resources and value[res] > MAX_MAGNITUDE:
                raise row.error(col, row.row[col].strip(), f"a capacity {NODE_RESOURCES[res]} of at most "
                                "MAX_MAGNITUDE = 1e7 (solvers mishandle coefficients near 1e15)")
        names.append(sn)
        models.append(row.row["model"].strip())
        caps.append([value[r] for r in resources])
    if not caps:
        raise TraceError(path, 1, "gpu", "", "at least one node with a GPU (every node has gpu = 0)")
    if skipped:
        log.info("%s: %d nodes without a GPU skipped", path, skipped)
    order = np.arange(len(caps))
    if group_by == "model":
        first = {m: k for k, m in reversed(list(enumerate(models)))}  # models in order of first appearance
        order = np.array(sorted(order.tolist(), key=lambda s: (first[models[s]], s)), dtype=np.int64)
    node_list = NodeList(tuple(names[s] for s in order.tolist()), tuple(models[s] for s in order.tolist()))
    if topology == "fat-tree":
        k = 2
        while k ** 3 // 4 < order.size:
            k += 2
        cluster = k_ary_fat_tree(k, capacity=np.asarray(caps, dtype=float)[order], resources=resources,
                                 host_bw=float(server_bw), fabric_bw=float(rack_bw))
        return cluster, node_list
    groups = [models[s] if group_by == "model" else "" for s in order.tolist()]
    rack = np.zeros(order.size, dtype=np.int64)
    k, start = 0, 0
    for pos in range(1, order.size + 1):
        if pos == order.size or groups[pos] != groups[start] or pos - start == rack_size:
            rack[start:pos] = k
            k, start = k + 1, pos
    n = order.size
    links = np.concatenate([np.column_stack([np.arange(n), n + rack]), np.column_stack([n + rack, np.arange(n)]),
                            np.column_stack([n + np.arange(k), np.full(k, n + k)]),
                            np.column_stack([np.full(k, n + k), n + np.arange(k)])])
    bandwidth = np.concatenate([np.full(2 * n, float(server_bw)), np.full(2 * k, float(rack_bw))])
    cluster = Cluster(capacity=np.asarray(caps, dtype=float)[order], links=links, bandwidth=bandwidth,
                      n_switches=k + 1, resources=resources, rack=rack)
    return cluster, node_list


def read_alibaba_jobs(path: str | Path, *, cluster: Cluster | None = None, slot_seconds: float = 60.0,
                      horizon: int | None = None, max_jobs: int | None = None, utility: str = "sigmoid",
                      skip_cpu_only: bool = True, seed=None) -> GadgetInstance:
    """Read an Alibaba GPU cluster 2023 pod list CSV as GADGET jobs (one pod = one job).

    Only ``num_gpu``, ``gpu_milli``, ``creation_time``, ``deletion_time`` and ``scheduled_time``
    are read, and the pod's ``name`` (``cpu_milli``, ``memory_mib``, ``gpu_spec``, ``qos``,
    ``pod_phase`` and any other column may be present and are ignored).  Per GPU pod i:

    * **Id**: ``job_ids[i]`` is the pod's ``name`` (as :func:`read_philly_jobs` does with its id
      column), else ``"line N"``.

    * **Arrival**: ``a_i = 1 + floor((creation_time - t0) / slot_seconds)``, ``t0`` the smallest
      creation time among the pods kept; an empty or NaN ``creation_time`` is an error.
    * **Workers**: ``N_i = num_gpu`` (a whole number), one GPU per worker.  A pod with
      ``gpu_milli < 1000`` asks for a *fraction* of a GPU; the paper's model has whole GPUs per
      worker, so such a pod becomes **one worker using one whole GPU** (whatever its ``num_gpu``).
      ``gpu_milli`` must be in [0, 1000].
    * **CPU-only pods** (``num_gpu == 0``) are skipped when ``skip_cpu_only`` (counted and logged at
      INFO); with ``skip_cpu_only=False`` such a pod is a :class:`TraceError`, since a GADGET job
      needs at least one GPU worker.
    * **Limit**: with run time ``d = deletion_time - scheduled_time``,
      ``F_i = max(1, ceil(d / slot_seconds) * N_i)`` on the resource ``"gpu"`` (``l_i^gpu = 1``).
      If either time is empty or NaN (a pod not yet scheduled or not yet deleted), ``F_i`` is
      drawn as an integer in [1000, 6000] (the range of
      :func:`~clusteropt.instances.gadget.instance.random_gadget`) and the count is logged.
    * **Drawn** with ``seed`` (as :func:`~clusteropt.instances.gadget.instance.random_gadget`): the missing
      ``F_i`` (first), then ``zeta_i``, ``b_i`` and the ``utility`` parameters; the cluster, when
      ``cluster`` is None, is :func:`~clusteropt.instances.gadget.instance.fat_tree_cluster` drawn before
      all of them from the same generator.

    Sorting, ``max_jobs`` and ``horizon`` are as in :func:`read_philly_jobs`.  The instance is
    named ``alibaba-<file stem>``.

    Raises
    ------
    TraceError
        Message ``<file>:<line>:`` (line 1 is the header): an empty file or one without rows;
        a header missing a required column (named) or repeating one; a row whose column count
        differs from the header's; a non-numeric, infinite or negative number in a read column
        (NaN or empty allowed only in ``deletion_time`` and ``scheduled_time``); ``num_gpu`` not
        whole or above :data:`MAX_GPUS`; ``gpu_milli`` above 1000; ``deletion_time <
        scheduled_time``; ``F_i`` above :data:`~clusteropt.instances.base.MAX_MAGNITUDE` (at the
        deletion_time); a CPU-only pod with ``skip_cpu_only=False``; no GPU pod at all (at line 1);
        without ``horizon``, a creation time more than :data:`MAX_HORIZON` slots after the first;
        bytes that are not UTF-8; CSV syntax errors.
    ValueError
        Bad keyword arguments or a cluster without ``"gpu"``.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "pods.csv"
    >>> head = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,"
    >>> head += "creation_time,deletion_time,scheduled_time\\n"
    >>> _ = p.write_text(head + "a,8000,30000,2,1000,,LS,Succeeded,100,700,160\\n"
    ...                  "b,4000,1000,0,0,,BE,Succeeded,130,200,131\\n"
    ...                  "c,6000,1000,1,500,,LS,Running,250,,251\\n")
    >>> inst = read_alibaba_jobs(p, seed=0)
    >>> inst.arrival.tolist(), inst.max_workers.tolist(), inst.budget[0].item(), inst.job_ids
    ([1, 3], [2, 1], 18, ('a', 'c'))
    """
    slot_seconds = _check_options(slot_seconds, horizon, max_jobs, utility)
    path = Path(path)
    jobs = []
    n_cpu = n_frac = 0
    for row in csv_rows(path, ALIBABA_COLUMNS):
        time = row.number("creation_time")
        gpus = row.count("num_gpu", minimum=0, maximum=MAX_GPUS, why="MAX_GPUS")
        milli = row.number("gpu_milli")
        if milli > 1000:
            raise row.error("gpu_milli", row.row["gpu_milli"].strip(), "a per-GPU share in [0, 1000]")
        deleted = row.number("deletion_time", optional=True)
        scheduled = row.number("scheduled_time", optional=True)
        duration = None
        if deleted is not None and scheduled is not None:
            if deleted < scheduled:
                raise row.error("deletion_time", row.row["deletion_time"].strip(),
                                f">= scheduled_time = {row.row['scheduled_time'].strip()}")
            duration = deleted - scheduled
        if gpus == 0:
            if skip_cpu_only:
                n_cpu += 1
                continue
            raise row.error("num_gpu", row.row["num_gpu"].strip(),
                            ">= 1 (a CPU-only pod is not a DL job; pass skip_cpu_only=True to skip it)")
        if milli < 1000:
            n_frac += 1
            gpus = 1
        if duration is not None:
            _check_budget(row, "deletion_time", duration, gpus, slot_seconds)
        jobs.append(_Job(row.lineno, time, gpus, duration, _job_name(row)))
    if n_cpu:
        log.info("%s: skipped %d CPU-only pods (num_gpu = 0)", path, n_cpu)
    if n_frac:
        log.info("%s: %d pods ask for a fraction of a GPU (gpu_milli < 1000); each is one whole-GPU worker",
                 path, n_frac)
    return _build(path, jobs, source="alibaba", time_column="creation_time", cluster=cluster,
                  slot_seconds=slot_seconds, horizon=horizon, max_jobs=max_jobs, utility=utility, seed=seed)
