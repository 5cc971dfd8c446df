"""Runs of the mlBroker policies (paper 003): decide every slot, verify the schedule, count fallbacks."""

from __future__ import annotations

import math
from typing import Any

from clusteropt.runs import OptionError, Run, RunFailed, RunnerSpec, register_runner

__all__ = ["SPEC", "check_output", "run_broker_policy"]

_POLICIES = {
    "mlbroker": "Alg. 1: the regularized convex problem (10) per slot, then A_round (Alg. 2)",
    "mlbroker-plus": "the package's: mlBroker, each slot decided by A_round or the slot's exact MILP, "
                     "whichever costs less",
    "local": "baseline: every job in its data's data centre",
    "central": "baseline: every job in one data centre",
    "oasis": "baseline: OASiS's online placement",
}

_OPTIONS = {
    "epsilon": "mlbroker*: epsilon of the regularized problem (10) (default 0.1)",
    "price_form": "mlbroker*: price rows of (10), tight (the convex hull of Eq. (7), default) or bigm ((8c)-(8e))",
    "rounding": "mlbroker*: A_round with the package's repair (package, default) or as Alg. 2 writes it (paper)",
    "transfers": "mlbroker*: data-transfer variables of (10): all DC pairs (default, the paper's) or sources "
                 "(only from the DCs holding the data: the same problem, smaller)",
    "trace_fractional": "mlbroker*: keep every slot's fractional solution and candidates in the output",
    "mip_gap": "mlbroker-plus: relative gap of the slot MILP (default 0.005)",
    "time_limit": "mlbroker-plus: seconds per slot MILP (default: none)",
}

#: Options of the mlBroker policies only.
_MLBROKER_ONLY = ("epsilon", "rounding", "trace_fractional", "price_form", "transfers")


def run_broker_policy(inst, policy: str, *, seed=0, progress=False, epsilon=None, price_form=None,
                      rounding=None, trace_fractional=None, mip_gap=None, time_limit=None, transfers=None) -> Run:
    """Run a broker policy over the instance's horizon (:func:`clusteropt.online.run_online`), checked
    by :func:`clusteropt.verify.check_broker_schedule`.

    Slots decided by a policy's documented fallback are counted (``out["fallbacks"]``) and named in
    the summary line; a slot solve with no solution and no fallback raises :class:`RunFailed`.
    """
    from clusteropt.online import run_online
    from clusteropt.online.broker import make_policy, trace_json
    from clusteropt.online.driver import fallback_note, fallback_summary
    from clusteropt.provenance import solver_block
    from clusteropt.verify import check_broker_schedule

    mlbroker = policy in ("mlbroker", "mlbroker-plus")
    if rounding not in (None, "package", "paper"):
        raise OptionError(f"{{rounding}} {rounding} is GADGET's; mlBroker takes package (default) or paper")
    if not mlbroker:
        given = {"epsilon": epsilon, "rounding": rounding, "trace_fractional": trace_fractional or None,
                 "price_form": price_form, "transfers": transfers}
        for option in _MLBROKER_ONLY:
            if given[option] is not None:
                raise OptionError(f"{{{option}}} is a parameter of mlbroker, not of {policy}")
    if policy != "mlbroker-plus":
        for option, value in (("mip_gap", mip_gap), ("time_limit", time_limit)):
            if value is not None:
                raise OptionError(f"{{{option}}} is a parameter of mlbroker-plus's slot MILP (and GADGET's exact "
                                  f"slot solver), not of {policy}")
    price_form = price_form or "tight"
    options: dict[str, Any] = {}
    if mlbroker:
        options = {"epsilon": epsilon, "price_form": price_form, "rounding_variant": rounding or "package",
                   "keep_trace": bool(trace_fractional), "transfers": transfers or "all"}
    if policy == "mlbroker-plus":
        options.update(slot_gap=mip_gap, slot_time_limit=time_limit)
    built = make_policy(policy, **options)
    try:
        result = run_online(built, inst, horizon=inst.horizon, seed=seed, progress=progress)
    except RuntimeError as exc:
        raise RunFailed(str(exc)) from None
    chk = check_broker_schedule(inst, result.schedule)
    totals = chk.cost_totals()
    fallbacks = fallback_summary(result.slot_info)
    note = fallback_note(fallbacks, inst.horizon)
    retried = sum(int(d.get("attempts", 1)) > 1 for d in result.slot_info)
    retry_text = f"; {retried} slots solved on a retry (slot_info)" if retried else ""
    summary = (f"{policy}{f' ({note})' if note else ''}: {inst.n_jobs} jobs over {inst.horizon} slots, total "
               f"cost {chk.total_cost:.6g} (C1 {totals['C1']:.4g}, C2 {totals['C2']:.4g}, C3 {totals['C3']:.4g}, "
               f"C4 {totals['C4']:.4g}), {result.seconds:.2f} s deciding; verified {chk.ok}{retry_text}")
    params = built.get_params()
    lp_solver = solver_block("highs")  # the transportation LP for q (and OASiS's placement MILPs)
    solver = solver_block(params["solver"]) if mlbroker else lp_solver
    if mlbroker:
        params.update(solver=solver, lp_solver=lp_solver)
    out: dict[str, Any] = {"system": "broker", "policy": policy, "seed": seed, "params": params,
                           **result.to_json_dict(inst)}
    out["fallbacks"] = fallbacks  # slots decided by the policy's documented fallback
    out["retried_slots"] = retried
    out["total_cost"] = chk.total_cost  # the verifier's recount
    out["costs"] = totals
    out["verified"] = chk.ok
    out["violations"] = [str(v) for v in chk.violations[:20]]
    if mlbroker:
        frac = {c: math.fsum(float(d[f"fractional_{c}"]) for d in result.slot_info)
                for c in ("C1", "C2", "C3", "C4")}
        out["fractional_costs"] = {**frac, "total": math.fsum(frac.values())}
        big_m = inst.big_m
        out["big_m"] = {"M": {str(r): dict(zip(inst.resources, big_m[r].tolist(), strict=True))
                              for r in range(inst.n_dcs)},
                        "U": int(inst.big_u), "M_used": price_form == "bigm"}
        if trace_fractional:
            out["fractional"] = trace_json(inst, built)
    failure = None if chk.ok else (
        f"the decisions failed verification: {'; '.join(str(v) for v in chk.violations[:3])}")
    return Run(kind="broker", policy=policy, seed=seed, params=params, summary=summary,
               costs={**totals, "fallback_slots": fallbacks["count"]},
               ok=bool(chk.ok), check=chk, result=result, instance=inst, out=out, solver=solver, failure=failure)


def check_output(inst, data) -> Any:
    """Re-check an ``out.json``'s schedule (:func:`clusteropt.verify.check_broker_schedule`)."""
    from clusteropt.decisions.broker import BrokerSchedule
    from clusteropt.runs import require
    from clusteropt.verify import check_broker_schedule

    raw = require(data, "schedule", "broker")
    try:
        schedule = BrokerSchedule.from_dict(raw)
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"output: schedule: {exc}") from None
    return check_broker_schedule(inst, schedule)


SPEC = register_runner(RunnerSpec("broker", _POLICIES, _OPTIONS, run_broker_policy, check_output))
