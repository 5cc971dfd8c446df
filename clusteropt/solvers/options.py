"""The options every solve takes (``time_limit``, ``mip_gap``, ``threads``), checked once, and the
thread count a solve uses when it passes none (``$CLUSTEROPT_THREADS``).

Whatever the backend or solver, :func:`clusteropt.solvers.solve`, :func:`~clusteropt.solvers.solve_file`,
the persistent re-solve and HiGHS's own entry points check these options here, so a bad value gets
the same message everywhere; :func:`backend_of` says which backend a model belongs to.
"""

from __future__ import annotations

import math
import os
from typing import Any

import numpy as np

from clusteropt.instances.base import shown
from clusteropt.models.cvxpy_model import CvxpyModel
from clusteropt.models.exact import ExactModel

__all__ = ["THREADS_ENV", "backend_of", "check_numbers", "default_threads"]

#: Environment variable giving the thread count of solves that do not pass ``threads``; the
#: experiments harness sets it to 1 in every cell process.
THREADS_ENV = "CLUSTEROPT_THREADS"


def default_threads() -> int | None:
    """The thread count from ``$CLUSTEROPT_THREADS``, or None when it is unset or empty.

    >>> import os
    >>> os.environ.get(THREADS_ENV) is None and default_threads() is None
    True
    """
    text = os.environ.get(THREADS_ENV, "").strip()
    if not text:
        return None
    if not text.isdigit() or int(text) < 1:
        raise ValueError(f"environment variable {THREADS_ENV} = {text!r}; expected a positive integer")
    return int(text)


def _real(value: Any) -> float:
    """``value`` as a float when it is a real number (not a boolean or a string), else nan."""
    if isinstance(value, bool | np.bool_) or not isinstance(value, int | float | np.integer | np.floating):
        return math.nan
    try:
        return float(value)
    except OverflowError:  # an int beyond float range
        return math.inf if value > 0 else -math.inf


def check_numbers(time_limit, mip_gap, threads) -> None:
    """A ``ValueError`` naming the first of the common options that is set but not a number in its
    range: a finite ``time_limit > 0``, ``0 <= mip_gap < 1``, an integral ``threads >= 1``.  nan,
    inf, booleans and strings are refused (no solver is handed a nan limit).

    >>> check_numbers(10, 1e-4, 2)
    >>> check_numbers(float("nan"), None, None)
    Traceback (most recent call last):
    ...
    ValueError: time_limit = nan; expected a positive number of seconds
    >>> check_numbers(None, None, float("inf"))
    Traceback (most recent call last):
    ...
    ValueError: threads = inf; expected a positive integer
    """
    t = _real(time_limit)
    if time_limit is not None and not (math.isfinite(t) and t > 0):
        raise ValueError(f"time_limit = {shown(time_limit)!r}; expected a positive number of seconds")
    if mip_gap is not None and not 0 <= _real(mip_gap) < 1:
        raise ValueError(f"mip_gap = {shown(mip_gap)!r}; expected a relative gap in [0, 1)")
    n = _real(threads)
    if threads is not None and not (math.isfinite(n) and n.is_integer() and n >= 1):
        raise ValueError(f"threads = {shown(threads)!r}; expected a positive integer")


def backend_of(model: Any) -> str:
    """``"pyomo"`` for a Pyomo block / ConcreteModel, ``"cvxpy"`` for a Problem or CvxpyModel,
    ``"exact"`` for an :class:`~clusteropt.models.exact.ExactModel` (an algorithm of the package),
    ``"matrix"`` for a :class:`~clusteropt.models.matrix.MatrixLP` (a model's arrays).

    >>> import cvxpy as cp
    >>> backend_of(cp.Problem(cp.Minimize(0)))
    'cvxpy'
    >>> backend_of(42)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    TypeError: cannot solve an object of type int; expected a Pyomo ConcreteModel, a cvxpy.Problem, ...
    """
    if isinstance(model, CvxpyModel):
        return "cvxpy"
    if isinstance(model, ExactModel):
        return "exact"
    if getattr(type(model), "solver_backend", None) == "matrix":  # MatrixLP (models.matrix imports the solvers)
        return "matrix"
    import cvxpy as cp

    if isinstance(model, cp.Problem):
        return "cvxpy"
    from pyomo.core.base.block import BlockData

    if isinstance(model, BlockData):
        return "pyomo"
    raise TypeError(
        f"cannot solve an object of type {type(model).__name__}; expected a Pyomo "
        "ConcreteModel, a cvxpy.Problem, a CvxpyModel, a MatrixLP or an ExactModel"
    )
