"""Line metrical task systems with unit "hit" costs: the black box of the dynamic algorithm (paper 004, Sec. 3).

The states are ``0 .. N-1`` on a line, the MTS starts in state ``start``.  A request names a
state ``e``: it costs 1 if the algorithm's current state is ``e`` and 0 elsewhere; afterwards the
algorithm may move, paying ``alpha`` per state it passes (the metric ``alpha |x - y|``).  This is
the order of the ring problem (a request is served by the placement *before* the migrations it
triggers), so the cost of a run is ``sum_t [e_t == s_{t-1}] + alpha |s_{t-1} - s_t|`` ("pay, then
move").  In the dynamic ring algorithm a state is an interval's cut edge, moving it by one
position migrates at most one process, and a migration costs the instance's ``alpha``: so
``alpha`` here is the ring's migration cost (the paper: 1).  Scaling the metric by ``alpha`` is
the same as scaling the hit cost by ``1 / alpha``; every guarantee below holds in either scale
(competitive ratios are scale-free), with additive constants that scale with ``alpha``.

Work function (docs/algorithms/ring-partitioning.md A4.1).  ``w_t(x)`` = the least cost of
serving the first ``t`` requests and ending in ``x``, where the first move may also be made
before the first request (so ``w_0(x) = alpha |x - start|``; this differs from the strict "pay,
then move" optimum by at most ``alpha``).  ``w`` stays ``alpha``-Lipschitz, and a request on
``e`` changes only ``w(e) <- min(w(e) + 1, w(e - 1) + alpha, w(e + 1) + alpha)`` (for ``x != e``,
``w(e) + 1 + alpha |x - e| >= w(x)`` already; for ``e``, the nearest neighbours dominate the
farther states by the Lipschitz bound).  With an integer ``alpha`` the values stay integers.
``min_x w_T(x)`` is the offline optimum of the sequence.

Implementations (one interface: ``reset(n_states, start, rng, alpha=1)``, ``serve(e) ->
position``, and the counters ``hit_cost_``, ``move_cost_`` (states passed), ``cost_`` (``hit_cost_
+ alpha move_cost_``)):

:class:`WorkFunctionLine`
    The deterministic work function algorithm, O(1) per request (see its docstring for why the
    argmin needs no scan).  Proven: ``(2N-1)``-competitive in the usual "move, then pay" MTS,
    hence at most ``(1 + 1/alpha) (2N - 1) OPT + const`` in the "pay, then move" order used here.
:class:`SoftWorkFunctionLine`
    The randomized *heuristic* of docs/algorithms/ring-partitioning.md A4.3: distribution
    ``p(x) ~ exp(-w(x) / theta)`` rounded
    online by the CDF coupling (one uniform ``U`` per instance; position = smallest ``j`` with
    ``CDF(j) >= U``).  **No competitive guarantee** (failure mode in its docstring).
:class:`~clusteropt.algorithms.ring.mts.hst.EntropicHSTLine` (module :mod:`~clusteropt.algorithms.ring.mts.hst`)
    The randomized black box the paper uses: a random 2-HST of the line and Coester-Lee's
    entropic mirror descent on it, rounded by the same CDF coupling; ``O(log^2 N)``-competitive
    in expectation (see its docstring for the assumptions).
:class:`~clusteropt.algorithms.ring.mts.mix.CombinedLine` (module :mod:`~clusteropt.algorithms.ring.mts.mix`; ours)
    Runs several of these side by side (default the HST MTS and the WFA) and follows one of
    them by exponential weights of their costs, switching lazily: at most a constant factor
    more than the better of them, plus a constant.

References
----------
Räcke, Schmid, Zabrodin, "Polylog-competitive algorithms for dynamic balanced graph partitioning
for ring demands", SPAA 2023, Sec. 3 ("Reduction to MTS", Lemma 3.3).  Borodin, Linial, Saks,
"An optimal on-line algorithm for metrical task system", JACM 1992 (work function algorithm,
``2N - 1``).

Examples
--------
>>> wfa = WorkFunctionLine()
>>> wfa.reset(5, start=2)
>>> [wfa.serve(e) for e in (2, 1, 1, 2, 2)]   # the 2nd hit on 2 finds w(3) lower: move there
[2, 2, 2, 2, 3]
>>> wfa.hit_cost_, wfa.move_cost_, wfa.work_function().tolist(), wfa.opt_
(3, 1, [2, 2, 2, 1, 2], 1)
"""

from __future__ import annotations

import logging
import math

import numpy as np

__all__ = ["LineMTS", "SoftWorkFunctionLine", "WorkFunctionLine", "chase", "check_alpha"]

log = logging.getLogger(__name__)


