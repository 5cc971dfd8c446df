"""Paper 001 (coflow scheduling): the concurrent-open-shop LP lower bound, solved by row generation.

:func:`cos_lower_bound` solves the LP of :mod:`clusteropt.models.coflow.open_shop` (the slides'
"LP for Concurrent Open Shop", docs/algorithms/coflow.md B6) by row generation (B8): the release
rows and full-set inequalities to start, the violated parallel inequalities found by Queyranne's
prefix rule added round by round.  Two routes solve the same LP with the same rules: one live HiGHS
model fed cuts as arrays (:mod:`clusteropt.models.coflow.matrix`), or the Pyomo model through
:func:`clusteropt.solvers.rowgen.row_generation` (any LP solver).
"""

from __future__ import annotations

import dataclasses
import logging
import time
from typing import TYPE_CHECKING

import numpy as np

from clusteropt.instances.coflow.instance import CoflowInstance, ConcurrentOpenShopInstance
from clusteropt.models.coflow.open_shop import (
    PER_MACHINE,
    PURGE_AFTER,
    build_cos_lp,
    parallel_cut_rows,
    separate_parallel_inequalities,
)

if TYPE_CHECKING:
    from clusteropt.solvers.rowgen import RowGenResult

__all__ = ["cos_lower_bound"]

log = logging.getLogger(__name__)


def cos_lower_bound(
    inst: ConcurrentOpenShopInstance | CoflowInstance,
    *,
    solver: str = "highs",
    tol: float = 1e-7,
    max_rounds: int = 200,
    per_machine: int = PER_MACHINE,
    persistent: bool = True,
    time_limit: float | None = None,
    purge_after: int | None = PURGE_AFTER,
    initial: str = "singletons+full",
    progress: bool = False,
    builder: str = "auto",
) -> tuple[float, np.ndarray, RowGenResult]:
    """The slides' LP lower bound on ``sum_j w_j C_j``, solved by row generation (coflow.md B8).

    Parameters
    ----------
    inst : ConcurrentOpenShopInstance or CoflowInstance
    solver, tol, max_rounds, persistent, time_limit, purge_after, progress :
        As in :func:`clusteropt.solvers.rowgen.row_generation`.  Default ``purge_after``:
        :data:`PURGE_AFTER` (None keeps every cut; the optimum is the same, the solves slower).
    per_machine : int
        Cuts per machine and round (:func:`separate_parallel_inequalities`); default
        :data:`PER_MACHINE`.
    initial : str
        Starting rows (:func:`build_cos_lp`).
    builder : {"auto", "matrix", "pyomo"}
        ``"matrix"``: the loop on one live HiGHS model, cuts added and purged as arrays
        (:func:`clusteropt.models.coflow.matrix.cos_lower_bound_matrix`; the same LP and rules);
        ``"pyomo"``: the model of :func:`build_cos_lp` through
        :func:`~clusteropt.solvers.rowgen.row_generation`; ``"auto"`` (default): ``"matrix"`` with
        HiGHS and ``persistent=True``, else ``"pyomo"``.

    Returns
    -------
    bound : float
        The LP optimum when ``rowgen.status == "converged"``; otherwise the objective of the last
        relaxation, still a valid lower bound but not the LP optimum (a warning is logged and
        ``rowgen.message`` says so).
    C : float array (n,)
        The LP completion times (``C*``), e.g. to order jobs (the slides' "LP variant").
    rowgen : RowGenResult
        Rounds, cuts per round, build / solve / separation seconds (``model_build_seconds``
        holds the time of :func:`build_cos_lp`).

    References
    ----------
    Paper 001 slides, "LP for Concurrent Open Shop"; coflow.md B6, B8.

    Examples
    --------
    One machine, zero releases: the LP is exact, Smith's rule (order by ``w/p`` decreasing)
    gives ``C = (3, 1)`` and ``1*3 + 3*1 = 6``:

    >>> cos = ConcurrentOpenShopInstance([[2, 1]], [1.0, 3.0], [0, 0])
    >>> bound, C, rg = cos_lower_bound(cos)
    >>> round(bound, 6), C.round(6).tolist(), rg.status
    (6.0, [3.0, 1.0], 'converged')
    """
    if builder not in ("auto", "matrix", "pyomo"):
        raise ValueError(f"builder = {builder!r}; expected 'auto', 'matrix' or 'pyomo'")
    if builder == "matrix" and solver != "highs":
        raise ValueError(f"builder = 'matrix' keeps a HiGHS model; solver = {solver!r} needs builder 'pyomo'")
    if builder == "matrix" or (builder == "auto" and solver == "highs" and persistent):
        from clusteropt.models.coflow.matrix import cos_lower_bound_matrix  # the solver hand-offs: on use

        return cos_lower_bound_matrix(inst, tol=tol, max_rounds=max_rounds, per_machine=per_machine,
                                      time_limit=time_limit, purge_after=purge_after, initial=initial,
                                      progress=progress)
    from clusteropt.solvers.rowgen import row_generation

    t0 = time.perf_counter()
    model = build_cos_lp(inst, initial=initial)
    build_s = time.perf_counter() - t0
    data = model.cos_data

    def separate(m, result):
        cuts = separate_parallel_inequalities(data, result.values["C"], per_machine=per_machine, tol=tol)
        return parallel_cut_rows(m, cuts)

    rg = row_generation(model, separate, solver=solver, tol=tol, max_rounds=max_rounds,
                        persistent=persistent, time_limit=time_limit, purge_after=purge_after,
                        progress=progress)
    rg = dataclasses.replace(rg, model_build_seconds=build_s)
    C = np.array(rg.result.values["C"], dtype=float).reshape(-1)
    if not rg.converged:
        log.warning("cos_lower_bound: %s", rg.message)
    return rg.objective, C, rg
