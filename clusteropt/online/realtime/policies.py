"""Paper 002 online: the frame environment, the virtual queues, and the scheduling policies.

The environment draws, from its own random stream and all at once (vectorized over frames), every
frame's job pattern ``J(t)`` and every potential task's outcome (task of application i on worker j
completes with probability ``P_ij``).  A scheduled job completes when it exists and all its tasks
complete (Sec. II-A); the environment records decisions and completions ``e_i(t)``.

Policies with virtual queues (Sec. III-A) keep ``Q_i``: at the start of frame t they first apply the
end-of-frame update of frame t-1 (``Q_i <- max(Q_i - e_i(t-1), 0)``, Alg. 1 lines 8-10, learnt from
the observation), then the arrivals ``Q_i <- Q_i + r_i`` (Alg. 1 line 4), then decide.  So
``Q_i(1) = r_i``, as in Example 6.

Policies (:data:`POLICIES`):

``max-weight``
    Alg. 1 (feasibility-optimal, Theorem 7): an exact maximizer of Eq. (2) each frame, by
    combinatorial search or through the Pyomo ILP (``method``).
``sqrt-greedy``
    Alg. 2: greedy in decreasing ``Q_i prod P / sqrt|J_i|`` (Eq. (5)); sqrt(M)-approximate
    (Lemma 12, Theorem 14).
``weight-greedy``
    Baseline: greedy in decreasing ``Q_i prod P`` (Eq. (2)'s weights, no sqrt).
``random``
    Baseline: greedy in a uniformly random order (a random maximal decision).
``stationary``
    The stationary randomized policy the exact-region LP returns
    (:func:`clusteropt.online.realtime.regions.exact_region`); no queues.
"""

from __future__ import annotations

import dataclasses
import time
from typing import TYPE_CHECKING, Any

import numpy as np

from clusteropt.algorithms.realtime import (
    fill_zero_weight,
    frame_masks,
    greedy_packing,
    max_weight_packing,
    sqrt_greedy_packing,
)
from clusteropt.instances.realtime import RealtimeInstance
from clusteropt.online.driver import register_environment

if TYPE_CHECKING:
    from clusteropt.models.realtime import PersistentMaxWeight

__all__ = [
    "POLICIES",
    "MaxWeight",
    "RandomPolicy",
    "RealtimeEnvironment",
    "RealtimeObservation",
    "RealtimeRun",
    "SqrtGreedy",
    "StationaryPolicy",
    "WeightGreedy",
    "make_policy",
]

#: Largest number of positive-weight jobs for which ``method="auto"`` uses the search, not the ILP.
SEARCH_MAX_JOBS = 24


@dataclasses.dataclass(frozen=True)
class RealtimeObservation:
    """What a policy sees at the start of frame ``frame``.

    ``jobs`` (N, M) bool is ``J(t)``; ``masks`` the jobs as worker bitmasks (0: no job);
    ``completion`` ``1{|J_i| != 0} prod_{j: J_ij = 1} P_ij`` (N,); ``size`` ``|J_i(t)|``;
    ``completed_last`` ``e(t-1)`` (N,) bool, None in frame 1.
    """

    frame: int
    jobs: np.ndarray
    masks: list
    completion: np.ndarray
    size: np.ndarray
    completed_last: np.ndarray | None


