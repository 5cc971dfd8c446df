"""GADGET (paper 000): the per-slot G-VNE ILP, its LP routes and the offline DDLJS model.

=====================  ======================================================================
module                 what it builds
=====================  ======================================================================
:mod:`.gvne`           the slot problem (10) as the G-VNE ILP (12)-(19) (Sec. V-C), its tree layout
:mod:`.embedding`      the augmented LP of LP-RS-MDE (Alg. 2 line 4) with the ring sizes fixed
:mod:`.extended`       the same augmented LP on the extended graph (the general form)
:mod:`.trees`          the per-job subtree bookkeeping both augmented LPs share
:mod:`.matrix`         the two LPs of Alg. 2 built directly as sparse arrays (the same rows)
:mod:`.colgen`         the augmented LP by column generation (placements priced on the tree)
:mod:`.ddljs`          the offline DDLJS problem (1)-(9) over all slots, and its optimum
=====================  ======================================================================

Every public name of these modules is re-exported here (``from clusteropt.models.gadget import
build_gvne``); importing the package registers the GADGET models in
:data:`clusteropt.models.MODELS`.  The names of :mod:`.matrix` and :mod:`.colgen` load on first use
(they bring in SciPy and the solver hand-offs, which the CLI's listings do without).
"""

from typing import TYPE_CHECKING

from clusteropt._lazy import lazy_exports
from clusteropt.models.gadget.ddljs import build_ddljs, ddljs_optimum, schedule_from_solution
from clusteropt.models.gadget.embedding import build_embedding_lp, decompose_embedding
from clusteropt.models.gadget.extended import build_extended_lp, decompose_extended
from clusteropt.models.gadget.gvne import (
    SlotProblem,
    TreeLayout,
    allocation_from_solution,
    build_gvne,
    slot_problem,
    tree_allocation,
    tree_layout,
    worker_bound,
)
from clusteropt.models.gadget.trees import check_kappa, server_fit

if TYPE_CHECKING:
    from clusteropt.models.gadget.colgen import (
        MASTER_STRATEGIES,
        ColgenResult,
        PlacementPrices,
        price_placements,
        solve_embedding_colgen,
    )
    from clusteropt.models.gadget.matrix import (
        EmbeddingSolution,
        MatrixLP,
        allocation_from_matrix,
        build_embedding_matrix,
        build_gvne_matrix,
        capacity_relaxation,
        certify_extension,
        extend_capacity_solution,
        server_classes,
        solve_matrix,
    )

_LAZY = {name: "clusteropt.models.gadget.colgen" for name in (
    "MASTER_STRATEGIES", "ColgenResult", "PlacementPrices", "price_placements", "solve_embedding_colgen")}
_LAZY.update({name: "clusteropt.models.gadget.matrix" for name in (
    "EmbeddingSolution", "MatrixLP", "allocation_from_matrix", "build_embedding_matrix", "build_gvne_matrix",
    "capacity_relaxation", "certify_extension", "extend_capacity_solution", "server_classes", "solve_matrix")})
__getattr__, __dir__ = lazy_exports(__name__, _LAZY)

__all__ = [
    "MASTER_STRATEGIES",
    "ColgenResult",
    "EmbeddingSolution",
    "MatrixLP",
    "PlacementPrices",
    "SlotProblem",
    "TreeLayout",
    "allocation_from_matrix",
    "allocation_from_solution",
    "build_ddljs",
    "build_embedding_lp",
    "build_embedding_matrix",
    "build_extended_lp",
    "build_gvne",
    "build_gvne_matrix",
    "capacity_relaxation",
    "certify_extension",
    "check_kappa",
    "ddljs_optimum",
    "decompose_embedding",
    "decompose_extended",
    "extend_capacity_solution",
    "price_placements",
    "schedule_from_solution",
    "server_classes",
    "server_fit",
    "slot_problem",
    "solve_embedding_colgen",
    "solve_matrix",
    "tree_allocation",
    "tree_layout",
    "worker_bound",
]
