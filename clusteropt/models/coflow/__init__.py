"""Coflow scheduling (paper 001): the concurrent-open-shop LP, its row generation, exact MILPs.

=====================  ======================================================================
module                 what it builds
=====================  ======================================================================
:mod:`.open_shop`      the concurrent-open-shop LP (release and parallel inequalities), its
                       separation, and the exact time-indexed MILPs of tiny instances
:mod:`.matrix`         the same LP kept as one live HiGHS model, cuts added as arrays
:mod:`.bound`          the LP lower bound by row generation, on either route
=====================  ======================================================================

Every public name of these modules is re-exported here (``from clusteropt.models.coflow import
cos_lower_bound``); importing the package registers the coflow models in
:data:`clusteropt.models.MODELS`.  The names of :mod:`.matrix` load on first use (they bring in
SciPy and the solver hand-offs, which the CLI's listings do without).
"""

from typing import TYPE_CHECKING

from clusteropt._lazy import lazy_exports
from clusteropt.models.coflow.bound import cos_lower_bound
from clusteropt.models.coflow.open_shop import (
    PER_MACHINE,
    PURGE_AFTER,
    CosData,
    ParallelCuts,
    build_coflow_milp,
    build_cos_lp,
    build_cos_milp,
    cos_data,
    full_set_rows,
    parallel_cut_rows,
    parallel_rhs,
    separate_parallel_inequalities,
)

if TYPE_CHECKING:
    from clusteropt.models.coflow.matrix import cos_lower_bound_matrix, cos_start_rows

_LAZY = {name: "clusteropt.models.coflow.matrix" for name in ("cos_lower_bound_matrix", "cos_start_rows")}
__getattr__, __dir__ = lazy_exports(__name__, _LAZY)

__all__ = [
    "PER_MACHINE",
    "PURGE_AFTER",
    "CosData",
    "ParallelCuts",
    "build_coflow_milp",
    "build_cos_lp",
    "build_cos_milp",
    "cos_data",
    "cos_lower_bound",
    "cos_lower_bound_matrix",
    "cos_start_rows",
    "full_set_rows",
    "parallel_cut_rows",
    "parallel_rhs",
    "separate_parallel_inequalities",
]
