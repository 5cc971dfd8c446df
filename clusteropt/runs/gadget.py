"""Runs of GADGET and its baselines (paper 000): allocate every slot, verify the schedule."""

from __future__ import annotations

from typing import Any

from clusteropt.runs import OptionError, Run, RunFailed, RunnerSpec, register_runner

__all__ = ["SPEC", "check_output", "run_gadget_policy"]

_POLICIES = {
    "gadget": "Alg. 1 (temporal greedy) with a per-slot solver: greedy, the G-VNE ILP (12)-(19) or Alg. 2",
    "fifo": "baseline: first in, first out",
    "drf": "baseline: dominant resource fairness",
    "las": "baseline: least attained service",
}

_OPTIONS = {
    "slot_solver": "gadget: greedy (default), exact (the G-VNE ILP (12)-(19)) or lp-rs-mde (Alg. 2)",
    "time_limit": "gadget exact: seconds per slot ILP (default 60; inf: none)",
    "mip_gap": "gadget exact: relative MIP gap per slot (default 1e-4)",
    "warm": "gadget lp-rs-mde: keep both HiGHS models across slots, re-solve from the last basis",
    "embed_route": "gadget lp-rs-mde: auto (default: by size), lp (the paper's augmented LP) or colgen",
    "select_algorithm": "gadget lp-rs-mde: HiGHS's algorithm for the ring-selection LP (simplex or ipm)",
    "select_classes": "gadget lp-rs-mde: solve the ring-selection LP over classes of interchangeable servers",
    "select_route": "gadget lp-rs-mde: auto (default: by size), full (the paper's LP) or capacity rows first",
    "quotient": "gadget: solve every slot on the fat-tree's quotient tree, route on the fat-tree",
    "fill": "gadget: greedy (default: the work-conserving fill of idle capacity) or none (Alg. 1 as written)",
    "rounding": "gadget lp-rs-mde: safe (default; never exceeds a capacity) or paper (Alg. 2 lines 7-9)",
}

_LP_RS_MDE_ONLY = ("warm", "embed_route", "select_algorithm", "select_classes", "select_route")


