"""Independent checker for worker placements (paper 000, constraints (2) and (4) at one slot)."""

from __future__ import annotations

import numpy as np

from clusteropt.instances.worker_placement import WorkerPlacementInstance
from clusteropt.verify.base import Check, Violation, violations_where

__all__ = ["check_worker_placement"]


def check_worker_placement(
    instance: WorkerPlacementInstance, workers: np.ndarray, *, tol: float = 1e-6
) -> Check:
    """Check an integral placement ``workers[i, s]`` (workers of job i on server s).

    Checks integrality and non-negativity, (2) ``sum_s y_is <= N_i`` and
    (4) ``sum_i l_i^r y_is <= C_s^r`` of paper 000, and recomputes the utility
    ``sum_i u_i sum_s y_is``.

    Examples
    --------
    >>> from clusteropt.instances import WorkerPlacementInstance
    >>> inst = WorkerPlacementInstance([[2, 8]], [[1, 4]], [3], [2.0], ("gpu", "mem"))
    >>> check_worker_placement(inst, [[2]]).value
    4.0
    >>> [str(v) for v in check_worker_placement(inst, [[3]]).violations]
    ['(4) server capacity violated at s=0, r=gpu by 1', '(4) server capacity violated at s=0, r=mem by 4']
    """
    y = np.asarray(workers, dtype=float)
    want = (instance.n_jobs, instance.n_servers)
    if y.shape != want:
        return Check((Violation("shape", f"workers.shape={y.shape}", float("inf")),), float("nan"))
    out: list[Violation] = []
    finite = np.isfinite(y)
    if not finite.all():
        out += violations_where("finite", np.where(finite, 0.0, np.inf), lambda i: f"i={i[0]}, s={i[1]}")
        return Check(tuple(out), float("nan"))
    out += violations_where("integrality", np.abs(y - np.round(y)), lambda i: f"i={i[0]}, s={i[1]}",
                            tol=tol)
    out += violations_where("non-negativity", -y, lambda i: f"i={i[0]}, s={i[1]}", tol=tol)
    per_job = y.sum(axis=1)
    out += violations_where(
        "(2) worker limit", per_job - instance.max_workers, lambda i: f"i={i[0]}", tol=tol
    )
    load = np.einsum("ir,is->sr", instance.per_worker, y)
    res = instance.resources
    out += violations_where(
        "(4) server capacity", load - instance.capacity, lambda i: f"s={i[0]}, r={res[i[1]]}",
        tol=tol,
    )
    return Check(tuple(out), float(instance.utility @ per_job))
