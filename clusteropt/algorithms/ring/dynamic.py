"""The dynamic algorithm of paper 004 (Sec. 3): random-shift intervals, one MTS-driven cut edge each.

Algorithm (Sec. 3.1; docs/algorithms/ring-partitioning.md A2).  With ``L = floor((1 + eps/2) k)`` (at most ``n``)
and
``m = ceil(n / L) <= l``, draw a shift ``s ~ Uniform{0..L-1}`` and form the intervals
``I_j = edges s + jL .. s + (j+1)L - 1`` (mod ``n``), ``j = 0..m-1``: consecutive intervals share
one vertex, the last one wraps round and may overlap ``I_0`` on up to ``L - 1`` edges, every
edge lies in at most two intervals.  Each interval keeps one *cut edge* ``c_j`` inside it, chosen
by its own line MTS whose states are the interval's edges (:mod:`~clusteropt.algorithms.ring.mts.line`):
a request on edge ``e`` is fed as a unit "hit" on ``e`` to the MTS of every interval containing
``e`` and the interval's cut moves to the state the MTS returns.  The processes between
consecutive cuts form a slice; slice ``j`` goes to server ``perm[j]``.

Slices and the wrap overlap.  In absolute positions ``c_j in [s + jL, s + (j+1)L - 1]``.  The
slice of index ``j`` is ``(B_j, B_{j+1}]`` with ``B_j = c_j`` for ``1 <= j <= m-1``,
``B_m = max(c_0 + n, c_{m-1})`` and ``B_0 = B_m - n``.  When the cut of ``I_{m-1}`` has crossed
the cut of ``I_0`` (``c_{m-1} > c_0 + n``, only possible on the overlap), slice ``m-1`` is empty and
the overlap region ``(c_0, c_{m-1} - n]`` belongs to slice ``m-2``; otherwise the slices are the
arcs between consecutive cuts.  Every slice lies inside ``(c_j, c_{j+1}]`` for some ``j``, so it has
at most ``2L - 1`` processes: load ``<= 2L <= (2 + eps) k`` (Lemma 3.1).  A cut moving by ``d``
moves only the boundaries at that cut, so at most ``d`` processes change server
(Observation 3.2), and the algorithm migrates exactly those whose slice changed.

``perm`` (slice -> server) is fixed at :meth:`DynamicRing.start`: the assignment maximising the
overlap with the instance's initial placement (``scipy.optimize.linear_sum_assignment``; identity
when ``m * l > 4e6``).  The move from the initial placement to the slices, at request index
``-1``, is the additive constant ``C`` of Theorem 2.1 (at most ``n`` migrations).

Migration cost ``alpha``.  Moving a cut by ``d`` migrates at most ``d`` processes, which cost
``alpha d``; so each interval's MTS runs in the metric ``alpha |x - y|`` with unit hits (its move
cost is the instance's ``alpha``, at least ``1 / L``: :func:`mts_alpha`), and the ring's cost is
at most the sum of the intervals' MTS costs, as in Observation 3.2.  The paper states its
analysis for ``alpha = 1``; its chain keeps its factors for any ``alpha > 0`` (tag [I]): Lemmas
3.3-3.6 compare the well-behaved strategy's hits with the optimum's communication and its
movement with the optimum's migrations term by term, so scaling both movement terms by ``alpha``
keeps each inequality, and the additive constant ``C`` (at most ``n`` initial migrations and the
MTS constants, which are in metric units) scales with ``alpha``.  In practice the MTS then moves
a cut only after about ``alpha`` more hits on it than on its neighbour: the migrations fall about
as ``1 / alpha`` while communication rises.

Guarantee of what is shipped.  Deterministic part (any MTS): load ``<= 2L - 1 <= (2 + eps) k``
after every step; communication cost ``<=`` the intervals' hit costs and migrations ``<=`` their
movement (Observation 3.2; both in :meth:`DynamicRing.costs`).  Competitive ratio: the paper's
chain gives ``E[ALG] <= c_MTS(L) * O(W*) + C`` and ``W* = O(log n) OPT`` (Lemmas 3.3, 3.6, 3.4),
i.e. ``E[ALG] <= c_MTS(L) * O(log n) * OPT + C``, where ``c_MTS(L)`` is the competitive ratio of
the line MTS on ``L`` states in the "pay, then move" order used here (constants and the
``eps``-dependence of Lemma 3.4 are reconstructed, tag [I]).  With ``mts="wfa"``
(:class:`~clusteropt.algorithms.ring.mts.line.WorkFunctionLine`, ``c_MTS <= 2(2L - 1)``) that is
``O(L log n) = O(k log n)`` with augmentation ``2 + eps``.
With ``mts="hst"`` (the default: the paper's black box,
:class:`~clusteropt.algorithms.ring.mts.hst.EntropicHSTLine`, ``c_MTS = O(log^2 L)`` in expectation
under the assumptions stated there) the chain gives the ``O(log^3 n)`` of Theorem 2.1 with
augmentation ``2 + eps``.  With ``mts="soft"`` the MTS is the heuristic
:class:`~clusteropt.algorithms.ring.mts.line.SoftWorkFunctionLine`, which has no proven ratio, so no
competitive bound is claimed for it; it is kept because it migrates much less on random demand
(``benchmarks/results/experiments/ring-*``).  With ``mts="mix"`` (ours,
:class:`~clusteropt.algorithms.ring.mts.mix.CombinedLine`) each interval runs the HST MTS and the
work function algorithm side by side and follows one of them by exponential weights with lazy
switching; its expected cost is at most a constant factor (at most 13 at the default ``rate``)
times the smaller of theirs plus a constant independent of the sequence, so it keeps the HST MTS's
``O(log^2 L)`` and with it Theorem 2.1's ``O(log^3 n)``; on the recorded instances it pays 1.10
times the better of the two (geometric mean, ``benchmarks/results/ring_mix.md``).

Examples
--------
>>> from clusteropt.instances.ring import RingInstance
>>> inst = RingInstance(n=12, servers=3, requests=[3, 3, 3, 3, 7, 7, 7, 7])
>>> algo = DynamicRing(mts="wfa", epsilon=1.0)
>>> algo.start(inst, np.random.default_rng(0))
>>> algo.L_, algo.m_, algo.augmentation
(6, 2, 3.0)
>>> for t, e in enumerate(inst.requests.tolist()):
...     algo.state_.now = t
...     algo.serve(e)
>>> int(algo.state_.load.max()) <= 2 * algo.L_
True
>>> sorted(algo.costs())
['communication', 'initial', 'interval_hit', 'interval_move', 'moving']
"""

