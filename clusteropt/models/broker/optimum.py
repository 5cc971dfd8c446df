"""Paper 003 (mlBroker, Li et al.): the offline optimum of (8) and the fractional optimum P_f (9).

:func:`broker_offline_optimum` / :func:`broker_lp_bound`
    Solve (8) / (9) over the horizon and read the schedule back (:func:`schedule_from_solution`).
    Either model goes to HiGHS as arrays (:mod:`clusteropt.models.broker.matrix`, the same rows) or
    as the Pyomo model (:mod:`clusteropt.models.broker.milp`) to any solver.

References
----------
X. Li, R. Zhou, L. Jiao, C. Wu, Y. Deng, Z. Li, "Online Placement and Scaling of Geo-distributed
Machine Learning Jobs via Volume-discounting Brokerage" (paper 003): Sec. 3.2-3.3 (Eq. (8)), Sec. 4.1
(Eq. (9)), Sec. 6.1.
"""

from __future__ import annotations

import logging

from clusteropt.instances.broker import BrokerInstance
from clusteropt.models.broker.milp import build_broker_milp, schedule_from_solution

__all__ = ["broker_lp_bound", "broker_offline_optimum"]

log = logging.getLogger(__name__)

def _solve_linear(model, solver: str, time_limit, mip_gap):
    """HiGHS through its matrix (:func:`clusteropt.solvers.direct.solve_highs_direct`), else :func:`solve`."""
    if solver == "highs":
        from clusteropt.solvers.direct import solve_highs_direct

        return solve_highs_direct(model, time_limit=time_limit, mip_gap=mip_gap, raise_on_nonoptimal=False)
    from clusteropt.solvers import solve  # here: clusteropt.solvers imports the models

    return solve(model, solver, time_limit=time_limit, mip_gap=mip_gap, raise_on_nonoptimal=False)


def _use_arrays(solver: str, builder: str) -> bool:
    if builder not in ("auto", "matrix", "pyomo"):
        raise ValueError(f"builder = {builder!r}; expected 'auto', 'matrix' or 'pyomo'")
    if builder == "matrix" and solver != "highs":
        raise ValueError(f"builder = 'matrix' hands arrays to HiGHS; solver = {solver!r} needs builder 'pyomo'")
    return builder == "matrix" or (builder == "auto" and solver == "highs")


def broker_offline_optimum(inst: BrokerInstance, *, time_limit: float | None = None, solver: str = "highs",
                           price_form: str = "tight", mip_gap: float | None = 0.0, builder: str = "auto"):
    """Solve the offline MILP (8) over slots ``1 .. T``: ``(value, schedule, result)``.

    ``value`` is the objective (8) of the solution found, ``schedule`` its integral
    :class:`BrokerSchedule` (``check_broker_schedule`` recomputes the same total cost), ``result``
    the :class:`~clusteropt.solvers.SolveResult`.  ``price_form="tight"`` (default) has the same
    optimum as the paper's big-M form and a stronger LP relaxation (:mod:`clusteropt.models.broker.milp`).
    HiGHS gets the model through its matrix.  ``mip_gap`` defaults to 0 (an optimum to compare online
    policies with).  A solve stopped by ``time_limit`` with an incumbent returns it with a
    warning: check ``result.is_optimal``; ``result.bound`` is then the proven lower bound.
    ``builder``: ``"matrix"`` builds (8) as arrays (:mod:`clusteropt.models.broker.matrix`, the
    same model, tested row by row), ``"pyomo"`` builds this module's Pyomo model, ``"auto"``
    (default) the arrays with HiGHS.

    Raises
    ------
    RuntimeError
        The solver stopped without any solution.

    Examples
    --------
    >>> from clusteropt.instances.broker import broker_preset
    >>> from clusteropt.verify import check_broker_schedule
    >>> inst = broker_preset("tiny", seed=1)
    >>> value, schedule, result = broker_offline_optimum(inst)
    >>> chk = check_broker_schedule(inst, schedule)
    >>> result.termination.name, chk.ok, abs(chk.total_cost - value) < 1e-6 * max(1.0, value)
    ('OPTIMAL', True, True)
    """
    if _use_arrays(solver, builder):
        from clusteropt.models.broker.matrix import build_broker_arrays, schedule_from_arrays, solve_broker_arrays

        lp = build_broker_arrays(inst, price_form=price_form)
        res, x = solve_broker_arrays(lp, time_limit=time_limit, mip_gap=mip_gap)
    else:
        model = build_broker_milp(inst, price_form=price_form)
        res = _solve_linear(model, solver, time_limit, mip_gap)
    if not res.has_solution:
        raise RuntimeError(f"the broker MILP (8) stopped with {res.termination.name} and no solution "
                           f"({res.raw.get('status')}); raise time_limit")
    if not res.is_optimal:
        log.warning("the broker MILP (8) stopped with %s (objective %s, bound %s, gap %s): returning the "
                    "incumbent", res.termination.name, res.objective, res.bound, res.gap)
    assert res.objective is not None  # it has a solution
    schedule = schedule_from_arrays(lp, x) if res.backend == "matrix" else schedule_from_solution(model)
    return float(res.objective), schedule, res


def broker_lp_bound(inst: BrokerInstance, *, time_limit: float | None = None, solver: str = "highs",
                    price_form: str = "tight", builder: str = "auto"):
    """The offline fractional optimum: P_f (9) over slots ``1 .. T``, ``(value, result)``.

    ``price_form="tight"`` (default) is the relaxation of the convex-hull form: a lower bound of
    (8) at least as high as the paper's; ``"bigm"`` is the paper's P_f, the denominator of Fig. 5's
    ratio with the paper's rows (:mod:`clusteropt.models.broker.milp`).  ``result.values`` holds the fractional
    solution per variable, in the Pyomo model's index order on either route (``builder`` as in
    :func:`broker_offline_optimum`).

    Raises
    ------
    RuntimeError
        The LP was not solved to optimality.
    """
    if _use_arrays(solver, builder):
        from clusteropt.models.broker.matrix import build_broker_arrays, solve_broker_arrays

        res, _ = solve_broker_arrays(build_broker_arrays(inst, price_form=price_form, relax=True),
                                     time_limit=time_limit)
    else:
        res = _solve_linear(build_broker_milp(inst, price_form=price_form, relax=True), solver, time_limit, None)
    if not res.is_optimal:
        raise RuntimeError(f"P_f (9) stopped with {res.termination.name} ({res.raw.get('status')})")
    assert res.objective is not None  # optimal
    return float(res.objective), res
