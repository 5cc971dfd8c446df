"""Real-time job experiments (paper 002, Sec. IV): the regions of Figs. 3 and 4, the curves of Fig. 5.

The paper's test (Sec. IV): a requirement ``r`` is *achieved* by a policy when, over 10,000
frames, every application's average number of completed jobs is at least ``r_i - 0.01``.  Along a
direction ``d`` the largest achieved ``theta * d`` is found by bisection
(:func:`clusteropt.online.realtime.regions.estimate_theta`, one seed for every step) and compared with the
exact boundary of the maximum feasibility region ``R_max`` (Definition 1), an LP over stationary
randomized policies (:func:`clusteropt.online.realtime.regions.exact_region`), solved twice: with the same
0.01 slack as the simulation test (``exact_theta``: the exact answer to the question the
simulation asks, the denominator of ``ratio``) and without it (``exact_theta_strict``: the
boundary of ``R_max`` itself, drawn in the figures).

``realtime-fig3``
    N = M = 2, ``P[J_1j = 1] = 0.5``, ``P[J_2j = 1] = generation2`` (0.3, 0.5), ``P_ij = 0.9``:
    one cell per setting, policy and direction (``direction`` indexes ``directions`` directions
    equally spaced in angle from the r_1 axis to the r_2 axis).
``realtime-fig4``
    N = M = 2, ``P[J_ij = 1] = 0.5``, ``P_1j = 0.9``, ``P_2j = success2`` (0.7, 0.9); cells as
    in Fig. 3.
``realtime-fig5``
    N = M = ``n`` (2..10), ``P[J_ij = 1] = generation`` (0.3, 0.4, 0.5), ``P_ij = 0.9``: the
    largest equal requirement ``r_i = r`` (direction all ones); the exact LP where
    ``n <= EXACT_MAX_N`` (its size grows as ``2^(n^2)`` job-pattern states), the keys left out
    above.

Every cell also re-runs the policy at the ``theta`` it found (the very run the bisection
accepted: same seed), checks it with :func:`clusteropt.verify.check_realtime_run` (interference-free
decisions, completions recounted from the recorded task outcomes) and raises when the check
fails or the recounted rates miss the requirement, so such a cell is recorded as failed.
"""

from __future__ import annotations

import functools
import json
import logging
import time
from typing import Any

import numpy as np

from clusteropt.experiments.report import ok_rows
from clusteropt.experiments.spec import Experiment, register_experiment

__all__ = ["EXACT_MAX_N", "REGION_POLICIES", "run_equal_cell", "run_region_cell"]

log = logging.getLogger(__name__)

#: Policies compared on the two-application regions (Algs. 1 and 2 first, then the baselines).
REGION_POLICIES = ("max-weight", "sqrt-greedy", "weight-greedy", "random")
#: Largest ``n`` for which ``realtime-fig5`` solves the exact LP (``n = 3``: 512 states).
EXACT_MAX_N = 3


def _instance(params: dict[str, Any]):
    from clusteropt.instances import realtime_preset

    if "generation2" in params:
        return realtime_preset("fig3", generation=float(params["generation2"]))
    if "success2" in params:
        return realtime_preset("fig4", success=float(params["success2"]))
    return realtime_preset("fig5", n=int(params["n"]), generation=float(params["generation"]))


def _direction(params: dict[str, Any]) -> np.ndarray:
    from clusteropt.online.realtime.regions import quadrant_directions

    k, i = int(params["directions"]), int(params["direction"])
    if not 0 <= i < k:
        raise ValueError(f"direction = {i}; expected an index in 0..{k - 1} of the {k} directions")
    return quadrant_directions(k)[i]


@functools.lru_cache(maxsize=32)
def _exact(params_json: str) -> tuple[float, float, float]:
    """``(theta with slack tol, theta strict, seconds)`` of the cell's setting and direction.

    Cached: the policies of one setting that run in the same cell process share one solve (and
    report its seconds).
    """
    from clusteropt.models.realtime import region_data
    from clusteropt.online.realtime.regions import exact_region

    params = json.loads(params_json)
    inst = _instance(params)
    d = _direction(params) if "direction" in params else None
    start = time.perf_counter()
    data = region_data(inst)
    slack = exact_region(inst, d, data=data, slack=float(params["tol"]))
    strict = exact_region(inst, d, data=data)
    return slack.theta, strict.theta, time.perf_counter() - start


