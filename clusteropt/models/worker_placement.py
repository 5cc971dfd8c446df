"""Worker placement at one slot (paper 000, Sec. IV-1, constraints (2) and (4)), Pyomo and CVXPY.

Variables ``y[i, s]``: workers of job i on server s.  Maximize ``sum_i u_i sum_s y_is`` subject to

* (2) ``sum_s y_is <= N_i`` for every job i,
* (4) ``sum_i l_i^r y_is <= C_s^r`` for every server s and resource r,

``y`` integer (continuous with ``relax=True``).  Capacities and utilities are mutable
parameters, so an online loop can change them and re-solve through
:class:`clusteropt.solvers.PersistentSolver` without rebuilding.
"""

from __future__ import annotations

import numpy as np
import pyomo.environ as pyo

from clusteropt.instances.worker_placement import WorkerPlacementInstance
from clusteropt.models.cvxpy_model import CvxpyModel
from clusteropt.models.registry import ModelSpec, register_model

__all__ = ["build_worker_placement", "build_worker_placement_cvxpy"]


def build_worker_placement(
    inst: WorkerPlacementInstance, *, relax: bool = False
) -> pyo.ConcreteModel:
    """Pyomo model of one-slot worker placement (paper 000, Eqs. (2) and (4)).

    Parameters
    ----------
    inst : WorkerPlacementInstance
    relax : bool
        Continuous ``y`` (the LP relaxation).

    Returns
    -------
    pyomo.environ.ConcreteModel
        Components ``I, S, R`` (sets), ``C, l, N, u`` (mutable parameters), ``y``,
        ``workers_limit`` (2), ``capacity`` (4), ``utility`` (objective).

    Examples
    --------
    >>> from clusteropt.instances import random_worker_placement
    >>> m = build_worker_placement(random_worker_placement(3, 2, seed=0))
    >>> len(m.y), len(m.capacity)
    (6, 6)
    """
    m = pyo.ConcreteModel(name="worker_placement")
    m.I = pyo.RangeSet(0, inst.n_jobs - 1, doc="jobs i")
    m.S = pyo.RangeSet(0, inst.n_servers - 1, doc="servers s")
    if len(set(inst.resources)) != len(inst.resources):  # the instance refuses these; Pyomo would merge them
        raise ValueError(f"resources = {list(inst.resources)}; expected distinct names (a repeat drops rows)")
    m.R = pyo.Set(initialize=inst.resources, ordered=True, doc="resource types r")
    r_of = {r: k for k, r in enumerate(inst.resources)}
    m.C = pyo.Param(
        m.S, m.R, mutable=True, doc="C_s^r: type-r capacity of server s (4)",
        initialize={(s, r): float(inst.capacity[s, k]) for s in m.S for r, k in r_of.items()},
    )
    m.l = pyo.Param(
        m.I, m.R, mutable=True, doc="l_i^r: type-r resource per worker of job i (4)",
        initialize={(i, r): float(inst.per_worker[i, k]) for i in m.I for r, k in r_of.items()},
    )
    m.N = pyo.Param(
        m.I, mutable=True, doc="N_i: most concurrent workers of job i (2)",
        initialize={i: int(inst.max_workers[i]) for i in m.I},
    )
    m.u = pyo.Param(
        m.I, mutable=True, doc="u_i: utility per worker of job i",
        initialize={i: float(inst.utility[i]) for i in m.I},
    )
    domain = pyo.NonNegativeReals if relax else pyo.NonNegativeIntegers
    # no upper bound: (2) with y >= 0 already gives y_is <= N_i, and a bound written as the
    # number N_i would not follow the mutable N (one as the Param costs every persistent update)
    m.y = pyo.Var(m.I, m.S, domain=domain, doc="y_is: workers of job i on server s")
    m.workers_limit = pyo.Constraint(
        m.I, rule=lambda m, i: sum(m.y[i, s] for s in m.S) <= m.N[i],
        doc="(2) sum_s y_is <= N_i",
    )
    m.capacity = pyo.Constraint(
        m.S, m.R, rule=lambda m, s, r: sum(m.l[i, r] * m.y[i, s] for i in m.I) <= m.C[s, r],
        doc="(4) sum_i l_i^r y_is <= C_s^r",
    )
    m.utility = pyo.Objective(
        expr=sum(m.u[i] * m.y[i, s] for i in m.I for s in m.S), sense=pyo.maximize,
        doc="sum_i u_i sum_s y_is",
    )
    return m


def build_worker_placement_cvxpy(
    inst: WorkerPlacementInstance, *, relax: bool = False
) -> CvxpyModel:
    """The same model in CVXPY, vectorized; capacities and utilities are ``cp.Parameter``.

    >>> from clusteropt.instances import random_worker_placement
    >>> cm = build_worker_placement_cvxpy(random_worker_placement(3, 2, seed=0))
    >>> cm.summary()["constraints"]
    {'workers_limit': 3, 'capacity': 6}
    """
    import cvxpy as cp  # here: importing the models needs no CVXPY

    n_i, n_s = inst.n_jobs, inst.n_servers
    y = cp.Variable((n_i, n_s), name="y", nonneg=True, integer=not relax)
    C = cp.Parameter(inst.capacity.shape, name="C", nonneg=True, value=np.array(inst.capacity))
    u = cp.Parameter(n_i, name="u", nonneg=True, value=np.array(inst.utility))
    workers_limit = cp.sum(y, axis=1) <= inst.max_workers
    capacity = y.T @ inst.per_worker <= C
    problem = cp.Problem(cp.Maximize(u @ cp.sum(y, axis=1)), [workers_limit, capacity])
    return CvxpyModel(
        problem,
        variables={"y": y},
        index={"y": {"I": range(n_i), "S": range(n_s)}},
        constraints={"workers_limit": workers_limit, "capacity": capacity},
        parameters={"C": C, "u": u},
        name="worker_placement",
        docs={"y": "y_is: workers of job i on server s (row i, column s)",
              "C": "C_s^r: type-r capacity of server s (4)", "u": "u_i: utility per worker of job i",
              "workers_limit": "(2) sum_s y_is <= N_i", "capacity": "(4) sum_i l_i^r y_is <= C_s^r",
              "objective": "maximize sum_i u_i sum_s y_is"},
    )


register_model(
    ModelSpec(
        "worker-placement",
        WorkerPlacementInstance.kind,
        build_worker_placement,
        "pyomo",
        "one-slot worker placement, paper 000 Eqs. (2), (4) (Pyomo)",
    )
)
register_model(
    ModelSpec(
        "worker-placement-cvxpy",
        WorkerPlacementInstance.kind,
        build_worker_placement_cvxpy,
        "cvxpy",
        "one-slot worker placement, paper 000 Eqs. (2), (4) (CVXPY, vectorized)",
    )
)