def check_alpha(alpha) -> float:
    """``alpha`` (the cost of moving one state) as an int when it is integral, else a float.

    >>> check_alpha(4.0), check_alpha(0.5)
    (4, 0.5)
    >>> check_alpha(0)
    Traceback (most recent call last):
    ...
    ValueError: alpha = 0; expected a finite number > 0 (the cost of moving one state)
    """
    ok = not isinstance(alpha, bool) and isinstance(alpha, int | float | np.integer | np.floating)
    if not ok or not math.isfinite(alpha) or alpha <= 0:
        raise ValueError(f"alpha = {alpha!r}; expected a finite number > 0 (the cost of moving one state)")
    return int(alpha) if float(alpha).is_integer() else float(alpha)


class LineMTS:
    """Base class: the work function of a line MTS with unit hit costs and the cost counters.

    Subclasses implement :meth:`serve`.  State attributes (set by :meth:`reset`):
    ``n_states_``, ``start_``, ``alpha_`` (cost of moving one state), ``position_`` (current
    state), ``hit_cost_`` (requests that hit the current state), ``move_cost_`` (total distance
    moved, in states), ``requests_``.
    """

    name = "base"

    def reset(self, n_states: int, start: int = 0, rng: np.random.Generator | int | None = None, *,
              alpha: float = 1) -> None:
        """Start a fresh instance on ``n_states`` states at ``start`` (``rng`` for randomized ones).

        ``alpha > 0`` is the cost of moving one state (the metric ``alpha |x - y|``); an integer
        ``alpha`` keeps the work function integral.
        """
        if isinstance(n_states, bool) or not isinstance(n_states, int | np.integer) or n_states < 1:
            raise ValueError(f"n_states = {n_states!r}; expected an integer >= 1")
        n_states = int(n_states)
        if isinstance(start, bool) or not isinstance(start, int | np.integer) or not 0 <= start < n_states:
            raise ValueError(f"start = {start!r}; expected a state in 0..{n_states - 1}")
        self.alpha_ = check_alpha(alpha)
        self.n_states_ = n_states
        self.start_ = int(start)
        self.position_ = int(start)
        self.hit_cost_ = 0
        self.move_cost_ = 0
        self.requests_ = 0
        a = self.alpha_
        self._w: list[float] = [a * abs(x - self.start_) for x in range(n_states)]

    def serve(self, e: int) -> int:  # pragma: no cover - abstract
        """Serve a request on state ``e``; return the new position."""
        raise NotImplementedError

    @property
    def cost_(self) -> float:
        """Hit cost plus ``alpha`` times the movement so far (an int when ``alpha`` is one)."""
        return self.hit_cost_ + self.alpha_ * self.move_cost_

    def work_function(self) -> np.ndarray:
        """``w(x)`` for every state: the least cost of serving the requests so far ending in ``x``
        (int64 when ``alpha`` is an integer, else float).
        """
        integral = isinstance(self.alpha_, int)
        return np.array(self._w, dtype=np.int64 if integral else float)

    @property
    def opt_(self) -> float:
        """The offline optimum of the requests so far (``min_x w(x)``)."""
        return min(self._w)

    def _check(self, e: int) -> None:
        if not 0 <= e < self.n_states_:
            raise ValueError(f"request on state {e}; expected a state in 0..{self.n_states_ - 1}")

    def _close(self, e: int) -> float:
        """Close the work function on a request on ``e``: ``w(e) <- min(w(e) + 1, w(e -+ 1) +
        alpha)`` (module docstring); returns how much it rose (0 when a neighbour held it).
        """
        w = self._w
        we = w[e]
        top = we + 1
        a = self.alpha_
        if e > 0 and w[e - 1] + a < top:
            top = w[e - 1] + a
        if e + 1 < self.n_states_ and w[e + 1] + a < top:
            top = w[e + 1] + a
        w[e] = top
        return top - we


