"""What every ring-partitioning algorithm shares: the process -> server map and its migration log.

An algorithm (paper 004's dynamic and static algorithms, and the baselines) keeps one
:class:`RingAssignment`.  It changes placements only through :meth:`RingAssignment.assign`, which
records, for each request index :attr:`RingAssignment.now` (set by the caller before each
request; ``-1`` stands for "before the first request"), every process whose server at the end of
that step differs from its server at the start as one migration ``(request index, process,
to)``.  The log is what ``verify/`` replays, so an algorithm cannot move a process without it
being counted.

The interface an algorithm offers to :mod:`clusteropt.online.ring` (:class:`RingAlgorithm`):
``start(instance, rng)`` creates its state (and may migrate at index -1), ``serve(e)`` serves one
request on ring edge ``e`` (and may migrate after it), ``augmentation`` is the factor ``c`` of the
capacity bound ``c * k`` it promises after every step, and ``costs()`` its own cost split.
"""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np

__all__ = ["RingAlgorithm", "RingAssignment", "serve_requests"]


class RingAssignment:
    """``server_of[v]`` for every process, server loads, and the log of migrations.

    One migration per process per step.  An algorithm may move a process several times while it
    serves one request (a cut moves, then a slice joins its colour cluster, then a server is
    rebalanced); what it pays for is where each process ends the step.  So the log holds, for
    each request index, one row per process whose server at the end of the step differs from its
    server at the start: a process moved out and back in one step is no migration, one moved
    ``A -> B -> C`` is one (to ``C``).  The step ends when :attr:`now` is set to another index
    or the log is read (:meth:`migrations`).  :attr:`server_of` and :attr:`load` are always the
    current ones, so capacity can be checked mid-step.

    Parameters
    ----------
    initial : int array (n,)
        Server of each process before the first request.
    servers : int
        Number of servers ``l``.

    Attributes
    ----------
    moved : int
        Migrations so far (the rows the log will hold once the current step ends).

    A move may name its ``reason`` (an algorithm's cost split); :meth:`by_reason` counts each
    migration under the reason of the last move of that process in its step.

    Examples
    --------
    >>> a = RingAssignment(np.array([0, 0, 1, 1]), 2)
    >>> a.now = 3
    >>> a.assign(np.array([1, 2]), 1)   # process 2 is on server 1 already: one migration
    1
    >>> a.server_of.tolist(), a.load.tolist(), a.migrations().tolist()
    ([0, 1, 1, 1], [1, 3], [[3, 1, 1]])
    >>> a.now = 4
    >>> a.assign_one(3, 0), a.assign_one(3, 1), a.moved   # out and back in one step: no migration
    (1, -1, 1)
    >>> a.migrations().tolist()
    [[3, 1, 1]]
    """

    def __init__(self, initial: np.ndarray, servers: int):
        self.server_of = np.array(initial, dtype=np.int64)
        self.n = int(self.server_of.size)
        self.load = np.bincount(self.server_of, minlength=servers).astype(np.int64)
        self._now = -1
        self.moved = 0
        self._log: list[np.ndarray] = []
        self._origin: dict[int, int] = {}  # process -> its server when the current step began
        self._why: dict[int, str] = {}     # process -> reason of its last move in the current step
        self._reasons: dict[str, int] = {}

    @property
    def now(self) -> int:
        """The current request index (``-1``: before the first request); setting it ends the step."""
        return self._now

    @now.setter
    def now(self, value: int) -> None:
        if value != self._now:
            self._flush()
        self._now = int(value)

    def serve_all(self, start: int, requests, serve) -> None:
        """Serve ``requests`` (request indices ``start, start + 1, ...``) one by one with ``serve``.

        The online driver's loop: the same as setting :attr:`now` before each ``serve(e)``, with the
        property's work inlined (a step with no move ends without a call).

        >>> a = RingAssignment(np.array([0, 0, 1, 1]), 2)
        >>> a.serve_all(0, [1, 2], lambda e: a.assign_one((e + 1) % 4, 0))
        >>> a.migrations().tolist()
        [[0, 2, 0], [1, 3, 0]]
        """
        origin = self._origin
        idx = int(start)
        for e in requests:
            if idx != self._now:
                if origin:
                    self._flush()
                self._now = idx
            serve(e)
            idx += 1

    @property
    def pending(self) -> bool:
        """Whether the current step has moved a process (its net migrations are not logged yet)."""
        return bool(self._origin)

    def end_step(self) -> None:
        """End the current step: log its net migrations (:attr:`now` is kept)."""
        self._flush()

    def log_mark(self) -> int:
        """A mark of the log's end (for :meth:`rows_since`)."""
        self._flush()
        return len(self._log)

    def rows_since(self, mark: int) -> np.ndarray:
        """The migrations logged since :meth:`log_mark` returned ``mark`` (ends the current step), ``(M, 3)``."""
        self._flush()
        new = self._log[mark:]
        return np.concatenate(new) if new else np.zeros((0, 3), dtype=np.int64)

    def record_block(self, last: int, rows: np.ndarray, moved: int, reason: str = "") -> None:
        """Log the net migrations of steps a compiled loop served, ending with index ``last``.

        ``rows`` are ``[request index, process, to server]``, each step's sorted by process (what
        :meth:`_flush` writes), computed from this object's :attr:`server_of` and :attr:`load`,
        which the loop updated in place; ``moved`` is their number.  The steps are ended: the log
        and :meth:`by_reason` (under ``reason``) hold them, and :attr:`now` is ``last``.
        """
        if self._origin:
            raise RuntimeError("record_block: the current step has unlogged moves; end it first")
        rows = np.asarray(rows, dtype=np.int64).reshape(-1, 3)
        if rows.shape[0] != moved:
            raise ValueError(f"record_block: {rows.shape[0]} rows for {moved} migrations")
        if rows.size:
            self._log.append(rows)
            self._reasons[reason] = self._reasons.get(reason, 0) + int(moved)
        self.moved += int(moved)
        self._now = int(last)

    def _flush(self) -> None:
        """Write the current step's net migrations to the log."""
        origin = self._origin
        if not origin:
            return
        so = self.server_of
        rows = [(v, int(so[v])) for v, start in origin.items() if so[v] != start]
        reasons, why = self._reasons, self._why
        for v, _ in rows:
            key = why.get(v, "")
            reasons[key] = reasons.get(key, 0) + 1
        origin.clear()
        why.clear()
        if rows:
            rec = np.empty((len(rows), 3), dtype=np.int64)
            rec[:, 0] = self._now
            rec[:, 1:] = np.array(sorted(rows), dtype=np.int64)
            self._log.append(rec)

    def by_reason(self) -> dict[str, int]:
        """Migrations so far per reason (the current step's included; ``""``: moves without one)."""
        out = dict(self._reasons)
        so = self.server_of
        for v, start in self._origin.items():
            if so[v] != start:
                key = self._why.get(v, "")
                out[key] = out.get(key, 0) + 1
        return out

    def assign(self, processes, server, reason: str = "") -> int:
        """Put ``processes`` (int array or one int) on ``server`` (int or array of the same length).

        Returns the change in this step's migrations: ``+1`` for each process that leaves the
        server it started the step on, ``-1`` for each that returns to it, ``0`` for one that
        moves between two others.  Summed over a step, the returns are the step's migrations.
        """
        procs = np.atleast_1d(np.asarray(processes, dtype=np.int64)) % self.n
        target = np.broadcast_to(np.asarray(server, dtype=np.int64), procs.shape)
        old = self.server_of[procs]
        change = old != target
        if not change.any():
            return 0
        procs, target, old = procs[change], target[change], old[change]
        if procs.size > 1 and np.unique(procs).size != procs.size:
            raise ValueError("assign: a process is listed twice; give each process one server")
        origin, why = self._origin, self._why
        delta = 0
        for v, was, to in zip(procs.tolist(), old.tolist(), target.tolist()):
            start = origin.setdefault(v, was)
            delta += (to != start) - (was != start)
            if reason:
                why[v] = reason
            else:
                why.pop(v, None)
        self.server_of[procs] = target
        np.subtract.at(self.load, old, 1)
        np.add.at(self.load, target, 1)
        self.moved += delta
        return delta

    def assign_one(self, v: int, server: int, reason: str = "") -> int:
        """Scalar fast path of :meth:`assign` for one process (the same return value)."""
        old = int(self.server_of[v])
        if old == server:
            return 0
        start = self._origin.setdefault(v, old)
        if reason:
            self._why[v] = reason
        elif self._why:
            self._why.pop(v, None)
        self.server_of[v] = server
        self.load[old] -= 1
        self.load[server] += 1
        delta = (server != start) - (old != start)
        self.moved += delta
        return delta

    def migrations(self, *, clear: bool = False) -> np.ndarray:
        """The log as an ``(M, 3)`` int64 array of ``[request index, process, to server]``.

        Ends the current step first, so its net migrations are included.
        """
        self._flush()
        out = np.concatenate(self._log) if self._log else np.zeros((0, 3), dtype=np.int64)
        if clear:
            self._log = []
        return out

    def cut(self, e: int) -> bool:
        """Whether ring edge ``e`` = (e, e + 1 mod n) joins processes on different servers."""
        return bool(self.server_of[e] != self.server_of[(e + 1) % self.n])


def serve_requests(algo: Any, start: int, requests: np.ndarray) -> None:
    """Serve ``requests`` (indices ``start, start + 1, ...``) with ``algo``, on its compiled path if it has one.

    ``algo.serve_block(start, requests)`` where the algorithm offers it and it applies (it returns
    True), else :meth:`RingAssignment.serve_all` with ``algo.serve``: the same result either way.
    ``CLUSTEROPT_JIT=0`` in the environment takes the second way for every algorithm (see
    :mod:`~clusteropt.algorithms.ring.compiled` for when a block runs compiled).
    """
    from clusteropt.jit import enabled

    block = getattr(algo, "serve_block", None) if enabled() else None
    if block is None or not block(start, requests):
        algo.state_.serve_all(start, np.asarray(requests).tolist(), algo.serve)


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
