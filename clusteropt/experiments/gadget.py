"""GADGET experiments (paper 000, Sec. VI "Empirical studies", Figs. 4-7) and the competitive ratio.

``gadget-utility`` (Fig. 4)
    Total utility (DDLJS objective, sigmoid utility of Sec. VI-1) against the number of jobs on
    the ``"paper"`` preset (50-server fat-tree, T = 200, bursty arrivals standing in for the
    Google trace): GADGET with the greedy per-slot solver (``gadget``) and with Alg. 2
    (``gadget-lp-rs-mde``), and both as the paper writes them (``gadget-nofill``: Alg. 1 without
    the work-conserving fill; ``gadget-lp-rs-mde-paper``: no fill and Alg. 2's paper rounding,
    whose capacity violations the cell counts: ``capacity_violations``, ``max_load_ratio``, and
    ``verified`` False), against FIFO, DRF and LAS (Sec. VI-2).  Besides the verified
    ``total_utility`` a cell reports ``utility_bound = sum_i mu_i(zeta_i budget_i)``, the
    utility of every job run to its whole budget, the tighter ``alone_bound``
    (:meth:`~clusteropt.instances.gadget.instance.GadgetInstance.alone_bound`: each job alone on the
    cluster from its arrival to the horizon), the tighter still ``pooled_bound``
    (:func:`pooled_bound`: an LP that sees the cluster's capacity), all upper bounds on any
    schedule, and the fractions ``utility_fraction``, ``alone_fraction`` and ``pooled_fraction``.
    Where GADGET and a baseline both reach ``alone_bound`` neither can beat the other.
    ``gadget-lp-rs-mde`` solves two LPs a slot and is the slow policy (each cell records its
    ``run_seconds``; in the record made at commit ``9a76e52``, two cells at a time on 2 cores:
    6-7 s at 100 jobs, 19-20 s at 300, 33-35 s at 500, 67-81 s at 1000; the greedy ``gadget``
    2-53 s, the baselines 0.5-6.3 s; 2,179 s for the 175 cells), and runs on the whole grid of
    :data:`UTILITY_JOBS`; the quick variant runs 20 and 40 jobs on a 40-slot horizon.
``gadget-utility-settings`` (Fig. 4 where scheduling matters; the package's settings)
    With the paper's sigmoid ranges (``lambda_3`` of 300-3000 iterations, a few worker-slots)
    every sensible policy reaches the alone bound.  This experiment runs the same cells and
    policies on :data:`SETTINGS_JOBS` jobs, 5 seeds, under ``sqrt`` and ``log`` (concave: every
    worker-slot counts, and the capacity binds) and ``"sigmoid-loaded"``
    (:func:`loaded_sigmoid`: the paper's sigmoid with ``lambda_3 = u_i zeta_i F_i``, ``u_i``
    uniform in :data:`LOADED_SHARE`, so a job reaches its inflection only after 2-15 % of its
    budget, hundreds of worker-slots, and the cluster cannot bring every job there).  The loaded
    setting is the package's own, not the paper's.  The figure shows each policy's utility over
    ``pooled_bound``, with the alone bound for comparison.  LP-RS-MDE solves its two LPs over
    every active job with sqrt / log gains: these cells take 10-15 minutes each on a
    2-core machine, hence 100 jobs only.  The quick variant runs 12 jobs on 20 slots.
``gadget-capacity`` (Figs. 5 and 6)
    The *embedded ratio*: per slot, the jobs with at least one worker over the *active* jobs
    (arrived, worker-slot budget left), averaged over the slots with an active job; GADGET
    (greedy slot solver), three trials (``trial``).  ``resource = "node"`` scales the GPUs,
    ``"edge"`` the bandwidth, to ``units``, and the other resource to ``held_units`` (1: both
    sweeps pass through the same cluster at ``units = 1``; as drawn, the paper's cluster has
    187.5 GPUs = 1.9 node units and rack-level links of 1700 Gbps = 8.5 edge units on average,
    where every job fits on one server and the bandwidth is never used).  One unit is the
    paper's "GPU = 100, bandwidth = 200 Gbps", scaled exactly so (:func:`scale_cluster`):

    * node: every server's GPU count is multiplied by ``100 units / (total GPUs)`` and rounded to
      an integer by the largest-remainder method, so the cluster holds exactly ``round(100 units)``
      GPUs, spread over the servers in proportion to the drawn counts (small units leave some
      servers with none);
    * edge: every link's bandwidth (server-rack and rack-core) is multiplied by ``200 units /
      (mean rack-core link bandwidth)``, so the rack-level links average ``200 units`` Gbps and
      the server links keep their drawn ratio to them.

    The cell also reports ``multi_server_share`` (embedded job-slots whose ring spans two or more
    servers), ``workers_per_job`` (per embedded job-slot) and ``gpu_utilization``: a job needs
    one worker on one server, which takes no bandwidth, to count as embedded, and GADGET's greedy
    falls back to smaller rings, so bandwidth changes how jobs are embedded far more than whether.

    The instance of a trial is the same for every ``resource`` and ``units`` (only the cluster's
    capacities change): its seed is :func:`~clusteropt.experiments.spec.cell_seed` of
    ``(n_jobs, horizon, utility)`` and ``trial``, not the seed the harness hands the cell (which
    depends on every parameter).  The experiment therefore has one replicate seed and the three
    trials as a parameter.
``gadget-slot-ratio`` (Fig. 7)
    GADGET run with a per-slot solver (policy ``gadget-lp-rs-mde``: Alg. 2, or ``gadget``: the
    greedy; and the paper-literal ``gadget-lp-rs-mde-paper`` and ``gadget-nofill``, whose slot
    gain is that of problem (10)'s solution alone) on the ``"small"`` preset (8 servers,
    T = 20); at every slot with an active job the slot's G-VNE ILP (12)-(19)
    (:func:`~clusteropt.models.gadget.gvne.build_gvne`) is solved for the same ``z_{t-1}`` with HiGHS
    (relative gap 0, ``ilp_time_limit`` seconds).  The ILP's
    solution is read back, checked with :func:`~clusteropt.verify.check_gadget_allocation` and
    its gain recomputed exactly (:func:`~clusteropt.rounding.gadget.slot_gain`); ``ratio`` = the
    policy's slot gain / that optimum, over the slots where the ILP was proved optimal with an
    optimum of at least :data:`MIN_OPTIMUM` (the rest are counted: ``slots_not_optimal``,
    ``slots_negligible``).  The threshold is needed because sigmoid gains far below the
    inflection underflow (1e-58 at the first slots) and HiGHS treats objective coefficients near
    1e-9 as zero, so a "ratio" of such slots measures the solver's tolerances.  Utilities:
    the paper's sigmoid and, as an extra grid value, ``sqrt``, whose gains never vanish (with the
    sigmoid most early slots have an optimum of about 0).  ``gadget-lp-rs-mde`` cells also report
    ``drawn_ratio_*`` (Alg. 2's rounding alone, before the work-conserving greedy fill of the
    scheduler) and ``greedy_ratio_*`` (the greedy slot solver at the same slot states).
``gadget-slot-ratio-paper`` (Fig. 7 at the paper's scale)
    The same cells on the ``"paper"`` preset (50-server fat-tree; 40, 60 and 100 jobs arriving
    over 20 slots), LP-RS-MDE only, default and paper rounding (its cells report the rounding
    alone and the greedy at the same slot states too; an allocation of the paper rounding that
    overloads a capacity may gain more than the ILP optimum, counted in ``slots_above_one``); the
    ILP gets ``ilp_time_limit`` = 120 s a slot and a slot it does not prove optimal is counted
    in ``slots_not_optimal``, not in the ratios.
``gadget-competitive`` (Theorem 10)
    The empirical competitive ratio on ``"tiny"`` instances (4 servers, T = 4): GADGET's
    verified total utility with the greedy, exact and LP-RS-MDE slot solvers over the offline
    DDLJS optimum (:func:`~clusteropt.models.gadget.ddljs.ddljs_optimum`, checked with
    :func:`~clusteropt.verify.check_gadget_schedule`), next to Theorem 10's ``1 / (3 Gamma + 1)``
    (``Gamma = max_i ceil(q_i)`` at ``z = 0``, :func:`~clusteropt.models.gadget.gvne.worker_bound`).
    Utilities sigmoid, sqrt and log.  An instance whose optimum is below :data:`MIN_OPTIMUM`
    (with the sigmoid every job can be so far below its inflection that all utilities are about
    1e-20, and the MILP's "optimum" is then an arbitrary schedule) is ``degenerate``; its ratio
    is left empty.

Every schedule and allocation a cell reports is verified; a cell whose schedule fails the
checker raises (the harness records it as failed) rather than reporting a number.  The one
exception is the capacity violations of the paper rounding (:data:`PAPER_ROUNDING_POLICIES`),
which are counted and reported, with ``verified`` False.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import logging
import math
import time
from typing import Any

import numpy as np

from clusteropt.experiments.report import ok_rows
from clusteropt.experiments.spec import Experiment, register_experiment

__all__ = [
    "CAPACITY_ROOT_SEED",
    "GADGET_POLICIES",
    "LOADED_SHARE",
    "LP_RS_MDE_ROUTE",
    "MIN_OPTIMUM",
    "PAPER_ROUNDING_POLICIES",
    "UTILITY_JOBS",
    "UTILITY_POLICIES",
    "embedded_stats",
    "loaded_sigmoid",
    "make_gadget_policy",
    "pooled_bound",
    "run_capacity_cell",
    "run_competitive_cell",
    "run_slot_ratio_cell",
    "run_utility_cell",
    "scale_cluster",
    "utility_instance",
]

log = logging.getLogger(__name__)

#: LP-RS-MDE's route in these experiments, named: the paper's (Alg. 2 lines 3-6 in its order;
#: :data:`clusteropt.rounding.gadget.PAPER_ROUTE`), with which every recorded cell was made.  The
#: policy's default ``"auto"`` takes another route from 16 servers on (the same LP optima, possibly
#: another optimal vertex and so another rounding), so these policies do not rely on it.
LP_RS_MDE_ROUTE = {"embed_route": "lp", "select_route": "full"}
#: Policy names of these experiments -> (``make_policy`` name, options).
GADGET_POLICIES: dict[str, tuple[str, dict[str, Any]]] = {
    "gadget": ("gadget", {"slot_solver": "greedy"}),
    "gadget-exact": ("gadget", {"slot_solver": "exact", "time_limit": 60.0}),
    "gadget-lp-rs-mde": ("gadget", {"slot_solver": "lp-rs-mde", **LP_RS_MDE_ROUTE}),
    # paper-literal: Alg. 1 without the work-conserving fill; Alg. 1 + Alg. 2 both as written
    "gadget-nofill": ("gadget", {"slot_solver": "greedy", "fill": "none"}),
    "gadget-lp-rs-mde-nofill": ("gadget", {"slot_solver": "lp-rs-mde", "fill": "none", **LP_RS_MDE_ROUTE}),
    "gadget-lp-rs-mde-paper": ("gadget", {"slot_solver": "lp-rs-mde", "rounding": "paper", "fill": "none",
                                          **LP_RS_MDE_ROUTE}),
    "fifo": ("fifo", {}),
    "drf": ("drf", {}),
    "las": ("las", {}),
}
#: Slot optima and offline optima below this are not divided by (module docstring); the
#: sigmoid priorities ``lambda_1`` are 1 .. 100, so 0.01 is a hundredth of the smallest.
MIN_OPTIMUM = 0.01
#: Root of the instance seeds of ``gadget-capacity`` (one instance per trial, every capacity).
CAPACITY_ROOT_SEED = 1005
#: Job counts of ``gadget-utility`` (Fig. 4; the paper's axis runs to about 1000 jobs).
UTILITY_JOBS = (100, 200, 300, 500, 1000)
#: Job counts of ``gadget-utility-settings`` (LP-RS-MDE with sqrt / log gains solves LPs over every
#: active job each slot: the slow cells).
SETTINGS_JOBS = (100,)
#: The policies of Fig. 4 (``gadget-utility`` and ``gadget-utility-settings``): GADGET with either slot
#: solver, default and as the paper writes them, and the FIFO / DRF / LAS baselines.
UTILITY_POLICIES = ("gadget", "gadget-lp-rs-mde", "gadget-nofill", "gadget-lp-rs-mde-paper", "fifo", "drf", "las")
#: ``"sigmoid-loaded"`` (the package's setting, not the paper's): ``lambda_3 = u_i zeta_i F_i`` with
#: ``u_i`` uniform in this range, so a job reaches its inflection after 2-15 % of its budget.
LOADED_SHARE = (0.02, 0.15)
#: Spawn key of the ``u_i`` draws of :func:`loaded_sigmoid` (apart from the instance's own draws).
LOADED_STREAM = 19
#: Most hull edges per job in :func:`pooled_bound`'s objective rows.
POOLED_LINES = 64
#: Policies of these experiments whose rounding may overload capacities (Alg. 2 lines 7-9): their
#: capacity violations are counted and reported, every other violation still fails the cell.
PAPER_ROUNDING_POLICIES = frozenset({"gadget-lp-rs-mde-paper"})


def make_gadget_policy(policy: str):
    """The online policy named ``policy`` (a key of :data:`GADGET_POLICIES`)."""
    from clusteropt.online.gadget import make_policy

    if policy not in GADGET_POLICIES:
        raise ValueError(f"policy = {policy!r}; expected one of {', '.join(GADGET_POLICIES)}")
    name, options = GADGET_POLICIES[policy]
    return make_policy(name, **options)


def _incumbent_slots(run) -> int:
    """Slots whose exact slot ILP stopped at its time limit and kept the incumbent (``gadget-exact``)."""
    return sum(d.get("termination") not in (None, "OPTIMAL") for d in run.slot_info)


def _verified_run(inst, policy: str, seed: int):
    """Run ``policy`` over the instance's horizon and check the schedule; raise when it fails,
    except for the capacity violations of a policy of :data:`PAPER_ROUNDING_POLICIES`.

    Returns ``(run, check, run_seconds, verify_seconds)``.
    """
    from clusteropt.online import run_online
    from clusteropt.online.gadget import CAPACITY_CONSTRAINTS
    from clusteropt.verify import check_gadget_schedule

    start = time.perf_counter()
    run = run_online(make_gadget_policy(policy), inst, horizon=inst.horizon, seed=seed)
    run_s = time.perf_counter() - start
    start = time.perf_counter()
    check = check_gadget_schedule(inst, run.schedule)
    verify_s = time.perf_counter() - start
    allowed = CAPACITY_CONSTRAINTS if policy in PAPER_ROUNDING_POLICIES else ()
    if any(v.constraint not in allowed for v in check.violations):
        raise RuntimeError(f"{policy} on {inst.name}: the schedule failed verification "
                           f"({check.n_violations} violations): {'; '.join(map(str, check.violations[:3]))}")
    if not math.isclose(check.total_utility, run.total_utility, rel_tol=1e-9, abs_tol=1e-9):
        raise RuntimeError(f"{policy} on {inst.name}: the run reports utility {run.total_utility}, "
                           f"the checker recounts {check.total_utility}")
    return run, check, run_s, verify_s


def _utility_bound(inst) -> float:
    """``sum_i mu_i(zeta_i budget_i)``: every job run to its whole budget (an upper bound)."""
    return float(np.asarray(inst.utility_of(inst.budget), dtype=float).sum())


# -- Fig. 4: total utility vs the number of jobs ---------------------------------------------------


@functools.lru_cache(maxsize=8)
def _pooled(params_json: str, seed: int) -> dict[str, Any]:
    """:func:`pooled_bound` of a cell's instance, shared by the policies of one (params, seed)."""
    return pooled_bound(utility_instance(json.loads(params_json), seed))


