"""Follow the cheapest of whole ring policies run side by side (ours, not in paper 004).

Why.  No single policy is best on every demand (docs/papers/004-ring.md, "Which policy"): never
migrating is hard to beat on stationary random demand, the greedy cut mover on a slowly moving
hot spot, while only the paper's randomized algorithm (and ``dynamic-mix``) keeps a guarantee
against every sequence, and pays for it on benign demand.  :class:`FollowRing` runs several
ring policies (the *experts*, default ``dynamic-mix``, ``greedy`` and ``never``) on the same
requests without migrating for them, and keeps its own placement equal to the placement of one
of them, chosen by exponential weights of their costs with lazy switching
(:class:`~clusteropt.algorithms.ring.experts.LazyFollower`, the rule ``dynamic-mix`` uses inside
each interval, lifted to the ring).

Algorithm.  Expert ``i``'s step cost is what it pays for the request (1 when the edge is cut in
its placement) plus ``alpha`` times the processes it migrates after it (its net migrations of
the step); its start-up migrations (index -1) are its first cost.  Before each request the
placement is ``sigma(P_J)``, the followed expert's placement with its server labels permuted by
``sigma``; the request is paid under it; then every expert serves the request, the weights and
the followed expert are updated, and the placement is moved to ``sigma(P_J)`` (``J``'s own
migrations when ``J`` is kept).  On a switch to ``j``, ``sigma`` is re-chosen to keep the most
processes in place (a maximum-overlap matching of the ``l`` labels,
:func:`scipy.optimize.linear_sum_assignment`): server labels carry no cost, so any permutation
of an expert's placement is as good a placement.  The learning rate is ``eta = rate / D`` for
a scale ``D`` of the costs:

``scale="diameter"``
    ``D = alpha n``, the most a switch or (less one) a step can cost: the textbook combination.
``scale="adaptive"`` (the default)
    ``D`` starts at ``alpha k`` (one server's worth) and grows with what is observed (the doubling
    trick): when an expert's step costs more than ``1 + D`` or a switch more than ``D``, a new
    *phase* starts with ``D`` at least doubled and the weights restarted from the prior ``pi``
    (``1 - delta`` on the followed expert, ``delta = min(1/2, D / (alpha n))`` shared by the others;
    the followed expert is re-drawn from ``pi``).  Cost differences between experts are usually
    far below ``alpha n`` (two placements that differ in a few cuts), so the diameter's rate
    learns ``n / k`` times slower than it needs to: measured by ``python -m benchmarks.ring_follow``.

Guarantee (the bound of :mod:`~clusteropt.algorithms.ring.experts`, with its constants).
Following ``J`` costs exactly ``J``'s step cost (its placement serves the request, and its
migrations are ``J``'s, relabelled), and a step costs an expert at most ``1 + alpha n`` (one
request, at most ``n`` net migrations), a switch at most ``alpha n``.  With the diameter's scale,
for every sequence fixed in advance and every outcome of the experts' draws, in expectation
over the switching coins,

    ``E[cost] <= F (min_i C_i + ln(m) / eta)``,  ``F = (1 + eta D) eta B / (1 - exp(-eta B))``,

``B = 1 + D``, ``C_i`` expert ``i``'s cost.  With the adaptive scale the same holds phase by phase
(in a phase no step costs more than ``B`` nor a switch more than ``D``; the prior adds
``ln(1 / pi_min) / eta`` in place of ``ln(m) / eta``): summed over the phases (``sum_phases min_i
<= min_i sum_phases``), ``E[cost] <= F_0 min_i C_i + A`` with ``F_0`` the factor at the first scale
and ``A`` the sum over phases of ``F ln(1 / pi_min) / eta + delta alpha n`` (the re-draw) plus ``1 +
2 alpha n`` for each step that ends a phase and the largest start-up cost (the follower pays its
expert's start-up, which may exceed ``1 + D``); the scales at least double, so there are at most
``log2(n / k) + 1`` phases and ``A = O(alpha n (ln(m alpha n) / rate + log n))``, independent of
the sequence (:meth:`FollowRing.bound` evaluates both forms).  ``F`` is about ``(1 + rate) rate /
(1 - exp(-rate))`` when ``D >> 1``: 1.41 at ``rate = 0.25``, 1.91 at 0.5, 3.16 at 1.  Taking
expectations over the experts (``E min <= min E``), ``follow`` is within that factor of each
expert's expected cost plus a constant: with ``dynamic-mix`` among the experts it keeps Theorem
2.1's ``O(log^3 n)`` against an oblivious adversary, and with ``never`` and ``greedy`` it pays at
most the factor times the better of them plus the constant.  Its load bound is the largest of
the experts' (``2 + epsilon`` with the defaults: ``c`` of ``dynamic-mix``), reported as its
``augmentation``.

References
----------
A. Blum, C. Burch, "On-line learning and the metrical task system problem", Machine Learning 39
(2000) 35-58.  Räcke, Schmid, Zabrodin, SPAA 2023, Thm 2.1 (the guarantee kept).

Examples
--------
On a sequence that only ever requests edges the initial placement does not cut, ``never`` pays
nothing; ``follow`` ends up following it (here from the first request: ``dynamic-mix`` and
``greedy`` start by migrating).

>>> from clusteropt.instances.ring import RingInstance
>>> inst = RingInstance(n=8, servers=2, requests=[0, 1, 2, 4, 5, 6] * 50)
>>> algo = FollowRing()
>>> algo.start(inst, np.random.default_rng(0))
>>> for t, e in enumerate(inst.requests.tolist()):
...     algo.state_.now = t
...     algo.serve(e)
>>> algo.following_, algo.costs()["communication"], algo.expert_costs_["never"]
('never', 0.0, 0.0)
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from clusteropt.algorithms.ring.experts import LazyFollower, follow_bound
from clusteropt.algorithms.ring.mts.line import check_alpha
from clusteropt.algorithms.ring.mts.mix import check_rate
from clusteropt.algorithms.ring.state import RingAssignment

__all__ = ["DEFAULT_EXPERTS", "DEFAULT_FOLLOW_RATE", "SCALES", "FollowRing"]

log = logging.getLogger(__name__)

#: The experts of ``follow``: the package's guaranteed policy and the two baselines that win on
#: benign demand.
DEFAULT_EXPERTS = ("dynamic-mix", "greedy", "never")
#: ``eta = rate / D``.  ``python -m benchmarks.ring_follow`` (``benchmarks/results/ring_follow.md``)
#: measured rates 0.25-2: rate 1 is a little cheaper on average over the random instances (1.50 x
#: the better baseline against 1.59 at 0.5) with a larger guarantee factor (3.16 against 1.91);
#: 0.5 is kept for the smaller factor.
DEFAULT_FOLLOW_RATE = 0.5
#: The cost scales ``D`` of the learning rate (module docstring).
SCALES = ("adaptive", "diameter")


class FollowRing:
    """Follow one of several ring policies run side by side (module docstring).

    Parameters
    ----------
    experts : sequence of str
        Ring policy names (``clusteropt.online.ring.POLICIES``, online ones: not ``static-best``,
        not ``follow``); default :data:`DEFAULT_EXPERTS`.  Each runs with its own defaults.
    rate : float
        ``rate > 0``: the learning rate is ``eta = rate / D`` for the cost scale ``D`` (default
        :data:`DEFAULT_FOLLOW_RATE`).  Smaller rates give a factor nearer 1 and a larger additive term.
    epsilon : float, optional
        Passed to every expert that takes an ``epsilon`` (their load slack); default: their own.
    scale : {"adaptive", "diameter"}
        The scale ``D`` of ``eta = rate / D`` (module docstring); default ``"adaptive"``.

    Attributes
    ----------
    experts_ : list
        The experts' algorithms (each serves every request on its own simulated placement).
    scale_ : float
        The current scale ``D``.
    phases_ : int
        Phases so far (1 with ``scale="diameter"``).
    augmentation : float
        The largest of the experts' (set by :meth:`start`).

    The properties :attr:`following_`, :attr:`switches_` and :attr:`expert_costs_` say which expert
    is followed, how often it changed, and what each expert has paid.
    """

    name = "follow"

    def __init__(self, experts: Sequence[str] = DEFAULT_EXPERTS, *, rate: float = DEFAULT_FOLLOW_RATE,
                 epsilon: float | None = None, scale: str = "adaptive"):
        self.experts = experts
        self.rate = rate
        self.epsilon = epsilon
        self.scale = scale
        self.augmentation = float("nan")

    def get_params(self) -> dict[str, Any]:
        """``experts``, ``rate``, ``epsilon`` (None: each expert's own) and ``scale``."""
        return {"experts": list(self.experts), "rate": self.rate, "epsilon": self.epsilon, "scale": self.scale}

    def _make_experts(self) -> list:
        from clusteropt.online.ring import POLICIES, make_policy

        names = self.experts
        if isinstance(names, str) or not isinstance(names, Sequence) or len(names) == 0:
            raise ValueError(f"experts = {names!r}; expected a non-empty sequence of ring policy names")
        out = []
        for i, name in enumerate(names):
            if name in ("follow", "static-best") or name not in POLICIES:
                online = sorted(p for p in POLICIES if p not in ("follow", "static-best"))
                raise ValueError(f"experts[{i}] = {name!r}; expected an online ring policy: {', '.join(online)}")
            algo = make_policy(name).algorithm
            if self.epsilon is not None and hasattr(algo, "epsilon"):
                algo = make_policy(name, epsilon=self.epsilon).algorithm
            out.append(algo)
        if len(set(names)) != len(names):
            raise ValueError(f"experts = {tuple(names)!r}; expected each policy once")
        return out

    def start(self, instance, rng: np.random.Generator) -> None:
        """Start every expert on its own stream of ``rng`` and follow one of them.

        The streams are ``rng.spawn(m + 1)``: expert ``i`` draws from stream ``i``, the switching
        coins from stream ``m``.
        """
        rate = check_rate(self.rate)
        if self.scale not in SCALES:
            raise ValueError(f"scale = {self.scale!r}; expected one of {', '.join(SCALES)}")
        self.alpha_ = check_alpha(instance.alpha)
        self.experts_ = self._make_experts()
        streams = np.random.default_rng(rng).spawn(len(self.experts_) + 1)
        first = []
        for algo, stream in zip(self.experts_, streams[:-1], strict=True):
            algo.start(instance, stream)
            first.append(self.alpha_ * algo.state_.moved)  # start-up migrations (index -1)
        self.augmentation = max(float(a.augmentation) for a in self.experts_)
        self.n_, self.servers_ = instance.n, instance.servers
        self.diameter_ = self.alpha_ * instance.n
        self._coins = streams[-1]
        self._costs = list(first)  # each expert's true cost (the follower's restart from a prior)
        self.scale_ = self.diameter_ if self.scale == "diameter" else self.alpha_ * instance.k
        self.scale_ = max(self.scale_, 1.0) if self.diameter_ > 0 else 0.0
        self.eta_ = rate / self.scale_ if self.scale_ > 0 else rate
        self.first_factor_ = self._factor()
        self._follow = LazyFollower(len(self.experts_), self.eta_, self._coins, costs=first)
        self.phases_ = 1
        self._switches = 0
        # the adaptive bound's additive terms: the start-up (an expert's start may exceed 1 + D) and
        # those of the phases ended so far; ln(1 / pi_min) of the current phase's prior
        self._extra = max(first) if self.scale == "adaptive" else 0.0
        self._prior_log = math.log(len(self.experts_))
        self.state_ = RingAssignment(instance.initial, instance.servers)
        self.hits_ = 0
        self.switch_moves_ = 0
        self._relabel()
        self._sync(switched=True)

    @property
    def following_(self) -> str:
        """The name of the expert whose placement is held."""
        return str(self.experts[self._follow.following])

    @property
    def switches_(self) -> int:
        """Times the followed expert changed."""
        return self._switches + self._follow.switches

    @property
    def expert_costs_(self) -> dict[str, float]:
        """Each expert's cost so far."""
        return {str(name): float(c) for name, c in zip(self.experts, self._costs, strict=True)}

    def _factor(self) -> float:
        """``F = (1 + eta D) eta B / (1 - exp(-eta B))`` at the current scale (``B = 1 + D``)."""
        if len(self.experts) == 1 or self.scale_ == 0:
            return 1.0
        eta, D = self.eta_, self.scale_
        return (1.0 + eta * D) * eta * (1.0 + D) / -math.expm1(-eta * (1.0 + D))

    def _restart(self, observed: float, placements: np.ndarray | None = None) -> None:
        """End the phase: scale at least doubled (and at least ``observed``), weights from the prior."""
        m = len(self.experts_)
        top = self.diameter_
        # the ended phase's additive terms (module docstring), before the scale changes
        self._extra += self._factor() * self._prior_log / self.eta_ + 1.0 + 2.0 * top
        self.scale_ = min(top, max(2.0 * self.scale_, observed))
        self.eta_ = check_rate(self.rate) / self.scale_
        delta = min(0.5, self.scale_ / top)
        self._prior_log = math.log((m - 1) / delta) if m > 1 else 0.0
        j = self._follow.following
        self._switches += self._follow.switches
        if m > 1:
            prior = [1.0 - delta if i == j else delta / (m - 1) for i in range(m)]
            self._follow = LazyFollower(m, self.eta_, self._coins, costs=[-math.log(p) / self.eta_ for p in prior])
            self._extra += delta * top  # the re-draw from the prior
            if self._follow.following != j:
                self._switches += 1
                self._relabel(placements)
                self._sync(switched=True, placements=placements)
        self.phases_ += 1

    def _relabel(self, placements: np.ndarray | None = None) -> None:
        """``sigma``: the permutation of the followed expert's labels keeping the most processes.

        ``placements[i]`` is expert ``i``'s placement (default: each expert's current one).
        """
        j = self._follow.following
        target = self.experts_[j].state_.server_of if placements is None else placements[j]
        ns = self.servers_
        overlap = np.zeros((ns, ns), dtype=np.int64)
        np.add.at(overlap, (target, self.state_.server_of), 1)  # [expert label, own label]
        from scipy.optimize import linear_sum_assignment  # here: scipy.optimize takes 0.3 s to import

        rows, cols = linear_sum_assignment(overlap, maximize=True)
        sigma = np.empty(ns, dtype=np.int64)
        sigma[rows] = cols
        self._sigma = sigma

    def _sync(self, *, switched: bool, placements: np.ndarray | None = None) -> int:
        """Move the placement to ``sigma(P_J)``; return the processes moved (``placements``: :meth:`_relabel`)."""
        j = self._follow.following
        want = self._sigma[self.experts_[j].state_.server_of if placements is None else placements[j]]
        diff = np.flatnonzero(self.state_.server_of != want)
        if not diff.size:
            return 0
        self.state_.assign(diff, want[diff], reason="switch" if switched else "follow")
        if switched:
            self.switch_moves_ += int(diff.size)
        return int(diff.size)

    def serve(self, e: int) -> None:
        """Pay for ``e`` under the held placement; let every expert serve it; follow the chosen one."""
        state = self.state_
        if state.server_of[e] != state.server_of[(e + 1) % self.n_]:
            self.hits_ += 1
        now, alpha = state.now, self.alpha_
        step = []
        moved_j = 0
        j = self._follow.following
        for i, algo in enumerate(self.experts_):
            s = algo.state_
            s.now = now
            hit = int(s.server_of[e] != s.server_of[(e + 1) % self.n_])
            before = s.moved
            algo.serve(e)
            delta = s.moved - before
            if i == j:
                moved_j = delta
            step.append(hit + alpha * delta if delta else hit)
        costs = self._costs
        for i, c in enumerate(step):
            costs[i] += c
        switch_cost = 0.0
        if self._follow.update(step):
            self._relabel()
            switch_cost = alpha * self._sync(switched=True)
        elif moved_j:
            self._sync(switched=False)
        if self.scale == "adaptive" and self.scale_ < self.diameter_:
            big = max(max(step) - 1.0, switch_cost)
            if big > self.scale_:
                self._restart(big)

    def serve_block(self, start: int, requests) -> bool:
        """Serve ``requests`` (indices ``start, start + 1, ...``) on the compiled path; False if it does not apply.

        The same as setting ``state_.now`` and calling :meth:`serve` for each request, bit for
        bit.  The experts are independent of the follower, so each serves the whole block first
        (on its own compiled path where it has one) and its migrations are logged; then a compiled
        loop (:mod:`~clusteropt.algorithms.ring.compiled`) replays them, pays the requests, updates
        the weights and follows the chosen expert, and hands each switch and each growth of the
        scale back to :meth:`_relabel`, :meth:`_sync` and :meth:`_restart`.  Returns False, having
        done nothing, when :func:`~clusteropt.algorithms.ring.compiled.use_compiled` says no or in
        the middle of a step.
        """
        from clusteropt.algorithms.ring import compiled
        from clusteropt.algorithms.ring.state import serve_requests

        requests = np.asarray(requests, dtype=np.int64)
        if not compiled.use_compiled(requests.size):
            return False
        state = self.state_
        if requests.size == 0:
            return True
        state.now = start
        for algo in self.experts_:
            algo.state_.now = start  # what serve does first for each expert
        if state.pending or any(algo.state_.pending for algo in self.experts_):
            return False
        marks = [algo.state_.log_mark() for algo in self.experts_]
        before = np.stack([algo.state_.server_of for algo in self.experts_])
        for algo in self.experts_:
            serve_requests(algo, start, requests)
        logs = [algo.state_.rows_since(mark) for algo, mark in zip(self.experts_, marks, strict=True)]
        compiled.follow_block(self, requests, int(start), before, logs)
        return True

    def bound(self) -> float:
        """The guarantee's right-hand side at the experts' costs so far (module docstring): with the
        diameter's scale ``F (min_i C_i + ln(m) / eta)``, with the adaptive one ``F_0 min_i C_i + A``.
        """
        if self.scale == "diameter":
            return follow_bound(self._costs, self.eta_, self.diameter_, 1.0 + self.diameter_)
        if len(self.experts_) == 1:
            return float(self._costs[0])
        return self.first_factor_ * min(self._costs) + self._extra + self._factor() * self._prior_log / self.eta_

    def costs(self) -> dict[str, float]:
        """``communication``, ``migration``, ``switch_migration`` (moves on switching),
        ``switches``, and each expert's cost as ``expert_<name>``.
        """
        out = {"communication": float(self.hits_), "migration": self.alpha_ * float(self.state_.moved),
               "switch_migration": self.alpha_ * float(self.switch_moves_), "switches": float(self.switches_),
               "phases": float(self.phases_), "scale": float(self.scale_)}
        out.update({f"expert_{name}": c for name, c in self.expert_costs_.items()})
        return out
