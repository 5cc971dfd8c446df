"""mlBroker experiments (paper 003, Sec. 6.2-6.3, Figs. 5-14, Table 4 as a table of the simulation).

Instances are :func:`~clusteropt.instances.broker.random_broker` draws with the paper's Sec. 6.1
ranges (``preset = "paper"``: R = 15 DCs, four resources, ``P_i`` in [16, 66] GB, 500 GB of new
data per job and slot, T = 50 by default) or the ``"small"`` preset's settings (R = 5, 2-6 slot
jobs, data from 1-3 DCs, thresholds x 0.1), with grid values overriding the number of jobs
(``n_jobs``, or ``jobs_per_slot`` x ``horizon``), ``horizon``, ``n_dcs``, ``data_per_slot``
(a fixed total per job and slot, GB) and ``capacity`` (a fixed ``P_i``, GB);
:func:`broker_instance` builds them.

Instance seeds.  Every experiment has one replicate seed and a grid parameter ``trial``; the
instance of a cell is drawn with :func:`~clusteropt.experiments.spec.cell_seed` of the
*structural* parameters (:data:`STRUCTURE_KEYS`: preset, jobs, horizon, number of DCs) and
``trial``, not with the seed the harness hands the cell (which depends on every parameter).  So
the cells of one trial that differ only in ``data_per_slot``, ``capacity``, ``price_form``,
``epsilon`` or the algorithm meet the same arrivals, prices, transfer costs, data origins and
splits (a fixed data total scales the same Dirichlet split; a fixed ``P_i`` replaces the drawn
one), and the curves over data size and worker capacity are not blurred by new instances at
every point, as ``gadget-capacity`` does for its capacity units.  mlBroker's rounding draws with
the harness's seed.

Price form.  Every cell that runs A_fractional records ``price_form``; the default is ``"tight"``:
the one-slot problem (10) and P_f (9) with the convex hull of the volume-discount price (7), not
the paper's big-M rows (8c)-(8e).  Relaxed, the big-M rows let the price variable ``x`` be 0 for
almost every amount (up to about ``M / (a + b)``), so P_f and problem (10) see almost none of the
resource cost C2: measured on the paper preset (seed 0) P_f is 2.59 with big-M rows against 56694
with the hull, for a MILP (8) whose schedules cost tens of thousands
(:class:`~clusteropt.online.broker.AFractional` documents it).  A ratio "A_fractional / P_f" with
big-M rows compares two near-zero numbers; ``broker-fractional`` still runs both forms (the
paper's as a grid value) so this is visible.

``broker-fractional`` (Fig. 5)
    A_fractional's total cost of (9) (:func:`~clusteropt.online.broker.make_policy`
    ``"afractional"``) over the offline optimum of P_f (:func:`~clusteropt.models.broker.optimum.broker_lp_bound`)
    *with the same price form*: ``ratio``, next to Theorem 3's
    ``r1 = 2 + (1 + eps) ln(1 + 1 / eps)`` (``theorem3_r1``, ``within_r1``).  Grid: number of DCs
    (5, 10, 15, 20) x ``price_form`` (tight, bigm) on the paper preset (100 jobs, T = 50);
    ``epsilon`` (0.05, 0.1, 0.5, 1) is the *policy* (``eps-0.1`` ...), so the epsilons of one
    (DCs, price form, trial) share the instance and the P_f solve (cached in the worker
    process).  Clarabel solves (10), with its retry settings
    (:data:`~clusteropt.online.broker.CLARABEL_RETRIES`; ``retried_slots`` counts the slots that
    needed them); when a slot still ends without a solution the run is repeated with SCS
    (``solver``, ``solver_fallback``: that happened with big-M rows at R = 15 before the retries
    existed, "ERROR" in slot 15-16 on a 30-job instance); ``inaccurate_slots`` counts slots not
    solved to a clean "optimal".  SCS's tolerances put A_fractional up to about 1e-4 (relative) *below* P_f.
    Measured (each cell's ``run_seconds`` and ``lp_seconds``; in the record made at commit
    ``9a76e52``, two cells at a time on 2 cores, 20,948 s for its 160 cells): A_fractional takes
    5-90 s with the hull (R = 5 .. 20) and 7-1,708 s with big-M rows, on which Clarabel is slow and
    needs its retry settings (351-1,708 s at R = 20); P_f 5-70 s.  Ratios with the hull: 1.0000 in every cell
    (the slots are coupled only through the small deployment cost C3, so solving them one by one
    loses little); with big-M rows 1.03-1.23 (``benchmarks/results/experiments/broker-fractional``).
``broker-rounding`` (Fig. 6)
    The cost of mlBroker's rounded decisions over A_fractional's fractional cost, per rounding:
    Alg. 2 A_round (``a_round``), independent rounding (``ir``) and greedy rounding (``gr``) of
    Sec. 6.2 (mlBroker with ``rounding=``).  Rounded = the checker's total of the verified
    integral schedule; fractional = the sum of the slots' ``fractional_C1 .. fractional_C4``
    (A_fractional's own decisions, the same in the three runs: the fractional ``v(t - 1)`` is
    A_fractional's).  Grid: worker capacity ``P_i`` (16 .. 66 GB, fixed per cell) x data per job
    and slot (100 .. 700 GB) on paper-preset instances with 30 jobs and T = 20 (not 100 x 50:
    48 mlBroker runs a trial; the ratio is a per-job rounding effect, ``ceil(D / P_i)`` workers a
    job and slot, which the job count barely changes).  Measured (``run_seconds``, record of
    commit ``9a76e52``, two cells at a time on 2 cores): 2-9 s a cell, ``slot-milp`` 6-44 s.
``broker-rounding-dcs`` (Fig. 7)
    The same ratio for the three roundings against the number of DCs (5, 10, 15, 20), ``P_i`` and
    data at the paper's defaults ([16, 66] GB drawn, 500 GB), 30 jobs, T = 20.
``broker-cost`` (Fig. 8; Figs. 11-14; Table 4's layout)
    Total cost and its components C1 (transfer) .. C4 (worker-PS communication) of mlBroker,
    mlBroker as the paper writes it (``mlbroker-paper``: the big-M price rows (8c)-(8e) in (10)
    and A_round without the package's worker repair, :data:`MLBROKER_POLICIES`), ``mlbroker-plus``
    (the package's: A_round or the slot's exact MILP, whichever costs less in the slot,
    :mod:`clusteropt.rounding.broker.slot_milp`), Local, Central and OASiS (all verified by
    :func:`~clusteropt.verify.check_broker_schedule`, the totals the checker's), and "Opt": as in
    the paper, the optimum of P_f (9), here with the hull (a lower bound on every schedule; its
    components are read off the LP solution).  The mlBroker cells
    report ``workers_added``, the workers the package's repair added (``mlbroker-paper`` stops
    with an error where one would be needed).  Grid:
    data per job and slot 100, 200, .., 700 GB on the paper preset (100 jobs, T = 50, R = 15).
    Figures: total vs data size (Fig. 8) and one per component (Figs. 11-14); table ``costs``:
    rows the algorithms, columns Cost1 .. Cost4 and Overall at the default 500 GB (the grid
    value nearest to it) with mlBroker's saving against each row (``(row - mlBroker) / row``),
    and ``totals`` over the data sizes.  The paper's Table 4 is from its real (Kubernetes)
    experiment, which is not reproduced; the layout is.  Measured (``run_seconds``, record of
    commit ``9a76e52``, two cells at a time on 2 cores): Local and Central under 1 s, OASiS 17-50 s,
    mlBroker 18-37 s, Opt 18-42 s, ``mlbroker-paper`` 37-154 s (Clarabel needs its retry settings on
    the big-M rows), ``mlbroker-plus`` 64-155 s.
``broker-ratio`` (Figs. 9-10)
    mlBroker's verified total over the offline optimum of (8) against the number of slots T
    (Fig. 9) and jobs per slot (Fig. 10; ``n_jobs = jobs_per_slot x T``) at 700 GB per job and
    slot (the paper: "with large size of training datasets"), with ``mlbroker-paper``,
    ``mlbroker-plus``, Local, Central and OASiS for comparison.  The paper's instances (T = 50 .. 100,
    R = 15) are far beyond an exact MILP, so the cells use the ``"small"`` preset's settings (R = 5, T = 5 .. 25,
    1-4 jobs per slot, up to 100 jobs): :func:`~clusteropt.models.broker.optimum.broker_offline_optimum`
    (HiGHS, gap 0, the hull form) is then proved optimal within ``opt_time_limit`` = 300 s (each
    cell records the MILP's time as ``opt_seconds`` and the policy's as ``run_seconds``; in the
    record made at commit ``9a76e52``, two cells at a time on 2 cores with other benchmarks beside
    them part of the time: 0.03-17 s up to T = 10 but one 151 s cell at T = 5, up to 110 s at
    T = 15, up to 169 s at T = 25 with 4 jobs a slot; the policies' medians 0.03-2.8 s, their
    slowest cells up to 322 s).  The denominator
    (``denominator``) is the verified MILP optimum where it is proved optimal (``"milp"``), else
    P_f with the hull (``"lp"``; the ratio is then an upper bound of the true one); ``ratio_lp``
    (over P_f) is reported in every cell.
    The MILP and P_f are shared by the policies of a (params, trial) in a worker process.
``broker-deploy`` (the package's; the paper does not say per GB of what its deployment cost is)
    The cells of ``broker-ratio`` (small preset, T = 10 and 20, 2 and 4 jobs a slot, 700 GB, 5
    trials) with the deployment cost ``c_i`` read per GB of the model (``deploy_per="model"``,
    the package's default, C3 a negligible share) and per GB of the job's data per slot
    (``"data"``, C3 a real share): mlBroker, its paper-literal form, ``mlbroker-plus``, Central
    and OASiS over the exact optimum of (8).  Table ``deploy``: the mean and largest ratio and C3's
    share of the cost per reading and policy; figure ``deploy``: the ratio against T, one panel per
    reading.

Every integral schedule a cell reports is verified; a cell whose schedule fails the checker, or
whose cost differs from the checker's recount, raises (the harness records it as failed) rather
than reporting a number.  A_fractional's fractional runs are not checked against (8) (they are
not integral); their ``ratio`` is checked against 1 by the tests.
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

__all__ = [
    "COST_POLICIES",
    "DATA_SIZES",
    "EPSILONS",
    "INSTANCE_ROOT_SEED",
    "MLBROKER_POLICIES",
    "PRESET_ARGS",
    "ROUNDINGS",
    "STRUCTURE_KEYS",
    "broker_instance",
    "instance_seed",
    "run_cost_cell",
    "run_fractional_cell",
    "run_ratio_cell",
    "run_rounding_cell",
    "theorem3_r1",
]

log = logging.getLogger(__name__)

#: random_broker settings of the presets (as :func:`~clusteropt.instances.broker.broker_preset`).
PRESET_ARGS: dict[str, dict[str, Any]] = {
    "paper": {},
    "small": {"n_dcs": 5, "duration": (2, 6), "sources": (1, 3), "threshold_scale": 0.1},
}
#: Parameters that decide the instance's draw (module docstring: instance seeds).
STRUCTURE_KEYS = ("preset", "n_jobs", "jobs_per_slot", "horizon", "n_dcs")
#: Root of the instance seeds (with the structural parameters and ``trial``).
INSTANCE_ROOT_SEED = 3003
#: Data per job and slot, GB (Sec. 6.1: [100, 700], 500 by default).
DATA_SIZES = (100.0, 200.0, 300.0, 400.0, 500.0, 600.0, 700.0)
#: The paper's default data per job and slot.
DEFAULT_DATA = 500.0
#: epsilon values of ``broker-fractional`` (its policies are ``eps-<value>``).
EPSILONS = (0.05, 0.1, 0.5, 1.0)
#: Roundings of ``broker-rounding`` (mlBroker's ``rounding=``): the paper's A_round, its Sec. 6.2
#: baselines IR and GR, and the package's ``slot-milp`` (:mod:`clusteropt.rounding.broker.slot_milp`).
ROUNDINGS = ("a_round", "ir", "gr", "slot-milp")
#: The mlBroker policies of ``broker-cost`` and ``broker-ratio``: their options over the cell's
#: (``price_form`` from the grid, default ``"tight"``; ``rounding_variant="package"``).
#: ``mlbroker-paper`` is mlBroker as the paper writes it: big-M price rows in (10), A_round without
#: the package's repair.
MLBROKER_POLICIES: dict[str, dict[str, str]] = {
    "mlbroker": {},
    "mlbroker-paper": {"price_form": "bigm", "rounding_variant": "paper"},
    "mlbroker-plus": {"rounding": "slot-milp"},
}
#: Policies of ``broker-cost``; ``opt`` is P_f (9) with the hull.  ``mlbroker-plus`` is the package's
#: cost-aware integral step (:mod:`clusteropt.rounding.broker.slot_milp`).
COST_POLICIES = ("mlbroker", "mlbroker-paper", "mlbroker-plus", "local", "central", "oasis", "opt")
#: Display names of the policies.
LABELS = {"mlbroker": "mlBroker", "mlbroker-paper": "mlBroker (paper-literal)", "mlbroker-plus": "mlBroker-plus",
          "local": "Local", "central": "Central", "oasis": "OASiS", "opt": "Opt (P_f)", "a_round": "A_round",
          "ir": "IR", "gr": "GR", "slot-milp": "A_round or slot MILP (mlBroker-plus)"}
_REL = 1e-6


def theorem3_r1(epsilon: float) -> float:
    """Theorem 3's competitive ratio of A_fractional: ``2 + (1 + eps) ln(1 + 1 / eps)``.

    >>> round(theorem3_r1(1.0), 4)
    3.3863
    """
    return 2.0 + (1.0 + epsilon) * math.log(1.0 + 1.0 / epsilon)


def instance_seed(params: dict[str, Any]) -> int:
    """The seed of the cell's instance: ``cell_seed`` of the structural parameters and ``trial``."""
    structure = {k: params[k] for k in STRUCTURE_KEYS if k in params}
    return cell_seed(INSTANCE_ROOT_SEED, structure, int(params.get("trial", 0)))