def run_utility_cell(params: dict[str, Any], seed: int, policy: str) -> dict[str, Any]:
    """Fig. 4: one policy on the cell's instance (:func:`utility_instance`: the ``"paper"`` preset
    with ``n_jobs`` jobs, ``horizon`` and ``utility``, or the loaded sigmoid).

    Returns ``total_utility`` (the checker's recount), the upper bounds ``utility_bound``,
    ``alone_bound`` and ``pooled_bound`` (:func:`pooled_bound`) with ``utility_fraction``,
    ``alone_fraction`` and ``pooled_fraction``, ``verified``, ``capacity_violations``,
    ``overloaded_slots`` and ``max_load_ratio``
    (:func:`~clusteropt.online.gadget.capacity_overload`: nonzero only for the paper rounding,
    whose cells are then not ``verified``), ``worker_slots`` (total), ``fill_gain`` (the gain the
    work-conserving fill added, summed over slots; GADGET only), ``mean_slot_jobs`` (jobs in the
    slot problems, the policies' own count), ``incumbent_slots`` (slots whose exact slot ILP kept
    its incumbent at the time limit), ``run_seconds``, ``verify_seconds`` and ``pooled_seconds``.
    """
    from clusteropt.online.gadget import capacity_overload

    inst = utility_instance(params, seed)
    run, check, run_s, verify_s = _verified_run(inst, policy, seed)
    bound = _utility_bound(inst)
    alone = inst.alone_bound()
    pooled = _pooled(json.dumps(params, sort_keys=True), seed)
    jobs = [d.get("jobs", 0) for d in run.slot_info]
    total = check.total_utility
    nan = float("nan")
    return {
        "total_utility": total,
        "utility_bound": bound,
        "utility_fraction": total / bound if bound > 0 else nan,
        "alone_bound": alone,
        "alone_fraction": total / alone if alone > 0 else nan,
        "pooled_bound": pooled["pooled_bound"],
        "pooled_fraction": total / pooled["pooled_bound"] if pooled["pooled_bound"] > 0 else nan,
        "verified": check.ok,
        **capacity_overload(inst, check),
        "worker_slots": int(np.asarray(check.worker_slots).sum()),
        "fill_gain": float(sum(d.get("fill_gain", 0.0) for d in run.slot_info)),
        "mean_slot_jobs": float(np.mean(jobs)) if jobs else 0.0,
        "incumbent_slots": _incumbent_slots(run),
        "run_seconds": run_s,
        "verify_seconds": verify_s,
        "pooled_seconds": pooled["pooled_seconds"],
    }


