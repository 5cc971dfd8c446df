"""Paper 002 online: the frame environment, the scheduling policies, and the feasibility regions.

=====================  ======================================================================
module                 what it holds
=====================  ======================================================================
:mod:`.policies`       the environment, the virtual queues, max-weight (Alg. 1), sqrt-greedy
                       (Alg. 2) and the baselines; :class:`RealtimeRun`
:mod:`.regions`        the feasibility regions: exact (LP over stationary policies) and
                       estimated by simulation (Sec. IV)
=====================  ======================================================================

Every public name of these modules is re-exported here; importing the package registers the
real-time environment with :func:`clusteropt.online.run_online`.  The names of :mod:`.regions`
load on first use.
"""

from typing import TYPE_CHECKING

from clusteropt._lazy import lazy_exports
from clusteropt.online.realtime.policies import (
    POLICIES,
    MaxWeight,
    RandomPolicy,
    RealtimeEnvironment,
    RealtimeObservation,
    RealtimeRun,
    SqrtGreedy,
    StationaryPolicy,
    WeightGreedy,
    make_policy,
)

if TYPE_CHECKING:
    from clusteropt.online.realtime.regions import (
        ExactRegion,
        RegionFraction,
        estimate_theta,
        exact_region,
        quadrant_directions,
        region_fraction,
    )

_LAZY = {name: "clusteropt.online.realtime.regions" for name in (
    "ExactRegion", "RegionFraction", "estimate_theta", "exact_region", "quadrant_directions", "region_fraction")}
__getattr__, __dir__ = lazy_exports(__name__, _LAZY)

__all__ = [
    "POLICIES",
    "ExactRegion",
    "MaxWeight",
    "RandomPolicy",
    "RealtimeEnvironment",
    "RealtimeObservation",
    "RealtimeRun",
    "RegionFraction",
    "SqrtGreedy",
    "StationaryPolicy",
    "WeightGreedy",
    "estimate_theta",
    "exact_region",
    "make_policy",
    "quadrant_directions",
    "region_fraction",
]