def broker_instance(params: dict[str, Any]):
    """The cell's instance (module docstring): the preset's settings, the grid's overrides, the
    seed of :func:`instance_seed`.

    >>> inst = broker_instance({"preset": "small", "n_jobs": 6, "horizon": 5, "data_per_slot": 300.0, "trial": 0})
    >>> inst.n_dcs, inst.n_jobs, inst.horizon, float(inst.data.sum(axis=2).max())
    (5, 6, 5, 300.0)
    """
    from clusteropt.instances.broker import random_broker

    preset = str(params.get("preset", "paper"))
    if preset not in PRESET_ARGS:
        raise ValueError(f"preset = {preset!r}; expected one of {', '.join(PRESET_ARGS)}")
    horizon = int(params["horizon"])
    if "jobs_per_slot" in params:
        n_jobs = round(float(params["jobs_per_slot"]) * horizon)
    else:
        n_jobs = int(params["n_jobs"])
    kwargs = dict(PRESET_ARGS[preset])
    if "n_dcs" in params:
        kwargs["n_dcs"] = int(params["n_dcs"])
    if "data_per_slot" in params:
        kwargs["data_per_slot"] = float(params["data_per_slot"])
    if "capacity" in params:
        kwargs["capacity"] = float(params["capacity"])
    if "deploy_per" in params:
        kwargs["deploy_per"] = str(params["deploy_per"])
    return random_broker(n_jobs, horizon=horizon, seed=instance_seed(params), name=f"{preset}-{n_jobs}", **kwargs)