def _utility_figure(table):
    from clusteropt.experiments.plots import line_plot

    return line_plot(table, "n_jobs", "total_utility", hue="policy", xlabel="number of jobs",
                     ylabel="total utility (sigmoid)", title="Fig. 4: total utility, GADGET vs FIFO / DRF / LAS")


def _utility_table(table):
    ok = ok_rows(table, "gadget-utility", ("n_jobs", "policy", "total_utility"))
    out = (ok.pivot_table(index="n_jobs", columns="policy", values="total_utility", aggfunc="mean")
           .reset_index().rename_axis(columns=None))
    for bound in ("pooled_bound", "alone_bound", "utility_bound"):
        if bound in ok.columns:
            out = out.merge(ok.groupby("n_jobs")[bound].mean().reset_index(), on="n_jobs")
    return out


def _settings_figure(table):
    from matplotlib.figure import Figure

    from clusteropt.experiments.plots import line_plot

    ok = ok_rows(table, "gadget-utility-settings", ("n_jobs", "utility", "policy", "pooled_fraction"))
    utilities = list(dict.fromkeys(ok.utility))
    fig = Figure(layout="constrained", figsize=(5.0 * len(utilities), 4.4))
    axes = fig.subplots(1, len(utilities), squeeze=False)[0]
    for ax, utility in zip(axes, utilities, strict=True):
        here = ok[(ok.utility == utility) & ok.pooled_fraction.notna()]
        if here.empty:  # a bound of 0: no job can reach a sigmoid's inflection
            ax.set_title(f"utility {utility}: upper bound 0, nothing to divide by")
            continue
        line_plot(here, "n_jobs", "pooled_fraction", hue="policy", ax=ax, xlabel="number of jobs",
                  ylabel="total utility / pooled-capacity bound", title=f"utility {utility}")
        alone = (here.alone_bound / here.pooled_bound).groupby(here.n_jobs).mean()
        ax.plot(alone.index.astype(float), alone.to_numpy(dtype=float), color="black", linestyle=":",
                label="alone bound")
        ax.legend(fontsize="small")
    fig.suptitle("Fig. 4 where scheduling matters (package settings): utility over the pooled-capacity LP bound")
    return fig


def _settings_table(table):
    ok = ok_rows(table, "gadget-utility-settings", ("n_jobs", "utility", "policy", "total_utility"))
    keys = ["utility", "n_jobs", "policy"]
    cols = [c for c in ("total_utility", "pooled_fraction", "alone_fraction", "pooled_bound", "alone_bound",
                        "capacity_violations", "max_load_ratio") if c in ok.columns]
    out = ok.groupby(keys, sort=True)[cols].mean()
    out["seeds"] = ok.groupby(keys, sort=True).size()
    return out.reset_index()


