"""Baselines for paper 004 (ring partitioning): never migrate, best static arcs, greedy cut moving.

None of these comes from the paper; they are the yardsticks its algorithms are compared with.
Each implements :class:`clusteropt.algorithms.ring.state.RingAlgorithm` (``start``, ``serve``,
``costs``, ``augmentation``, ``get_params``) and migrates only through
:meth:`~clusteropt.algorithms.ring.state.RingAssignment.assign`, so ``verify/`` sees every move.

``NeverMigrate``
    Keeps the initial assignment (augmentation 1).  Its cost is the number of requests on
    initially cut edges.
``StaticBestArcs``
    **Offline**: looks at the whole request sequence in ``start``.  Of the ``k`` rotations of
    ``l`` equal arcs it takes the one minimising ``alpha * migrations + requests on its cut
    edges`` (arcs labelled to servers by maximum overlap with the initial assignment), migrates
    to it before the first request and never moves again (augmentation 1).  Contiguous arcs are
    not always the best static partition (docs/algorithms/ring-partitioning.md A5), so this is an upper bound on
    the static
    optimum, not the optimum (that is the ``ring-static-opt`` model).
``GreedyCut``
    Online and deterministic: contiguous arcs whose boundaries (cut edges) move to less
    requested edges nearby, with hysteresis (augmentation ``1 + epsilon``; the rule is in its
    docstring).

:func:`arc_rotations` is the shared piece: for every rotation of equal arcs, the labelling of
arcs to servers that keeps the most processes in place and the migrations it needs.
"""

from __future__ import annotations

import logging
import math
from typing import Any

import numpy as np

from clusteropt.algorithms.ring.state import RingAssignment

__all__ = ["GreedyCut", "NeverMigrate", "StaticBestArcs", "arc_rotations", "rotation_assignment"]

log = logging.getLogger(__name__)