def _params_json(params: dict[str, Any]) -> str:
    return json.dumps(params, sort_keys=True)


def _check(inst, schedule, what: str, reported: float | None = None):
    """Check an integral schedule; raise when it fails or its cost differs from ``reported``."""
    from clusteropt.verify import check_broker_schedule

    check = check_broker_schedule(inst, schedule)
    if not check.ok:
        raise RuntimeError(f"{what} on {inst.name}: the schedule failed verification ({check.n_violations} "
                           f"violations): {'; '.join(map(str, check.violations[:3]))}")
    if reported is not None and not math.isclose(check.total_cost, reported, rel_tol=_REL, abs_tol=_REL):
        raise RuntimeError(f"{what} on {inst.name}: the run reports cost {reported}, the checker recounts "
                           f"{check.total_cost}")
    return check


def _mlbroker_options(params: dict[str, Any], policy: str) -> dict[str, str]:
    """An mlBroker policy's options in a ``broker-cost`` / ``broker-ratio`` cell (:data:`MLBROKER_POLICIES`)."""
    return {"price_form": str(params.get("price_form", "tight")), "rounding_variant": "package",
            **MLBROKER_POLICIES[policy]}


def _verified_run(inst, policy: str, seed: int, **options):
    """Run an integral policy over the horizon and check it: ``(run, check, run_s, verify_s)``.

    ``policy`` may be one of :data:`MLBROKER_POLICIES` (mlBroker with ``options``).
    """
    from clusteropt.online import run_online
    from clusteropt.online.broker import make_policy

    start = time.perf_counter()
    built = make_policy("mlbroker" if policy in MLBROKER_POLICIES else policy, **options)
    run = run_online(built, inst, horizon=inst.horizon, seed=seed)
    run_s = time.perf_counter() - start
    start = time.perf_counter()
    check = _check(inst, run.schedule, f"{policy} {options}" if options else policy, run.total_cost)
    return run, check, run_s, time.perf_counter() - start