def _verified_rates(inst, policy: str, requirement: np.ndarray, frames: int, tol: float, seed: int) -> np.ndarray:
    """Run ``policy`` against ``requirement``, check the run, and return the recounted rates.

    Raises ``AssertionError`` when the checker finds a violation or the recounted rates miss
    ``requirement - tol`` (the bisection accepted this very run, so that would be a bug).
    """
    from clusteropt.online import run_online
    from clusteropt.online.realtime.policies import make_policy
    from clusteropt.verify import check_realtime_run

    run = run_online(make_policy(policy, requirement), inst, horizon=frames, seed=seed)
    check = check_realtime_run(inst, run)
    check.raise_if_infeasible()
    rates = check.rates
    assert rates is not None  # check_realtime_run always recounts the rates
    if not (rates >= requirement - tol).all():
        raise AssertionError(
            f"{policy}: the verified rates {rates.round(4).tolist()} miss the requirement "
            f"{requirement.round(4).tolist()} - {tol} that the bisection accepted")
    return rates


def run_region_cell(params: dict[str, Any], seed: int, policy: str) -> dict[str, Any]:
    """One boundary point of a two-application region (Figs. 3, 4): ``policy`` along one direction.

    Returns ``theta`` (bisection, the paper's test), ``exact_theta`` (LP with the same slack),
    ``exact_theta_strict`` (LP: the boundary of ``R_max``), ``ratio = theta / exact_theta``,
    ``ratio_strict``, the direction ``d1``, ``d2``, the boundary point ``r1``, ``r2``
    (``theta * d``), the verified rates ``rate1``, ``rate2`` of the run at ``theta``, ``verified``,
    and ``estimate_seconds`` / ``exact_seconds`` / ``verify_seconds``.
    """
    from clusteropt.online.realtime.regions import estimate_theta

    inst = _instance(params)
    d = _direction(params)
    frames, tol = int(params["frames"]), float(params["tol"])
    start = time.perf_counter()
    theta = estimate_theta(inst, policy, d, frames=frames, tol=tol, seed=seed)
    estimate_s = time.perf_counter() - start
    exact, strict, exact_s = _exact(json.dumps(params, sort_keys=True))
    start = time.perf_counter()
    rates = _verified_rates(inst, policy, theta * d, frames, tol, seed)
    verify_s = time.perf_counter() - start
    log.debug("%s %s d=%s: theta %.4f, exact %.4f", inst.name, policy, d.round(3).tolist(), theta, exact)
    return {
        "theta": theta,
        "exact_theta": exact,
        "exact_theta_strict": strict,
        "ratio": theta / exact,
        "ratio_strict": theta / strict,
        "d1": float(d[0]),
        "d2": float(d[1]),
        "r1": theta * float(d[0]),
        "r2": theta * float(d[1]),
        "rate1": float(rates[0]),
        "rate2": float(rates[1]),
        "verified": True,
        "estimate_seconds": estimate_s,
        "exact_seconds": exact_s,
        "verify_seconds": verify_s,
    }


def run_equal_cell(params: dict[str, Any], seed: int, policy: str) -> dict[str, Any]:
    """Fig. 5: the largest equal requirement ``r`` (all ``r_i = r``) ``policy`` achieves.

    Returns ``theta`` (that ``r``), ``min_rate`` (the smallest verified rate of the run at
    ``r``), ``job_probability`` (``1 - (1 - g)^n``, the paper's explanation of the curves),
    ``verified``, ``estimate_seconds``, ``verify_seconds``; and where ``n <= EXACT_MAX_N``
    also ``exact_theta``, ``exact_theta_strict``, ``ratio``, ``exact_seconds``.
    """
    from clusteropt.online.realtime.regions import estimate_theta

    inst = _instance(params)
    n = inst.n_apps
    d = np.ones(n)
    frames, tol = int(params["frames"]), float(params["tol"])
    start = time.perf_counter()
    theta = estimate_theta(inst, policy, d, frames=frames, tol=tol, seed=seed)
    estimate_s = time.perf_counter() - start
    start = time.perf_counter()
    rates = _verified_rates(inst, policy, theta * d, frames, tol, seed)
    out: dict[str, Any] = {
        "theta": theta,
        "min_rate": float(rates.min()),
        "job_probability": float(inst.job_probability()[0]),
        "verified": True,
        "estimate_seconds": estimate_s,
        "verify_seconds": time.perf_counter() - start,
    }
    if n <= EXACT_MAX_N:
        exact, strict, exact_s = _exact(json.dumps(params, sort_keys=True))
        out.update({"exact_theta": exact, "exact_theta_strict": strict, "ratio": theta / exact,
                    "exact_seconds": exact_s})
    return out


# -- figures and tables ------------------------------------------------------------------------


def _boundaries(ok, setting: str):
    """Per setting, policy and direction: the mean (over seeds) of the boundary numbers."""
    cols = ["theta", "exact_theta", "exact_theta_strict", "ratio", "d1", "d2", "r1", "r2"]
    return ok.groupby([setting, "policy", "directions", "direction"], sort=True)[cols].mean().reset_index()