# -- Fig. 4 settings and the pooled-capacity bound ---------------------------------------------------


def loaded_sigmoid(inst, seed: int, share=LOADED_SHARE):
    """The instance with each sigmoid's inflection moved to a share of the job's budget (the
    package's ``"sigmoid-loaded"`` setting, not the paper's): ``lambda_3 = u_i zeta_i F_i``,
    ``u_i`` uniform in ``share``, drawn from ``seed`` on a stream of its own (module docstring).

    >>> from clusteropt.instances.gadget.instance import gadget_preset
    >>> inst = loaded_sigmoid(gadget_preset("small", jobs=4, seed=0), 0)
    >>> u = inst.utility_params[:, 2] / (inst.zeta * inst.budget)
    >>> bool(((u >= LOADED_SHARE[0]) & (u <= LOADED_SHARE[1])).all())
    True
    """
    if inst.utility != "sigmoid":
        raise ValueError(f"utility = {inst.utility!r}; the loaded setting moves a sigmoid's inflection")
    rng = np.random.default_rng(np.random.SeedSequence(int(seed), spawn_key=(LOADED_STREAM,)))
    u = rng.uniform(share[0], share[1], inst.n_jobs)
    params = np.array(inst.utility_params, dtype=float)
    params[:, 2] = np.round(u * inst.zeta * inst.budget)
    return dataclasses.replace(inst, utility_params=params, name=f"{inst.name}-loaded")


def utility_instance(params: dict[str, Any], seed: int):
    """The instance of a Fig. 4 cell: ``gadget_preset("paper", ...)`` with ``params["utility"]``
    one of the instance utilities or ``"sigmoid-loaded"`` (:func:`loaded_sigmoid`).
    """
    from clusteropt.instances.gadget.instance import gadget_preset

    utility = str(params["utility"])
    loaded = utility == "sigmoid-loaded"
    inst = gadget_preset("paper", jobs=int(params["n_jobs"]), seed=seed, utility="sigmoid" if loaded else utility,
                         horizon=int(params["horizon"]))
    return loaded_sigmoid(inst, seed) if loaded else inst


def _upper_hull(v: np.ndarray) -> np.ndarray:
    """Indices of the vertices of the upper concave hull of the points ``(m, v[m])``."""
    hull: list[int] = []
    for m in range(v.size):
        while len(hull) >= 2:
            a, b = hull[-2], hull[-1]
            # b lies on or below the chord a -> m: not a vertex of the upper hull
            if (v[b] - v[a]) * (m - a) <= (v[m] - v[a]) * (b - a):
                hull.pop()
            else:
                break
        hull.append(m)
    return np.asarray(hull, dtype=np.int64)


def pooled_bound(inst, *, max_lines: int = POOLED_LINES) -> dict[str, Any]:
    """An upper bound on any schedule's total utility that sees the cluster's capacity: an LP.

    Relax DDLJS (Sec. IV-3) to one pool per resource: variables ``y[i, t] >= 0`` (job i's workers
    in slot t, continuous), ``y[i, t] <= k_i = min(N_i, budget_i, sum_s floor(min_r C_s^r /
    l_i^r))`` (Eqs. (2), (5)), ``y[i, t] = 0`` before ``a_i`` (6), ``sum_i l_i^r y[i, t] <=
    sum_s C_s^r`` per slot and resource (Eq. (4) summed over the servers),
    ``Z_i = sum_t y[i, t] <= min(budget_i, k_i (T - a_i + 1))`` (3), and the objective
    ``sum_i U_i`` with ``U_i`` below lines that support the concave envelope of
    ``m -> mu_i(zeta_i m)`` over ``m = 0 .. Z_i's cap`` (the upper hull's edges: every line is above
    every value, so the LP stays a relaxation whatever edges are kept; at most ``max_lines`` per
    job, spaced geometrically from ``m = 0``, plus the last and ``U_i <= max_m mu_i``).  Rings,
    bandwidth and server boundaries are dropped.  Every feasible schedule maps to a feasible
    point with its utility (``y[i, t] = sum_s y_is[t]``), so the LP optimum bounds every
    schedule, DDLJS's LP relaxation included; and it is at most :meth:`alone_bound`, which is this
    LP without the capacity rows.  Solved by HiGHS (``scipy.optimize.linprog``); returns
    ``{"pooled_bound": value, "pooled_seconds": s, "pooled_rows": m, "pooled_columns": n}``.
    """
    import scipy.sparse as sp
    from scipy.optimize import linprog

    from clusteropt.instances.gadget.instance import utility_value

    start = time.perf_counter()
    cl = inst.cluster
    n, horizon = inst.n_jobs, inst.horizon
    pw = np.asarray(inst.per_worker, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        per = np.where(pw[:, None, :] > 0, cl.capacity[None, :, :] / np.where(pw > 0, pw, 1)[:, None, :], np.inf)
    fit = np.floor(per.min(axis=2) + 1e-9).sum(axis=1)
    k = np.maximum(np.minimum(np.minimum(inst.max_workers, inst.budget), fit), 0).astype(np.int64)
    slots = horizon - inst.arrival + 1
    zmax = np.maximum(np.minimum(inst.budget, k * slots), 0).astype(np.int64)
    # columns: y[i, t] for t = a_i .. T (job by job), then Z_i, then U_i
    counts = np.where(k > 0, slots, 0)
    offsets = np.concatenate([[0], np.cumsum(counts)])
    n_y = int(offsets[-1])
    job_of = np.repeat(np.arange(n), counts)
    slot_of = np.concatenate([np.arange(inst.arrival[i], horizon + 1) for i in range(n) if counts[i]] or
                             [np.zeros(0, dtype=np.int64)])
    z_col, u_col = n_y + np.arange(n), n_y + n + np.arange(n)
    n_col = n_y + 2 * n
    # Z_i - sum_t y[i, t] = 0
    a_eq = sp.csr_matrix((np.concatenate([-np.ones(n_y), np.ones(n)]),
                          (np.concatenate([job_of, np.arange(n)]), np.concatenate([np.arange(n_y), z_col]))),
                         shape=(n, n_col))
    rows, cols, vals, rhs = [], [], [], []
    n_res = len(cl.resources)
    total = cl.capacity.sum(axis=0)
    # pooled capacity: row (t - 1) * R + r
    for r in range(n_res):
        rows.append((slot_of - 1) * n_res + r)
        cols.append(np.arange(n_y))
        vals.append(pw[job_of, r])
    rhs.append(np.repeat(total[None, :], horizon, axis=0).ravel())
    next_row = horizon * n_res
    u_lo, u_hi = np.zeros(n), np.zeros(n)
    for i in range(n):
        m = np.arange(int(zmax[i]) + 1, dtype=float)
        v = utility_value(inst.utility, inst.utility_params[i:i + 1], inst.zeta[i] * m[None, :])[0]
        u_lo[i], u_hi[i] = float(v.min()), float(v.max())
        hull = _upper_hull(v)
        if hull.size < 2:
            continue
        edges = np.arange(hull.size - 1)
        if edges.size > max_lines:
            pick = np.unique(np.round(np.geomspace(1, edges.size, max_lines)).astype(np.int64) - 1)
            edges = np.union1d(pick, [0, edges.size - 1])
        a, b = hull[edges], hull[edges + 1]
        slope = (v[b] - v[a]) / (b - a)
        # U_i - slope Z_i <= v[a] - slope a
        e = np.arange(edges.size) + next_row
        rows += [e, e]
        cols += [np.full(edges.size, u_col[i]), np.full(edges.size, z_col[i])]
        vals += [np.ones(edges.size), -slope]
        rhs.append(v[a] - slope * a)
        next_row += edges.size
    a_ub = sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                         shape=(next_row, n_col))
    bounds = np.concatenate([np.column_stack([np.zeros(n_y), k[job_of].astype(float)]),
                             np.column_stack([np.zeros(n), zmax.astype(float)]),
                             np.column_stack([u_lo, u_hi])])
    cost = np.zeros(n_col)
    cost[u_col] = -1.0
    res = linprog(cost, A_ub=a_ub, b_ub=np.concatenate(rhs), A_eq=a_eq, b_eq=np.zeros(n), bounds=bounds,
                  method="highs")
    if res.status != 0:
        raise RuntimeError(f"the pooled-capacity LP of {inst.name} stopped: {res.message}")
    return {"pooled_bound": float(-res.fun) + 0.0, "pooled_seconds": time.perf_counter() - start,
            "pooled_rows": int(next_row + n), "pooled_columns": int(n_col)}