def _components(check, prefix: str = "") -> dict[str, float]:
    totals = check.cost_totals()
    return {f"{prefix}{k}": float(v) for k, v in totals.items()}


def _fractional_totals(run) -> dict[str, float]:
    """A_fractional's costs in an mlBroker run, from its slots' ``fractional_C*``."""
    out = {f"fractional_C{k}": math.fsum(float(d.get(f"fractional_C{k}", 0.0)) for d in run.slot_info)
           for k in range(1, 5)}
    out["fractional_total"] = math.fsum(out.values())
    return out


def _inaccurate(run) -> int:
    return sum(str(d.get("status", "optimal")).lower() != "optimal" for d in run.slot_info)


def _workers_added(run) -> int:
    """Workers the package's repair added over an mlBroker run (slot info ``workers_added``)."""
    return sum(int(d.get("workers_added", 0)) for d in run.slot_info)


def _retried(run) -> int:
    """Slots whose problem (10) was solved again with a retry setting (AFractional's ``attempts``)."""
    return sum(int(d.get("attempts", 1)) > 1 for d in run.slot_info)


def _fallbacks(run) -> int:
    """Slots a documented fallback decided (:func:`clusteropt.online.driver.fallback_summary`): the
    slot MILP of ``mlbroker-plus`` out of time without a solution, or problem (10) only
    ``optimal_inaccurate``.
    """
    from clusteropt.online.driver import fallback_summary

    return int(fallback_summary(run.slot_info)["count"])


# -- P_f (9) and the MILP (8), cached per worker process -------------------------------------------


@functools.lru_cache(maxsize=8)
def _lp(params_json: str, price_form: str):
    """P_f (9) of the cell's instance: ``(value, components, seconds)``; components with the hull."""
    import pyomo.environ as pyo

    from clusteropt.models.broker.milp import build_broker_milp
    from clusteropt.solvers.direct import solve_highs_direct

    inst = broker_instance(json.loads(params_json))
    start = time.perf_counter()
    model = build_broker_milp(inst, price_form=price_form, relax=True)
    res = solve_highs_direct(model, raise_on_nonoptimal=False)
    seconds = time.perf_counter() - start
    if not res.is_optimal:
        raise RuntimeError(f"P_f (9, {price_form}) of {inst.name} stopped with {res.termination.name}")
    assert res.objective is not None  # an optimal solve has a solution
    parts = {f"C{k}": math.fsum(float(pyo.value(e)) for e in getattr(model, f"C{k}").values())
             for k in range(1, 5)}
    value = float(res.objective)
    if not math.isclose(math.fsum(parts.values()), value, rel_tol=1e-6, abs_tol=1e-6):
        raise RuntimeError(f"P_f of {inst.name}: components sum to {math.fsum(parts.values())}, objective {value}")
    return value, parts, seconds


@functools.lru_cache(maxsize=8)
def _offline(params_json: str):
    """MILP (8) (hull form) of the cell's instance, verified: ``(value, optimal, bound, seconds)``."""
    from clusteropt.models.broker.optimum import broker_offline_optimum

    params = json.loads(params_json)
    inst = broker_instance(params)
    start = time.perf_counter()
    value, schedule, res = broker_offline_optimum(inst, time_limit=float(params["opt_time_limit"]))
    seconds = time.perf_counter() - start
    check = _check(inst, schedule, "the offline MILP (8) optimum", value)
    bound = float(res.bound) if res.bound is not None else float("nan")
    return check.total_cost, bool(res.is_optimal), bound, seconds


# -- Fig. 5: A_fractional / P_f -------------------------------------------------------------------


def _epsilon(policy: str) -> float:
    if not policy.startswith("eps-"):
        raise ValueError(f"policy = {policy!r}; expected 'eps-<epsilon>' (e.g. 'eps-0.1')")
    return float(policy[4:])


def run_fractional_cell(params: dict[str, Any], seed: int, policy: str) -> dict[str, Any]:
    """Fig. 5: A_fractional with ``epsilon`` from the policy (``eps-0.1``) over P_f, same price form.

    Returns ``epsilon``, ``fractional_total`` (the cost of (9) of the run), ``fractional_C1 ..
    C4``, ``lp_bound`` (P_f, with the grid's ``price_form``), ``ratio``, ``theorem3_r1``,
    ``within_r1``, ``solver`` (``clarabel``, or ``scs`` after a Clarabel failure: ``solver_fallback``),
    ``inaccurate_slots``, ``retried_slots``, timings.
    """
    from clusteropt.online import run_online
    from clusteropt.online.broker import SlotSolveError, make_policy

    eps = _epsilon(policy)
    price_form = str(params["price_form"])
    inst = broker_instance(params)
    lp, _, lp_s = _lp(_params_json(params), price_form)
    solver, fallback = "clarabel", False
    start = time.perf_counter()
    try:
        run = run_online(make_policy("afractional", epsilon=eps, price_form=price_form, solver=solver), inst,
                         horizon=inst.horizon, seed=seed)
    except SlotSolveError as exc:
        log.warning("A_fractional (eps %s, %s) on %s: Clarabel failed (%s); repeating with SCS", eps, price_form,
                    inst.name, exc)
        solver, fallback = "scs", True
        run = run_online(make_policy("afractional", epsilon=eps, price_form=price_form, solver=solver), inst,
                         horizon=inst.horizon, seed=seed)
    run_s = time.perf_counter() - start
    totals = run.cost_totals()
    r1 = theorem3_r1(eps)
    ratio = totals["total"] / lp if lp > 0 else float("nan")
    return {
        "epsilon": eps,
        "fractional_total": totals["total"],
        **{f"fractional_{k}": totals[k] for k in ("C1", "C2", "C3", "C4")},
        "lp_bound": lp,
        "ratio": ratio,
        "theorem3_r1": r1,
        "within_r1": bool(ratio <= r1),
        "solver": solver,
        "solver_fallback": fallback,
        "inaccurate_slots": _inaccurate(run),
        "retried_slots": _retried(run),
        "n_jobs_actual": inst.n_jobs,
        "run_seconds": run_s,
        "lp_seconds": lp_s,
    }


