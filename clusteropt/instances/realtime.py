"""Real-time jobs on unreliable workers (paper 002, Hsu, Huang, Shieh), as data.

A master runs N applications A_1..A_N and has M specialized workers W_1..W_M (Sec. II-A).  At the
start of every frame t each application generates a job ``J_i(t) = (J_{i,1}(t), ..., J_{i,M}(t))``,
``J_{i,j}(t) = 1`` when the job has a task for worker j (an all-zero row: no job).  The job
*pattern* ``(J_1(t), ..., J_N(t))`` is i.i.d. over frames.  Two jobs needing the same worker
*interfere*; the master runs a set of interference-free jobs, one task per worker.  A task of
application i on worker j completes within the frame with probability ``P_{i,j}``, independently;
a job completes only when all its tasks do (deadline: one frame).  A requirement ``r`` asks for
application i's long-run average number of completed jobs per frame to be at least ``r_i`` (Eq. (1)).

Two ways to give the pattern distribution:

* ``generation`` (N x M): tasks independent, ``P[J_{i,j}(t) = 1] = generation[i, j]``: the paper's
  simulation setting (Sec. IV);
* ``patterns`` (K x N x M, 0/1) with ``pattern_prob`` (K,): an explicit distribution over job
  patterns, for correlated workloads (and for the deterministic pattern of the paper's Fig. 1).
"""

from __future__ import annotations

import dataclasses
import itertools
import math

import numpy as np

from clusteropt.instances.base import Instance, InstanceError, check_string, shown

__all__ = ["MAX_STATES", "PRESETS", "RealtimeInstance", "random_realtime", "realtime_preset"]

#: Largest number of job-pattern states :meth:`RealtimeInstance.states` enumerates.
MAX_STATES = 1 << 16


