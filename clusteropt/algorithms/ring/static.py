"""The static algorithm of paper 004 (Sec. 4.2): slicing, clustering and scheduling.

Räcke, Schmid, Zabrodin (SPAA'23), Thm. 2.2: ``O(log^2 n)``-competitive against the best
*static* placement (one re-arrangement before the first request), with constant resource
augmentation.  Three procedures (docs/algorithms/ring-partitioning.md A3; [R] recovered, [I] reconstructed, [?]
unknown):

Slicing [R]
    Every initial cut edge (endpoints on different servers initially) gets an interval centred on
    it running its own hitting game (:class:`~clusteropt.algorithms.ring.hitting.LineHittingGame`:
    softmin of the request counts since time 0 restricted to the interval, interval growing);
    the game's position is the interval's *cut edge*.  After an interval grows, every interval
    completely inside it is deactivated ("dominated"), and if the grown interval is
    ``lam``-monochromatic (strictly more than ``lam |I|`` of its processes have one initial
    colour) it is deactivated too [R; this order: domination first, then the colour test, is
    [I]].  Inactive intervals keep no cut edge and never come back.  Cut edges split the ring into
    *slices* (arcs between consecutive distinct cut edges).
Clustering [R]
    Colours = initial servers.  A slice is in the colour cluster of its majority colour or a
    singleton.  When slices change (a cut moves, or is removed and two slices merge), each new
    slice inherits from the old slice it overlaps most (its predecessor; ties: the first): no
    majority colour -> singleton; ``lam``-monochromatic for ``c`` -> colour cluster ``c``;
    otherwise it stays in its majority colour's cluster only if the predecessor was there
    (hysteresis), else singleton.
Scheduling [R form, I details]
    Colour cluster ``c`` lives on server ``c``; a singleton on its *home* server.  Processes that
    change slice migrate to the home of their new slice's predecessor (``moving`` when a cut
    moved, ``merging`` when one was removed); a slice joining a colour cluster migrates to it
    (``colour_join``).  Then every server with load above ``T = (1 + epsilon) k + cluster_cap k``
    sends its smallest singletons (at most ``cluster_cap k`` processes at a time) to the least
    loaded server until it is at most ``T`` (``rebalancing``).

Migration cost ``alpha``.  Every cost but communication is migrations, paid ``alpha`` each; the
hitting games price a cut move at ``alpha`` per edge (their thresholds and temperatures scale
with ``alpha``: :mod:`~clusteropt.algorithms.ring.hitting`), so cuts move, slices merge and
colour clusters form about ``alpha`` times less often.  The lower bounds of Lemma 4.15 scale the
same way (an interval's optimum either takes ``theta`` hits or moves, paying ``alpha`` per edge),
so the ``O(log^2 n)`` of Theorem 2.2 is kept for every ``alpha`` [I: the paper states ``alpha =
1``].  One migration per process per step: a process moved by a cut and sent back by the colour
join or the rebalancing of the same step is no migration
(:class:`~clusteropt.algorithms.ring.state.RingAssignment`), and the cost split counts each
migration once, under the reason of the process's last move in the step.

The capacity promise ([?] in the paper; docs/algorithms/ring-partitioning.md A1: about ``(1 + eps') k + s_max``,
``s_max`` about
``2k..3k``) is made explicit: :attr:`StaticRing.augmentation` ``= 1 + epsilon + cluster_cap`` and
every server holds at most ``T`` processes after every step.  Why it holds: a colour cluster
``c`` holds only slices whose strict majority is ``c``, so fewer than ``2 k`` processes (server
``c`` started with at most ``k``), which is ``<= T`` for ``cluster_cap >= 1``; the least loaded
server holds at most the average ``k``, so it accepts ``cluster_cap k`` more and stays ``<= T``.
A singleton larger than ``cluster_cap k`` (Lemma 4.9 bounds slices by about ``2k..3k``, which
was not reconstructed exactly) is moved in pieces, a deviation from the paper counted in
:meth:`StaticRing.stats` (``split_moves``).
"""

from __future__ import annotations

import bisect
import logging
import math
from typing import Any

import numpy as np

from clusteropt.algorithms.ring.hitting import LineHittingGame
from clusteropt.algorithms.ring.state import RingAssignment

__all__ = ["StaticRing"]

log = logging.getLogger(__name__)

_SINGLE = -1   # cluster of a singleton slice
_NOCUT = -1    # key of the one slice of a ring without cut edges