def _fractional_figure(table):
    from matplotlib.figure import Figure

    from clusteropt.experiments.plots import line_plot

    ok = ok_rows(table, "broker-fractional", ("n_dcs", "price_form", "policy", "ratio"))
    forms = sorted(ok.price_form.unique(), key=lambda f: f != "tight")
    fig = Figure(layout="constrained", figsize=(5.2 * len(forms), 4.2))
    axes = fig.subplots(1, len(forms), squeeze=False)[0]
    for ax, form in zip(axes, forms, strict=True):
        line_plot(ok[ok.price_form == form], "n_dcs", "ratio", hue="policy", ax=ax, xlabel="number of DCs",
                  ylabel="A_fractional cost / P_f optimum (mean)", title=f"price form {form}", ci=None)
        here = ok.ratio[ok.price_form == form].astype(float)
        ax.set_ylim(min(0.95, here.min() - 0.01), max(1.3, 1.05 * here.max()))  # the paper's axis: 1 .. 1.25
        ax.ticklabel_format(axis="y", useOffset=False)
        ax.axhline(1.0, color="black", linestyle=":", linewidth=1.0)
    fig.suptitle("Fig. 5: performance ratio of A_fractional (Theorem 3's r1 in the table)")
    return fig


def _fractional_table(table):
    ok = ok_rows(table, "broker-fractional", ("n_dcs", "price_form", "policy", "ratio"))
    return ok.groupby(["price_form", "n_dcs", "policy"], sort=True).agg(
        epsilon=("epsilon", "first"), ratio_mean=("ratio", "mean"), ratio_min=("ratio", "min"),
        ratio_max=("ratio", "max"), theorem3_r1=("theorem3_r1", "first"), lp_bound=("lp_bound", "mean"),
        fractional_total=("fractional_total", "mean"), scs_fallbacks=("solver_fallback", "sum"),
        inaccurate_slots=("inaccurate_slots", "sum"), retried_slots=("retried_slots", "sum"),
        cells=("ratio", "size")).reset_index()


# -- Figs. 6-7: rounded / fractional cost ---------------------------------------------------------


def run_rounding_cell(params: dict[str, Any], seed: int, policy: str) -> dict[str, Any]:
    """Figs. 6-7: mlBroker with ``rounding=policy``; the rounded cost over A_fractional's.

    Returns ``rounded_total`` and ``C1 .. C4`` (the checker's), ``fractional_total`` and
    ``fractional_C1 .. C4``, ``ratio = rounded_total / fractional_total``, ``workers_added``
    (A_round's feasibility fix), ``mean_workers`` (per active job and slot), ``price_form``,
    ``verified``, timings.
    """
    if policy not in ROUNDINGS:
        raise ValueError(f"policy = {policy!r}; expected one of {', '.join(ROUNDINGS)}")
    price_form = str(params.get("price_form", "tight"))
    inst = broker_instance(params)
    run, check, run_s, verify_s = _verified_run(inst, "mlbroker", seed, rounding=policy, price_form=price_form)
    frac = _fractional_totals(run)
    rounded = check.total_cost
    job_slots = sum(len(inst.active(t)) for t in range(1, inst.horizon + 1))
    workers = sum(float(np.asarray(d.y).sum()) for d in run.schedule.slots)
    return {
        "rounded_total": rounded,
        **_components(check),
        **frac,
        "ratio": rounded / frac["fractional_total"] if frac["fractional_total"] > 0 else float("nan"),
        "workers_added": _workers_added(run),
        "mean_workers": workers / job_slots if job_slots else float("nan"),
        "price_form": price_form,
        "inaccurate_slots": _inaccurate(run),
        "retried_slots": _retried(run),
        "fallback_slots": _fallbacks(run),
        "verified": check.ok,
        "run_seconds": run_s,
        "verify_seconds": verify_s,
    }


def _rounding_figure(table):
    from matplotlib.figure import Figure

    from clusteropt.experiments.plots import line_plot

    ok = ok_rows(table, "broker-rounding", ("capacity", "data_per_slot", "policy", "ratio"))
    ok = ok.assign(data=ok.data_per_slot.map(lambda v: f"{v:g} GB"))
    policies = [p for p in ROUNDINGS if p in set(ok.policy)]
    fig = Figure(layout="constrained", figsize=(5.0 * len(policies), 4.2))
    axes = fig.subplots(1, len(policies), squeeze=False, sharey=True)[0]
    for ax, policy in zip(axes, policies, strict=True):
        line_plot(ok[ok.policy == policy], "capacity", "ratio", hue="data", ax=ax,
                  xlabel="worker capacity P_i (GB)", ylabel="rounded cost / A_fractional cost",
                  title=LABELS[policy], ci=None)
    fig.suptitle("Fig. 6: performance ratio of the rounding vs P_i and data per job and slot")
    return fig


def _rounding_table(table):
    ok = ok_rows(table, "broker-rounding", ("capacity", "data_per_slot", "policy", "ratio"))
    return (ok.pivot_table(index=["capacity", "data_per_slot"], columns="policy", values="ratio", aggfunc="mean")
            .reset_index().rename_axis(columns=None))


def _rounding_dcs_figure(table):
    from clusteropt.experiments.plots import line_plot

    ok = ok_rows(table, "broker-rounding-dcs", ("n_dcs", "policy", "ratio"))
    return line_plot(ok, "n_dcs", "ratio", hue="policy", xlabel="number of DCs", labels=LABELS,
                     ylabel="rounded cost / A_fractional cost",
                     title="Fig. 7: A_round vs IR and GR (and the package's slot MILP)", ci=None)


