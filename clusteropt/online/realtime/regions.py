"""Feasibility regions of paper 002: exact (LP over stationary policies) and estimated (simulation).

``exact_region``
    Solves :func:`clusteropt.models.realtime.build_region_lp`: the largest ``theta`` with
    ``theta * d`` in ``R_max`` (Definition 1), with the stationary randomized policy attaining it.
``estimate_theta``
    The paper's way (Sec. IV): the largest ``theta`` such that a policy run for ``frames``
    frames against the requirement ``theta * d`` completes at least ``theta * d_i - tol`` jobs per
    frame for every application, by bisection on ``theta``.  Every bisection step reuses the same
    seed (common random numbers), so the test is a deterministic function of ``theta``; it is
    assumed monotone, as the paper's procedure does.
``region_fraction``
    A policy's region against the exact one along several directions: the ratio per direction and
    the ratio of the areas of the two star-shaped polygons through the boundary points (N = 2).
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import time
from collections.abc import Callable, Sequence

import numpy as np

from clusteropt.instances.realtime import MAX_STATES, RealtimeInstance
from clusteropt.online.driver import run_online
from clusteropt.online.realtime.policies import StationaryPolicy, make_policy
from clusteropt.progress import Progress

__all__ = [
    "ExactRegion",
    "RegionFraction",
    "estimate_theta",
    "exact_region",
    "quadrant_directions",
    "region_fraction",
]


@dataclasses.dataclass(frozen=True)
class ExactRegion:
    """The exact boundary point of ``R_max`` along ``direction``.

    ``theta``: the LP optimum; ``rates`` (N,): the stationary policy's exact rates ``N_i``
    (each ``>= theta d_i``); ``policy``: that :class:`StationaryPolicy`; ``n_states``,
    ``n_columns``: LP size; ``build_seconds`` (states, sets and the Pyomo model),
    ``handoff_seconds`` (Pyomo to the solver), ``solve_seconds`` (the solver's own).
    """

    direction: np.ndarray
    theta: float
    rates: np.ndarray
    policy: StationaryPolicy
    n_states: int
    n_columns: int
    build_seconds: float
    handoff_seconds: float
    solve_seconds: float


def exact_region(inst: RealtimeInstance, direction=None, *, solver: str = "highs",
                 max_states: int = MAX_STATES, data=None, slack: float = 0.0) -> ExactRegion:
    """Solve the exact-region LP along ``direction`` (default: ``r``, or all ones).

    ``slack`` relaxes every rate row by that much (``build_region_lp``): with the paper's 0.01 it
    is the exact answer to the question the simulation test asks.

    Raises ``NotOptimalError`` if the solve is not optimal and ``ValueError`` for a bad
    direction or too many states.

    Examples
    --------
    >>> from clusteropt.instances import realtime_preset
    >>> reg = exact_region(realtime_preset("paper"), [1, 1])
    >>> round(reg.theta, 4), reg.rates.round(4).tolist()
    (0.3408, [0.3408, 0.3408])
    """
    from clusteropt.models.realtime import build_region_lp
    from clusteropt.solvers import solve

    t0 = time.perf_counter()
    model = build_region_lp(inst, direction, data=data, max_states=max_states, slack=slack)
    build_s = time.perf_counter() - t0
    res = solve(model, solver)
    assert res.objective is not None  # solve() raises unless optimal
    data = model.region_data
    y = np.clip(np.asarray(res.values["y"], dtype=float).reshape(-1), 0.0, None)
    rates = data.service.T @ y
    table: dict[bytes, tuple[list[tuple[int, ...]], np.ndarray]] = {}
    start = 0
    for s, sets in enumerate(data.sets):
        p = y[start:start + len(sets)]
        start += len(sets)
        p = p / p.sum() if p.sum() > 0 else np.full(len(sets), 1.0 / len(sets))
        table[np.ascontiguousarray(data.masks[s]).tobytes()] = (list(sets), p)
    return ExactRegion(direction=np.asarray(model.direction), theta=float(res.objective), rates=rates,
                       policy=StationaryPolicy(table), n_states=int(data.prob.size),
                       n_columns=int(data.columns.shape[0]), build_seconds=build_s,
                       handoff_seconds=res.build_seconds, solve_seconds=res.solve_seconds)


def estimate_theta(inst: RealtimeInstance, policy: str | Callable, direction=None, *, frames: int = 10_000,
                   tol: float = 0.01, seed=0, precision: float = 1e-3, hi: float | None = None,
                   progress: bool = False) -> float:
    """The largest ``theta`` whose requirement ``theta * d`` the policy fulfils in simulation.

    Parameters
    ----------
    inst : RealtimeInstance
    policy : str or callable
        A policy name (:data:`~clusteropt.online.realtime.policies.POLICIES`) or ``factory(requirement)``
        returning a policy.
    direction : array (N,), optional
        Default: ``r``, or all ones.
    frames, tol :
        The paper's test: ``frames`` frames, rates at least ``theta d_i - tol`` (10,000 and 0.01).
    seed :
        One seed for every bisection step.
    precision : float
        Stop when the bracket is narrower.
    hi : float, optional
        Upper end of the bracket; default ``1 / max(d)`` plus ``tol`` (a rate never exceeds 1).
    progress : bool
        Show the simulations done (one per bisection step; :class:`clusteropt.progress.Progress`).

    References
    ----------
    Paper 002, Sec. IV (Figs. 3-5).
    """
    from clusteropt.models.realtime import resolve_direction

    d = resolve_direction(inst, direction)
    factory = (lambda r: make_policy(policy, r)) if isinstance(policy, str) else policy

    def ok(theta: float) -> bool:
        req = theta * d
        run = run_online(factory(req), inst, horizon=frames, seed=seed)
        return bool((run.rates >= req - tol).all())

    lo = 0.0
    hi = (1.0 + tol) / float(d.max()) if hi is None else float(hi)
    steps = 1 + max(0, math.ceil(math.log2(max(hi - lo, precision) / precision)))
    name = policy if isinstance(policy, str) else getattr(policy, "__name__", "policy")
    with Progress(f"theta {name}", steps, "simulation", enabled=progress) as bar:
        found = ok(hi)
        bar.update()
        if found:
            return hi
        while hi - lo > precision:
            mid = 0.5 * (lo + hi)
            if ok(mid):
                lo = mid
            else:
                hi = mid
            bar.update()
    return lo


@dataclasses.dataclass(frozen=True)
class RegionFraction:
    """A policy's region against ``R_max``: per direction and (N = 2) by area.

    ``theta``: the policy's estimate (the paper's test, slack ``tol``); ``exact_theta``: the LP
    with the same slack (so the two answer the same question); ``exact_theta_strict``: the
    boundary of ``R_max`` itself.
    """

    directions: np.ndarray
    theta: np.ndarray
    exact_theta: np.ndarray
    exact_theta_strict: np.ndarray

    @property
    def ratio(self) -> np.ndarray:
        """``theta / exact_theta`` per direction."""
        return self.theta / self.exact_theta

    @property
    def area_ratio(self) -> float:
        """Area of the policy's polygon over the exact one's (two applications only).

        Both polygons join the origin and the boundary points in the order of the directions,
        which must sweep the quadrant from the first axis to the second.
        """
        if self.directions.shape[1] != 2:
            raise ValueError("area_ratio needs two applications")
        return _area(self.directions, self.theta) / _area(self.directions, self.exact_theta)


def _area(directions: np.ndarray, theta: np.ndarray) -> float:
    pts = directions * theta[:, None]
    return 0.5 * float(sum(abs(a[0] * b[1] - a[1] * b[0]) for a, b in itertools.pairwise(pts)))


def quadrant_directions(k: int) -> np.ndarray:
    """``k >= 2`` unit directions from (1, 0) to (0, 1), equally spaced in angle.

    >>> quadrant_directions(3).round(4).tolist()
    [[1.0, 0.0], [0.7071, 0.7071], [0.0, 1.0]]
    """
    if k < 2:
        raise ValueError(f"k = {k}; expected >= 2 directions")
    a = np.linspace(0.0, math.pi / 2, k)
    return np.round(np.column_stack([np.cos(a), np.sin(a)]), 15)


def region_fraction(inst: RealtimeInstance, policy: str | Callable, directions: Sequence | int = 9, *,
                    frames: int = 10_000, tol: float = 0.01, seed=0, precision: float = 1e-3) -> RegionFraction:
    """``estimate_theta`` and ``exact_region`` along each direction (an int: quadrant directions, N = 2)."""
    dirs = quadrant_directions(directions) if isinstance(directions, int) else np.asarray(directions, dtype=float)
    est = np.array([estimate_theta(inst, policy, d, frames=frames, tol=tol, seed=seed, precision=precision)
                    for d in dirs])
    from clusteropt.models.realtime import region_data

    data = region_data(inst)
    exact = np.array([exact_region(inst, d, data=data, slack=tol).theta for d in dirs])
    strict = np.array([exact_region(inst, d, data=data).theta for d in dirs])
    return RegionFraction(directions=dirs, theta=est, exact_theta=exact, exact_theta_strict=strict)