# -- Figs. 5, 6: embedded ratio vs node / edge capacity --------------------------------------------


def scale_cluster(cluster, *, node_units: float | None = None, edge_units: float | None = None):
    """The cluster with ``100 node_units`` GPUs and rack-level links averaging ``200 edge_units``
    Gbps (module docstring: GPUs by largest remainder in proportion to the drawn counts, every
    link bandwidth times one factor).  ``None`` leaves that resource as it is.

    >>> from clusteropt.instances.gadget.instance import fat_tree_cluster
    >>> c = scale_cluster(fat_tree_cluster(10, n_racks=2, seed=0), node_units=0.5, edge_units=2)
    >>> int(c.capacity.sum()), round(float(c.bandwidth[-4:].mean()), 6)
    (50, 400.0)
    """
    capacity, bandwidth = cluster.capacity, cluster.bandwidth
    if node_units is not None:
        if len(cluster.resources) != 1 or not node_units > 0:
            raise ValueError(f"node_units = {node_units!r}; expected > 0 on a one-resource (GPU) cluster")
        target = round(100.0 * node_units)
        raw = capacity[:, 0] * target / capacity[:, 0].sum()
        gpus = np.floor(raw + 1e-12)
        extra = target - int(gpus.sum())
        gpus[np.argsort(-(raw - gpus), kind="stable")[:extra]] += 1
        capacity = gpus[:, None]
    if edge_units is not None:
        if not edge_units > 0:
            raise ValueError(f"edge_units = {edge_units!r}; expected > 0")
        n_srv = cluster.n_servers
        rack_level = (cluster.links[:, 0] >= n_srv) & (cluster.links[:, 1] >= n_srv)
        if not rack_level.any():
            raise ValueError("the cluster has no switch-to-switch (rack-level) link to scale to 200 Gbps units")
        bandwidth = bandwidth * (200.0 * edge_units / float(bandwidth[rack_level].mean()))
    return dataclasses.replace(cluster, capacity=capacity, bandwidth=bandwidth)


def _rack_level_bandwidth(cluster) -> float:
    n_srv = cluster.n_servers
    rack_level = (cluster.links[:, 0] >= n_srv) & (cluster.links[:, 1] >= n_srv)
    return float(cluster.bandwidth[rack_level].mean())


def embedded_stats(inst, schedule) -> dict[str, float]:
    """Per slot with an active job (arrived, ``z_{i,t-1} < budget_i``): embedded / active jobs,
    averaged (``embedded_ratio``); ``multi_server_share`` and ``workers_per_job`` over the
    embedded job-slots; ``gpu_utilization``: GPUs used / GPUs, averaged over the same slots.
    """
    z = np.zeros(inst.n_jobs)
    ratios, util, active_n, embedded_n = [], [], [], []
    multi = workers = embedded_total = 0
    gpus = float(inst.cluster.capacity.sum())
    for t, alloc in enumerate(schedule.slots, start=1):
        y = np.asarray(alloc.workers)
        w = y.sum(axis=1)
        active = (inst.arrival <= t) & (z < inst.budget)
        if active.any():
            emb = (w > 0) & active
            ratios.append(emb.sum() / active.sum())
            active_n.append(active.sum())
            embedded_n.append(emb.sum())
            util.append(float((y * inst.per_worker[:, :1]).sum()) / gpus if gpus > 0 else 0.0)
        on = w > 0
        embedded_total += int(on.sum())
        multi += int(((y > 0).sum(axis=1) >= 2).sum())
        workers += int(w.sum())
        z += w
    nan = float("nan")
    return {
        "embedded_ratio": float(np.mean(ratios)) if ratios else nan,
        "active_slots": len(ratios),
        "mean_active": float(np.mean(active_n)) if active_n else nan,
        "mean_embedded": float(np.mean(embedded_n)) if embedded_n else nan,
        "multi_server_share": multi / embedded_total if embedded_total else nan,
        "workers_per_job": workers / embedded_total if embedded_total else nan,
        "gpu_utilization": float(np.mean(util)) if util else nan,
    }


def run_capacity_cell(params: dict[str, Any], seed: int, policy: str) -> dict[str, Any]:
    """Figs. 5, 6: the paper preset with ``resource`` ("node" / "edge") scaled to ``units`` and
    the other resource to ``held_units`` (module docstring; the instance depends on ``trial``).

    Returns :func:`embedded_stats`, ``total_utility``, ``verified``, the cluster's actual
    ``total_gpus`` / ``node_units_actual`` and ``rack_bandwidth`` / ``edge_units_actual``,
    ``run_seconds`` and ``verify_seconds``.
    """
    from clusteropt.experiments.spec import cell_seed
    from clusteropt.instances.gadget.instance import gadget_preset

    resource, units = str(params["resource"]), float(params["units"])
    if resource not in ("node", "edge"):
        raise ValueError(f"resource = {resource!r}; expected 'node' or 'edge'")
    other = "edge" if resource == "node" else "node"
    setting = {k: params[k] for k in ("n_jobs", "horizon", "utility")}
    instance_seed = cell_seed(CAPACITY_ROOT_SEED, setting, int(params["trial"]))
    inst = gadget_preset("paper", jobs=int(params["n_jobs"]), seed=instance_seed, utility=str(params["utility"]),
                         horizon=int(params["horizon"]))
    held = float(params["held_units"])
    cluster = scale_cluster(inst.cluster, **{f"{resource}_units": units, f"{other}_units": held})
    inst = dataclasses.replace(inst, cluster=cluster)
    run, check, run_s, verify_s = _verified_run(inst, policy, instance_seed)
    rack_bw = _rack_level_bandwidth(cluster)
    return {
        **embedded_stats(inst, run.schedule),
        "total_utility": check.total_utility,
        "verified": check.ok,
        "total_gpus": float(cluster.capacity.sum()),
        "node_units_actual": float(cluster.capacity.sum()) / 100.0,
        "rack_bandwidth": rack_bw,
        "edge_units_actual": rack_bw / 200.0,
        "run_seconds": run_s,
        "verify_seconds": verify_s,
    }