def _rounding_dcs_table(table):
    ok = ok_rows(table, "broker-rounding-dcs", ("n_dcs", "policy", "ratio"))
    return ok.groupby(["n_dcs", "policy"], sort=True).agg(
        ratio_mean=("ratio", "mean"), ratio_min=("ratio", "min"), ratio_max=("ratio", "max"),
        rounded_total=("rounded_total", "mean"), fractional_total=("fractional_total", "mean"),
        workers_added=("workers_added", "mean"), cells=("ratio", "size")).reset_index()


# -- Figs. 8, 11-14: cost and its components vs data size -----------------------------------------


def run_cost_cell(params: dict[str, Any], seed: int, policy: str) -> dict[str, Any]:
    """Figs. 8, 11-14: ``total`` and ``C1 .. C4`` of one algorithm (``opt``: P_f (9), hull).

    Integral policies' costs are the checker's; ``verified`` (None for ``opt``); the mlBroker policies
    also report ``fractional_total``, ``price_form``, ``rounding_variant`` and ``workers_added``
    (the package's repair); ``opt`` its LP solution's components.
    """
    if policy not in COST_POLICIES:
        raise ValueError(f"policy = {policy!r}; expected one of {', '.join(COST_POLICIES)}")
    inst = broker_instance(params)
    if policy == "opt":
        value, parts, seconds = _lp(_params_json(params), "tight")
        # an LP solution, not a schedule: nothing to verify against (8)
        return {"total": value, **parts, "lower_bound": True, "price_form": "tight", "verified": None,
                "run_seconds": seconds}
    options = _mlbroker_options(params, policy) if policy in MLBROKER_POLICIES else {}
    run, check, run_s, verify_s = _verified_run(inst, policy, seed, **options)
    out: dict[str, Any] = {**_components(check), "lower_bound": False, "verified": check.ok}
    if policy in MLBROKER_POLICIES:
        out.update(fractional_total=_fractional_totals(run)["fractional_total"], price_form=options["price_form"],
                   rounding_variant=options["rounding_variant"], workers_added=_workers_added(run),
                   inaccurate_slots=_inaccurate(run), retried_slots=_retried(run), fallback_slots=_fallbacks(run))
    out.update(run_seconds=run_s, verify_seconds=verify_s)
    return out


def _cost_figure(column: str, fig_no: int, what: str):
    def plot(table):
        from clusteropt.experiments.plots import line_plot

        ok = ok_rows(table, "broker-cost", ("data_per_slot", "policy", column))
        ok = ok.assign(algorithm=ok.policy.map(lambda p: LABELS.get(p, p)))
        return line_plot(ok, "data_per_slot", column, hue="algorithm", xlabel="data per job per slot (GB)",
                         ylabel=f"{what} (USD)", title=f"Fig. {fig_no}: {what}", ci=None)

    plot.__name__ = plot.__qualname__ = f"_cost_figure_{column}"
    return plot


def _total_figure(table):
    """Fig. 8: the total cost vs data size, and (right) over Opt's of the same instance."""
    from matplotlib.figure import Figure

    from clusteropt.experiments.plots import line_plot

    ok = ok_rows(table, "broker-cost", ("data_per_slot", "trial", "policy", "total"))
    ok = ok.assign(algorithm=ok.policy.map(lambda p: LABELS.get(p, p)))
    fig = Figure(layout="constrained", figsize=(11.0, 4.2))
    left, right = fig.subplots(1, 2)
    line_plot(ok, "data_per_slot", "total", hue="algorithm", ax=left, xlabel="data per job per slot (GB)",
              ylabel="overall cost (USD)", title="overall cost", ci=None)
    opt = ok[ok.policy == "opt"].groupby(["data_per_slot", "trial"]).total.mean().rename("opt_total")
    rel = ok[ok.policy != "opt"].join(opt, on=["data_per_slot", "trial"])
    rel = rel[rel.opt_total.notna()]
    if not rel.empty:
        line_plot(rel.assign(vs_opt=rel.total / rel.opt_total), "data_per_slot", "vs_opt", hue="algorithm",
                  ci=None, logy=True, ax=right, xlabel="data per job per slot (GB)",
                  ylabel="overall cost / Opt (P_f)", title="relative to Opt (a lower bound)")
    fig.suptitle("Fig. 8: overall cost under different data sizes per job per time slot")
    return fig


def _cost_table(table):
    """Table 4's layout at the default data size: rows algorithms, Cost1 .. Cost4, Overall, savings."""
    ok = ok_rows(table, "broker-cost", ("data_per_slot", "policy", "total", "C1", "C2", "C3", "C4"))
    sizes = np.asarray(sorted(ok.data_per_slot.unique()), dtype=float)
    size = float(sizes[np.argmin(np.abs(sizes - DEFAULT_DATA))])
    here = ok[ok.data_per_slot == size]
    out = here.groupby("policy")[["C1", "C2", "C3", "C4", "total"]].mean()
    out = out.reindex([p for p in COST_POLICIES if p in out.index])
    out.columns = ["Cost1", "Cost2", "Cost3", "Cost4", "Overall"]
    if "mlbroker" in out.index:
        ml = out.loc["mlbroker", "Overall"]
        out["mlbroker_saving"] = (out.Overall - ml) / out.Overall
    out.insert(0, "algorithm", [LABELS.get(p, p) for p in out.index])
    out.insert(1, "data_per_slot", size)
    return out.reset_index()


def _totals_table(table):
    ok = ok_rows(table, "broker-cost", ("data_per_slot", "policy", "total"))
    out = (ok.pivot_table(index="data_per_slot", columns="policy", values="total", aggfunc="mean")
           .reset_index().rename_axis(columns=None))
    return out[["data_per_slot", *[p for p in COST_POLICIES if p in out.columns]]]


# -- Figs. 9-10: mlBroker / offline optimum -------------------------------------------------------


