"""Runs of the coflow orderings and schedulers (paper 001): order, schedule, verify, bound."""

from __future__ import annotations

from typing import Any

from clusteropt.runs import Run, RunFailed, RunnerSpec, register_runner

__all__ = ["SPEC", "check_output", "run_coflow_policy"]

_POLICIES = {
    "primal-dual": "the slides' primal-dual ordering (kappa threshold)",
    "lp-order": "order by the concurrent-open-shop LP's completion times",
    "sincronia": "Sincronia's BSSI ordering (Agarwal et al., SIGCOMM 2018)",
    "sebf": "smallest effective bottleneck first (Varys)",
    "fifo": "first in, first out by release",
    "smallest-first": "smallest total size first",
    "largest-first": "largest total size first",
}

_OPTIONS = {
    "scheduler": "greedy (default: priority greedy matchings), paper (the moved blocks) or madd (Varys's pacing)",
    "lower_bound": "also compute the LP lower bound (row generation)",
    "kappa": "primal-dual threshold (default 0.5)",
    "online": "re-plan the ordering on the remaining demand at every arrival, greedy scheduler",
    "epoch": "with online: re-plan every epoch slots instead of at every arrival",
}


def run_coflow_policy(inst, policy: str, *, seed=0, progress=False, scheduler=None, lower_bound=None,
                      kappa=None, online=None, epoch=None) -> Run:
    """Order and schedule ``inst`` (:func:`clusteropt.algorithms.coflow.pipeline.run_coflow`),
    checked by :func:`clusteropt.verify.check_coflow_schedule`.  No policy draws at random: the
    run's seed is None.
    """
    from clusteropt.algorithms.coflow.pipeline import run_coflow
    from clusteropt.solvers import SolverError

    scheduler = scheduler or "greedy"
    # weights, the LP's costs, are at most MAX_MAGNITUDE (the loader refuses more), far below HiGHS's
    # infinite_cost
    try:
        result = run_coflow(inst, policy, scheduler, lower_bound=bool(lower_bound),
                            kappa=0.5 if kappa is None else kappa, progress=progress, online=bool(online),
                            epoch=epoch)
    except SolverError as exc:
        raise RunFailed(f"the LP lower bound: {exc}") from None
    how = (f"online, re-planned at {result.replan_slots} slots" if online
           else "online" if result.online else "offline")
    line = (f"{policy} + {scheduler} ({how}): total weighted CCT {result.total_weighted_cct:.6g}, "
            f"{result.schedule.n_blocks} blocks, makespan {result.schedule.makespan}, "
            f"verified {result.verified}")
    if result.lower_bound is not None:
        ratio = "undefined: the bound is 0" if result.ratio is None else f"{result.ratio:.4f}"
        line += f"; LP bound {result.lower_bound:.6g} (ratio {ratio})"
        if result.bound_converged is False:  # row generation stopped early: a valid bound, not the LP optimum
            line += (" (row generation did not converge: a valid lower bound, not the LP optimum"
                     + ("; lp-order's order comes from that relaxation)" if policy == "lp-order" else ")"))
    late = result.from_release(inst)
    if inst.release.any():
        line += f"; counted from release: {late['total']:.6g}, mean CCT {late['mean']:.4g} slots"
        if late["mean_seconds"] is not None:
            line += f" = {late['mean_seconds']:.4g} s"
        if late["ratio"] is not None:
            line += f" (ratio {late['ratio']:.4f} to the bound on that scale)"
    out = {"system": "coflow", **result.to_json_dict(inst)}
    failure = None if result.verified else (
        f"the schedule failed verification: {'; '.join(result.violations[:3])}")
    costs = {"total_weighted_cct": result.total_weighted_cct, "from_release": late["total"],
             "mean_cct_from_release": late["mean"], "makespan": int(result.schedule.makespan),
             "lower_bound": result.lower_bound, "ratio": result.ratio}
    return Run(kind="coflow", policy=policy, seed=None, params=dict(result.params), summary=line,
               costs=costs, ok=bool(result.verified), check=result.check, result=result, instance=inst, out=out,
               failure=failure)


def check_output(inst, data) -> Any:
    """Re-check an ``out.json``'s blocks (:func:`clusteropt.verify.check_coflow_schedule`)."""
    from clusteropt.decisions.coflow import CoflowSchedule
    from clusteropt.runs import require
    from clusteropt.verify import check_coflow_schedule

    assert inst.ids is not None  # validate() fills in the default ids
    blocks = require(data, "blocks", "coflow")
    try:
        schedule = CoflowSchedule.from_json_blocks(blocks, inst.ids)
    except (KeyError, TypeError) as exc:
        raise ValueError(f"output: blocks: {exc}") from None
    return check_coflow_schedule(inst, schedule)


def _as_coflow(inst):
    return inst.to_coflow()


SPEC = register_runner(RunnerSpec("coflow", _POLICIES, _OPTIONS, run_coflow_policy, check_output,
                                  also=("concurrent-open-shop",), convert=_as_coflow))