from __future__ import annotations

import bisect
import logging
import math
from typing import Any

import numpy as np

from clusteropt.algorithms.ring.mts import MTS_CLASSES, LineMTS, make_line_mts
from clusteropt.algorithms.ring.mts.line import check_alpha
from clusteropt.algorithms.ring.state import RingAssignment

__all__ = ["CUT_STARTS", "DynamicRing", "mts_alpha"]

log = logging.getLogger(__name__)

#: Where each interval's cut edge starts (tag [?]; the paper leaves it open, it only changes ``C``).
CUT_STARTS = ("initial", "center")

#: Largest ``m * l`` overlap matrix solved for the slice -> server assignment.
_MAX_ASSIGNMENT = 4_000_000


def mts_alpha(alpha: float, states: int) -> float:
    """The move cost an interval's line MTS runs at: the instance's ``alpha``, at least ``1 / states``.

    Below ``1 / states`` a move across the whole interval costs less than one hit, so every MTS
    already leaves a hit edge at once; the floor keeps the randomized MTS's hit size ``1 / alpha``
    finite (``alpha = 0``: migrations are free).  An integral value is returned as an int.

    >>> mts_alpha(4.0, 8), mts_alpha(0, 8), mts_alpha(0.05, 8)
    (4, 0.125, 0.125)
    """
    return check_alpha(max(float(alpha), 1.0 / max(1, int(states))))


