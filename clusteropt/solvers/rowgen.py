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

Cuts pile up: most of them stop binding a few rounds after they were added, yet every simplex
iteration pays for them.  With ``purge_after=k`` a cut of the loop's own that has been *slack*
(strictly inside its bound) at ``k`` consecutive optima is deleted again (the solver drops the
row, its basis stays valid); separation may add it back later.  Deleting slack rows keeps the
current point optimal, so the objective still never decreases (minimization) from round to round.

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

import numpy as np
from pyomo.environ import value as pyo_value

from clusteropt.progress import Progress
from clusteropt.solvers.result import NotOptimalError, SolveResult, Termination

log = logging.getLogger(__name__)

__all__ = ["STATUSES", "Cut", "RowGenResult", "check_options", "row_generation", "stop_message"]

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
    removed_per_round : tuple of int
        Cuts purged at the same moments (all zero without ``purge_after``).
    n_rows : int
        Cuts of the loop left in ``model.rowgen_cuts`` at the end.
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
    removed_per_round: tuple[int, ...]
    n_rows: int
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
        >>> rg = RowGenResult(r, "converged", 6.0, "minimize", 2, (1,), (0,), 1, 0.0, 0.01, 0.02, 0.003, 0.04)
        >>> rg.summary()  # doctest: +NORMALIZE_WHITESPACE
        'row generation converged: objective 6, 2 rounds, 1 cuts (0 purged), build 0.01 s,
         solve 0.02 s, separation 0.003 s'
        """
        return (
            f"row generation {self.status}: objective {self.objective:.10g}, {self.rounds} rounds, "
            f"{self.n_cuts} cuts ({sum(self.removed_per_round)} purged), build {self.build_seconds:.3g} s, "
            f"solve {self.solve_seconds:.3g} s, separation {self.separation_seconds:.3g} s"
        )


class _CutMirror:
    """Numeric copy of the loop's linear cuts: all their activities in one sparse product.

    Each added cut is read once into (columns, coefficients, constant, bounds); per round the
    activities are ``A @ x`` over the values loaded into the model, so finding the slack cuts
    costs O(nonzeros) in numpy instead of evaluating Pyomo expressions.
    """

    def __init__(self) -> None:
        self.col_of: dict[int, int] = {}
        self.vars: list = []
        self.entries: dict[int, tuple] = {}  # ConstraintList index -> (cols, coefs, const, lo, up, key)
        self.slack: dict[int, int] = {}
        # (A, const, lo, up) of the cuts in ``entries`` order, rebuilt after any change
        self._matrix: tuple[Any, np.ndarray, np.ndarray, np.ndarray] | None = None

    def add(self, con, key) -> None:
        from pyomo.repn.standard_repn import generate_standard_repn

        repn = generate_standard_repn(con.body, quadratic=False, compute_values=True)
        if repn.nonlinear_expr is not None:
            return  # never purged
        cols = np.empty(len(repn.linear_vars), dtype=np.int64)
        for k, v in enumerate(repn.linear_vars):
            col = self.col_of.get(id(v))
            if col is None:
                col = self.col_of[id(v)] = len(self.vars)
                self.vars.append(v)
            cols[k] = col
        lo = None if con.lower is None else float(pyo_value(con.lower))
        up = None if con.upper is None else float(pyo_value(con.upper))
        self.entries[con.index()] = (cols, np.asarray(repn.linear_coefs, dtype=float),
                                     float(repn.constant), lo, up, key)
        self.slack[con.index()] = 0
        self._matrix = None

    def remove(self, index: int) -> Hashable | None:
        key = self.entries.pop(index)[5]
        del self.slack[index]
        self._matrix = None
        return key

    def count_slack(self, tol: float) -> list[int]:
        """Update the consecutive-slack counters at the current point; return the counters' keys."""
        if not self.entries:
            return []
        idx = list(self.entries)
        if self._matrix is None:
            from scipy.sparse import csr_matrix

            parts = [self.entries[i] for i in idx]
            indptr = np.zeros(len(parts) + 1, dtype=np.int64)
            np.cumsum([p[0].size for p in parts], out=indptr[1:])
            self._matrix = (
                csr_matrix((np.concatenate([p[1] for p in parts]), np.concatenate([p[0] for p in parts]),
                            indptr), shape=(len(parts), len(self.vars))),
                np.array([p[2] for p in parts]),
                np.array([np.nan if p[3] is None else p[3] for p in parts]),
                np.array([np.nan if p[4] is None else p[4] for p in parts]),
            )
        A, const, lo, up = self._matrix
        if A.shape[1] < len(self.vars):
            A.resize((A.shape[0], len(self.vars)))
        x = np.array([np.nan if v.value is None else v.value for v in self.vars], dtype=float)
        act = A @ np.nan_to_num(x) + const
        with np.errstate(invalid="ignore"):
            slack_lo = np.isnan(lo) | (act - lo > tol * np.maximum(1.0, np.abs(lo)))
            slack_up = np.isnan(up) | (up - act > tol * np.maximum(1.0, np.abs(up)))
        slack = slack_lo & slack_up
        for i, s_ in zip(idx, slack.tolist()):
            self.slack[i] = self.slack[i] + 1 if s_ else 0
        return idx


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


