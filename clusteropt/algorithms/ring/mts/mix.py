"""A line MTS that follows the better of several line MTS run side by side (ours, not in paper 004).

Why.  In the dynamic ring algorithm (paper 004, Sec. 3) the paper's randomized black box
(:class:`~clusteropt.algorithms.ring.mts.hst.EntropicHSTLine`, ``O(log^2 N)``-competitive in
expectation against an oblivious adversary) pays two to three times what the deterministic work
function algorithm pays on the request patterns of the experiments (its fractional state spreads
over the HST and every change is paid in migrations), while the work function algorithm is only
``O(N)``-competitive and loses by that factor on the sequences built against it (experiment
``ring-hit-the-cut``).  :class:`CombinedLine` runs both (any list of line MTS, the *experts*) on
the same requests without moving a server for them, and keeps its own server at the position of
one of them, chosen by exponential weights of their costs so far, switching lazily.  This is the
classic combination of online algorithms for MTS (Blum and Burch 2000; the randomized ``O(log m)``
of Azar, Broder and Manasse 1993); the constants below are derived here.

Algorithm.  Expert ``i`` has cumulative cost ``L_i`` (its hits and ``alpha`` times its movement,
in the same "pay, then move" order as every line MTS of
:mod:`~clusteropt.algorithms.ring.mts.line`).  Before
each request the combined server sits at the position of the expert ``J`` it follows, and ``J``
has the distribution ``p_i ~ exp(-eta L_i)``.  On a request on ``e`` it pays 1 if it sits at
``e``; then every expert serves ``e``, the weights become ``p'``, and the server keeps ``J``
with probability ``min(1, p'_J / p_J)``, else it switches to an expert ``j`` drawn with
probability proportional to ``max(0, p'_j - p_j)`` (so ``J`` has distribution ``p'`` again, and
``P(switch) = TV(p, p')``, the least possible); it moves to the followed expert's new position.
``eta = rate / D`` with ``D = alpha (N - 1)`` the line's diameter.  The weights and the switching rule are
:class:`~clusteropt.algorithms.ring.experts.LazyFollower`, shared with the ring policy ``follow``.

Guarantee (derived here; for every request sequence fixed in advance and every outcome of the
experts' own random draws, in expectation over the switching coins only).  Let ``m`` be the
number of experts and ``B = 1 + D`` (an expert pays at most ``1 + D`` per request).  Following ``J``
costs ``J``'s own loss plus at most ``D`` on a switch, and ``TV(p, p') <= sum_i p_i (1 -
exp(-eta l_i)) <= eta <p, l>`` (``p'_i >= p_i exp(-eta l_i)``), so a request costs at most
``(1 + eta D) <p, l>`` in expectation.  The weights' potential ``W = sum_i exp(-eta L_i)`` falls
by the factor ``sum_i p_i exp(-eta l_i) <= 1 - c <p, l>`` with ``c = (1 - exp(-eta B)) / B``
(``exp(-eta x)`` lies below its chord on ``[0, B]``), and ``exp(-eta L_min) <= W <= m
exp(-c sum <p, l>)``.  Together:

    ``E[cost] <= (1 + eta D) * eta B / (1 - exp(-eta B)) * (min_i L_i + ln(m) / eta)``.

With ``eta = rate / D`` the factor is at most ``(1 + rate)(1 + rate + rate^2 / 3)`` whenever
``D >= 1`` and tends to ``(1 + rate) rate / (1 - exp(-rate))`` as ``D`` grows (at the default
``rate = 2``: 13 and 6.94; at 0.5: 2.375 and 1.91), and the additive term is
``O(D ln(m) / rate)``, which does not depend on the sequence.  Taking expectations over the
experts (``E min <= min E``): with the paper's HST MTS among the experts, the combined MTS is
``O(log^2 N)``-competitive in expectation as that black box is, so the dynamic ring algorithm
keeps Theorem 2.1's ``O(log^3 n)`` (a constant factor more, and an additive constant more per
interval); and in expectation it never pays more than the factor times the work function
algorithm's cost plus the same constant.  :meth:`CombinedLine.bound` evaluates the right-hand
side.

References
----------
A. Blum, C. Burch, "On-line learning and the metrical task system problem", Machine Learning 39
(2000) 35-58 (combining online MTS algorithms by exponential weights with lazy switching).
Y. Azar, A. Z. Broder, M. S. Manasse, "On-line choice of on-line algorithms", SODA 1993.
Räcke, Schmid, Zabrodin, SPAA 2023, Sec. 3 and Lemma 3.3 (the MTS black box of Theorem 2.1).

Examples
--------
Two copies of the work function algorithm: the combination is that algorithm, whatever it draws.

>>> mix = CombinedLine(experts=("wfa", "wfa"))
>>> mix.reset(3, start=0, rng=0)
>>> [mix.serve(0) for _ in range(4)], mix.cost_, mix.expert_costs_
([0, 0, 1, 1], 4, [4, 4])

The default experts (the paper's HST MTS, the work function algorithm) on requests that always
hit the work function algorithm's state (the deterministic lower bound): the combination follows
the HST MTS.

>>> from clusteropt.algorithms.ring.mts.line import WorkFunctionLine, chase
>>> wfa = WorkFunctionLine()
>>> wfa.reset(8, start=3)
>>> requests = chase(wfa, 300)
>>> mix = CombinedLine()
>>> mix.reset(8, start=3, rng=0)
>>> for e in requests:
...     _ = mix.serve(e)
>>> mix.expert_costs_, mix.cost_, mix.opt_, round(mix.bound(), 1)
([87, 440], 96, 20, 682.6)
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence

import numpy as np

from clusteropt.algorithms.ring.experts import LazyFollower, follow_bound
from clusteropt.algorithms.ring.mts.hst import EntropicHSTLine
from clusteropt.algorithms.ring.mts.line import LineMTS, SoftWorkFunctionLine, WorkFunctionLine

__all__ = ["DEFAULT_EXPERTS", "DEFAULT_RATE", "EXPERTS", "CombinedLine", "check_rate"]

log = logging.getLogger(__name__)

#: The line MTS a :class:`CombinedLine` may combine, by name (those of
#: :data:`clusteropt.algorithms.ring.mts.MTS_CLASSES` but itself).
EXPERTS: dict[str, type[LineMTS]] = {"hst": EntropicHSTLine, "soft": SoftWorkFunctionLine, "wfa": WorkFunctionLine}

#: The experts of ``mts="mix"``: the paper's randomized black box and the work function algorithm.
DEFAULT_EXPERTS = ("hst", "wfa")

#: ``eta = rate / (N - 1)`` (ours).  Chosen by ``python -m benchmarks.ring_mix`` on the recorded
#: ``ring-ratio`` and ``ring-hit-the-cut`` instances: the geometric mean of dynamic-mix over the
#: better of dynamic and dynamic-wfa falls from rate 0.5 to 2 and little beyond, while the
#: guarantee's factor grows about as ``rate^2`` (for large ``N``: 1.91 at 0.5, 6.94 at 2, 20.4 at 4;
#: ``benchmarks/results/ring_mix.md``).
DEFAULT_RATE = 2.0


def check_rate(rate) -> float:
    """``rate`` as a float, or a ``ValueError`` naming it unless it is a finite number ``> 0``.

    >>> check_rate(2)
    2.0
    >>> check_rate(0)
    Traceback (most recent call last):
    ...
    ValueError: rate = 0; expected a finite number > 0
    """
    if isinstance(rate, bool) or not isinstance(rate, int | float) or not math.isfinite(rate) or rate <= 0:
        raise ValueError(f"rate = {rate!r}; expected a finite number > 0")
    return float(rate)


class CombinedLine(LineMTS):
    """Follow one of several line MTS run side by side, by exponential weights with lazy switching.

    Parameters
    ----------
    experts : sequence of str
        Names of the line MTS to combine (:data:`EXPERTS`: those of
        :data:`~clusteropt.algorithms.ring.mts.MTS_CLASSES` but ``"mix"`` itself); default
        ``("hst", "wfa")``.  Each is built with its defaults (``theta`` goes to a ``"soft"`` expert).
    rate : float
        ``rate > 0``: the learning rate is ``eta = rate / D``, ``D = alpha (N - 1)`` (tag: ours).  Smaller rates
        give a guarantee factor nearer 1 and a larger additive term (module docstring); larger
        ones follow the leader sooner.
    theta : float, optional
        Temperature of a ``"soft"`` expert (refused when no expert is ``"soft"``).

    Attributes
    ----------
    experts_ : list of LineMTS
        The experts (each serves every request; their servers are simulated, never moved for).
    expert_costs_ : list of float
        Each expert's cost so far (hits plus ``alpha`` times movement; ints when ``alpha`` is one).
    eta_ : float
        The learning rate.
    """

    name = "mix"

    def __init__(self, experts: Sequence[str] = DEFAULT_EXPERTS, *, rate: float = DEFAULT_RATE,
                 theta: float | None = None):
        self.experts = experts
        self.rate = rate
        self.theta = theta

    def reset(self, n_states: int, start: int = 0, rng: np.random.Generator | int | None = None, *,
              alpha: float = 1) -> None:
        """Reset every expert at ``start`` (each from its own stream of ``rng``) and follow one of them.

        ``alpha`` is the cost of moving one state, for the experts and for the combination.

        The streams are ``rng.spawn(m + 1)``: expert ``i`` draws from stream ``i``, the switching
        coins from stream ``m``.
        """
        names = self.experts
        if isinstance(names, str) or not isinstance(names, Sequence) or len(names) == 0:
            raise ValueError(f"experts = {names!r}; expected a non-empty sequence of line MTS names")
        for i, name in enumerate(names):
            if name not in EXPERTS:
                avail = ", ".join(sorted(EXPERTS))
                raise ValueError(f"experts[{i}] = {name!r}; expected one of {avail}")
        if self.theta is not None and "soft" not in names:
            raise ValueError(f"theta = {self.theta!r} is the soft expert's temperature; "
                             f"experts = {tuple(names)!r} has no 'soft'")
        rate = check_rate(self.rate)
        super().reset(n_states, start, rng, alpha=alpha)
        gen = np.random.default_rng(rng)
        streams = gen.spawn(len(names) + 1)
        self.experts_: list[LineMTS] = []
        for name, stream in zip(names, streams[:-1], strict=True):
            cls = EXPERTS[name]
            expert = cls(theta=self.theta) if cls is SoftWorkFunctionLine else cls()
            expert.reset(self.n_states_, self.start_, stream, alpha=self.alpha_)
            self.experts_.append(expert)
        m = len(self.experts_)
        diameter = self.alpha_ * (self.n_states_ - 1)
        self.eta_ = rate / diameter if diameter > 0 else rate  # one state: nothing to learn
        self._follow = LazyFollower(m, self.eta_, streams[-1])
        self.expert_costs_: list[float] = self._follow.costs
        # where the experts start (an expert that rounds a spread-out start draws its position):
        # the server starts at the followed one's, not charged, as for the randomized experts
        self.position_ = self.experts_[self.following_].position_

    @property
    def following_(self) -> int:
        """Index of the expert whose position the server holds."""
        return self._follow.following

    @property
    def switches_(self) -> int:
        """Times the server changed the expert it follows."""
        return self._follow.switches

    def weights(self) -> np.ndarray:
        """``p``: the probability of following each expert (``~ exp(-eta L_i)``)."""
        return self._follow.weights()

    def bound(self) -> float:
        """The guarantee's right-hand side at the experts' costs so far (module docstring).

        ``(1 + eta D) eta B / (1 - exp(-eta B)) (min_i L_i + ln(m) / eta)`` with ``D = alpha (N -
        1)``, ``B = 1 + D``; it bounds the expected cost over the switching coins.
        """
        D = self.alpha_ * (self.n_states_ - 1)
        return follow_bound(self.expert_costs_, self.eta_, D, 1.0 + D)

    def serve(self, e: int) -> int:
        """Serve a request on state ``e``; return the new position."""
        self._check(e)
        self.requests_ += 1
        pos = self.position_
        if pos == e:
            self.hit_cost_ += 1
        self._close(e)
        alpha = self.alpha_
        step = []
        for expert in self.experts_:
            old = expert.position_
            new = expert.serve(e)
            step.append(int(old == e) + alpha * abs(new - old))
        self._follow.update(step)
        new_pos = self.experts_[self._follow.following].position_
        if new_pos != pos:
            self.move_cost_ += abs(new_pos - pos)
            self.position_ = new_pos
        return new_pos
