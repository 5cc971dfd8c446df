"""Paper 004 online: ring requests in batches, the partitioning policies, and the run they leave.

The environment cuts the request sequence into ``horizon`` batches (one batch per driver slot,
so the driver's per-slot overhead is paid once per batch, not once per request).  A policy wraps
a ring algorithm (:class:`clusteropt.algorithms.ring.state.RingAlgorithm`): at each slot it
serves the batch's requests one by one, and returns the migrations they caused as an ``(M, 3)``
array of ``[request index, process, to server]`` (a migration is applied *after* serving its
request; index ``-1`` means before the first request).  The environment keeps the log;
:func:`clusteropt.verify.check_ring_run` replays it and recomputes every cost.

Policies (:data:`POLICIES`; ``make_policy(name, **params)``):

``dynamic``
    Sec. 3: random-shift intervals of about ``(1 + eps/2) k`` processes, one cut edge each, driven
    by the paper's randomized line MTS (random HST + entropic mirror descent); slices to servers;
    load <= (2 + eps) k.
``dynamic-soft``
    The same with the soft work-function heuristic MTS (ours; no proved ratio).
``dynamic-wfa``
    The same with the deterministic work-function line MTS (baseline).
``dynamic-mix``
    The same with the combined line MTS (ours): the paper's HST MTS and the work-function MTS
    run side by side, the cut follows one of them by exponential weights of their costs.
``static``
    Sec. 4: slicing with growing intervals (hitting game, smooth-min), colour clusters with
    hysteresis, rebalancing above (1 + eps') k + s_max.
``never``
    Never migrate (the initial assignment throughout).
``static-best``
    The best contiguous arcs in hindsight (looks at the whole sequence), migrated to before the
    first request.
``greedy``
    Moves a server boundary to the least-requested edge nearby.
``follow``
    Runs ``dynamic-mix``, ``greedy`` and ``never`` side by side and holds the placement of one of
    them, chosen by exponential weights of their costs with lazy switching (ours; the
    guarantee of ``dynamic-mix`` up to a constant factor and an additive term).
``component``
    The peer from outside paper 004: Avin, Bienkowski, Loukas, Pacut and Schmid's deterministic
    component-based algorithm (CREP; O(k log k)-competitive on any request graph): arcs merge when
    the requests paid between them reach ``alpha``, an epoch ends when a merged arc would exceed
    ``k``; load <= (2 + eps)k.
"""

from __future__ import annotations

import dataclasses
import importlib
import logging
import math
import time
from collections.abc import Mapping
from typing import Any

import numpy as np

from clusteropt.algorithms.ring.state import serve_requests
from clusteropt.instances.ring import RingInstance
from clusteropt.online.driver import register_environment, run_online
from clusteropt.registries import lookup

__all__ = [
    "DEFAULT_BATCH",
    "POLICIES",
    "RingEnvironment",
    "RingObservation",
    "RingPolicy",
    "RingRun",
    "hit_the_cut",
    "make_policy",
    "run_ring",
]

log = logging.getLogger(__name__)

#: Requests per driver slot in :func:`run_ring`.
DEFAULT_BATCH = 65_536

#: Policy name -> (module, class, fixed keyword arguments).  Imported on first use.
POLICIES: dict[str, tuple[str, str, dict[str, Any]]] = {
    "dynamic": ("clusteropt.algorithms.ring.dynamic", "DynamicRing", {"mts": "hst"}),
    "dynamic-soft": ("clusteropt.algorithms.ring.dynamic", "DynamicRing", {"mts": "soft"}),
    "dynamic-wfa": ("clusteropt.algorithms.ring.dynamic", "DynamicRing", {"mts": "wfa"}),
    "dynamic-mix": ("clusteropt.algorithms.ring.dynamic", "DynamicRing", {"mts": "mix"}),
    "static": ("clusteropt.algorithms.ring.static", "StaticRing", {}),
    "never": ("clusteropt.algorithms.ring.baselines", "NeverMigrate", {}),
    "static-best": ("clusteropt.algorithms.ring.baselines", "StaticBestArcs", {}),
    "greedy": ("clusteropt.algorithms.ring.baselines", "GreedyCut", {}),
    "follow": ("clusteropt.algorithms.ring.follow", "FollowRing", {}),
    "component": ("clusteropt.algorithms.ring.component", "ComponentRing", {}),
}


@dataclasses.dataclass(frozen=True)
class RingObservation:
    """One batch: ``requests`` (edge ids) are requests ``start .. start + len - 1`` of the sequence."""

    start: int
    requests: np.ndarray


