"""Runs of the ring-partitioning policies (paper 004): serve every request, migrate, verify."""

from __future__ import annotations

from typing import Any

from clusteropt.runs import OptionError, Run, RunnerSpec, register_runner

__all__ = ["SPEC", "check_output", "run_ring_policy"]

#: The first is the default: ``static``, the policy with a guarantee whose worst measured cost over
#: the better baseline is the smallest (docs/papers/004-ring.md, "Which policy").
_POLICIES = {
    "static": "Thm 2.2's static algorithm (against the best fixed placement)",
    "dynamic": "Thm 2.1's dynamic algorithm (random 2-HST + mirror-descent line MTS)",
    "dynamic-mix": "the package's: the dynamic algorithm with the HST and work-function line MTS combined",
    "dynamic-soft": "the dynamic algorithm with the soft (entropic) line MTS",
    "dynamic-wfa": "the dynamic algorithm with the deterministic work-function line MTS",
    "never": "baseline: never migrate",
    "static-best": "baseline: the best arcs in hindsight, placed once",
    "greedy": "baseline: move the cut off each requested edge greedily",
    "follow": "the package's: follow the cheapest of dynamic-mix, greedy and never (lazy switching)",
    "component": "peer: Avin et al.'s component-based algorithm (CREP, deterministic, any request graph)",
}

_OPTIONS = {
    "epsilon": "the algorithm's epsilon (dynamic*, static, greedy, follow, component; default: the "
               "algorithm's own)",
    "rate": "dynamic-mix and follow: learning-rate scale of the combination (defaults 2 and 0.5)",
}


def run_ring_policy(inst, policy: str, *, seed=0, progress=False, epsilon=None, rate=None) -> Run:
    """Run a ring policy on ``inst`` (:func:`clusteropt.online.ring.run_ring`), checked by
    :func:`clusteropt.verify.ring.check_ring_run`.
    """
    from clusteropt.online.ring import POLICIES, make_policy, run_ring
    from clusteropt.verify.ring import check_ring_run

    assert policy in POLICIES, policy  # run() checked it against the same table
    params = {k: v for k, v in (("epsilon", epsilon), ("rate", rate)) if v is not None}
    try:
        built = make_policy(policy, **params)
    except ModuleNotFoundError as exc:
        raise OptionError(f"ring {{policy}} {policy!r} is not available here ({exc})") from None
    result = run_ring(built, inst, seed=seed, progress=progress)
    chk = check_ring_run(inst, result)
    costs = {"communication": chk.communication_cost, "migration": chk.migration_cost, "total": chk.value,
             "max_load": chk.max_load, "capacity": chk.capacity}
    head = (f"ring: n = {inst.n}, {inst.servers} servers (k = {inst.k}), alpha {inst.alpha:g}, seed {seed}; "
            f"{policy}: total {chk.value:.6g} (communication {chk.communication_cost:.6g}, migration "
            f"{chk.migration_cost:.6g}), {int(result.migrations.shape[0])} migrations, max load {chk.max_load} "
            f"(this run may load a server up to c*k = {chk.capacity:g}; the optima of `clusteropt solve` keep "
            f"every server at k = {inst.k}); verified {chk.feasible}")
    failure = None if chk.feasible else (
        f"the run failed verification: {'; '.join(str(v) for v in chk.violations[:3])}")
    return Run(kind="ring", policy=policy, seed=seed, params=dict(result.params), summary=head, costs=costs,
               ok=bool(chk.feasible), check=chk, result=result, instance=inst, out=result.to_dict(chk),
               failure=failure)


def check_output(inst, data) -> Any:
    """Replay an ``out.json``'s migrations (:func:`clusteropt.verify.ring.check_ring_run`)."""
    from clusteropt.runs import require
    from clusteropt.verify.ring import check_ring_run

    require(data, "migrations", "ring")
    require(data, "initial", "ring")
    return check_ring_run(inst, data)


SPEC = register_runner(RunnerSpec("ring", _POLICIES, _OPTIONS, run_ring_policy, check_output))