def _capacity_figure(table, resource: str, fig_no: int):
    from matplotlib.figure import Figure

    from clusteropt.experiments.plots import line_plot

    ok = ok_rows(table, f"capacity({resource})", ("resource", "units", "embedded_ratio", "multi_server_share"))
    here = ok[ok.resource == resource]
    if here.empty:
        raise ValueError(f"capacity({resource}): no ok cell with resource = {resource!r}")
    other = "edge" if resource == "node" else "node"
    held = here[f"{other}_units_actual"].mean()
    fig = Figure(layout="constrained", figsize=(10.0, 4.2))
    left, right = fig.subplots(1, 2)
    label = f"{resource} capacity units ({'100 GPUs' if resource == 'node' else '200 Gbps rack-level'})"
    line_plot(here, "units", "embedded_ratio", ax=left, xlabel=label, ylabel="embedded / active jobs (per slot)",
              title="embedded ratio")
    line_plot(here, "units", "multi_server_share", ax=right, xlabel=label,
              ylabel="embedded jobs on >= 2 servers", title="multi-server share")
    fig.suptitle(f"Fig. {fig_no}: embedded ratio vs {resource} capacity ({other} held at {held:.2f} units)")
    return fig


def _node_figure(table):
    return _capacity_figure(table, "node", 5)


def _edge_figure(table):
    return _capacity_figure(table, "edge", 6)


def _capacity_table(table):
    ok = ok_rows(table, "gadget-capacity", ("resource", "units", "embedded_ratio"))
    cols = [c for c in ("embedded_ratio", "multi_server_share", "workers_per_job", "gpu_utilization",
                        "total_utility", "node_units_actual", "edge_units_actual") if c in ok.columns]
    return ok.groupby(["resource", "units"], sort=True)[cols].mean().reset_index()


# -- Fig. 7: per-slot LP-RS-MDE / ILP optimum ------------------------------------------------------


def _ratio_summary(prefix: str, ratios: list[float]) -> dict[str, Any]:
    nan = float("nan")
    r = np.asarray(ratios, dtype=float)
    return {
        f"{prefix}mean": float(r.mean()) if r.size else nan,
        f"{prefix}min": float(r.min()) if r.size else nan,
        f"{prefix}median": float(np.median(r)) if r.size else nan,
        f"{prefix}max": float(r.max()) if r.size else nan,
    }


def run_slot_ratio_cell(params: dict[str, Any], seed: int, policy: str) -> dict[str, Any]:
    """Fig. 7: every slot's gain of ``policy`` over the slot's ILP optimum (module docstring).

    Returns ``ratio_mean`` / ``_min`` / ``_median`` / ``_max`` over the counted slots,
    ``slots`` (with an active job), ``slots_counted``, ``slots_not_optimal``,
    ``slots_negligible``, ``slots_above_one`` (ratio > 1 + 1e-6: the ILP optimum was beaten; a
    solver tolerance, or an allocation of the paper rounding that overloads a capacity),
    ``capacity_violations`` / ``overloaded_slots`` / ``max_load_ratio`` (nonzero only for
    ``gadget-lp-rs-mde-paper``: any other violation raises), ``policy_gain`` / ``ilp_gain``
    (summed over counted slots), ``total_utility``, ``verified``; for the LP-RS-MDE policies also
    ``drawn_ratio_*`` and ``greedy_ratio_*``; timings.
    """
    from clusteropt.algorithms.gadget.greedy import greedy_slot
    from clusteropt.instances.gadget.instance import gadget_preset
    from clusteropt.models.gadget.gvne import allocation_from_solution, build_gvne, slot_problem
    from clusteropt.online.gadget import CAPACITY_CONSTRAINTS, capacity_overload
    from clusteropt.rounding.gadget import slot_gain
    from clusteropt.solvers import solve
    from clusteropt.verify import check_gadget_allocation

    if policy not in GADGET_POLICIES or GADGET_POLICIES[policy][0] != "gadget":
        raise ValueError(f"policy = {policy!r}; expected a GADGET slot solver: "
                         f"{', '.join(p for p, (name, _) in GADGET_POLICIES.items() if name == 'gadget')}")
    inst = gadget_preset(str(params["preset"]), jobs=int(params["n_jobs"]), seed=seed,
                         utility=str(params["utility"]), horizon=int(params["horizon"]))
    run, check, run_s, verify_s = _verified_run(inst, policy, seed)
    lp = GADGET_POLICIES[policy][1]["slot_solver"] == "lp-rs-mde"
    allowed = CAPACITY_CONSTRAINTS if policy in PAPER_ROUNDING_POLICIES else ()
    time_limit = float(params["ilp_time_limit"])
    paths = inst.cluster.paths()
    z = np.zeros(inst.n_jobs)
    ratios, drawn, greedy = [], [], []
    counts = {"slots": 0, "slots_counted": 0, "slots_not_optimal": 0, "slots_negligible": 0, "slots_above_one": 0}
    policy_gain = ilp_gain = ilp_s = 0.0
    for t, alloc in enumerate(run.schedule.slots, start=1):
        problem = slot_problem(inst, t, z)
        used = z.copy()
        z = z + np.asarray(alloc.workers).sum(axis=1)
        if problem.jobs.size == 0:
            continue
        counts["slots"] += 1
        own = check_gadget_allocation(inst, alloc, t, used=used)
        if any(v.constraint not in allowed for v in own.violations):
            raise RuntimeError(f"{policy}, slot {t}: the allocation failed verification: "
                               f"{'; '.join(map(str, own.violations[:3]))}")
        gain = slot_gain(problem, alloc)
        start = time.perf_counter()
        model = build_gvne(problem)
        res = solve(model, time_limit=time_limit, mip_gap=0.0, raise_on_nonoptimal=False)
        ilp_s += time.perf_counter() - start
        if not res.is_optimal or not res.has_solution:
            counts["slots_not_optimal"] += 1
            continue
        ilp_alloc = allocation_from_solution(problem, model, paths=paths)
        ref = check_gadget_allocation(inst, ilp_alloc, t, used=used)
        if not ref.ok:
            raise RuntimeError(f"slot {t}: the G-VNE ILP's optimal allocation failed verification: "
                               f"{'; '.join(map(str, ref.violations[:3]))}")
        optimum = slot_gain(problem, ilp_alloc)
        if optimum < MIN_OPTIMUM:
            counts["slots_negligible"] += 1
            continue
        counts["slots_counted"] += 1
        ratios.append(gain / optimum)
        counts["slots_above_one"] += int(gain / optimum > 1 + 1e-6)
        policy_gain += gain
        ilp_gain += optimum
        if lp:
            info = run.slot_info[t - 1]
            drawn.append(float(info["drawn_value"]) / optimum if "drawn_value" in info else float("nan"))
            greedy.append(greedy_slot(problem, paths=paths)[1] / optimum)
    out: dict[str, Any] = {
        **_ratio_summary("ratio_", ratios),
        **counts,
        **capacity_overload(inst, check),
        "policy_gain": policy_gain,
        "ilp_gain": ilp_gain,
        "total_utility": check.total_utility,
        "verified": check.ok,
    }
    if lp:
        out.update(_ratio_summary("drawn_ratio_", [r for r in drawn if not math.isnan(r)]))
        out.update(_ratio_summary("greedy_ratio_", greedy))
    out.update({"run_seconds": run_s, "verify_seconds": verify_s, "ilp_seconds": ilp_s})
    return out