def _regions_figure(table, setting: str, label: str, title: str):
    """Each policy's boundary points next to the exact region R_max (dashed) and R_max scaled by
    the slack the estimate allows (dotted: ``exact_theta``, the largest theta the LP reaches when
    every rate may fall ``tol`` short); points between the two lines are within the slack, not
    beyond the exact region.
    """
    from matplotlib.figure import Figure

    from clusteropt.experiments.plots import label_of, policy_style

    fn = f"regions({setting})"
    ok = ok_rows(table, fn, (setting, "policy", "directions", "direction", "r1", "r2", "d1", "d2",
                              "exact_theta", "exact_theta_strict"))
    points = _boundaries(ok, setting)
    values = sorted(points[setting].unique())
    policies = list(dict.fromkeys(ok.policy))  # in the order the cells ran (the spec's)
    seeds = ok.groupby([setting, "policy", "directions", "direction"]).size()
    top = 1.05 * float(np.nanmax([points.r1.max(), points.r2.max(), points.exact_theta.max()]))
    fig = Figure(layout="constrained", figsize=(4.5 * len(values), 4.9))
    axes = fig.subplots(1, len(values), squeeze=False)[0]
    for ax, value in zip(axes, values, strict=True):
        here = points[points[setting] == value]
        exact = here.drop_duplicates(["directions", "direction"]).sort_values("direction")
        ax.plot(exact.exact_theta_strict * exact.d1, exact.exact_theta_strict * exact.d2, color="black",
                linestyle="--", linewidth=1.2, label="R_max (exact LP)")
        ax.plot(exact.exact_theta * exact.d1, exact.exact_theta * exact.d2, color="grey", linestyle=":",
                linewidth=1.2, label="R_max with the estimate's slack (tol)")
        for policy in policies:
            line = here[here.policy == policy].sort_values("direction")
            if not line.empty:
                ax.plot(line.r1, line.r2, markersize=3.5, linewidth=1.0, label=label_of(policy),
                        **(policy_style(policy) or {}))
        ax.set_xlim(0, top)
        ax.set_ylim(0, top)
        ax.set_aspect("equal", adjustable="box")
        ax.set_title(f"{label} = {value}")
        ax.set_xlabel("r_1 (completed jobs per frame)")
        ax.set_ylabel("r_2")
        ax.legend(fontsize="small", loc="lower left")
    runs = int(seeds.min()) if len(seeds) else 0
    fig.suptitle(f"{title}\n(boundary points: mean of {runs} seed{'s' if runs != 1 else ''} per direction)")
    return fig


def _area_table(table, setting: str):
    """Per setting and policy: region area over the exact region's (with slack, and strict) and the
    per-direction ratios (mean, min).  Areas need every direction; NaN when some cell is missing.
    """
    import pandas as pd

    from clusteropt.online.realtime.regions import RegionFraction, quadrant_directions

    ok = ok_rows(table, f"area({setting})", (setting, "policy", "directions", "direction", "theta",
                                               "exact_theta", "exact_theta_strict", "ratio"))
    points = _boundaries(ok, setting)
    rows = []
    for (value, policy, k), grp in points.groupby([setting, "policy", "directions"], sort=False):
        grp = grp.sort_values("direction")
        row = {setting: value, "policy": policy, "directions": int(k), "cells": len(grp),
               "area_ratio": float("nan"), "area_ratio_strict": float("nan")}
        if grp.direction.tolist() == list(range(int(k))):
            dirs = quadrant_directions(int(k))
            theta = grp.theta.to_numpy()
            row["area_ratio"] = RegionFraction(dirs, theta, grp.exact_theta.to_numpy(),
                                               grp.exact_theta_strict.to_numpy()).area_ratio
            row["area_ratio_strict"] = RegionFraction(dirs, theta, grp.exact_theta_strict.to_numpy(),
                                                      grp.exact_theta_strict.to_numpy()).area_ratio
        row["mean_ratio"] = float(grp.ratio.mean())
        row["min_ratio"] = float(grp.ratio.min())
        rows.append(row)
    return pd.DataFrame(rows)


def _fig3_regions(table):
    return _regions_figure(table, "generation2", "P[J_2j = 1]",
                           "Fig. 3: achievable regions, P[J_1j = 1] = 0.5, P_ij = 0.9")


def _fig3_areas(table):
    return _area_table(table, "generation2")


def _fig4_regions(table):
    return _regions_figure(table, "success2", "P_2j", "Fig. 4: achievable regions, P[J_ij = 1] = 0.5, P_1j = 0.9")


