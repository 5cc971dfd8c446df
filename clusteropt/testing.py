"""Known-answer problems for testing solvers and backends, with explicit tolerances.

A public testing module in the spirit of ``linopy.testing`` and CVXPY's solver test battery: each
problem is a small model with a known answer, built fresh by a function, for both backends
(a Pyomo ``ConcreteModel`` and a ``cvxpy.Problem`` or :class:`~clusteropt.models.CvxpyModel`).
A :class:`KnownProblem` carries the builder together with what every solver must report:
termination, objective, the (unique) optimal values, and the tolerance to judge them by, which
depends on the solver's algorithm (:data:`SOLVER_TOLERANCES`).  :func:`assert_result_matches`
checks a :class:`~clusteropt.solvers.SolveResult` against it.

The battery
-----------
``transport_lp`` (LP)
    minimize, objective 10, ``x = [[2, 1], [0, 2]]`` (2-D)
``knapsack_milp`` (MILP)
    maximize, objective 22.5, LP relaxation fractional
``infeasible_lp`` (LP)
    INFEASIBLE, no solution
``unbounded_lp`` (LP)
    UNBOUNDED (or INFEASIBLE_OR_UNBOUNDED), no solution
``infeasible_and_unbounded_lp`` (LP)
    primal and dual infeasible: INFEASIBLE (or INFEASIBLE_OR_UNBOUNDED), never UNBOUNDED
``empty_lp`` (LP)
    no variable in the objective or a constraint: OPTIMAL, objective 3
``hard_knapsack`` (MILP)
    time-limited at 1 s: FEASIBLE, incumbent, bound, gap > 0
``norm_soc`` (SOC)
    CVXPY only, objective ``2 * sqrt(3)``
``entropy`` (EXP_CONE)
    CVXPY only, objective ``log(3)``, ``p = 1/3``

Examples
--------
>>> from clusteropt.solvers import solve
>>> problem = get_problem("transport_lp", "pyomo")
>>> result = solve(problem.build(), "highs")
>>> assert_result_matches(result, problem)
>>> result.values["x"].shape
(2, 2)
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import cvxpy as cp
import numpy as np
import pyomo.environ as pyo

from clusteropt.models.cvxpy_model import CvxpyModel
from clusteropt.solvers.registry import SOLVERS, Capability
from clusteropt.solvers.result import SolveResult, Termination, relative_gap

__all__ = [
    "CONIC",
    "EXACT",
    "FIRST_ORDER",
    "MIP_GAP_AT_OPTIMUM",
    "OBJ_RTOL_CONIC",
    "OBJ_RTOL_EXACT",
    "OBJ_RTOL_FIRST_ORDER",
    "PROBLEMS",
    "SOLVER_TOLERANCES",
    "TIME_LIMIT",
    "VALUE_ATOL_CONIC",
    "VALUE_ATOL_EXACT",
    "VALUE_ATOL_FIRST_ORDER",
    "KnownProblem",
    "Tolerance",
    "assert_result_matches",
    "candidate_solvers",
    "empty_lp_cvxpy",
    "empty_lp_pyomo",
    "entropy_cvxpy",
    "get_problem",
    "hard_knapsack_cvxpy",
    "hard_knapsack_data",
    "hard_knapsack_lp_bound",
    "hard_knapsack_pyomo",
    "infeasible_and_unbounded_lp_cvxpy",
    "infeasible_and_unbounded_lp_pyomo",
    "infeasible_lp_cvxpy",
    "infeasible_lp_pyomo",
    "installed_solvers",
    "knapsack_milp_cvxpy",
    "knapsack_milp_pyomo",
    "known_problems",
    "norm_soc_cvxpy",
    "tolerance_for",
    "transport_lp_cvxpy",
    "transport_lp_pyomo",
    "unbounded_lp_cvxpy",
    "unbounded_lp_pyomo",
]

# ---------------------------------------------------------------------------------------------
# tolerances

OBJ_RTOL_EXACT = 1e-6
"""Relative objective tolerance for simplex / branch-and-bound solvers (HiGHS, SCIP, CBC, GLPK,
Gurobi).  Their primal and dual feasibility tolerances default to 1e-7 (HiGHS, CBC, GLPK) or 1e-6
(SCIP), and on these tiny, well-scaled problems they land on an exact vertex, so the objective is
right to far better than 1e-6; 1e-6 leaves room for a different vertex representation only."""

OBJ_RTOL_CONIC = 1e-4
"""Relative objective tolerance for the interior-point conic solver Clarabel.  Clarabel stops at
a relative duality gap / feasibility residual of 1e-8, but CVXPY's exponential-cone reformulation
and the solver's scaling can cost a few digits; 1e-4 is loose enough to be robust across versions
and still catches a wrong answer (the battery's answers differ from any wrong vertex by >= 1e-2)."""

OBJ_RTOL_FIRST_ORDER = 1e-3
"""Relative objective tolerance for the first-order splitting solver SCS.  SCS 3 stops at
``eps_abs = eps_rel = 1e-4`` on residuals of the *scaled* problem, which after unscaling means
objective errors of a few 1e-4; 1e-3 is the accuracy one can count on."""

VALUE_ATOL_EXACT = 1e-6
"""Absolute tolerance on variable values for simplex / branch-and-bound solvers (vertex solutions;
integer values are within the integrality tolerance 1e-6 of an integer)."""

VALUE_ATOL_CONIC = 1e-4
"""Absolute tolerance on variable values for Clarabel (interior point: values approach the
optimum at the rate of the gap, so they are a little less accurate than the objective)."""

VALUE_ATOL_FIRST_ORDER = 1e-2
"""Absolute tolerance on variable values for SCS.  Near a smooth optimum (entropy) the objective
is flat: an objective error of eps allows value errors of order sqrt(eps), i.e. ~1e-2 for 1e-4."""

MIP_GAP_AT_OPTIMUM = 1e-4
"""Largest relative gap a solver may report with ``OPTIMAL`` under its default settings: HiGHS
and SCIP stop at ``mip_rel_gap = 1e-4`` / ``limits/gap = 0``, CBC and GLPK at about 1e-4 or 0."""

TIME_LIMIT = 1.0
"""Seconds given to the time-limited problem (``hard_knapsack``)."""


@dataclass(frozen=True)
class Tolerance:
    """How closely a solver's answer must match a known answer.

    Attributes
    ----------
    objective_rtol : float
        Relative tolerance on the objective, ``|got - want| <= rtol * max(1, |want|)``.
    value_atol : float
        Absolute tolerance on each variable value.
    """

    objective_rtol: float
    value_atol: float


EXACT = Tolerance(OBJ_RTOL_EXACT, VALUE_ATOL_EXACT)
"""Tolerance for simplex and branch-and-bound solvers."""
CONIC = Tolerance(OBJ_RTOL_CONIC, VALUE_ATOL_CONIC)
"""Tolerance for interior-point conic solvers."""
FIRST_ORDER = Tolerance(OBJ_RTOL_FIRST_ORDER, VALUE_ATOL_FIRST_ORDER)
"""Tolerance for first-order (ADMM / splitting) solvers."""

SOLVER_TOLERANCES: Mapping[str, Tolerance] = MappingProxyType(
    {
        "highs": EXACT,
        "scip": EXACT,
        "cbc": EXACT,
        "glpk": EXACT,
        "gurobi": EXACT,
        "cplex": EXACT,
        "xpress": EXACT,
        "copt": EXACT,
        "clarabel": CONIC,
        "scs": FIRST_ORDER,
    }
)
"""Registry solver name -> tolerance of its algorithm."""


def tolerance_for(solver: str, overrides: Mapping[str, Tolerance] | None = None) -> Tolerance:
    """The tolerance to judge ``solver`` by: ``overrides``, then :data:`SOLVER_TOLERANCES`.

    A solver in neither table gets the loosest one, :data:`FIRST_ORDER`.

    >>> tolerance_for("highs").objective_rtol
    1e-06
    >>> tolerance_for("scs") is FIRST_ORDER
    True
    """
    if overrides and solver in overrides:
        return overrides[solver]
    return SOLVER_TOLERANCES.get(solver, FIRST_ORDER)


# ---------------------------------------------------------------------------------------------
# the problems


def transport_lp_pyomo() -> pyo.ConcreteModel:
    """Transportation LP over a 2-D product set (``x[plant, market]``), unique optimum.

    Minimize ``sum c_pm x_pm`` with supplies (3, 2) and demands (2, 3) as equalities and costs
    ``[[1, 4], [3, 2]]``.  The feasible set is ``x = [[a, 3-a], [2-a, a]]``, ``a in [0, 2]``,
    with cost ``18 - 4a``: the unique optimum is ``a = 2``, ``x = [[2, 1], [0, 2]]``, cost 10.
    """
    m = pyo.ConcreteModel(name="transport_lp")
    m.P = pyo.Set(initialize=["p0", "p1"], ordered=True, doc="plants")
    m.M = pyo.Set(initialize=["m0", "m1"], ordered=True, doc="markets")
    cost = {("p0", "m0"): 1, ("p0", "m1"): 4, ("p1", "m0"): 3, ("p1", "m1"): 2}
    m.x = pyo.Var(m.P, m.M, domain=pyo.NonNegativeReals, doc="shipped from plant to market")
    m.supply = pyo.Constraint(m.P, rule=lambda m, p: sum(m.x[p, k] for k in m.M) == {"p0": 3, "p1": 2}[p])
    m.demand = pyo.Constraint(m.M, rule=lambda m, k: sum(m.x[p, k] for p in m.P) == {"m0": 2, "m1": 3}[k])
    m.cost = pyo.Objective(expr=sum(cost[p, k] * m.x[p, k] for p in m.P for k in m.M))
    return m


def transport_lp_cvxpy() -> cp.Problem:
    """The transportation LP of :func:`transport_lp_pyomo` as a bare ``cvxpy.Problem``."""
    x = cp.Variable((2, 2), nonneg=True, name="x")
    cost = np.array([[1.0, 4.0], [3.0, 2.0]])
    return cp.Problem(
        cp.Minimize(cp.sum(cp.multiply(cost, x))),
        [cp.sum(x, axis=1) == [3.0, 2.0], cp.sum(x, axis=0) == [2.0, 3.0]],
    )


_KNAP_PROFIT = (8.0, 11.0, 6.0, 4.0)
_KNAP_WEIGHT = (5.0, 7.0, 4.0, 3.0)


def knapsack_milp_pyomo() -> pyo.ConcreteModel:
    """Small MILP with binary, general-integer and continuous variables, unique optimum.

    Maximize ``8 x0 + 11 x1 + 6 x2 + 4 x3 + 3 z + 1.5 w`` subject to
    ``5 x0 + 7 x1 + 4 x2 + 3 x3 + 3 z <= 14``, ``z + w <= 2.5``, ``x`` binary, ``z`` integer in
    [0, 3], ``w`` in [0, 1].  By enumeration the unique optimum is ``x = (0, 1, 1, 1)``, ``z = 0``,
    ``w = 1`` with value 22.5 (runner-up 21.5); the LP relaxation (23.5) is fractional, so the
    solver must branch or cut.
    """
    m = pyo.ConcreteModel(name="knapsack_milp")
    m.J = pyo.RangeSet(0, 3)
    m.x = pyo.Var(m.J, domain=pyo.Binary)
    m.z = pyo.Var(domain=pyo.NonNegativeIntegers, bounds=(0, 3))
    m.w = pyo.Var(bounds=(0, 1))
    m.capacity = pyo.Constraint(expr=sum(_KNAP_WEIGHT[j] * m.x[j] for j in m.J) + 3 * m.z <= 14)
    m.link = pyo.Constraint(expr=m.z + m.w <= 2.5)
    m.value = pyo.Objective(
        expr=sum(_KNAP_PROFIT[j] * m.x[j] for j in m.J) + 3 * m.z + 1.5 * m.w, sense=pyo.maximize
    )
    return m


def knapsack_milp_cvxpy() -> CvxpyModel:
    """The MILP of :func:`knapsack_milp_pyomo` as a :class:`CvxpyModel` (named variables and rows)."""
    x = cp.Variable(4, boolean=True, name="x")
    z = cp.Variable(integer=True, name="z")
    w = cp.Variable(name="w", bounds=[0, 1])
    capacity = np.array(_KNAP_WEIGHT) @ x + 3 * z <= 14
    link = z + w <= 2.5
    z_range = [z >= 0, z <= 3]
    problem = cp.Problem(
        cp.Maximize(np.array(_KNAP_PROFIT) @ x + 3 * z + 1.5 * w), [capacity, link, *z_range]
    )
    return CvxpyModel(
        problem,
        variables={"x": x, "z": z, "w": w},
        constraints={"capacity": capacity, "link": link, "z_range": z_range},
        name="knapsack_milp",
    )


def infeasible_lp_pyomo() -> pyo.ConcreteModel:
    """LP with ``x + y <= 1`` and ``x + y >= 2`` over ``x, y >= 0``: infeasible."""
    m = pyo.ConcreteModel(name="infeasible_lp")
    m.x = pyo.Var(domain=pyo.NonNegativeReals)
    m.y = pyo.Var(domain=pyo.NonNegativeReals)
    m.upper = pyo.Constraint(expr=m.x + m.y <= 1)
    m.lower = pyo.Constraint(expr=m.x + m.y >= 2)
    m.obj = pyo.Objective(expr=m.x + 2 * m.y)
    return m


def infeasible_lp_cvxpy() -> cp.Problem:
    """The infeasible LP of :func:`infeasible_lp_pyomo` in CVXPY."""
    x = cp.Variable(nonneg=True, name="x")
    y = cp.Variable(nonneg=True, name="y")
    return cp.Problem(cp.Minimize(x + 2 * y), [x + y <= 1, x + y >= 2])


def unbounded_lp_pyomo() -> pyo.ConcreteModel:
    """LP maximizing ``x + y`` subject to ``x - y <= 1``, ``x, y >= 0``: unbounded (ray (1, 1))."""
    m = pyo.ConcreteModel(name="unbounded_lp")
    m.x = pyo.Var(domain=pyo.NonNegativeReals)
    m.y = pyo.Var(domain=pyo.NonNegativeReals)
    m.diff = pyo.Constraint(expr=m.x - m.y <= 1)
    m.obj = pyo.Objective(expr=m.x + m.y, sense=pyo.maximize)
    return m


def unbounded_lp_cvxpy() -> cp.Problem:
    """The unbounded LP of :func:`unbounded_lp_pyomo` in CVXPY."""
    x = cp.Variable(nonneg=True, name="x")
    y = cp.Variable(nonneg=True, name="y")
    return cp.Problem(cp.Maximize(x + y), [x - y <= 1])


def infeasible_and_unbounded_lp_pyomo() -> pyo.ConcreteModel:
    """LP minimizing ``-x - y`` subject to ``x - y >= 1``, ``y - x >= 1``, ``x, y >= 0``.

    The rows add up to ``0 >= 2`` (primal infeasible), and the dual (maximize ``u + v`` subject
    to ``u - v <= -1``, ``v - u <= -1``, ``u, v >= 0``) adds up to ``0 <= -2`` (dual infeasible):
    a solver that finds the primal ray ``(1, 1)`` of the recession cone must not call it unbounded.
    """
    m = pyo.ConcreteModel(name="infeasible_and_unbounded_lp")
    m.x = pyo.Var(domain=pyo.NonNegativeReals)
    m.y = pyo.Var(domain=pyo.NonNegativeReals)
    m.up = pyo.Constraint(expr=m.x - m.y >= 1)
    m.down = pyo.Constraint(expr=m.y - m.x >= 1)
    m.obj = pyo.Objective(expr=-m.x - m.y)
    return m


def infeasible_and_unbounded_lp_cvxpy() -> cp.Problem:
    """The LP of :func:`infeasible_and_unbounded_lp_pyomo` in CVXPY."""
    x = cp.Variable(nonneg=True, name="x")
    y = cp.Variable(nonneg=True, name="y")
    return cp.Problem(cp.Minimize(-x - y), [x - y >= 1, y - x >= 1])


def empty_lp_pyomo() -> pyo.ConcreteModel:
    """A model whose variables are indexed by an empty set (a slot with no job): objective 3."""
    m = pyo.ConcreteModel(name="empty_lp")
    m.J = pyo.Set(initialize=[])
    m.x = pyo.Var(m.J, domain=pyo.NonNegativeReals)
    m.cap = pyo.Constraint(m.J, rule=lambda m, j: m.x[j] <= 1)
    m.obj = pyo.Objective(expr=sum(m.x[j] for j in m.J) + 3)
    return m


def empty_lp_cvxpy() -> cp.Problem:
    """The empty model of :func:`empty_lp_pyomo` in CVXPY: a constant objective, no constraint."""
    return cp.Problem(cp.Minimize(cp.Constant(3.0)))


HARD_KNAPSACK_SIZE = {"n": 500, "k": 10, "seed": 1}
"""Items, constraints and seed of the time-limited battery problem."""


def hard_knapsack_data(
    n: int = 500, k: int = 10, seed: int = 1, tightness: float = 0.25
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A random multidimensional 0-1 knapsack with correlated profits (Chu & Beasley's generator).

    Weights ``w[i, j]`` are integers in [1, 1000], capacities ``floor(tightness * sum_j w[i, j])``
    and profits ``p_j = round(sum_i w[i, j] / k + 500 u_j)``, ``u_j ~ U(0, 1)``.  Correlating
    profits with weights is what makes these instances hard: with uncorrelated profits SCIP, CBC
    and GLPK prove optimality of an n = 300, k = 5 instance within 1 s (CBC and GLPK in 0.3 s),
    whereas this default (n = 500, k = 10, seed 1) leaves HiGHS, SCIP, CBC and GLPK with a gap of
    about 0.5 % after 1 s (measured once on 2 cores, HiGHS 1.15, SCIP 10, CBC 2.10.8, GLPK 5.0;
    the solver battery, ``pytest tests/solvers``, re-checks for every installed solver that it
    ends ``FEASIBLE`` with a gap at :data:`TIME_LIMIT`).

    Parameters
    ----------
    n, k : int
        Items and knapsack constraints.
    seed : int
        Seed of :func:`numpy.random.default_rng`.
    tightness : float
        Capacity as a fraction of the total weight of each constraint.

    Returns
    -------
    weights : ndarray (k, n)
    profits : ndarray (n,)
    capacities : ndarray (k,)

    References
    ----------
    P. C. Chu and J. E. Beasley, "A genetic algorithm for the multidimensional knapsack problem",
    Journal of Heuristics 4 (1998) 63-86, Sec. 5.

    Examples
    --------
    >>> w, p, c = hard_knapsack_data(5, 2, seed=0)
    >>> w.shape, p.shape, c.shape
    ((2, 5), (5,), (2,))
    """
    rng = np.random.default_rng(seed)
    weights = rng.integers(1, 1001, size=(k, n)).astype(float)
    profits = np.round(weights.sum(axis=0) / k + 500 * rng.random(n))
    capacities = np.floor(tightness * weights.sum(axis=1))
    return weights, profits, capacities


def hard_knapsack_pyomo(n: int = 500, k: int = 10, seed: int = 1) -> pyo.ConcreteModel:
    """Pyomo model of :func:`hard_knapsack_data` (maximize profit, binary ``x``, rows ``cap``)."""
    w, p, c = hard_knapsack_data(n, k, seed)
    m = pyo.ConcreteModel(name="hard_knapsack")
    m.J = pyo.RangeSet(0, n - 1)
    m.K = pyo.RangeSet(0, k - 1)
    m.x = pyo.Var(m.J, domain=pyo.Binary)
    m.cap = pyo.Constraint(
        m.K, rule=lambda m, i: pyo.quicksum(w[i, j] * m.x[j] for j in m.J) <= c[i]
    )
    m.profit = pyo.Objective(expr=pyo.quicksum(p[j] * m.x[j] for j in m.J), sense=pyo.maximize)
    return m


def hard_knapsack_cvxpy(n: int = 500, k: int = 10, seed: int = 1) -> cp.Problem:
    """CVXPY problem of :func:`hard_knapsack_data` (boolean vector ``x``)."""
    w, p, c = hard_knapsack_data(n, k, seed)
    x = cp.Variable(n, boolean=True, name="x")
    return cp.Problem(cp.Maximize(p @ x), [w @ x <= c])


@functools.cache
def hard_knapsack_lp_bound(n: int = 500, k: int = 10, seed: int = 1) -> float:
    """Optimum of the LP relaxation of the hard knapsack: no valid dual bound can exceed it.

    Computed with :func:`scipy.optimize.linprog` (HiGHS), independently of the package.
    """
    from scipy.optimize import linprog

    w, p, c = hard_knapsack_data(n, k, seed)
    res = linprog(-p, A_ub=w, b_ub=c, bounds=(0, 1), method="highs")
    if res.status != 0:  # pragma: no cover - the relaxation is always feasible and bounded
        raise RuntimeError(f"LP relaxation failed: {res.message}")
    return float(-res.fun)


def _check_hard_knapsack(result: SolveResult) -> None:
    w, p, c = hard_knapsack_data(**HARD_KNAPSACK_SIZE)
    x = np.asarray(result.values["x"], dtype=float)
    assert x.shape == p.shape, f"x has shape {x.shape}; expected {p.shape}"
    assert result.objective is not None, "a solution without an objective"
    assert np.all(np.abs(x - np.round(x)) <= 1e-6), "incumbent is not integral"
    x = np.round(x)
    assert np.all((x == 0) | (x == 1)), "incumbent is not binary"
    assert np.all(w @ x <= c + 1e-6), "incumbent violates a knapsack constraint"
    assert math.isclose(float(p @ x), result.objective, rel_tol=OBJ_RTOL_EXACT), (
        f"objective {result.objective} != profit of the incumbent {p @ x}"
    )
    limit = hard_knapsack_lp_bound(**HARD_KNAPSACK_SIZE)
    assert result.bound is None or result.bound <= limit * (1 + OBJ_RTOL_EXACT), (
        f"dual bound {result.bound} is weaker than the LP relaxation {limit}: not a valid bound"
    )


def norm_soc_cvxpy() -> cp.Problem:
    """Second-order-cone problem: minimize ``||x - (1, 2, 3)||_2`` s.t. ``sum(x) == 0``.

    The projection onto the hyperplane is ``x = (-1, 0, 1)``, at distance ``2 sqrt(3)``.
    """
    x = cp.Variable(3, name="x")
    return cp.Problem(cp.Minimize(cp.norm(x - np.array([1.0, 2.0, 3.0]), 2)), [cp.sum(x) == 0])


def entropy_cvxpy() -> cp.Problem:
    """Exponential-cone problem: maximize ``sum(entr(p))`` s.t. ``sum(p) == 1``, ``p`` in R^3.

    The uniform distribution is the unique maximizer: ``p = 1/3``, optimum ``log(3)``.
    """
    p = cp.Variable(3, name="p")
    return cp.Problem(cp.Maximize(cp.sum(cp.entr(p))), [cp.sum(p) == 1])


@dataclass(frozen=True)
class KnownProblem:
    """A model builder together with the answer every suitable solver must give.

    Attributes
    ----------
    name : str
        Problem name (the same for both backends).
    backend : {"pyomo", "cvxpy"}
        What :meth:`build` returns.
    problem_class : Capability
        The capability a solver needs for it.
    build : callable
        ``build() -> model``, a fresh model each call.
    termination : Termination
        Expected termination.
    maximize : bool
        Objective sense (decides which side of the objective the bound lies on).
    objective : float or None
        Known optimum (``None`` where unknown or undefined).
    values : Mapping[str, numpy.ndarray]
        Known unique optimal values of (some of) the variables, keyed as in ``SolveResult.values``.
    also_accept : frozenset of Termination
        Other terminations that are a correct answer too (``INFEASIBLE_OR_UNBOUNDED`` for an
        unbounded LP, which presolvers often cannot tell apart).
    time_limit : float or None
        Time limit to solve with (:data:`TIME_LIMIT` for the time-limited problem).
    tolerances : Mapping[str, Tolerance]
        Per-solver tolerance overrides on top of :data:`SOLVER_TOLERANCES`.
    check : callable or None
        Extra problem-specific check ``check(result)`` (raises ``AssertionError``).
    """

    name: str
    backend: str
    problem_class: Capability
    build: Callable[[], Any] = field(repr=False)
    termination: Termination
    maximize: bool = False
    objective: float | None = None
    values: Mapping[str, np.ndarray] = field(default_factory=dict, repr=False)
    also_accept: frozenset[Termination] = frozenset()
    time_limit: float | None = None
    tolerances: Mapping[str, Tolerance] = field(default_factory=dict, repr=False)
    check: Callable[[SolveResult], None] | None = field(default=None, repr=False)

    @property
    def id(self) -> str:
        """``"name-backend"``, a test id."""
        return f"{self.name}-{self.backend}"

    @property
    def accepted(self) -> frozenset[Termination]:
        """All terminations that count as a correct answer."""
        return frozenset({self.termination}) | self.also_accept

    def tolerance(self, solver: str) -> Tolerance:
        """The tolerance for ``solver`` on this problem."""
        return tolerance_for(solver, self.tolerances)

    def solve_options(self) -> dict[str, Any]:
        """Keyword arguments for :func:`clusteropt.solvers.solve` (the time limit, if any)."""
        return {} if self.time_limit is None else {"time_limit": self.time_limit}


_NO_SOLUTION = frozenset({Termination.INFEASIBLE_OR_UNBOUNDED})


def _problems() -> tuple[KnownProblem, ...]:
    transport = {"x": np.array([[2.0, 1.0], [0.0, 2.0]])}
    knapsack = {"x": np.array([0.0, 1.0, 1.0, 1.0]), "z": np.array(0.0), "w": np.array(1.0)}
    out: list[KnownProblem] = []
    for backend, builders in (
        ("pyomo", (transport_lp_pyomo, knapsack_milp_pyomo, infeasible_lp_pyomo,
                   unbounded_lp_pyomo, hard_knapsack_pyomo, infeasible_and_unbounded_lp_pyomo,
                   empty_lp_pyomo)),
        ("cvxpy", (transport_lp_cvxpy, knapsack_milp_cvxpy, infeasible_lp_cvxpy,
                   unbounded_lp_cvxpy, hard_knapsack_cvxpy, infeasible_and_unbounded_lp_cvxpy,
                   empty_lp_cvxpy)),
    ):
        lp, milp, infeasible, unbounded, hard, both, empty = builders
        out += [
            KnownProblem("transport_lp", backend, Capability.LP, lp, Termination.OPTIMAL,
                         objective=10.0, values=transport),
            KnownProblem("knapsack_milp", backend, Capability.MILP, milp, Termination.OPTIMAL,
                         maximize=True, objective=22.5, values=knapsack),
            KnownProblem("infeasible_lp", backend, Capability.LP, infeasible, Termination.INFEASIBLE),
            KnownProblem("unbounded_lp", backend, Capability.LP, unbounded, Termination.UNBOUNDED,
                         maximize=True, also_accept=_NO_SOLUTION),
            KnownProblem("hard_knapsack", backend, Capability.MILP, hard, Termination.FEASIBLE,
                         maximize=True, time_limit=TIME_LIMIT, check=_check_hard_knapsack),
            KnownProblem("infeasible_and_unbounded_lp", backend, Capability.LP, both,
                         Termination.INFEASIBLE, also_accept=_NO_SOLUTION),
            KnownProblem("empty_lp", backend, Capability.LP, empty, Termination.OPTIMAL, objective=3.0),
        ]
    out += [
        # SCIP solves the cone as a nonlinear constraint to its feasibility tolerance 1e-6; the
        # objective is flat (quadratic) along the hyperplane at the optimum, so the values are
        # only good to about sqrt(1e-9) ~ 3e-5: judge SCIP's values with the conic tolerance
        KnownProblem("norm_soc", "cvxpy", Capability.SOC, norm_soc_cvxpy, Termination.OPTIMAL,
                     objective=2 * math.sqrt(3), values={"x": np.array([-1.0, 0.0, 1.0])},
                     tolerances={"scip": Tolerance(OBJ_RTOL_EXACT, VALUE_ATOL_CONIC)}),
        KnownProblem("entropy", "cvxpy", Capability.EXP_CONE, entropy_cvxpy, Termination.OPTIMAL,
                     maximize=True, objective=math.log(3), values={"p": np.full(3, 1 / 3)}),
    ]
    return tuple(out)


PROBLEMS: tuple[KnownProblem, ...] = _problems()
"""The whole battery, both backends."""


def known_problems(backend: str | None = None) -> list[KnownProblem]:
    """The battery's problems, optionally only those for ``backend``.

    >>> sorted({p.name for p in known_problems("cvxpy")} - {p.name for p in known_problems("pyomo")})
    ['entropy', 'norm_soc']
    """
    return [p for p in PROBLEMS if backend is None or p.backend == backend]


def get_problem(name: str, backend: str) -> KnownProblem:
    """The battery problem ``name`` for ``backend``; unknown pairs list the alternatives.

    >>> get_problem("entropy", "cvxpy").objective == math.log(3)
    True
    """
    for p in PROBLEMS:
        if p.name == name and p.backend == backend:
            return p
    raise KeyError(
        f"no known problem {name!r} for backend {backend!r}; known: {', '.join(p.id for p in PROBLEMS)}"
    )


def candidate_solvers(problem: KnownProblem) -> list[str]:
    """Registered solvers that have a route for the problem's backend and its capability.

    Installed or not: a test suite parametrizes over these and skips the missing ones, so that
    the skips show in the report.

    >>> candidate_solvers(get_problem("entropy", "cvxpy"))
    ['clarabel', 'scs']
    """
    return sorted(
        name
        for name, spec in SOLVERS.items()
        if problem.backend in spec.routes and problem.problem_class in spec.capabilities
    )


def installed_solvers(problem: KnownProblem) -> list[str]:
    """The :func:`candidate_solvers` that are installed here."""
    return [s for s in candidate_solvers(problem) if SOLVERS[s].available(problem.backend)]


# ---------------------------------------------------------------------------------------------
# checking results


def _close(got: float, want: float, rtol: float) -> bool:
    return abs(got - want) <= rtol * max(1.0, abs(want))


def assert_result_matches(result: SolveResult, problem: KnownProblem) -> None:
    """Assert that ``result`` is a correct answer to ``problem`` within the solver's tolerance.

    Checks the termination, ``has_solution``, and then

    * without a solution: ``objective``, ``bound`` and ``gap`` are ``None`` and ``values`` empty;
    * with a solution: ``values`` are numpy arrays; ``bound`` lies on the correct side of the
      objective for the sense; ``gap`` equals ``relative_gap(objective, bound)``;
    * ``OPTIMAL``: the objective and the known values within :meth:`KnownProblem.tolerance`,
      and a gap of at most :data:`MIP_GAP_AT_OPTIMUM`;
    * ``FEASIBLE`` (stopped by a limit): a finite bound and a gap > 0, where the route reports
      bounds (``Route.reports_bound``);
    * the problem's own ``check``.

    Raises
    ------
    AssertionError
        With the result's one-line summary, naming what differs.
    """
    where = result.summary()
    assert result.termination in problem.accepted, (
        f"{problem.id}: termination {result.termination.name}; expected "
        f"{' or '.join(sorted(t.name for t in problem.accepted))} ({where})"
    )
    expect_solution = result.termination in (Termination.OPTIMAL, Termination.FEASIBLE)
    assert result.has_solution is expect_solution, (
        f"{problem.id}: has_solution = {result.has_solution} with termination "
        f"{result.termination.name} ({where})"
    )
    if not expect_solution:
        assert result.objective is None, f"{problem.id}: objective without a solution ({where})"
        assert result.bound is None, f"{problem.id}: bound {result.bound} without a solution ({where})"
        assert result.gap is None, f"{problem.id}: gap without a solution ({where})"
        assert len(result.values) == 0, f"{problem.id}: values without a solution ({where})"
        if problem.check is not None:
            problem.check(result)
        return

    tol = problem.tolerance(result.solver)
    for name, value in result.values.items():
        assert isinstance(value, np.ndarray), f"{problem.id}: values[{name!r}] is {type(value)}"
    assert result.objective is not None and math.isfinite(result.objective), where

    if result.bound is not None:
        slack = tol.objective_rtol * max(1.0, abs(result.objective))
        if problem.maximize:
            assert result.bound >= result.objective - slack, (
                f"{problem.id}: bound {result.bound} below the objective of a maximization ({where})"
            )
        else:
            assert result.bound <= result.objective + slack, (
                f"{problem.id}: bound {result.bound} above the objective of a minimization ({where})"
            )
        expected_gap = relative_gap(result.objective, result.bound)
        assert expected_gap is not None  # objective and bound are both set here
        assert result.gap is not None and math.isclose(
            result.gap, expected_gap, rel_tol=1e-9, abs_tol=1e-12
        ), f"{problem.id}: gap {result.gap} != relative_gap(objective, bound) = {expected_gap}"

    if result.termination is Termination.OPTIMAL:
        if problem.objective is not None:
            assert _close(result.objective, problem.objective, tol.objective_rtol), (
                f"{problem.id}: objective {result.objective!r}; expected {problem.objective!r} "
                f"within rtol {tol.objective_rtol:g} ({where})"
            )
        assert result.bound is not None, f"{problem.id}: no bound at proven optimality ({where})"
        assert result.gap is not None  # checked above, as the bound is set
        assert result.gap <= MIP_GAP_AT_OPTIMUM + tol.objective_rtol, (
            f"{problem.id}: gap {result.gap} at proven optimality ({where})"
        )
        for name, want in problem.values.items():
            assert name in result.values, (
                f"{problem.id}: no values for {name!r}; got {sorted(result.values)}"
            )
            got = result.values[name]
            want = np.asarray(want, dtype=float)
            assert got.shape == want.shape, (
                f"{problem.id}: values[{name!r}] has shape {got.shape}; expected {want.shape}"
            )
            np.testing.assert_allclose(
                got, want, rtol=0, atol=tol.value_atol,
                err_msg=f"{problem.id}: values[{name!r}] ({result.solver}/{result.backend})",
            )
    elif SOLVERS[result.solver].routes[result.backend].reports_bound:
        # FEASIBLE: stopped by a limit with an incumbent, and the route can tell the bound
        assert result.bound is not None and math.isfinite(result.bound), (
            f"{problem.id}: no finite dual bound with an incumbent at a limit ({where})"
        )
        assert result.gap is not None and result.gap > 0, (
            f"{problem.id}: gap {result.gap} with termination FEASIBLE ({where})"
        )
    if problem.check is not None:
        problem.check(result)
