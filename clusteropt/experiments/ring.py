"""Ring partitioning experiments (paper 004): online cost against the offline optima, load, lower bound.

The paper has no experiments; these check the shape of its theorems and compare the algorithms
with the baselines.  Every cell draws its instance with :func:`~clusteropt.instances.random_ring`
from the seed the harness hands it (the same for every policy of a (params, seed): common random
numbers), runs the policy with :func:`~clusteropt.online.ring.run_ring` (same seed), verifies the
run with :func:`~clusteropt.verify.check_ring_run` (the costs reported are the checker's) and
raises when the run violates its promised capacity ``c k``, so such a cell is recorded as failed.

Ratios.  ``ratio_static`` = ALG / OPT_static and ``ratio_dynamic`` = ALG / OPT_dyn, both optima at
capacity ``k`` (:mod:`clusteropt.models.ring.offline`).  The online algorithms use ``c k`` (``c``: the
run's ``augmentation``, 2 + eps for the dynamic algorithm), so a ratio below 1 is possible and
not a bug: the theorems compare an augmented algorithm with an unaugmented optimum.  ``OPT_dyn`` is the
exact dynamic program over labellings (``dynamic_denominator = "dp"``), which fits up to ``l^n =
2^22`` labellings (n = 8 with 4 servers, n = 12 with 3); the time-expanded MILP is exact too but
slower than the DP from n = 8 on (``clusteropt.models.ring.offline``), and its LP bound is at most
``alpha n / l`` whatever the requests, so no exact dynamic ratio is reported beyond the DP's reach.
Beyond it, ``ratio_dynamic_lb`` = ALG / the window lower bound on OPT_dyn
(:func:`~clusteropt.algorithms.ring.offline.dynamic_window_bound`, ours) is at least ALG / OPT_dyn:
an upper bound on the dynamic ratio at every n.  Where the DP runs (``ring-ratio-exact``, table
``bound``) the bound is checked against OPT_dyn in every cell and its tightness is tabulated; it
loosens as n grows where the hot region is narrow (README), so ALG / bound ranks the algorithms
(one denominator per instance) but its growth in n is not theirs.
``OPT_static`` is the MILP, proved optimal in every recorded cell (``static_denominator``).  An
optimum of 0 gives no ratio (NaN), only ``excess = ALG - OPT``.

Instances.  Hot arcs are a quarter of a server wide (``hot_width = 0.25``, at least 2 edges) and
the moving hot spot moves one edge every ``4 k`` requests (``step_k = 4``): with arcs as wide as a
server (the generator's default) some cut always lies inside the hot arc, every placement pays
about the same and never migrating is nearly optimal, so no algorithm can show anything.

``ring-ratio``
    ALG / OPT_static versus n = 8 .. 64 (4 servers, 256 requests per process) for every request
    pattern, all policies at their default epsilon; ALG / OPT_dyn at n = 8, and ALG / the window
    bound (at least ALG / OPT_dyn) at every n.  Tables: the mean
    ratios per (pattern, n, policy), and the fitted growth of each policy's mean ratio against
    ``log^2 n`` and ``log^3 n`` (least squares of ``ratio ~ a + b log^p n``, the free exponent
    ``p`` of ``ratio ~ a log^p n`` and the polynomial exponent ``q`` of ``ratio ~ n^q``).
``ring-ratio-exact``
    ALG / OPT_dyn with the exact DP at n = 6, 9, 12 on 3 servers (16 requests per process), and
    the window bound / OPT_dyn (table ``bound``);
    epsilon 0.5 and the static algorithm's ``cluster_cap = 1`` keep every promised ``c k`` below
    ``n`` (with ``c >= l`` an algorithm could legally put every process on one server).

``ring-ratio-dp``
    ALG / OPT_dyn with the exact DP on every shape ``(n, l)`` it solves within the recording
    budget (``shape = "n/l"``: n = 8, 12, 16, 20 on 2 servers, 6, 9, 12 on 3, 8 on 4; 16 requests
    per process, 5 seeds), every pattern, every policy with ``dynamic-mix``, ``follow`` and the
    component-based peer ``component``.
    Tables ``exact`` (per shape: ALG / OPT_dyn, at capacity k and at the run's own ``c k``,
    ALG / OPT_static, ALG / min(never, greedy) of the same instance, OPT_static / OPT_dyn) and
    ``which`` (per pattern, every policy's mean ALG / OPT_dyn and ALG / min(never, greedy)).

``ring-load`` and ``ring-sensitivity`` draw their instances per ``trial`` (:func:`instance_seed`),
so the values of epsilon or of a knob meet the same instances.

``ring-load``
    Realised max load / k versus epsilon for the dynamic, static and greedy algorithms, next to the
    promised ``c``.
``ring-hit-the-cut``
    The "hit the cut" sequence built against the deterministic dynamic-wfa (same seed), so that run
    pays every request; the randomized algorithms and the baselines meet the same (oblivious to
    them) sequence.  Cost per request and ALG / OPT_static versus n.
``ring-cost-split``
    The static and dynamic algorithms' own split of their cost (communication, moving, merging,
    colour joins, rebalancing; initial rearrangement) on every pattern.
``ring-sensitivity``
    The parameters the paper's text lost ([?] in docs/algorithms/ring-partitioning.md): lambda, theta and c
    factors, the
    max interval length of the static algorithm; theta of the randomized line MTS.  One knob at a
    time (``knob = "name=value"``; ``"default"`` is the reference).
"""