class StaticRing:
    """Paper 004's static algorithm (Sec. 4.2): slicing + clustering + scheduling.

    Parameters
    ----------
    epsilon : float
        ``eps' > 0`` of the scheduling threshold ``T = (1 + eps') k + cluster_cap k``
        (also sets the default ``lam``).  Default 0.5.
    lam : float, optional
        ``lambda`` in ``(1/2, 1)``: an interval that is ``lam``-monochromatic after growing is
        deactivated, and a slice that is ``lam``-monochromatic joins its colour cluster [?].
        Default ``1 - epsilon / 4`` (docs/algorithms/ring-partitioning.md A3, [I]).
    max_interval : int, optional
        Largest interval, in *processes* (vertices; an interval of ``d`` edges has ``d + 1``)
        [I]: default ``k + 1`` (needed for "a final interval always contains an optimal cut",
        Lemma 4.15), capped at the ring.
    theta_factor, c_factor : float
        Growth threshold ``theta(I) = theta_factor alpha d`` and smooth-min temperature
        ``c = c_factor alpha d`` for an interval of ``d`` edges [I]; default 1 each (``alpha`` the
        instance's migration cost: :mod:`~clusteropt.algorithms.ring.hitting` derives why).
    growth : float
        Interval radius rule ``rho -> floor(growth rho) + 1`` (2: 1, 3, 7, 15, ... edges).
    cluster_cap : float
        ``s_max / k`` of the threshold [?]: singletons move in pieces of at most
        ``cluster_cap k`` processes; must be ``>= 1``.  Default 2.

    Attributes
    ----------
    augmentation : float
        ``1 + epsilon + cluster_cap``: after every step every server holds at most
        ``augmentation * k`` processes (enforced by the rebalancing; see the module docstring).
    state_ : RingAssignment
        Placement and migration log (after :meth:`start`).

    References
    ----------
    Räcke, Schmid, Zabrodin, "Dynamic Balanced Graph Partitioning for Ring Demands", SPAA 2023,
    Sec. 4.2 (Algorithm 1), Lemmas 4.9-4.13, 4.18-4.20, Thm. 2.2; docs/algorithms/ring-partitioning.md A3-A4.

    Examples
    --------
    >>> from clusteropt.instances.ring import RingInstance
    >>> inst = RingInstance(n=16, servers=4, requests=[3] * 40)
    >>> algo = StaticRing()
    >>> algo.augmentation
    3.5
    >>> algo.start(inst, np.random.default_rng(0))
    >>> for t, e in enumerate(inst.requests.tolist()):
    ...     algo.state_.now = t
    ...     algo.serve(e)
    >>> c = algo.costs()
    >>> c["communication"] < 40, int(algo.state_.load.max()) <= algo.augmentation * inst.k
    (True, True)
    """

    name = "static"

    def __init__(self, *, epsilon: float = 0.5, lam: float | None = None, max_interval: int | None = None,
                 theta_factor: float = 1.0, c_factor: float = 1.0, growth: float = 2.0,
                 cluster_cap: float = 2.0):
        self.epsilon = epsilon
        self.lam = lam
        self.max_interval = max_interval
        self.theta_factor = theta_factor
        self.c_factor = c_factor
        self.growth = growth
        self.cluster_cap = cluster_cap
        self._validate()
        self.augmentation = 1.0 + float(epsilon) + float(cluster_cap)

    def _validate(self) -> None:
        eps = float(self.epsilon)
        if not (eps > 0 and math.isfinite(eps)):
            raise ValueError(f"epsilon = {self.epsilon!r}; expected a finite number > 0")
        lam = self._lam()
        if not 0.5 < lam < 1:
            raise ValueError(f"lam = {lam!r}; expected a value in (0.5, 1) (pass lam when epsilon >= 2)")
        if self.max_interval is not None and (isinstance(self.max_interval, bool) or int(self.max_interval) < 2
                                              or int(self.max_interval) != self.max_interval):
            raise ValueError(f"max_interval = {self.max_interval!r}; expected an integer >= 2 (processes)")
        for name in ("theta_factor", "c_factor"):
            val = float(getattr(self, name))
            if not (val > 0 and math.isfinite(val)):
                raise ValueError(f"{name} = {getattr(self, name)!r}; expected a finite number > 0")
        if not float(self.growth) >= 1:
            raise ValueError(f"growth = {self.growth!r}; expected >= 1")
        if not (float(self.cluster_cap) >= 1 and math.isfinite(float(self.cluster_cap))):
            raise ValueError(f"cluster_cap = {self.cluster_cap!r}; expected a finite number >= 1")

    def _lam(self) -> float:
        return 1.0 - float(self.epsilon) / 4 if self.lam is None else float(self.lam)

    def get_params(self) -> dict[str, Any]:
        """Every parameter as JSON scalars (``lam`` resolved; ``max_interval`` None means ``k + 1``)."""
        return {"epsilon": float(self.epsilon), "lam": self._lam(),
                "max_interval": None if self.max_interval is None else int(self.max_interval),
                "theta_factor": float(self.theta_factor), "c_factor": float(self.c_factor),
                "growth": float(self.growth), "cluster_cap": float(self.cluster_cap)}

    # -- set-up --------------------------------------------------------------------------------
    def start(self, instance, rng: np.random.Generator) -> None:
        """Initial cut edges, one hitting game each, colour clusters = the initial servers."""
        rng = np.random.default_rng(rng)
        n, servers, k = instance.n, instance.servers, instance.k
        colour = np.array(instance.initial, dtype=np.int64)
        self.n_, self.servers_, self.k_ = n, servers, k
        self.alpha_ = float(instance.alpha)
        self.lam_ = self._lam()
        self.colour_ = colour
        self._col2 = np.concatenate([colour, colour])
        self.state_ = RingAssignment(colour, servers)
        vertices = k + 1 if self.max_interval is None else int(self.max_interval)
        self.max_edges_ = max(1, min(n, vertices - 1))
        self.threshold_ = (1.0 + float(self.epsilon)) * k + float(self.cluster_cap) * k
        self._piece = max(1, math.floor(float(self.cluster_cap) * k))
        self.counts_ = np.zeros(n, dtype=np.int64)
        cuts = np.flatnonzero(colour != np.roll(colour, -1)).tolist()
        self.games_: list[LineHittingGame] = []
        self.alive_: list[bool] = []
        self.cut_of_: list[int] = []
        self.cover_: list[list[int]] = [[] for _ in range(n)]
        for gid, e in enumerate(cuts):
            g = LineHittingGame(n, e, max_edges=self.max_edges_, ring=True, theta_factor=self.theta_factor,
                                c_factor=self.c_factor, growth=self.growth, rng=rng, counts=self.counts_,
                                alpha=self.alpha_)
            self.games_.append(g)
            self.alive_.append(True)
            self.cut_of_.append(e)
            self.cover_[e].append(gid)
        self.mult_: dict[int, int] = dict.fromkeys(cuts, 1)
        self.cuts_: list[int] = list(cuts)
        # slice key = its left cut edge a: processes a + 1 .. next cut (mod n); value (cluster, home)
        self.slices_: dict[int, tuple[int, int]] = {}
        if not cuts:
            c0 = int(colour[0])
            self.slices_[_NOCUT] = (c0, c0)
        for a in cuts:
            c = int(colour[(a + 1) % n])
            self.slices_[a] = (c, c)
        self.cost_ = {"communication": 0, "moving": 0, "merging": 0, "colour_join": 0, "rebalancing": 0}
        self.events_ = {"growths": 0, "deactivated_mono": 0, "deactivated_dominated": 0, "cut_moves": 0,
                        "rebalances": 0, "split_moves": 0}
        self.max_load_ = int(self.state_.load.max())
        self.max_singleton_ = 0

    # -- serving -------------------------------------------------------------------------------
    def serve(self, e: int) -> None:
        """Serve a request on ring edge ``e``, then update slices, clusters and servers."""
        st = self.state_
        sof = st.server_of
        f = e + 1 if e + 1 < self.n_ else 0
        if sof[e] != sof[f]:
            self.cost_["communication"] += 1
        counts = self.counts_
        r = int(counts[e]) + 1
        counts[e] = r
        ids = self.cover_[e]
        if not ids:
            return
        before = st.moved
        games, alive = self.games_, self.alive_
        for gid in tuple(ids):
            if not alive[gid]:
                continue
            g = games[gid]
            g.observe(e, r)
            if g.position != self.cut_of_[gid]:
                self._move_cut(gid, g.position)
            while alive[gid] and g.ready:
                self._grow(gid)
        if st.moved != before:
            self._rebalance()

    def _grow(self, gid: int) -> None:
        g = self.games_[gid]
        n = self.n_
        old_left, old_d = g.left, g.d
        g.grow()
        self.events_["growths"] += 1
        off = (old_left - g.left) % n
        for j in (*range(off), *range(off + old_d, g.d)):
            self.cover_[(g.left + j) % n].append(gid)
        # dominated intervals: completely inside the grown one
        cand: set[int] = set()
        for e in g.edges().tolist():
            cand.update(self.cover_[e])
        cand.discard(gid)
        for h in sorted(cand):
            other = self.games_[h]
            if self.alive_[h] and (g.d >= n or (other.left - g.left) % n + other.d <= g.d):
                self.events_["deactivated_dominated"] += 1
                self._deactivate(h)
        if self._mono(g.left, g.d):
            self.events_["deactivated_mono"] += 1
            self._deactivate(gid)
        elif g.position != self.cut_of_[gid]:
            self._move_cut(gid, g.position)

    def _mono(self, left: int, d: int) -> bool:
        """Whether the interval's ``d + 1`` processes are ``lam``-monochromatic (initial colours)."""
        size = min(d + 1, self.n_)
        counts = np.bincount(self._col2[left:left + size])
        return bool(counts.max() > self.lam_ * size)

    def _deactivate(self, gid: int) -> None:
        g = self.games_[gid]
        self.alive_[gid] = False
        for e in g.edges().tolist():
            self.cover_[e].remove(gid)
        a = self.cut_of_[gid]
        self.mult_[a] -= 1
        if self.mult_[a] == 0:
            del self.mult_[a]
            self._reslice([a], [], "merging")

    def _move_cut(self, gid: int, b: int) -> None:
        a = self.cut_of_[gid]
        self.cut_of_[gid] = b
        self.events_["cut_moves"] += 1
        mult = self.mult_
        removed, added = [], []
        mult[a] -= 1
        if mult[a] == 0:
            del mult[a]
            removed.append(a)
        if b in mult:
            mult[b] += 1
        else:
            mult[b] = 1
            added.append(b)
        if removed or added:
            self._reslice(removed, added, "moving")

    # -- slices --------------------------------------------------------------------------------
    def _reslice(self, removed: list[int], added: list[int], reason: str) -> None:
        """Replace the slices around the cut edges that appeared / disappeared."""
        n = self.n_
        cuts = self.cuts_
        gone = set(removed)
        unchanged = len(cuts) - len(removed)
        spans: dict[int, int] = {}
        if unchanged <= 1:
            rest = [c for c in cuts if c not in gone]
            spans[rest[0] if rest else (removed + added)[0]] = n
        else:
            m = len(cuts)
            for e in (*removed, *added):
                i = bisect.bisect_left(cuts, e)
                j = i - 1
                while cuts[j % m] in gone or cuts[j % m] == e:
                    j -= 1
                x = cuts[j % m]
                j = i
                while cuts[j % m] in gone or cuts[j % m] == e:
                    j += 1
                spans[x] = (cuts[j % m] - x) % n
        old_set = set(cuts)
        for a in removed:
            del cuts[bisect.bisect_left(cuts, a)]
        for b in added:
            bisect.insort(cuts, b)
        new_set = self.mult_
        for x, L in spans.items():
            if L == n:
                old_int = [c for c in old_set if c != x]
                new_int = [c for c in new_set if c != x]
            else:
                old_int = [c for c in removed if 0 < (c - x) % n < L]
                new_int = [c for c in added if 0 < (c - x) % n < L]
            self._respan(x, L, old_int, x in old_set, new_int, x in new_set, reason)

    def _labels(self, x: int, L: int, internal: list[int], anchored: bool) -> tuple[np.ndarray, list[int]]:
        """Slice label of every process of the span ``x + 1 .. x + L`` and the slices' keys."""
        n = self.n_
        internal = sorted(internal, key=lambda c: (c - x) % n)
        t = np.array([(c - x) % n for c in internal], dtype=np.int64)
        lab = np.searchsorted(t, np.arange(L), side="right")
        keys = [x, *internal]
        if not anchored:  # only for a whole-ring span: the first and last segments are one slice
            if internal:
                lab[lab == len(internal)] = 0
                keys = [internal[-1], *internal[:-1]]
            else:
                keys = [_NOCUT]
        return lab, keys

    def _respan(self, x: int, L: int, old_int: list[int], old_anch: bool, new_int: list[int], new_anch: bool,
                reason: str) -> None:
        n, st = self.n_, self.state_
        procs = (x + 1 + np.arange(L)) % n
        lab_old, keys_old = self._labels(x, L, old_int, old_anch)
        lab_new, keys_new = self._labels(x, L, new_int, new_anch)
        infos = [self.slices_.pop(key) for key in keys_old]
        n_old, n_new = len(keys_old), len(keys_new)
        overlap = np.bincount(lab_new * n_old + lab_old, minlength=n_new * n_old).reshape(n_new, n_old)
        pred = overlap.argmax(axis=1)
        home = np.array([info[1] for info in infos], dtype=np.int64)
        pred_of = pred[lab_new]
        change = lab_old != pred_of
        if change.any():
            st.assign(procs[change], home[pred_of[change]], reason)
        ns = self.servers_
        cc = np.bincount(lab_new * ns + self._col2[x + 1:x + 1 + L], minlength=n_new * ns).reshape(n_new, ns)
        sizes = cc.sum(axis=1)
        majors = cc.argmax(axis=1)
        lam = self.lam_
        for j in range(n_new):
            pcl, phome = infos[pred[j]]
            size = int(sizes[j])
            maj = int(majors[j])
            mc = int(cc[j, maj])
            if mc > lam * size:
                if pcl != maj:
                    st.assign(procs[lab_new == j], maj, "colour_join")
                info = (maj, maj)
            elif 2 * mc > size and pcl == maj:
                info = (maj, maj)
            else:
                info = (_SINGLE, phome)
                if size > self.max_singleton_:
                    self.max_singleton_ = size
            self.slices_[keys_new[j]] = info

    def _slice_procs(self, key: int) -> np.ndarray:
        n = self.n_
        if key == _NOCUT:
            return np.arange(n)
        cuts = self.cuts_
        i = bisect.bisect_right(cuts, key)
        b = cuts[i % len(cuts)]
        L = (b - key) % n or n
        return (key + 1 + np.arange(L)) % n

    # -- scheduling ----------------------------------------------------------------------------
    def _rebalance(self) -> None:
        st = self.state_
        load = st.load
        T = self.threshold_
        top = int(load.max())
        if top > T:
            self.events_["rebalances"] += 1
            while True:
                s = int(load.argmax())
                if load[s] <= T:
                    break
                units = []
                for key, (cl, _home) in self.slices_.items():
                    if cl != _SINGLE:
                        continue
                    procs = self._slice_procs(key)
                    on = procs[st.server_of[procs] == s]
                    if on.size:
                        units.append((int(on.size), key, on, int(procs.size)))
                if not units:  # impossible for cluster_cap >= 1 (module docstring)
                    raise RuntimeError(f"server {s} holds {int(load[s])} > T = {T} processes and no singleton")
                units.sort(key=lambda u: (u[0], u[1]))
                for size, key, on, total in units:
                    if load[s] <= T:
                        break
                    target = int(load.argmin())
                    piece = on[:self._piece]
                    st.assign(piece, target, "rebalancing")
                    if piece.size == total:
                        self.slices_[key] = (_SINGLE, target)
                    elif piece.size < size:
                        self.events_["split_moves"] += 1
            top = int(load.max())
            log.debug("rebalanced at request %d: max load %d <= T = %.1f", st.now, top, T)
        if top > self.max_load_:
            self.max_load_ = top

    # -- reporting -----------------------------------------------------------------------------
    def costs(self) -> dict[str, float]:
        """Communication and processes migrated per reason (moving, merging, colour_join, rebalancing).

        A process moved twice in one step counts once, under the reason of its last move
        (:meth:`~clusteropt.algorithms.ring.state.RingAssignment.by_reason`).
        """
        moved = self.state_.by_reason()
        return {key: float(val if key == "communication" else moved.get(key, 0))
                for key, val in self.cost_.items()}

    def stats(self) -> dict[str, Any]:
        """Realised max load (and over ``k``), intervals, cuts, slices and event counts."""
        active = [g for g, a in zip(self.games_, self.alive_) if a]
        return {"max_load": self.max_load_, "max_load_over_k": self.max_load_ / self.k_,
                "threshold": self.threshold_, "intervals": len(self.games_), "active": len(active),
                "final": sum(g.final for g in active), "cuts": len(self.cuts_), "slices": len(self.slices_),
                "max_singleton": self.max_singleton_, **self.events_}