def _fig4_areas(table):
    return _area_table(table, "success2")


def _fig5_curves(table):
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    from clusteropt.experiments.plots import label_of, line_plot

    ok = ok_rows(table, "fig5", ("n", "generation", "policy", "theta"))
    policies = list(dict.fromkeys(ok.policy))
    fig = Figure(layout="constrained", figsize=(5.0 * len(policies), 4.2))
    axes = fig.subplots(1, len(policies), squeeze=False, sharey=True)[0]
    for ax, policy in zip(axes, policies, strict=True):
        here = ok[ok.policy == policy]
        line_plot(here, "n", "theta", hue="generation", ax=ax, title=label_of(policy),
                  xlabel="N = M (applications)", ylabel="max achievable equal requirement r")
        if "exact_theta_strict" in here.columns and here.exact_theta_strict.notna().any():
            colors = {line.get_label(): line.get_color() for line in ax.get_lines()}
            exact = here[here.exact_theta_strict.notna()]
            for k, (g, grp) in enumerate(exact.groupby("generation", sort=True)):
                ax.plot(grp.n.astype(float), grp.exact_theta_strict.astype(float), linestyle="none", marker="x",
                        markersize=8, color=colors.get(f"{g}", "black"),
                        label="R_max boundary (exact LP)" if k == 0 else None)
            ax.legend(title="generation")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    fig.suptitle("Fig. 5: maximum achievable r vs N, P_ij = 0.9")
    return fig


def _fig5_table(table):
    ok = ok_rows(table, "fig5", ("n", "generation", "policy", "theta"))
    out = (ok.pivot_table(index=["n", "generation"], columns="policy", values="theta", aggfunc="mean")
           .reset_index().rename_axis(columns=None))
    if "exact_theta_strict" in ok.columns:
        exact = ok.groupby(["n", "generation"])[["exact_theta", "exact_theta_strict"]].mean().reset_index()
        out = out.merge(exact, on=["n", "generation"], how="left")
    return out


_DIRECTIONS = 9
_QUICK_DIRECTIONS = 3

register_experiment(
    Experiment(
        name="realtime-fig3",
        run=run_region_cell,
        grid={"generation2": [0.3, 0.5], "directions": [_DIRECTIONS], "direction": list(range(_DIRECTIONS)),
              "frames": [10_000], "tol": [0.01]},
        seeds=list(range(5)),
        policies=list(REGION_POLICIES),
        description="achievable regions of Algs. 1, 2 (and baselines) vs the exact R_max, two apps, P[J_2j = 1]",
        paper="002 Fig. 3",
        root_seed=1002,
        timeout=600.0,
        quick={"grid": {"directions": [_QUICK_DIRECTIONS], "direction": list(range(_QUICK_DIRECTIONS)),
                        "frames": [2000]},
               "policies": ["max-weight", "sqrt-greedy"], "seeds": [0], "timeout": 120.0},
        figures={"regions": _fig3_regions},
        tables={"area-ratio": _fig3_areas},
    )
)

register_experiment(
    Experiment(
        name="realtime-fig4",
        run=run_region_cell,
        grid={"success2": [0.7, 0.9], "directions": [_DIRECTIONS], "direction": list(range(_DIRECTIONS)),
              "frames": [10_000], "tol": [0.01]},
        seeds=list(range(5)),
        policies=list(REGION_POLICIES),
        description="achievable regions of Algs. 1, 2 (and baselines) vs the exact R_max, two apps, P_2j",
        paper="002 Fig. 4",
        root_seed=1002,
        timeout=600.0,
        quick={"grid": {"directions": [_QUICK_DIRECTIONS], "direction": list(range(_QUICK_DIRECTIONS)),
                        "frames": [2000]},
               "policies": ["max-weight", "sqrt-greedy"], "seeds": [0], "timeout": 120.0},
        figures={"regions": _fig4_regions},
        tables={"area-ratio": _fig4_areas},
    )
)

register_experiment(
    Experiment(
        name="realtime-fig5",
        run=run_equal_cell,
        grid={"n": list(range(2, 11)), "generation": [0.3, 0.4, 0.5], "frames": [10_000], "tol": [0.01]},
        seeds=list(range(5)),
        policies=["sqrt-greedy", "max-weight"],
        description="largest equal requirement r vs N = M applications and workers (exact LP for N <= 3)",
        paper="002 Fig. 5",
        root_seed=1002,
        timeout=600.0,
        quick={"grid": {"n": [2, 3, 4], "frames": [2000]}, "seeds": [0], "timeout": 120.0},
        figures={"r-vs-n": _fig5_curves},
        tables={"r-vs-n": _fig5_table},
    )
)
