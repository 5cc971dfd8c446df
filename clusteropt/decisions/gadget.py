"""What a GADGET scheduler decides: per slot, workers per server and each job's ring.

A :class:`SlotAllocation` is one slot's decision of paper 000: ``workers[i, s] = y_is[t]``
(Eqs. (2)-(6)) and, for every job on two or more servers, its ring: the servers in ring order
(each once, Eq. (9)) and, for every ring edge ``servers[k] -> servers[k+1 mod m]``, the substrate
path as a tuple of link indices (the ``r_{ss'}^{(p,i)}[t] = 1`` of Eqs. (7)-(8)).  A job on one
server has no ring entry (its workers talk inside the server).  A :class:`GadgetSchedule` is the
list of slot allocations over ``1 .. T``.  Check either with :mod:`clusteropt.verify.gadget`.

An online run keeps its slots as :class:`PackedSlots`: each slot's nonzero ``workers`` entries and
rings, expanded to a dense :class:`SlotAllocation` only when read.  A dense ``(I, S)`` array per
slot is what every scheduler works on, but a run of a real trace does not fit in memory as T of
them (the Alibaba 2023 GPU trace: 7,064 GPU pods on 1,213 servers, 68 MB a slot in int64).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Sequence
from typing import Any, overload

import numpy as np

__all__ = ["GadgetSchedule", "Mapping", "PackedSlots", "Ring", "SlotAllocation"]


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


class PackedSlots(Sequence[SlotAllocation]):
    """Slot allocations stored by their nonzero ``workers`` entries and rings (module docstring).

    A read-only sequence: ``packed[k]`` is a new dense :class:`SlotAllocation` (changing it does
    not change the stored slot); :meth:`append` adds a slot.

    >>> packed = PackedSlots(2, 3)
    >>> packed.append(SlotAllocation(np.array([[0, 2, 0], [1, 0, 0]]), {}))
    >>> len(packed), packed[0].workers.tolist(), packed.worker_slots().tolist()
    (1, [[0, 2, 0], [1, 0, 0]], [2, 1])
    """

    def __init__(self, n_jobs: int, n_servers: int):
        self.shape = (int(n_jobs), int(n_servers))
        self._entries: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        self._rings: list[dict[int, Ring]] = []

    def append(self, alloc: SlotAllocation) -> None:
        """Store ``alloc`` (its ``workers`` must have this sequence's shape)."""
        w = np.asarray(alloc.workers)
        if w.shape != self.shape:
            raise ValueError(f"workers has shape {w.shape}; expected {self.shape}")
        i, s = np.nonzero(w)
        self._entries.append((i.astype(np.int64), s.astype(np.int64), w[i, s].copy()))
        self._rings.append(dict(alloc.rings))

    def copy(self) -> PackedSlots:
        """A sequence with the same slots, that later :meth:`append` calls on this one leave alone."""
        out = PackedSlots(*self.shape)
        out._entries, out._rings = list(self._entries), list(self._rings)
        return out

    def entries(self, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Slot ``k``'s (0-based) nonzero entries: jobs, servers, worker counts."""
        return self._entries[k]

    def rings(self, k: int) -> dict[int, Ring]:
        """Slot ``k``'s (0-based) rings."""
        return dict(self._rings[k])

    def worker_slots(self) -> np.ndarray:
        """``z_i = sum_t sum_s y_is[t]`` per job, from the stored entries."""
        z = np.zeros(self.shape[0], dtype=np.int64)
        for i, _, n in self._entries:
            np.add.at(z, i, n.astype(np.int64))
        return z

    def __len__(self) -> int:
        return len(self._entries)

    @overload
    def __getitem__(self, k: int) -> SlotAllocation: ...

    @overload
    def __getitem__(self, k: slice) -> list[SlotAllocation]: ...

    def __getitem__(self, k):
        if isinstance(k, slice):
            return [self[j] for j in range(*k.indices(len(self)))]
        i, s, n = self._entries[k]
        w = np.zeros(self.shape, dtype=n.dtype if n.size else np.int64)
        w[i, s] = n
        return SlotAllocation(w, dict(self._rings[k]))

    def __iter__(self) -> Iterator[SlotAllocation]:
        return (self[k] for k in range(len(self)))


@dataclasses.dataclass
class GadgetSchedule:
    """Slot allocations for slots ``1 .. T`` (``slots[t - 1]``): a list, or the
    :class:`PackedSlots` of an online run.
    """

    slots: Sequence[SlotAllocation]

    @property
    def workers(self) -> np.ndarray:
        """Workers ``y_is[t]`` stacked over slots, int (T, I, S) (dense: T times I x S numbers)."""
        return np.stack([np.asarray(a.workers) for a in self.slots]) if self.slots else np.zeros((0, 0, 0), int)

    def worker_slots(self) -> np.ndarray:
        """``z_{i,T} = sum_t sum_s y_is[t]`` per job (slot by slot: no (T, I, S) array)."""
        if isinstance(self.slots, PackedSlots):
            return self.slots.worker_slots()
        if not self.slots:
            return np.zeros(0, dtype=np.int64)
        return sum((np.asarray(a.workers).sum(axis=1) for a in self.slots[1:]),
                   start=np.asarray(self.slots[0].workers).sum(axis=1))

    def to_json_list(self, links=None) -> list[dict[str, Any]]:
        """Per slot ``{"slot": t, "jobs": {job: {"workers": {server: n}, "ring": {...}}}}``,
        jobs and servers without workers left out (keys are strings, as JSON needs).
        """
        out = []
        for k in range(len(self.slots)):
            if isinstance(self.slots, PackedSlots):
                ji, si, n = self.slots.entries(k)
                rings = self.slots.rings(k)
            else:
                w = np.asarray(self.slots[k].workers)
                ji, si = np.nonzero(w)
                n, rings = w[ji, si], self.slots[k].rings
            jobs: dict[str, dict[str, Any]] = {}
            for i, s, c in zip(ji.tolist(), si.tolist(), n.tolist(), strict=True):  # row-major: jobs ascending
                jobs.setdefault(str(i), {"workers": {}})["workers"][str(s)] = int(c)
            for i, entry in jobs.items():
                if int(i) in rings:
                    entry["ring"] = rings[int(i)].to_json_dict(links)
            out.append({"slot": k + 1, "jobs": jobs})
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