@dataclasses.dataclass(frozen=True, eq=False)
class RealtimeInstance(Instance):
    """N applications, M unreliable workers, and how jobs are generated (paper 002, Sec. II).

    Parameters
    ----------
    success : array (N, M)
        ``P_{i,j}`` in [0, 1]: the probability that a task of application i on worker j completes
        within its frame.
    generation : array (N, M), optional
        ``P[J_{i,j}(t) = 1]`` in [0, 1], tasks drawn independently.  Give this or ``patterns``.
    patterns : 0/1 array (K, N, M), optional
        Explicit job patterns; pattern k occurs with probability ``pattern_prob[k]``.
    pattern_prob : array (K,), optional
        Non-negative, summing to 1 (within 1e-9).
    requirement : array (N,), optional
        ``r_i >= 0``; default all zero.  Policies run their virtual queues against it.
    name : str
        A label (presets set it).

    Examples
    --------
    >>> inst = realtime_preset("paper")        # the paper's Fig. 1 / Example 6
    >>> inst.n_apps, inst.n_workers, inst.requirement.tolist()
    (2, 4, [0.48, 0.5])
    >>> masks, prob = inst.states()
    >>> masks.shape, prob.tolist()
    ((1, 2, 4), [1.0])
    """

    kind = "realtime"

    success: np.ndarray
    generation: np.ndarray | None = None
    patterns: np.ndarray | None = None
    pattern_prob: np.ndarray | None = None
    requirement: np.ndarray | None = None
    name: str = ""

    def validate(self) -> None:
        """Check shapes, probabilities, the pattern distribution and the requirement."""
        p = self._array("success", ndim=2)
        n, m = p.shape
        if n < 1 or m < 1:
            raise InstanceError("success.shape", p.shape, "at least one application and one worker")
        self._check("success", p, (p >= 0) & (p <= 1), "a probability in [0, 1]")
        if (self.generation is None) == (self.patterns is None):
            raise InstanceError("generation", shown(self.generation),
                                "exactly one of generation (independent tasks) and patterns")
        if self.generation is not None:
            g = self._array("generation", ndim=2, shape=(n, m))
            self._check("generation", g, (g >= 0) & (g <= 1), "a probability in [0, 1]")
            if self.pattern_prob is not None:
                raise InstanceError("pattern_prob", shown(self.pattern_prob), "None when generation is given")
        else:
            pat = self._array("patterns", dtype=np.int64, ndim=3)
            if pat.shape[1:] != (n, m):
                raise InstanceError("patterns.shape", pat.shape, f"(K, {n}, {m}) like success")
            if pat.shape[0] < 1:
                raise InstanceError("patterns.shape[0]", 0, ">= 1 pattern")
            self._check("patterns", pat, (pat == 0) | (pat == 1), "0 or 1")
            if self.pattern_prob is None:
                raise InstanceError("pattern_prob", None, "one probability per pattern")
            q = self._array("pattern_prob", ndim=1, shape=(pat.shape[0],))
            self._check("pattern_prob", q, q >= 0, ">= 0")
            if abs(float(q.sum()) - 1.0) > 1e-9:
                raise InstanceError("sum(pattern_prob)", float(q.sum()), "1 (within 1e-9)")
        if self.requirement is None:
            zeros = np.zeros(n)
            zeros.setflags(write=False)
            object.__setattr__(self, "requirement", zeros)
        r = self._array("requirement", ndim=1, shape=(n,))
        self._check("requirement", r, r >= 0, ">= 0 (completed jobs per frame)")
        check_string("name", self.name)

    # -- sizes and derived numbers ---------------------------------------------------------
    @property
    def n_apps(self) -> int:
        """N, the number of applications."""
        return int(self.success.shape[0])

    @property
    def n_workers(self) -> int:
        """M, the number of workers."""
        return int(self.success.shape[1])

    def with_requirement(self, requirement) -> RealtimeInstance:
        """A copy with requirement ``r`` replaced (validated)."""
        return dataclasses.replace(self, requirement=np.asarray(requirement, dtype=float))

    def completion_probability(self, jobs) -> np.ndarray:
        """``1{|J_i| != 0} * prod_{j: J_ij = 1} P_ij`` for jobs of shape (..., N, M): the factor of Eq. (2).

        >>> inst = realtime_preset("paper")
        >>> inst.completion_probability(inst.patterns[0]).round(4).tolist()
        [0.64, 0.729]
        """
        jobs = np.asarray(jobs, dtype=bool)
        prod = np.where(jobs, self.success, 1.0).prod(axis=-1)
        return np.where(jobs.any(axis=-1), prod, 0.0)

    def job_probability(self) -> np.ndarray:
        """``P[|J_i(t)| != 0]`` per application (N,)."""
        if self.generation is not None:
            return 1.0 - np.prod(1.0 - self.generation, axis=1)
        assert self.patterns is not None and self.pattern_prob is not None  # validate(): set without generation
        return (self.pattern_prob[:, None] * self.patterns.any(axis=2)).sum(axis=0)

    # -- randomness -------------------------------------------------------------------------
    def sample_jobs(self, frames: int, rng) -> np.ndarray:
        """Job patterns of ``frames`` frames, bool (frames, N, M), drawn from ``rng``."""
        rng = np.random.default_rng(rng)
        if self.generation is not None:
            return rng.random((frames, self.n_apps, self.n_workers)) < self.generation
        assert self.patterns is not None and self.pattern_prob is not None  # validate(): set without generation
        k = rng.choice(self.pattern_prob.size, size=frames, p=self.pattern_prob)
        return self.patterns.astype(bool)[k]

    def most_likely_pattern(self) -> np.ndarray:
        """The job pattern of highest probability, bool (N, M): the first of :meth:`states` with the
        largest probability.  With independent tasks it is read off directly, without enumerating
        the ``2^b`` states: a task is generated iff its probability exceeds 1/2 (at exactly 1/2 both
        patterns are equally likely and the enumeration's first, without the task, is taken).

        >>> inst = RealtimeInstance(success=[[0.9, 0.9]], generation=[[0.7, 0.5]], requirement=[0.1])
        >>> inst.most_likely_pattern()
        array([[ True, False]])
        """
        if self.generation is not None:
            return np.asarray(self.generation > 0.5).reshape(self.n_apps, self.n_workers)
        masks, prob = self.states()
        return masks[int(np.argmax(prob))]

    def states(self, max_states: int = MAX_STATES) -> tuple[np.ndarray, np.ndarray]:
        """Every job pattern of positive probability: bool masks (S, N, M) and probabilities (S,).

        With independent tasks only the tasks whose generation probability lies strictly between
        0 and 1 are enumerated (``2^b`` states for ``b`` such tasks); explicit patterns that
        coincide are merged.  Raises ``ValueError`` above ``max_states`` states.
        """
        n, m = self.n_apps, self.n_workers
        if self.generation is not None:
            g = self.generation.reshape(-1)
            free = np.flatnonzero((g > 0) & (g < 1))
            if free.size > 62 or (1 << free.size) > max_states:
                raise ValueError(
                    f"{1 << min(free.size, 62)}{'+' if free.size > 62 else ''} job-pattern states "
                    f"(2^{free.size}) exceed max_states = {max_states}; the exact region needs a small "
                    "instance (e.g. N = M = 3 has 2^9 = 512), or a higher max_states= (the CLI's --max-states)")
            base = g >= 1
            bits = np.array(list(itertools.product((False, True), repeat=free.size)), dtype=bool)
            bits = bits.reshape(1 << free.size, free.size)  # (1, 0) when no task is random
            masks = np.broadcast_to(base, (bits.shape[0], base.size)).copy()
            masks[:, free] = bits
            pf = g[free]
            prob = np.where(bits, pf, 1.0 - pf).prod(axis=1)
            return masks.reshape(-1, n, m), prob
        assert self.patterns is not None and self.pattern_prob is not None  # validate(): set without generation
        keep = self.pattern_prob > 0
        pats = self.patterns[keep].astype(bool)
        flat = pats.reshape(pats.shape[0], -1)
        uniq, inverse = np.unique(flat, axis=0, return_inverse=True)
        prob = np.bincount(inverse.reshape(-1), weights=self.pattern_prob[keep], minlength=uniq.shape[0])
        if uniq.shape[0] > max_states:
            raise ValueError(f"{uniq.shape[0]} job patterns exceed max_states = {max_states}")
        return uniq.reshape(-1, n, m), prob