from __future__ import annotations

import functools
import json
import logging
import math
import time
from typing import Any

import numpy as np

from clusteropt.experiments.report import ok_rows
from clusteropt.experiments.spec import Experiment, cell_seed, register_experiment

__all__ = ["ONLINE_POLICIES", "POLICIES", "ring_instance", "run_ring_cell"]

log = logging.getLogger(__name__)

#: Every policy of :mod:`clusteropt.online.ring` (the paper's two first, then the baselines).
POLICIES = ("dynamic", "static", "dynamic-soft", "dynamic-wfa", "greedy", "never", "static-best")
#: The online policies with an epsilon (``ring-load``'s policies).
ONLINE_POLICIES = ("dynamic", "dynamic-soft", "dynamic-wfa", "static", "greedy")
#: Every policy an ``epsilon`` parameter goes to.
EPSILON_POLICIES = (*ONLINE_POLICIES, "dynamic-mix", "follow", "component")
#: ``ring-ratio-dp``'s policies: every registered one, listed here so that a policy registered later
#: does not change the recorded experiment's cells.
ALL_POLICIES = ("dynamic", "dynamic-mix", "follow", "static", "dynamic-soft", "dynamic-wfa", "greedy", "never",
                "static-best", "component")
#: The parameters that make an instance (the others shape only the algorithms or the optima).
INSTANCE_KEYS = ("n", "servers", "requests_per_process", "pattern", "hot_width", "step_k")
ROOT_SEED = 4000
_REL = 1e-6


def instance_seed(params: dict[str, Any], seed: int) -> int:
    """The seed of the cell's instance.

    Without a ``trial`` parameter it is the harness's seed (shared by the policies of a (params,
    replicate), but new for every other parameter value).  With one it is
    :func:`~clusteropt.experiments.spec.cell_seed` of the :data:`INSTANCE_KEYS` and the trial, so
    the cells of one trial that differ only in ``epsilon``, ``knob`` or ``cluster_cap`` meet the
    very same instance (and share its optima), as ``broker`` experiments do for their prices.  The
    runs of those cells use it too (common random numbers): a knob that does not apply to a policy
    then reproduces its default run exactly.
    """
    if "trial" not in params:
        return int(seed)
    return cell_seed(ROOT_SEED, {k: params[k] for k in INSTANCE_KEYS if k in params}, int(params["trial"]))


def with_shape(params: dict[str, Any]) -> dict[str, Any]:
    """``params`` with a ``shape = "n/l"`` parameter spelled out as ``n`` and ``servers`` (an
    experiment over a list of shapes rather than an ``n x servers`` grid).

    >>> with_shape({"shape": "20/2", "pattern": "zipf"})["servers"]
    2
    """
    if "shape" not in params:
        return params
    n, _, servers = str(params["shape"]).partition("/")
    return {**params, "n": int(n), "servers": int(servers)}


def ring_instance(params: dict[str, Any], seed: int):
    """The cell's instance: ``random_ring(n, servers, requests_per_process * n, pattern, seed)``.

    ``n`` and ``servers`` may come as ``shape = "n/l"`` (:func:`with_shape`).  Optional params:
    ``hot_width`` (the hot arc's width as a fraction of ``k``, at least 2 edges;
    hotspot, moving-hotspot, phases) and ``step_k`` (moving-hotspot: requests per one-edge move,
    in units of ``k``).  Pattern ``hit-the-cut`` builds the sequence against ``dynamic-wfa`` with
    ``seed``.
    """
    from clusteropt.instances import random_ring
    from clusteropt.online.ring import hit_the_cut

    params = with_shape(params)
    n, servers = int(params["n"]), int(params["servers"])
    T = round(float(params["requests_per_process"]) * n)
    pattern = str(params["pattern"])
    if pattern == "hit-the-cut":
        base = random_ring(n, servers, 0, "uniform", seed=seed)
        return hit_the_cut(base, T, against="dynamic-wfa", seed=seed, **_algo_params("dynamic-wfa", params))
    k = n // servers
    options: dict[str, Any] = {}
    if "hot_width" in params and pattern in ("hotspot", "moving-hotspot", "phases"):
        options["width"] = max(2, round(float(params["hot_width"]) * k))
    if "step_k" in params and pattern == "moving-hotspot":
        options["step"] = max(1, round(float(params["step_k"]) * k))
    return random_ring(n, servers, T, pattern, seed=seed, **options)