def check_options(*, tol: float, max_rounds: int, time_limit: float | None, purge_after: int | None,
                  max_cuts_per_round: int | None = None) -> None:
    """Refuse bad options of a row-generation loop (:func:`row_generation` and the array loop of
    :mod:`clusteropt.models.coflow.matrix`) with a message naming the option.
    """
    if not (tol >= 0 and math.isfinite(tol)):
        raise ValueError(f"tol = {tol!r}; expected a finite number >= 0")
    if int(max_rounds) != max_rounds or max_rounds < 1:
        raise ValueError(f"max_rounds = {max_rounds!r}; expected a positive integer")
    cap = max_cuts_per_round
    if cap is not None and (int(cap) != cap or cap < 1):
        raise ValueError(f"max_cuts_per_round = {max_cuts_per_round!r}; expected a positive integer or None")
    if time_limit is not None and not (time_limit > 0 and math.isfinite(time_limit)):
        raise ValueError(f"time_limit = {time_limit!r}; expected a positive number of seconds")
    if purge_after is not None and (int(purge_after) != purge_after or purge_after < 1):
        raise ValueError(f"purge_after = {purge_after!r}; expected a positive integer or None")


def stop_message(status: str, rounds: int, n_cuts: int, objective: float, tol: float, max_violation: float,
                 sense: str) -> str:
    """The sentence :attr:`RowGenResult.message` holds: the optimum when converged, else only a bound.

    >>> stop_message("max_rounds", 3, 7, 6.0, 1e-7, 0.02, "minimize")  # doctest: +NORMALIZE_WHITESPACE
    "stopped (max_rounds) after 3 rounds (7 cuts) with violated cuts left (max relative violation 0.02):
     objective 6 is a valid lower bound on the full LP's optimum, not its optimum"
    """
    if status == "converged":
        return (f"converged after {rounds} rounds ({n_cuts} cuts): objective {objective:.10g} is the optimum "
                f"of the full LP (no cut violated by more than tol={tol:g} relative)")
    side = "lower" if sense == "minimize" else "upper"
    return (f"stopped ({status}) after {rounds} rounds ({n_cuts} cuts) with violated cuts left (max relative "
            f"violation {max_violation:.3g}): objective {objective:.10g} is a valid {side} bound on the full "
            "LP's optimum, not its optimum")


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
    purge_after: int | None = None,
    threads: int | None = None,
    options: dict[str, Any] | None = None,
    progress: bool = False,
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
    purge_after : int, optional
        Delete a cut the loop added once it has been slack (strictly inside its bounds, by more
        than ``tol`` relative) at this many consecutive optima; None keeps every cut.  Only linear
        cuts in ``model.rowgen_cuts`` added by this call are ever deleted.
    threads, options :
        Passed to every solve.
    progress : bool
        Show the rounds done (:class:`clusteropt.progress.Progress`; the total is unknown).

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
        For bad ``tol`` / ``max_rounds`` / ``max_cuts_per_round`` / ``time_limit`` / ``purge_after``.

    References
    ----------
    The loop of coflow.md B8 (paper 001's LP solved with row generation); the separation for
    its parallel inequalities is :func:`clusteropt.models.coflow.open_shop.separate_parallel_inequalities`.

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

    check_options(tol=tol, max_rounds=max_rounds, time_limit=time_limit, purge_after=purge_after,
                  max_cuts_per_round=max_cuts_per_round)

    start = time.perf_counter()
    cuts_list = _cut_list(model)
    sense = _sense(model)
    ps = PersistentSolver(model, solver, threads=threads, options=options) if persistent else None

    build_s = solve_s = sep_s = 0.0
    per_round: list[int] = []
    removed: list[int] = []
    mirror = _CutMirror() if purge_after is not None else None
    seen: set[Hashable] = set()
    last: SolveResult | None = None
    status = ""
    max_violation = math.inf
    rounds = 0

    def left() -> float | None:
        return None if time_limit is None else time_limit - (time.perf_counter() - start)

    with Progress("row generation", None, "round", enabled=progress) as bar:
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
            bar.update()
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
            n_removed = 0
            if mirror is not None:
                assert purge_after is not None  # the mirror exists only with purge_after
                for i in mirror.count_slack(tol):
                    if mirror.slack[i] >= purge_after:
                        seen.discard(mirror.remove(i))
                        del cuts_list[i]
                        n_removed += 1
            for c in fresh:
                con = cuts_list.add(c.expr)
                if c.key is not None:
                    seen.add(c.key)
                if mirror is not None:
                    mirror.add(con, c.key)
            build_s += time.perf_counter() - t0
            per_round.append(len(fresh))
            removed.append(n_removed)

    assert last is not None
    assert last.objective is not None  # an optimal solve
    total = time.perf_counter() - start
    message = stop_message(status, rounds, sum(per_round), float(last.objective), tol, max_violation, sense)
    out = RowGenResult(
        result=last,
        status=status,
        objective=float(last.objective),
        sense=sense,
        rounds=rounds,
        cuts_per_round=tuple(per_round),
        removed_per_round=tuple(removed),
        n_rows=len(cuts_list),
        max_violation=0.0 if status == "converged" else float(max_violation),
        build_seconds=build_s,
        solve_seconds=solve_s,
        separation_seconds=sep_s,
        total_seconds=total,
        message=message,
    )
    (log.info if status == "converged" else log.warning)("%s; %s", out.summary(), message)
    return out