def _slot_ratio_figure(table):
    import pandas as pd
    from matplotlib.figure import Figure

    from clusteropt.experiments.plots import line_plot

    ok = ok_rows(table, "gadget-slot-ratio", ("n_jobs", "utility", "policy", "ratio_mean"))
    frames = [ok.assign(solver=ok.policy, value=ok.ratio_mean)]
    lp = ok[ok.policy == "gadget-lp-rs-mde"]
    for col, name in (("drawn_ratio_mean", "LP-RS-MDE rounding alone (no fill)"),
                      ("greedy_ratio_mean", "greedy at LP-RS-MDE's states")):
        if col in lp.columns:
            frames.append(lp.assign(solver=name, value=lp[col]))
    long = pd.concat(frames, ignore_index=True)
    utilities = sorted(long.utility.unique())
    fig = Figure(layout="constrained", figsize=(5.2 * len(utilities), 4.2))
    axes = fig.subplots(1, len(utilities), squeeze=False)[0]
    for ax, utility in zip(axes, utilities, strict=True):
        here = long[(long.utility == utility) & long.value.notna()]
        if here.empty:
            ax.set_title(f"{utility}: no slot with an optimum >= {MIN_OPTIMUM}")
            continue
        line_plot(here, "n_jobs", "value", hue="solver", ax=ax, xlabel="number of jobs",
                  ylabel="slot gain / ILP optimum (mean over slots)", title=f"utility {utility}")
        ax.axhline(1 / 3, color="black", linestyle=":", linewidth=1.0)
    fig.suptitle("Fig. 7: per-slot approximation ratio vs the G-VNE ILP (dotted: Theorem 8's 1/3)")
    return fig


def _slot_ratio_table(table):
    ok = ok_rows(table, "gadget-slot-ratio", ("n_jobs", "utility", "policy", "ratio_mean"))
    cols = [c for c in ("ratio_mean", "ratio_min", "ratio_median", "drawn_ratio_mean", "drawn_ratio_min",
                        "greedy_ratio_mean", "greedy_ratio_min", "slots", "slots_counted", "slots_not_optimal",
                        "slots_negligible", "slots_above_one", "capacity_violations", "max_load_ratio")
            if c in ok.columns]
    return ok.groupby(["utility", "n_jobs", "policy"], sort=True)[cols].mean().reset_index()


# -- Theorem 10: empirical competitive ratio -------------------------------------------------------


@functools.lru_cache(maxsize=8)
def _offline(params_json: str, seed: int):
    """The instance, DDLJS optimum and its check: shared by the policies of one (params, seed)."""
    from clusteropt.models.gadget.ddljs import ddljs_optimum
    from clusteropt.verify import check_gadget_schedule

    params = json.loads(params_json)
    inst = _tiny(params, seed)
    start = time.perf_counter()
    _, schedule, res = ddljs_optimum(inst, time_limit=float(params["opt_time_limit"]))
    seconds = time.perf_counter() - start
    check = check_gadget_schedule(inst, schedule)
    if not check.ok:
        raise RuntimeError(f"the DDLJS optimum of {inst.name} failed verification: "
                           f"{'; '.join(map(str, check.violations[:3]))}")
    bound = float(res.bound) if res.bound is not None else float("nan")
    return inst, check.total_utility, bool(res.is_optimal), bound, seconds


def _tiny(params: dict[str, Any], seed: int):
    from clusteropt.instances.gadget.instance import gadget_preset

    return gadget_preset("tiny", jobs=int(params["n_jobs"]), seed=seed, utility=str(params["utility"]),
                         horizon=int(params["horizon"]))


def run_competitive_cell(params: dict[str, Any], seed: int, policy: str) -> dict[str, Any]:
    """Theorem 10: ``policy``'s verified total utility over the offline DDLJS optimum.

    Returns ``total_utility``, ``opt_value`` (the optimum's checked utility), ``opt_optimal``
    (proved; otherwise ``ratio`` divides by the solver's bound ``opt_bound`` instead, a lower
    estimate), ``ratio`` (None when ``degenerate``: optimum below :data:`MIN_OPTIMUM`),
    ``gamma``, ``theorem10_bound = 1 / (3 gamma + 1)``, ``above_bound``, ``incumbent_slots``,
    ``verified``, timings.  Raises when the online schedule beats the proved optimum by more than
    1e-4 (relative): the "optimum" would then not be one.
    """
    from clusteropt.models.gadget.gvne import worker_bound

    inst, opt, optimal, bound, opt_s = _offline(json.dumps(params, sort_keys=True), seed)
    run, check, run_s, verify_s = _verified_run(inst, policy, seed)
    gamma = int(np.ceil(worker_bound(inst, np.zeros(inst.n_jobs), np.arange(inst.n_jobs)).max() - 1e-9))
    theorem10 = 1.0 / (3 * gamma + 1)
    denominator = opt if optimal else bound
    degenerate = not denominator >= MIN_OPTIMUM
    ratio = None if degenerate else check.total_utility / denominator
    if ratio is not None and optimal and ratio > 1 + 1e-4:
        raise RuntimeError(f"{policy} on {inst.name}: utility {check.total_utility} exceeds the DDLJS optimum "
                           f"{opt} (ratio {ratio}): the offline optimum is not one")
    return {
        "total_utility": check.total_utility,
        "opt_value": opt,
        "opt_optimal": optimal,
        "opt_bound": bound,
        "ratio": ratio,
        "degenerate": degenerate,
        "gamma": gamma,
        "theorem10_bound": theorem10,
        "above_bound": None if ratio is None else bool(ratio >= theorem10),
        "incumbent_slots": _incumbent_slots(run),
        "verified": check.ok,
        "run_seconds": run_s,
        "verify_seconds": verify_s,
        "opt_seconds": opt_s,
    }