def _algo_params(policy: str, params: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if policy in EPSILON_POLICIES and "epsilon" in params:
        out["epsilon"] = float(params["epsilon"])
    if policy == "static" and "cluster_cap" in params:
        out["cluster_cap"] = float(params["cluster_cap"])
    knob = str(params.get("knob", "default"))
    if knob != "default":
        name, _, value = knob.partition("=")
        target, _, name = name.rpartition(".")
        if target == policy or (not target and policy in ("static", "dynamic")):
            number = float(value)
            out[name] = int(number) if name == "max_interval" else number
    return out


@functools.lru_cache(maxsize=16)
def _optima(key: str, seed: int) -> dict[str, Any]:
    """Static and dynamic OPT at capacity k of the cell's instance (shared by its policies).

    ``OPT_static``: the MILP (:func:`~clusteropt.models.ring.offline.ring_static_optimum`); when it is not
    proved optimal within ``opt_time_limit`` its proved bound is used (``static_denominator =
    "bound"``).  ``OPT_dyn``: the exact DP (:func:`~clusteropt.algorithms.ring.offline.dynamic_opt_dp`)
    where its tables fit (``l^n <= 2^22`` labellings); beyond that no dynamic ratio is reported (the
    time-limited MILP's bound is near its LP bound, at most ``alpha n / l``, and says nothing).
    ``opt_dynamic_lb``: the window lower bound on OPT_dyn
    (:func:`~clusteropt.algorithms.ring.offline.dynamic_window_bound`), at every ``n``; checked
    against OPT_dyn and OPT_static where they are known.
    """
    from clusteropt.algorithms.ring.offline import dynamic_opt_dp, dynamic_window_bound
    from clusteropt.models.ring.offline import ring_static_optimum

    params = json.loads(key)
    inst = ring_instance(params, seed)
    limit = float(params.get("opt_time_limit", 300.0))
    out: dict[str, Any] = {}
    start = time.perf_counter()
    static = ring_static_optimum(inst, time_limit=limit)
    out["opt_static_seconds"] = time.perf_counter() - start
    proved = static.value if static.proven_optimal else None  # OPT_static when the MILP proved it
    if proved is not None:
        out.update(opt_static=float(proved), static_denominator="milp")
    elif static.bound is not None:
        out.update(opt_static=float(static.bound), static_denominator="bound",
                   static_incumbent=None if static.value is None else float(static.value))
    else:
        raise RuntimeError(f"{inst.name}: no bound on OPT_static within {limit} s")
    if str(params.get("opt", "both")) == "both":
        start = time.perf_counter()
        lb = dynamic_window_bound(inst)
        out.update(opt_dynamic_lb=lb.value, opt_dynamic_lb_windows=int(lb.ends.size),
                   opt_dynamic_lb_seconds=time.perf_counter() - start)
        if proved is not None and lb.value > proved * (1 + _REL) + _REL:
            raise RuntimeError(f"{inst.name}: window bound {lb.value} above OPT_static {static.value}")
        start = time.perf_counter()
        try:
            dyn = dynamic_opt_dp(inst)
        except ValueError as exc:  # the DP refuses instances its tables cannot hold
            log.info("%s: no exact OPT_dyn (%s)", inst.name, exc)
            out["dynamic_denominator"] = "none"
        else:
            out.update(opt_dynamic=float(dyn.value), dynamic_denominator="dp")
            if lb.value > dyn.value * (1 + _REL) + _REL:
                raise RuntimeError(f"{inst.name}: window bound {lb.value} above OPT_dyn {dyn.value}")
            if proved is not None and dyn.value > proved * (1 + _REL) + _REL:
                raise RuntimeError(f"{inst.name}: OPT_dyn {dyn.value} above OPT_static {static.value}")
        out["opt_dynamic_seconds"] = time.perf_counter() - start
    return out


@functools.lru_cache(maxsize=64)
def _dynamic_at(key: str, seed: int, capacity: int) -> float:
    """The exact OPT_dyn (DP) of the cell's instance at ``capacity`` (a run's own ``c k``)."""
    from clusteropt.algorithms.ring.offline import dynamic_opt_value

    return dynamic_opt_value(ring_instance(json.loads(key), seed), capacity)


def _ratio(alg: float, opt: float | None) -> float:
    return alg / opt if opt is not None and opt > 0 else float("nan")


def run_ring_cell(params: dict[str, Any], seed: int, policy: str) -> dict[str, Any]:
    """One cell: draw the instance, run ``policy``, verify, and compare with the optima.

    Params: ``n``, ``servers``, ``requests_per_process`` (T = that x n), ``pattern``, optional
    ``epsilon``, ``knob`` (``"[policy.]name=value"``: one algorithm parameter), ``opt``
    (``"both"``: static and dynamic OPT, ``"static"``, ``"none"``) and ``opt_time_limit``.

    Returns ``total``, ``communication``, ``migration``, ``max_load_over_k``, ``augmentation``,
    ``cost_per_request``, the algorithm's own split (``alg_<part>``), and with optima
    ``opt_static``, ``ratio_static``, ``opt_dynamic``, ``ratio_dynamic``, ``dynamic_denominator``,
    ``opt_dynamic_lb``, ``ratio_dynamic_lb`` (ALG / the window bound: at least ALG / OPT_dyn),
    ``excess_static``, ``excess_dynamic``; timings end in ``_seconds``.
    """
    from clusteropt.online.ring import run_ring
    from clusteropt.verify import check_ring_run

    iseed = instance_seed(params, seed)
    inst = ring_instance(params, iseed)
    start = time.perf_counter()
    run = run_ring(policy, inst, seed=iseed, **_algo_params(policy, params))
    shape = {"n": inst.n, "servers": inst.servers} if "shape" in params else {}
    run_s = time.perf_counter() - start
    start = time.perf_counter()
    check = check_ring_run(inst, run)
    verify_s = time.perf_counter() - start
    check.raise_if_infeasible()
    # a feasible check has replayed the whole run: its costs and loads are set
    assert check.communication_cost is not None and check.migration_cost is not None
    assert check.max_load_ratio is not None
    total = float(check.value)
    out: dict[str, Any] = {
        "total": total, "communication": float(check.communication_cost), "migration": float(check.migration_cost),
        "max_load_over_k": float(check.max_load_ratio), "augmentation": float(run.augmentation),
        "cost_per_request": total / max(1, inst.n_requests), "n_requests": inst.n_requests,
        **{f"alg_{k}": float(v) for k, v in run.costs.items()},
        "verified": check.feasible, "run_seconds": run_s, "verify_seconds": verify_s, **shape,
    }
    if str(params.get("opt", "none")) != "none":
        shaping = ("epsilon", "knob", "cluster_cap", "trial")
        key = json.dumps({k: v for k, v in params.items() if k not in shaping}, sort_keys=True)
        opt = _optima(key, iseed)
        out.update(opt)
        out["ratio_static"] = _ratio(total, opt["opt_static"])
        out["excess_static"] = total - opt["opt_static"]
        if "opt_dynamic" in opt:
            # OPT_dyn at the run's own capacity c k: no run may cost less (checked in every cell)
            capacity = min(inst.n, math.floor(run.augmentation * inst.k + 1e-9))
            at_ck = opt["opt_dynamic"] if capacity == inst.k else _dynamic_at(key, iseed, capacity)
            if total < at_ck * (1 - _REL) - _REL:
                raise RuntimeError(f"{policy}: cost {total} below OPT_dyn {at_ck} at its own capacity {capacity}")
            out["opt_dynamic_ck"] = at_ck
            out["ratio_dynamic_ck"] = _ratio(total, at_ck)
            out["ratio_dynamic"] = _ratio(total, opt["opt_dynamic"])
            out["excess_dynamic"] = total - opt["opt_dynamic"]
        if "opt_dynamic_lb" in opt:
            out["ratio_dynamic_lb"] = _ratio(total, opt["opt_dynamic_lb"])
        if policy == "static-best" and total < opt["opt_static"] * (1 - _REL) - _REL:
            raise RuntimeError(f"static-best cost {total} below the proved static OPT {opt['opt_static']}")
    return out


# -- tables and figures --------------------------------------------------------------------------


def _ratio_table(table):
    ok = ok_rows(table, "ring-ratio", ("pattern", "n", "policy", "ratio_static", "ratio_dynamic",
                                       "ratio_dynamic_ck", "ratio_dynamic_lb", "opt_dynamic_lb"))
    return ok.groupby(["pattern", "n", "policy"], sort=True).agg(
        ratio_static=("ratio_static", "mean"), ratio_dynamic=("ratio_dynamic", "mean"),
        ratio_dynamic_max=("ratio_dynamic", "max"), ratio_dynamic_ck=("ratio_dynamic_ck", "mean"),
        total=("total", "mean"), opt_static=("opt_static", "mean"),
        opt_dynamic=("opt_dynamic", "mean"), ratio_dynamic_lb=("ratio_dynamic_lb", "mean"),
        opt_dynamic_lb=("opt_dynamic_lb", "mean"),
        dp_denominators=("dynamic_denominator", lambda s: int((s == "dp").sum())),
        max_load_over_k=("max_load_over_k", "max"), cells=("total", "size")).reset_index()


def _versus_baseline(ok):
    """``ok`` with ``vs_baseline`` = total / min(never, greedy) on the same instance (NaN without both)."""
    keys = [c for c in ("shape", "n", "servers", "pattern", "seed") if c in ok.columns]
    base = ok[ok.policy.isin(["never", "greedy"])].groupby(keys).total.min().rename("baseline")
    out = ok.merge(base.reset_index(), on=keys, how="left")
    return out.assign(vs_baseline=out.total / out.baseline)


def _exact_table(table):
    """Per (pattern, servers, n, policy): ALG / OPT_dyn (at k and at the run's c k), ALG / OPT_static,
    ALG / min(never, greedy), and OPT_static / OPT_dyn, over the seeds (``ring-ratio-dp``).
    """
    ok = ok_rows(table, "ring-ratio-dp", ("pattern", "shape", "policy", "total", "ratio_dynamic"))
    ok = _versus_baseline(ok).assign(static_over_dynamic=lambda d: d.opt_static / d.opt_dynamic)
    return ok.groupby(["pattern", "servers", "n", "policy"], sort=True).agg(
        ratio_dynamic=("ratio_dynamic", "mean"), ratio_dynamic_max=("ratio_dynamic", "max"),
        ratio_dynamic_ck=("ratio_dynamic_ck", "mean"), ratio_static=("ratio_static", "mean"),
        vs_baseline=("vs_baseline", "mean"), static_over_dynamic=("static_over_dynamic", "mean"),
        augmentation=("augmentation", "max"), cells=("total", "size")).reset_index()


def _which_table(table):
    """Per (pattern, policy), over every shape and seed of ``ring-ratio-dp``: mean and largest
    ALG / OPT_dyn, mean ALG / min(never, greedy), and the rank of the mean ratio in the pattern.
    """
    ok = _versus_baseline(ok_rows(table, "ring-ratio-dp", ("pattern", "shape", "policy", "total",
                                                           "ratio_dynamic")))
    out = ok.groupby(["pattern", "policy"], sort=True).agg(
        ratio_dynamic=("ratio_dynamic", "mean"), ratio_dynamic_max=("ratio_dynamic", "max"),
        vs_baseline=("vs_baseline", "mean"), vs_baseline_max=("vs_baseline", "max"),
        cells=("total", "size")).reset_index()
    return out.assign(rank=out.groupby("pattern").ratio_dynamic.rank(method="min").astype(int))


def _bound_table(table):
    """How tight the window bound is where OPT_dyn is exact: bound / OPT_dyn per (pattern, n)."""
    ok = ok_rows(table, "ring-ratio-exact", ("pattern", "n", "opt_dynamic", "opt_dynamic_lb"))
    ok = ok[ok.dynamic_denominator == "dp"].drop_duplicates(["pattern", "n", "seed"])
    ok = ok.assign(bound_over_opt=ok.opt_dynamic_lb / ok.opt_dynamic)
    return ok.groupby(["pattern", "n"], sort=True).agg(
        bound_over_opt=("bound_over_opt", "mean"), bound_over_opt_min=("bound_over_opt", "min"),
        bound_over_opt_max=("bound_over_opt", "max"), opt_dynamic=("opt_dynamic", "mean"),
        opt_dynamic_lb=("opt_dynamic_lb", "mean"), instances=("opt_dynamic", "size")).reset_index()


def fit_polylog(n, ratio) -> dict[str, float]:
    """Fit a policy's mean ratio against n: ``a + b log^2 n``, ``a + b log^3 n`` and ``a log^p n``.

    Returns the residual sums of squares of the first two (``rss_log2``, ``rss_log3``), their
    slopes ``b``, and the free exponent ``p`` (least squares of ``ln ratio`` on ``ln ln n``), next to
    the polynomial exponent ``q`` of ``ratio ~ n^q``.

    >>> n = np.array([8, 16, 32, 64.0])
    >>> fit = fit_polylog(n, 2 * np.log(n) ** 2)
    >>> round(fit["p"], 6), fit["rss_log2"] < 1e-12
    (2.0, True)
    """
    n = np.asarray(n, dtype=float)
    y = np.asarray(ratio, dtype=float)
    keep = np.isfinite(y) & (y > 0)
    n, y = n[keep], y[keep]
    out: dict[str, float] = {"points": float(n.size)}
    if n.size < 2:
        return out | {"p": float("nan"), "q": float("nan")}
    for power in (2, 3):
        x = np.log(n) ** power
        coef, res, *_ = np.polyfit(x, y, 1, full=True)
        out[f"b_log{power}"] = float(coef[0])
        out[f"rss_log{power}"] = float(res[0]) if len(res) else 0.0
    out["p"] = float(np.polyfit(np.log(np.log(n)), np.log(y), 1)[0])
    out["q"] = float(np.polyfit(np.log(n), np.log(y), 1)[0])
    return out


def _growth_table(table):
    import pandas as pd

    ok = ok_rows(table, "ring-ratio", ("pattern", "n", "policy", "ratio_dynamic", "ratio_dynamic_lb"))
    rows = []
    for (pattern, policy), g in ok.groupby(["pattern", "policy"], sort=True):
        for column in ("ratio_static", "ratio_dynamic", "ratio_dynamic_lb"):
            mean = g.groupby("n")[column].mean()
            fit = fit_polylog(mean.index.to_numpy(), mean.to_numpy())
            rows.append({"pattern": pattern, "policy": policy, "ratio": column, **fit})
    return pd.DataFrame(rows)


def _ratio_figure(column: str, label: str):
    def plot(table):
        from matplotlib.figure import Figure

        from clusteropt.experiments.plots import line_plot

        ok = ok_rows(table, "ring-ratio", ("pattern", "n", "policy", column))
        patterns = sorted(ok.pattern.unique())
        cols = min(3, len(patterns))
        rows = math.ceil(len(patterns) / cols)
        fig = Figure(layout="constrained", figsize=(5.0 * cols, 3.8 * rows))
        axes = np.atleast_1d(fig.subplots(rows, cols)).ravel()
        for ax, pattern in zip(axes, patterns):
            line_plot(ok[ok.pattern == pattern], "n", column, ax=ax, logx=True, logy=True, ci=None,
                      xlabel="n (processes)", ylabel=label, title=pattern)
            ax.axhline(1.0, color="black", linestyle=":", linewidth=1.0)
        for ax in axes[len(patterns):]:
            ax.set_visible(False)
        ns = sorted(ok.loc[ok[column].notna(), "n"].unique())
        where = "vs n" if len(ns) != 1 else f"at n = {int(ns[0])}, the only n with this optimum"
        fig.suptitle(f"{label} {where} (mean over seeds; OPT at capacity k, each online run at the load "
                     "its legend names)")
        return fig

    plot.__name__ = plot.__qualname__ = f"_ratio_figure_{column}"
    return plot


def _load_figure(table):
    from clusteropt.experiments.plots import line_plot

    ok = ok_rows(table, "ring-load", ("epsilon", "policy", "max_load_over_k", "augmentation"))
    fig = line_plot(ok, "epsilon", "max_load_over_k", ci=None, xlabel="epsilon",
                    ylabel="max server load / k (realised)",
                    title="realised max load vs epsilon (dotted: promised c)")
    ax = fig.axes[0]
    for _, g in ok.groupby("policy"):
        promised = g.groupby("epsilon").augmentation.max()
        ax.plot(promised.index, promised.to_numpy(), linestyle=":", linewidth=1.0, color="grey")
    return fig


def _load_table(table):
    ok = ok_rows(table, "ring-load", ("epsilon", "pattern", "policy", "max_load_over_k", "augmentation"))
    return ok.groupby(["pattern", "epsilon", "policy"], sort=True).agg(
        max_load_over_k=("max_load_over_k", "max"), mean_load_over_k=("max_load_over_k", "mean"),
        promised=("augmentation", "max"), cost_per_request=("cost_per_request", "mean"),
        cells=("total", "size")).reset_index()


def _hit_figure(table):
    from matplotlib.figure import Figure

    from clusteropt.experiments.plots import line_plot

    ok = ok_rows(table, "ring-hit-the-cut", ("n", "policy", "cost_per_request", "ratio_static"))
    fig = Figure(layout="constrained", figsize=(11.0, 4.2))
    left, right = fig.subplots(1, 2)
    line_plot(ok, "n", "cost_per_request", ax=left, logx=True, ci=None, xlabel="n",
              ylabel="cost per request", title="hit-the-cut (built against dynamic-wfa)")
    line_plot(ok, "n", "ratio_static", ax=right, logx=True, logy=True, ci=None, xlabel="n",
              ylabel="ALG / OPT_static", title="against the static optimum at capacity k")
    return fig


def _hit_table(table):
    ok = ok_rows(table, "ring-hit-the-cut", ("n", "policy", "cost_per_request", "ratio_static"))
    return ok.groupby(["n", "policy"], sort=True).agg(
        cost_per_request=("cost_per_request", "mean"), ratio_static=("ratio_static", "mean"),
        ratio_static_max=("ratio_static", "max"), cells=("total", "size")).reset_index()


def _split_table(table):
    ok = ok_rows(table, "ring-cost-split", ("pattern", "policy", "total"))
    parts = sorted(c for c in ok.columns if c.startswith("alg_"))
    return ok.groupby(["pattern", "policy"], sort=True)[["total", "communication", "migration", *parts]] \
        .mean().reset_index()


def _split_figure(table):
    from matplotlib.figure import Figure

    data = _split_table(table)
    parts = [c for c in data.columns if c.startswith("alg_") and c != "alg_communication"
             and data[c].fillna(0).abs().sum() > 0]
    fig = Figure(layout="constrained", figsize=(11.0, 4.5))
    ax = fig.subplots()
    labels = [f"{r.policy}\n{r.pattern}" for r in data.itertuples()]
    x = np.arange(len(data))
    bottom = data["communication"].to_numpy(dtype=float)
    ax.bar(x, bottom, label="communication (verified)")
    for part in parts:
        values = data[part].fillna(0).to_numpy(dtype=float)
        ax.bar(x, values, bottom=bottom, label=part.removeprefix("alg_") + " (migrations)")
        bottom = bottom + values
    ax.set_xticks(x, labels, rotation=90, fontsize=7)
    ax.set_ylabel("mean cost")
    ax.set_title("cost split (the algorithms' own accounting of their migrations)")
    ax.legend(fontsize=7)
    return fig


def _sensitivity_table(table):
    ok = ok_rows(table, "ring-sensitivity", ("knob", "pattern", "policy", "total"))
    return ok.groupby(["policy", "pattern", "knob"], sort=True).agg(
        total=("total", "mean"), ratio_static=("ratio_static", "mean"), max_load_over_k=("max_load_over_k", "max"),
        cells=("total", "size")).reset_index()


PATTERNS = ["uniform", "hotspot", "moving-hotspot", "zipf", "phases"]

register_experiment(
    Experiment(
        name="ring-ratio",
        run=run_ring_cell,
        grid={"n": [8, 16, 32, 64], "servers": [4], "requests_per_process": [256.0], "pattern": PATTERNS,
              "hot_width": [0.25], "step_k": [4.0], "opt": ["both"], "opt_time_limit": [300.0]},
        seeds=[0, 1, 2, 3, 4],
        policies=list(POLICIES),
        description="ALG / OPT_static (exact MILP) vs n = 8..64 for every request pattern; ALG / OPT_dyn at "
                    "n = 8; ALG / a lower bound on OPT_dyn at every n",
        paper="004 Thms 2.1, 2.2",
        root_seed=4000,
        timeout=1800.0,
        quick={"grid": {"n": [8, 16], "requests_per_process": [16.0], "pattern": ["uniform", "moving-hotspot"],
                        "opt_time_limit": [60.0]},
               "seeds": [0], "timeout": 120.0},
        figures={"ratio-dynamic": _ratio_figure("ratio_dynamic", "ALG / OPT_dyn"),
                 "ratio-dynamic-bound": _ratio_figure("ratio_dynamic_lb", "ALG / window bound (>= ALG / OPT_dyn)"),
                 "ratio-static": _ratio_figure("ratio_static", "ALG / OPT_static")},
        tables={"ratio": _ratio_table, "growth": _growth_table},
    )
)

register_experiment(
    Experiment(
        name="ring-ratio-exact",
        run=run_ring_cell,
        grid={"n": [6, 9, 12], "servers": [3], "requests_per_process": [16.0], "pattern": PATTERNS,
              "hot_width": [0.25], "step_k": [4.0], "epsilon": [0.5], "cluster_cap": [1.0], "opt": ["both"],
              "opt_time_limit": [300.0]},
        seeds=[0, 1, 2, 3, 4],
        policies=list(POLICIES),
        description="ALG / OPT_dyn with the exact DP over labellings, n = 6, 9, 12 on 3 servers",
        paper="004 Thm 2.1",
        root_seed=4000,
        timeout=1800.0,
        quick={"grid": {"n": [6, 9], "pattern": ["uniform", "phases"], "opt_time_limit": [60.0]},
               "seeds": [0], "timeout": 120.0},
        figures={"ratio-dynamic": _ratio_figure("ratio_dynamic", "ALG / OPT_dyn"),
                 "ratio-static": _ratio_figure("ratio_static", "ALG / OPT_static")},
        tables={"ratio": _ratio_table, "growth": _growth_table, "bound": _bound_table},
    )
)

register_experiment(
    Experiment(
        name="ring-ratio-dp",
        run=run_ring_cell,
        grid={"shape": ["8/2", "12/2", "16/2", "20/2", "6/3", "9/3", "12/3", "8/4"],
              "requests_per_process": [16.0], "pattern": PATTERNS, "hot_width": [0.25], "step_k": [4.0],
              "epsilon": [0.5], "cluster_cap": [1.0], "opt": ["both"], "opt_time_limit": [300.0]},
        seeds=[0, 1, 2, 3, 4],
        policies=list(ALL_POLICIES),
        description="ALG / OPT_dyn with the exact DP on every shape it solves in the budget (n = 8..20 on 2 "
                    "servers, 6..12 on 3, 8 on 4), every policy",
        paper="004 Thm 2.1",
        root_seed=4000,
        timeout=3600.0,
        quick={"grid": {"shape": ["8/2", "6/3"], "pattern": ["uniform", "phases"], "opt_time_limit": [60.0]},
               "seeds": [0], "timeout": 120.0},
        tables={"exact": _exact_table, "which": _which_table},
    )
)

register_experiment(
    Experiment(
        name="ring-load",
        run=run_ring_cell,
        grid={"n": [256], "servers": [8], "requests_per_process": [100.0],
              "pattern": ["uniform", "moving-hotspot"], "hot_width": [0.25], "step_k": [4.0],
              "epsilon": [0.25, 0.5, 1.0, 1.5], "trial": list(range(5)), "opt": ["none"]},
        seeds=[0],
        policies=list(ONLINE_POLICIES),
        description="realised max load / k vs epsilon (promised c: 2 + eps dynamic, the static bound, "
                    "1 + eps greedy)",
        paper="004 Lemma 3.1, Sec. 4.2",
        root_seed=4000,
        timeout=1200.0,
        quick={"grid": {"n": [64], "requests_per_process": [20.0], "epsilon": [0.5, 1.5], "trial": [0]},
               "timeout": 120.0},
        figures={"load": _load_figure},
        tables={"load": _load_table},
    )
)

register_experiment(
    Experiment(
        name="ring-hit-the-cut",
        run=run_ring_cell,
        grid={"n": [16, 32, 64, 128, 256], "servers": [4], "requests_per_process": [20.0],
              "pattern": ["hit-the-cut"], "opt": ["static"], "opt_time_limit": [300.0]},
        seeds=list(range(5)),
        policies=list(POLICIES),
        description="randomized vs deterministic under the hit-the-cut sequence built against dynamic-wfa",
        paper="004 Sec. 1 (deterministic lower bound), Lemma 4.1",
        root_seed=4000,
        timeout=1800.0,
        quick={"grid": {"n": [16, 32], "requests_per_process": [5.0], "opt_time_limit": [60.0]}, "seeds": [0],
               "timeout": 120.0},
        figures={"hit-the-cut": _hit_figure},
        tables={"hit-the-cut": _hit_table},
    )
)

register_experiment(
    Experiment(
        name="ring-cost-split",
        run=run_ring_cell,
        grid={"n": [256], "servers": [8], "requests_per_process": [100.0], "pattern": PATTERNS,
              "hot_width": [0.25], "step_k": [4.0], "opt": ["none"]},
        seeds=list(range(5)),
        policies=["static", "dynamic", "dynamic-soft", "dynamic-wfa", "greedy"],
        description="the algorithms' cost split: communication, moving, merging, colour joins, rebalancing",
        paper="004 Secs. 3, 4.2",
        root_seed=4000,
        timeout=1200.0,
        quick={"grid": {"n": [64], "requests_per_process": [20.0], "pattern": ["uniform", "phases"]},
               "seeds": [0], "timeout": 120.0},
        figures={"split": _split_figure},
        tables={"split": _split_table},
    )
)

register_experiment(
    Experiment(
        name="ring-sensitivity",
        run=run_ring_cell,
        grid={"n": [64], "servers": [4], "requests_per_process": [64.0], "pattern": ["uniform", "phases"],
              "hot_width": [0.25], "trial": list(range(5)), "opt": ["static"], "opt_time_limit": [300.0],
              "knob": ["default", "static.lam=0.6", "static.lam=0.95", "static.theta_factor=0.5",
                       "static.theta_factor=2", "static.c_factor=0.5", "static.c_factor=2",
                       "static.max_interval=8", "static.cluster_cap=1", "static.growth=4",
                       "dynamic-soft.theta=4", "dynamic-soft.theta=96"]},
        seeds=[0],
        policies=["static", "dynamic-soft"],
        description="sensitivity to the parameters the paper's text lost "
                    "([?] in docs/algorithms/ring-partitioning.md), one at a time",
        paper="004 (Secs. 3-4; docs/algorithms/ring-partitioning.md A2-A4)",
        root_seed=4000,
        timeout=1200.0,
        quick={"grid": {"n": [16], "pattern": ["uniform"], "knob": ["default", "static.lam=0.9"], "trial": [0],
                        "opt_time_limit": [60.0]}, "seeds": [0], "timeout": 120.0},
        tables={"sensitivity": _sensitivity_table},
    )
)
