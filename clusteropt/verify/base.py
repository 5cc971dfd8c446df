"""What every checker returns: the :class:`Violation` list and the cost it computed itself.

Checkers live in ``clusteropt.verify`` and never call the code that produced the decision they
check.  Each returns a :class:`Check`: ``violations`` (empty when feasible) and ``value`` (the
objective, cost or utility recomputed from the instance and the decision alone).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["Check", "Violation", "violations_where"]


@dataclass(frozen=True)
class Violation:
    """One violated constraint.

    Attributes
    ----------
    constraint : str
        Which constraint, as the paper numbers it (``"(4) server capacity"``).
    where : str
        The offending index (``"s=2, r=gpu"``).
    amount : float
        By how much it is violated (left side minus right side, > 0).
    """

    constraint: str
    where: str
    amount: float

    def __str__(self) -> str:
        return f"{self.constraint} violated at {self.where} by {self.amount:.6g}"


@dataclass(frozen=True)
class Check:
    """A checker's verdict: violations and the recomputed objective / cost / utility."""

    violations: tuple[Violation, ...] = field(default_factory=tuple)
    value: float = float("nan")

    @property
    def feasible(self) -> bool:
        """True when no constraint is violated."""
        return not self.violations

    @property
    def ok(self) -> bool:
        """The verdict, the same as :attr:`feasible` (every checker's result has it)."""
        return not self.violations

    def raise_if_infeasible(self) -> None:
        """Raise ``AssertionError`` listing the first violations (for tests and pipelines)."""
        if self.violations:
            shown = "; ".join(str(v) for v in self.violations[:5])
            more = f" (and {len(self.violations) - 5} more)" if len(self.violations) > 5 else ""
            raise AssertionError(f"{len(self.violations)} violation(s): {shown}{more}")


def violations_where(
    constraint: str, excess: np.ndarray, labels, *, tol: float = 1e-6
) -> list[Violation]:
    """One :class:`Violation` per entry of ``excess`` (lhs - rhs) above ``tol``.

    ``labels(idx)`` turns an index tuple into the ``where`` text.

    >>> violations_where("(2)", np.array([0.0, 2.5]), lambda i: f"i={i[0]}")
    [Violation(constraint='(2)', where='i=1', amount=2.5)]
    """
    excess = np.asarray(excess, dtype=float)
    return [
        Violation(constraint, labels(tuple(int(k) for k in idx)), float(excess[tuple(idx)]))
        for idx in np.argwhere(excess > tol)
    ]