class WorkFunctionLine(LineMTS):
    """The work function algorithm (WFA) on a line with unit hit costs, O(1) per request.

    On a request on ``e`` the WFA moves to ``argmin_x g(x) + alpha |x - cur|`` where ``g`` is the
    work function *before* closing it, i.e. ``w`` with ``g(e) = w(e) + 1`` (the classical "move,
    then pay" rule), then closes ``w``.  Because ``w`` is ``alpha``-Lipschitz, ``w(x) + alpha |x -
    cur| >= w(cur)``:

    * ``cur != e``: ``g(cur) = w(cur)`` is a minimum; stay.
    * ``cur == e`` and a neighbour ``e +- 1`` has ``w(e +- 1) + alpha < w(e) + 1``: the minimum
      is attained there (a farther state ``x`` has ``g(x) + alpha |x - e| >= w(e +- 1) + alpha``
      by the Lipschitz bound); move to that neighbour (the lower one).
    * otherwise the minimum is ``w(e) + 1``, attained at ``e`` itself: stay.

    With ``alpha = 1`` a move happens when a neighbour is one lower; with ``alpha = a`` the
    algorithm stays until ``e`` has taken about ``a`` more hits than its neighbour, so it
    migrates about ``a`` times less.  Tie rule (deterministic): the smallest ``|x - cur|``, then
    the lower neighbour, then the left one.  Every move is one step, so no ``O(N)`` argmin scan
    is ever needed (a test checks this against a brute-force numpy argmin).

    Guarantee.  The WFA is ``(2N - 1)``-competitive for MTS with ``N`` states in any metric
    (Borodin, Linial, Saks 1992) in the "move, then pay" order.  Here the cost of a request is
    paid on the state *before* moving; the difference is at most one hit per move, which costs
    ``alpha``, so the proven bound in this order is ``cost <= (1 + 1/alpha)(2N - 1) OPT + const``;
    the tests also check ``(2N - 1) OPT + const`` on random and adversarial sequences.

    Examples
    --------
    >>> mts = WorkFunctionLine()
    >>> mts.reset(3, start=0)
    >>> [mts.serve(0) for _ in range(4)]   # w(0): 0 -> 1 -> 2 (stay twice); then w(1) < w(0): move
    [0, 0, 1, 1]
    >>> mts.cost_, mts.opt_   # 3 hits + 1 move; the optimum moves to 1 at once
    (4, 1)
    """

    name = "wfa"

    def serve(self, e: int) -> int:
        """Serve a request on state ``e``; return the new position."""
        self.requests_ += 1
        w = self._w
        we = w[e]
        a = self.alpha_
        top = we + 1
        lo = w[e - 1] + a if e > 0 else top
        hi = w[e + 1] + a if e + 1 < self.n_states_ else top
        if lo < top or hi < top:
            w[e] = lo if lo <= hi else hi   # the closed value min(w(e) + 1, w(e -+ 1) + alpha)
            if self.position_ == e:         # g(e -+ 1) + alpha < g(e): move to the lower neighbour
                self.hit_cost_ += 1
                self.position_ = e - 1 if lo <= hi else e + 1
                self.move_cost_ += 1
        else:
            w[e] = top
            if self.position_ == e:
                self.hit_cost_ += 1
        return self.position_