@dataclasses.dataclass(frozen=True)
class RealtimeRun:
    """The trace of one run: inputs drawn, decisions taken, completions, queues.

    Attributes
    ----------
    policy : str
    requirement : array (N,)
        The requirement the policy's virtual queues ran against.
    jobs : bool array (T, N, M)
        ``J_{i,j}(t)``.
    task_done : bool array (T, N, M)
        Whether a task of application i on worker j would complete in frame t (drawn for every
        pair; only scheduled tasks matter).
    decisions : bool array (T, N)
        ``J_i(t) in D(t)``.
    completed : bool array (T, N)
        ``e_i(t)`` as the environment recorded it.
    queues : float array (T, N) or None
        ``Q_i(t)`` after the arrivals of frame t, before its decision (policies with queues).
    seconds : float
        Wall time of the policy's decisions.
    """

    policy: str
    requirement: np.ndarray
    jobs: np.ndarray
    task_done: np.ndarray
    decisions: np.ndarray
    completed: np.ndarray
    queues: np.ndarray | None
    seconds: float

    @property
    def frames(self) -> int:
        """T, the number of frames run."""
        return int(self.decisions.shape[0])

    @property
    def rates(self) -> np.ndarray:
        """Average completed jobs per frame per application (Eq. (1) over the run)."""
        return self.completed.mean(axis=0)

    def fulfilled(self, requirement=None, tol: float = 0.01) -> bool:
        """The paper's test (Sec. IV): every rate at least ``r_i - tol``."""
        r = self.requirement if requirement is None else np.asarray(requirement, dtype=float)
        return bool((self.rates >= r - tol).all())

    def to_frame(self):
        """One row per frame and application: decision, completion, queue (pandas DataFrame)."""
        import pandas as pd

        t, n = self.decisions.shape
        data = {
            "frame": np.repeat(np.arange(1, t + 1), n),
            "app": np.tile(np.arange(n), t),
            "job_size": self.jobs.sum(axis=2).reshape(-1),
            "scheduled": self.decisions.reshape(-1),
            "completed": self.completed.reshape(-1),
        }
        if self.queues is not None:
            data["queue"] = self.queues.reshape(-1)
        return pd.DataFrame(data)

    def to_json_dict(self) -> dict[str, Any]:
        """The ``--json`` output of ``clusteropt run`` for a realtime instance (README)."""
        return {
            "policy": self.policy,
            "frames": self.frames,
            "requirement": self.requirement.tolist(),
            "completion_rate": self.rates.tolist(),
            "fulfilled": self.fulfilled(),
            "decisions": [np.flatnonzero(row).tolist() for row in self.decisions],
            "completed": [np.flatnonzero(row).tolist() for row in self.completed],
            "seconds": self.seconds,
        }


MAX_FRAME_CELLS = 100_000_000
"""Largest ``frames x N x M`` the environment draws up front: 19 bytes per cell at the peak (the
float64 draws of ``J(t)`` and of the task outcomes before they become booleans; measured by
``python -m benchmarks.model_memory``), so 1.9 GB."""


class RealtimeEnvironment:
    """Frames of a :class:`RealtimeInstance`, all random inputs drawn up front (module docstring).

    Raises
    ------
    ValueError
        ``frames x N x M`` above :data:`MAX_FRAME_CELLS` (refused before anything is allocated).
    """

    def __init__(self, instance: RealtimeInstance, horizon: int, rng: np.random.Generator):
        per_frame = instance.n_apps * instance.n_workers
        cells = int(horizon) * per_frame
        if cells > MAX_FRAME_CELLS:
            raise ValueError(
                f"frames = {horizon}; expected at most {MAX_FRAME_CELLS // per_frame:,} for N = {instance.n_apps} "
                f"applications on M = {instance.n_workers} workers (every frame's jobs and task outcomes are "
                f"drawn up front: {cells:,} cells would need about {cells * 19 / 1e9:.0f} GB)")
        self.instance = instance
        self.jobs = instance.sample_jobs(horizon, rng)
        self.task_done = rng.random(self.jobs.shape) < instance.success
        self.completion = instance.completion_probability(self.jobs)
        self.size = self.jobs.sum(axis=2)
        self.masks = frame_masks(self.jobs)
        # would job i complete in frame t if scheduled: it exists and every task completes
        ok = self.jobs.any(axis=2) & (~self.jobs | self.task_done).all(axis=2)
        assert isinstance(ok, np.ndarray)  # (frames, N): the jobs are (frames, N, M)
        self._ok = ok
        self.decisions = np.zeros(self.size.shape, dtype=bool)
        self.completed = np.zeros(self.size.shape, dtype=bool)
        self._seconds = 0.0
        self._clock = 0.0

    def observe(self, t: int) -> RealtimeObservation:
        """Frame ``t``'s jobs and the previous frame's completions."""
        self._clock = time.perf_counter()
        k = t - 1
        return RealtimeObservation(t, self.jobs[k], self.masks[k].tolist(), self.completion[k], self.size[k],
                                   self.completed[k - 1] if k else None)

    def apply(self, t: int, decision) -> None:
        """Run the decision (bool (N,)): a scheduled job completes when all its tasks do."""
        self._seconds += time.perf_counter() - self._clock
        d = np.asarray(decision)
        n = self.decisions.shape[1]
        if d.dtype != bool or d.shape != (n,):
            raise ValueError(f"frame {t}: decision has dtype {d.dtype} and shape {d.shape}; "
                             f"expected a bool array of shape ({n},)")
        self.decisions[t - 1] = d
        self.completed[t - 1] = d & self._ok[t - 1]

    def result(self, policy) -> RealtimeRun:
        """The :class:`RealtimeRun` of the frames so far."""
        log = getattr(policy, "queue_log_", None)
        queues = np.array(log, dtype=float) if log else None
        return RealtimeRun(policy=getattr(policy, "name", type(policy).__name__),
                           requirement=np.asarray(getattr(policy, "requirement_", self.instance.requirement)),
                           jobs=self.jobs, task_done=self.task_done, decisions=self.decisions,
                           completed=self.completed, queues=queues, seconds=self._seconds)