def run_ratio_cell(params: dict[str, Any], seed: int, policy: str) -> dict[str, Any]:
    """Figs. 9-10: the policy's verified total over the offline optimum of (8).

    Returns ``total``, ``opt_value`` (the verified MILP schedule's cost), ``opt_optimal``,
    ``opt_bound``, ``lp_bound`` (P_f, hull), ``denominator`` (``"milp"`` when proved optimal,
    else ``"lp"``), ``ratio`` (total / denominator), ``ratio_lp``, ``verified``, timings.  Raises
    when the policy beats a proved optimum by more than 1e-6 (relative).
    """
    key = _params_json(params)
    inst = broker_instance(params)
    opt, optimal, bound, opt_s = _offline(key)
    lp, _, lp_s = _lp(key, "tight")
    options = _mlbroker_options(params, policy) if policy in MLBROKER_POLICIES else {}
    run, check, run_s, verify_s = _verified_run(inst, policy, seed, **options)
    total = check.total_cost
    if optimal and total < opt * (1 - _REL) - _REL:
        raise RuntimeError(f"{policy} on {inst.name}: cost {total} below the proved MILP optimum {opt}")
    if lp > opt * (1 + _REL) + _REL:
        raise RuntimeError(f"{inst.name}: P_f {lp} above the MILP schedule's cost {opt}")
    denominator = opt if optimal else lp
    return {
        "total": total,
        **{k: v for k, v in _components(check).items() if k != "total"},
        "opt_value": opt,
        "opt_optimal": optimal,
        "opt_bound": bound,
        "lp_bound": lp,
        "denominator": "milp" if optimal else "lp",
        "ratio": total / denominator if denominator > 0 else float("nan"),
        "ratio_lp": total / lp if lp > 0 else float("nan"),
        "n_jobs_actual": inst.n_jobs,
        **({"retried_slots": _retried(run), "workers_added": _workers_added(run),
            "fallback_slots": _fallbacks(run)} if policy in MLBROKER_POLICIES else {}),
        "verified": check.ok,
        "run_seconds": run_s,
        "verify_seconds": verify_s,
        "opt_seconds": opt_s,
        "lp_seconds": lp_s,
    }


def _ratio_figure(x: str, fig_no: int, xlabel: str):
    other = "jobs_per_slot" if x == "horizon" else "horizon"

    def plot(table):
        from matplotlib.figure import Figure

        from clusteropt.experiments.plots import line_plot

        ok = ok_rows(table, "broker-ratio", ("horizon", "jobs_per_slot", "policy", "ratio"))
        ok = ok.assign(algorithm=ok.policy.map(lambda p: LABELS.get(p, p)))
        fig = Figure(layout="constrained", figsize=(11.0, 4.2))
        left, right = fig.subplots(1, 2)
        ml = ok[ok.policy == "mlbroker"]
        if not ml.empty:
            line_plot(ml, x, "ratio", hue=other, ax=left, xlabel=xlabel, ylabel="mlBroker cost / optimum of (8)",
                      title=f"mlBroker, one line per {other.replace('_', ' ')}", ci=None)
        line_plot(ok, x, "ratio", hue="algorithm", ci=None, logy=True, ax=right, xlabel=xlabel,
                  ylabel="cost / optimum of (8)", title=f"all algorithms (mean over {other.replace('_', ' ')})")
        for ax in (left, right):
            ax.axhline(1.0, color="black", linestyle=":", linewidth=1.0)
        fig.suptitle(f"Fig. {fig_no}: performance ratio vs {xlabel} (small preset, 700 GB per job and slot)")
        return fig

    plot.__name__ = plot.__qualname__ = f"_ratio_figure_{x}"
    return plot


def _deploy_table(table):
    """Per deployment-cost reading and policy: the ratio to the optimum of (8), C3's share of it."""
    ok = ok_rows(table, "broker-deploy", ("deploy_per", "horizon", "jobs_per_slot", "policy", "ratio", "C3"))
    ok = ok.assign(c3_share=ok.C3 / ok.total)
    return ok.groupby(["deploy_per", "policy"], sort=True).agg(
        ratio_mean=("ratio", "mean"), ratio_max=("ratio", "max"), c3_share=("c3_share", "mean"),
        total=("total", "mean"), opt_value=("opt_value", "mean"),
        milp_denominators=("denominator", lambda s: int((s == "milp").sum())), cells=("ratio", "size")
    ).reset_index()


def _deploy_figure(table):
    """Cost / optimum of (8) per policy, one panel per reading of the deployment cost."""
    from matplotlib.figure import Figure

    from clusteropt.experiments.plots import line_plot

    ok = ok_rows(table, "broker-deploy", ("deploy_per", "horizon", "policy", "ratio"))
    readings = sorted(ok.deploy_per.unique())
    fig = Figure(layout="constrained", figsize=(5.5 * len(readings), 4.2))
    axes = fig.subplots(1, len(readings), squeeze=False, sharey=True)[0]
    for ax, reading in zip(axes, readings, strict=True):
        line_plot(ok[ok.deploy_per == reading], "horizon", "ratio", ax=ax, labels=LABELS,
                  xlabel="number of time slots T", ylabel="cost / optimum of (8)",
                  title=f"c_i per GB of {'the model' if reading == 'model' else 'data per slot'}")
        ax.axhline(1.0, color="black", linestyle=":", linewidth=1.0)
    fig.suptitle("mlBroker and the baselines under the two readings of the deployment cost (small preset)")
    return fig


def _ratio_table(table):
    ok = ok_rows(table, "broker-ratio", ("horizon", "jobs_per_slot", "policy", "ratio"))
    return ok.groupby(["horizon", "jobs_per_slot", "policy"], sort=True).agg(
        ratio_mean=("ratio", "mean"), ratio_max=("ratio", "max"), ratio_lp_mean=("ratio_lp", "mean"),
        milp_denominators=("denominator", lambda s: int((s == "milp").sum())), cells=("ratio", "size"),
        opt_value=("opt_value", "mean"), total=("total", "mean")).reset_index()


