"""What every ring-partitioning algorithm shares: the process -> server map and its migration log.

An algorithm (paper 004's dynamic and static algorithms, and the baselines) keeps one
:class:`RingAssignment`.  It changes placements only through :meth:`RingAssignment.assign`, which
records every process that really changes server as a migration ``(request index, process, to)``
at the current request index :attr:`RingAssignment.now` (set by the caller before each request;
``-1`` stands for "before the first request").  The log is what ``verify/`` replays, so an
algorithm cannot move a process without it being counted.

The interface an algorithm offers to :mod:`clusteropt.online.ring` (:class:`RingAlgorithm`):
``start(instance, rng)`` creates its state (and may migrate at index -1), ``serve(e)`` serves one
request on ring edge ``e`` (and may migrate after it), ``augmentation`` is the factor ``c`` of the
capacity bound ``c * k`` it promises after every step, and ``costs()`` its own cost split.
"""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np

__all__ = ["RingAlgorithm", "RingAssignment"]


class RingAssignment:
    """``server_of[v]`` for every process, server loads, and the log of migrations.

    Parameters
    ----------
    initial : int array (n,)
        Server of each process before the first request.
    servers : int
        Number of servers ``l``.

    Examples
    --------
    >>> a = RingAssignment(np.array([0, 0, 1, 1]), 2)
    >>> a.now = 3
    >>> a.assign(np.array([1, 2]), 1)   # process 2 is on server 1 already: one migration
    1
    >>> a.server_of.tolist(), a.load.tolist(), a.migrations().tolist()
    ([0, 1, 1, 1], [1, 3], [[3, 1, 1]])
    """

    def __init__(self, initial: np.ndarray, servers: int):
        self.server_of = np.array(initial, dtype=np.int64)
        self.n = int(self.server_of.size)
        self.load = np.bincount(self.server_of, minlength=servers).astype(np.int64)
        self.now = -1
        self.moved = 0
        self._log: list[np.ndarray] = []

    def assign(self, processes, server) -> int:
        """Put ``processes`` (int array or one int) on ``server`` (int or array of the same length).

        Returns the number of processes that changed server (each one a logged migration).
        """
        procs = np.atleast_1d(np.asarray(processes, dtype=np.int64)) % self.n
        target = np.broadcast_to(np.asarray(server, dtype=np.int64), procs.shape)
        old = self.server_of[procs]
        change = old != target
        count = int(change.sum())
        if count:
            procs, target, old = procs[change], target[change], old[change]
            self.server_of[procs] = target
            np.subtract.at(self.load, old, 1)
            np.add.at(self.load, target, 1)
            rec = np.empty((count, 3), dtype=np.int64)
            rec[:, 0] = self.now
            rec[:, 1] = procs
            rec[:, 2] = target
            self._log.append(rec)
            self.moved += count
        return count

    def assign_one(self, v: int, server: int) -> bool:
        """Scalar fast path of :meth:`assign` for one process."""
        old = int(self.server_of[v])
        if old == server:
            return False
        self.server_of[v] = server
        self.load[old] -= 1
        self.load[server] += 1
        self._log.append(np.array([[self.now, v, server]], dtype=np.int64))
        self.moved += 1
        return True

    def migrations(self, *, clear: bool = False) -> np.ndarray:
        """The log as an ``(M, 3)`` int64 array of ``[request index, process, to server]``."""
        out = np.concatenate(self._log) if self._log else np.zeros((0, 3), dtype=np.int64)
        if clear:
            self._log = []
        return out

    def cut(self, e: int) -> bool:
        """Whether ring edge ``e`` = (e, e + 1 mod n) joins processes on different servers."""
        return bool(self.server_of[e] != self.server_of[(e + 1) % self.n])


class RingAlgorithm(Protocol):
    """What :mod:`clusteropt.online.ring` needs from a ring-partitioning algorithm."""

    name: str
    augmentation: float
    state_: RingAssignment

    def start(self, instance: Any, rng: np.random.Generator) -> None:
        """Create the state for ``instance``; may migrate before the first request (index -1)."""

    def serve(self, e: int) -> None:
        """Serve a request on ring edge ``e``; may migrate processes afterwards."""

    def costs(self) -> dict[str, float]:
        """The algorithm's own cost split (its accounting; ``verify/`` recomputes the totals)."""