def run_gadget_policy(inst, policy: str, *, seed=0, progress=False, slot_solver=None, time_limit=None,
                      mip_gap=None, warm=None, embed_route=None, select_algorithm=None, select_classes=None,
                      select_route=None, quotient=None, fill=None, rounding=None) -> Run:
    """Run a GADGET policy over the instance's horizon, checked by
    :func:`clusteropt.verify.check_gadget_schedule`.

    ``rounding="paper"`` (Alg. 2 lines 7-9) may overload servers and links, as Theorem 8 allows: such
    a run is returned with ``ok`` False and a ``warning`` (not a ``failure``), since it is exactly the
    rounding asked for; any other violation, or an overload in any other mode, is a ``failure``.
    """
    from clusteropt.online import run_online
    from clusteropt.online.gadget import CAPACITY_CONSTRAINTS, capacity_overload, make_policy
    from clusteropt.provenance import solver_block
    from clusteropt.verify import check_gadget_schedule

    if rounding == "package":
        raise OptionError("{rounding} package is mlBroker's; GADGET's lp-rs-mde slot solver takes safe (default) "
                          "or paper")
    given = {"slot_solver": slot_solver, "time_limit": time_limit, "mip_gap": mip_gap, "warm": warm or None,
             "embed_route": embed_route, "select_algorithm": select_algorithm,
             "select_classes": select_classes or None, "select_route": select_route, "quotient": quotient or None,
             "fill": fill, "rounding": rounding}
    solver_name = slot_solver or "greedy"
    if policy == "gadget":
        if rounding == "paper" and solver_name != "lp-rs-mde":
            raise OptionError(f"{{rounding}} paper is Alg. 2's rounding; use it with {{slot_solver}} lp-rs-mde, "
                              f"not {solver_name}")
        for option in _LP_RS_MDE_ONLY:
            if given[option] is not None and solver_name != "lp-rs-mde":
                raise OptionError(f"{{{option}}} is an option of {{slot_solver}} lp-rs-mde, not of {solver_name}")
        options: dict[str, Any] = {
            "slot_solver": solver_name, "fill": fill or "greedy", "rounding": rounding or "safe",
            "warm": bool(warm), "embed_route": embed_route or "auto",
            "select_algorithm": select_algorithm or "simplex",
            "select_classes": bool(select_classes), "select_route": select_route or "auto",
            "quotient": bool(quotient)}
        # unset: the policy's defaults (the exact slot solver's limit and gap), recorded in its params
        options.update({k: v for k, v in (("time_limit", time_limit), ("mip_gap", mip_gap)) if v is not None})
    else:
        for option, value in given.items():
            if value is not None:
                raise OptionError(f"{{{option}}} is a parameter of the gadget policy, not of {policy}")
        options = {}
    try:
        result = run_online(make_policy(policy, **options), inst, horizon=inst.horizon, seed=seed,
                            progress=progress)
    except RuntimeError as exc:  # a slot solver found no solution (e.g. time_limit too short)
        raise RunFailed(str(exc)) from None
    chk = check_gadget_schedule(inst, result.schedule)
    assert chk.worker_slots is not None  # the checker always counts them
    overload = capacity_overload(inst, chk)
    paper = policy == "gadget" and rounding == "paper"
    if policy == "gadget":
        label = f"{policy} ({', '.join([solver_name] + (['paper rounding'] if paper else []))}"
        label += ", no fill)" if options["fill"] == "none" else ")"
    else:
        label = policy
    not_optimal = [t for t, d in enumerate(result.slot_info, start=1)
                   if d.get("termination") not in (None, "OPTIMAL")]
    if not_optimal:  # the exact slot ILP stopped by its time limit: the incumbent decided those slots
        label += (f" ({len(not_optimal)} of {inst.horizon} slots not proved optimal: the incumbent at the "
                  "time limit)")
    over_text = ""
    if overload["capacity_violations"] or paper:
        over_text = (f"; capacity violations {overload['capacity_violations']} in {overload['overloaded_slots']} "
                     f"slots, worst load {overload['max_load_ratio']:.4g} x capacity")
    summary = (f"{label}: {inst.n_jobs} jobs over {inst.horizon} slots, total utility {chk.total_utility:.6g}, "
               f"{int(chk.worker_slots.sum())} worker-slots, {result.seconds:.2f} s deciding; verified {chk.ok}"
               f"{over_text}")
    out = {"system": "gadget", **result.to_json_dict(inst)}
    out["seed"] = seed
    out["total_utility"] = chk.total_utility  # the verifier's recount
    out["slots_not_optimal"] = not_optimal
    out["verified"] = chk.ok
    out["violations"] = [str(v) for v in chk.violations[:20]]
    out.update(overload)
    solver = None
    if policy == "gadget" and solver_name == "exact":
        solver = solver_block(result.params.get("solver"), {"time_limit": result.params.get("time_limit"),
                                                            "mip_gap": result.params.get("mip_gap"),
                                                            "builder": result.params.get("builder")})
    elif policy == "gadget" and solver_name == "lp-rs-mde":
        from clusteropt.rounding.gadget import EMBED_HIGHS_OPTIONS, SELECT_HIGHS_OPTIONS

        solver = solver_block(result.params.get("solver"), {"select": dict(SELECT_HIGHS_OPTIONS),
                                                            "embed": dict(EMBED_HIGHS_OPTIONS)})
    failure = warning = None
    if not chk.ok:
        other = [v for v in chk.violations if v.constraint not in CAPACITY_CONSTRAINTS]
        if paper and not other:
            warning = (f"{{rounding}} paper (Alg. 2 lines 7-9) overloaded {overload['capacity_violations']} "
                       f"server resources / links in {overload['overloaded_slots']} slots (worst load "
                       f"{overload['max_load_ratio']:.4g} x capacity), as Theorem 8 allows; the schedule is not "
                       "feasible (verified False)")
        else:
            failure = f"the schedule failed verification: {'; '.join(str(v) for v in chk.violations[:3])}"
    costs = {"total_utility": chk.total_utility, "worker_slots": int(chk.worker_slots.sum()),
             "slots_not_optimal": len(not_optimal), **overload}
    return Run(kind="gadget", policy=policy, seed=seed, params=dict(result.params), summary=summary, costs=costs,
               ok=bool(chk.ok), check=chk, result=result, instance=inst, out=out, solver=solver, failure=failure,
               warning=warning)


def check_output(inst, data) -> Any:
    """Re-check an ``out.json``'s slots (:func:`clusteropt.verify.check_gadget_schedule`)."""
    from clusteropt.decisions.gadget import GadgetSchedule
    from clusteropt.runs import require
    from clusteropt.verify import check_gadget_schedule

    slots = require(data, "slots", "gadget")
    try:
        schedule = GadgetSchedule.from_json_list(slots, inst.n_jobs, inst.cluster.n_servers)
    except (KeyError, TypeError, ValueError, IndexError) as exc:
        raise ValueError(f"output: slots: {exc}") from None
    return check_gadget_schedule(inst, schedule)


SPEC = register_runner(RunnerSpec("gadget", _POLICIES, _OPTIONS, run_gadget_policy, check_output))