class SoftWorkFunctionLine(LineMTS):
    """Randomized heuristic line MTS: ``p(x) ~ exp(-w(x) / theta)``, rounded by the CDF coupling.

    **No proven competitive ratio.**  This is docs/algorithms/ring-partitioning.md A4.3, shipped in place of the
    paper's black box
    (a random 2-HST of the line + entropic mirror descent, ``O(log^2 N)``-competitive; not
    implemented because its multi-level dynamics could not be recovered).

    The fractional state is ``p`` with ``p(x) ~ exp(-w(x) / theta)`` (``w`` the work function).
    It is rounded online by the CDF coupling: at :meth:`reset` one ``U ~ Uniform[0, 1)`` is drawn;
    the position is always the smallest ``j`` with ``CDF_p(j) >= U``.  So the position has marginal
    distribution ``p`` exactly, and when ``p`` changes to ``p'`` the expected movement is
    ``sum_j |CDF_p(j) - CDF_p'(j)| = W_1(p, p')`` (optimal on a line; valid against an oblivious
    adversary).

    Failure mode (why there is no guarantee).  A request on ``e`` whose neighbour has ``w`` one
    lower leaves ``w``, hence ``p`` and the position, unchanged: repeated requests on such an
    edge cost ``p(e)`` each in expectation, without any progress, while the optimum pays nothing
    more.  Example: every state ``e != start`` has this property at the beginning, so the
    sequence "``e``, ``e``, ``e``, ..." costs ``T p(e)`` in expectation against an optimum of 0.
    Larger ``theta`` flattens ``p`` (more exposed to this); smaller ``theta`` approaches a
    deterministic "stay at argmin w" rule.

    Parameters
    ----------
    theta : float, optional
        Temperature (tag [?]: not from the paper).  Default ``alpha N`` (``N`` the number of
        states, as suggested in docs/algorithms/ring-partitioning.md A4, in the units of the
        work function, which scale with ``alpha``).

    Notes
    -----
    Data structure: the weights ``exp(-(w(x) - base) / theta)`` in a Fenwick tree (Python lists),
    ``O(log N)`` per request that changes ``w`` (update, then a Fenwick descent for the
    quantile), ``O(1)`` otherwise.  The tree is rebuilt from ``w`` (numpy, ``O(N)``) when the
    total weight falls below ``1e-3`` (``base`` re-set to ``min w``) or after ``max(4N, 1024)``
    changes, so rounding drift never accumulates.

    Examples
    --------
    >>> mts = SoftWorkFunctionLine()
    >>> mts.reset(4, start=1, rng=0)
    >>> mts.distribution().round(3).tolist()
    [0.246, 0.316, 0.246, 0.192]
    >>> [mts.serve(1) for _ in range(3)]   # U = 0.637 sits in state 2's share; w(1) rises twice
    [2, 2, 2]
    >>> mts.work_function().tolist(), mts.opt_
    ([1, 2, 1, 2], 1)
    """

    name = "soft"

    def __init__(self, theta: float | None = None):
        self.theta = theta

    def reset(self, n_states: int, start: int = 0, rng: np.random.Generator | int | None = None, *,
              alpha: float = 1) -> None:
        """Start from ``p_0(x) ~ exp(-alpha |x - start| / theta)``; draw the coupling's ``U`` from ``rng``.

        The initial position is the ``U``-quantile of ``p_0`` (not ``start`` itself); getting there
        is not charged (a caller that places the state itself, like the dynamic ring algorithm,
        pays for it in its initial rearrangement).
        """
        super().reset(n_states, start, rng, alpha=alpha)
        theta = float(self.alpha_ * n_states) if self.theta is None else float(self.theta)
        if not math.isfinite(theta) or theta <= 0:
            raise ValueError(f"theta = {self.theta!r}; expected a finite number > 0 (or None for alpha N)")
        self.theta_ = theta
        self._decay = math.exp(-1.0 / theta)
        self.u_ = float(np.random.default_rng(rng).random())
        top = 1
        while top * 2 <= n_states:
            top *= 2
        self._top = top
        self._rebuild_every = max(4 * n_states, 1024)
        self._rebuild()
        # start where the coupling puts U (not at ``start``): the distribution starts as p_0.
        self.position_ = self._quantile()

    def distribution(self) -> np.ndarray:
        """``p``: the current fractional state (sums to 1)."""
        w = np.asarray(self._w, dtype=float)
        z = np.exp(-(w - w.min()) / self.theta_)
        return z / z.sum()

    def _rebuild(self) -> None:
        w = np.asarray(self._w, dtype=float)
        self._base = float(w.min())
        wt = np.exp(-(w - self._base) / self.theta_)
        cs = np.concatenate(([0.0], np.cumsum(wt)))
        idx = np.arange(1, self.n_states_ + 1)
        tree = np.zeros(self.n_states_ + 1)
        tree[1:] = cs[idx] - cs[idx - (idx & -idx)]
        self._wt = wt.tolist()
        self._tree = tree.tolist()
        self._total = float(cs[-1])
        self._changes = 0

    def _quantile(self) -> int:
        """Smallest ``j`` with ``CDF(j) >= U`` by Fenwick descent."""
        target = self.u_ * self._total
        tree = self._tree
        n = self.n_states_
        pos = 0
        bit = self._top
        while bit:
            nxt = pos + bit
            if nxt <= n and tree[nxt] < target:
                pos = nxt
                target -= tree[nxt]
            bit >>= 1
        return pos if pos < n else n - 1

    def serve(self, e: int) -> int:
        """Serve a request on state ``e``; return the new position."""
        self.requests_ += 1
        pos = self.position_
        if pos == e:
            self.hit_cost_ += 1
        rise = self._close(e)
        if not rise:
            return pos  # w, p and the position unchanged (the failure mode of the class docstring)
        wt = self._wt
        old = wt[e]
        new = old * (self._decay if rise == 1 else math.exp(-rise / self.theta_))
        wt[e] = new
        delta = new - old
        self._total += delta
        tree = self._tree
        n = self.n_states_
        i = e + 1
        while i <= n:
            tree[i] += delta
            i += i & -i
        self._changes += 1
        if self._total < 1e-3 or self._changes >= self._rebuild_every:
            self._rebuild()
        new_pos = self._quantile()
        if new_pos != pos:
            self.move_cost_ += abs(new_pos - pos)
            self.position_ = new_pos
        return new_pos


def chase(mts: LineMTS, T: int) -> list[int]:
    """The ``T`` requests that each name the state ``mts`` is in, served by it as they come.

    Against a deterministic line MTS (``mts`` already :meth:`~LineMTS.reset`) this is the
    adversary of the deterministic lower bound (Borodin, Linial, Saks 1992): it pays every
    request while the offline optimum pays about ``T / N``.  For a randomized one the sequence
    depends on its draws, so it is adaptive; replayed to another algorithm it is oblivious.

    >>> wfa = WorkFunctionLine()
    >>> wfa.reset(4, start=1)
    >>> chase(wfa, 6), wfa.hit_cost_, wfa.opt_
    ([1, 1, 1, 0, 0, 0], 6, 1)
    """
    if isinstance(T, bool) or not isinstance(T, int | np.integer) or T < 0:
        raise ValueError(f"T = {T!r}; expected an integer >= 0")
    requests = []
    for _ in range(int(T)):
        requests.append(mts.position_)
        mts.serve(mts.position_)
    return requests
