"""Row generation (cutting planes) for LPs with too many constraints to write down.

Some relaxations have exponentially many valid inequalities of which few bind at the optimum
(paper 001's parallel inequalities: one per machine and per *subset* of jobs).
:func:`row_generation` solves the model with a starting set of rows, asks a *separation* function
for inequalities the current optimum violates, adds them, and re-solves, until no violated
inequality remains:

.. code-block:: text

    solve -> separate(model, result) -> violated cuts? -- no --> "converged"
      ^                                      | yes
      +-------- add them to model.rowgen_cuts +   (or stop at max_rounds / time_limit)

With ``persistent=True`` the re-solves go through one :class:`~clusteropt.solvers.PersistentSolver`:
the solver keeps its model (and its simplex basis) and only the new rows are handed over.

Bounds
------
Every round solves a *relaxation* of the full LP (a subset of its rows), so for a minimization
the objective of every round is a valid lower bound on the full LP's optimum, and it can only
rise from round to round.  Only at status ``"converged"`` (no cut violated by more than the
tolerance) does it equal the full LP's optimum (up to ``tol``).  A run stopped by ``max_rounds``
or ``time_limit`` reports that status and says in :attr:`RowGenResult.message` that its objective
is a bound, never an optimum.  For a maximization the same holds with "upper" for "lower".
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass, field
from typing import Any

from clusteropt.solvers.result import NotOptimalError, SolveResult, Termination

log = logging.getLogger(__name__)

__all__ = ["STATUSES", "Cut", "RowGenResult", "row_generation"]

STATUSES = ("converged", "max_rounds", "time_limit", "stalled")
"""Why :func:`row_generation` stopped.

