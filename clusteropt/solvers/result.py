"""What a solve returns: :class:`Termination`, :class:`SolveResult` and the solver errors.

"Why it stopped" (``termination``) is kept apart from "what solution exists" (``has_solution``),
following Pyomo's ``contrib.solver`` results object.  One convention matters for MILPs: a solve
stopped by a limit that holds an incumbent reports ``FEASIBLE`` together with its ``bound`` and
``gap``; a limit with no incumbent reports ``TIME_LIMIT`` / ``ITERATION_LIMIT``.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import numpy as np

__all__ = [
    "LazyMapping",
    "NotOptimalError",
    "SolveResult",
    "SolverError",
    "SolverUnavailableError",
    "Termination",
    "UnknownSolverError",
    "UnsuitableSolverError",
]


class Termination(enum.Enum):
    """Why a solver stopped; ``UNKNOWN`` is the fallback for any native status not in a table."""

    OPTIMAL = "optimal"
    FEASIBLE = "feasible"
    INFEASIBLE = "infeasible"
    UNBOUNDED = "unbounded"
    INFEASIBLE_OR_UNBOUNDED = "infeasible_or_unbounded"
    TIME_LIMIT = "time_limit"
    ITERATION_LIMIT = "iteration_limit"
    ERROR = "error"
    UNKNOWN = "unknown"


class SolverError(RuntimeError):
    """Base class of the errors raised by :func:`clusteropt.solvers.solve`."""


class UnknownSolverError(SolverError, ValueError):
    """A solver name that is not in the registry (the message lists the alternatives)."""


class UnsuitableSolverError(SolverError, ValueError):
    """A solver that exists but cannot take this model (wrong backend or missing capability)."""


class SolverUnavailableError(SolverError):
    """A registered solver whose package or executable is not installed here."""


class NotOptimalError(SolverError):
    """Raised by ``solve(..., raise_on_nonoptimal=True)`` when the solve did not prove optimality.

    The :class:`SolveResult` is attached as ``.result`` so nothing is lost.
    """

    def __init__(self, message: str, result: SolveResult):
        super().__init__(message)
        self.result = result


def relative_gap(objective: float | None, bound: float | None) -> float | None:
    """Relative MIP gap ``|objective - bound| / max(|objective|, 1e-10)`` (HiGHS's definition).

    >>> relative_gap(100.0, 101.0)
    0.01
    >>> relative_gap(None, 3.0) is None
    True
    """
    if objective is None or bound is None:
        return None
    if not (math.isfinite(objective) and math.isfinite(bound)):
        return math.inf
    return abs(objective - bound) / max(abs(objective), 1e-10)


NO_SOLUTION = frozenset(
    {
        Termination.INFEASIBLE,
        Termination.UNBOUNDED,
        Termination.INFEASIBLE_OR_UNBOUNDED,
        Termination.ERROR,
    }
)
"""Terminations that never come with a solution, whatever a solver's solution status says."""

LIMITS = frozenset({Termination.TIME_LIMIT, Termination.ITERATION_LIMIT, Termination.UNKNOWN})
"""Terminations that become ``FEASIBLE`` when the solver holds an incumbent."""


def settle(
    termination: Termination,
    has_solution: bool,
    objective: float | None,
    bound: float | None,
    *,
    mip: bool,
) -> tuple[Termination, float | None, float | None]:
    """The package-wide status rules every backend applies last: ``(termination, bound, gap)``.

    * a limit (or an unknown stop) with an incumbent is ``FEASIBLE``;
    * a proven-optimal continuous problem whose solver reports no bound has ``bound = objective``;
    * the gap is :func:`relative_gap` when a solution exists, else None.

    >>> settle(Termination.TIME_LIMIT, True, 10.0, 12.0, mip=True)
    (<Termination.FEASIBLE: 'feasible'>, 12.0, 0.2)
    >>> settle(Termination.OPTIMAL, True, 3.0, None, mip=False)
    (<Termination.OPTIMAL: 'optimal'>, 3.0, 0.0)
    """
    if termination in LIMITS and has_solution:
        termination = Termination.FEASIBLE
    if termination is Termination.OPTIMAL and not mip and bound is None:
        bound = objective
    gap = relative_gap(objective, bound) if has_solution else None
    return termination, bound, gap


class LazyMapping(Mapping):
    """A read-only mapping whose values are made by zero-argument functions when first read, then
    kept: the index keys of a large array model's variables (:meth:`clusteropt.models.matrix.MatrixLP.labels`)
    cost nothing unless a caller reads them.

    >>> m = LazyMapping({"y": lambda: [("a",), ("b",)]})
    >>> list(m), m["y"]
    (['y'], [('a',), ('b',)])
    """

    def __init__(self, makers: Mapping[str, Any]):
        self._makers = dict(makers)
        self._made: dict[str, Any] = {}

    def __getitem__(self, key: str) -> Any:
        if key not in self._made:
            self._made[key] = self._makers[key]()
        return self._made[key]

    def __iter__(self):
        return iter(self._makers)

    def __len__(self) -> int:
        return len(self._makers)


@dataclass(frozen=True)
class SolveResult:
    """The outcome of one solve, the same for every backend and solver.

    Attributes
    ----------
    termination : Termination
        Why the solver stopped.
    has_solution : bool
        Whether ``values`` hold a primal point (optimal or an incumbent).
    objective : float or None
        Objective value of that point, in the model's own sense (maximize stays maximize).
    bound : float or None
        Best proven bound on the optimum (dual bound); equals ``objective`` at proven optimality
        of an LP or MILP when the solver reports it.
    gap : float or None
        Relative gap between ``objective`` and ``bound`` (see :func:`relative_gap`).
    values : Mapping[str, numpy.ndarray]
        Variable component name -> values (scalars as 0-d arrays; indexed Pyomo variables over a
        dense product of sets get one axis per set, otherwise one axis in index order).
    solver, backend : str
        Registry name of the solver (``"highs"``) and the backend that ran it
        (``"pyomo"``, ``"cvxpy"`` or ``"file"``).
    build_seconds : float
        Time spent turning the model into the solver's input (hand-off / canonicalization).
    solve_seconds : float
        Wall time of the solver call itself.
    raw : Mapping[str, Any]
        Native details: at least ``"status"`` (the solver's own status text); the native
        results object under ``"native"`` where there is one.
    labels : Mapping[str, list[tuple]]
        Each indexed variable's index keys, in the order of its flattened ``values`` (the model's
        own index: ``(job, slot, dc)``, ``(i, server)``, ...): Pyomo variables, CVXPY variables
        that their :class:`~clusteropt.models.CvxpyModel` indexes (``CvxpyModel.index``), and file
        solves given the model they were written from (:func:`clusteropt.solvers.solve_file`'s
        ``model``).  Read them with :meth:`labelled` or :meth:`series`; variables without labels
        are labelled by array position.  ``values[name]`` stays the bare array.
    index_names : Mapping[str, tuple[str, ...]]
        The names of each labelled variable's index sets, one per part of its keys (``("I",
        "S")``); written by :meth:`to_dict` beside the labelled values.
    max_violation, feasibility_tol : float or None
        CVXPY results with a point: the largest scaled constraint violation the package measured
        at it (:func:`clusteropt.solvers.cvxpy_backend.max_violation`) and the tolerance it was
        checked against (:data:`~clusteropt.solvers.cvxpy_backend.FEASIBILITY_TOL`: SCS's 1e-4, else
        1e-6); a point that is not certified optimal and exceeds it is no solution.  None for other
        backends, and for CVXPY results without a point.
    """

    termination: Termination
    has_solution: bool
    objective: float | None
    bound: float | None
    gap: float | None
    values: Mapping[str, np.ndarray] = field(repr=False)
    solver: str
    backend: str
    build_seconds: float
    solve_seconds: float
    raw: Mapping[str, Any] = field(repr=False, compare=False)
    labels: Mapping[str, list] = field(default_factory=dict, repr=False, compare=False)
    index_names: Mapping[str, tuple[str, ...]] = field(default_factory=dict, repr=False, compare=False)
    max_violation: float | None = field(default=None, compare=False)
    feasibility_tol: float | None = field(default=None, compare=False)

    def __post_init__(self):
        object.__setattr__(self, "values", MappingProxyType(dict(self.values)))
        object.__setattr__(self, "raw", MappingProxyType(dict(self.raw)))
        if not isinstance(self.labels, LazyMapping):  # a LazyMapping makes each entry when first read
            object.__setattr__(self, "labels", MappingProxyType(dict(self.labels)))
        object.__setattr__(self, "index_names", MappingProxyType(dict(self.index_names)))

    def labelled(self, name: str) -> dict[tuple, float]:
        """Variable ``name``'s values by index key: the model's own keys for Pyomo variables
        (``labels``), array positions otherwise (``()`` for a scalar).

        >>> r = SolveResult(Termination.OPTIMAL, True, 1.0, 1.0, 0.0, {"y": np.array([0.0, 2.0])}, "highs",
        ...                 "pyomo", 0, 0, {}, labels={"y": [("a", 1), ("b", 1)]})
        >>> r.labelled("y")
        {('a', 1): 0.0, ('b', 1): 2.0}
        """
        if name not in self.values:
            raise KeyError(f"no variable {name!r} in the result; variables: {', '.join(self.values)}")
        arr = np.asarray(self.values[name], dtype=float)
        keys = self.labels.get(name)
        if keys is None:
            keys = [tuple(int(i) for i in np.unravel_index(j, arr.shape)) for j in range(arr.size)] if arr.ndim \
                else [()]
        if len(keys) != arr.size:
            raise ValueError(f"variable {name!r}: {len(keys)} labels for {arr.size} values")
        return dict(zip(keys, arr.ravel().tolist(), strict=True))

    def series(self, name: str):
        """Variable ``name`` as a :class:`pandas.Series` indexed by its keys (a MultiIndex when
        they have several parts), the way Pyomo indexes it.
        """
        import pandas as pd

        values = self.labelled(name)
        keys = list(values)
        if keys and len(keys[0]) > 1:
            index = pd.MultiIndex.from_tuples(keys)
        else:
            index = pd.Index([k[0] if k else None for k in keys])
        return pd.Series(list(values.values()), index=index, name=name)

    @property
    def is_optimal(self) -> bool:
        """True when the solver proved optimality."""
        return self.termination is Termination.OPTIMAL

    def summary(self) -> str:
        """One line in the spirit of JuMP's ``solution_summary``.

        >>> r = SolveResult(Termination.OPTIMAL, True, 2.0, 2.0, 0.0, {}, "highs", "pyomo",
        ...                 0.001, 0.002, {"status": "optimal"})
        >>> r.summary()
        'highs/pyomo: optimal, objective 2, bound 2, gap 0, build 0.001 s, solve 0.002 s'

        A CVXPY result also says how far its point is from feasible, and the tolerance it was
        checked against:

        >>> SolveResult(Termination.OPTIMAL, True, 2.0, 2.0, 0.0, {}, "scs", "cvxpy", 0.001, 0.002, {},
        ...             max_violation=2.65e-5, feasibility_tol=1e-4).summary()  # doctest: +ELLIPSIS
        'scs/cvxpy: optimal, ..., solve 0.002 s, max violation 2.65e-05 (tolerance 1e-04)'
        """

        def fmt(v):
            return "-" if v is None else f"{v:.6g}"

        text = (
            f"{self.solver}/{self.backend}: {self.termination.value}, objective {fmt(self.objective)}, "
            f"bound {fmt(self.bound)}, gap {fmt(self.gap)}, build {self.build_seconds:.3g} s, "
            f"solve {self.solve_seconds:.3g} s"
        )
        if self.max_violation is not None:
            tol = "-" if self.feasibility_tol is None else np.format_float_scientific(
                self.feasibility_tol, trim="-", exp_digits=2)
            text += f", max violation {self.max_violation:.3g} (tolerance {tol})"
        return text

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready dict: ``values`` as nested lists (the bare arrays), ``labelled_values`` as
        rows ``[*index key, value]`` per variable (:meth:`labelled`), ``index_names`` naming the key
        parts of each variable that has them, ``raw`` reduced to its status text.

        >>> r = SolveResult(Termination.OPTIMAL, True, 2.0, 2.0, 0.0, {"y": np.array([0.0, 2.0])}, "highs",
        ...                 "pyomo", 0, 0, {}, labels={"y": [("a",), ("b",)]}, index_names={"y": ("J",)})
        >>> d = r.to_dict()
        >>> d["values"]["y"], d["labelled_values"]["y"], d["index_names"]["y"]
        ([0.0, 2.0], [['a', 0.0], ['b', 2.0]], ['J'])
        """
        return {
            "termination": self.termination.value,
            "has_solution": self.has_solution,
            "objective": self.objective,
            "bound": self.bound,
            "gap": self.gap,
            "solver": self.solver,
            "backend": self.backend,
            "build_seconds": self.build_seconds,
            "solve_seconds": self.solve_seconds,
            "status": str(self.raw.get("status", "")),
            # measured on CVXPY points only: absent elsewhere, so other results' JSON is as it was
            # (inf, a variable without a finite value, is null: the file stays strict JSON)
            **({"max_violation": self.max_violation if math.isfinite(self.max_violation) else None,
                "feasibility_tol": self.feasibility_tol} if self.max_violation is not None else {}),
            "values": {k: np.asarray(v).tolist() for k, v in self.values.items()},
            "labelled_values": {k: [[*key, value] for key, value in self.labelled(k).items()]
                                for k in self.values},
            "index_names": {k: list(v) for k, v in self.index_names.items() if k in self.values},
        }
