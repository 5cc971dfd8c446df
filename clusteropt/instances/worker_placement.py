"""One slot of GADGET's resource model: place workers of DL jobs on multi-resource servers.

This is the small reference system the foundation ships so that every layer (instance, Pyomo and
CVXPY models, solvers, export, verifier, CLI, demo) has a real model to work on.  Its constraints
are (2) and (4) of paper 000 (Yu et al., GADGET, Sec. IV-1) at a single time slot, with a linear
per-worker utility; the ring-all-reduce structure of the full problem is left to the GADGET
system.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from clusteropt.instances.base import Instance, InstanceError

__all__ = ["WorkerPlacementInstance", "random_worker_placement"]


@dataclasses.dataclass(frozen=True, eq=False)
class WorkerPlacementInstance(Instance):
    """Servers with multi-resource capacities and jobs asking for workers.

    Parameters
    ----------
    capacity : array (S, R)
        ``C_s^r``, type-r capacity of server s (paper 000, Eq. (4)); >= 0.
    per_worker : array (I, R)
        ``l_i^r``, type-r resource of one worker of job i (Eq. (3)-(4)); >= 0.
    max_workers : int array (I,)
        ``N_i``, most concurrent workers of job i (Eq. (2)); >= 1.
    utility : array (I,)
        Utility per scheduled worker of job i (a linear stand-in for the paper's concave
        utility); >= 0.
    resources : tuple of str
        Names of the R resource types: non-empty and distinct.

    Examples
    --------
    >>> WorkerPlacementInstance([[4, 16]], [[1, 4], [2, 4]], [2, 1], [1.0, 3.0], ("gpu", "mem"))
    ... # doctest: +ELLIPSIS
    WorkerPlacementInstance(capacity=array([[ 4., 16.]]), ...)
    >>> WorkerPlacementInstance([[4, 16]], [[1, -4]], [2], [1.0], ("gpu", "mem"))
    Traceback (most recent call last):
    ...
    clusteropt.instances.base.InstanceError: per_worker[0, 1] = -4.0; expected >= 0
    """

    kind = "worker-placement"

    capacity: np.ndarray
    per_worker: np.ndarray
    max_workers: np.ndarray
    utility: np.ndarray
    resources: tuple[str, ...] = ("gpu", "cpu", "mem")

    def validate(self) -> None:
        """Check names, shapes, signs and integrality (see the class docstring for the rules)."""
        n_res = len(self._names("resources"))  # distinct: a repeat would merge rows of the model
        cap = self._array("capacity", ndim=2, shape=(None, n_res))
        self._check("capacity", cap, cap >= 0, ">= 0")
        if cap.shape[0] == 0:
            raise InstanceError("capacity.shape[0]", 0, "at least one server")
        pw = self._array("per_worker", ndim=2, shape=(None, n_res))
        self._check("per_worker", pw, pw >= 0, ">= 0")
        n_jobs = pw.shape[0]
        nmax = self._array("max_workers", dtype=np.int64, ndim=1, shape=(n_jobs,))
        self._check("max_workers", nmax, nmax >= 1, ">= 1")
        util = self._array("utility", ndim=1, shape=(n_jobs,))
        self._check("utility", util, util >= 0, ">= 0")

    @property
    def n_jobs(self) -> int:
        """Number of jobs I."""
        return int(self.per_worker.shape[0])

    @property
    def n_servers(self) -> int:
        """Number of servers S."""
        return int(self.capacity.shape[0])


def random_worker_placement(
    n_jobs: int = 8, n_servers: int = 4, *, seed: int | np.random.Generator | None = None
) -> WorkerPlacementInstance:
    """Random instance with paper 000's Sec. VI server mix (GPUs per server from {1, 2, 4, 8}).

    Servers also get 8 CPU cores per GPU and 64 GB memory per GPU; each worker takes one GPU,
    2-8 cores and 8-48 GB; jobs ask for up to 1-8 workers with utility 1-10 per worker.

    >>> inst = random_worker_placement(3, 2, seed=0)
    >>> inst.capacity.shape, inst.per_worker.shape
    ((2, 3), (3, 3))
    """
    rng = np.random.default_rng(seed)
    if n_jobs < 1 or n_servers < 1:
        raise ValueError(f"n_jobs = {n_jobs}, n_servers = {n_servers}; expected both >= 1")
    gpus = rng.choice([1, 2, 4, 8], size=n_servers).astype(float)
    capacity = np.column_stack([gpus, 8 * gpus, 64 * gpus])
    per_worker = np.column_stack(
        [np.ones(n_jobs), rng.integers(2, 9, n_jobs), 8 * rng.integers(1, 7, n_jobs)]
    ).astype(float)
    return WorkerPlacementInstance(
        capacity=capacity,
        per_worker=per_worker,
        max_workers=rng.integers(1, 9, n_jobs),
        utility=np.round(rng.uniform(1, 10, n_jobs), 2),
    )