``converged``: no cut violated beyond the tolerance (the objective is the full LP's optimum);
``max_rounds`` / ``time_limit``: a limit ran out with violated cuts left, or before the check;
``stalled``: every violated cut returned had been added before (the solver's tolerances keep it
violated), so adding more cannot help.  In all but ``converged`` the objective is only a bound.
"""


@dataclass(frozen=True)
class Cut:
    """One valid inequality offered by a separation function.

    Attributes
    ----------
    expr : Pyomo relational expression
        What ``ConstraintList.add`` takes, e.g. ``body >= rhs``.
    violation : float
        How much the current point violates it, in the row's own units (``rhs - body`` for a
        ``>=`` row); ``<= 0`` means satisfied.
    scale : float
        The magnitude the violation is measured against, normally ``|rhs|``: the loop adds the
        cut when ``violation > tol * max(1, scale)`` (relative to the right-hand side, absolute
        for right-hand sides below 1).
    key : hashable, optional
        Identity of the inequality (e.g. ``(machine, job set)``).  With keys the loop never adds
        the same inequality twice and detects stalling.
    """

    expr: Any
    violation: float
    scale: float = 1.0
    key: Hashable | None = None

    def threshold(self, tol: float) -> float:
        """The violation above which this cut counts as violated: ``tol * max(1, |scale|)``."""
        return tol * max(1.0, abs(float(self.scale)))

    @property
    def relative_violation(self) -> float:
        """``violation / max(1, |scale|)``: what cuts are ranked by."""
        return float(self.violation) / max(1.0, abs(float(self.scale)))


def _as_cut(item: Any) -> Cut:
    if isinstance(item, Cut):
        return item
    if isinstance(item, tuple) and 2 <= len(item) <= 4:
        return Cut(*item)
    raise TypeError(
        f"separate() returned a {type(item).__name__}; expected Cut(expr, violation, scale, key) "
        "or a tuple (expr, violation[, scale[, key]])"
    )


@dataclass(frozen=True)
class RowGenResult:
    """What :func:`row_generation` did and where it stopped.

    Attributes
    ----------
    result : SolveResult
        The last *optimal* solve of the relaxation (its ``values`` are the final point).
    status : str
        One of :data:`STATUSES`.
    objective : float
        ``result.objective``.  Always a valid bound on the full LP's optimum (lower for a
        minimization, upper for a maximization); equal to it only when ``status == "converged"``.
    sense : str
        ``"minimize"`` or ``"maximize"``.
    rounds : int
        Number of LP solves.
    cuts_per_round : tuple of int
        Cuts added after each solve (one entry per solve that was followed by added cuts).
    max_violation : float
        Largest relative violation (:attr:`Cut.relative_violation`) found by the last separation;
        0 when converged.
    build_seconds : float
        Writing the cuts as Pyomo rows plus handing rows to the solver (the solves'
        ``build_seconds``).
    solve_seconds : float
        Sum of the solver's own time over all rounds.
    separation_seconds : float
        Time inside ``separate``.
    total_seconds : float
        Wall time of the whole loop.
    model_build_seconds : float
        Time to build the starting model, when the caller reports it (:func:`cos_lower_bound`
        does); not included in ``total_seconds``.
    message : str
        One sentence saying what the objective is (optimum or only a bound).
    """

    result: SolveResult = field(repr=False)
    status: str
    objective: float
    sense: str
    rounds: int
    cuts_per_round: tuple[int, ...]
    max_violation: float
    build_seconds: float
    solve_seconds: float
    separation_seconds: float
    total_seconds: float
    model_build_seconds: float = 0.0
    message: str = ""

    @property
    def converged(self) -> bool:
        """True when no violated cut remained: the objective is the full LP's optimum."""
        return self.status == "converged"

    @property
    def n_cuts(self) -> int:
        """Total number of cuts added."""
        return int(sum(self.cuts_per_round))

    @property
    def bound(self) -> float:
        """The objective read as a bound on the full LP: lower (minimize) / upper (maximize)."""
        return self.objective

    def summary(self) -> str:
        """One line: status, objective, rounds, cuts and the three times.

        >>> from clusteropt.solvers.result import SolveResult, Termination
        >>> r = SolveResult(Termination.OPTIMAL, True, 6.0, 6.0, 0.0, {}, "highs", "pyomo", 0, 0, {})
        >>> RowGenResult(r, "converged", 6.0, "minimize", 2, (1,), 0.0, 0.01, 0.02, 0.003, 0.04).summary()
        'row generation converged: objective 6, 2 rounds, 1 cuts, build 0.01 s, solve 0.02 s, separation 0.003 s'
        """
        return (
            f"row generation {self.status}: objective {self.objective:.10g}, {self.rounds} rounds, "
            f"{self.n_cuts} cuts, build {self.build_seconds:.3g} s, solve {self.solve_seconds:.3g} s, "
            f"separation {self.separation_seconds:.3g} s"
        )


def _cut_list(model):
    import pyomo.environ as pyo

    existing = getattr(model, "rowgen_cuts", None)
    if existing is None:
        model.rowgen_cuts = pyo.ConstraintList(doc="cuts added by row generation")
        return model.rowgen_cuts
    if existing.ctype is not pyo.Constraint or not isinstance(existing, pyo.ConstraintList):
        raise TypeError("model.rowgen_cuts exists but is not a ConstraintList; rename that component")
    return existing


def _sense(model) -> str:
    import pyomo.environ as pyo

    from clusteropt.solvers.pyomo_backend import _objective

    return "maximize" if _objective(model).sense == pyo.maximize else "minimize"