register_environment("realtime", RealtimeEnvironment)


class _QueuePolicy:
    """Virtual queues of Sec. III-A shared by Algs. 1 and 2 and the greedy baselines."""

    name = ""

    def __init__(self, requirement=None, *, record_queues: bool = True):
        self.requirement = requirement
        self.record_queues = record_queues

    def reset(self, instance: RealtimeInstance, rng=None) -> None:
        r = instance.requirement if self.requirement is None else np.asarray(self.requirement, dtype=float)
        assert r is not None  # validate() fills in the instance's default requirement
        if r.shape != (instance.n_apps,) or not (np.isfinite(r) & (r >= 0)).all():
            raise ValueError(f"requirement {r.tolist()}; expected {instance.n_apps} finite numbers >= 0")
        self.instance_ = instance
        self.requirement_ = r
        self.queues_ = np.zeros(instance.n_apps)
        self.rng_ = np.random.default_rng(rng)
        self.queue_log_: list[np.ndarray] = []

    def step(self, t: int, obs: RealtimeObservation) -> np.ndarray:
        if obs.completed_last is not None:                     # Alg. 1 lines 8-10 of frame t-1
            self.queues_ = np.maximum(self.queues_ - obs.completed_last, 0.0)
        self.queues_ = self.queues_ + self.requirement_        # Alg. 1 line 4
        if self.record_queues:
            self.queue_log_.append(self.queues_)
        weights = self.queues_ * obs.completion                 # the terms of Eq. (2)
        decision = np.zeros(self.queues_.size, dtype=bool)
        decision[self.choose(weights, obs)] = True
        return decision

    def choose(self, weights: np.ndarray, obs: RealtimeObservation) -> list[int]:  # pragma: no cover
        raise NotImplementedError


class MaxWeight(_QueuePolicy):
    """Alg. 1: an exact maximizer of Eq. (2) in every frame (feasibility-optimal, Theorem 7).

    Parameters
    ----------
    requirement : array (N,), optional
        Default: the instance's.
    method : {"auto", "search", "ilp"}
        ``"search"``: :func:`~clusteropt.algorithms.realtime.max_weight_packing` (branch and bound);
        ``"ilp"``: the ILP of Eq. (2) each frame (a non-optimal solve raises); ``"auto"``: the
        search while a frame has at most :data:`SEARCH_MAX_JOBS` jobs of positive weight, else the
        ILP.  Both are exact and are tested to reach the same value.
    solver : str
        For the ILP.
    builder : {"auto", "matrix", "pyomo"}
        The ILP's route: ``"matrix"``, one live HiGHS model for the run changed in place each
        frame (:class:`~clusteropt.models.realtime.PersistentMaxWeight`, HiGHS only);
        ``"pyomo"``, :func:`~clusteropt.models.realtime.build_max_weight_ilp` built and solved by
        ``solver`` every frame; ``"auto"`` (default): ``"matrix"`` when the solver is HiGHS.
    fill : bool
        Add zero-weight jobs that still fit (see ``max_weight_packing``).
    """

    name = "max-weight"

    def __init__(self, requirement=None, *, method: str = "auto", solver: str = "highs", fill: bool = True,
                 record_queues: bool = True, builder: str = "auto"):
        super().__init__(requirement, record_queues=record_queues)
        if method not in ("auto", "search", "ilp"):
            raise ValueError(f"method = {method!r}; expected auto, search or ilp")
        if builder not in ("auto", "matrix", "pyomo"):
            raise ValueError(f"builder = {builder!r}; expected auto, matrix or pyomo")
        if builder == "matrix" and solver != "highs":
            raise ValueError(f"builder = 'matrix' keeps a HiGHS model; solver = {solver!r} needs builder 'pyomo'")
        self.method = method
        self.solver = solver
        self.fill = fill
        self.builder = builder

    def reset(self, instance, rng=None) -> None:
        """Queues to zero; ``ilp_frames_`` counts the frames decided by the ILP; the live HiGHS
        model of the ``"matrix"`` route is made at the first ILP frame.
        """
        super().reset(instance, rng)
        self.ilp_frames_ = 0
        self.persistent_: PersistentMaxWeight | None = None

    def choose(self, weights, obs) -> list[int]:
        """An exact maximizer of Eq. (2) by search or ILP (``method``)."""
        positive = sum(1 for w, m in zip(weights.tolist(), obs.masks, strict=True) if w > 0 and m)
        if self.method == "search" or (self.method == "auto" and positive <= SEARCH_MAX_JOBS):
            return max_weight_packing(weights, obs.masks, fill=self.fill)[1]
        self.ilp_frames_ += 1
        return self._ilp(weights, obs)

    def _ilp(self, weights, obs) -> list[int]:
        from clusteropt.models.realtime import PersistentMaxWeight, build_max_weight_ilp
        from clusteropt.solvers import solve

        chosen: list[int] = []
        if self.builder == "matrix" or (self.builder == "auto" and self.solver == "highs"):
            if self.persistent_ is None:
                self.persistent_ = PersistentMaxWeight(*self.instance_.success.shape)
            ilp = self.persistent_
            chosen = ilp.solve(self.queues_, obs.jobs, self.instance_.success).chosen
        else:
            model = build_max_weight_ilp(self.queues_, obs.jobs, self.instance_.success)
            if len(model.A):
                res = solve(model, self.solver)          # raises NotOptimalError unless optimal
                x = res.values["x"].reshape(-1)
                chosen = [i for i, v in zip(list(model.A), x.tolist(), strict=True) if v > 0.5]
        return fill_zero_weight(chosen, weights, obs.masks) if self.fill else sorted(chosen)