register_experiment(
    Experiment(
        name="broker-deploy",
        run=run_ratio_cell,
        grid={"preset": ["small"], "horizon": [10, 20], "jobs_per_slot": [2, 4], "data_per_slot": [700.0],
              "deploy_per": ["model", "data"], "opt_time_limit": [300.0], "trial": list(range(5))},
        seeds=[0],
        policies=["mlbroker", "mlbroker-paper", "mlbroker-plus", "central", "oasis"],
        description="cost / optimum of (8) with c_i per GB of the model (the package's reading) or of the data "
                    "per slot: where the deployment cost and (10)'s regularization matter",
        paper="003 Sec. 6.1 (deployment cost reading)",
        root_seed=3000,
        timeout=1200.0,
        quick={"grid": {"horizon": [4], "jobs_per_slot": [1, 2], "opt_time_limit": [30.0], "trial": [0]},
               "policies": ["mlbroker", "mlbroker-plus", "central"], "timeout": 120.0},
        figures={"deploy": _deploy_figure},
        tables={"deploy": _deploy_table},
    )
)

register_experiment(
    Experiment(
        name="broker-fractional",
        run=run_fractional_cell,
        grid={"preset": ["paper"], "n_jobs": [100], "horizon": [50], "n_dcs": [5, 10, 15, 20],
              "price_form": ["tight", "bigm"], "trial": list(range(5))},
        seeds=[0],
        policies=[f"eps-{e:g}" for e in EPSILONS],
        description="A_fractional's cost of (9) / the P_f optimum (same price form) vs DCs and epsilon",
        paper="003 Fig. 5",
        root_seed=3000,
        timeout=1800.0,
        quick={"grid": {"n_jobs": [10], "horizon": [8], "n_dcs": [3, 6], "trial": [0]},
               "policies": ["eps-0.1", "eps-1"], "timeout": 120.0},
        figures={"fig5-fractional": _fractional_figure},
        tables={"fractional-ratio": _fractional_table},
    )
)

register_experiment(
    Experiment(
        name="broker-rounding",
        run=run_rounding_cell,
        grid={"preset": ["paper"], "n_jobs": [30], "horizon": [20],
              "capacity": [16.0, 26.0, 36.0, 46.0, 56.0, 66.0], "data_per_slot": [100.0, 300.0, 500.0, 700.0],
              "trial": list(range(5))},
        seeds=[0],
        policies=list(ROUNDINGS),
        description="rounded cost / A_fractional's fractional cost (A_round, IR, GR; slot MILP) vs P_i and data "
                    "per slot",
        paper="003 Fig. 6",
        root_seed=3000,
        timeout=900.0,
        quick={"grid": {"n_jobs": [8], "horizon": [6], "capacity": [16.0, 66.0], "data_per_slot": [100.0],
                        "trial": [0]}, "timeout": 120.0},
        figures={"fig6-rounding": _rounding_figure},
        tables={"rounding-ratio": _rounding_table},
    )
)

register_experiment(
    Experiment(
        name="broker-rounding-dcs",
        run=run_rounding_cell,
        grid={"preset": ["paper"], "n_jobs": [30], "horizon": [20], "n_dcs": [5, 10, 15, 20],
              "trial": list(range(5))},
        seeds=[0],
        policies=list(ROUNDINGS),
        description="rounded cost / A_fractional's fractional cost of A_round vs IR and GR (and the slot MILP) vs "
                    "the number of DCs",
        paper="003 Fig. 7",
        root_seed=3000,
        timeout=900.0,
        quick={"grid": {"n_jobs": [8], "horizon": [6], "n_dcs": [3, 6], "trial": [0]}, "timeout": 120.0},
        figures={"fig7-roundings": _rounding_dcs_figure},
        tables={"rounding-ratio": _rounding_dcs_table},
    )
)

register_experiment(
    Experiment(
        name="broker-cost",
        run=run_cost_cell,
        grid={"preset": ["paper"], "n_jobs": [100], "horizon": [50], "data_per_slot": list(DATA_SIZES),
              "trial": list(range(5))},
        seeds=[0],
        policies=list(COST_POLICIES),
        description="total cost and C1..C4 of mlBroker, Local, Central, OASiS and Opt (P_f) vs data per job "
                    "and slot",
        paper="003 Figs. 8, 11-14, Table 4",
        root_seed=3000,
        timeout=1800.0,
        quick={"grid": {"n_jobs": [10], "horizon": [8], "data_per_slot": [100.0, 500.0], "trial": [0]},
               "timeout": 120.0},
        figures={"fig8-total": _total_figure,
                 "fig11-cost1": _cost_figure("C1", 11, "Cost1 (data transfer)"),
                 "fig12-cost2": _cost_figure("C2", 12, "Cost2 (resources)"),
                 "fig13-cost3": _cost_figure("C3", 13, "Cost3 (deployment)"),
                 "fig14-cost4": _cost_figure("C4", 14, "Cost4 (worker-PS communication)")},
        tables={"costs": _cost_table, "totals": _totals_table},
    )
)

register_experiment(
    Experiment(
        name="broker-ratio",
        run=run_ratio_cell,
        grid={"preset": ["small"], "horizon": [5, 10, 15, 20, 25], "jobs_per_slot": [1, 2, 3, 4],
              "data_per_slot": [700.0], "opt_time_limit": [300.0], "trial": list(range(5))},
        seeds=[0],
        policies=["mlbroker", "mlbroker-paper", "mlbroker-plus", "local", "central", "oasis"],
        description="cost / offline optimum of (8) (MILP where proved optimal, else P_f) vs slots and jobs per "
                    "slot, small instances",
        paper="003 Figs. 9, 10",
        root_seed=3000,
        timeout=1200.0,
        quick={"grid": {"horizon": [4, 6], "jobs_per_slot": [1, 2], "opt_time_limit": [30.0], "trial": [0]},
               "timeout": 120.0},
        figures={"fig9-slots": _ratio_figure("horizon", 9, "number of time slots T"),
                 "fig10-jobs": _ratio_figure("jobs_per_slot", 10, "jobs per slot")},
        tables={"ratio": _ratio_table},
    )
)
