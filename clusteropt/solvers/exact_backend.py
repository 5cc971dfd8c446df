"""The ``"exact"`` backend: models solved by an exact algorithm of the package
(:class:`~clusteropt.models.exact.ExactModel`), returned as a :class:`SolveResult` like any solve.

The algorithm proves its optimum, so a finished run is ``OPTIMAL`` with objective = bound and
gap 0; a run past ``time_limit`` is ``TIME_LIMIT`` with no solution.  ``mip_gap`` is met by any
exact optimum; ``threads`` may be 1 (the algorithms are single-threaded NumPy); native options
and any other solver are refused, naming the solver model of the same optimum.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from clusteropt.models.exact import ExactModel
from clusteropt.solvers.result import SolveResult, Termination, UnsuitableSolverError

__all__ = ["solve_exact"]

log = logging.getLogger(__name__)


def solve_exact(model: ExactModel, solver: Any, *, time_limit: float | None, threads: int | None,
                options: dict[str, Any] | None) -> SolveResult:
    """Run ``model``'s algorithm; the solution is also kept on ``model.solution``.

    >>> import numpy as np
    >>> from clusteropt.models.exact import ExactSolution
    >>> m = ExactModel("toy", "enumeration", [], lambda limit: ExactSolution(2.0, {"x": np.array([1.0])}),
    ...                solver_model="toy-milp")
    >>> r = solve_exact(m, None, time_limit=None, threads=None, options=None)
    >>> r.termination.name, r.objective, r.gap, r.solver, r.backend
    ('OPTIMAL', 2.0, 0.0, 'enumeration', 'exact')
    >>> solve_exact(m, "highs", time_limit=None, threads=None, options=None)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    clusteropt.solvers.result.UnsuitableSolverError: model 'toy' ... has no solver 'highs'; model 'toy-milp' is ...
    """
    name = getattr(solver, "name", solver)
    if name is not None and name not in (model.method, "exact"):
        raise UnsuitableSolverError(model.no_solver_form(f"solver {name!r}"))
    if threads is not None and int(threads) != 1:
        raise ValueError(f"threads = {threads}: {model.method} runs on one thread; expected 1 or None")
    if options:
        raise ValueError(f"options {sorted(options)}: {model.method} takes no native options")
    start = time.perf_counter()
    try:
        sol = model.run(time_limit)
    except TimeoutError as exc:
        seconds = time.perf_counter() - start
        log.info("%s: %s", model.name, exc)
        return SolveResult(Termination.TIME_LIMIT, False, None, None, None, {}, model.method, "exact",
                           model.build_seconds, seconds, {"status": str(exc)})
    seconds = time.perf_counter() - start
    model.solution = sol
    value = float(sol.objective)
    return SolveResult(Termination.OPTIMAL, True, value, value, 0.0, dict(sol.values), model.method, "exact",
                       model.build_seconds, seconds, {"status": "optimal (exact algorithm)"},
                       labels=dict(sol.labels), index_names=dict(sol.index_names))