class DynamicRing:
    """Paper 004's dynamic algorithm (Sec. 3): intervals of random shift, a line MTS per cut edge.

    Parameters
    ----------
    mts : {"hst", "soft", "wfa", "mix"}
        The line MTS run in each interval: ``"hst"`` the paper's randomized black box (random
        2-HST + entropic mirror descent), ``"soft"``
        :class:`~clusteropt.algorithms.ring.mts.line.SoftWorkFunctionLine` (heuristic, no proven
        ratio), ``"wfa"`` the deterministic work function algorithm (``2(2L - 1)``-competitive in
        this setting), ``"mix"`` :class:`~clusteropt.algorithms.ring.mts.mix.CombinedLine` (ours:
        runs ``"hst"`` and ``"wfa"`` side by side and follows one of them by exponential weights
        of their costs).  See the module docstring for what that makes of Theorem 2.1.
    epsilon : float
        ``eps >= 0``: intervals of ``L = floor((1 + eps/2) k)`` edges (capped at ``n``); the load
        bound is ``2L <= (2 + eps) k`` (Lemma 3.1).  The paper's ``eps`` (any constant ``> 0``) and
        its exact use in ``L`` are reconstructed (tag [I]).
    theta : float, optional
        Temperature of the soft MTS (tag [?]); default ``L``.  Only with ``"soft"``.
    rate : float, optional
        Learning-rate scale of the combined MTS, ``eta = rate / (L - 1)`` (ours; default
        :data:`~clusteropt.algorithms.ring.mts.mix.DEFAULT_RATE`).  Only with ``"mix"``.
    cut_start : {"initial", "center"}
        Start state of each interval's MTS (tag [?]; only the additive constant depends on it):
        ``"initial"`` = the cut edge of the initial assignment inside the interval nearest its
        centre (the centre if there is none), ``"center"`` = the interval's middle edge.  The
        soft MTS starts from ``p_0(x) ~ exp(-|x - start| / theta)``, so its first cut is
        drawn around that edge rather than placed on it.

    Attributes
    ----------
    state_ : RingAssignment
        Placement and migration log.
    L_, m_, shift_ : int
        Interval length (edges), number of intervals, the random shift ``s``.
    perm_ : int array (m,)
        Server of each slice index.
    mts_ : list of LineMTS
        The interval MTS instances (empty when ``m == 1``: one slice, nothing to decide).

    References
    ----------
    Räcke, Schmid, Zabrodin, SPAA 2023, Sec. 3.1 (algorithm), Lemma 3.1 (load), Observation 3.2
    (cost), Theorem 2.1.

    Examples
    --------
    >>> from clusteropt.instances.ring import RingInstance
    >>> algo = DynamicRing(epsilon=0.5)
    >>> algo.get_params()
    {'mts': 'hst', 'epsilon': 0.5, 'theta': None, 'cut_start': 'initial'}
    >>> algo.start(RingInstance(n=16, servers=4, requests=[]), 1)
    >>> algo.L_, algo.m_, algo.intervals()[0][1] - algo.intervals()[0][0] + 1
    (5, 4, 5)
    """

    def __init__(self, *, mts: str = "hst", epsilon: float = 1.0, theta: float | None = None,
                 cut_start: str = "initial", rate: float | None = None):
        self.mts = mts
        self.epsilon = epsilon
        self.theta = theta
        self.cut_start = cut_start
        self.rate = rate

    # -- the RingAlgorithm interface ----------------------------------------------------------
    @property
    def name(self) -> str:
        """``dynamic``, ``dynamic-wfa`` or ``dynamic-mix`` (the policy names of :mod:`clusteropt.online.ring`)."""
        return {"wfa": "dynamic-wfa", "mix": "dynamic-mix"}.get(self.mts, "dynamic")

    @property
    def augmentation(self) -> float:
        """``2 + eps``: the load bound ``2L <= (2 + eps) k`` of Lemma 3.1."""
        return 2.0 + float(self.epsilon)

    def get_params(self) -> dict[str, Any]:
        """Every parameter as a JSON scalar (``rate`` only with ``mts="mix"``, the one MTS that uses it)."""
        params = {"mts": self.mts, "epsilon": float(self.epsilon),
                  "theta": None if self.theta is None else float(self.theta), "cut_start": self.cut_start}
        if self.mts == "mix":
            from clusteropt.algorithms.ring.mts.mix import DEFAULT_RATE

            params["rate"] = float(DEFAULT_RATE if self.rate is None else self.rate)
        return params

    def _validate(self) -> float:
        if self.mts not in MTS_CLASSES:
            raise ValueError(f"mts = {self.mts!r}; expected one of {', '.join(sorted(MTS_CLASSES))}")
        try:
            eps = float(self.epsilon)
        except (TypeError, ValueError):
            raise ValueError(f"epsilon = {self.epsilon!r}; expected a number >= 0") from None
        if isinstance(self.epsilon, bool) or not math.isfinite(eps) or eps < 0:
            raise ValueError(f"epsilon = {self.epsilon!r}; expected a finite number >= 0")
        if self.cut_start not in CUT_STARTS:
            raise ValueError(f"cut_start = {self.cut_start!r}; expected one of {', '.join(CUT_STARTS)}")
        if self.rate is not None:
            rate = self.rate
            if self.mts != "mix":
                raise ValueError(f"rate = {rate!r} is a parameter of mts='mix' (policy dynamic-mix), "
                                 f"not of mts={self.mts!r}")
            from clusteropt.algorithms.ring.mts.mix import check_rate

            check_rate(rate)
        return eps

    def start(self, instance, rng: np.random.Generator | int | None = None) -> None:
        """Draw the shift, build the intervals and their MTS, migrate to the slices (index -1)."""
        eps = self._validate()
        rng = np.random.default_rng(rng)
        n, servers, k = int(instance.n), int(instance.servers), int(instance.k)
        initial = np.asarray(instance.initial, dtype=np.int64)
        self.n_ = n
        L = min(n, max(1, math.floor((1.0 + eps / 2.0) * k + 1e-9)))
        m = -(-n // L)
        self.L_, self.m_ = L, m
        self.alpha_ = mts_alpha(instance.alpha, L)
        self.shift_ = s = int(rng.integers(L))
        self.state_ = RingAssignment(initial, servers)
        self.state_.now = -1
        self._comm = 0
        self._moving = 0
        self._next = [*range(1, n), 0]
        self._cover: list[tuple] = [()] * n
        self._pack: Any = None  # the compiled path's HSTPack / MixPack, built on its first block
        self._cover_arrays = (np.zeros(n, dtype=np.int64), np.zeros((n, 2), dtype=np.int64),
                              np.zeros((n, 2), dtype=np.int64))
        self.mts_: list[LineMTS] = []
        starts = [s + j * L for j in range(m)]
        self._starts = starts
        if m == 1:
            # one interval holding the whole ring: one slice, the cut position changes nothing.
            self._cuts = [s]
            self._B = [s - n, s]
            owner = np.zeros(n, dtype=np.int64)
        else:
            x0 = self._start_states(initial, starts, L)
            for j in range(m):
                mts = make_line_mts(self.mts, theta=self.theta, rate=self.rate)
                mts.reset(L, x0[j], rng, alpha=self.alpha_)
                self.mts_.append(mts)
            cuts = [starts[j] + self.mts_[j].position_ for j in range(m)]
            self._cuts = cuts
            cover: list[list] = [[] for _ in range(n)]
            for j in range(m):
                mts = self.mts_[j]
                base = starts[j]
                for x in range(L):
                    cover[(base + x) % n].append((mts, j, x))
            self._cover = [tuple(c) for c in cover]
            B = [0] * (m + 1)
            for j in range(1, m):
                B[j] = cuts[j]
            B[m] = max(cuts[0] + n, cuts[m - 1])
            B[0] = B[m] - n
            self._B = B
            pos = B[0] + 1 + np.arange(n, dtype=np.int64)
            owner = np.searchsorted(np.asarray(B, dtype=np.int64), pos, side="left") - 1
            owner = owner[np.argsort(pos % n)]
        self.perm_ = self._slice_servers(owner, initial, m, servers)
        self._perm = self.perm_.tolist()
        self._initial = self.state_.assign(np.arange(n), self.perm_[owner])
        log.debug("dynamic ring: n=%d l=%d k=%d L=%d m=%d shift=%d mts=%s alpha=%s, %d initial migrations",
                  n, servers, k, L, m, s, self.mts, self.alpha_, self._initial)

    def serve(self, e: int) -> None:
        """Serve a request on edge ``e``: count it, feed it to its intervals' MTS, move cuts."""
        so = self.state_.server_of
        if so[e] != so[self._next[e]]:
            self._comm += 1
        for mts, j, x in self._cover[e]:
            old = mts.position_
            new = mts.serve(x)
            if new != old:
                self._move_cut(j, new - old)

    def serve_block(self, start: int, requests) -> bool:
        """Serve ``requests`` (indices ``start, start + 1, ...``) on the compiled path; False if it does not apply.

        The same as setting ``state_.now`` and calling :meth:`serve` for each request, bit for bit
        (:mod:`~clusteropt.algorithms.ring.compiled`), for ``mts="hst"`` and ``"mix"``.  Returns False, having
        done nothing, for the other MTS, when :func:`~clusteropt.algorithms.ring.compiled.use_compiled`
        says no (``CLUSTEROPT_JIT``, the block's size), or in the middle of a step.
        """
        from clusteropt.algorithms.ring import compiled

        requests = np.asarray(requests, dtype=np.int64)
        if self.mts not in ("hst", "mix") or not compiled.use_compiled(requests.size):
            return False
        state = self.state_
        if requests.size == 0:
            return True
        state.now = start
        if state.pending:
            return False
        if requests.min() < 0 or requests.max() >= self.n_:
            bad = int(np.flatnonzero((requests < 0) | (requests >= self.n_))[0])
            raise ValueError(f"requests[{bad}] = {int(requests[bad])}; expected an edge in 0..{self.n_ - 1}")
        if self._pack is None and self.mts_:
            self._pack = (compiled.HSTPack if self.mts == "hst" else compiled.MixPack)(self.mts_)
            cover_n = np.zeros(self.n_, dtype=np.int64)
            cover = np.zeros((self.n_, 2, 2), dtype=np.int64)
            for e, entries in enumerate(self._cover):
                cover_n[e] = len(entries)
                for c, (_, j, x) in enumerate(entries):
                    cover[e, c] = j, x
            self._cover_arrays = (cover_n, np.ascontiguousarray(cover[:, :, 0]),
                                  np.ascontiguousarray(cover[:, :, 1]))
        pack = self._pack
        cuts = np.asarray(self._cuts, dtype=np.int64)
        B = np.asarray(self._B, dtype=np.int64)
        counters = np.array([self._comm, self._moving, 0], dtype=np.int64)
        cover_n, cover_j, cover_x = self._cover_arrays
        rows = compiled.serve_block(requests, start, state.server_of, state.load, cover_n, cover_j, cover_x,
                                    cuts, B, self.perm_, pack, counters)
        self._cuts, self._B = cuts.tolist(), B.tolist()
        self._comm, self._moving = int(counters[0]), int(counters[1])
        state.record_block(int(start) + requests.size - 1, rows, int(counters[2]))
        return True

    def costs(self) -> dict[str, float]:
        """``communication``, ``moving`` (migrations by cut moves), ``initial`` (at index -1), and
        the interval costs ``interval_hit`` / ``interval_move`` that bound the first two (Obs. 3.2).
        """
        return {
            "communication": float(self._comm),
            "moving": float(self._moving),
            "initial": float(self._initial),
            "interval_hit": float(sum(m.hit_cost_ for m in self.mts_)),
            "interval_move": float(sum(m.move_cost_ for m in self.mts_)),
        }

    # -- inspection ---------------------------------------------------------------------------
    def intervals(self) -> list[tuple[int, int]]:
        """``(first, last)`` absolute edge positions of each interval (take them mod ``n``)."""
        return [(a, a + self.L_ - 1) for a in self._starts]

    def cut_edges(self) -> list[int]:
        """The cut edge of each interval, as absolute positions inside :meth:`intervals`."""
        return list(self._cuts)

    def slices(self) -> list[tuple[int, int]]:
        """``(lo, hi)``: slice ``j`` holds the processes ``lo + 1 .. hi`` (mod ``n``); empty if ``hi <= lo``."""
        B = self._B
        return [(B[j], B[j + 1]) for j in range(len(B) - 1)]

    # -- internals ----------------------------------------------------------------------------
    def _start_states(self, initial: np.ndarray, starts: list[int], L: int) -> list[int]:
        centre = (L - 1) // 2
        if self.cut_start == "center":
            return [centre] * len(starts)
        n = self.n_
        is_cut = initial != np.roll(initial, -1)
        out = []
        xs = np.arange(L)
        order = np.argsort(np.abs(xs - centre), kind="stable")  # nearest the centre, left first
        for a in starts:
            hits = is_cut[(a + xs[order]) % n]
            out.append(int(order[np.argmax(hits)]) if hits.any() else centre)
        return out

    @staticmethod
    def _slice_servers(owner: np.ndarray, initial: np.ndarray, m: int, servers: int) -> np.ndarray:
        """Slice index -> server, maximising the processes that stay where they are."""
        if m * servers > _MAX_ASSIGNMENT:
            return np.arange(m, dtype=np.int64)
        from scipy.optimize import linear_sum_assignment

        overlap = np.bincount(owner * servers + initial, minlength=m * servers).reshape(m, servers)
        rows, cols = linear_sum_assignment(overlap, maximize=True)
        perm = np.empty(m, dtype=np.int64)
        perm[rows] = cols
        return perm

    def _move_cut(self, j: int, d: int) -> None:
        """Cut ``j`` moved by ``d``: update the slice boundaries, migrate the processes that changed slice."""
        cuts, B, n, m = self._cuts, self._B, self.n_, self.m_
        old = cuts[j]
        new = old + d
        cuts[j] = new
        lo, hi = (old, new) if d > 0 else (new, old)
        arcs = []
        if j != 0:
            B[j] = new
            arcs.append((lo, hi))
        if j == 0 or j == m - 1:
            old_m = B[m]
            B[m] = max(cuts[0] + n, cuts[m - 1])
            B[0] = B[m] - n
            if B[m] != old_m:
                arcs.append((min(old_m, B[m]), max(old_m, B[m])))
        base = B[0]
        perm = self._perm
        assign_one = self.state_.assign_one
        for a, b in arcs:
            for v in range(a + 1, b + 1):
                vv = base + 1 + (v - base - 1) % n
                owner = bisect.bisect_left(B, vv) - 1
                self._moving += assign_one(v % n, perm[owner])