# ---------------------------------------------------------------------------------------------
# presets and the random generator

#: Preset names for :func:`realtime_preset` and ``clusteropt generate realtime --preset``.
PRESETS = ("paper", "fig3", "fig4", "fig5")


def realtime_preset(
    name: str = "paper",
    *,
    n: int | None = None,
    generation: float | None = None,
    success: float | None = None,
) -> RealtimeInstance:
    """The paper's settings.

    ``"paper"``
        Fig. 1 and Example 6: N = 2, M = 4, one pattern (A_1 needs W_1, W_2; A_2 needs W_2, W_3,
        W_4), ``P_{1,j} = 0.8``, ``P_{2,j} = 0.9``, ``r = (0.48, 0.5)``.  Example 6 only computes
        frame 1; this ``r`` is not feasible (the jobs always interfere, so at best a fraction
        ``theta = 1 / (0.48 / 0.64 + 0.5 / 0.729) = 0.696`` of it is), and run online its virtual
        queues grow without bound.
    ``"fig3"``
        Fig. 3: N = M = 2, independent tasks, ``P[J_{1,j} = 1] = 0.5``, ``P[J_{2,j} = 1] =
        generation`` (the paper plots 0.3 and 0.5; default 0.3), ``P_{i,j} = 0.9``.
    ``"fig4"``
        Fig. 4: N = M = 2, ``P[J_{i,j} = 1] = 0.5``, ``P_{1,j} = 0.9``, ``P_{2,j} = success`` (0.7
        or 0.9; default 0.7).  The figure's caption says "by worker W_2", its formula and the text
        vary ``P_{2,j}`` for all j, i.e. application 2's tasks: that is what is built here.
    ``"fig5"``
        Fig. 5: N = M = ``n`` (default 5), ``P[J_{i,j} = 1] = generation`` (0.3, 0.4 or 0.5; default
        0.3), ``P_{i,j} = 0.9``.

    Unused keyword arguments raise ``ValueError``.  Requirements are zero except for ``"paper"``.
    """
    if name not in PRESETS:
        raise ValueError(f"preset = {name!r}; expected one of {', '.join(PRESETS)}")
    used = {"paper": (), "fig3": ("generation",), "fig4": ("success",), "fig5": ("n", "generation")}[name]
    given = {"n": n, "generation": generation, "success": success}
    extra = [k for k, v in given.items() if v is not None and k not in used]
    if extra:
        raise ValueError(f"preset {name!r} takes {', '.join(used) or 'no options'}; got {', '.join(extra)}")
    if name == "paper":
        pattern = np.array([[[1, 1, 0, 0], [0, 1, 1, 1]]])
        return RealtimeInstance(success=np.array([[0.8] * 4, [0.9] * 4]), patterns=pattern,
                                pattern_prob=np.array([1.0]), requirement=np.array([0.48, 0.5]),
                                name="paper (Fig. 1, Example 6)")
    if name == "fig3":
        g2 = 0.3 if generation is None else generation
        return RealtimeInstance(success=np.full((2, 2), 0.9), generation=np.array([[0.5, 0.5], [g2, g2]]),
                                name=f"fig3 (P[J_2j = 1] = {g2})")
    if name == "fig4":
        p2 = 0.7 if success is None else success
        return RealtimeInstance(success=np.array([[0.9, 0.9], [p2, p2]]), generation=np.full((2, 2), 0.5),
                                name=f"fig4 (P_2j = {p2})")
    k = 5 if n is None else n
    if not isinstance(k, int | np.integer) or k < 1:
        raise ValueError(f"n = {k!r}; expected an integer >= 1")
    g = 0.3 if generation is None else generation
    return RealtimeInstance(success=np.full((k, k), 0.9), generation=np.full((k, k), float(g)),
                            name=f"fig5 (N = M = {k}, P[J_ij = 1] = {g})")


