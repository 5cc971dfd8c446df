"""Ring partitioning (paper 004): the offline optima as MILPs and the LP bounds of OPT_dyn.

=====================  ======================================================================
module                 what it builds
=====================  ======================================================================
:mod:`.offline`        ``OPT_static`` (Thm 2.2) and ``OPT_dyn`` (Thm 2.1) as MILPs; ``OPT_dyn`` by the exact DP
:mod:`.cut`            ours: the LP over cut sets, a lower bound of ``OPT_dyn`` at any ``n``
:mod:`.move`           ours: a lower bound of ``OPT_dyn`` that sees how far a cut moves
=====================  ======================================================================

Every public name of these modules is re-exported here; importing the package registers the ring
models in :data:`clusteropt.models.MODELS`.
"""

from clusteropt.models.ring.cut import (
    CHUNK,
    IPM_OPTIONS,
    OVERLAP,
    SWEEPS,
    CutLPBound,
    build_ring_cut_lp,
    cut_lp_arrays,
    cut_lp_scaffold,
    dynamic_cut_lp_bound,
    previous_cut,
)
from clusteropt.models.ring.move import (
    MoveLPBound,
    build_ring_move_lp,
    dynamic_move_lp_bound,
    move_lp_arrays,
    move_lp_point,
)
from clusteropt.models.ring.offline import (
    MAX_DYNAMIC_BINARIES,
    MAX_DYNAMIC_STEPS,
    RingOptimum,
    build_ring_dynamic_dp,
    build_ring_dynamic_opt,
    build_ring_static_opt,
    contiguous_arcs_cost,
    placements_from_model,
    ring_dynamic_optimum,
    ring_static_optimum,
)

__all__ = [
    "CHUNK",
    "IPM_OPTIONS",
    "MAX_DYNAMIC_BINARIES",
    "MAX_DYNAMIC_STEPS",
    "OVERLAP",
    "SWEEPS",
    "CutLPBound",
    "MoveLPBound",
    "RingOptimum",
    "build_ring_cut_lp",
    "build_ring_dynamic_dp",
    "build_ring_dynamic_opt",
    "build_ring_move_lp",
    "build_ring_static_opt",
    "contiguous_arcs_cost",
    "cut_lp_arrays",
    "cut_lp_scaffold",
    "dynamic_cut_lp_bound",
    "dynamic_move_lp_bound",
    "move_lp_arrays",
    "move_lp_point",
    "placements_from_model",
    "previous_cut",
    "ring_dynamic_optimum",
    "ring_static_optimum",
]