@dataclasses.dataclass(frozen=True)
class RingRun:
    """The trace of one run: who made it, with what, and every migration.

    Attributes
    ----------
    policy : str
        Registered policy name.
    params : dict
        Every parameter of the algorithm (its ``get_params()``).
    seed : int or None
        The run's seed (:func:`run_online` splits it into the policy's stream).
    augmentation : float
        ``c``: the algorithm promises at most ``c * k`` processes per server after every step.
    initial : int array (n,)
        The instance's initial assignment.
    migrations : int array (M, 3)
        ``[request index, process, to server]``, in the order applied.
    costs : dict
        The algorithm's own cost split (its accounting, e.g. moving / merging / rebalancing);
        ``verify/`` recomputes communication and migration cost from the log.
    n_requests, batches : int
        Sequence length and driver slots.
    seconds : float
        Wall time of the run (driver included).
    """

    policy: str
    params: Mapping[str, Any]
    seed: int | None
    augmentation: float
    initial: np.ndarray
    migrations: np.ndarray
    costs: Mapping[str, float]
    n_requests: int
    batches: int
    seconds: float

    def to_dict(self, check=None) -> dict[str, Any]:
        """The ``out.json`` content (README, "Ring partitioning").

        With ``check`` (a :class:`clusteropt.verify.RingCheck`) also the verified costs, loads and
        verdict.
        """
        from clusteropt import __version__

        out: dict[str, Any] = {
            "system": "ring", "policy": self.policy, "seed": self.seed, "params": dict(self.params),
            **{k: v for k, v in self.params.items() if isinstance(v, int | float | str | bool | None)},
            "augmentation": self.augmentation, "version": __version__, "n_requests": self.n_requests,
            "batches": self.batches, "seconds": round(self.seconds, 3),
            "initial": self.initial.tolist(), "migrations": self.migrations.tolist(),
            "algorithm_costs": dict(self.costs),
        }
        if check is not None:
            out.update({
                "max_load": check.max_load, "capacity": _finite(check.capacity),
                "max_load_over_k": _finite(check.max_load_ratio),
                "communication_cost": check.communication_cost, "migration_cost": check.migration_cost,
                "total_cost": _finite(check.value), "verified": check.feasible,
                "violations": [str(v) for v in check.violations[:20]],
            })
        return out


def _finite(x):
    """A number for JSON: NaN (a run the checker could not cost) becomes null."""
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else x


class RingEnvironment:
    """The request sequence cut into ``horizon`` batches; records the migrations returned."""

    def __init__(self, instance: RingInstance, horizon: int, rng: np.random.Generator):
        self.instance = instance
        self.bounds = np.linspace(0, instance.n_requests, horizon + 1).round().astype(np.int64)
        self.logs: list[np.ndarray] = []
        self.start_time = time.perf_counter()

    def observe(self, t: int) -> RingObservation:
        """Batch ``t`` (1-based) of the requests."""
        lo, hi = int(self.bounds[t - 1]), int(self.bounds[t])
        return RingObservation(lo, self.instance.requests[lo:hi])

    def apply(self, t: int, decision: np.ndarray) -> None:
        """Keep the batch's migrations (an ``(M, 3)`` array)."""
        arr = np.asarray(decision, dtype=np.int64)
        if arr.ndim != 2 or arr.shape[1] != 3:
            raise ValueError(f"slot {t}: the policy returned migrations of shape {arr.shape}; expected (M, 3)")
        self.logs.append(arr)

    def result(self, policy: RingPolicy) -> RingRun:
        """The :class:`RingRun` of the whole sequence."""
        migrations = np.concatenate(self.logs) if self.logs else np.zeros((0, 3), dtype=np.int64)
        algo = policy.algorithm
        return RingRun(
            policy=policy.name, params=algo.get_params(), seed=policy.seed_, augmentation=float(algo.augmentation),
            initial=np.array(self.instance.initial), migrations=migrations, costs=dict(algo.costs()),
            n_requests=self.instance.n_requests, batches=len(self.bounds) - 1,
            seconds=time.perf_counter() - self.start_time)


register_environment(RingInstance.kind, RingEnvironment)


class RingPolicy:
    """A ring algorithm as an online policy: serves each batch, returns its migrations.

    The migrations the algorithm makes in ``start`` (before the first request, index -1) are
    returned with the first batch.
    """

    def __init__(self, name: str, algorithm):
        self.name = name
        self.algorithm = algorithm
        self.seed_: int | None = None

    def reset(self, instance: RingInstance, rng: np.random.Generator) -> None:
        """Start the algorithm on ``instance`` with the policy's random stream."""
        if not isinstance(instance, RingInstance):
            raise TypeError(f"policy {self.name!r} runs on ring instances, got {type(instance).__name__}")
        self.algorithm.start(instance, rng)

    def step(self, t: int, observation: RingObservation) -> np.ndarray:
        """Serve the batch (on the algorithm's compiled path if it has one); return its migrations ``(M, 3)``."""
        algo = self.algorithm
        state = algo.state_
        serve_requests(algo, observation.start, observation.requests)
        return state.migrations(clear=True)