def arc_rotations(initial, servers: int) -> tuple[np.ndarray, np.ndarray]:
    """Migrations and arc -> server labels of every rotation of ``servers`` equal arcs.

    Rotation ``s`` (``0 <= s < k``, ``k = n / servers``) splits the ring into the arcs
    ``s + j k .. s + (j + 1) k - 1`` (mod n), ``j = 0..l-1``; its cut edges are
    ``s - 1 + j k`` (mod n).  The arcs are labelled to servers by a maximum-weight matching of
    the overlap matrix ``O[j, c]`` = processes of arc ``j`` initially on server ``c``
    (:func:`scipy.optimize.linear_sum_assignment`), so the migrations to reach the rotation are
    exactly ``n - sum_j O[j, label_j]``, the fewest any labelling needs.  The overlap matrix is
    updated incrementally (``l`` entries per rotation), so the cost is ``O(n + k * LSA(l))``.

    Parameters
    ----------
    initial : int array (n,)
        Server of each process.
    servers : int
        ``l``; ``n`` must be a multiple of it.

    Returns
    -------
    migrations : int array (k,)
        Fewest migrations to reach rotation ``s`` from ``initial`` (one entry when ``l = 1``:
        a single arc holds everything and needs no migration).
    labels : int array (k, l)
        ``labels[s, j]``: the server of arc ``j`` of rotation ``s``.

    Examples
    --------
    >>> mig, lab = arc_rotations(np.array([1, 1, 0, 0, 0, 1]), 2)
    >>> mig.tolist(), lab.tolist()
    ([2, 2, 0], [[1, 0], [0, 1], [0, 1]])
    """
    init = np.asarray(initial, dtype=np.int64)
    n, ell = int(init.size), int(servers)
    if ell < 1 or n % ell:
        raise ValueError(f"servers = {servers}; expected a divisor of n = {n}")
    if ell == 1:
        return np.zeros(1, dtype=np.int64), np.zeros((1, 1), dtype=np.int64)
    k = n // ell
    overlap = np.bincount((np.arange(n) // k) * ell + init, minlength=ell * ell).reshape(ell, ell)
    migrations = np.empty(k, dtype=np.int64)
    labels = np.empty((k, ell), dtype=np.int64)
    arcs = np.arange(ell)
    from scipy.optimize import linear_sum_assignment  # here: scipy.optimize takes 0.3 s to import

    for s in range(k):
        rows, cols = linear_sum_assignment(overlap, maximize=True)
        labels[s, rows] = cols
        migrations[s] = n - int(overlap[rows, cols].sum())
        if s + 1 < k:
            # process s + j k leaves arc j and becomes the last process of arc j - 1
            col = init[s + arcs * k]
            overlap[arcs, col] -= 1
            overlap[(arcs - 1) % ell, col] += 1
    return migrations, labels


def rotation_assignment(n: int, servers: int, shift: int, labels) -> np.ndarray:
    """Server of each process under rotation ``shift`` with arc ``j`` on server ``labels[j]``.

    >>> rotation_assignment(6, 2, 1, [1, 0]).tolist()
    [0, 1, 1, 1, 0, 0]
    """
    k = n // servers
    arc = ((np.arange(n) - shift) % n) // k
    return np.asarray(labels, dtype=np.int64)[arc]


def _communication(state: RingAssignment, e: int) -> int:
    return int(state.server_of[e] != state.server_of[(e + 1) % state.n])


class _Stays:
    """``serve`` and ``serve_block`` of an algorithm that never moves after its start (``state_``, ``hits_``)."""

    state_: RingAssignment
    hits_: int

    def serve(self, e: int) -> None:
        """Pay for ``e`` when it is cut; never move."""
        self.hits_ += _communication(self.state_, e)

    def serve_block(self, start: int, requests) -> bool:
        """Serve ``requests`` (indices ``start, ...``) at once: count those on cut edges (numpy)."""
        state = self.state_
        requests = np.asarray(requests, dtype=np.int64)
        if requests.size == 0:
            return True
        state.now = start + requests.size - 1
        so = state.server_of
        self.hits_ += int(np.count_nonzero(so[requests] != so[(requests + 1) % state.n]))
        return True


class NeverMigrate(_Stays):
    """Never migrate: serve every request with the initial assignment.

    A lower yardstick for any algorithm that migrates: its cost is the number of requests on
    edges that are cut by the initial assignment, and its load is the initial load (``<= k``).

    Examples
    --------
    >>> from clusteropt.instances.ring import RingInstance
    >>> inst = RingInstance(n=4, servers=2, requests=[1, 1, 0, 3])   # cut edges: 1 and 3
    >>> algo = NeverMigrate()
    >>> algo.start(inst, np.random.default_rng(0))
    >>> for t, e in enumerate(inst.requests.tolist()):
    ...     algo.state_.now = t
    ...     algo.serve(e)
    >>> algo.costs()
    {'communication': 3.0, 'migration': 0.0}
    """

    name = "never"
    augmentation = 1.0

    def __init__(self):
        pass

    def get_params(self) -> dict[str, Any]:
        """No parameters."""
        return {}

    def start(self, instance, rng: np.random.Generator) -> None:
        """Keep ``instance.initial``."""
        self.state_ = RingAssignment(instance.initial, instance.servers)
        self.hits_ = 0


    def costs(self) -> dict[str, float]:
        """``communication`` (requests on cut edges) and ``migration`` (always 0)."""
        return {"communication": float(self.hits_), "migration": 0.0}


class StaticBestArcs(_Stays):
    """The best static contiguous equal arcs in hindsight (an **offline** baseline).

    ``start`` reads the whole request sequence of the instance (it is not an online
    algorithm).  For each of the ``k`` rotations ``s`` of ``l`` arcs of ``k`` processes
    (:func:`arc_rotations`) it computes ``alpha * migrations(s) + sum of r_e over the cut edges
    of s`` (``r_e`` = requests on edge ``e``), takes the smallest (ties: the smallest ``s``),
    migrates to it before the first request (request index -1) and never moves again.  With one
    server nothing is cut and nothing moves.

    Augmentation 1: every server holds exactly ``k`` processes.  The value is an upper bound on
    the static optimum with arbitrary (not necessarily contiguous, not necessarily one per server)
    parts, which the ``ring-static-opt`` model computes.

    Attributes
    ----------
    shift_ : int
        The chosen rotation ``s``.
    labels_ : int array (l,)
        Server of arc ``j``.
    planned_ : float
        The chosen rotation's cost ``alpha * migrations + communication`` (what the run must pay).

    Examples
    --------
    >>> from clusteropt.instances.ring import RingInstance
    >>> inst = RingInstance(n=6, servers=2, requests=[2, 2, 2, 5, 5, 0])   # initial cuts: 2 and 5
    >>> algo = StaticBestArcs()
    >>> algo.start(inst, np.random.default_rng(0))
    >>> algo.shift_, algo.planned_, algo.state_.server_of.tolist()   # cuts 1 and 4: 2 migrations, 0 hits
    (2, 2.0, [0, 0, 1, 1, 1, 0])
    """

    name = "static-best"
    augmentation = 1.0
    #: Reads the whole sequence in ``start``: no adaptive ("hit the cut") sequence can be built against it.
    offline = True

    def __init__(self):
        pass

    def get_params(self) -> dict[str, Any]:
        """No parameters."""
        return {}

    def start(self, instance, rng: np.random.Generator) -> None:
        """Choose the rotation from the whole sequence and migrate to it (index -1)."""
        n, ell = instance.n, instance.servers
        self.state_ = RingAssignment(instance.initial, ell)
        self.alpha_ = float(instance.alpha)
        self.hits_ = 0
        migrations, labels = arc_rotations(instance.initial, ell)
        if ell == 1:
            self.shift_, self.labels_, self.planned_ = 0, labels[0], 0.0
            return
        r_before = np.roll(instance.request_counts(), 1)  # r_before[s] = r[s - 1], the cut edge before s
        cut = r_before.reshape(ell, n // ell).sum(axis=0)
        total = instance.alpha * migrations + cut
        s = int(np.argmin(total))
        self.shift_, self.labels_, self.planned_ = s, labels[s], float(total[s])
        self.state_.assign(np.arange(n), rotation_assignment(n, ell, s, labels[s]))
        log.debug("static-best: rotation %d of %d, %d migrations, cost %.6g", s, n // ell,
                  int(migrations[s]), total[s])


    def costs(self) -> dict[str, float]:
        """``communication`` and ``migration`` (``alpha`` times the processes moved at the start)."""
        return {"communication": float(self.hits_), "migration": self.alpha_ * float(self.state_.moved),
                "planned": self.planned_}


class GreedyCut:
    """Online greedy: contiguous arcs whose boundaries move to less requested edges nearby.

    State: one contiguous arc per server, delimited by ``l`` cut edges.  If the initial
    assignment is not of that shape, ``start`` first migrates (at request index -1) to the
    rotation of equal arcs that needs the fewest migrations (:func:`arc_rotations`; the requests
    are not looked at).  Every request on edge ``e`` adds 1 to an exponentially decayed count
    ``w_e`` (half-life ``half_life`` requests; older requests weigh ``2^(-age / half_life)``).

    **Rule.**  When a request hits a cut edge ``c`` (after counting it), the greedy considers the
    edges ``c + d`` with ``0 < |d| <= radius`` whose move keeps both neighbouring arcs within
    ``1 .. floor((1 + epsilon) k)`` processes; moving there migrates ``|d|`` processes.  It
    takes the candidate minimising ``w_{c+d} + h alpha |d|`` (``h`` = ``hysteresis``; ties: the
    nearest) and moves the cut there only if that is strictly smaller than ``w_c``, i.e. only if
    the edge's count is lower by more than the (``h``-weighted) migration cost ``h alpha |d|``: a
    cut does not move for a small difference, nor to an edge it would pay more to reach than it
    saves.  Requests on uncut edges only update ``w``.

    This is a heuristic without a guarantee.  On sequences with no structure (``uniform``) the
    noise of the counts makes it move for nothing (a larger ``hysteresis`` or ``half_life``
    damps that); on a fixed or slowly moving hot arc it finds cheap cuts nearby.

    Per request ``O(1)``; per hit on a cut ``O(radius)`` (one numpy slice) plus the migrations.
    Deterministic (the ``rng`` is not used).

    Parameters
    ----------
    epsilon : float
        Load slack: an arc may grow to ``floor((1 + epsilon) k)`` processes
        (``augmentation = 1 + epsilon``).  Default 0.5.
    radius : int, optional
        How far (in edges) a cut may move at once; default ``max(1, round(epsilon * k / 2))``.
    half_life : float, optional
        Half-life of the request counts in requests; default ``10 n``.
    hysteresis : float
        ``h >= 0``, the weight of the migration cost in the rule (default 1: savings must exceed
        the migration cost itself).

    Examples
    --------
    >>> from clusteropt.instances.ring import RingInstance
    >>> inst = RingInstance(n=8, servers=2, requests=[3, 3, 3, 3])   # cuts at edges 3 and 7
    >>> algo = GreedyCut(epsilon=0.5)
    >>> algo.start(inst, np.random.default_rng(0))
    >>> for t, e in enumerate(inst.requests.tolist()):
    ...     algo.state_.now = t
    ...     algo.serve(e)
    >>> algo.cuts_.tolist(), algo.state_.migrations().tolist()   # moved after the 2nd hit: 2 > 1
    ([2, 7], [[1, 3, 1]])
    """

    name = "greedy"

    def __init__(self, epsilon: float = 0.5, radius: int | None = None, half_life: float | None = None,
                 hysteresis: float = 1.0):
        self.epsilon = epsilon
        self.radius = radius
        self.half_life = half_life
        self.hysteresis = hysteresis

    @property
    def augmentation(self) -> float:
        """``1 + epsilon``."""
        return 1.0 + float(self.epsilon)

    def get_params(self) -> dict[str, Any]:
        """``epsilon``, ``radius``, ``half_life`` and ``hysteresis`` as given (None: the defaults above)."""
        return {"epsilon": self.epsilon, "radius": self.radius, "half_life": self.half_life,
                "hysteresis": self.hysteresis}

    def _check_params(self, n: int, k: int) -> tuple[int, float]:
        eps = self.epsilon
        if isinstance(eps, bool) or not isinstance(eps, int | float) or not math.isfinite(eps) or eps < 0:
            raise ValueError(f"epsilon = {eps!r}; expected a finite number >= 0")
        radius = max(1, round(eps * k / 2)) if self.radius is None else self.radius
        if isinstance(radius, bool) or not isinstance(radius, int | np.integer) or radius < 1:
            raise ValueError(f"radius = {self.radius!r}; expected an integer >= 1")
        half_life = 10.0 * n if self.half_life is None else self.half_life
        if (isinstance(half_life, bool) or not isinstance(half_life, int | float)
                or not math.isfinite(half_life) or half_life <= 0):
            raise ValueError(f"half_life = {self.half_life!r}; expected a finite number > 0")
        h = self.hysteresis
        if isinstance(h, bool) or not isinstance(h, int | float) or not math.isfinite(h) or h < 0:
            raise ValueError(f"hysteresis = {h!r}; expected a finite number >= 0")
        return int(radius), float(half_life)

    def start(self, instance, rng: np.random.Generator) -> None:
        """Reach contiguous arcs (index -1) if needed; set up cuts, arc lengths and counts."""
        n, ell = instance.n, instance.servers
        k = n // ell
        self.radius_, self.half_life_ = self._check_params(n, k)
        self.cap_ = math.floor(self.augmentation * k)  # the very bound c * k that verify/ checks
        self.alpha_ = float(instance.alpha)
        self.state_ = state = RingAssignment(instance.initial, ell)
        self.weight_ = np.zeros(n)
        self.inc_ = 1.0
        self.grow_ = 2.0 ** (1.0 / self.half_life_)
        self.hits_ = 0
        self.moves_ = 0
        self.cut_at_ = np.full(n, -1, dtype=np.int64)
        if ell == 1:
            self.cuts_ = np.zeros(0, dtype=np.int64)
            self.arc_server_ = self.length_ = np.zeros(0, dtype=np.int64)
            return
        so = state.server_of
        cuts = np.flatnonzero(so != np.roll(so, -1))
        if cuts.size != ell:  # not one arc per server: go to the nearest rotation of equal arcs
            migrations, labels = arc_rotations(so, ell)
            s = int(np.argmin(migrations))
            state.assign(np.arange(n), rotation_assignment(n, ell, s, labels[s]))
            cuts = np.flatnonzero(so != np.roll(so, -1))
            log.debug("greedy: initial assignment is not contiguous; %d migrations to rotation %d",
                      int(migrations[s]), s)
        self.cuts_ = cuts.astype(np.int64)
        self.arc_server_ = so[cuts].astype(np.int64)  # arc j ends at cut j
        self.length_ = (cuts - np.roll(cuts, 1)) % n
        self.length_[self.length_ == 0] = n  # cannot happen for l >= 2; kept for safety
        self.cut_at_[cuts] = np.arange(ell)

    def serve(self, e: int) -> None:
        """Count the request; on a cut edge apply the rule of the class docstring."""
        self.inc_ *= self.grow_
        if self.inc_ > 1e200:  # renormalise the lazily decayed counts
            self.weight_ /= self.inc_
            self.inc_ = 1.0
        self.weight_[e] += self.inc_
        j = int(self.cut_at_[e])
        if j < 0:
            return
        self.hits_ += 1
        self._consider(j, e)

    def _consider(self, j: int, c: int) -> None:
        ell = self.cuts_.size
        right = (j + 1) % ell
        len_left, len_right = int(self.length_[j]), int(self.length_[right])
        lo = max(-self.radius_, 1 - len_left, len_right - self.cap_)
        hi = min(self.radius_, len_right - 1, self.cap_ - len_left)
        if lo > hi or (lo == 0 and hi == 0):
            return
        n = self.state_.n
        d = np.arange(lo, hi + 1)
        key = self.weight_[(c + d) % n] + (self.hysteresis * self.alpha_ * self.inc_) * np.abs(d)
        best = key.min()
        here = self.weight_[c]
        if not best < here:
            return
        ties = np.flatnonzero(key == best)
        step = int(d[ties[np.argmin(np.abs(d[ties]))]])
        if step == 1:  # the common case, without array overhead
            self.state_.assign_one((c + 1) % n, int(self.arc_server_[j]))
        elif step == -1:
            self.state_.assign_one(c, int(self.arc_server_[right]))
        elif step > 0:  # the right arc's first `step` processes join the left arc
            self.state_.assign((c + 1 + np.arange(step)) % n, self.arc_server_[j])
        else:  # the left arc's last `-step` processes join the right arc
            self.state_.assign((c + step + 1 + np.arange(-step)) % n, self.arc_server_[right])
        new = (c + step) % n
        self.cut_at_[c] = -1
        self.cut_at_[new] = j
        self.cuts_[j] = new
        self.length_[j] += step
        self.length_[right] -= step
        self.moves_ += 1

    def costs(self) -> dict[str, float]:
        """``communication`` (hits on cuts), ``migration`` (``alpha`` x processes moved), ``moves`` of cuts."""
        return {"communication": float(self.hits_), "migration": self.alpha_ * float(self.state_.moved),
                "moves": float(self.moves_)}