def row_generation(
    model,
    separate: Callable[[Any, SolveResult], Iterable[Cut | tuple]],
    *,
    solver: str | None = "highs",
    tol: float = 1e-7,
    max_rounds: int = 200,
    max_cuts_per_round: int | None = None,
    persistent: bool = True,
    time_limit: float | None = None,
    threads: int | None = None,
    options: dict[str, Any] | None = None,
) -> RowGenResult:
    """Solve a Pyomo LP, add the violated cuts ``separate`` returns, repeat until none is left.

    Parameters
    ----------
    model : pyomo ConcreteModel
        The starting relaxation (a valid subset of the rows).  The loop adds cuts to
        ``model.rowgen_cuts`` (a ``ConstraintList``, created when absent, reused when present).
    separate : callable
        ``separate(model, result) -> iterable of Cut`` (or tuples ``(expr, violation[, scale[,
        key]])``), called after every optimal solve with the variable values loaded into
        ``model`` and also in ``result.values``.  It may return satisfied cuts; the loop keeps
        those with ``violation > tol * max(1, scale)``.
    solver : str, optional
        Registry name (default HiGHS).  With ``persistent=True`` it needs a persistent Pyomo
        interface (highs, scip, gurobi).
    tol : float
        Relative violation tolerance (see :class:`Cut`).
    max_rounds : int
        Most LP solves.  Reaching it with violated cuts left gives status ``"max_rounds"``.
    max_cuts_per_round : int, optional
        Add at most this many cuts per round, the most violated (relative) first.
    persistent : bool
        Keep one :class:`~clusteropt.solvers.PersistentSolver` (the solver keeps its rows and
        basis; only the new rows are handed over).  ``False`` re-solves from scratch with
        :func:`~clusteropt.solvers.solve` every round (for comparison).
    time_limit : float, optional
        Wall-clock seconds for the whole loop; each solve gets what is left.
    threads, options :
        Passed to every solve.

    Returns
    -------
    RowGenResult
        The final relaxation's result; its ``status`` says whether the objective is the full
        LP's optimum (``"converged"``) or only a bound.

    Raises
    ------
    NotOptimalError
        When the first solve does not reach optimality (there is no bound to report), or a
        later one fails for a reason other than the time limit.
    ValueError
        For bad ``tol`` / ``max_rounds`` / ``max_cuts_per_round`` / ``time_limit``.

    References
    ----------
    The loop of coflow.md B8 (paper 001's LP solved with row generation); the separation for
    its parallel inequalities is :func:`clusteropt.models.coflow.separate_parallel_inequalities`.

    Examples
    --------
    Minimize ``x + y`` over the cuts ``x + k*y >= k`` (k = 1..4), known only to ``separate``:

    >>> import pyomo.environ as pyo
    >>> m = pyo.ConcreteModel()
    >>> m.x = pyo.Var(bounds=(0, 10)); m.y = pyo.Var(bounds=(0, 10))
    >>> m.obj = pyo.Objective(expr=m.x + m.y)
    >>> def separate(m, result):
    ...     x, y = float(result.values["x"]), float(result.values["y"])
    ...     return [Cut(m.x + k * m.y >= k, k - (x + k * y), k, key=k) for k in range(1, 5)]
    >>> rg = row_generation(m, separate)
    >>> rg.status, rg.objective, rg.rounds, rg.cuts_per_round, float(rg.result.values["y"])
    ('converged', 1.0, 2, (4,), 1.0)
    >>> row_generation(m, separate).rounds   # the cuts stay in the model: nothing to add
    1
    """
    from clusteropt.solvers.core import solve
    from clusteropt.solvers.persistent import PersistentSolver

    if not (tol >= 0 and math.isfinite(tol)):
        raise ValueError(f"tol = {tol!r}; expected a finite number >= 0")
    if int(max_rounds) != max_rounds or max_rounds < 1:
        raise ValueError(f"max_rounds = {max_rounds!r}; expected a positive integer")
    cap = max_cuts_per_round
    if cap is not None and (int(cap) != cap or cap < 1):
        raise ValueError(f"max_cuts_per_round = {max_cuts_per_round!r}; expected a positive integer or None")
    if time_limit is not None and not (time_limit > 0 and math.isfinite(time_limit)):
        raise ValueError(f"time_limit = {time_limit!r}; expected a positive number of seconds")

    start = time.perf_counter()
    cuts_list = _cut_list(model)
    sense = _sense(model)
    ps = PersistentSolver(model, solver, threads=threads, options=options) if persistent else None

    build_s = solve_s = sep_s = 0.0
    per_round: list[int] = []
    seen: set[Hashable] = set()
    last: SolveResult | None = None
    status = ""
    max_violation = math.inf
    rounds = 0

    def left() -> float | None:
        return None if time_limit is None else time_limit - (time.perf_counter() - start)

    while True:
        remaining = left()
        if remaining is not None and remaining <= 0 and last is not None:
            status = "time_limit"
            break
        limit = None if remaining is None else max(remaining, 1e-3)
        if ps is not None:
            res = ps.solve(time_limit=limit, raise_on_nonoptimal=False)
        else:
            res = solve(model, solver, time_limit=limit, threads=threads, options=options,
                        raise_on_nonoptimal=False)
        rounds += 1
        build_s += res.build_seconds
        solve_s += res.solve_seconds
        if not res.is_optimal:
            timed_out = res.termination in (Termination.TIME_LIMIT, Termination.FEASIBLE)
            if last is None or not (timed_out and time_limit is not None):
                from clusteropt.solvers.core import check_optimal

                try:
                    check_optimal(res, True)
                except NotOptimalError as exc:
                    raise NotOptimalError(f"row generation round {rounds}: {exc}", res) from None
            status = "time_limit"  # keep the last optimal relaxation: still a valid bound
            break
        last = res

        t0 = time.perf_counter()
        offered = [_as_cut(c) for c in separate(model, res)]
        sep_s += time.perf_counter() - t0
        violated = [c for c in offered if float(c.violation) > c.threshold(tol)]
        max_violation = max((c.relative_violation for c in violated), default=0.0)
        fresh = [c for c in violated if c.key is None or c.key not in seen]
        log.debug(
            "row generation round %d: objective %.10g, %d cuts offered, %d violated (max relative "
            "violation %.3g), solve %.3g s", rounds, res.objective, len(offered), len(violated),
            max_violation, res.solve_seconds,
        )
        if not violated:
            status = "converged"
            break
        if not fresh:
            status = "stalled"
            break
        if rounds >= max_rounds:
            status = "max_rounds"
            break
        remaining = left()
        if remaining is not None and remaining <= 0:
            status = "time_limit"
            break
        fresh.sort(key=lambda c: -c.relative_violation)
        if max_cuts_per_round is not None:
            fresh = fresh[: int(max_cuts_per_round)]
        t0 = time.perf_counter()
        for c in fresh:
            cuts_list.add(c.expr)
            if c.key is not None:
                seen.add(c.key)
        build_s += time.perf_counter() - t0
        per_round.append(len(fresh))

    assert last is not None
    total = time.perf_counter() - start
    side = "lower" if sense == "minimize" else "upper"
    if status == "converged":
        message = (
            f"converged after {rounds} rounds ({sum(per_round)} cuts): objective {last.objective:.10g} "
            f"is the optimum of the full LP (no cut violated by more than tol={tol:g} relative)"
        )
    else:
        message = (
            f"stopped ({status}) after {rounds} rounds ({sum(per_round)} cuts) with violated cuts left "
            f"(max relative violation {max_violation:.3g}): objective {last.objective:.10g} is a valid "
            f"{side} bound on the full LP's optimum, not its optimum"
        )
    out = RowGenResult(
        result=last,
        status=status,
        objective=float(last.objective),
        sense=sense,
        rounds=rounds,
        cuts_per_round=tuple(per_round),
        max_violation=0.0 if status == "converged" else float(max_violation),
        build_seconds=build_s,
        solve_seconds=solve_s,
        separation_seconds=sep_s,
        total_seconds=total,
        message=message,
    )
    (log.info if status == "converged" else log.warning)("%s; %s", out.summary(), message)
    return out