def make_policy(name: str, **params) -> RingPolicy:
    """The policy registered as ``name`` with the algorithm's parameters (``epsilon``, ...).

    >>> make_policy("never").name
    'never'
    >>> make_policy("nope")
    Traceback (most recent call last):
    ...
    ValueError: unknown ring policy 'nope'; registered: component, dynamic, dynamic-mix, dynamic-soft, ...
    """
    module, cls, fixed = lookup(POLICIES, name, "ring policy")
    algo_cls = getattr(importlib.import_module(module), cls)
    clash = sorted(set(params) & set(fixed))
    if clash:
        raise ValueError(f"policy {name!r} fixes {', '.join(clash)}; use another policy name to change it")
    accepted = _parameters(algo_cls)
    if accepted is not None:
        unknown = sorted(set(params) - accepted)
        if unknown:
            own = sorted(accepted - set(fixed))
            raise ValueError(f"ring policy {name!r} has no parameter {', '.join(map(repr, unknown))}; "
                             f"its parameters: {', '.join(own) or 'none'}")
    return RingPolicy(name, algo_cls(**fixed, **params))


def _parameters(algo_cls) -> set[str] | None:
    """Keyword parameters of ``algo_cls.__init__`` (None when it takes ``**kwargs``)."""
    import inspect

    sig = inspect.signature(algo_cls.__init__)
    names = set()
    for p in list(sig.parameters.values())[1:]:
        if p.kind is p.VAR_KEYWORD:
            return None
        if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY):
            names.add(p.name)
    return names


def run_ring(policy: RingPolicy | str, instance: RingInstance, *, seed: int | None = 0,
             batch: int = DEFAULT_BATCH, progress: bool = False, **params) -> RingRun:
    """Run ``policy`` (a name or a :class:`RingPolicy`) on every request of ``instance``.

    ``batch`` requests are one driver slot; ``progress`` shows the batches done
    (:class:`clusteropt.progress.Progress`).  Returns the :class:`RingRun`; check it with
    :func:`clusteropt.verify.check_ring_run`.
    """
    if isinstance(policy, str):
        policy = make_policy(policy, **params)
    elif params:
        raise ValueError("parameters go with a policy name, not with a built policy")
    if not isinstance(batch, int | np.integer) or batch < 1:
        raise ValueError(f"batch = {batch!r}; expected an integer >= 1")
    horizon = max(1, -(-instance.n_requests // int(batch)))
    policy.seed_ = seed
    return run_online(policy, instance, horizon=horizon, seed=seed, progress=progress, unit="batch")


def hit_the_cut(instance: RingInstance, requests: int, *, against: str = "dynamic-wfa", seed: int = 0,
                **params) -> RingInstance:
    """The adaptive "hit the cut" sequence against a deterministic run of policy ``against``.

    Request ``t`` is the cut edge (an edge whose endpoints are on different servers) of the
    algorithm's current placement nearest after edge 0 going round the ring; the algorithm then
    serves it.  The algorithm's random choices are fixed by ``seed``, so against that seed it is
    deterministic and pays for every request (the idea of the deterministic lower bound, paper
    Sec. 4.1, Lemma 4.1).  Fed to other seeds or other algorithms the sequence is oblivious.
    With a single server (no cut edge) every request is edge 0.

    Returns ``instance`` with the new requests and ``generated_by`` naming all of this.
    """
    T = int(requests)
    if T < 0:
        raise ValueError(f"requests = {requests!r}; expected >= 0")
    policy = make_policy(against, **params)
    if getattr(policy.algorithm, "offline", False):
        raise ValueError(f"policy {against!r} reads the whole sequence before the first request; "
                         "hit-the-cut needs an online policy")
    seq = np.random.SeedSequence(seed)
    _, policy_seq = seq.spawn(2)  # the stream run_online gives the policy for this seed
    algo = policy.algorithm
    algo.start(instance, np.random.default_rng(policy_seq))
    state = algo.state_
    n = instance.n
    out = np.zeros(T, dtype=np.int64)
    so = state.server_of
    cut = so != np.roll(so, -1)  # kept up to date from the migration log, not recomputed per request
    first = int(np.argmax(cut)) if cut.any() else -1
    state.migrations(clear=True)
    for t in range(T):
        e = max(first, 0)
        out[t] = e
        state.now = t
        algo.serve(e)
        rows = state.migrations(clear=True)
        if rows.size:  # only the edges next to a migrated process can change
            so = state.server_of
            v = rows[:, 1]
            edges = np.unique(np.concatenate([v, (v - 1) % n]))
            cut[edges] = so[edges] != so[(edges + 1) % n]
            now_cut = edges[cut[edges]]
            if now_cut.size and (first < 0 or now_cut[0] < first):
                first = int(now_cut[0])
            elif first >= 0 and not cut[first]:
                first = int(np.argmax(cut)) if cut.any() else -1
    gen = {"generator": "hit_the_cut", "against": against, "seed": seed, "requests": T,
           "params": {k: v for k, v in params.items()}, "n": n, "servers": instance.servers}
    return instance.with_requests(out, generated_by=gen)
