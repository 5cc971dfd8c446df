"""Following the cheapest of several online algorithms run side by side (ours, not in paper 004).

The combination of online algorithms for metrical task systems by exponential weights with lazy
switching (Blum and Burch 2000; Azar, Broder and Manasse 1993): ``m`` *experts* serve the same
requests without moving anything for the combination, which holds the state of the one it
follows.  Two combinations of the package use it: each interval's line MTS of ``dynamic-mix``
(:class:`~clusteropt.algorithms.ring.mts.mix.CombinedLine`: the paper's HST MTS and the work
function algorithm) and the ring policy ``follow``
(:class:`~clusteropt.algorithms.ring.follow.FollowRing`: whole ring policies).

Rule.  Expert ``i`` has cumulative cost ``L_i``; the followed expert ``J`` has the distribution
``p_i ~ exp(-eta L_i)``.  After a step's costs ``l_i`` the weights become ``p'``; the combination
keeps ``J`` with probability ``min(1, p'_J / p_J)``, else switches to ``j`` drawn with probability
proportional to ``max(0, p'_j - p_j)``.  So ``J`` has distribution ``p'`` again and a switch
happens with probability ``TV(p, p')``, the least any rule with these marginals can have.

Guarantee (derived here).  Let a step cost an expert at most ``B`` and a switch at most ``D``.
Following ``J`` costs ``J``'s own loss plus at most ``D`` on a switch, and ``TV(p, p') <= sum_i
p_i (1 - exp(-eta l_i)) <= eta <p, l>`` (since ``p'_i >= p_i exp(-eta l_i)``), so a step costs at
most ``(1 + eta D) <p, l>`` in expectation over the switching coins.  The potential ``W = sum_i
exp(-eta L_i)`` falls by the factor ``sum_i p_i exp(-eta l_i) <= 1 - c <p, l>`` with ``c = (1 -
exp(-eta B)) / B`` (``exp(-eta x)`` lies below its chord on ``[0, B]``), and ``exp(-eta L_min) <=
W <= m exp(-c sum <p, l>)``.  Together, for every sequence fixed in advance and every outcome of
the experts' own draws::

    E[cost] <= (1 + eta D) * eta B / (1 - exp(-eta B)) * (min_i L_i + ln(m) / eta)

(:func:`follow_bound`).  With ``eta = rate / D`` and ``B`` about ``D`` the factor is about ``(1 +
rate) rate / (1 - exp(-rate))`` (1.91 at ``rate = 0.5``, 6.94 at 2) and the additive term
``O(D ln(m) / rate)`` does not depend on the sequence.

References
----------
A. Blum, C. Burch, "On-line learning and the metrical task system problem", Machine Learning 39
(2000) 35-58.  Y. Azar, A. Z. Broder, M. S. Manasse, "On-line choice of on-line algorithms",
SODA 1993.

Examples
--------
Two experts, the second always cheaper: the follower ends up on it and stays.

>>> f = LazyFollower(2, eta=1.0, coins=np.random.default_rng(0))
>>> for _ in range(20):
...     _ = f.update([1, 0])
>>> f.following, f.costs, round(float(f.weights()[1]), 6)
(1, [20, 0], 1.0)
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

__all__ = ["LazyFollower", "follow_bound"]


def follow_bound(costs: Sequence[float], eta: float, D: float, B: float) -> float:
    """The guarantee's right-hand side ``(1 + eta D) eta B / (1 - exp(-eta B)) (min_i L_i + ln(m) / eta)``
    at the experts' cumulative costs ``costs`` (module docstring); ``min costs`` for one expert or
    ``D = 0`` (nothing to switch).

    >>> round(follow_bound([10.0, 30.0], eta=0.5, D=1.0, B=2.0), 3)
    27.019
    """
    m = len(costs)
    if m == 1 or D == 0:
        return float(min(costs))
    factor = (1.0 + eta * D) * eta * B / -math.expm1(-eta * B)
    return factor * (min(costs) + math.log(m) / eta)


class LazyFollower:
    """Exponential weights over ``m`` experts' cumulative costs with lazy switching (module docstring).

    Parameters
    ----------
    m : int
        Number of experts (``>= 1``).
    eta : float
        The learning rate (``> 0``).
    coins : numpy.random.Generator
        The switching coins (the first expert followed is drawn from them too).
    costs : sequence of float, optional
        Costs the experts have already paid (default zeros): the first expert is drawn from
        ``p ~ exp(-eta costs)`` (uniformly, without a weight vector, when they are all equal).

    Attributes
    ----------
    costs : list
        Each expert's cumulative cost, updated in place (ints stay ints when the steps are ints).
    following : int
        The expert followed.
    switches : int
        Times ``following`` changed.
    """

    def __init__(self, m: int, eta: float, coins: np.random.Generator, costs: Sequence[float] | None = None):
        if m < 1:
            raise ValueError(f"m = {m!r}; expected at least one expert")
        self.eta = float(eta)
        self.coins = coins
        self.costs: list = [0] * m if costs is None else list(costs)
        self._p = self._weights()
        if len(set(self.costs)) <= 1:
            self.following = int(coins.choice(m)) if m > 1 else 0
        else:
            self.following = int(coins.choice(m, p=self._p))
        self.switches = 0

    def _weights(self) -> list[float]:
        # plain floats: m is 2 or 3, where numpy's per-call overhead would dominate
        low, eta = min(self.costs), self.eta
        z = [math.exp(-eta * (c - low)) for c in self.costs]
        total = sum(z)
        return [x / total for x in z]

    def weights(self) -> np.ndarray:
        """``p``: the probability of following each expert (``~ exp(-eta L_i)``)."""
        return np.asarray(self._p, dtype=float)

    def update(self, step_costs: Sequence[float]) -> bool:
        """Add each expert's cost of the step; keep or switch the followed expert.  True on a switch."""
        costs = self.costs
        for i, c in enumerate(step_costs):
            costs[i] += c
        if len(costs) == 1:
            return False
        new_p = self._weights()
        old_p = self._p
        self._p = new_p
        j = self.following
        if new_p[j] < old_p[j] and self.coins.random() >= new_p[j] / old_p[j]:
            gain = [max(0.0, a - b) for a, b in zip(new_p, old_p, strict=True)]
            g = sum(gain)
            if g > 0.0:
                self.following = int(self.coins.choice(len(gain), p=[x / g for x in gain]))
                self.switches += 1
                return True
        return False