def _draw(value, shape, rng, what: str) -> np.ndarray:
    if np.ndim(value) == 0:
        v = float(value)
        if not 0.0 <= v <= 1.0 or math.isnan(v):
            raise ValueError(f"{what} = {value!r}; expected a probability in [0, 1] or a (low, high) range")
        return np.full(shape, v)
    lo, hi = (float(x) for x in value)
    if not 0.0 <= lo <= hi <= 1.0:
        raise ValueError(f"{what} = {value!r}; expected 0 <= low <= high <= 1")
    return rng.uniform(lo, hi, size=shape)


def random_realtime(
    n_apps: int = 4,
    n_workers: int = 4,
    *,
    generation=(0.2, 0.6),
    success=(0.7, 1.0),
    requirement=None,
    seed=None,
) -> RealtimeInstance:
    """Independent-task instance with probabilities drawn uniformly from ranges (or fixed).

    ``generation`` and ``success`` are a probability or a ``(low, high)`` range; ``seed`` feeds
    ``np.random.default_rng``.

    >>> inst = random_realtime(3, 2, seed=1)
    >>> inst.success.shape, bool((inst.generation <= 0.6).all())
    ((3, 2), True)
    """
    for what, v in (("n_apps", n_apps), ("n_workers", n_workers)):
        if not isinstance(v, int | np.integer) or v < 1:
            raise ValueError(f"{what} = {v!r}; expected an integer >= 1")
    rng = np.random.default_rng(seed)
    g = _draw(generation, (n_apps, n_workers), rng, "generation")
    p = _draw(success, (n_apps, n_workers), rng, "success")
    return RealtimeInstance(success=p, generation=g, requirement=requirement,
                            name=f"random (N = {n_apps}, M = {n_workers})")