def _competitive_figure(table):
    from matplotlib.figure import Figure

    from clusteropt.experiments.plots import line_plot

    ok = ok_rows(table, "gadget-competitive", ("n_jobs", "utility", "policy", "ratio", "theorem10_bound"))
    ok = ok[ok.ratio.notna()]
    utilities = sorted(ok.utility.unique())
    if not utilities:
        raise ValueError("gadget-competitive: every instance is degenerate (optimum below MIN_OPTIMUM)")
    fig = Figure(layout="constrained", figsize=(5.0 * len(utilities), 4.2))
    axes = fig.subplots(1, len(utilities), squeeze=False, sharey=True)[0]
    for ax, utility in zip(axes, utilities, strict=True):
        here = ok[ok.utility == utility]
        line_plot(here, "n_jobs", "ratio", ax=ax, xlabel="number of jobs (tiny preset)",
                  ylabel="GADGET / offline DDLJS optimum", title=f"utility {utility}")
        b = here.groupby("n_jobs").theorem10_bound.min()
        ax.plot(b.index.astype(float), b.to_numpy(dtype=float), color="black", linestyle=":",
                label="Theorem 10: 1/(3 Gamma + 1)")
        ax.set_ylim(0, 1.05)
        ax.legend(fontsize="small")
    fig.suptitle("Empirical competitive ratio of GADGET vs Theorem 10's bound")
    return fig


def _competitive_table(table):
    ok = ok_rows(table, "gadget-competitive", ("n_jobs", "utility", "policy", "ratio"))
    out = ok.groupby(["utility", "n_jobs", "policy"], sort=True).agg(
        ratio_mean=("ratio", "mean"), ratio_min=("ratio", "min"), theorem10_bound=("theorem10_bound", "min"),
        degenerate=("degenerate", "sum"), cells=("ratio", "size")).reset_index()
    return out


register_experiment(
    Experiment(
        name="gadget-utility",
        run=run_utility_cell,
        grid={"n_jobs": list(UTILITY_JOBS), "horizon": [200], "utility": ["sigmoid"]},
        seeds=list(range(5)),
        policies=list(UTILITY_POLICIES),
        description="total utility vs number of jobs: GADGET (greedy, LP-RS-MDE slots; and as the paper writes "
                    "them) vs FIFO, DRF, LAS",
        paper="000 Fig. 4",
        root_seed=1000,
        timeout=3600.0,
        quick={"grid": {"n_jobs": [20, 40], "horizon": [40]}, "seeds": [0], "timeout": 120.0},
        figures={"utility": _utility_figure},
        tables={"utility": _utility_table},
    )
)

register_experiment(
    Experiment(
        name="gadget-utility-settings",
        run=run_utility_cell,
        grid={"n_jobs": list(SETTINGS_JOBS), "horizon": [200], "utility": ["sqrt", "log", "sigmoid-loaded"]},
        seeds=[0, 1, 2, 3, 4],
        policies=list(UTILITY_POLICIES),
        description="Fig. 4 where scheduling matters (sqrt, log, loaded sigmoid: package settings), with the "
                    "pooled-capacity LP bound",
        paper="000 Fig. 4 (package settings)",
        root_seed=1000,
        timeout=7200.0,
        quick={"grid": {"n_jobs": [12], "horizon": [20]}, "seeds": [0], "timeout": 120.0},
        figures={"utility": _settings_figure},
        tables={"utility": _settings_table},
    )
)

register_experiment(
    Experiment(
        name="gadget-capacity",
        run=run_capacity_cell,
        grid={"n_jobs": [300], "horizon": [200], "utility": ["sigmoid"], "held_units": [1.0], "trial": [0, 1, 2],
              "resource": ["node", "edge"], "units": [0.25, 0.5, 1.0, 2.0, 4.0, 8.0]},
        seeds=[0],
        policies=["gadget"],
        description="embedded / active jobs per slot vs node (100 GPUs) and edge (200 Gbps) capacity units",
        paper="000 Figs. 5, 6",
        root_seed=1000,
        timeout=1200.0,
        quick={"grid": {"n_jobs": [60], "horizon": [30], "trial": [0, 1], "units": [0.25, 2.0]}, "timeout": 120.0},
        figures={"fig5-node": _node_figure, "fig6-edge": _edge_figure},
        tables={"embedded-ratio": _capacity_table},
    )
)

register_experiment(
    Experiment(
        name="gadget-slot-ratio",
        run=run_slot_ratio_cell,
        grid={"preset": ["small"], "n_jobs": [10, 20, 40, 80], "horizon": [20], "utility": ["sigmoid", "sqrt"],
              "ilp_time_limit": [60.0]},
        seeds=list(range(5)),
        policies=["gadget-lp-rs-mde", "gadget", "gadget-lp-rs-mde-paper", "gadget-nofill"],
        description="per-slot gain of LP-RS-MDE (and greedy; default and as the paper writes them) / the "
                    "slot's G-VNE ILP optimum",
        paper="000 Fig. 7",
        root_seed=1000,
        timeout=1800.0,
        quick={"grid": {"n_jobs": [40], "horizon": [8]}, "seeds": [0], "timeout": 120.0},
        figures={"slot-ratio": _slot_ratio_figure},
        tables={"slot-ratio": _slot_ratio_table},
    )
)

register_experiment(
    Experiment(
        name="gadget-slot-ratio-paper",
        run=run_slot_ratio_cell,
        grid={"preset": ["paper"], "n_jobs": [40, 60, 100], "horizon": [20], "utility": ["sigmoid", "sqrt"],
              "ilp_time_limit": [120.0]},
        seeds=list(range(5)),
        policies=["gadget-lp-rs-mde", "gadget-lp-rs-mde-paper"],
        description="Fig. 7 on the paper's 50-server fat-tree: LP-RS-MDE (default and paper rounding; its "
                    "rounding alone, and the greedy at the same states) / the slot's G-VNE ILP optimum",
        paper="000 Fig. 7",
        root_seed=1000,
        timeout=3600.0,
        quick={"grid": {"n_jobs": [20], "horizon": [4], "utility": ["sqrt"]}, "seeds": [0], "timeout": 300.0},
        figures={"slot-ratio": _slot_ratio_figure},
        tables={"slot-ratio": _slot_ratio_table},
    )
)

register_experiment(
    Experiment(
        name="gadget-competitive",
        run=run_competitive_cell,
        grid={"n_jobs": [4, 8, 12, 16], "horizon": [4], "utility": ["sigmoid", "sqrt", "log"],
              "opt_time_limit": [600.0]},
        seeds=list(range(5)),
        policies=["gadget", "gadget-exact", "gadget-lp-rs-mde"],
        description="GADGET's total utility / the offline DDLJS optimum on tiny instances, vs 1/(3 Gamma + 1)",
        paper="000 Theorem 10",
        root_seed=1000,
        timeout=1200.0,
        quick={"grid": {"n_jobs": [4, 8]}, "seeds": [0, 1], "timeout": 120.0},
        figures={"ratio": _competitive_figure},
        tables={"ratio": _competitive_table},
    )
)
