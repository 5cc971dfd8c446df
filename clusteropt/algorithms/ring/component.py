"""The component-based algorithm of Avin, Bienkowski, Loukas, Pacut and Schmid on the ring (a peer of paper 004).

Source.  C. Avin, M. Bienkowski, A. Loukas, M. Pacut, S. Schmid, "Dynamic balanced graph
partitioning", SIAM J. Discrete Math. 34(3), 2020 (arXiv:1511.02074; first as "Online balanced
repartitioning", DISC 2016): the deterministic component-based repartitioning algorithm (CREP),
``O(k log k)``-competitive against the optimum at capacity ``k`` for *any* request graph, with
servers of capacity ``(2 + eps) k``.  It is the standard deterministic peer of paper 004's
algorithms (paper 004 cites it as [6] and [8]; its Lemma 4.1 lower bound ``k`` on deterministic
ratios holds for it too, so hit-the-cut sequences built against it make it pay every request).
The derivation below is also in docs/algorithms/ring-partitioning.md A6.

Rule (general request graph).  The processes are partitioned into *components*; an *epoch* starts
with every process its own component and every weight 0.  ``w(u, v)`` counts the requests
between ``u`` and ``v`` the algorithm paid for in the epoch (their servers differed), and for a set
``S`` of components ``w(S)`` is the weight between its members.  After each request:

1. if some set ``S`` of at least two components has ``w(S) >= (|S| - 1) alpha``, the components of
   ``S`` are merged (the weight inside them is spent: a request inside a component is free, since
   a component sits on one server);
2. if the merged component has more than ``k`` processes, the epoch ends instead: every process
   becomes its own component again, every weight 0, and nothing moves;
3. otherwise the merged component is put on one server ("collocation") that can take it within
   the capacity ``(2 + eps) k``.

Every component is connected in the graph of paid requests, and every set of components satisfies
``w(S) < (|S| - 1) alpha`` between requests (the rule restores it).  The migration cost enters only
through step 1: a merge needs ``alpha`` paid requests per component it joins, so merges, and the
migrations they cause, fall as ``alpha`` grows.

On the ring.  Requests are ring edges, so components are arcs, the components form a cycle, and
between two neighbouring arcs there is one edge, whose counter is their weight.  A connected set of
components is a run of consecutive arcs (``|S| - 1`` edges between them) or the whole cycle
(``|S|`` edges).  Write ``f(S) = w(S) - (|S| - 1) alpha``: ``f`` of a run is ``sum (c_e - alpha)``
over its inner edges, ``f`` of the cycle is ``sum c_e - (m - 1) alpha`` for ``m`` arcs.  A set that
is not connected satisfies the condition only if one of its connected parts does, so only
connected sets matter.  Between requests every ``f < 0``; a paid request on edge ``e`` raises one
counter ``c_e``, so only sets containing ``e`` can reach ``f >= 0``; a run containing ``e`` is the
pair of arcs at ``e`` plus runs on either side that do not contain ``e``, each of negative ``f``,
so the pair has the largest ``f`` of all runs.  Hence the rule on the ring, ``O(1)`` per request:

* merge the two arcs at ``e`` when ``c_e >= alpha`` (with ``m >= 3`` arcs);
* end the epoch when ``sum c_e >= (m - 1) alpha`` (the whole cycle qualifies; it holds ``n > k``
  processes), which with ``m = 2`` arcs is the only merge there is.

When both qualify the set of larger ``f`` is taken (ties: the larger set), the maximiser of ``f``
among the sets containing ``e``; merging it keeps every ``f < 0`` (merging the pair lowers ``f`` of
every set containing it by ``c_e - alpha >= 0``), so no second merge is ever due after a request.
The rule is checked against an enumeration of every set of components of the general rule
(``tests/algorithms/test_ring_component.py``).

Choices the rule leaves to an implementation (ours):

* **Collocation**: of the merged arc's two parts (each on one server), the smaller moves to the
  larger's server when that keeps the server within the capacity, else the larger to the
  smaller's, else both to the least loaded server that can take them (fewest migrations first;
  ties: the lower load, then the lower server index).  A server that can take it always exists
  when the capacity is at least ``2k``: the servers hold ``n = l k`` processes, so the least loaded
  holds at most ``k``, and the merged arc has at most ``k``.  So no rearrangement of the other
  components is ever needed, and ``eps = 0`` is allowed (the paper's bound is stated for
  ``eps > 0``).
* **alpha = 0** (free migrations): every set qualifies; the rule as written takes the whole cycle
  at the first paid request, so the epoch restarts and nothing ever moves.

Augmentation ``2 + eps`` (the servers' capacity; default ``eps = 1``, as for the dynamic
algorithm).  Deterministic (the ``rng`` is not used).

Examples
--------
Two servers of 4; edge 3 (processes 3, 4) is cut.  With ``alpha = 2`` the second paid request
merges processes 3 and 4: process 4 moves to process 3's server (both parts have one process; the
first candidate is kept).

>>> from clusteropt.instances.ring import RingInstance
>>> inst = RingInstance(n=8, servers=2, requests=[3, 3, 3], alpha=2.0)
>>> algo = ComponentRing()
>>> algo.start(inst, np.random.default_rng(0))
>>> for t, e in enumerate(inst.requests.tolist()):
...     algo.state_.now = t
...     algo.serve(e)
>>> algo.state_.migrations().tolist(), algo.costs()["communication"], algo.merges_
([[1, 4, 0]], 2.0, 1)
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from clusteropt.algorithms.ring.state import RingAssignment

__all__ = ["ComponentRing"]

class ComponentRing:
    """The component-based algorithm (CREP) of Avin et al. on ring requests (module docstring).

    Parameters
    ----------
    epsilon : float
        ``eps >= 0``: servers hold at most ``floor((2 + eps) k)`` processes (``augmentation = 2 +
        eps``).  Default 1.

    Attributes
    ----------
    merges_, epochs_ : int
        Merges and epochs begun so far.
    components_ : int
        Arcs in the current epoch.

    An epoch's end costs ``O(1)``: the per-process arc fields and the per-edge counters carry the
    epoch that wrote them, and a field of an earlier epoch reads as its start value (a process
    alone, a counter at 0); :meth:`arc_heads` gives the current arcs.
    """

    name = "component"

    def __init__(self, epsilon: float = 1.0):
        self.epsilon = epsilon

    @property
    def augmentation(self) -> float:
        """``2 + epsilon``."""
        return 2.0 + float(self.epsilon)

    def get_params(self) -> dict[str, Any]:
        """``epsilon`` as given."""
        return {"epsilon": self.epsilon}

    def start(self, instance, rng: np.random.Generator) -> None:
        """Begin the first epoch on ``instance.initial`` (nothing moves)."""
        eps = self.epsilon
        if isinstance(eps, bool) or not isinstance(eps, int | float) or not math.isfinite(eps) or eps < 0:
            raise ValueError(f"epsilon = {eps!r}; expected a finite number >= 0")
        n, ell = instance.n, instance.servers
        self.k_ = n // ell
        self.cap_ = math.floor(self.augmentation * self.k_)  # the bound c * k that verify/ checks
        self.alpha_ = float(instance.alpha)
        self.state_ = RingAssignment(instance.initial, ell)
        self.hits_ = 0
        self.merges_ = 0
        self.epochs_ = 0
        self._new_epoch()

    def _new_epoch(self) -> None:
        n = self.state_.n
        if self.epochs_ == 0:
            self.head_ = np.arange(n, dtype=np.int64)  # head_[v]: first process of v's arc
            self.pstamp_ = np.zeros(n, dtype=np.int64)  # the epoch that wrote head_[v] and size_[v]
            self.size_ = [1] * n  # size_[h]: processes of the arc whose head is h
            self.weight_ = [0.0] * n  # weight_[e]: paid requests on edge e while it joins two arcs
            self.wstamp_ = [0] * n  # the epoch that wrote weight_[e]
        self.epochs_ += 1
        self.total_ = 0.0  # sum of the current epoch's counters over the edges that join two arcs
        self.components_ = n

    def arc_heads(self) -> np.ndarray:
        """``heads[v]``: the first process (going round the ring) of ``v``'s arc in this epoch."""
        n = self.state_.n
        return np.where(self.pstamp_ == self.epochs_, self.head_, np.arange(n))

    def serve(self, e: int) -> None:
        """Serve a request on edge ``e``; count it when paid; merge, end the epoch or do nothing."""
        state = self.state_
        so = state.server_of
        n = state.n
        w = e + 1 if e + 1 < n else 0
        if so[e] == so[w]:
            return  # free: the processes share a server (in particular, one arc)
        self.hits_ += 1
        epoch = self.epochs_
        c = (self.weight_[e] if self.wstamp_[e] == epoch else 0.0) + 1.0
        self.weight_[e] = c
        self.wstamp_[e] = epoch
        self.total_ += 1.0
        m = self.components_
        alpha = self.alpha_
        f_cycle = self.total_ - (m - 1) * alpha
        f_pair = c - alpha if m >= 3 else -math.inf  # with two arcs the pair is the cycle
        if f_cycle >= 0 and f_cycle >= f_pair:
            self._new_epoch()  # the whole ring: n > k processes
        elif f_pair >= 0:
            self._merge(e, w, c)

    def _merge(self, e: int, w: int, c: float) -> None:
        """Merge the arcs at edge ``e`` (``w = e + 1``, counter ``c``), or end the epoch when they
        exceed ``k``.
        """
        head, stamp, size, epoch = self.head_, self.pstamp_, self.size_, self.epochs_
        ha = int(head[e]) if stamp[e] == epoch else e
        hb = w  # ``e`` joins two arcs, so ``w`` is the head of its arc
        sa = size[ha] if stamp[ha] == epoch else 1
        sb = size[hb] if stamp[hb] == epoch else 1
        if sa + sb > self.k_:
            self._new_epoch()
            return
        n = self.state_.n
        a = (ha + np.arange(sa)) % n
        b = (hb + np.arange(sb)) % n
        head[ha] = ha  # a singleton head may carry an earlier epoch's field
        head[b] = ha
        stamp[ha] = epoch
        stamp[b] = epoch
        size[ha] = sa + sb
        self.total_ -= c
        self.weight_[e] = 0.0
        self.components_ -= 1
        self.merges_ += 1
        self._collocate(a, b)

    def _collocate(self, a: np.ndarray, b: np.ndarray) -> None:
        """Put the merged arc (parts ``a`` and ``b``, each on one server) on one server."""
        state = self.state_
        so, load, cap = state.server_of, state.load, self.cap_
        xa, xb = int(so[a[0]]), int(so[b[0]])
        moves = sorted([(b.size, int(load[xa]), xa, b), (a.size, int(load[xb]), xb, a)], key=lambda t: t[:3])
        for count, held, target, part in moves:
            if held + count <= cap:
                state.assign(part, target)
                return
        total = a.size + b.size
        room = np.flatnonzero(load + total <= cap)
        if room.size:
            target = int(room[np.argmin(load[room])])  # argmin: the lowest index among the least loaded
            state.assign(np.concatenate([a, b]), target)
            return
        # the least loaded server holds <= k and the arc <= k, so the capacity >= 2k always has room
        raise RuntimeError(f"component: no server can take an arc of {total} processes at capacity {cap} "
                           f"(loads {load.tolist()}); the capacity must be at least 2k")

    def costs(self) -> dict[str, float]:
        """``communication`` (paid requests), ``migration`` (``alpha`` x migrations), merges, epochs."""
        return {"communication": float(self.hits_), "migration": self.alpha_ * float(self.state_.moved),
                "merges": float(self.merges_), "epochs": float(self.epochs_)}
