"""What a GADGET scheduler decides: per slot, workers per server and each job's ring.

A :class:`SlotAllocation` is one slot's decision of paper 000: ``workers[i, s] = y_is[t]``
(Eqs. (2)-(6)) and, for every job on two or more servers, its ring: the servers in ring order
(each once, Eq. (9)) and, for every ring edge ``servers[k] -> servers[k+1 mod m]``, the substrate
path as a tuple of link indices (the ``r_{ss'}^{(p,i)}[t] = 1`` of Eqs. (7)-(8)).  A job on one
server has no ring entry (its workers talk inside the server).  A :class:`GadgetSchedule` is the
list of slot allocations over ``1 .. T``.  Check either with :mod:`clusteropt.verify.gadget`.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

__all__ = ["GadgetSchedule", "Mapping", "Ring", "SlotAllocation"]


@dataclasses.dataclass(frozen=True)
class Ring:
    """A job's ring: ``servers`` in order, ``paths[k]`` the link indices from ``servers[k]`` to
    ``servers[(k + 1) % m]``.
    """

    servers: tuple[int, ...]
    paths: tuple[tuple[int, ...], ...]

    def to_json_dict(self, links=None) -> dict[str, Any]:
        """``{"servers": [...], "paths": [[link, ...], ...]}`` (plus ``"hops"`` as node lists
        when the cluster's ``links`` array is given).
        """
        out: dict[str, Any] = {"servers": list(self.servers), "paths": [list(p) for p in self.paths]}
        if links is not None:
            out["hops"] = [[int(links[p[0], 0])] + [int(links[k, 1]) for k in p] if p else [] for p in self.paths]
        return out


@dataclasses.dataclass(frozen=True)
class Mapping:
    """One candidate embedding of one job's ring (the ``omega_i^k`` of Alg. 2 / Sec. V-C).

    ``workers``: ``(server, count)`` pairs, servers ascending, counts >= 1, summing to the ring
    size kappa.  ``ring``: for a job on two or more servers, the cyclic sequence of its servers
    (runs of ring nodes on one server collapsed) and the link path of every ring edge; ``None``
    on one server.  A decomposition of an LP embedding may produce a ring that visits a server
    twice; :attr:`valid` is False for it (Eq. (9) wants each server once) and a scheduler must
    not use it as is.
    """

    job: int
    workers: tuple[tuple[int, int], ...]
    ring: Ring | None

    @property
    def size(self) -> int:
        """Ring size kappa: the workers summed."""
        return sum(n for _, n in self.workers)

    @property
    def valid(self) -> bool:
        """Each server once on the ring (Eq. (9)); always True on one server."""
        return self.ring is None or len(set(self.ring.servers)) == len(self.ring.servers)

    def node_load(self, per_worker, n_servers: int) -> np.ndarray:
        """Resources used per server, (S, R): ``l_i^r`` times the workers (Eq. (16))."""
        per_worker = np.asarray(per_worker, dtype=float)
        out = np.zeros((n_servers, per_worker.size))
        for s, n in self.workers:
            out[s] += n * per_worker
        return out

    def link_load(self, bandwidth: float, n_links: int) -> np.ndarray:
        """Bandwidth used per directed link, (L,): ``b_i`` per ring edge routed over it (Eq. (17))."""
        out = np.zeros(n_links)
        if self.ring is not None:
            for p in self.ring.paths:
                np.add.at(out, list(p), float(bandwidth))
        return out


@dataclasses.dataclass
class SlotAllocation:
    """One slot's decision: ``workers`` int (I, S) and ``rings`` job -> :class:`Ring`."""

    workers: np.ndarray
    rings: dict[int, Ring] = dataclasses.field(default_factory=dict)

    @classmethod
    def empty(cls, n_jobs: int, n_servers: int) -> SlotAllocation:
        """No worker anywhere."""
        return cls(np.zeros((n_jobs, n_servers), dtype=np.int64), {})

    def total_workers(self) -> np.ndarray:
        """``sum_s y_is`` per job."""
        return np.asarray(self.workers).sum(axis=1)


@dataclasses.dataclass
class GadgetSchedule:
    """Slot allocations for slots ``1 .. T`` (``slots[t - 1]``)."""

    slots: list[SlotAllocation]

    @property
    def workers(self) -> np.ndarray:
        """Workers ``y_is[t]`` stacked over slots, int (T, I, S)."""
        return np.stack([np.asarray(a.workers) for a in self.slots]) if self.slots else np.zeros((0, 0, 0), int)

    def worker_slots(self) -> np.ndarray:
        """``z_{i,T} = sum_t sum_s y_is[t]`` per job."""
        return self.workers.sum(axis=(0, 2)) if self.slots else np.zeros(0, dtype=np.int64)

    def to_json_list(self, links=None) -> list[dict[str, Any]]:
        """Per slot ``{"slot": t, "jobs": {job: {"workers": {server: n}, "ring": {...}}}}``,
        jobs and servers without workers left out (keys are strings, as JSON needs).
        """
        out = []
        for t, a in enumerate(self.slots, start=1):
            jobs = {}
            w = np.asarray(a.workers)
            for i in np.flatnonzero(w.sum(axis=1)).tolist():
                entry: dict[str, Any] = {"workers": {str(s): int(w[i, s]) for s in np.flatnonzero(w[i]).tolist()}}
                if i in a.rings:
                    entry["ring"] = a.rings[i].to_json_dict(links)
                jobs[str(i)] = entry
            out.append({"slot": t, "jobs": jobs})
        return out

    @classmethod
    def from_json_list(cls, data, n_jobs: int, n_servers: int) -> GadgetSchedule:
        """Inverse of :meth:`to_json_list`."""
        slots = []
        for rec in data:
            a = SlotAllocation.empty(n_jobs, n_servers)
            for i, entry in rec.get("jobs", {}).items():
                for s, n in entry.get("workers", {}).items():
                    a.workers[int(i), int(s)] = int(n)
                if "ring" in entry:
                    r = entry["ring"]
                    a.rings[int(i)] = Ring(tuple(int(s) for s in r["servers"]),
                                           tuple(tuple(int(k) for k in p) for p in r["paths"]))
            slots.append(a)
        return cls(slots)
