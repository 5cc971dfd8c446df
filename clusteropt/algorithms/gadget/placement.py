"""Greedy ring placement: put k workers of one job on servers where a ring fits (paper 000, Sec. VI-2).

The baselines of Sec. VI-2 "place workers based on the simple heuristic that greedily allocates
workers to servers where a cycle can be attained"; GADGET's fast per-slot solver uses the same
placement.  :func:`place_ring` tries, in order, and returns the first that fits the residual
capacities:

1. one server (no bandwidth: co-located workers talk inside the server, Fig. 2(a)), best fit;
2. the fewest servers of one rack (servers sharing a ``rack`` label), largest free capacity
   first, ring in server order, every ring edge on the fewest-hop path (Eqs. (7)-(9));
3. the same over all servers, in rack order.

A placement is accepted only if every server keeps ``sum_i l_i^r y_is <= C_s^r`` (Eq. (4)) and
every link its bandwidth (Eq. (8)); the caller subtracts what it takes.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

import numpy as np

from clusteropt.decisions.gadget import Ring
from clusteropt.instances.gadget.instance import Cluster

__all__ = ["Residual", "place_ring"]


@dataclasses.dataclass
class Residual:
    """Free capacity of one slot: ``server`` (S, R) and ``link`` (L,), updated by :meth:`take`."""

    server: np.ndarray
    link: np.ndarray
    paths: Mapping[tuple[int, int], list[int]]
    rack: np.ndarray
    #: The servers of each rack, racks in label order (from ``rack``; :func:`place_ring`'s candidates).
    rack_groups: tuple[np.ndarray, ...] = dataclasses.field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.rack_groups = tuple(np.flatnonzero(self.rack == r) for r in np.unique(self.rack))

    @classmethod
    def full(cls, cluster: Cluster, paths=None) -> Residual:
        """The whole cluster free (``paths`` from :meth:`Cluster.paths`, computed if not given)."""
        rack = cluster.rack if cluster.rack is not None else np.zeros(cluster.n_servers, dtype=np.int64)
        return cls(cluster.capacity.astype(float).copy(), cluster.bandwidth.astype(float).copy(),
                   cluster.paths() if paths is None else paths, np.asarray(rack))

    def take(self, workers: dict[int, int], per_worker: np.ndarray, ring: Ring | None, bandwidth: float) -> None:
        """Subtract a placement."""
        for s, n in workers.items():
            self.server[s] -= n * per_worker
        if ring is not None:
            for p in ring.paths:
                self.link[list(p)] -= bandwidth


def place_ring(res: Residual, k: int, per_worker, bandwidth: float, *, tol: float = 1e-9):
    """Servers for ``k`` workers of one job and their ring, or ``None`` when nothing fits.

    Parameters
    ----------
    res : Residual
        Free capacity (not modified; call :meth:`Residual.take` to commit).
    k : int
        Workers (>= 1).
    per_worker : array (R,)
        ``l_i^r``.
    bandwidth : float
        ``b_i``, reserved on every link of every ring edge.

    Returns
    -------
    (dict server -> workers, Ring or None) or None

    Examples
    --------
    >>> from clusteropt.instances.gadget.instance import fat_tree_cluster
    >>> res = Residual.full(fat_tree_cluster(4, n_racks=2, gpus=(2,), seed=0))
    >>> workers, ring = place_ring(res, 3, [1.0], 1.0)
    >>> sum(workers.values()), len(ring.servers)
    (3, 2)
    >>> place_ring(res, 9, [1.0], 1.0) is None
    True
    """
    pw = np.asarray(per_worker, dtype=float)
    if k < 1:
        raise ValueError(f"k = {k}; expected >= 1")
    with np.errstate(divide="ignore", invalid="ignore"):
        fit = np.where(pw > 0, (res.server + tol) / np.where(pw > 0, pw, 1), np.inf).min(axis=1)
    fit = np.floor(np.clip(fit, 0, k)).astype(np.int64)  # clip first: a job using no resource fits anywhere
    # 1. one server, best fit (the fullest server that still takes all k)
    ok = np.flatnonzero(fit >= k)
    if ok.size:
        free = res.server[ok].sum(axis=1)
        s = int(ok[np.argmin(free)])
        return {s: k}, None
    # 2. one rack, fewest servers; 3. everything
    groups = sorted(res.rack_groups, key=lambda g: -int(fit[g].sum()))
    for cand in [*groups, np.argsort(res.rack, kind="stable")]:
        if fit[cand].sum() < k:
            continue
        got = _fill(res, cand, fit, k, bandwidth, tol)
        if got is not None:
            return got
    return None


def _fill(res: Residual, cand: np.ndarray, fit: np.ndarray, k: int, bandwidth: float, tol: float):
    """Largest-fit servers of ``cand`` until k workers; the ring in (rack, server) order."""
    order = cand[np.argsort(-fit[cand], kind="stable")]
    workers, left = {}, k
    for s in order.tolist():
        if left == 0:
            break
        n = int(min(fit[s], left))
        if n > 0:
            workers[s] = n
            left -= n
    if left:
        return None
    servers = sorted(workers, key=lambda s: (int(res.rack[s]), s))
    paths = []
    need = np.zeros_like(res.link)
    for a, b in zip(servers, servers[1:] + servers[:1], strict=True):
        p = res.paths.get((a, b))
        if p is None:
            return None
        paths.append(tuple(p))
        need[p] += bandwidth
    if (need > res.link + tol).any():
        return None
    return workers, Ring(tuple(servers), tuple(paths))