class SqrtGreedy(_QueuePolicy):
    """Alg. 2: greedy in decreasing ``Q_i prod P_ij / sqrt|J_i|`` (Eq. (5)); sqrt(M)-approximate."""

    name = "sqrt-greedy"

    def choose(self, weights, obs) -> list[int]:
        """Alg. 2, lines 5-11."""
        return sqrt_greedy_packing(weights, obs.masks, obs.size)


class WeightGreedy(_QueuePolicy):
    """Baseline: greedy in decreasing ``Q_i prod P_ij`` (Eq. (2)'s weights without the sqrt)."""

    name = "weight-greedy"

    def choose(self, weights, obs) -> list[int]:
        """Greedy by weight."""
        order = np.argsort(-weights, kind="stable").tolist()
        return greedy_packing(order, obs.masks)


class RandomPolicy(_QueuePolicy):
    """Baseline: a random maximal interference-free decision (greedy in a random order)."""

    name = "random"

    def choose(self, weights, obs) -> list[int]:
        """Greedy in a random order."""
        return greedy_packing(self.rng_.permutation(weights.size).tolist(), obs.masks)


class StationaryPolicy:
    """A stationary randomized policy: in job-pattern state s run set D with probability ``y[s, D]``.

    Built by :func:`clusteropt.online.realtime.regions.exact_region` from the region LP's solution.  The
    state is recognised by its job pattern; a pattern the table does not know raises.
    """

    name = "stationary"

    def __init__(self, table: dict[bytes, tuple[list[tuple[int, ...]], np.ndarray]]):
        self.table = table

    def reset(self, instance, rng=None) -> None:
        """Keep the random stream that draws the sets."""
        self.rng_ = np.random.default_rng(rng)
        self.requirement_ = np.asarray(instance.requirement)

    def step(self, t: int, obs: RealtimeObservation) -> np.ndarray:
        """Draw this state's set."""
        key = np.ascontiguousarray(obs.jobs, dtype=bool).tobytes()
        if key not in self.table:
            raise ValueError(f"frame {t}: job pattern {obs.jobs.astype(int).tolist()} is not a state "
                             "of the policy")
        sets, prob = self.table[key]
        k = int(self.rng_.choice(len(sets), p=prob)) if len(sets) > 1 else 0
        decision = np.zeros(obs.jobs.shape[0], dtype=bool)
        decision[list(sets[k])] = True
        return decision


#: Policy name -> class (``clusteropt run --policy``); ``stationary`` needs a table, see regions.
POLICIES = {cls.name: cls for cls in (MaxWeight, SqrtGreedy, WeightGreedy, RandomPolicy)}


def make_policy(name: str, requirement=None, **options) -> _QueuePolicy:
    """The policy registered as ``name`` (:data:`POLICIES`)."""
    if name not in POLICIES:
        raise ValueError(f"unknown realtime policy {name!r}; expected one of {', '.join(POLICIES)}")
    return POLICIES[name](requirement, **options)
